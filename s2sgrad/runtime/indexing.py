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
