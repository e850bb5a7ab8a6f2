"""Reduce a cotangent shaped like a broadcast result back to the shape of one operand.

The reverse pass emits a call to ``unbroadcast`` only where the analysis cannot prove that an
operand already has the output's shape; everywhere else the contribution is used as it is.
"""

from __future__ import annotations

import numpy as np


def unbroadcast(g, shape: tuple[int, ...]):
    """Sum ``g`` over the axes that broadcasting added or stretched to reach ``np.shape(g)``."""
    g_shape = np.shape(g)
    if g_shape == shape:
        return g
    extra = len(g_shape) - len(shape)
    if extra < 0:
        return np.broadcast_to(g, shape)
    if extra:
        g = np.sum(g, axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g_shape[extra + i] != 1)
    if stretched:
        g = np.sum(g, axis=stretched, keepdims=True)
    return g
