"""Subscript writes: y[i] = v, y[1:3] = v, y[idx] += v, in loops and branches."""

import numpy as np


def write_elements_in_loop(x, n):
    y = np.zeros(n)
    for i in range(n):
        y[i] = np.sin(x * (i + 1))
    return np.sum(y * y)


def write_slice(x):
    y = np.zeros(5)
    y[1:4] = np.tanh(x)
    return np.sum(y * np.arange(5.0))


def write_overwrites_active_value(x):
    y = x * 2.0
    y[0] = x[1] * x[2]
    return np.sum(y * y)


def add_at_index(x, v):
    y = x * 1.0
    y[1] += v
    return np.sum(np.sin(y))


def add_at_fancy_index(x, v, idx):
    y = np.zeros(4)
    y[idx] += v * x
    return np.sum(y * y)


def write_rows_matrix(xs, w):
    out = np.zeros((xs.shape[0], w.shape[1]))
    for i in range(xs.shape[0]):
        out[i] = np.tanh(xs[i] @ w)
    return np.sum(out)


def write_with_mask(x):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y * x)


def cumulative_by_writes(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] * 0.5 + x[i]
    return np.sum(y ** 2)


def euler_trajectory_array(x0, k, n):
    traj = np.zeros(n + 1)
    traj[0] = x0
    for i in range(n):
        traj[i + 1] = traj[i] - 0.1 * k * traj[i]
    return np.sum(traj)


def write_in_branch(x):
    y = np.zeros(4)
    if np.sum(x) > 0:
        y[0] = np.sum(x * x)
    else:
        y[1:4] = np.tanh(x)
    return np.sum(y * np.arange(1.0, 5.0))


def write_then_read_in_loop(x, n):
    y = x * 1.0
    for i in range(n):
        y[i % len(x)] = y[i % len(x)] * 0.5 + np.sin(y[(i + 1) % len(x)])
    return np.sum(y * y)


def add_at_in_loop(x, idx):
    y = np.zeros(3)
    for k in range(len(idx)):
        y[idx[k]] += x[k] * x[k]
    return np.sum(np.sin(y))


def accumulate_rows_in_place(xs, w):
    out = np.zeros(w.shape[1])
    for row in xs:
        out[:] = out + np.tanh(row @ w)
    return np.sum(out * out)


def write_column(x):
    m = np.zeros((3, 2))
    m[:, 0] = x
    m[:, 1] = x * x
    return np.sum(m @ np.array([1.0, -0.5]))


def heat_dirichlet(u0, alpha, n):
    u = u0 * 1.0
    for _ in range(n):
        new = u.copy()
        new[1:-1] = u[1:-1] + alpha * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        u = new
    return np.sum(u * u)


def prefix_sum_by_writes(x):
    y = np.zeros(len(x) + 1)
    for i in range(len(x)):
        y[i + 1] = y[i] + x[i]
    return np.sum(np.sin(y))


def write_ifexp_value(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * 2.0 if x[i] > 0 else x[i] ** 2
    return np.sum(y)


def scatter_with_break(x, limit):
    y = np.zeros(len(x))
    for i in range(len(x)):
        if np.sum(y) > limit:
            break
        y[i] = x[i] * x[i]
    return np.sum(y * x)


def write_2d_in_nested_loops(x):
    m = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            m[i, j] = x[i] * x[j] + (i == j)
    return np.sum(np.tanh(m))


def write_in_branch_inactive(x, t):
    # with respect to t only, the written value is not differentiated
    y = np.zeros(3)
    if t > 0:
        y[0] = x[0] * x[1]
    return np.sum(y * x) + t * t
