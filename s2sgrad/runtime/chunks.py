"""Run-time support for chunked arrays (Dask's): an adjoint's broadcast laid out in the
chunks of the array it stands for, so that no task holds more than a chunk of it."""

from __future__ import annotations

from typing import Any

import numpy as np


def broadcast_like(g: Any, like: Any) -> Any:
    """``np.broadcast_to(g, like.shape)``, in ``like``'s chunks along the axes ``g`` gains or
    stretches (a sum's or a mean's cotangent, broadcast back over the array it reduced):
    without them Dask makes the whole result one chunk. For an array without chunks, NumPy's
    ``broadcast_to``."""
    chunks = getattr(like, "chunks", None)
    if not isinstance(chunks, tuple) or not hasattr(like, "dask"):
        return np.broadcast_to(g, np.shape(like))
    import dask.array as da

    g = da.asarray(g)
    lead = like.ndim - g.ndim
    layout = tuple(chunks[axis] if axis < lead or g.shape[axis - lead] == 1
                   else g.chunks[axis - lead] for axis in range(like.ndim))
    return da.broadcast_to(g, like.shape, chunks=layout)
