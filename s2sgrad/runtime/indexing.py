"""Run-time support for writes through an index that may repeat a position."""

from __future__ import annotations

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
