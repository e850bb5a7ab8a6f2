"""Rules for reductions: ``sum``, ``mean``, ``max``/``min``, ``prod``, ``var``, ``std``,
``cumsum`` and ``bincount``, as functions and as array methods.

A reduction's cotangent has the output's shape. Unless ``keepdims`` kept them, the reduced axes
are put back with ``np.expand_dims`` (which takes the same int, negative or tuple ``axis``), and
then broadcasting spreads the cotangent over the input. ``max``/``min`` share the gradient
evenly among tied extrema; ``prod`` is exact when the input holds zeros; ``std`` has gradient 0
where it is 0 (as in PyTorch). Over an empty axis the gradient is an empty array shaped like
the input, computed without dividing by zero.
"""

import math

import numpy as np

from .registry import jvp_rule, linear, same_as, vjp_rule


@vjp_rule(np.sum, np.ndarray.sum, shape="reduce", complex=True)
def sum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    # (initial= only adds a constant; where= leaves out the entries it masks)
    if axis is None or keepdims:
        g_kept = g
    else:
        g_kept = np.expand_dims(g, axis)
    if where is not None:
        g_kept = np.where(where, g_kept, 0.0)
    return np.broadcast_to(g_kept, np.shape(a))


@vjp_rule(np.mean, np.ndarray.mean, shape="reduce", complex=True)
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    # Each output averages np.size(a) / np.size(g) inputs. Over an empty axis it averages
    # none (NumPy gives nan) and a is empty, and so is its gradient: `or 1` only keeps the
    # scale away from a division by zero. With where=, the entries it keeps, counted.
    if where is not None:
        kept = np.broadcast_to(where, np.shape(a))
        count = np.maximum(np.sum(kept, axis=axis, keepdims=True), 1)
        if axis is None or keepdims:
            g_kept = np.where(kept, g / count, 0.0)
        else:
            g_kept = np.where(kept, np.expand_dims(g, axis) / count, 0.0)
    elif axis is None:
        g_kept = g / (np.size(a) or 1)
    elif keepdims:
        g_kept = g * (math.prod(np.shape(g)) / (np.size(a) or 1))
    else:
        g_kept = np.expand_dims(g, axis) * (math.prod(np.shape(g)) / (np.size(a) or 1))
    return np.broadcast_to(g_kept, np.shape(a))


@vjp_rule(np.max, np.amax, np.ndarray.max, np.min, np.amin, np.ndarray.min, shape="reduce")
def extremum(g, ans, a, axis=None, out=None, keepdims=False, initial=None, where=None):
    # One template for max and min: the gradient goes to the entries equal to the result,
    # shared evenly when several tie; with where=, among those it keeps, and with initial=,
    # to none where the initial value is the result and no entry is.
    if axis is None or keepdims:
        g_kept = g
        ans_kept = ans
    else:
        g_kept = np.expand_dims(g, axis)
        ans_kept = np.expand_dims(ans, axis)
    hits = a == ans_kept
    counted = hits
    if where is not None:
        hits = hits & where
        counted = hits
    if initial is not None or where is not None:
        counted = hits | (np.sum(hits, axis=axis, keepdims=True) == 0)  # no 0 / 0 there
    # Count the ties in the result's dtype, so float32 stays float32.
    return g_kept * hits / np.sum(counted, axis=axis, keepdims=True, dtype=np.result_type(ans))


@vjp_rule(np.prod, np.ndarray.prod, shape="reduce")
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
         where=None):
    # ans / a fails on zeros. The product of the others is computed from the nonzero
    # entries instead: with one zero it is nonzero only at that zero, with two it vanishes.
    # where= makes the entries it masks 1 (they get nothing); initial= scales the product.
    if axis is None or keepdims:
        g_kept = g
    else:
        g_kept = np.expand_dims(g, axis)
    if initial is not None:
        g_kept = g_kept * initial
    x = a
    if where is not None:
        x = np.where(where, a, 1.0)
    zero = x == 0
    zeros = np.sum(zero, axis=axis, keepdims=True)
    nonzero = np.where(zero, 1.0, x)
    others = np.prod(nonzero, axis=axis, keepdims=True) / nonzero
    if where is not None:
        others = np.where(where, others, 0.0)
    return g_kept * np.where((zeros == 0) | (zero & (zeros == 1)), others, 0.0)


@vjp_rule(np.var, np.ndarray.var, shape="reduce")
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g_kept = g
    else:
        g_kept = np.expand_dims(g, axis)
    # Each output averages `count` entries; over an empty axis a and its gradient are empty
    # and `or 1` only keeps the arithmetic away from 0 / 0. With ddof == count NumPy's
    # value is nan, and so is the gradient (as in PyTorch), rather than a division by zero.
    count = np.size(a) // (math.prod(np.shape(g)) or 1) or 1
    return g_kept * (2.0 / (count - ddof or np.nan)) * (
        a - np.sum(a, axis=axis, keepdims=True) / count)


