"""The run-time helpers of generated code, for arrays of a namespace of the Python array API
standard (``array_api_strict``; CuPy, JAX and others through it): the same results as the
NumPy helpers they stand for (``STANDARD_HELPERS`` in backends/namespaces.py), computed
with the functions the standard defines, called on the arrays' own namespace
(``a.__array_namespace__()``). Nothing here converts an array to NumPy's or reads its values.
"""

from __future__ import annotations

from typing import Any

from . import unbroadcast as _unbroadcast


def unbroadcast(a: Any, shape: tuple[int, ...]) -> Any:
    """``unbroadcast.unbroadcast`` with the functions of ``a``'s own namespace."""
    return _unbroadcast.unbroadcast(a, tuple(shape), a.__array_namespace__())


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
