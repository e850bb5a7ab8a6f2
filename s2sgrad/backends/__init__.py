"""Array libraries: one ``Backend`` object each, the one place a compile for another
library's arrays differs from a compile for NumPy's.

Before: the signature of a compile (the analysis's abstract values, whose ``backend`` names
the library of an array among the arguments: ``identity.backend_of``).
After:  ``of(signature)``, the ``Backend`` the compile runs its library steps through:

    optimize     backend.updates_in_place     the adjoint's cotangent buffers updated in place
                 backend.lower(adjoint, rev)  rewrites before shapes are hoisted (Dask's chunks)
                 backend.adjoint_forms(...)   the adjoint in the forms the library's code takes
                 backend.primal_forms(...)    the forward (and tangent code) likewise
    pipeline     backend.callee(signature)    a callee's arrays are the caller's library's
                 backend.bind(...)            the generated code's bindings: the library's
                                              namespace and helpers in place of NumPy's
                 backend.check(...)           refuse, at the user's line, what it cannot run

Each library is one module: ``numpy`` (the default, ``NUMPY``), ``dispatching`` (Dask and
CuPy, whose arrays run NumPy's functions through NumPy's dispatch), ``namespaces`` (JAX and
the namespaces of the array API standard, whose code calls the library's own namespace).
Adding a library is a module here and its entry in ``_KNOWN`` (or ``register``); the passes
name no library.

Part of the compiler layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import identity as _values
from .base import Backend, is_abstract, on
from .dispatching import Dispatching
from .namespaces import Namespace, jax_array
from .numpy import NUMPY

__all__ = ["NUMPY", "Backend", "Dispatching", "Namespace", "named", "of", "on", "ones_like",
           "register"]

# The libraries s2sgrad knows by name (``register``, below); a namespace of the array API
# standard is named by its module (``array_api_strict``) and made on first use (``named``).
_KNOWN: dict[str, Backend] = {}


def register(backend: Backend, array_types: tuple[tuple[str, str], ...] = (),
             namespace: str | None = None,
             detect: Callable[[Any], str | None] | None = None) -> Backend:
    """Make ``backend`` the one for its name, and for arrays of ``array_types`` ((module,
    class name) pairs, as ``type(x).__module__`` and ``__name__`` give them) or that
    ``detect`` names it for; ``namespace``: the module of the functions of its arrays, where
    it is not the library's name."""
    _KNOWN[backend.name] = backend
    for key in array_types:
        _values.BACKENDS[key] = backend.name
    if detect is not None:
        _values.DETECTORS.append(detect)
    if namespace is not None:
        _values.NAMESPACES[backend.name] = namespace
    return backend


# Dask's and CuPy's arrays implement NumPy's ``__array_ufunc__`` and ``__array_function__``:
# a NumPy function called on them runs the library's own. JAX's arrays (and the tracers that
# stand for them under ``jax.jit``) are known by their abstract class.
register(Dispatching("dask"), (("dask.array.core", "Array"),), namespace="dask.array")
register(Dispatching("cupy"), (("cupy", "ndarray"), ("cupy._core.core", "ndarray")))
register(Namespace("jax", alias="jnp", standard=False), namespace="jax.numpy",
         detect=jax_array)


def named(name: str | None) -> Backend:
    """The backend of the library ``name`` (None: NumPy's)."""
    if name is None:
        return NUMPY
    found = _KNOWN.get(name)
    if found is None:  # a namespace of the array API standard, named by its module
        found = _KNOWN[name] = Namespace(name, alias="xp", standard=True)
    return found


def of(signature: dict[str, Any]) -> Backend:
    """The backend of the arrays among the arguments (in containers too), NumPy's where
    there are none; a TypeError where two libraries meet (their arrays do not mix)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if value.backend is not None:
            found.add(value.backend)
        for _, item in value.items or ():
            if is_abstract(item):
                walk(item)

    for value in signature.values():
        walk(value)
    if len(found) > 1:
        raise TypeError(f"arrays of {' and '.join(sorted(found))} among the arguments: "
                        "one call works on the arrays of one library")
    return named(next(iter(found), None))


def ones_like(value: Any) -> Any:
    """A seed of ones shaped like ``value``, an array of its own library."""
    return named(_values.backend_of(value)).ones_like(value)
