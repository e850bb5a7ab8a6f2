"""Reduce a cotangent shaped like a broadcast result back to the shape of one operand.

The reverse pass emits a call to ``unbroadcast`` only where the analysis cannot prove that an
operand already has the output's shape; everywhere else the contribution is used as it is.
"""

from __future__ import annotations

import numpy as np


def unbroadcast(a, shape: tuple[int, ...], xp=np):
    """Sum ``a`` over the axes that broadcasting added or stretched to reach ``np.shape(a)``
    from ``shape``, with the functions of the namespace ``xp`` (NumPy's, which dispatch to
    Dask's and CuPy's; another library's: ``runtime.standard.unbroadcast``)."""
    a_shape = np.shape(a)  # read from the array's own shape, for any library's array
    if a_shape == shape:
        return a
    extra = len(a_shape) - len(shape)
    if extra < 0:
        return xp.broadcast_to(a, shape)
    if extra:
        a = xp.sum(a, axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and a_shape[extra + i] != 1)
    if stretched:
        a = xp.sum(a, axis=stretched, keepdims=True)
    return a
