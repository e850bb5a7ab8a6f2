"""while loops on data-dependent conditions; break and continue."""

import math

import numpy as np

# --- while ------------------------------------------------------------------------------------


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def newton_sqrt_array(a):
    x = np.ones_like(a)
    while np.max(np.abs(x * x - a)) > 1e-13:
        x = 0.5 * (x + a / x)
    return np.sum(x)


def newton_cube_root(a):
    x = a
    for _ in range(60):
        if abs(x ** 3 - a) < 1e-14:
            break
        x = x - (x ** 3 - a) / (3.0 * x * x)
    return x


def kepler(mean_anomaly, ecc):
    # Kepler's equation E - e sin E = M by Newton, stopping on the step size
    e_anom = mean_anomaly
    step = 1.0
    while abs(step) > 1e-13:
        step = (e_anom - ecc * math.sin(e_anom) - mean_anomaly) / (1.0 - ecc * math.cos(e_anom))
        e_anom = e_anom - step
    return e_anom


def halve_until_small(x):
    y = x
    while np.sum(y * y) > 0.1:
        y = y * 0.5
    return np.sum(np.sin(y))


def fixed_point_cos(t):
    x = t
    k = 0
    while k < 200 and abs(x - math.cos(t * x)) > 1e-14:
        x = math.cos(t * x)
        k = k + 1
    return x


def fixed_point_array(a, b):
    # x = tanh(a x + b) componentwise; a contraction for |a| < 1
    x = np.zeros_like(b)
    diff = 1.0
    while diff > 1e-14:
        nxt = np.tanh(a * x + b)
        diff = np.max(np.abs(nxt - x))
        x = nxt
    return np.sum(x * x)


def while_counter(x, n):
    i = 0
    y = x
    while i < n:
        y = np.sin(y) + x * 0.1
        i = i + 1
    return np.sum(y)


def while_counter_augmented(x, n):
    i = 0
    acc = 0.0
    while i < n:
        acc += np.sum(x ** 2) * (i + 1)
        i += 1
    return acc


def while_zero_trips(x):
    y = x
    while np.sum(y) > 100.0:
        y = y * 0.5
    return np.sum(y * y)


def while_growth(x, limit):
    y = x
    steps = 0
    while np.sum(y * y) < limit:
        y = y * 1.3 + 0.01
        steps = steps + 1
    return np.sum(y) * steps


def while_true_break(x):
    y = x
    while True:
        y = y * 0.7 + np.sin(y) * 0.1
        if np.max(np.abs(y)) < 0.2:
            break
    return np.sum(y)


def while_nested_in_for(xs):
    acc = 0.0
    for row in xs:
        y = row
        while np.sum(y * y) > 0.5:
            y = y * 0.6
        acc = acc + np.sum(y)
    return acc


def gradient_descent_inner(w0, target, lr):
    # an inner optimisation unrolled: the outer gradient flows through every step
    w = w0
    k = 0
    while k < 50 and np.sum((w - target) ** 2) > 1e-6:
        w = w - lr * 2.0 * (w - target)
        k = k + 1
    return np.sum(w * w)


def bisection_bracket(c):
    # bisection finds where x^3 + x = c; then one Newton step makes the result differentiable
    lo = -10.0
    hi = 10.0
    while hi - lo > 1e-3:
        mid = 0.5 * (lo + hi)
        if mid ** 3 + mid > c:
            hi = mid
        else:
            lo = mid
    x = 0.5 * (lo + hi)
    for _ in range(6):
        x = x - (x ** 3 + x - c) / (3.0 * x * x + 1.0)
    return x


# --- break and continue -----------------------------------------------------------------------


def break_on_threshold(x, n):
    y = x
    for _ in range(n):
        if np.sum(y * y) > 4.0:
            break
        y = y * 1.5 + 0.1
    return np.sum(y)


def break_first_positive(x):
    found = 0.0
    for v in x:
        if v > 0.5:
            found = v * v
            break
    return found


def continue_negatives(x):
    acc = 0.0
    for v in x:
        if v < 0:
            continue
        acc = acc + np.sqrt(v + 1.0)
    return acc


def continue_and_break(x, limit):
    acc = 0.0
    for v in x:
        if v < -0.5:
            continue
        acc = acc + v * v
        if acc > limit:
            break
    return acc


def break_in_inner_loop(x, n):
    acc = 0.0
    for i in range(n):
        y = x
        for _ in range(5):
            y = y * 1.4
            if np.sum(y * y) > 2.0 + i:
                break
        acc = acc + np.sum(y)
    return acc


def continue_in_while(x, n):
    i = 0
    acc = 0.0
    while i < n:
        i = i + 1
        if i % 2 == 0:
            continue
        acc = acc + np.sum(np.sin(x * i))
    return acc


def break_in_while_true_with_counter(x):
    y = x
    k = 0
    while True:
        k = k + 1
        y = np.tanh(y) * 1.1
        if k >= 3 and np.sum(y) > 0:
            break
        if k >= 6:
            break
    return np.sum(y)


def break_in_nested_if(x, n):
    y = x
    for i in range(n):
        y = y + 0.3
        if i > 0:  # noqa: SIM102  (a break two ifs deep)
            if np.sum(y) > 2.0:
                break
    return np.sum(y * y)


def work_after_continue_in_branch(x):
    acc = 0.0
    for i, v in enumerate(x):
        if i % 2 == 1:
            acc = acc * 0.5
            continue
        else:
            acc = acc + v
        acc = acc + v * v
    return acc


# --- while in callees, conditions of other forms --------------------------------------------------


def ifexp_in_while_condition(x):
    y = x
    k = 0
    while (np.sum(y) if k < 3 else -1.0) > 0.5:
        y = y * 0.5
        k = k + 1
    return np.sum(y * y)


def callee_with_while(x):
    return np.sum(_shrink(x) * x)


def _shrink(v):
    while np.sum(v * v) > 1.0:
        v = v * 0.5
    return v


def callee_with_while_in_loop(xs):
    acc = 0.0
    for row in xs:
        acc = acc + np.sum(_shrink(row) ** 2)
    return acc


def while_condition_on_one_input(x, y):
    k = x * 1.0
    while np.sum(k) < 5.0:
        k = k + np.abs(y) + 0.5
    return np.sum(k * y)


def while_else(x):
    while x > 1.0:
        x = x * 0.5
    else:  # noqa: PLW0120
        x = x + 1.0
    return x
