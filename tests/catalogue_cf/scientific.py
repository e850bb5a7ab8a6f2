"""Numerical code as scientists write it: recurrent networks, time integration, iterations."""

import math

import numpy as np

# --- recurrent networks ----------------------------------------------------------------------


def rnn(w, x, h0):
    h = h0
    for t in range(x.shape[0]):
        h = np.tanh(w @ h + x[t])
    return np.sum(h)


def rnn_with_input_weights(w, u, b, xs, h0):
    h = h0
    total = 0.0
    for x in xs:
        h = np.tanh(w @ h + u @ x + b)
        total = total + np.sum(h * h)
    return total


def rnn_readout_loss(w, v, xs, targets):
    h = np.zeros(w.shape[0])
    loss = 0.0
    for x, y in zip(xs, targets):
        h = np.tanh(w @ h + x)
        pred = v @ h
        loss = loss + (pred - y) ** 2
    return loss / len(xs)


def gru_like(wz, wh, xs):
    h = np.zeros(wz.shape[0])
    for x in xs:
        z = 1.0 / (1.0 + np.exp(-(wz @ h + x)))
        cand = np.tanh(wh @ h - x)
        h = (1.0 - z) * h + z * cand
    return np.sum(h)


def rnn_batched(w, xs, h0):
    # xs: time x batch x features; h: batch x features
    h = h0
    for x in xs:
        h = np.tanh(h @ w + x)
    return np.mean(h ** 2)


def bidirectional_sum(w, xs):
    h = np.zeros(w.shape[0])
    g = np.zeros(w.shape[0])
    n = xs.shape[0]
    for t in range(n):
        h = np.tanh(w @ h + xs[t])
        g = np.tanh(w.T @ g + xs[n - 1 - t])
    return np.sum(h * g)


# --- time integration ------------------------------------------------------------------------


def euler_oscillator(x0, v0, k, n):
    x = x0
    v = v0
    dt = 0.05
    for _ in range(n):
        x, v = x + dt * v, v - dt * k * x
    return x * x + v


def euler_logistic(r, cap, y0, n):
    y = y0
    for _ in range(n):
        y = y + 0.1 * r * y * (1.0 - y / cap)
    return y


def lotka_volterra(params, state, n):
    a = params[0]
    b = params[1]
    c = params[2]
    d = params[3]
    prey = state[0]
    pred = state[1]
    dt = 0.01
    for _ in range(n):
        growth = a * prey - b * prey * pred
        decline = d * prey * pred - c * pred
        prey, pred = prey + dt * growth, pred + dt * decline
    return prey + 2.0 * pred


def midpoint_rk2(y0, lam, n):
    y = y0
    h = 0.1
    for _ in range(n):
        k1 = -lam * y + np.sin(y)
        mid = y + 0.5 * h * k1
        k2 = -lam * mid + np.sin(mid)
        y = y + h * k2
    return np.sum(y)


def leapfrog(q0, p0, stiffness, n):
    q = q0
    p = p0
    dt = 0.05
    for _ in range(n):
        p = p - 0.5 * dt * stiffness @ q
        q = q + dt * p
        p = p - 0.5 * dt * stiffness @ q
    return np.sum(q * q) + np.sum(p * p)


def bouncing_ball(height, restitution):
    y = height
    v = 0.0
    dt = 0.01
    for _ in range(200):
        v = v - 9.81 * dt
        y = y + v * dt
        if y < 0.0:
            y = -y
            v = -restitution * v
    return y + 0.1 * v


def projectile_until_ground(speed, angle):
    x = 0.0
    y = 0.0
    vx = speed * math.cos(angle)
    vy = speed * math.sin(angle)
    dt = 0.01
    while y >= 0.0:
        x = x + vx * dt
        y = y + vy * dt
        vy = vy - 9.81 * dt
        vx = vx * (1.0 - 0.05 * dt)
    return x


def heat_periodic_slices(u0, alpha, n):
    # the periodic stencil of heat_explicit, by slices instead of np.roll
    u = u0
    for _ in range(n):
        left = u[:-2] - 2.0 * u[1:-1] + u[2:]
        first = u[-1] - 2.0 * u[0] + u[1]
        last = u[-2] - 2.0 * u[-1] + u[0]
        lap = np.zeros_like(u)
        lap[1:-1] = left
        lap[0] = first
        lap[-1] = last
        u = u + alpha * lap
    return np.sum(u * u)


def heat_explicit(u0, alpha, n):
    u = u0
    for _ in range(n):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + alpha * lap
    return np.sum(u * u)


