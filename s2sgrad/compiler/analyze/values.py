"""Abstract values: what is known of a value at transform time, and the specialisation key.

Every value the analysis meets has an ``Abstract``: a Python number, an array (rank, which
axes have size 1, float or not, complex), None, a tuple/list/dict (its items; a named
tuple is a tuple whose fields are known, specialised on its class), an object of
a known class, or a value the compiled pair is specialised on by identity (``identified``:
a function, a dtype, a module, a string whose value the code reads).

    abstract_of(np.ones((3, 1)))   array[n1]        abstract_of((x, 2.0))   <tuple> of items
    abstract_of(np.tanh)           <ufunc>, value=np.tanh (calls through it resolve to it)
    abstract_of(dask_array)        array[nn], backend "dask"

An array of another library (``BACKENDS`` and ``DETECTORS``, which the array libraries'
backends fill: s2sgrad/backends/) is an array whose ``backend`` names that library: what
the compile does differently for it is the backend's. So is the array of a namespace of the
Python array API standard (``__array_namespace__``; its backend is the namespace's module
name, as ``array_api_strict``): its code calls the namespace's own functions, which have the
rules of NumPy's of the same name. The backend is part of the key:
a function called with NumPy and with Dask arrays compiles a pair for each.

An object of a user class is known by its class and what each of its attributes holds
(``layer.W`` an array of rank 2, ``solver.rhs`` one function): a method compiled for it
reads them as known values, and a call with an object whose attributes hold other kinds
compiles again (``validity.has_own_attributes`` says which objects).

``abstract_of`` of the arguments is the cache key of a compiled pair; ``join`` is what a
name assigned on several paths holds. This module only describes values: of the compiler
it imports only validity's test of which objects are known by their attributes, and
parse's of which functions are an installed package's.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import inspect
import math
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import shapes
from ...backends.identity import BACKENDS, NAMESPACES, backend_of, namespace_of  # noqa: F401
from ..parse import _THROUGH, differentiate_through, installed_package  # noqa: F401
from ..validity import ATTRIBUTE_DEPTH, has_own_attributes


@dataclass(frozen=True)
class Abstract:
    """What is known of a value at transform time."""

    kind: str  # 'scalar' (Python number), 'array' (ndarray / numpy scalar), 'none', 'object'
    dims: tuple | None = None  # per axis: size 1 (True), not 1 (False), unknown (None)
    float: bool = True  # a floating-point value (only those carry gradients)
    type: type | None = None  # for 'object': the class, to resolve method calls
    # for tuples, lists, dicts: (key, Abstract) per item; for an object of a user class,
    # (name, Abstract) per attribute (``has_own_attributes``), sorted by name
    items: tuple | None = None
    # The object itself, for values the compiled code is specialised on (see ``identified``):
    # functions and other callables, dtypes, strings. Calls through it resolve to it.
    value: Any = None
    complex: bool = False  # a complex number or array (not differentiated)
    none: bool = False  # None on some path (see join): `is None` tests are not folded
    # For a named tuple (a tuple): the names of its fields in order (``p.w`` is an item),
    # and its class where an argument gave it (the compiled code is specialised on it)
    fields: tuple[str, ...] | None = None
    named: type | None = None
    # For an array of another library (``BACKENDS``): its name; None for NumPy's
    backend: str | None = None
    # For a list or tuple whose items are not known one by one (``items`` None: one grown
    # in a loop): what every item may be (None where nothing is known of them)
    element: Abstract | None = None
    # For a nested function or lambda made into a value inside differentiated code: the
    # function that stands for its closures (``parse.nested_function``). The value is then
    # the tuple of what it closes over, in the order of its free variables, and a call of
    # it is a call of that function with the tuple first.
    closure: Any = None

    @property
    def ndim(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    def __repr__(self) -> str:
        if self.closure is not None:
            return f"<function {self.closure.__name__}>"
        if self.kind == "object":
            return f"<{getattr(self.named or self.type, '__name__', 'object')}>"
        if self.kind == "none":
            return "None"
        dims = "?" if self.dims is None else "".join(
            {True: "1", False: "n", None: "?"}[d] for d in self.dims)
        on = f", {self.backend}" if self.backend else ""
        return f"{self.kind}[{dims}{'' if self.float else ', int'}{on}]"


class ShapeTuple(tuple):
    """Marks the abstract value of ``x.shape``: a tuple of ints."""


UNKNOWN_ARRAY = Abstract("array", None, True)
SCALAR = Abstract("scalar", (), True)


def join(a: Abstract, b: Abstract) -> Abstract:
    """What is known of a value that is ``a`` on one path and ``b`` on another.

    ``None`` joins to the other side, marked as maybe None: a value that is None on one path
    (``best = None`` before a loop that sets it) is used as what the other path makes it,
    since Python raises on arithmetic, calls and indexing of None; a test ``v is None``
    (``axis=None if flag else 0``) is left to run time."""
    if a == b:
        return a
    if (a.closure is not None or b.closure is not None) and a.closure is not b.closure:
        return Abstract("object", None, a.float or b.float, object)  # one of two functions
    if a.closure is not None:  # the same function, closing over values joined
        joined = join(dataclasses.replace(a, closure=None), dataclasses.replace(b, closure=None))
        return dataclasses.replace(joined, closure=a.closure) if joined.type is tuple else \
            joined
    if a.kind == "none" or b.kind == "none":
        other = b if a.kind == "none" else a
        return other if other.kind == "none" else dataclasses.replace(other, none=True)
    if a.complex or b.complex:
        joined = join(Abstract(a.kind, a.dims, a.float, a.type, a.items),
                      Abstract(b.kind, b.dims, b.float, b.type, b.items))
        return Abstract(joined.kind, joined.dims, joined.float, joined.type, joined.items,
                        None, True)
    if {a.kind, b.kind} <= {"scalar", "array"}:
        if a.kind != b.kind:  # a Python number on one path, an array on another: of
            array = a if a.kind == "array" else b  # rank 0 where the array is (y = 0.0
            return Abstract("array", () if array.dims == () else None,  # before a loop
                            a.float or b.float)  # that adds an element of an array to it)
        kind = a.kind
    elif a.kind == b.kind == "object" and a.type is b.type:
        if a.type in (tuple, list, dict):  # a container: items joined where they match
            items = element = None
            if a.items is not None and b.items is not None and [k for k, _ in a.items] == [
                    k for k, _ in b.items]:
                items = tuple((k, join(x, y)) for (k, x), (_, y) in zip(
                    a.items, b.items, strict=True))
            elif a.type is not dict:  # a list grown on one path: what any item may be
                element = join_elements(element_of(a), element_of(b))
            dims = a.dims if a.dims == b.dims else None
            return Abstract("object", dims, a.float or b.float, a.type, items,
                            fields=a.fields if a.fields == b.fields else None,
                            named=a.named if a.named is b.named else None, element=element)
        if a.items is not None and b.items is not None and [k for k, _ in a.items] == [
                k for k, _ in b.items]:  # objects of one class: attributes joined
            return Abstract("object", None, False, a.type, tuple(
                (k, join(x, y)) for (k, x), (_, y) in zip(a.items, b.items, strict=True)))
        kind = "object"
    else:  # kinds with no join: nothing is known of it, but a gradient may flow through it
        return Abstract("object", None, a.float or b.float, object)
    if a.dims is not None and b.dims is not None and len(a.dims) == len(b.dims):
        dims = tuple(x if x == y else None for x, y in zip(a.dims, b.dims, strict=True))
    else:
        dims = None
    return Abstract(kind, dims, a.float or b.float, a.type if a.type is b.type else None)


def identified(value: Any) -> bool:
    """Values the compiled code is specialised on by identity (or, for strings, equality):
    what a call, a cast or a lookup through them does depends on which one it is."""
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                              np.ufunc, functools.partial, type, np.dtype, str,
                              types.ModuleType)) or hasattr(value, "compiled_for") or \
        hasattr(value, "derivative_of") or \
        hasattr(value, "checkpoint_of")  # a Derivative (gradient(f)), a checkpoint(f)


def _attributes(value: Any, within: tuple) -> tuple | None:
    """(name, abstract value) of each attribute of a user object, sorted by name; None
    where they are not known (not a plain user object, or one nested too deep, or one that
    holds itself)."""
    if not has_own_attributes(value) or len(within) >= ATTRIBUTE_DEPTH or any(
            value is w for w in within):
        return None
    inside = within + (value,)
    return tuple(sorted((k, abstract_of(v, inside)) for k, v in vars(value).items()
                        if isinstance(k, str)))


def abstract_of(value: Any, _within: tuple = ()) -> Abstract:
    """The abstract value of a run-time argument (the cache key of a specialisation)."""
    if isinstance(value, bool):
        return Abstract("scalar", (), False)
    if isinstance(value, float):
        return SCALAR
    if isinstance(value, int):
        return Abstract("scalar", (), False)
    if isinstance(value, complex):
        return Abstract("scalar", (), True, complex=True)
    if isinstance(value, (np.ndarray, np.generic)):
        if isinstance(value, np.ndarray) and type(value) is not np.ndarray and isinstance(
                value, (np.matrix, np.ma.MaskedArray)):
            raise TypeError(
                f"{type(value).__name__} arguments are not supported: their operators differ "
                "from NumPy arrays' ('*' of np.matrix is a matrix product), which the "
                "derivative rules do not follow. Pass np.asarray(value) (and use '@' for "
                "matrix products).")
        kind = value.dtype.kind
        return Abstract("array", shapes.of_shape(value.shape), kind in "fc",
                        complex=kind == "c")
    backend = backend_of(value)
    if backend is not None:
        kind = dtype_kind(value)
        # an axis of a size not yet known (a chunked array built from lazy values) is nan,
        # or None in the array API standard
        dims = tuple(None if n is None or math.isnan(n) else n == 1 for n in value.shape)
        return Abstract("array", dims, kind in "fc", complex=kind == "c", backend=backend)
    if identified(value):
        return Abstract("object", None, False, type(value), value=value)
    attributes = _attributes(value, _within)
    if attributes is not None:  # a user object: specialised on what its attributes hold
        return Abstract("object", None, False, type(value), attributes)
    if value is None:
        return Abstract("none", None, False)
    if isinstance(value, (tuple, list)):
        # a named tuple is a tuple whose fields are known
        fields = named_fields(type(value)) if type(value) not in (tuple, list) else None
        items = tuple((k, abstract_of(v, _within)) for k, v in enumerate(value))
        return Abstract("object", (None,) * len(value), any(a.float for _, a in items),
                        type(value) if fields is None else tuple, items, fields=fields,
                        named=None if fields is None else type(value))
    if isinstance(value, dict) and _reads_like_dict(type(value)) and all(
            isinstance(k, str) for k in value):
        items = tuple((k, abstract_of(v, _within)) for k, v in value.items())  # in its order
        return Abstract("object", None, any(a.float for _, a in items), dict, items)
    cls = type(value)
    known = _OBJECTS.get(cls)
    if known is None:
        known = _OBJECTS[cls] = Abstract("object", None, False, cls)
    return known


_OBJECTS: dict[type, Abstract] = {}  # the abstract value of a plain object, per class

def dtype_kind(array: Any) -> str:
    """NumPy's kind letter of an array's dtype ('f', 'c', 'i', 'b', ...), for the dtypes of
    the array API standard too (which have no ``kind``)."""
    dtype = array.dtype
    kind = getattr(dtype, "kind", None)
    if isinstance(kind, str):
        return kind
    xp = array.__array_namespace__()
    for letter, name in (("b", "bool"), ("f", "real floating"), ("c", "complex floating"),
                         ("i", "signed integer"), ("u", "unsigned integer")):
        if xp.isdtype(dtype, name):
            return letter
    return "O"

_FIELD = type(collections.namedtuple("_Probe", "a").a)  # how a named tuple reads a field


@functools.cache
def named_fields(cls: type) -> tuple[str, ...] | None:
    """The fields of a named tuple class (``collections.namedtuple``, ``typing.NamedTuple``,
    NumPy's ``QRResult``) that reads as a tuple, each field its item at its position; None
    for any other class, a subclass that redefines indexing, iteration or a field included."""
    fields = getattr(cls, "_fields", None)
    if not issubclass(cls, tuple) or not isinstance(fields, tuple) or not all(
            isinstance(f, str) for f in fields) or any(
            getattr(cls, name) is not getattr(tuple, name) for name in (
                "__getitem__", "__iter__", "__len__")):
        return None
    probe = tuple(object() for _ in fields)
    for k, name in enumerate(fields):
        read = inspect.getattr_static(cls, name, None)
        if type(read) is not _FIELD or read.__get__(probe, tuple) is not probe[k]:
            return None
    return fields


# What the compiler reads of a dict: a subclass that defines one of these (a get that scales,
# a __getitem__ that computes) is an object of its own class, its methods differentiated
# through; OrderedDict only orders its keys differently, which reads by key do not see.
_DICT_READS = ("__getitem__", "get", "keys", "values", "items", "__iter__", "__len__",
               "__contains__")


@functools.cache
def _reads_like_dict(cls: type) -> bool:
    return cls is dict or cls is collections.OrderedDict or all(
        getattr(cls, name) is getattr(dict, name) for name in _DICT_READS)


def is_container(value: Abstract | None) -> bool:
    return value is not None and value.kind == "object" and value.type in (tuple, list, dict)


def element_of(container: Abstract) -> Abstract | None:
    """What any item of a list or tuple may be: the join of its items where they are known,
    else its ``element``; None where nothing is known of them (an empty list, or items of
    kinds that have no join: a list and a number)."""
    if container.items:
        value = container.items[0][1]
        for _, other in container.items[1:]:
            value = join(value, other)
        return _known(value)
    return container.element


def join_elements(a: Abstract | None, b: Abstract | None) -> Abstract | None:
    """The join of two ``element_of``s, either of which may be None (no items)."""
    if a is None or b is None:
        return b if a is None else a
    return _known(join(a, b))


def _known(value: Abstract) -> Abstract | None:
    """None for the join of kinds that have none (it says nothing of an item)."""
    return None if value.kind == "object" and value.type is object else value


def item_of(container: Abstract, key: Any) -> Abstract:
    """What ``container[key]`` holds: the item at ``key`` where the key is known here and
    the container has it, else what any of its items may be."""
    items = container.items or ()
    if type(key) is int and key < 0 and container.type in (tuple, list) and items:
        key += len(items)  # xs[-1]: the last item, as Python reads it
    for k, value in items:
        if k == key and type(k) is type(key):
            return value
    if not items:  # of a container of complex arrays (np.split(z, n)): complex
        return container.element if container.element is not None else dataclasses.replace(
            UNKNOWN_ARRAY, complex=container.complex)
    value = items[0][1]
    for _, other in items[1:]:
        value = join(value, other)
    return value


def described(value: Abstract) -> str:
    """'a tuple', 'an array', 'a number': for messages."""
    if value.kind == "object" and value.type not in (None, object):
        name = value.type.__name__
    else:
        name = {"scalar": "number", "none": "None"}.get(value.kind, value.kind)
        if value.kind == "object":
            name = "value of unknown kind"
    return ("an " if name[0] in "aeiou" else "a ") + name


def is_complex(value: Abstract) -> bool:
    """A complex number or array, or a container that holds one."""
    return value.complex or any(is_complex(v) for _, v in value.items or ())


def holds_closure(value: Abstract | None) -> bool:
    """A nested function made into a value (``Abstract.closure``), or a container that may
    hold one."""
    if value is None:
        return False
    return value.closure is not None or any(holds_closure(v) for _, v in value.items or ()) \
        or holds_closure(value.element)


def is_sequence(value: Abstract) -> bool:
    return value.kind == "object" and value.type in (tuple, list)


def user_method(value: Abstract, name: str | None) -> Any:
    """The Python method ``name`` of a user class, differentiated through, or None
    (built-in types, NumPy, ours, and an installed package's: ``package_method``)."""
    method = _python_method(value, name)
    return method if method is not None and not installed_package(method) else None


def package_method(value: Abstract, name: str | None) -> Any:
    """The Python method ``name`` of a class of an installed package (a scipy spline's
    ``__call__``, a sparse matrix's ``__matmul__``), or None: called, never entered, as
    the package's functions are."""
    method = _python_method(value, name)
    return method if method is not None and installed_package(method) else None


def _python_method(value: Abstract, name: str | None) -> Any:
    if name is None or value.kind != "object" or value.type in (None, object) or \
            value.value is not None or is_library_type(value.type):
        return None
    method = inspect.getattr_static(value.type, name, None)
    return method if isinstance(method, types.FunctionType) else None


GENERATED = "<s2sgrad"  # how the file names of generated source begin

_LIBRARIES = ("numpy", "s2sgrad", "builtins", "math", "operator")


def is_library_type(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module.split(".")[0] in _LIBRARIES


def is_library(fn: Callable) -> bool:
    """A function of NumPy, Python or ours: called, never differentiated through. The
    functions s2sgrad writes as source (Tensor operations and higher order's pairs in
    ``sourcefile``'s file, the generated forward, backward and tangent functions in files
    named ``<s2sgrad ...>``) are differentiated through like a user's."""
    module = getattr(fn, "__module__", "") or ""
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_filename.startswith(GENERATED):
        return False
    return module.split(".")[0] in _LIBRARIES
