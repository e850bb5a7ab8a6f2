"""Cotangents of tuples, lists and dicts: containers of the same shape.

The cotangent of a container holds one cotangent per item, zeros where nothing flowed, so
every adjoint statement can add to it without checks. Tuples' cotangents are lists while
the adjoint builds them; ``as_structure`` gives a gradient the argument's own types.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np


def zeros_tree(value: Any, batch: int | None = None) -> Any:
    """Zeros shaped like ``value``: arrays and numbers inside lists, tuples and dicts; with
    ``batch``, ``batch`` rows of them (batched tangents)."""
    if isinstance(value, dict):
        return {k: zeros_tree(v, batch) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [zeros_tree(v, batch) for v in value]
    if batch is not None:
        return np.zeros((batch,) + np.shape(value))
    if isinstance(value, np.ndarray):
        return np.zeros_like(value, dtype=value.dtype if value.dtype.kind in "fc" else float)
    return 0.0


def copy_structure(value: Any) -> Any:
    """The lists, tuples and dicts of ``value`` copied, their other items shared: what
    ``zeros_tree`` reads, kept as it is now while the containers change later."""
    if isinstance(value, dict):
        return {k: copy_structure(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [copy_structure(v) for v in value]
    return value


def tree_add(a: Any, b: Any) -> Any:
    """Item by item sum of two cotangents of one container."""
    if isinstance(a, dict):
        return {k: tree_add(a[k], b[k]) for k in a}
    if isinstance(a, (list, tuple)):
        return [tree_add(x, y) for x, y in zip(a, b, strict=True)]
    return a + b


def add_item(tree: Any, key: Any, g: Any) -> Any:
    """A copy of ``tree`` with ``g`` added to its item ``key`` (an int, a slice, a key)."""
    new = dict(tree) if isinstance(tree, dict) else list(tree)
    if isinstance(key, slice):
        for k, part in zip(range(*key.indices(len(new))), g, strict=True):
            new[k] = tree_add(new[k], part)
    else:
        new[key] = tree_add(new[key], g)
    return new


def add_leaf(tree: Any, key: Any, g: Any) -> Any:
    """``add_item`` for an item that is a number or an array (not a container), at an
    integer or a key. Where the adjoint owns ``tree`` it is written ``tree[key] = tree[key]
    + g`` instead (see inplace.py)."""
    new = dict(tree) if isinstance(tree, dict) else list(tree)
    new[key] = new[key] + g
    return new


class _Absent:
    """What a dict held at a key it did not have."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


def item_or_absent(container: Any, key: Any) -> Any:
    """``container[key]``, or ``ABSENT`` where a dict has no such key (an assignment to it
    adds the item)."""
    if isinstance(container, dict) and key not in container:
        return ABSENT
    return container[key]


def without_item(tree: Any, key: Any, old: Any) -> Any:
    """The cotangent of a list or dict before ``container[key] = v``, from the cotangent
    ``tree`` after it: zeros shaped like the ``old`` item at ``key`` (its value was
    overwritten), or no item where the dict had none."""
    new = dict(tree) if isinstance(tree, dict) else list(tree)
    if old is ABSENT:
        del new[key]
    else:
        new[key] = zeros_tree(old)
    return new


def with_item_back(tree: Any, key: Any, item: Any) -> Any:
    """The cotangent of a list or dict before ``container.pop(key)`` (which returned
    ``item``), from the cotangent ``tree`` after it: zeros for the item, where it was."""
    if isinstance(tree, dict):
        new = dict(tree)
        new[key] = zeros_tree(item)
        return new
    at = key if key >= 0 else len(tree) + 1 + key
    return list(tree[:at]) + [zeros_tree(item)] + list(tree[at:])


def inserted_at(tree: Any, index: int) -> int:
    """Where ``xs.insert(index, v)`` put ``v``, from the cotangent ``tree`` of the list
    after it (Python clamps the index to the list)."""
    size = len(tree) - 1
    return max(0, size + index) if index < 0 else min(index, size)


def as_structure(g: Any, like: Any) -> Any:
    """The cotangent ``g`` with the container types of ``like`` (tuples stay tuples, named
    tuples of their class)."""
    if isinstance(like, dict):
        return {k: as_structure(g[k], v) for k, v in like.items()}
    if isinstance(like, (list, tuple)):
        items = [as_structure(x, y) for x, y in zip(g, like, strict=True)]
        if not isinstance(like, tuple):
            return items
        return type(like)._make(items) if hasattr(type(like), "_make") else tuple(items)
    return g


def inverse_axes(axes: Any, ndim: int) -> tuple[int, ...]:
    """The permutation that undoes ``np.transpose(a, axes)`` for an array of ``ndim`` axes
    (negative axes counted from the end), computed with Python's ints: the axes stay known
    to a library that traces the code. ``axes`` as a method takes them too:
    ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``."""
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    order = [operator.index(k) % ndim for k in axes]
    return tuple(sorted(range(len(order)), key=order.__getitem__))


def pieces_along(g: Any, arrays: Any, axis: int) -> list:
    """The cotangent of ``np.concatenate(arrays, axis)`` for each array: the slice of ``g``
    along ``axis`` where that array went (slices only: any array library's arrays)."""
    axis = axis % np.ndim(g)
    before = (slice(None),) * axis
    out, start = [], 0
    for a in arrays:
        stop = start + np.shape(a)[axis]
        out.append(g[(*before, slice(start, stop), ...)])
        start = stop
    return out


def flat_pieces(g: Any, arrays: Any) -> list:
    """The cotangent of ``np.concatenate(arrays, axis=None)`` for each array: its run of
    the flat ``g``, in the array's shape."""
    out, start = [], 0
    for a in arrays:
        size = int(np.size(a))
        out.append(np.reshape(g[start:start + size], np.shape(a)))
        start += size
    return out


def unbroadcast_each(g: Any, items: Any) -> list:
    """``g`` reduced to the shape of each item (the cotangent of sum(items))."""
    from .unbroadcast import unbroadcast
    return [unbroadcast(g, np.shape(item)) for item in items]


def concat(a: Any, b: Any) -> Any:
    """``a + b`` of two tuples or two lists: Python's concatenation."""
    return a + b


def repeat(a: Any, n: int) -> Any:
    """``a * n`` of a tuple or list: Python's repetition."""
    return a * n


def leading(g: Any, a: Any) -> list:
    """The first ``len(a)`` items of the cotangent ``g``: a's part of ``a + b``."""
    return list(g[:len(a)])


def trailing(g: Any, a: Any) -> list:
    """The items of ``g`` after the first ``len(a)``: b's part of ``a + b``."""
    return list(g[len(a):])


def sum_repeats(g: Any, a: Any) -> list:
    """The cotangent of ``a`` from that of ``a * n``: each item's n copies added."""
    size = len(a)
    if len(g) == 0 or size == 0:  # n <= 0: a's items were not used
        return zeros_tree(a)
    out = list(g[:size])
    for start in range(size, len(g), size):
        out = [tree_add(x, y) for x, y in zip(out, g[start:start + size], strict=True)]
    return out


def item_cotangent(tree: Any, key: Any, g: Any) -> Any:
    """The cotangent of a container read at ``key`` by ``get``: ``g`` at the key where it
    is there, zeros elsewhere."""
    return add_item(zeros_tree(tree), key, g) if key in tree else zeros_tree(tree)


def default_cotangent(tree: Any, key: Any, g: Any, default: Any) -> Any:
    """The cotangent of ``get``'s default: ``g`` where the key is missing (the default was
    returned), zeros shaped like the default otherwise."""
    return zeros_tree(default) if key in tree else g
