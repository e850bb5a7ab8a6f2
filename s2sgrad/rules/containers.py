"""Rules for functions that take a list or tuple of arrays: stack, concatenate, np.array of a
list, and Python's sum. Their contribution to the list is a list, one cotangent per item.
"""

import numpy as np

from ..runtime.containers import split_points, unbroadcast_each
from .registry import vjp_rule


@vjp_rule(np.stack, shape=None)
def stack(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    # One contribution, for the list: the pieces of g along the stacking axis.
    return (np.unstack(g, axis=axis),)


@vjp_rule(np.concatenate, shape=None)
def concatenate(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    return np.split(g, split_points(arrays, axis), axis=axis)


@vjp_rule(sum, shape=None)
def builtin_sum(g, ans, iterable, start=0):
    # Each item was broadcast to the total's shape: reduce the cotangent to each item's.
    return unbroadcast_each(g, iterable), g
