"""Tensor: an ndarray plus what PyTorch-style autograd needs to know about it.

A Tensor holds its value in ``data`` (a NumPy array, float64 unless told otherwise), and, when
it was computed from Tensors that require grad, the graph node that made it (``grad_fn``).
Operators and NumPy functions on Tensors run through the same compiler as ``@grad`` functions
(see ``ops.py``); ``backward()`` runs the compiled adjoints in reverse order (see ``graph.py``).

A Tensor also carries a version counter, bumped by every in-place operation (``+=``,
``zero_()``, ``t[i] = v``...) and shared with the Tensors that alias its memory (``detach()``,
views). A node remembers the versions it saw, so that ``backward()`` can refuse to use a value
that was changed after it was saved, instead of returning a wrong gradient.

A Tensor whose data is a view of another Tensor's memory (``y[1:]``, ``y.T``, ``y.reshape``,
the result of a ``@grad`` function returning a slice of its argument) knows that Tensor, its
``_base``, as in PyTorch. A recorded in-place change through a view rewrites the base's history
(a ``CopySlices`` node), and a view whose base's history changed since the view took its own
is re-derived from the base before its next use (see ``ops.py``, views).

``t.dtype`` is a ``DType``: it prints as PyTorch's (``torch.float64``), and is equal to the
NumPy dtype it stands for, and taken by NumPy as that dtype. ``float32``, ``int64``... are the
DTypes by PyTorch's names (``s2sgrad.float32``); a ``dtype=`` argument takes them, NumPy's
dtypes and types, and PyTorch's names. dtypes.py defines them, ``Size`` and the devices; they
can be imported from here too.

The creators (``zeros``, ``arange``, ``randn``, ``cat``...) are in creators.py; the methods
that are one operation each (operators, elementwise functions, comparisons) are rows of the
table in methods.py, which ``methods.install`` makes into methods of ``Tensor``.

In the Tensor layer, below graph.py and ops.py: of this layer, imports printing.py, dtypes.py
and methods.py only (and, of the compiler, the rule registry, to name a function with a rule
in an error). The operations on Tensors use the compiler and make Tensors, so they live above
this module, in ops.py and graph.py; ops.py hands them to it with ``bind_ops`` when it is
imported.
"""

from __future__ import annotations

import itertools
import math
import operator
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import methods
from .dtypes import (  # noqa: F401  (imported from here: by s2sgrad, nn, creators.py)
    _NUMERIC,
    _TYPE_NAMES,
    _TYPES_BY_NAME,
    DTYPES,
    DType,
    Size,
    _dtype,
    _numeric,
    as_dtype,
    cdouble,
    cfloat,
    check_device,
    complex64,
    complex128,
    device_type,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    short,
    uint8,
)
from .printing import dtype_name, format_tensor

# The operations on Tensors (ops.py, and graph.py's backward): set by ops.py when imported.
_ops: Any = None


def bind_ops(ops: Any) -> None:
    """Route Tensor's operators, NumPy calls, in-place changes, view updates and backward()
    to ``ops``, which has a function of each name that Tensor calls."""
    global _ops
    _ops = ops


def sync(t: Tensor) -> None:
    """Derive again the history of the view ``t`` if its base's history changed since."""
    _ops.sync(t)


REQUIRES_FLOAT = "Only Tensors of floating point and complex dtype can require gradients"
REQUIRES_FLOAT_INPLACE = "only Tensors of floating point dtype can require gradients"
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
DETACH_VIEW = "Can't detach views in-place. Use detach() instead."
NONLEAF_FLAG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)
NONLEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
    "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. "
    "See github.com/pytorch/pytorch/pull/30531 for more information."
)


