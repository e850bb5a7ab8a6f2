"""The run-time helpers of generated code, for arrays of a namespace of the Python array API
standard (``array_api_strict``; CuPy, JAX and others through it): the same results as the
NumPy helpers they stand for (``STANDARD_HELPERS`` in backends.py), computed with the
functions the standard defines, called on the arrays' own namespace
(``a.__array_namespace__()``). Nothing here converts an array to NumPy's or reads its values.
"""

from __future__ import annotations

from typing import Any


def unbroadcast(a: Any, shape: tuple[int, ...]) -> Any:
    """``unbroadcast.unbroadcast``: sum ``a`` over the axes that broadcasting added or
    stretched to reach ``a.shape`` from ``shape``."""
    a_shape = tuple(a.shape)
    if a_shape == tuple(shape):
        return a
    xp = a.__array_namespace__()
    extra = len(a_shape) - len(shape)
    if extra < 0:
        return xp.broadcast_to(a, tuple(shape))
    if extra:
        a = xp.sum(a, axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and a_shape[extra + i] != 1)
    if stretched:
        a = xp.sum(a, axis=stretched, keepdims=True)
    return a