@vjp_rule(np.std, np.ndarray.std, shape="reduce")
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    # d sqrt(v) = dv / (2 sqrt(v)): the var rule divided by 2 * ans. Where ans is 0 (equal
    # entries, or one entry) the gradient is 0, as in PyTorch: a - mean is 0 there, and
    # adding (ans == 0) divides it by 1 rather than by 0.
    g_scaled = g / (ans + (ans == 0))
    if axis is None or keepdims:
        g_kept = g_scaled
    else:
        g_kept = np.expand_dims(g_scaled, axis)
    count = np.size(a) // (math.prod(np.shape(g)) or 1) or 1
    return g_kept * (1.0 / (count - ddof or np.nan)) * (
        a - np.sum(a, axis=axis, keepdims=True) / count)


@vjp_rule(np.cumsum, np.ndarray.cumsum, shape=None, complex=True)
def cumsum(g, ans, a, axis=None, dtype=None, out=None):
    # Input i feeds outputs i, i+1, ...: a cumulative sum from the end.
    if axis is None:
        g_a = np.reshape(np.flip(np.cumsum(np.flip(g))), np.shape(a))
    else:
        g_a = np.flip(np.cumsum(np.flip(g, axis), axis), axis)
    return g_a


@vjp_rule(np.bincount, shape=None)
def bincount(g, ans, x, weights=None, minlength=0):
    # Bin k sums the weights at the positions where x holds k: each weight gets its bin's
    # cotangent (the counts, without weights, have none).
    return None, g[x]


# --- the methods of ufuncs that are these reductions: their rules, with the methods' axis=0 --

# the positional parameters of ufunc.reduce and ufunc.accumulate
REDUCE = ("array", "axis", "dtype", "out", "keepdims", "initial", "where")
ACCUMULATE = ("array", "axis", "dtype", "out")
same_as(np.add.reduce, np.sum, REDUCE, axis=0)
same_as(np.multiply.reduce, np.prod, REDUCE, axis=0)
same_as(np.maximum.reduce, np.max, REDUCE, axis=0)
same_as(np.minimum.reduce, np.min, REDUCE, axis=0)
same_as(np.add.accumulate, np.cumsum, ACCUMULATE, axis=0)


# --- forward mode: g is the tangent of a; each rule gives the tangent of the reduction ------

# (initial= adds a constant to a sum: its tangent is the sum with initial=0)
linear(np.sum, np.ndarray.sum, constant=("initial",))
linear(np.mean, np.ndarray.mean, np.cumsum, np.ndarray.cumsum, np.bincount)


@jvp_rule(np.max, np.amax, np.ndarray.max, np.min, np.amin, np.ndarray.min)
def extremum_jvp(g, ans, a, axis=None, out=None, keepdims=False, initial=None, where=None):
    # The mean of the tangent over the entries tied at the extremum (the vjp's sharing).
    if axis is None or keepdims:
        ans_kept = ans
    else:
        ans_kept = np.expand_dims(ans, axis)
    hits = a == ans_kept
    counted = hits
    if where is not None:
        hits = hits & where
        counted = hits
    if initial is not None or where is not None:
        counted = hits | (np.sum(hits, axis=axis, keepdims=True) == 0)  # no 0 / 0 there
    return np.sum(g * hits, axis=axis, keepdims=keepdims) / np.sum(
        counted, axis=axis, keepdims=keepdims, dtype=np.result_type(ans))


@jvp_rule(np.prod, np.ndarray.prod)
def prod_jvp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
             where=None):
    # The sum of each entry's tangent times the product of the others, written so that its
    # own derivative (prod's second derivative) is exact with zeros too. The others split
    # into nonzero entries, of product P / nonzero, and zeros, of product `rest`: 1 if there
    # is none, 0 if there are several, and with one, its value `lone`: 0, but moving with it.
    # where= makes the entries it masks 1, with no tangent; initial= scales the product.
    x = a
    if where is not None:
        x = np.where(where, a, 1.0)
    zero = x == 0
    nonzero = np.where(zero, 1.0, x)
    at_zeros = np.where(zero, x, 0.0)
    zeros = np.sum(zero, axis=axis, keepdims=True) - zero  # among the others
    lone = np.sum(at_zeros, axis=axis, keepdims=True) - at_zeros
    rest = np.where(zeros == 0, 1.0, np.where(zeros == 1, lone, 0.0))
    others = np.prod(nonzero, axis=axis, keepdims=True) / nonzero * rest
    if where is not None:
        others = np.where(where, others, 0.0)
    if initial is not None:
        others = others * initial
    return np.sum(g * others, axis=axis, keepdims=keepdims)


@jvp_rule(np.var, np.ndarray.var)
def var_jvp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    count = np.size(a) // (math.prod(np.shape(ans)) or 1) or 1
    centered = a - np.sum(a, axis=axis, keepdims=True) / count
    return np.sum(g * centered, axis=axis, keepdims=keepdims) * (2.0 / (count - ddof or np.nan))


@jvp_rule(np.std, np.ndarray.std)
def std_jvp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    # The var rule divided by 2 * ans, and 0 where ans is 0 (as the vjp rule).
    count = np.size(a) // (math.prod(np.shape(ans)) or 1) or 1
    centered = a - np.sum(a, axis=axis, keepdims=True) / count
    return np.sum(g * centered, axis=axis, keepdims=keepdims) * (
        1.0 / (count - ddof or np.nan)) / (ans + (ans == 0))
