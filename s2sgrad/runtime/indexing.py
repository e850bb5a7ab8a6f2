"""Run-time support for writes through an index that may repeat a position."""

from __future__ import annotations

from typing import Any

import numpy as np


def last_writes(shape: tuple[int, ...], index) -> np.ndarray:
    """For ``y[index] = v`` on an array of ``shape``: which elements of ``v``'s region land.

    With an integer-array index a position may appear several times; NumPy keeps the last
    value written there, so only that element of ``v`` receives a gradient.
    """
    positions = np.arange(int(np.prod(shape))).reshape(shape)[index]
    flat = np.ravel(positions)
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    mask = np.zeros(flat.size, dtype=bool)
    mask[flat.size - 1 - first_from_end] = True
    return mask.reshape(np.shape(positions))


def batch_last_index(index: Any) -> Any:
    """``index`` for the rows of batched tangents with the batch axis moved last: one that
    holds ``...`` must end before that axis (the rest leave it alone)."""
    entries = index if type(index) is tuple else (index,)
    if any(e is Ellipsis for e in entries):
        return (*entries, slice(None))
    return index


def item_rows(rows: Any, index: Any) -> Any:
    """The batched tangent of ``x[index]`` where the rank of ``x`` was not known when
    compiling and ``x`` may be a list or tuple (an item of a list built by appends): a
    container's rows hold one batched tangent per item; an array's are indexed with the
    batch axis moved last."""
    if isinstance(rows, (list, tuple, dict)):
        return rows[index]
    return np.moveaxis(np.moveaxis(rows, 0, -1)[batch_last_index(index)], -1, 0)


def rows_with_item(rows: Any, index: Any, g: Any) -> Any:
    """Zeros shaped like ``rows`` with ``g`` at ``index``: the cotangent of ``rows`` that
    ``item_rows(rows, index)`` gives (each repeated position adds its part)."""
    if isinstance(rows, dict):
        out = {k: np.zeros_like(v) for k, v in rows.items()}
        out[index] = g
        return out
    if isinstance(rows, (list, tuple)):
        out = [np.zeros_like(v) for v in rows]
        out[index] = g
        return out
    out = np.zeros_like(rows)
    np.add.at(np.moveaxis(out, 0, -1), batch_last_index(index), np.moveaxis(g, 0, -1))
    return out


def add_at(a: Any, index: Any, g: Any) -> np.ndarray:
    """A copy of the array ``a`` with ``g`` added to ``a[index]``, for an index that names
    no position twice (integers, slices, None, ...). Where the adjoint owns ``a`` it is
    written ``a[index] += g`` instead (see inplace.py)."""
    out = np.array(a, copy=True)
    out[index] += g
    return out


def add_at_each(a: Any, index: Any, g: Any) -> np.ndarray:
    """``add_at`` for any index (integer arrays that repeat a position, masks): each
    occurrence adds its part of ``g``. In place: ``np.add.at(a, index, g)``."""
    out = np.array(a, copy=True)
    np.add.at(out, index, g)
    return out


def zeroed_at(g: Any, index: Any) -> np.ndarray:
    """A copy of the array ``g`` with ``g[index]`` set to zero. In place: ``g[index] = 0.0``."""
    out = np.array(g, copy=True)
    out[index] = 0.0
    return out
