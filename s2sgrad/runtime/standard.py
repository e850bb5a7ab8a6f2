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


def zeros_tree(value: Any, batch: int | None = None) -> Any:
    """``containers.zeros_tree``: zeros shaped like ``value``, arrays (of their own
    namespace) and numbers inside lists, tuples and dicts; with ``batch``, ``batch`` rows of
    them."""
    if isinstance(value, dict):
        return {k: zeros_tree(v, batch) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [zeros_tree(v, batch) for v in value]
    if not hasattr(value, "__array_namespace__"):  # a Python number
        return 0.0 if batch is None else [0.0] * batch
    xp = value.__array_namespace__()
    if batch is not None:
        return xp.zeros((batch, *value.shape), dtype=value.dtype)
    return xp.zeros_like(value)
