"""Branches: if/elif/else on data, conditional expressions, and/or, chained comparisons,
early and multiple returns."""

import math

import numpy as np

# --- if/else on array reductions ---------------------------------------------------------


def if_on_sum(x):
    if np.sum(x) > 0:
        y = np.tanh(x) * 2.0
    else:
        y = np.sin(x) - x
    return np.sum(y * y)


def if_on_mean_no_else(x, w):
    y = x @ w
    if np.mean(y) < 0.0:
        y = -0.5 * y
    return np.sum(np.exp(0.1 * y))


def if_on_max(x):
    m = np.max(x)
    if m > 1.0:
        y = x / m
    else:
        y = x * x
    return np.sum(y)


def if_on_norm(x):
    n = np.linalg.norm(x)
    if n > 2.0:
        x = x * (2.0 / n)
    return np.sum(np.sin(x))


def if_on_any(x):
    if np.any(x > 1.5):
        y = np.tanh(x)
    else:
        y = x ** 3
    return np.sum(y)


def if_on_all(x, y):
    if np.all(x > y):
        z = x - y
    else:
        z = x * y
    return np.sum(np.exp(-z * z))


def if_compares_two_inputs(x, y):
    if np.sum(x * x) > np.sum(y * y):
        r = np.sum(x * y) / np.sum(x * x)
    else:
        r = np.sum(np.cos(x - y))
    return r


def if_different_ops(a, b):
    if np.trace(a) > 0:
        c = a @ b
        d = np.exp(0.1 * c)
    else:
        c = a.T @ np.tanh(b)
        d = c * c
    return np.mean(d)


def if_selects_matrix(a, b, x):
    if np.sum(x) > 0:
        m = a
    else:
        m = b
    return np.sum(np.tanh(m @ x))


# --- if/else on scalars --------------------------------------------------------------------


def piecewise_scalar(t):
    if t < -1.0:
        y = -2.0 * t - 1.0
    elif t < 1.0:
        y = t * t
    else:
        y = 2.0 * t - 1.0
    return y


def huber_scalar(r, delta):
    a = abs(r)
    if a <= delta:
        loss = 0.5 * r * r
    else:
        loss = delta * (a - 0.5 * delta)
    return loss


def clip_scalar(t, lo, hi):
    t = max(t, lo)
    t = min(t, hi)
    return t * t + math.sin(t)


def branch_on_scalar_argument(x, a):
    if a > 0.5:
        y = a * np.tanh(x)
    else:
        y = np.exp(a) * x
    return np.sum(y)


def branch_on_0d_array(x, s):
    if s > 0:
        y = x * s
    else:
        y = x - s * s
    return np.sum(np.sin(y))


def branch_on_math_value(t):
    s = math.sin(t)
    if s > 0:
        return math.exp(s) * t
    return s * s + t


def branch_on_integer_argument(x, k):
    if k % 2 == 0:
        y = np.cos(x) * k
    else:
        y = np.sin(x) + k
    return np.sum(y)


def branch_on_flag(x, use_tanh):
    if use_tanh:
        y = np.tanh(x)
    else:
        y = x / (1.0 + x * x)
    return np.sum(y * y)


def branch_on_none(x, bias):
    if bias is None:
        y = 2.0 * x
    else:
        y = x + bias
    return np.sum(np.tanh(y))


def branch_on_shape(x):
    if x.shape[0] > 3:
        return np.sum(x[:3] ** 2)
    return np.sum(x ** 3)


def branch_on_len(x):
    if len(x) >= 4:
        y = x[1:] - x[:-1]
    else:
        y = x * 1.5
    return np.sum(y * y)


# --- elif chains and nested ifs -------------------------------------------------------------


def elif_chain(x):
    s = np.mean(x)
    if s < -0.5:
        y = np.exp(x)
    elif s < 0.0:
        y = x * x
    elif s < 0.5:
        y = np.sin(x) * 3.0
    else:
        y = np.log(1.0 + x * x)
    return np.sum(y)


def elif_without_else(x, t):
    y = x * t
    if t > 1.0:
        y = y * y
    elif t > 0.0:
        y = np.tanh(y)
    elif t > -1.0:
        y = y - t
    return np.sum(y)


