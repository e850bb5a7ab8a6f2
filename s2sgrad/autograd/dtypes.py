"""A Tensor's dtype, shape and device, as PyTorch gives them, and the data a Tensor may hold.

``t.dtype`` is a ``DType``: it prints as PyTorch's (``torch.float64``), and is equal to the
NumPy dtype it stands for, and taken by NumPy as that dtype; there is one per dtype
(``as_dtype``). ``float32``, ``int64``... are the DTypes by PyTorch's names (``DTYPES``,
``s2sgrad.float32``); ``_dtype`` reads a ``dtype=`` argument as a NumPy dtype: a DType, NumPy's
dtypes and types, and PyTorch's names (``"double"``, ``"torch.float64"``). ``t.shape`` is a
``Size``, a tuple that prints as ``torch.Size([5, 3])``. The CPU is the one device
(``check_device``); ``device_type`` tells a device (``"cuda:0"``) from a dtype where an
argument may be either (``t.to(...)``). A Tensor holds numbers only: ``_numeric`` makes its
array, refusing strings, None and other objects as PyTorch does.

    as_dtype("torch.float32") is float32     float32 == np.float32, printed torch.float32
    _dtype("double") == np.float64           device_type("cuda:0") == "cuda"
    Size((5, 3)) == (5, 3)                   printed torch.Size([5, 3])

In the Tensor layer, at its bottom with printing.py and random.py: imports printing.py only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .printing import dtype_name

_NUMERIC = "biufc"  # bool, integers, floating point, complex: what a Tensor may hold
_SUPPORTED = ("float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
              "uint64, uint32, uint16, uint8, and bool")


def _numeric(data: Any, dtype: Any, copy: bool = True) -> np.ndarray:
    """``data`` as an array of numbers, refused as PyTorch refuses it otherwise: strings,
    None, arbitrary objects, dates."""
    if dtype is not None:
        try:
            kind = np.dtype(dtype).kind
        except TypeError:
            kind = "O"
        if kind not in _NUMERIC:
            raise TypeError(f"tensor(): argument 'dtype' must be a numeric dtype, not {dtype!r}")
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (np.ndarray, np.generic)) and data.dtype.kind not in _NUMERIC:
        raise TypeError(f"can't convert np.ndarray of type numpy.{data.dtype.type.__name__}. "
                        f"The only supported types are: {_SUPPORTED}.")
    array = np.array(data, dtype=dtype) if copy else np.asarray(data, dtype=dtype)
    if array.dtype.kind not in _NUMERIC:
        raise _refusal(data, array)
    return array


def _refusal(data: Any, array: np.ndarray) -> Exception:
    """PyTorch's error for a sequence whose items are not all numbers."""
    first = data
    depth = 0
    while isinstance(first, (list, tuple)) and first:
        first, depth = first[0], depth + 1
    if isinstance(first, (str, bytes)) and depth:
        # PyTorch reads a string at the head of a sequence as one more dimension
        return ValueError(f"too many dimensions '{type(first).__name__}'")
    for item in array.flat:
        if isinstance(item, (str, bytes)):  # np.str_ and np.bytes_ too
            name = "str" if isinstance(item, str) else "bytes"
            return TypeError(f"new(): invalid data type '{name}'")
        if not isinstance(item, (bool, int, float, complex, np.number, np.bool_)):
            return RuntimeError(f"Could not infer dtype of {type(item).__name__}")
    return TypeError(f"can't convert np.ndarray of type numpy.{array.dtype.type.__name__}. "
                     f"The only supported types are: {_SUPPORTED}.")