# --- iterations --------------------------------------------------------------------------------


def power_iteration(a, n):
    v = np.ones(a.shape[0])
    for _ in range(n):
        v = a @ v
        v = v / np.sqrt(v @ v)
    return v @ a @ v


def power_iteration_norm(a, n):
    v = np.ones(a.shape[0])
    for _ in range(n):
        v = a @ v
        v = v / np.linalg.norm(v)
    return v @ a @ v


def power_iteration_until(a):
    v = np.ones(a.shape[0]) / math.sqrt(a.shape[0])
    lam = 0.0
    for _ in range(500):
        w = a @ v
        new = v @ w
        v = w / np.sqrt(np.sum(w * w))
        if abs(new - lam) < 1e-14:
            break
        lam = new
    return lam


def jacobi_solve(a, b, n):
    x = np.zeros_like(b)
    d = np.diag(a)
    off = a - np.diag(d)
    for _ in range(n):
        x = (b - off @ x) / d
    return np.sum(x * x)


def jacobi_solve_masked(a, b, n):
    # the same iteration without np.diag: the diagonal by a mask
    eye = np.eye(a.shape[0])
    d = np.sum(a * eye, axis=1)
    off = a * (1.0 - eye)
    x = np.zeros_like(b)
    for _ in range(n):
        x = (b - off @ x) / d
    return np.sum(x * x)


def markov_chain(p0, trans, n):
    p = p0
    for _ in range(n):
        p = p @ trans
    return p @ np.arange(p.shape[0], dtype=float)


def horner(coeffs, x):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return np.sum(y)


def chebyshev(x, n):
    t_prev = np.ones_like(x)
    t_cur = x
    for _ in range(n):
        t_prev, t_cur = t_cur, 2.0 * x * t_cur - t_prev
    return np.sum(t_cur)


def continued_fraction(x, n):
    y = x
    for k in range(n, 0, -1):
        y = k + x / (1.0 + y * y)
    return y


def trapezoid_loop(a, b, n):
    h = (b - a) / n
    total = 0.5 * (math.exp(-a * a) + math.exp(-b * b))
    for k in range(1, n):
        t = a + k * h
        total = total + math.exp(-t * t)
    return total * h


def ema(x, alpha):
    m = x[0]
    for v in x[1:]:
        m = alpha * v + (1.0 - alpha) * m
    return m


def kalman_scalar(zs, q, r):
    est = 0.0
    p = 1.0
    for z in zs:
        p = p + q
        gain = p / (p + r)
        est = est + gain * (z - est)
        p = (1.0 - gain) * p
    return est


def online_logsumexp(x):
    m = x[0]
    s = 1.0
    for v in x[1:]:
        if v > m:
            s = s * np.exp(m - v) + 1.0
            m = v
        else:
            s = s + np.exp(v - m)
    return m + np.log(s)


def compound_interest(balance, rate, n):
    for year in range(n):
        if balance > 100.0:
            balance = balance * (1.0 + rate) - 2.0
        else:
            balance = balance * (1.0 + 0.5 * rate)
    return balance


def binomial_option(spot, vol, rate, n):
    dt = 1.0 / n
    up = np.exp(vol * np.sqrt(dt))
    down = 1.0 / up
    p = (np.exp(rate * dt) - down) / (up - down)
    disc = np.exp(-rate * dt)
    prices = spot * up ** np.arange(n, -1, -1.0) * down ** np.arange(0, n + 1.0)
    values = np.maximum(prices - 1.0, 0.0)
    for _ in range(n):
        values = disc * (p * values[:-1] + (1.0 - p) * values[1:])
    return values[0]


def gradient_descent_unrolled(x0, a, lr, n):
    x = x0
    for _ in range(n):
        grad = a @ x - 1.0
        x = x - lr * grad
    return 0.5 * x @ a @ x - np.sum(x)


def softmax_attention_loop(q, ks, vs):
    scores = 0.0
    out = 0.0
    for k, v in zip(ks, vs):
        s = np.exp(q @ k)
        scores = scores + s
        out = out + s * v
    return np.sum(out / scores)


def sinkhorn(cost, n):
    kmat = np.exp(-cost)
    u = np.ones(cost.shape[0])
    v = np.ones(cost.shape[1])
    for _ in range(n):
        u = 1.0 / (kmat @ v)
        v = 1.0 / (kmat.T @ u)
    plan = u[:, None] * kmat * v[None, :]
    return np.sum(plan * cost)