def nested_ifs(x, y):
    if np.sum(x) > 0:
        if np.sum(y) > 0:
            z = x * y
        else:
            z = x - y
    else:
        if np.max(y) > 1.0:
            z = np.tanh(x + y)
        else:
            z = np.sin(x) * np.cos(y)
    return np.sum(z)


def nested_if_three_deep(t):
    if t > 0.0:
        if t > 1.0:
            if t > 2.0:
                y = t * t * t
            else:
                y = t * t
        else:
            y = math.sin(t)
    else:
        y = math.exp(t)
    return y * t


def if_assigns_two_variables(x):
    if np.sum(x) > 0:
        a = x * 2.0
        b = np.tanh(x)
    else:
        a = np.exp(x)
        b = x
    return np.sum(a * b)


def if_assigns_in_one_branch_only(x):
    y = np.tanh(x)
    z = x * 0.5
    if np.sum(y) > 0:
        z = y * x
    return np.sum(z + y)


def if_uses_value_from_before(x):
    h = np.tanh(x)
    g = h * h
    if np.sum(h) > 0:
        out = np.sum(g * x)
    else:
        out = np.sum(h) * np.sum(g)
    return out


def if_condition_reused(x):
    positive = np.sum(x) > 0
    y = x
    if positive:
        y = y * 2.0
    y = np.tanh(y)
    if positive:
        y = y + x
    return np.sum(y * y)


def if_with_not(x):
    if not np.sum(x) > 0:
        return np.sum(np.exp(x))
    return np.sum(x * x)


def if_then_print_and_assert(x):
    if np.sum(x) > 0:
        print("positive branch")
        y = x * 3.0
    else:
        assert np.all(np.isfinite(x))
        y = x - 1.0
    return np.sum(y * y)


def if_with_pass(x):
    y = np.tanh(x)
    if np.sum(x) > 0:
        pass
    else:
        y = y * 2.0
    return np.sum(y)


def branch_reassigns_parameter(x, w):
    if np.sum(w) > 0:
        w = w * 2.0
        x = x + 1.0
    return np.sum(np.tanh(x * w))


def branch_scalar_or_array(x):
    if np.sum(x) > 0:
        y = 0.0
    else:
        y = x * x
    return np.sum(y + x)


def branch_float_or_0d(x, t):
    if t > 0:
        s = t * 2.0
    else:
        s = np.sum(x)
    return np.sum(x * s)


def branch_constant_side(x):
    if np.sum(x) > 0:
        y = np.ones(3)
    else:
        y = x * x
    return np.sum(y * 2.0)


def branch_on_derived_flag(x):
    big = np.max(np.abs(x)) > 1.0
    small = np.min(np.abs(x)) < 0.3
    if big and small:
        y = x * 0.5
    elif big:
        y = x * x
    else:
        y = np.sin(x)
    return np.sum(y)


def branch_in_callee(x, w):
    return np.sum(_leaky(x @ w, 0.1))


def _leaky(z, slope):
    if np.sum(z) > 0:
        return z
    return slope * z


def branch_after_callee(x):
    y = _soft(x)
    if np.sum(y) > 1.0:
        y = y * y
    return np.sum(y)


def _soft(v):
    return np.log(1.0 + np.exp(v))


# --- early and multiple returns ----------------------------------------------------------------


def early_return(x):
    s = np.sum(x)
    if s > 0:
        return s * s
    y = np.exp(x)
    return np.sum(y)


def early_return_nested(x, y):
    if np.sum(x) > 0:
        if np.sum(y) > 0:
            return np.sum(x * y)
        z = x + y
    else:
        if np.max(y) > 1.0:
            return np.sum(np.sin(x) * y)
        z = x - y
    return np.sum(z * z)


def returns_different_expressions(x):
    m = np.mean(x)
    if m > 0.5:
        return np.sum(np.tanh(x))
    elif m > 0.0:
        return np.sum(x * x) * 0.5
    elif m > -0.5:
        return np.prod(1.0 + 0.1 * x)
    else:
        return np.max(x * 2.0)