class Size(tuple):
    """A Tensor's shape, as PyTorch gives it: a tuple of ints (equal to the tuple, indexed,
    unpacked, passed to NumPy as a shape) that prints as PyTorch prints it,
    ``torch.Size([5, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def __getitem__(self, key: Any) -> Any:
        part = super().__getitem__(key)
        return Size(part) if isinstance(key, slice) else part

    def __add__(self, other: Any) -> Any:
        joined = super().__add__(other)
        return Size(joined) if isinstance(other, tuple) else joined

    def numel(self) -> int:
        """The number of elements a Tensor of this shape holds."""
        return math.prod(self)


class DType:
    """A Tensor's dtype, as PyTorch gives it: it prints ``torch.float32`` and stands for a
    NumPy dtype, its ``dtype`` attribute, which NumPy reads wherever it takes a dtype
    (``np.zeros(3, dtype=t.dtype)``, ``a.astype(t.dtype)``). It compares equal to that dtype
    and to whatever NumPy reads as it (``t.dtype == np.float64``, ``== "float64"``), and to
    PyTorch's name (``== "torch.float64"``); NumPy's attributes (``kind``, ``itemsize``,
    ``name``, ``type``) are its own. There is one per dtype: ``t.dtype is s2sgrad.float32``.
    Get it with ``as_dtype``."""

    __slots__ = ("dtype",)

    dtype: np.dtype

    def __repr__(self) -> str:
        return dtype_name(self.dtype)

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.dtype == other.dtype
        if other is None:  # np.dtype(None) is float64
            return False
        try:
            return bool(self.dtype == np.dtype(other))  # type: ignore[call-overload]
        except (TypeError, ValueError):
            return str(other) == repr(self)  # PyTorch's dtypes, and their names

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __getattr__(self, name: str) -> Any:
        if name == "dtype":  # not set yet
            raise AttributeError(name)
        return getattr(self.dtype, name)

    def __reduce__(self) -> tuple:
        return as_dtype, (self.dtype,)

    def __copy__(self) -> DType:
        return self

    def __deepcopy__(self, memo: dict) -> DType:
        return self

    @property
    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    @property
    def is_signed(self) -> bool:
        return self.dtype.kind in "ifc"


_INTERNED: dict[np.dtype, DType] = {}


def as_dtype(dtype: Any) -> DType:
    """The ``DType`` of a NumPy dtype, or of anything ``_dtype`` reads as one."""
    key = dtype if isinstance(dtype, np.dtype) else _dtype(dtype)
    found = _INTERNED.get(key)
    if found is None:
        found = _INTERNED[key] = object.__new__(DType)
        found.dtype = key
    return found

_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                "int": "int32", "bool": "bool", "short": "int16", "cfloat": "complex64",
                "cdouble": "complex128"}


# PyTorch's device types: the names ``to("cuda:0")`` may mean as a device rather than a dtype.
_DEVICE_TYPES = frozenset(["cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "ipu", "hpu",
                           "mtia", "vulkan", "lazy", "maia", "privateuseone"])


def device_type(device: Any) -> str | None:
    """The type of the device that ``device`` names (``"cpu"``, ``"cuda:0"``, a
    ``torch.device``), or None when it names none."""
    if isinstance(device, str):
        kind = device.split(":")[0]
        return kind if kind in _DEVICE_TYPES else None
    kind = getattr(device, "type", None)  # a torch.device; a dtype's ``type`` is a class
    return kind if isinstance(kind, str) and kind in _DEVICE_TYPES else None


def check_device(device: Any) -> None:
    """Refuse a device other than the CPU, where all Tensors live."""
    if device_type(device) != "cpu":
        raise RuntimeError(f"device {str(device)!r} is not available: s2sgrad computes on the "
                           f"CPU only (device 'cpu')")


# PyTorch's names of Tensor types (``t.type()``), by dtype.
_TYPES_BY_NAME = {
    "DoubleTensor": "float64", "FloatTensor": "float32", "HalfTensor": "float16",
    "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "CharTensor": "int8",
    "ByteTensor": "uint8", "UInt16Tensor": "uint16", "UInt32Tensor": "uint32",
    "UInt64Tensor": "uint64", "BoolTensor": "bool", "ComplexFloatTensor": "complex64",
    "ComplexDoubleTensor": "complex128"}
_TYPE_NAMES = {np.dtype(dtype): name for name, dtype in _TYPES_BY_NAME.items()}


def _dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype from a ``DType``, a NumPy dtype or type, a Python type (``float`` is
    float64), or a name as PyTorch writes it (``"float32"``, ``"torch.float64"``,
    ``"double"``)."""
    if isinstance(dtype, DType):
        return dtype.dtype
    if isinstance(dtype, (np.dtype, type)):
        return np.dtype(dtype)
    name = str(dtype)
    name = name.removeprefix("torch.")
    return np.dtype(_DTYPE_NAMES.get(name, name))


# The dtypes by PyTorch's names (``float32`` and its alias ``float``...): ``s2sgrad.float32``.
DTYPES = {name: as_dtype(name) for name in (
    "float16", "float32", "float64", "complex64", "complex128", "int8", "int16", "int32",
    "int64", "uint8", "uint16", "uint32", "uint64", "bool", *_DTYPE_NAMES)}
float16 = DTYPES["float16"]
float32 = DTYPES["float32"]
float64 = DTYPES["float64"]
complex64 = DTYPES["complex64"]
complex128 = DTYPES["complex128"]
int8 = DTYPES["int8"]
int16 = DTYPES["int16"]
int32 = DTYPES["int32"]
int64 = DTYPES["int64"]
uint8 = DTYPES["uint8"]
half = float16
double = float64
long = int64
short = int16
cfloat = complex64
cdouble = complex128
