"""What the analysis knows of array shapes: the rank, and for each axis whether it has size 1.

``dims`` is a tuple with one entry per axis, ``True`` (size 1), ``False`` (size other than 1)
or ``None`` (unknown); ``None`` instead of a tuple means the rank is unknown. That is all
broadcasting depends on: two operands of one rank whose axes are never of size 1 have the
output's shape, and a size-1 or missing axis is exactly where a cotangent must be summed.

    (False, False) + (False,)  ->  (False, False)     b's contribution: np.sum(g, axis=0)
    (False, True) * (False,)   ->  (False, False)     a's contribution: np.sum(g, 1, keepdims)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Dims = tuple  # tuple[bool | None, ...]


def of_shape(shape: Sequence[int]) -> Dims:
    return tuple(n == 1 for n in shape)


def of_literal(shape: Any) -> Dims | None:
    """Dims of an array created with a literal shape (``(3, 1)``, ``5``, ``(n, -1)``)."""
    if isinstance(shape, int):
        return (None,) if shape < 0 else (shape == 1,)
    if isinstance(shape, tuple):
        return tuple(None if not isinstance(n, int) or n < 0 else n == 1 for n in shape)
    return None


def broadcast(*operands: Dims | None) -> Dims | None:
    if any(d is None for d in operands):
        return None
    rank = max((len(d) for d in operands), default=0)
    out = []
    for axis in range(rank):
        entries = [d[axis - rank + len(d)] for d in operands if axis - rank + len(d) >= 0]
        if any(e is False for e in entries):
            out.append(False)
        elif all(e is True for e in entries):
            out.append(True)
        else:
            out.append(None)
    return tuple(out)


def reduce(dims: Dims | None, axis: Any, keepdims: bool) -> Dims | None:
    if dims is None:
        return None
    if axis is None:
        return (True,) * len(dims) if keepdims else ()
    axes = {a % len(dims) for a in (axis if isinstance(axis, tuple) else (axis,))}
    if keepdims:
        return tuple(True if i in axes else d for i, d in enumerate(dims))
    return tuple(d for i, d in enumerate(dims) if i not in axes)


def matmul(a: Dims | None, b: Dims | None) -> Dims | None:
    if a is None or b is None or not a or not b:  # (NumPy refuses a 0-d operand)
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 1:
        return b[:-2] + b[-1:]
    if len(b) == 1:
        return a[:-1]
    return broadcast(a[:-2], b[:-2]) + (a[-2], b[-1])


def dot(a: Dims | None, b: Dims | None) -> Dims | None:
    if a is None or b is None:
        return None
    if len(a) == 0 or len(b) == 0:
        return a or b
    if len(b) == 1:
        return a[:-1]
    return a[:-1] + b[:-2] + b[-1:]


def transpose(dims: Dims | None, axes: Any = None) -> Dims | None:
    if dims is None:
        return None
    if axes is None:
        return dims[::-1]
    if isinstance(axes, tuple) and all(isinstance(a, int) for a in axes):
        return tuple(dims[a] for a in axes)
    return (None,) * len(dims)


def sum_axes(operand: Dims, out: Dims) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """How to reduce a cotangent shaped like ``out`` to ``operand``'s shape.

    Returns (leading axes to sum away, operand axes to sum with keepdims), or None when
    the dims do not decide it.
    """
    if None in operand:
        return None
    lead = len(out) - len(operand)
    if lead < 0:
        return None
    kept = tuple(i for i, unit in enumerate(operand) if unit and out[lead + i] is not True)
    return tuple(range(lead)), kept
