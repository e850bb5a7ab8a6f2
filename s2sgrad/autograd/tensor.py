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
table in methods.py, which ``methods.install`` makes into methods of ``Tensor``. The methods of
one theme are Tensor's bases, each in a module of its own: shapes and layout (shaping.py),
reductions and statistics (reductions.py), selections by index and mask (indexing.py),
conversions and new Tensors of a Tensor's dtype (conversions.py). The class itself holds the
autograd state, the conversions to arrays and numbers, the operators' hooks, in-place changes,
and the methods of no theme.

In the Tensor layer, below graph.py and ops.py: of this layer, imports printing.py, dtypes.py,
methods.py and the modules of Tensor's bases only (and, of the compiler, the rule registry, to
name a function with a rule in an error). The operations on Tensors use the compiler and make
Tensors, so they live above this module, in ops.py and graph.py; ops.py hands them to it with
``bind_ops`` when it is imported. The bases' modules cannot import this one: ``bind_ops`` binds
the operations in them too, and this module binds in them the names of its own they read
(``Tensor``, ``_make``, ``_leaf``) once it has made them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import conversions, indexing, methods, reductions, shaping
from .conversions import Conversions, _floating, _number  # noqa: F401  (for creators.py)
from .dtypes import (  # noqa: F401  (imported from here: by s2sgrad, nn, creators.py)
    _NUMERIC,
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
from .indexing import Indexing
from .printing import format_tensor
from .reductions import Reductions
from .shaping import Shaping, _shape  # noqa: F401  (for creators.py)

# The operations on Tensors (ops.py, and graph.py's backward): set by ops.py when imported.
_ops: Any = None

# The modules of Tensor's bases, in which this module binds what they read of it and of ops.py.
_BASES = (conversions, indexing, reductions, shaping)


def bind_ops(ops: Any) -> None:
    """Route Tensor's operators, NumPy calls, in-place changes, view updates and backward()
    to ``ops``, which has a function of each name that Tensor calls."""
    global _ops
    _ops = ops
    _bind(_ops=ops)


def _bind(**names: Any) -> None:
    """Set ``names`` in the modules of Tensor's bases, each in those that read it (a module
    declares the names it reads, None until bound)."""
    for module in _BASES:
        for name, value in names.items():
            if name in vars(module):
                setattr(module, name, value)


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


class Tensor(Shaping, Reductions, Indexing, Conversions):
    """An ndarray that can take part in reverse-mode differentiation, PyTorch style.

    Create one with ``s2sgrad.tensor(data, requires_grad=...)``. Its methods of shape and
    layout, reductions, selections and conversions are those of its bases.
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

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.numpy_call(np.clip, (self, min, max), {})

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

    # -- products ----------------------------------------------------------------------------

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

    # -- in place, through the same operations -----------------------------------------------

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.apply_(self, lambda t: t.clamp(min, max))


methods.install(Tensor, globals())


def _stepwise(t: Tensor, func: Any, name: str) -> Tensor:
    """``func(t)`` for a piecewise-constant ``func``: its values, with a zero gradient to
    ``t`` (the node of ``np.where(False, t, values)``); integers and bools unchanged."""
    if t._data.dtype.kind not in "fc":
        return _make(t._data.copy())
    return _ops.binary("fill", t, func(t._data), name)


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


# The bases' modules read the class and its constructors as globals of their own.
_bind(Tensor=Tensor, _make=_make, _leaf=_leaf)
