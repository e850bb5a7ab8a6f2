"""Rules for functions that take a list or tuple of arrays: stack, concatenate, np.array of a
list, and Python's sum; for ``+`` and ``*`` of tuples and lists (concatenation and
repetition, which the analysis gives these primitives when the operands are containers);
and for methods of containers (``d.get``). Their contribution to a container is a
container of the same shape, one cotangent per item (see runtime/containers.py).
"""

import numpy as np

from ..runtime.containers import (
    concat,
    default_cotangent,
    flat_pieces,
    item_cotangent,
    leading,
    pieces_along,
    repeat,
    sum_repeats,
    trailing,
    unbroadcast_each,
)
from .registry import linear, vjp_rule


@vjp_rule(np.stack, shape=None, complex=True)
def stack(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    # One contribution, for the list: the pieces of g along the stacking axis.
    return (np.unstack(g, axis=axis),)


@vjp_rule(np.concatenate, shape=None, complex=True)
def concatenate(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if axis is None:  # the arrays were flattened first
        pieces = flat_pieces(g, arrays)
    else:
        pieces = pieces_along(g, arrays, axis)
    return pieces


@vjp_rule(sum, shape=None, complex=True)
def builtin_sum(g, ans, iterable, start=0):
    # Each item was broadcast to the total's shape: reduce the cotangent to each item's.
    return unbroadcast_each(g, iterable), g


@vjp_rule(concat, shape=None)
def concatenation(g, ans, a, b):
    # (a + b)[:len(a)] are a's items, the rest b's.
    return leading(g, a), trailing(g, a)


@vjp_rule(repeat, shape=None)
def repetition(g, ans, a, n):
    return sum_repeats(g, a), None


@vjp_rule(dict.get, shape="item")
def dict_get(g, ans, self, key, default=None):
    # The item read gets g where the key is there; the default gets it where it is not.
    return item_cotangent(self, key, g), None, default_cotangent(self, key, g, default)


# Forward mode: all of these are linear in their items (and in sum's start, and in the
# default of d.get), so the tangent is the same call on the tangents.
linear(np.stack, np.concatenate, sum, concat, repeat, dict.get)
