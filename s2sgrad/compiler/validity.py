"""Whether a compile is still valid: the one place that decides it.

A compile is specialised on what it read besides the function's arguments, and is valid
while all of it holds:

    the rule table's version           registry.version, bumped by every registration
    the function's code and defaults   ``own_state``: ``__code__``, ``__defaults__``,
                                       ``__kwdefaults__`` (a reload, a rebinding)
    the names it resolved              ``dependencies``: (where, name, kind, value), read
                                       again by ``still_valid``: a global, a closure cell,
                                       a class attribute, an item of a dict the code read,
                                       each the same object (``is``), of the same type, or
                                       of the same shape (``shape_key``)

``current(compiled)`` checks all of it; ``unchanged(compiled)`` checks first what is cheap
(the version, the code and defaults), and walks the dependencies only where the compile
has some. The caches (``function.Specialiser``, ``pipeline._cached``, the templates shared
between closures of one code) ask here.

Part of the compiler layer: a home the passes share (parse records the dependencies).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from ..rules import registry


class _Missing:
    """Nothing: a name that resolves to nothing, a value not known when compiling."""

    def __repr__(self) -> str:
        return "<a value not known when compiling>"


MISSING = _Missing()


def identity(value: Any) -> tuple[str, Any]:
    """What must stay the same: the object itself for functions and modules (the compile
    resolved calls to them); for data (read live, but specialised on its kind) its type,
    and for an array, a tuple, a list or a dict its shape as the compile saw it (see
    ``shape_key``): a global rebound to a tuple of matrices where it held vectors is
    compiled again."""
    if isinstance(value, types.MethodType):  # made anew at each read: the same if equal
        return "eq", value
    if has_own_attributes(value):  # a user object: of its class, its attributes of their kinds
        return "shape", shape_key(value)
    if callable(value) or isinstance(value, types.ModuleType):
        return "is", value
    if isinstance(value, (np.ndarray, tuple, list, dict)):
        return "shape", shape_key(value)
    return "type", type(value)


def shape_key(value: Any, _within: tuple = ()) -> Any:
    """What the compile is specialised on in a value read from outside: the type; for an
    array its dtype's kind and which axes have size 1; for a tuple, list or dict the same
    of each item, with the keys; for an object of a user class (``has_own_attributes``)
    the same of each attribute, a function held there by identity."""
    if type(value) is np.ndarray:
        return np.ndarray, value.dtype.kind, tuple(n == 1 for n in value.shape)
    if isinstance(value, (tuple, list)):
        return type(value), tuple(shape_key(v, _within) for v in value)
    if isinstance(value, dict):
        return type(value), tuple((k, shape_key(v, _within)) for k, v in value.items())
    if len(_within) < ATTRIBUTE_DEPTH and not any(value is w for w in _within) and \
            has_own_attributes(value):
        inside = _within + (value,)
        return type(value), tuple(sorted(
            (k, v if callable(v) and not has_own_attributes(v) else shape_key(v, inside))
            for k, v in vars(value).items() if isinstance(k, str)))
    return type(value)


ATTRIBUTE_DEPTH = 4  # objects inside objects whose attributes are part of the key
_LIBRARIES = ("numpy", "s2sgrad", "builtins", "math", "operator", "functools")
# A class that decides for itself what reading an attribute gives.
_OWN_READS = ("__getattr__", "__getattribute__", "__slots__")


def has_own_attributes(value: Any) -> bool:
    """An object of a user class whose attributes are what its ``__dict__`` holds, read live
    by the compiled code: compiles are specialised on what each attribute holds (kind, rank,
    class, which function), as on an argument's. Not functions, classes, modules, nor the
    objects of library classes (and of their subclasses)."""
    cls = type(value)
    if type(getattr(value, "__dict__", None)) is not dict or isinstance(
            value, (type, types.FunctionType, types.MethodType, types.ModuleType)) or \
            hasattr(value, "compiled_for") or hasattr(value, "derivative_of") or \
            hasattr(value, "checkpoint_of"):
        return False
    return not any((getattr(c, "__module__", "") or "").split(".")[0] in _LIBRARIES
                   for c in cls.__mro__[:-1]) and not any(
        name in vars(c) for c in cls.__mro__[:-1] for name in _OWN_READS)


def own_state(fn: Callable) -> tuple:
    """The parts of a function object compiled into its pair besides its source: its code
    (a reload may replace it) and its defaults (they may be rebound, or changed in place
    for keyword-only ones). As dependencies, in the form ``still_valid`` checks."""
    state = [(fn, "__code__", "is", fn.__code__), (fn, "__defaults__", "is", fn.__defaults__)]
    kwdefaults = fn.__kwdefaults__
    if kwdefaults:
        state += [(kwdefaults, k, "item", v) for k, v in kwdefaults.items()]
        state.append((fn, "__kwdefaults__", "is", kwdefaults))
    return tuple(state)


def still_valid(dependencies: tuple) -> bool:
    """Do the names a compile resolved still refer to what they did?"""
    for where, name, kind, value in dependencies:
        if type(where) is dict:
            now = where.get(name, MISSING)
        elif isinstance(where, types.CellType):
            try:
                now = where.cell_contents
            except ValueError:
                return False
        elif kind == "static":  # a class attribute, as the method lookup saw it
            now = inspect.getattr_static(where, name, MISSING)
        elif kind == "item":  # an item of a dict or list the compile read
            try:
                now = where[name]
            except (KeyError, IndexError, TypeError):
                return False
        else:  # an attribute of a module, a class or an object
            now = getattr(where, name, MISSING)
        if kind == "eq":
            if now != value:
                return False
        elif kind == "shape":
            if shape_key(now) != value:
                return False
        elif (now is not value) if kind in ("is", "static", "item") else (
                type(now) is not value):
            return False
    return True


def read(where: Any, name: Any, kind: str) -> Any:
    """What a dependency's ``where`` holds at ``name`` now, read as ``still_valid`` reads
    it (MISSING where it holds nothing)."""
    if type(where) is dict:
        return where.get(name, MISSING)
    if isinstance(where, types.CellType):
        try:
            return where.cell_contents
        except ValueError:
            return MISSING
    if kind == "static":
        return inspect.getattr_static(where, name, MISSING)
    if kind in ("item", "item type"):
        try:
            return where[name]
        except (KeyError, IndexError, TypeError):
            return MISSING
    return getattr(where, name, MISSING)


def current(compiled: Any) -> bool:
    """Is ``compiled`` (a Compiled or CompiledJvp) still what compiling now would give: the
    same rule table, the same code and defaults, the same resolved names?"""
    return compiled.version is registry.version and still_valid(compiled.own) and \
        still_valid(compiled.dependencies)


def unchanged(compiled: Any) -> bool:
    """``current(compiled)``, with the cheap checks first: the rule table's version, the
    function's code and defaults, and the names it resolved only where it has any."""
    return compiled.version is registry.version and (
        compiled.fn.__code__ is compiled.code) and (
        compiled.fn.__defaults__ is compiled.defaults) and (
        not compiled.walk or current(compiled))
