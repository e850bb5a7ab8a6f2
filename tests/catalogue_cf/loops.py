"""for loops: over range(n) with n known at run time, range(a, b, step), over array rows,
enumerate, zip; nested loops, loop-carried variables, branches inside loops."""

import math

import numpy as np

# --- range(n), n an argument (0 and 1 included by the table) ------------------------------


def repeat_tanh(x, n):
    y = x
    for _ in range(n):
        y = np.tanh(y)
    return np.sum(y)


def sum_of_terms(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + np.sum(np.sin(x * (i + 1)))
    return acc


def power_by_loop(t, n):
    y = 1.0
    for _ in range(n):
        y = y * t
    return y


def taylor_exp(x, n):
    term = np.ones_like(x)
    total = np.ones_like(x)
    for k in range(1, n):
        term = term * x / k
        total = total + term
    return np.sum(total)


def loop_uses_counter_as_float(x, n):
    acc = x * 0.0
    for i in range(n):
        acc = acc + x ** 2 * (0.5 * i) + np.cos(x) / (i + 1.0)
    return np.sum(acc)


def loop_over_range_of_len(x):
    acc = 0.0
    for i in range(len(x)):
        acc = acc + x[i] * (i + 1)
    return acc * acc


def loop_over_shape(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + np.sum(x[i] ** 2) * (i + 1)
    return acc


def loop_neighbours(x):
    acc = 0.0
    for i in range(len(x) - 1):
        acc = acc + (x[i + 1] - x[i]) ** 2
    return acc


def loop_slices(x):
    acc = 0.0
    for i in range(len(x) - 2):
        acc = acc + np.sum(np.tanh(x[i:i + 3]) * np.array([1.0, -2.0, 1.0]))
    return acc


def loop_counter_used_after(x, n):
    i = 0
    for i in range(n):
        x = x * 0.9 + 0.1
    return np.sum(x) * (i + 1)


# --- range(a, b, step) ---------------------------------------------------------------------------


def range_start_stop(x, a, b):
    acc = 0.0
    for k in range(a, b):
        acc = acc + np.sum(x ** 2) / k
    return acc


def range_with_step(x, n):
    acc = 0.0
    for k in range(0, n, 2):
        acc = acc + np.sum(np.cos(x * k))
    return acc


def range_negative_step(x, n):
    y = x
    for k in range(n, 0, -1):
        y = np.sin(y) * k * 0.3
    return np.sum(y)


def range_odd_indices(x):
    acc = 0.0
    for i in range(1, len(x), 2):
        acc = acc + x[i] * x[i - 1]
    return acc


# --- nested loops ----------------------------------------------------------------------------------


def nested_loops(x, n, m):
    acc = 0.0
    for i in range(n):
        for j in range(m):
            acc = acc + np.sum(np.sin(x * (i + 1)) * np.cos(x * (j + 1)))
    return acc


def triangular_loops(x):
    acc = 0.0
    for i in range(len(x)):
        for j in range(i):
            acc = acc + x[i] * x[j] / (1.0 + i - j)
    return acc


def matmul_by_loops(a, b):
    acc = 0.0
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = 0.0
            for k in range(a.shape[1]):
                s = s + a[i, k] * b[k, j]
            acc = acc + s * s
    return acc


def nested_carried(x, n):
    y = x
    for i in range(n):
        z = y
        for j in range(2):
            z = np.tanh(z) * 1.2 + 0.1 * y
        y = z
    return np.sum(y)


def inner_loop_length_from_outer(x, n):
    acc = 0.0
    for i in range(n):
        y = x
        for _ in range(i):
            y = y * x * 0.5
        acc = acc + np.sum(y)
    return acc


# --- loops over arrays: rows, items, enumerate, zip --------------------------------------------------


def loop_over_rows(xs, w):
    acc = 0.0
    for row in xs:
        acc = acc + np.tanh(row @ w)
    return np.sum(acc)


def loop_over_matrices(stack, v):
    acc = 0.0
    for m in stack:
        acc = acc + v @ m @ v
    return acc


def loop_over_items(x):
    acc = 0.0
    for v in x:
        acc = acc + v * v * 0.5 + np.sin(v)
    return acc


def loop_over_columns(x):
    acc = 0.0
    for col in x.T:
        acc = acc + np.sum(col) ** 2
    return acc


def loop_over_constant_tuple(x):
    acc = 0.0
    for c in (0.5, 1.0, 2.0):
        acc = acc + np.sum(np.sin(c * x))
    return acc


def loop_over_integer_array(x, idx):
    acc = 0.0
    for i in idx:
        acc = acc + x[i] ** 2
    return acc


def loop_over_reversed(x):
    acc = 0.0
    for v in reversed(x):
        acc = acc * 0.5 + v
    return acc


def enumerate_rows(xs):
    acc = 0.0
    for i, row in enumerate(xs):
        acc = acc + (i + 1.0) * np.sum(row ** 2)
    return acc


def enumerate_items(x, w):
    acc = 0.0
    for i, v in enumerate(x):
        acc = acc + v * w ** i
    return acc


def enumerate_with_start(xs):
    acc = 0.0
    for i, row in enumerate(xs, 1):
        acc = acc + i * np.sum(row ** 2)
    return acc


def zip_pairs(xs, ys):
    acc = 0.0
    for a, b in zip(xs, ys):
        acc = acc + np.dot(a, b) ** 2
    return acc


def zip_three(xs, ys, ws):
    acc = 0.0
    for a, b, c in zip(xs, ys, ws):
        acc = acc + c * np.tanh(a - b)
    return acc


def zip_unequal_lengths(x, y):
    acc = 0.0
    for a, b in zip(x, y):
        acc = acc + a * b
    return acc


def zip_rows_with_weights(xs, ws):
    acc = 0.0
    for row, w in zip(xs, ws):
        acc = acc + w * np.sum(np.tanh(row))
    return acc


# --- loop-carried values ------------------------------------------------------------------------------


def swap_product(a, b, n):
    for _ in range(n):
        a, b = b, a * b
    return a + b


def swap_arrays(x, y, n):
    for _ in range(n):
        x, y = y, np.tanh(x + y)
    return np.sum(x * y)


def fibonacci_like(a, b, n):
    for _ in range(n):
        a, b = b, a + 0.5 * b
    return b


def three_carried(x, n):
    a = x
    b = x * 0.5
    c = np.sin(x)
    for _ in range(n):
        a, b, c = b * c, c + a * 0.1, np.tanh(a)
    return np.sum(a + b + c)


def accumulator_float_to_array(xs):
    acc = 0.0
    for row in xs:
        acc = acc + row * row
    return np.sum(np.sqrt(acc + 1.0))


def accumulator_augmented_scalar(x, n):
    acc = 0.0
    for i in range(n):
        acc += np.sum(x * i)
        acc *= 0.9
    return acc


def accumulator_augmented_array(xs):
    total = np.zeros(xs.shape[1])
    for row in xs:
        total += np.tanh(row)
    return np.sum(total * total)


def accumulator_augmented_float_start(xs):
    total = 0.0
    for row in xs:
        total += np.tanh(row)
    return np.sum(total * total)


def accumulator_0d(x, n):
    acc = np.zeros(())
    for i in range(n):
        acc = acc + np.sum(x) * (i + 1)
    return acc * acc


def running_product(x):
    p = 1.0
    for v in x:
        p = p * (1.0 + 0.1 * v)
    return p


def carried_but_reassigned_in_branch(x, n):
    best = x
    for i in range(n):
        cand = np.tanh(best) * 1.5
        if i % 2 == 0:
            best = cand
    return np.sum(best)


def loop_keeps_previous(x, n):
    prev = x
    cur = x * 0.5
    for _ in range(n):
        nxt = cur * 2.0 - prev * 0.3
        prev = cur
        cur = np.tanh(nxt)
    return np.sum(cur * prev)


def parameter_reassigned_in_loop(x, w, n):
    for _ in range(n):
        x = np.tanh(x @ w)
    return np.sum(x)


def loop_temporary_not_carried(x, n):
    acc = 0.0
    for i in range(n):
        t = np.sin(x + i)
        u = t * t
        acc = acc + np.sum(u)
    return acc


def python_floats_only(t, n):
    y = t
    for k in range(n):
        y = math.sin(y) + 0.1 * k * t
    return y


def floats_and_arrays_mixed(x, t, n):
    s = t
    y = x
    for _ in range(n):
        s = s * 0.5 + 0.1
        y = y * s + np.sum(y) * 0.1
    return np.sum(y) + s


# --- branches inside loops, loops inside branches -------------------------------------------------


def branch_in_loop_on_data(x):
    acc = 0.0
    for v in x:
        if v > 0:
            acc = acc + v * v
        else:
            acc = acc - 0.5 * v
    return acc


def branch_in_loop_on_counter(x, n):
    y = x
    for i in range(n):
        if i % 2 == 0:
            y = np.sin(y)
        else:
            y = y * 1.5
    return np.sum(y)


def branch_in_loop_on_state(x, n):
    y = x
    for _ in range(n):
        if np.sum(y) > 0:
            y = y - 0.3 * np.tanh(y)
        else:
            y = y + 0.2 * y * y
    return np.sum(y)


def elif_in_loop(x):
    acc = 0.0
    for v in x:
        if v < -0.5:
            acc = acc + v ** 2
        elif v < 0.5:
            acc = acc + np.sin(v)
        else:
            acc = acc * 0.5 + v
    return acc


def ifexp_in_loop(x, n):
    y = x
    for i in range(n):
        y = np.tanh(y) if np.sum(y) > 0 else y * 0.5 + 0.1 * i
    return np.sum(y)


def loop_in_branch(x, n):
    if np.sum(x) > 0:
        y = x
        for _ in range(n):
            y = np.sin(y) * 2.0
    else:
        y = x * x
    return np.sum(y)


def loops_in_both_branches(x, n):
    y = x
    if np.max(x) > 1.0:
        for _ in range(n):
            y = y * 0.5
    else:
        for k in range(n + 1):
            y = y + np.cos(y) * k
    return np.sum(y)


def loop_calls_callee(x, w, n):
    h = x
    for _ in range(n):
        h = _layer(h, w)
    return np.sum(h * h)


def _layer(h, w):
    return np.tanh(h @ w) + h * 0.5


def callee_with_loop(x, n):
    return np.sum(_iterate(x, n) * x)


def _iterate(v, n):
    for _ in range(n):
        v = np.cos(v)
    return v


def callee_with_branch_in_loop(xs, w):
    acc = 0.0
    for row in xs:
        acc = acc + _leaky(row @ w)
    return acc


def _leaky(z):
    if z > 0:
        return z
    return 0.1 * z


def and_in_loop(x, lo, hi):
    acc = 0.0
    for v in x:
        if v > lo and v < hi:
            acc = acc + v * v
        else:
            acc = acc + 0.1 * v
    return acc


def chained_in_loop(x, lo, hi):
    acc = 0.0
    for v in x:
        if lo < v < hi:
            acc = acc + np.tanh(v) * hi
        else:
            acc = acc + v * lo
    return acc


# --- values that live on after the loop ----------------------------------------------------------


def last_from_loop(x, n):
    for i in range(n):
        last = x * (i + 1.0)
    return np.sum(last * last)


def first_in_branch_in_loop(x, n):
    y = x
    for i in range(n):
        if i == 0:
            first = y * 2.0
        y = y * 1.5
    return np.sum(first * y)


def loop_with_only_pass(x, n):
    for _ in range(n):
        pass
    return np.sum(x * 2.0)


def loop_body_without_effect_on_output(x, n):
    y = x * 2.0
    for i in range(n):
        unused = np.sin(x) * i  # the point of the test
    return np.sum(y * y)


# --- in-place updates where another name sees the array (Python's value, or refused) ----------


def inplace_alias_before_loop(x, n):
    h = x * 1.0
    prev = h
    for _ in range(n):
        h += x
    return np.sum(h * prev)


def inplace_alias_in_branch(x):
    h = x * 1.0
    if np.sum(x) > 0:
        prev = h
    else:
        prev = x * 2.0
    h += x
    return np.sum(h * prev)


def inplace_alias_made_in_loop(x, n):
    h = x * 1.0
    prev = x
    for _ in range(n):
        prev = h
        h += x
    return np.sum(h * prev)


def inplace_on_fresh_each_iteration(x, n):
    acc = 0.0
    for i in range(n):
        h = np.sin(x * (i + 1))
        h *= 2.0
        acc = acc + np.sum(h)
    return acc


# --- more loop shapes ------------------------------------------------------------------------------


def trips_as_numpy_int(x, n):
    y = x
    for _ in range(n):
        y = np.tanh(y) * 1.5
    return np.sum(y)


def builtin_max_in_loop(x):
    best = -10.0
    for v in x:
        best = max(best, v * v)
    return best


def callee_with_early_return_in_loop(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + _piece(x * (i + 1))
    return acc


def _piece(v):
    s = np.sum(v)
    if s > 0:
        return s * s
    return np.sum(np.sin(v))


def loop_target_used_after(xs):
    row = xs[0] * 0.0
    for row in xs:
        pass
    return np.sum(row * row)


def float_or_array_per_iteration(x, n):
    acc = 0.0
    for i in range(n):
        if i % 2 == 0:
            acc = acc + x
        else:
            acc = acc * 0.5
    return np.sum(acc)


# --- for ... else: the else runs where no break ended the loop ------------------------


def for_else(x):
    for i in range(3):
        x = x * 2.0
    else:  # noqa: PLW0120
        x = x + 1.0
    return x


def for_else_with_break(x):
    for i in range(3):
        if x > 2.0:
            break
        x = x * 2.0
    else:
        x = x + 1.0
    return x
