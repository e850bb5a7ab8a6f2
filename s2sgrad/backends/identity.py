"""Which library an array belongs to: the tables the array libraries' backends fill
(``register``), read by the analysis to know an argument's library (``backend_of``, which
is part of a compile's key) and by the backends to find a library's functions
(``namespace_of``). Imports nothing of s2sgrad: the compiler reads it, the backends fill it.

Part of the compiler layer.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any

import numpy as np

# The arrays of other libraries, by (module, class) of their type, each with the library it
# belongs to; tests for arrays that no class names (a library's tracers); and the module of
# each library's functions where it is not the library's name. Filled by the array
# libraries' backends (s2sgrad/backends/, ``register``): an object is an array only when it
# is known to be one.
BACKENDS: dict[tuple[str, str], str] = {}
DETECTORS: list[Callable[[Any], str | None]] = []
NAMESPACES: dict[str, str] = {}


def backend_of(value: Any) -> str | None:
    """The library of an array of ``BACKENDS`` or ``DETECTORS``, or of a namespace of the
    array API standard (named by its module, as ``array_api_strict``), else None (NumPy's
    arrays included)."""
    cls = type(value)
    found = BACKENDS.get((cls.__module__, cls.__name__))
    if found is None:
        for detect in DETECTORS:
            found = detect(value)
            if found is not None:
                return found
        if hasattr(cls, "__array_namespace__"):
            found = _NAMESPACES.get(cls)
            if found is None:
                name = getattr(value.__array_namespace__(), "__name__", "")
                found = _NAMESPACES[cls] = "" if name == "numpy" else name
            return found or None
    return found


_NAMESPACES: dict[type, str] = {}  # an array API class -> its namespace's module name


def namespace_of(backend: str | None) -> types.ModuleType:
    """The module of the functions of ``backend``'s arrays (NumPy for None)."""
    if backend is None:
        return np
    return importlib.import_module(NAMESPACES.get(backend, backend))
