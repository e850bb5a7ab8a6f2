"""Rules for reductions: ``sum``, ``mean``, ``max``/``min``, ``prod``, ``var``, ``std`` and
``cumsum``, as functions and as array methods.

A reduction's cotangent has the output's shape. Unless ``keepdims`` kept them, the reduced axes
are put back with ``np.expand_dims`` (which takes the same int, negative or tuple ``axis``), and
then broadcasting spreads the cotangent over the input. ``max``/``min`` share the gradient
evenly among tied extrema; ``prod`` is exact when the input holds zeros.
"""

import numpy as np

from .registry import vjp_rule


@vjp_rule(np.sum, np.ndarray.sum, shape="reduce")
def sum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    if axis is None or keepdims:
        g_kept = g
    else:
        g_kept = np.expand_dims(g, axis)
    return np.broadcast_to(g_kept, np.shape(a))


@vjp_rule(np.mean, np.ndarray.mean, shape="reduce")
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    # Each output averages np.size(a) / np.size(g) inputs.
    if axis is None:
        g_kept = g / np.size(a)
    elif keepdims:
        g_kept = g * (np.size(g) / np.size(a))
    else:
        g_kept = np.expand_dims(g, axis) * (np.size(g) / np.size(a))
    return np.broadcast_to(g_kept, np.shape(a))


@vjp_rule(np.max, np.amax, np.ndarray.max, np.min, np.amin, np.ndarray.min, shape="reduce")
def extremum(g, ans, a, axis=None, out=None, keepdims=False):
    # One template for max and min: the gradient goes to the entries equal to the result,
    # shared evenly when several tie.
    if axis is None or keepdims:
        g_kept = g
        ans_kept = ans
    else:
        g_kept = np.expand_dims(g, axis)
        ans_kept = np.expand_dims(ans, axis)
    hits = a == ans_kept
    # Count the ties in the result's dtype, so float32 stays float32.
    return g_kept * hits / np.sum(hits, axis=axis, keepdims=True, dtype=np.result_type(ans))


@vjp_rule(np.prod, np.ndarray.prod, shape="reduce")
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    # ans / a fails on zeros. The product of the others is computed from the nonzero
    # entries instead: with one zero it is nonzero only at that zero, with two it vanishes.
    if axis is None or keepdims:
        g_kept = g
    else:
        g_kept = np.expand_dims(g, axis)
    zero = a == 0
    zeros = np.sum(zero, axis=axis, keepdims=True)
    nonzero = np.where(zero, 1.0, a)
    others = np.prod(nonzero, axis=axis, keepdims=True) / nonzero
    return g_kept * np.where((zeros == 0) | (zero & (zeros == 1)), others, 0.0)


@vjp_rule(np.var, np.ndarray.var, shape="reduce")
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    if axis is None or keepdims:
        g_kept = g
    else:
        g_kept = np.expand_dims(g, axis)
    n = np.size(a) / np.size(g) - ddof
    return g_kept * (2.0 / n) * (a - np.mean(a, axis=axis, keepdims=True))


@vjp_rule(np.std, np.ndarray.std, shape="reduce")
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    # d sqrt(v) = dv / (2 sqrt(v)): the var rule divided by 2 * ans.
    if axis is None or keepdims:
        g_kept = g / ans
    else:
        g_kept = np.expand_dims(g / ans, axis)
    n = np.size(a) / np.size(g) - ddof
    return g_kept / n * (a - np.mean(a, axis=axis, keepdims=True))


@vjp_rule(np.cumsum, np.ndarray.cumsum, shape=None)
def cumsum(g, ans, a, axis=None, dtype=None, out=None):
    # Input i feeds outputs i, i+1, ...: a cumulative sum from the end.
    if axis is None:
        g_a = np.reshape(np.flip(np.cumsum(np.flip(g))), np.shape(a))
    else:
        g_a = np.flip(np.cumsum(np.flip(g, axis), axis), axis)
    return g_a