class Version:
    """A counter of in-place changes, shared by all Tensors that view the same memory."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


def _can_require_grad(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"


_ruled: list = [None, frozenset()]  # (the rule table's version, the code of its functions)


def _ruled_codes() -> frozenset:
    """The code objects of the Python functions that have a registered rule, read again only
    when the rule table changes (``item()`` asks on every call)."""
    from ..rules import registry

    if _ruled[0] is not registry.version:
        _ruled[:] = [registry.version, frozenset(
            code for rule in list(registry._RULES.values())
            if (code := getattr(rule.primitive, "__code__", None)) is not None)]
    return _ruled[1]


def _refuse_inside_a_function_with_a_rule(depth: int = 6) -> None:
    """A Tensor that requires grad is asked for its values (as an array or a number): if
    that happens in the body of a function with a registered derivative rule (within
    ``depth`` frames), that function was called directly on the Tensor, and its result
    would silently have no graph. Say so, and how to call it with its rule."""
    import sys

    codes = _ruled_codes()
    if not codes:
        return
    frame = sys._getframe(2)
    for _ in range(depth):
        if frame is None:
            return
        code = frame.f_code
        if code in codes:
            raise RuntimeError(
                f"{code.co_qualname}() has a derivative rule, but called directly on a "
                "Tensor that requires grad it runs its own body on the Tensor's values, "
                f"which keeps no graph. Call it as `s2sgrad.grad({code.co_qualname})(...)`, "
                "or inside a @grad function: both use its rule.")
        frame = frame.f_back


class Tensor:
    """An ndarray that can take part in reverse-mode differentiation, PyTorch style.

    Create one with ``s2sgrad.tensor(data, requires_grad=...)``.
    """

    __slots__ = (
        "__weakref__",
        "_base",  # the Tensor whose memory this one views, or None
        "_data",
        "_grad",
        "_grad_fn",
        "_nograd_view",  # a view made with grad mode off
        "_out",
        "_requires_grad",
        "_retains",
        "_seen",  # for a view: the base's grad_fn when the view's own history was derived
        "_version",
    )

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        if isinstance(data, Tensor):
            data = data._data
        _init(self, _numeric(data, dtype), None, 0, False, Version())
        if requires_grad:
            if not _can_require_grad(self._data.dtype):
                raise RuntimeError(REQUIRES_FLOAT)
            self._requires_grad = True

    @property
    def data(self) -> np.ndarray:
        """The value, an ndarray. Changes made through it are not tracked (as in PyTorch)."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        self._data = value._data if isinstance(value, Tensor) else _numeric(value, None, False)

    # -- autograd state ---------------------------------------------------------------------

    @property
    def grad_fn(self) -> Any:
        """The node that computed this Tensor, or None for a leaf."""
        if self._base is not None:
            _ops.sync(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node: Any) -> None:
        self._grad_fn = node

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this Tensor (set on leaves, inherited by results)."""
        if self._base is not None:
            _ops.sync(self)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place on a leaf; returns ``self``."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(NONLEAF_FLAG)
            return self
        if requires_grad and not _can_require_grad(self._data.dtype):
            raise RuntimeError(REQUIRES_FLOAT_INPLACE)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for Tensors not computed by a recorded operation (their ``grad_fn`` is None)."""
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient of a leaf after ``backward()``, or None.

        On a non-leaf it is None (with a warning) unless ``retain_grad()`` was called.
        """
        if self.grad_fn is not None and not self._retains:
            warnings.warn(NONLEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            value = value if isinstance(value, Tensor) else Tensor(value)
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value._data.dtype}' to a "
                    f"tensor with dtype '{self._data.dtype}'"
                )
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf on which ``retain_grad()`` was called."""
        return self._retains

    def retain_grad(self) -> None:
        """Make ``backward()`` fill ``.grad`` of this non-leaf Tensor too."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None and not self._retains:
            self.grad_fn.retain(self._out, self)
            self._retains = True

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Sequence[Tensor] | None = None) -> None:
        """Accumulate the gradient of this Tensor into ``.grad`` of the leaves it depends on.

        ``gradient`` (the cotangent of this Tensor) may be omitted for a single-element
        Tensor. The saved values of the graph are freed unless ``retain_graph=True``.
        ``inputs`` restricts accumulation to those leaves.
        """
        _ops.backward([self], [gradient], retain_graph, create_graph, inputs)

    def detach(self) -> Tensor:
        """A Tensor sharing this one's data (and version counter), outside any graph."""
        return _make(self._data, version=self._version)

    def detach_(self) -> Tensor:
        """Detach this Tensor from the graph in place; it becomes a leaf."""
        if self._base is not None:
            raise RuntimeError(DETACH_VIEW)
        self._grad_fn = None
        self._out = 0
        self._requires_grad = False
        return self

    # -- conversions ------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def dtype(self) -> DType:
        """The dtype, printed as PyTorch's (``torch.float64``) and equal to NumPy's
        (``t.dtype == np.float64``); NumPy takes it as a dtype. See ``DType``."""
        return as_dtype(self._data.dtype)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def size(self, dim: int | None = None) -> Size | int:
        """The shape (PyTorch's ``size()``), or the length of dimension ``dim``."""
        return Size(self._data.shape) if dim is None else self._data.shape[dim]

    def numel(self) -> int:
        """The number of elements."""
        return self._data.size

    def item(self) -> float | int | bool:
        """The value of a one-element Tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        if self._requires_grad:
            _refuse_inside_a_function_with_a_rule()
        return self._data.item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self) -> np.ndarray:
        """The data as an ndarray, sharing memory (refused if the Tensor requires grad)."""
        if self._requires_grad or (self._base is not None and not self._nograd_view
                                   and self.requires_grad):
            _refuse_inside_a_function_with_a_rule()
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        return self._data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        data = self.numpy()
        if dtype is not None and data.dtype != dtype:
            return data.astype(dtype)
        return data.copy() if copy else data

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        return self._data.__index__()

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        node = self._grad_fn if self._nograd_view else self.grad_fn  # printing never refuses
        if node is not None:
            suffix = [f"grad_fn=<{node.name}>"]
        else:
            suffix = ["requires_grad=True"] if self._requires_grad else []
        return format_tensor(self._data, suffix)

    def __format__(self, spec: str) -> str:
        if not spec:
            return repr(self)
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo: dict) -> Tensor:
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment."
            )
        new = type(self).__new__(type(self))
        _init(new, self._data.copy(), None, 0, self._requires_grad, Version())
        if self._grad is not None:
            new._grad = _make(self._grad._data.copy())
        memo[id(self)] = new
        return new

    # -- operators (each one a compiled function when it needs a gradient; see ops.py) -------

    # Comparisons give bool Tensors, which never require grad.

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.getitem(self, index)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _ops.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        return _ops.numpy_call(func, args, kwargs)

    # -- in-place operations ----------------------------------------------------------------

    def add_(self, other: Any, alpha: float = 1) -> Tensor:
        """In place ``self += alpha * other``."""
        return _ops.inplace(self, "add", other if alpha == 1 else alpha * other)

    def sub_(self, other: Any, alpha: float = 1) -> Tensor:
        """In place ``self -= alpha * other``."""
        return _ops.inplace(self, "sub", other if alpha == 1 else alpha * other)

    def zero_(self) -> Tensor:
        """Fill with zeros in place (e.g. ``x.grad.zero_()``)."""
        return _ops.inplace(self, "fill", 0)

    def fill_(self, value: Any) -> Tensor:
        return _ops.inplace(self, "fill", value)

    def copy_(self, src: Any) -> Tensor:
        """Copy ``src`` into this Tensor in place (broadcasting), differentiably."""
        return _ops.inplace(self, "copy", src)

    def __setitem__(self, index: Any, value: Any) -> None:
        _ops.setitem(self, index, value)

    # -- methods that mirror PyTorch's (NumPy names work too: np.sum(t, axis=0)) -------------

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            axis: Any = None, keepdims: bool | None = None) -> Tensor:
        """Sum over ``dim`` (PyTorch's name) or ``axis`` (NumPy's); all axes by default.
        With ``dtype``, the Tensor is converted to it first (in the graph), as in PyTorch."""
        x = self if dtype is None else self.to(dtype)
        return _ops.reduction(np.sum, x, dim, keepdim, axis, keepdims)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
             axis: Any = None, keepdims: bool | None = None) -> Tensor:
        """Mean over ``dim`` / ``axis``; all axes by default; ``dtype`` as for ``sum``."""
        x = self if dtype is None else self.to(dtype)
        return _ops.reduction(np.mean, x, dim, keepdim, axis, keepdims)

    def prod(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.reduction(np.prod, self, dim, keepdim, None, None)

    def reshape(self, *shape: Any) -> Tensor:
        """A Tensor with the same data and a new shape: ``t.reshape(2, 3)`` or ``((2, 3))``."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return _ops.numpy_call(np.reshape, (self, tuple(shape)), {})

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """The dimensions ``start_dim`` to ``end_dim`` (both included) made one."""
        shape = self._data.shape
        if not shape:
            return self.reshape(1)
        start, end = start_dim % len(shape), end_dim % len(shape)
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after "
                               "end_dim")
        return self.reshape(*shape[:start], math.prod(shape[start:end + 1]), *shape[end + 1:])

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        """The dimension ``dim`` split into ``sizes`` (one of which may be -1)."""
        shape = self._data.shape
        dim = dim % max(len(shape), 1)
        return self.reshape(*shape[:dim], *sizes, *shape[dim + 1:])

    def view_as(self, other: Tensor) -> Tensor:
        """``self.view(other.shape)``."""
        return self.reshape(other._data.shape)

    def contiguous(self) -> Tensor:
        """``self``: its values are read the same whatever the layout of its memory."""
        return self

    def squeeze(self, dim: int | None = None) -> Tensor:
        return _ops.numpy_call(np.squeeze, (self,), {} if dim is None else {"axis": dim})

    def unsqueeze(self, dim: int) -> Tensor:
        return _ops.numpy_call(np.expand_dims, (self, dim), {})

    @property
    def T(self) -> Tensor:
        """The dimensions reversed, like ``ndarray.T``."""
        return _ops.numpy_call(np.transpose, (self,), {})

    def t(self) -> Tensor:
        return self.T

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions (PyTorch's meaning, not NumPy's)."""
        return _ops.numpy_call(np.swapaxes, (self, dim0, dim1), {})

    def permute(self, *dims: Any) -> Tensor:
        if len(dims) == 1 and not isinstance(dims[0], int):
            dims = tuple(dims[0])
        return _ops.numpy_call(np.transpose, (self, tuple(dims)), {})

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.numpy_call(np.clip, (self, min, max), {})

    # -- comparisons, tests, conversions -----------------------------------------------------

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """Whether every element (along ``dim``) is nonzero: a bool Tensor, no gradient."""
        return _make(np.asarray(np.all(self._data, axis=_axis(dim), keepdims=keepdim)))

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """Whether some element (along ``dim``) is nonzero: a bool Tensor, no gradient."""
        return _make(np.asarray(np.any(self._data, axis=_axis(dim), keepdims=keepdim)))

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """A Tensor of another dtype: ``t.to(np.float32)``, ``t.to("float64")``,
        ``t.to(other)`` (other's dtype). The device ``"cpu"`` changes nothing; another one
        raises RuntimeError. The result is ``self`` when the dtype is already right, else a
        copy that stays in the graph (when the new dtype is floating)."""
        dtype = kwargs.pop("dtype", None)
        if kwargs.get("device") is not None:
            check_device(kwargs["device"])
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg._data.dtype
            elif device_type(arg) is not None:
                check_device(arg)
            elif not isinstance(arg, bool):  # non_blocking, copy, given by position
                dtype = arg
        if dtype is None:
            return self
        dtype = _dtype(dtype)
        if dtype == self._data.dtype:
            return self
        if dtype.kind not in "fc":
            return _make(self._data.astype(dtype))
        return _ops.numpy_call(np.ndarray.astype, (self, dtype), {})

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """Without ``dtype``, PyTorch's name of this Tensor's type (``"torch.DoubleTensor"``);
        with one (a dtype, or such a name), ``self.to(dtype)``."""
        if dtype is None:
            return "torch." + _TYPE_NAMES[self._data.dtype]
        if isinstance(dtype, str) and dtype.removeprefix("torch.") in _TYPES_BY_NAME:
            dtype = _TYPES_BY_NAME[dtype.removeprefix("torch.")]
        return self.to(dtype)

    def type_as(self, other: Tensor) -> Tensor:
        """``self.to(other.dtype)``."""
        return self.to(other._data.dtype)

    # -- extrema ---------------------------------------------------------------------------

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """The index of the (first) largest element, of the flattened Tensor without ``dim``:
        int64, no gradient."""
        return _make(np.asarray(np.argmax(self._data, axis=dim, keepdims=keepdim),
                                dtype=np.int64))

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """The index of the (first) smallest element; as ``argmax``."""
        return _make(np.asarray(np.argmin(self._data, axis=dim, keepdims=keepdim),
                                dtype=np.int64))

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        """Without ``dim``, the largest element (its gradient shared evenly by ties); with
        ``dim``, ``(values, indices)`` along it (the gradient to the index returned); with a
        Tensor, the elementwise maximum."""
        return _extremum(self, dim, keepdim, np.max, np.argmax, np.maximum, ReturnMax)

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        """As ``max``, for the smallest."""
        return _extremum(self, dim, keepdim, np.min, np.argmin, np.minimum, ReturnMin)

    # -- normalisations, statistics ----------------------------------------------------------

    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        """``exp(t) / exp(t).sum(dim)``, computed after subtracting the maximum along ``dim``
        (a constant: softmax does not change when a constant is added along ``dim``)."""
        x = self if dtype is None else self.to(dtype)
        e = (x - np.max(x._data, axis=dim, keepdims=True)).exp()
        return e / e.sum(dim, keepdim=True)

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        """``t - log(exp(t).sum(dim))``, computed after subtracting the maximum along
        ``dim``."""
        x = self if dtype is None else self.to(dtype)
        shifted = x - np.max(x._data, axis=dim, keepdims=True)
        return shifted - shifted.exp().sum(dim, keepdim=True).log()

    def var(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        """The variance along ``dim`` (all elements by default), divided by ``N - correction``;
        ``unbiased=False`` is ``correction=0``. ``t.var(False)`` is ``t.var(unbiased=False)``."""
        return _spread(np.var, self, dim, unbiased, keepdim, correction)

    def std(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        """The square root of ``var`` with the same arguments."""
        return _spread(np.std, self, dim, unbiased, keepdim, correction)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
        """The ``p``-norm of the elements along ``dim`` (an int or a tuple; all by default),
        as one vector: ``"fro"`` is 2, ``inf`` the largest magnitude."""
        order = 2.0 if p in ("fro", None) else float(p)
        n = self._data.ndim
        dims = tuple(range(n)) if dim is None else (
            (dim,) if isinstance(dim, int) else tuple(dim))
        dims = tuple(sorted({d % n for d in dims})) if n else ()
        rest = [d for d in range(n) if d not in dims]
        kept = [self._data.shape[d] for d in rest]
        x = self.permute(*rest, *dims) if n else self
        result = _ops.numpy_call(np.linalg.norm, (x.reshape(*kept, -1),),
                                 {"ord": order, "axis": -1})
        if keepdim:
            result = result.reshape(*[1 if d in dims else self._data.shape[d]
                                      for d in range(n)])
        return result

    # -- shapes, selections ------------------------------------------------------------------

    def expand(self, *sizes: Any) -> Tensor:
        """A view repeating dimensions of size 1 (and adding leading ones) up to ``sizes``;
        -1 keeps a dimension's size."""
        if len(sizes) == 1 and not isinstance(sizes[0], int):
            sizes = tuple(sizes[0])
        lead = len(sizes) - self._data.ndim
        if lead < 0:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(sizes)}) must be greater or "
                f"equal to the number of dimensions in the tensor ({self._data.ndim})")
        shape = tuple(self._data.shape[i - lead] if s == -1 and i >= lead else s
                      for i, s in enumerate(sizes))
        if any(s < 0 for s in shape):
            raise RuntimeError(f"expand: -1 is not allowed for a new leading dimension: {sizes}")
        return _ops.numpy_call(np.broadcast_to, (self, shape), {})

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """A copy with ``value`` where ``mask`` (broadcast to this shape) is True; a Tensor
        ``value`` (0-d) gets the gradient of the filled elements."""
        mask = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
        if mask.dtype != np.bool_:
            raise RuntimeError(f"masked_fill only supports boolean masks, but got mask with "
                               f"dtype {mask.dtype}")
        if isinstance(value, Tensor):
            value = value.to(self._data.dtype)
        else:
            value = np.asarray(value, dtype=self._data.dtype)
        result = _ops.numpy_call(np.where, (mask, value, self), {})
        if result.shape != self.shape:
            raise RuntimeError(f"masked_fill: the mask of shape {tuple(mask.shape)} does not "
                               f"broadcast to the tensor's shape {tuple(self.shape)}")
        return result

    def where(self, condition: Any, other: Any) -> Tensor:
        """``self`` where ``condition`` is True, else ``other`` (broadcast together)."""
        condition = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
        return _ops.numpy_call(np.where, (condition.astype(bool), self, other), {})

    def gather(self, dim: int, index: Any) -> Tensor:
        """``out[i][j] = t[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims);
        ``index`` may be smaller than ``t`` along every dimension."""
        index = index._data if isinstance(index, Tensor) else np.asarray(index)
        if index.dtype.kind not in "iu":
            raise RuntimeError(f"gather(): Expected dtype int64 for index, got {index.dtype}")
        if index.ndim != self._data.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as "
                               "input tensor")
        dim = dim % max(self._data.ndim, 1)
        if self._data.ndim:
            window = tuple(slice(None) if d == dim else slice(0, index.shape[d])
                           for d in range(self._data.ndim))
            source = self[window] if any(
                index.shape[d] != self._data.shape[d] for d in range(self._data.ndim)
                if d != dim) else self
        else:
            source = self
        return _ops.numpy_call(np.take_along_axis, (source, index, dim), {})

    def select(self, dim: int, index: int) -> Tensor:
        """The slice at ``index`` along ``dim``, without that dimension (a view)."""
        return self[(slice(None),) * (dim % self._data.ndim) + (index,)]

    def index_select(self, dim: int, index: Any) -> Tensor:
        """The entries at the positions ``index`` (a vector of integers) along ``dim``."""
        index = _index_array(index)
        if index.ndim > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        if index.dtype.kind not in "iu":
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        return self[(slice(None),) * (dim % max(self._data.ndim, 1)) + (index.reshape(-1),)]

    def masked_select(self, mask: Any) -> Tensor:
        """The entries where ``mask`` (broadcast with this Tensor) is True, as a vector."""
        mask = _index_array(mask)
        if mask.dtype != np.bool_:
            raise RuntimeError(f"masked_select: expected BoolTensor for mask, got "
                               f"{dtype_name(mask.dtype)}")
        shape = np.broadcast_shapes(self._data.shape, mask.shape)
        x = self if self._data.shape == shape else self.expand(shape)
        return x[np.broadcast_to(mask, shape)]

    # -- more elementwise functions ----------------------------------------------------------

    def reciprocal(self) -> Tensor:
        """``1 / t``; integers give float64 (our default floating dtype)."""
        return _ops.numpy_call(np.reciprocal, (_floating(self),), {})

    # Piecewise constant: the gradient is zero, and the result still requires grad (its node
    # sends zeros back), as in PyTorch. Integers and bools are their own floor, ceil...

    def round(self, *, decimals: int = 0) -> Tensor:
        """Rounded half to even, to ``decimals`` decimal places."""
        return _stepwise(self, lambda a: np.round(a, decimals), "RoundBackward0")

    def sign(self) -> Tensor:
        """-1, 0 or 1; for integers, of their dtype."""
        if self._data.dtype.kind in "iu":
            return _make(np.sign(self._data))
        return _stepwise(self, np.sign, "SignBackward0")

    # -- cumulative functions, reorderings ---------------------------------------------------

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        """Running sums along ``dim`` (after converting to ``dtype``, if given)."""
        x = self if dtype is None else self.to(dtype)
        return _ops.numpy_call(np.cumsum, (x,), {"axis": dim})

    def cumprod(self, dim: int, *, dtype: Any = None) -> Tensor:
        """Running products along ``dim`` (after converting to ``dtype``, if given)."""
        x = self if dtype is None else self.to(dtype)
        return _ops.numpy_call(np.cumprod, (x,), {"axis": dim})

    def flip(self, *dims: Any) -> Tensor:
        """The order of the entries reversed along ``dims`` (``t.flip(0)``, ``t.flip([0,
        1])``, ``t.flip(0, 1)``); a copy, as in PyTorch."""
        axes = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], Sequence) else dims
        return _ops.numpy_call(np.flip, (self,), {"axis": tuple(axes)}).clone()

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        """The entries shifted by ``shifts`` along ``dims``, wrapping around; without
        ``dims``, those of the flattened Tensor (the shape is kept)."""
        kwargs = {} if dims is None else {"axis": _axis(dims)}
        return _ops.numpy_call(np.roll, (self, _axis(shifts)), kwargs)

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        """``(values, indices)`` sorted along ``dim``, NaN as the largest value. The sort is
        always stable (equal entries keep their order), which PyTorch gives with
        ``stable=True``. The gradient of ``values`` goes to the entries they were taken
        from."""
        indices = _sort_indices(self._data, dim, descending)
        return ReturnSort(_taken(self, indices, dim), _make(indices))

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) entries
        along ``dim``, in order; of equal entries, the first ones."""
        size = self._data.shape[dim] if self._data.ndim else 1
        if not 0 <= k <= size:
            raise RuntimeError("selected index k out of range")
        indices = _sort_indices(self._data, dim, largest)
        if self._data.ndim:
            indices = np.take(indices, np.arange(k), axis=dim)
        return ReturnTopk(_taken(self, indices, dim), _make(indices))

    # -- splitting, repeating ----------------------------------------------------------------

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """Views of consecutive pieces along ``dim``: of ``split_size`` entries each (the last
        one shorter), or of the sizes listed."""
        n = self._data.shape[dim]
        if isinstance(split_size_or_sections, Sequence):
            sizes = [operator.index(s) for s in split_size_or_sections]
            if sum(sizes) != n or any(s < 0 for s in sizes):
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                                   f"(input tensor's size at dimension {dim}), but got "
                                   f"split_sizes={sizes}")
        else:
            size = operator.index(split_size_or_sections)
            if size < 0:
                raise RuntimeError(f"split expects split_size be non-negative, but got "
                                   f"split_size={size}")
            if size == 0 and n:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                                   f"dimension size of {n}")
            sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
        lead = (slice(None),) * (dim % self._data.ndim)
        bounds = itertools.pairwise(itertools.accumulate(sizes, initial=0))
        return tuple(self[(*lead, slice(a, b))] for a, b in bounds)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """At most ``chunks`` views of equal size along ``dim`` (the last one may be shorter,
        and there are fewer when the size does not allow as many)."""
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = self._data.shape[dim]
        if n == 0:
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """The slices along ``dim``, each without that dimension (views)."""
        return tuple(self.select(dim, i) for i in range(self._data.shape[dim]))

    def repeat(self, *sizes: Any) -> Tensor:
        """The Tensor tiled ``sizes[d]`` times along each dimension ``d`` (new leading
        dimensions when ``sizes`` has more)."""
        reps = _shape(sizes)
        if len(reps) < self._data.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        return _ops.numpy_call(np.tile, (self, reps), {})

    def repeat_interleave(self, repeats: Any, dim: int | None = None, *,
                          output_size: int | None = None) -> Tensor:
        """Each entry repeated ``repeats`` times (or ``repeats[i]`` times for entry ``i``)
        along ``dim``; without ``dim``, those of the flattened Tensor."""
        if isinstance(repeats, Tensor):
            repeats = repeats._data
        return _ops.numpy_call(np.repeat, (self, repeats), {} if dim is None else {"axis": dim})

    # -- products, triangles -----------------------------------------------------------------

    def bmm(self, mat2: Tensor) -> Tensor:
        """Matrix products of the matching matrices of two batches ``(b, n, m)`` and
        ``(b, m, p)``."""
        for name, t in (("batch1", self), ("batch2", mat2)):
            if t.ndim != 3:
                raise RuntimeError(f"{name} must be a 3D tensor")
        b, _, m = self._data.shape
        if tuple(mat2.shape[:2]) != (b, m):
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{b}, {m}] but got: {list(mat2.shape[:2])}.")
        return _ops.binary("matmul", self, mat2, "BmmBackward0")

    def outer(self, vec2: Any) -> Tensor:
        """The matrix of products ``self[i] * vec2[j]`` of two vectors."""
        for name, t in (("self", self), ("vec2", vec2)):
            if np.ndim(t) != 1:
                raise RuntimeError(f"outer: Expected 1-D argument {name}, but got "
                                   f"{np.ndim(t)}-D")
        return _ops.numpy_call(np.outer, (self, vec2), {})

    def diag(self, diagonal: int = 0) -> Tensor:
        """Of a vector, the square matrix with it on the ``diagonal``-th diagonal; of a
        matrix, that diagonal as a vector (a copy)."""
        if self._data.ndim == 1:
            return _ops.numpy_call(np.diag, (self,), {"k": diagonal})
        if self._data.ndim != 2:
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self._data.ndim}D")
        rows, cols = self._data.shape
        start_row, start_col = max(-diagonal, 0), max(diagonal, 0)
        i = np.arange(max(0, min(rows - start_row, cols - start_col)))
        return self[i + start_row, i + start_col]

    def triu(self, diagonal: int = 0) -> Tensor:
        """The entries on and above the ``diagonal``-th diagonal of each matrix (the last
        two dimensions), zeros below."""
        return _triangle(self, np.triu, diagonal, "triu")

    def tril(self, diagonal: int = 0) -> Tensor:
        """The entries on and below the ``diagonal``-th diagonal, zeros above."""
        return _triangle(self, np.tril, diagonal, "tril")

    # -- reductions --------------------------------------------------------------------------

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Tensor:
        """``log(exp(t).sum(dim))``, computed after subtracting the maximum along ``dim``
        (a constant), so that large entries do not overflow."""
        x = _floating(self)
        axes = _axis(dim)
        top = np.max(x._data, axis=axes, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)  # all -inf (or inf): shift by nothing
        out = (x - top).exp().sum(axes, keepdim=True).log() + top
        return out if keepdim else out.squeeze(axes)

    def amax(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        """The largest entries along ``dim`` (all by default); the gradient is shared evenly
        by equal ones."""
        return _ops.reduction(np.amax, self, _all_if_empty(dim), keepdim, None, None)

    def amin(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        """The smallest entries along ``dim``; as ``amax``."""
        return _ops.reduction(np.amin, self, _all_if_empty(dim), keepdim, None, None)

    # -- new Tensors of this one's dtype -----------------------------------------------------

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        """Zeros of ``size``, of this Tensor's dtype unless told otherwise."""
        return _leaf(np.zeros(_shape(size), dtype=self._new_dtype(dtype)), requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _leaf(np.ones(_shape(size), dtype=self._new_dtype(dtype)), requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _leaf(np.empty(_shape(size), dtype=self._new_dtype(dtype)), requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None,
                 requires_grad: bool = False) -> Tensor:
        return _leaf(np.full(_shape((size,)), _number(fill_value),
                             dtype=self._new_dtype(dtype)), requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        """A new leaf holding a copy of ``data``, of this Tensor's dtype unless told
        otherwise."""
        return Tensor(data, requires_grad=requires_grad, dtype=self._new_dtype(dtype))

    def _new_dtype(self, dtype: Any) -> np.dtype:
        return self._data.dtype if dtype is None else _dtype(dtype)

    # -- in place, through the same operations -----------------------------------------------

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.apply_(self, lambda t: t.clamp(min, max))


methods.install(Tensor, globals())


class ReturnMax(NamedTuple):
    """``t.max(dim)``: the values and their indices along ``dim``."""
    values: Tensor
    indices: Tensor


class ReturnMin(NamedTuple):
    """``t.min(dim)``: the values and their indices along ``dim``."""
    values: Tensor
    indices: Tensor


class ReturnSort(NamedTuple):
    """``t.sort(dim)``: the sorted values and where they were along ``dim``."""
    values: Tensor
    indices: Tensor


class ReturnTopk(NamedTuple):
    """``t.topk(k, dim)``: the ``k`` values and where they were along ``dim``."""
    values: Tensor
    indices: Tensor


def _axis(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, list) else dim


def _extremum(t: Tensor, dim: Any, keepdim: bool, reduce: Any, arg: Any, pairwise: Any,
              result: Any) -> Any:
    if isinstance(dim, Tensor):
        return _ops.numpy_call(pairwise, (t, dim), {})
    if dim is None:
        return _ops.numpy_call(reduce, (t,), {})
    indices = np.expand_dims(arg(t._data, axis=dim), dim)
    values = _ops.numpy_call(np.take_along_axis, (t, indices, dim), {})
    if not keepdim:
        values = values.squeeze(dim)
        indices = np.squeeze(indices, dim)
    return result(values, _make(np.asarray(indices, dtype=np.int64)))


def _floating(t: Tensor) -> Tensor:
    """``t``, converted to float64 (our default) unless floating or complex already."""
    return t if t._data.dtype.kind in "fc" else t.to(np.float64)


def _stepwise(t: Tensor, func: Any, name: str) -> Tensor:
    """``func(t)`` for a piecewise-constant ``func``: its values, with a zero gradient to
    ``t`` (the node of ``np.where(False, t, values)``); integers and bools unchanged."""
    if t._data.dtype.kind not in "fc":
        return _make(t._data.copy())
    return _ops.binary("fill", t, func(t._data), name)


def _sort_indices(data: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """The int64 indices that sort ``data`` along ``dim``, stably (equal entries keep their
    order, descending too), NaN as the largest value."""
    if data.ndim == 0:
        return np.zeros((), dtype=np.int64)
    if not descending:
        return np.argsort(data, axis=dim, kind="stable").astype(np.int64)
    # sorting the reversed entries and reversing the result keeps equal ones in order
    reverse = np.argsort(np.flip(data, dim), axis=dim, kind="stable")
    return np.flip(data.shape[dim] - 1 - reverse, dim).astype(np.int64)


def _taken(t: Tensor, indices: np.ndarray, dim: int) -> Tensor:
    """The entries of ``t`` at ``indices`` along ``dim`` (differentiable)."""
    if t._data.ndim == 0:
        return t.clone()
    return _ops.numpy_call(np.take_along_axis, (t, indices, dim), {})


def _triangle(t: Tensor, func: Any, diagonal: int, name: str) -> Tensor:
    if t._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return _ops.numpy_call(func, (t,), {"k": diagonal})


def _all_if_empty(dim: Any) -> Any:
    """PyTorch's ``dim=()`` (all dimensions) as NumPy's ``axis=None``."""
    axes = _axis(dim)
    return None if isinstance(axes, tuple) and not axes else axes


def _index_array(index: Any) -> np.ndarray:
    return index._data if isinstance(index, Tensor) else np.asarray(index)


def _spread(func: Any, t: Tensor, dim: Any, unbiased: bool, keepdim: bool,
            correction: Any) -> Tensor:
    if isinstance(dim, bool):  # the old form t.var(unbiased)
        dim, unbiased = None, dim
    ddof = (1 if unbiased else 0) if correction is None else correction
    kwargs: dict[str, Any] = {"ddof": ddof}
    if dim is not None:
        kwargs["axis"] = _axis(dim)
    if keepdim:
        kwargs["keepdims"] = True
    return _ops.numpy_call(func, (t,), kwargs)


def _init(t: Tensor, data: np.ndarray, grad_fn: Any, out: int, requires_grad: bool,
          version: Version) -> None:
    t._data = data
    t._grad_fn = grad_fn
    t._base = t._seen = None
    t._nograd_view = False
    t._out = out
    t._requires_grad = requires_grad
    t._grad = None
    t._version = version
    t._retains = False


def _make(data: Any, grad_fn: Any = None, out: int = 0, version: Version | None = None) -> Tensor:
    """A Tensor around ``data`` without copying (the fast path used by the runtime)."""
    t = Tensor.__new__(Tensor)  # _init, inlined: this runs for every recorded operation
    t._data = data if type(data) is np.ndarray else np.asarray(data)
    t._grad_fn = grad_fn
    t._base = t._seen = None
    t._nograd_view = False
    t._out = out
    t._requires_grad = grad_fn is not None
    t._grad = None
    t._version = version or Version()
    t._retains = False
    return t


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A new leaf Tensor holding a copy of ``data``.

    Python floats become float64, ints int64. Only floating dtypes can require grad.
    float64 is our default dtype and prints as PyTorch prints its default (float32): with no
    ``dtype=`` suffix, so ``tensor([2.0])`` shows as ``tensor([2.])``.

    >>> x = tensor([2.0, 3.0], requires_grad=True)
    >>> x
    tensor([2., 3.], requires_grad=True)
    """
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def _leaf(data: np.ndarray, requires_grad: bool) -> Tensor:
    """A leaf Tensor around ``data``, not copied."""
    if data.dtype.kind not in _NUMERIC:
        raise TypeError(f"argument 'dtype' must be a numeric dtype, not {data.dtype}")
    if requires_grad and not _can_require_grad(data.dtype):
        raise RuntimeError(REQUIRES_FLOAT)
    t = _make(data)
    t._requires_grad = bool(requires_grad)
    return t


def _shape(size: tuple) -> tuple[int, ...]:
    """``(2, 3)`` from ``(2, 3)``, ``((2, 3),)`` or ``([2, 3],)`` (sizes written either way)."""
    if len(size) == 1 and isinstance(size[0], Sequence):
        size = tuple(size[0])
    return tuple(operator.index(n) for n in size)


def _number(value: Any) -> Any:
    return value.item() if isinstance(value, (Tensor, np.ndarray, np.generic)) else value