def return_in_else_only(x):
    y = np.tanh(x)
    if np.sum(y) > 0:
        y = y * 2.0
    else:
        return np.sum(y)
    return np.sum(y * x)


def return_parameter_unchanged(x, y):
    if np.sum(x) > 0:
        return x
    return x * y


def guard_returns_constant(x):
    if np.sum(x) > 10.0:
        return 0.0
    return np.sum(x * x)


def returns_from_every_branch(t):
    if t > 1.0:
        return t ** 3
    if t > 0.0:
        return math.sin(t)
    return t * math.exp(t)


def return_array_per_branch(x):
    if np.sum(x) > 0:
        return np.tanh(x)
    return x * 0.5


def early_return_then_code(x, w):
    h = np.tanh(x @ w)
    if np.sum(h) < -1.0:
        return np.sum(h)
    h = h * h
    if np.sum(h) > 2.0:
        return np.sum(h) * 0.5
    h = np.sin(h)
    return np.sum(h)


# --- conditional expressions ----------------------------------------------------------------


def ifexp_simple(x):
    y = x * 2.0 if np.sum(x) > 0 else x * x
    return np.sum(y)


def ifexp_scalar(t):
    return t * t if t > 0 else math.sin(t)


def ifexp_nested(t):
    y = t * 3.0 if t > 1.0 else (t * t if t > 0.0 else -t)
    return y * math.cos(t)


def ifexp_in_call(x, a):
    return np.sum(np.tanh(x * (a if a > 0 else -a)))


def ifexp_in_return(x):
    return np.sum(x * x) if np.max(x) > 0.5 else np.sum(np.exp(x))


def ifexp_both_inputs(x, y):
    z = x if np.sum(x) > np.sum(y) else y
    return np.sum(np.sin(z) * x)


# --- and / or / not, chained comparisons ----------------------------------------------------


def and_condition(x):
    if np.sum(x) > 0 and np.max(x) < 1.5:
        y = x * x
    else:
        y = np.tanh(x)
    return np.sum(y)


def or_condition(x, t):
    if t > 1.0 or np.sum(x) < 0:
        y = x * t
    else:
        y = np.sin(x) + t
    return np.sum(y * y)


def and_or_mixed(x, t):
    if (t > 0 and np.sum(x) > 0) or t < -1.0:
        y = np.exp(0.5 * x) * t
    else:
        y = x * x - t
    return np.sum(y)


def not_and(x):
    if not (np.min(x) > -1.0 and np.max(x) < 1.0):
        y = np.tanh(x)
    else:
        y = x ** 3
    return np.sum(y)


def and_value(x, w):
    scale = w and 2.0
    return np.sum(x * scale)


def or_value(x, w):
    scale = w or 1.0
    return np.sum(x * scale)


def short_circuit_skips_work(x, t):
    # the second condition would divide by zero when t == 0: it must not be evaluated then
    if t != 0.0 and np.sum(x) / t > 1.0:
        y = x * t
    else:
        y = np.sin(x)
    return np.sum(y)


def chained_comparison(x):
    m = np.mean(x)
    if -0.5 < m < 0.5:
        y = x * x
    else:
        y = np.abs(x)
    return np.sum(y)


def chained_three(t, lo, hi):
    if lo < t <= hi < 3.0:
        y = (t - lo) * (hi - t)
    else:
        y = t * 0.5
    return y


def chained_comparison_value(x):
    inside = 0.0 < np.sum(x) < 2.0
    y = x * x if inside else np.tanh(x)
    return np.sum(y)


# --- conditions of other forms ---------------------------------------------------------------


def condition_as_bool(x):
    flag = bool(np.sum(x) > 0)
    if flag:
        return np.sum(x * x)
    return np.sum(np.sin(x))


def condition_method_any(x):
    if (x > 1.0).any():
        y = x * 0.5
    else:
        y = x * 2.0
    return np.sum(y * y)


def ifexp_array_or_float(x, t):
    y = x if t > 0 else 0.0
    return np.sum(y * x) + t


def nan_guard(x):
    y = np.log(x)
    if np.any(np.isnan(y)):
        return 0.0
    return np.sum(y * y)
