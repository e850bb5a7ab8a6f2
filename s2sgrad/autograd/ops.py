"""Eager operations on Tensors: each one a tiny generated function through the compiler.

``x * y`` on Tensors calls ``def mul(x, y): return x * y``, wrapped by ``@grad`` like any user
function, so operators outside a compiled function use the same rule table and code generator
as the code inside one: there is one differentiation mechanism, not two. The generated
sources live in the compiler's fake file (``sourcefile.py``), where the compiler (and
tracebacks) can read them.

NumPy functions reach here through ``__array_function__`` / ``__array_ufunc__``:
``np.sum(t, axis=0)`` becomes ``def sum_(x0): return np.sum(x0, axis=0)``. Arguments that are
arrays or floats become parameters; the rest (axes, flags, shapes) are constants of the
generated function, one generated function per distinct layout, cached.

No text of a caller's value reaches the generated source: a constant that is a plain int, bool,
str or None (or a tuple, list or slice of them) is first rebuilt as that exact built-in type
(``IntEnum.ROWS`` -> ``0``) and written by the built-in ``repr`` of that type, so the compiler
still sees it as a literal (it folds ``axis is None``, checks ``ord=2``); any other constant (a
dtype, a class) is bound to a name in the generated function's own namespace. A ``DType``
(``t.dtype``, ``s2sgrad.float32``) reaches NumPy and the compiler as the NumPy dtype it stands
for.

Dispatch is one dict look-up for the generated function, then ``graph.call_function``, whose
own look-up of the compiled pair is one dict access keyed by argument kinds and ranks.

In the Tensor layer, above tensor.py and graph.py: imports them, grad_mode and the compiler
(``function``, ``rules``, ``sourcefile``). Tensor's methods reach this module through
``bind_ops`` (at the end), as tensor.py cannot import it.
"""

from __future__ import annotations

import inspect
import linecache
import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from .. import rules
from ..compiler import sourcefile
from ..compiler.function import Function
from . import grad_mode
from . import graph as _graph
from .tensor import LEAF_INPLACE, VIEW_OF_LEAF_INPLACE, DType, Tensor, _dtype, _make, bind_ops


class Op(Function):
    """A generated eager operation. The compiler reads its source from linecache when it
    specialises it, so the source file is registered again if something cleared the cache."""

    def compiled_for(self, wrt: tuple[int, ...], args: tuple, kwargs: dict | None = None):
        if sourcefile.FILENAME not in linecache.cache:
            sourcefile.register()
        return super().compiled_for(wrt, args, kwargs)


def define(name: str, params: list[str], expression: str, body: tuple[str, ...] = (),
           bindings: dict[str, Any] | None = None) -> Op:
    """Compile ``def name(params): [body] return expression`` into the source file, as a
    Function. ``bindings`` are the names, besides ``np``, that the source reads as globals:
    the generated function gets its own namespace holding them."""
    return Op(sourcefile.define(name, params, expression, body, bindings))


def _bound(value: Any, bindings: dict[str, Any]) -> str:
    """The text by which generated code calls the function ``value``: ``np.<name>`` for
    NumPy's own functions (the attribute is looked up, so the name is NumPy's), else a name
    added to ``bindings``."""
    name = getattr(value, "__name__", None)
    if isinstance(name, str):
        for module, prefix in ((np, "np."), (np.linalg, "np.linalg.")):
            if getattr(module, name, None) is value:
                return prefix + name
    bindings["function_"] = value
    return "function_"


# -- operators --------------------------------------------------------------------------------

_OPERATORS: dict[str, tuple[list[str], str]] = {
    "add": (["x", "y"], "x + y"),
    "sub": (["x", "y"], "x - y"),
    "mul": (["x", "y"], "x * y"),
    "truediv": (["x", "y"], "x / y"),
    "pow": (["x", "y"], "x ** y"),
    "matmul": (["x", "y"], "x @ y"),
    "mod": (["x", "y"], "x % y"),
    "neg": (["x"], "-x"),
    "pos": (["x"], "+x"),
    "relu": (["x"], "np.where(x > 0.0, x, 0.0)"),  # gradient 0 at 0, as in PyTorch
    # exp(-log(1 + exp(-x))): no overflow, and exact in both tails (through tanh it
    # rounded to 0 below about -37)
    "sigmoid": (["x"], "np.exp(-np.logaddexp(0.0, -x))"),
    "rsqrt": (["x"], "1.0 / np.sqrt(x)"),
    # A value replaced in place: the old value gets no gradient, the new one all of it.
    "fill": (["x", "y"], "np.where(False, x, y)"),
    "copy": (["x", "y"], "np.where(False, x, y)"),
}
_NAMES = {
    "add": "AddBackward0", "sub": "SubBackward0", "mul": "MulBackward0",
    "truediv": "DivBackward0", "mod": "RemainderBackward0", "neg": "NegBackward0",
    "pos": "PositiveBackward0", "relu": "ReluBackward0", "sigmoid": "SigmoidBackward0",
    "rsqrt": "RsqrtBackward0",
    "fill": "FillBackward0", "copy": "CopyBackwards",
}
_functions: dict[str, Op] = {}


def _operator(op: str) -> Op:
    function = _functions.get(op)
    if function is None:
        params, expression = _OPERATORS[op]
        function = _functions[op] = define(op, params, expression)
    return function


def _matmul_name(a: Any, b: Any) -> str:
    ranks = (np.ndim(_data(a)), np.ndim(_data(b)))
    return {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0"}.get(
        ranks, "MatmulBackward0")


def _binary_name(op: str, a: Any, b: Any) -> str:
    if op == "pow":
        if not isinstance(a, Tensor):
            return "PowBackward2"
        return "PowBackward1" if isinstance(b, Tensor) else "PowBackward0"
    if op == "matmul":
        return _matmul_name(a, b)
    if op == "sub" and not isinstance(a, Tensor):
        return "RsubBackward1"
    return _NAMES[op]


_OPERAND = (Tensor, np.ndarray, np.generic, float, int, bool, complex)
_FAST_OPERAND = frozenset([Tensor, np.ndarray, float, int])


def _operand(value: Any) -> Any:
    if type(value) in _FAST_OPERAND or isinstance(value, _OPERAND):
        return value
    if isinstance(value, (list, tuple)):
        return np.asarray(value)
    return None


def binary(op: str, a: Any, b: Any, name: str | None = None) -> Tensor:
    """``a <op> b`` where one of them is a Tensor."""
    a, b = _operand(a), _operand(b)
    if a is None or b is None:
        return NotImplemented
    return _graph.call_function(_operator(op), (a, b), {}, name or _binary_name(op, a, b))


def unary(op: str, x: Tensor) -> Tensor:
    return _graph.call_function(_operator(op), (x,), {}, _NAMES[op])


def plain(ufunc: Callable, a: Any, b: Any) -> Tensor:
    """A function with no gradient (comparisons): computed on the data, never recorded."""
    a, b = _operand(a), _operand(b)
    if a is None or b is None:
        return NotImplemented
    return _graph.wrap_plain(ufunc(_data(a), _data(b)))


def _data(value: Any) -> Any:
    return value._data if isinstance(value, Tensor) else value


def _wants_grad(t: Tensor) -> bool:
    """Whether ``t`` requires grad, or is a view whose base does (its history may have to be
    derived again from the base's: ``graph.call_function`` does that)."""
    return t._requires_grad or (t._base is not None and t._base._requires_grad)


# -- NumPy functions --------------------------------------------------------------------------

_FUNCTION_NAMES = {
    "add": "AddBackward0", "subtract": "SubBackward0", "multiply": "MulBackward0",
    "divide": "DivBackward0", "true_divide": "DivBackward0", "power": "PowBackward0",
    "negative": "NegBackward0", "absolute": "AbsBackward0", "square": "PowBackward0",
    "reshape": "ViewBackward0", "transpose": "PermuteBackward0",
    "swapaxes": "TransposeBackward0", "squeeze": "SqueezeBackward0",
    "expand_dims": "UnsqueezeBackward0", "concatenate": "CatBackward0",
    "stack": "StackBackward0", "clip": "ClampBackward1", "copy": "CloneBackward0",
    "arcsin": "AsinBackward0", "arccos": "AcosBackward0", "arctan": "AtanBackward0",
    "arctan2": "Atan2Backward0", "remainder": "RemainderBackward0",
}
# Reductions: PyTorch's name ends in 0 for all axes and in 1 for chosen axes (the reverse
# for max and min).
_REDUCTIONS = {"sum": "Sum", "mean": "Mean", "prod": "Prod", "var": "Var", "std": "Std",
               "max": "Max", "amax": "Max", "min": "Min", "amin": "Min"}
_numpy_functions: dict[tuple, Any] = {}


def _function_name(func: Any, args: tuple, kwargs: dict) -> str:
    name = getattr(func, "__name__", "function")
    if name in ("matmul", "dot") and len(args) == 2:
        return _matmul_name(*args)
    if name in _REDUCTIONS:
        has_axis = kwargs.get("axis") is not None or (len(args) > 1 and args[1] is not None)
        if name in ("max", "amax", "min", "amin"):
            has_axis = not has_axis
        return _REDUCTIONS[name] + ("Backward1" if has_axis else "Backward0")
    return _FUNCTION_NAMES.get(name) or (
        "".join(w.capitalize() for w in name.split("_")) + "Backward0")


_NOT_LITERAL = object()


def _plain(value: Any) -> Any:
    """``value`` rebuilt from exact built-in types (int, bool, str, None, and tuples, lists
    and slices of them), or _NOT_LITERAL. Subclasses become their base type, as NumPy reads
    them (an IntEnum axis is its integer); NumPy's integer, bool and str scalars too."""
    kind = type(value)
    if value is None or kind is int or kind is bool or kind is str:
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(operator.index(value))
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (tuple, list)):
        items = [_plain(v) for v in value]
        if any(v is _NOT_LITERAL for v in items):
            return _NOT_LITERAL
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, slice):
        parts = (_plain(value.start), _plain(value.stop), _plain(value.step))
        if any(p is not None and type(p) is not int for p in parts):
            return _NOT_LITERAL
        return slice(*parts)
    return _NOT_LITERAL


def _source(value: Any) -> str:
    """Python source for a value built by ``_plain``: exact built-in types only, written by
    their built-in ``repr``, never by a method of the caller's value."""
    kind = type(value)
    if value is None or kind is int or kind is bool or kind is str:
        return repr(value)
    if kind is tuple:
        items = [_source(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if kind is list:
        return "[" + ", ".join(_source(v) for v in value) + "]"
    if kind is slice:
        return f"slice({_source(value.start)}, {_source(value.stop)}, {_source(value.step)})"
    raise TypeError(f"internal error: {kind.__name__} is not a plain literal")


class _Layout:
    """The text of a call with its array arguments replaced by parameters x0, x1..., its
    plain constants written as literals and its other constants bound to names c0, c1...

    The text and ``bound`` identify the layout for the cache of generated functions: each
    bound constant counts by type and value (a dtype), or by identity when it cannot be
    hashed; the binding keeps it alive, so its identity is not reused.
    """

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.bindings: dict[str, Any] = {}
        self.bound: list[Any] = []  # the cache key of each bound constant
        self.grad = False  # whether a Tensor that requires grad is among the values

    def param(self, value: Any) -> str:
        if isinstance(value, Tensor) and _wants_grad(value):
            self.grad = True
        self.values.append(value)
        return f"x{len(self.values) - 1}"

    def bind(self, value: Any) -> str:
        name = f"c{len(self.bindings)}"
        self.bindings[name] = value
        try:
            hash(value)
            self.bound.append((type(value), value))
        except TypeError:
            self.bound.append((type(value), id(value)))
        return name

    def arg(self, value: Any, operand: bool) -> str:
        if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
            items = ", ".join(self.arg(v, True) for v in value)
            return f"[{items}]" if isinstance(value, list) else f"({items},)"
        if isinstance(value, DType):
            value = value.dtype
        if isinstance(value, (np.dtype, type)):
            return self.bind(value)
        if not operand:
            plain = _plain(value)
            if plain is not _NOT_LITERAL:
                return _source(plain)
        return self.param(value)


_SIMPLE = (Tensor, np.ndarray, float)  # arguments that are always parameters
_PLAIN = object()  # cache entry of a function that never records a node


def numpy_call(func: Any, args: tuple, kwargs: dict, operands: bool = False) -> Any:
    """``func(*args, **kwargs)`` with Tensors among the arguments (``__array_function__``).

    ``operands``: every argument is an operand (ufuncs), never a literal.
    """
    if not kwargs and all(isinstance(a, _SIMPLE) for a in args):
        key: tuple = (func, len(args))  # the common case: f(x), f(x, y), no literals
        values = args
        bindings: dict[str, Any] = {}
        grad = any(isinstance(a, Tensor) and _wants_grad(a) for a in args)
    else:
        layout = _Layout()
        parts = [layout.arg(a, operands) for a in args]
        parts += [f"{k}={layout.arg(v, operands)}" for k, v in kwargs.items()]
        key = (func, ", ".join(parts), tuple(layout.bound))
        values = tuple(layout.values)
        bindings = layout.bindings
        grad = layout.grad
    function = _numpy_functions.get(key) if grad and grad_mode._enabled.get() else _PLAIN
    if function is None:
        function = _numpy_functions[key] = _numpy_function(func, key[1], len(values), args,
                                                           kwargs, bindings)
    if function is _PLAIN:
        return _graph.wrap_plain(func(*_unwrap(args), **_unwrap(kwargs)), values, False)
    return _graph.call_function(function, values, {}, _function_name(func, args, kwargs))


def _numpy_function(func: Any, layout: int | str, n: int, args: tuple, kwargs: dict,
                    bindings: dict[str, Any]) -> Any:
    """The generated function for one layout of a call (``n`` parameters, and the text of the
    arguments unless they are just the parameters; ``bindings`` the constants it names), or
    _PLAIN if nothing is to be recorded."""
    if rules.is_nondifferentiable(func):
        return _PLAIN
    if _output_argument(func, args, kwargs) is not None:
        name = getattr(func, "__name__", "function")
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if rules.lookup(func) is None and not _floating(func(*_unwrap(args), **_unwrap(kwargs))):
        return _PLAIN  # np.shape, np.allclose...: no rule needed, nothing to differentiate
    params = [f"x{i}" for i in range(n)]
    bindings = dict(bindings)
    text = f"{_bound(func, bindings)}({', '.join(params) if isinstance(layout, int) else layout})"
    name = sourcefile.identifier(getattr(func, "__name__", None), "function")
    return define(name, params, text, (), bindings)


def _output_argument(func: Any, args: tuple, kwargs: dict) -> Any:
    """The array a call writes its result into (``out=``, or that position), or None."""
    if kwargs.get("out") is not None:
        return kwargs["out"]
    try:
        bound = inspect.signature(func).bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    return bound.arguments.get("out")


def _floating(result: Any) -> bool:
    if isinstance(result, tuple):
        return any(_floating(r) for r in result)
    return isinstance(result, (np.ndarray, np.generic, float)) and np.asarray(
        result).dtype.kind in "fc"


def _unwrap(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, DType):
        return value.dtype
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """NumPy ufuncs on Tensors: ``np.tanh(t)``, ``ndarray * t``, ``np.add(t, 1, out=t)``,
    ``np.add(t, 1, dtype=np.float32)``."""
    out = kwargs.pop("out", None)
    if isinstance(kwargs.get("dtype"), DType):
        kwargs["dtype"] = kwargs["dtype"].dtype
    if method == "__call__" and kwargs.get("dtype") is not None:
        inputs = _cast_operands(ufunc, inputs, kwargs)
    if method != "__call__":
        if any(isinstance(a, Tensor) and _wants_grad(a) for a in inputs) and \
                grad_mode._enabled.get():
            raise TypeError(
                f"np.{ufunc.__name__}.{method} is not differentiable on Tensors; use the "
                f"matching function (np.sum for np.add.reduce, np.cumsum for np.add.accumulate)"
            )
        return _graph.wrap_plain(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)),
                          numbers=False)
    if ufunc is np.matmul and not kwargs:
        result = binary("matmul", *inputs)
    else:
        result = numpy_call(ufunc, inputs, kwargs, operands=True)
    if out is None:
        return result
    if len(out) != 1 or not isinstance(out[0], Tensor):
        if isinstance(result, Tensor) and result._requires_grad:
            raise RuntimeError(
                f"np.{ufunc.__name__}(..., out=ndarray) would drop the gradient of a Tensor "
                "that requires grad; assign to a Tensor, or detach() the inputs"
            )
        np.copyto(out[0], _data(result))
        return out[0]
    return inplace(out[0], "copy", result)


def _cast_operands(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> tuple:
    """The operands of ``ufunc(*inputs, dtype=d)`` cast to ``d`` (a Tensor in the graph),
    ``dtype`` taken out of ``kwargs``: NumPy computes such a call in ``d``, and the
    derivative rules take no ``dtype``. An operand that the call's ``casting`` rule does not
    let become ``d`` raises NumPy's own error."""
    dtype = _dtype(kwargs.pop("dtype"))
    casting = kwargs.get("casting", "same_kind")
    if not all(np.can_cast(np.result_type(_data(a)), dtype, casting) for a in inputs):
        ufunc(*_unwrap(inputs), dtype=dtype, **kwargs)  # raises NumPy's error
    return tuple(a.to(dtype) if isinstance(a, Tensor) else np.asarray(a, dtype=dtype)
                 for a in inputs)


# -- indexing, reductions ---------------------------------------------------------------------

def _index(index: Any) -> Any:
    if isinstance(index, Tensor):
        return index._data
    if isinstance(index, tuple):
        return tuple(_index(i) for i in index)
    return index


def _index_name(index: Any) -> str:
    parts = index if isinstance(index, tuple) else (index,)
    if all(isinstance(p, (int, np.integer)) or p is Ellipsis for p in parts):
        return "SelectBackward0"
    if any(isinstance(p, (list, np.ndarray)) for p in parts):
        return "IndexBackward0"
    return "SelectBackward0" if any(isinstance(p, (int, np.integer)) for p in parts) \
        else "SliceBackward0"


def getitem(t: Tensor, index: Any) -> Tensor:
    index = _index(index)
    name = _index_name(index)
    function = _getitem_function()
    if name == "SelectBackward0":
        # One element: x[i, j, ...] is a 0-d view of it (x[i, j] would be a copy of it), as
        # PyTorch's t[i, j] is a view.
        if type(index) is tuple:
            if len(index) == t._data.ndim and not any(p is Ellipsis or isinstance(p, bool)
                                                      for p in index):
                index = (*index, Ellipsis)
        elif t._data.ndim == 1 and isinstance(index, (int, np.integer)) and \
                not isinstance(index, bool):
            function = _functions.get("select")
            if function is None:
                function = _functions["select"] = define("select", ["x", "index"],
                                                         "x[index, ...]")
    return _graph.call_function(function, (t, index), {}, name)


def reduction(func: Any, t: Tensor, dim: Any, keepdim: bool, axis: Any,
              keepdims: bool | None) -> Tensor:
    """``t.sum(dim, keepdim)`` with PyTorch's or NumPy's argument names."""
    axis = dim if axis is None else axis
    keepdims = keepdim if keepdims is None else keepdims
    if isinstance(axis, list):
        axis = tuple(axis)
    kwargs: dict[str, Any] = {}
    if axis is not None:
        kwargs["axis"] = axis
    if keepdims:
        kwargs["keepdims"] = True
    return numpy_call(func, (t,), kwargs)


# -- in-place operations ----------------------------------------------------------------------

_INPLACE = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
            "pow": np.power}


def _tracked(t: Tensor, other: Any) -> bool:
    """Whether an in-place change of ``t`` by ``other`` is recorded (views made current)."""
    if not grad_mode._enabled.get():
        return False
    if t._base is not None:
        sync(t)
    if isinstance(other, Tensor):
        if other._base is not None:
            sync(other)
        if other._requires_grad:
            return True
    return t._requires_grad


def inplace(t: Tensor, op: str, other: Any) -> Tensor:
    """``t <op>= other`` in place: same Tensor, same memory, version bumped.

    When the change must be recorded (grad mode on and a Tensor that requires grad involved),
    the operation runs out of place on a copy of ``t``'s old value, and ``t`` takes the result
    and its node, as PyTorch rebases a Tensor changed in place (through its base when ``t`` is
    a view: see ``_commit``). A leaf that requires grad, or a view of one, cannot be changed in
    place while grad mode is on.
    """
    if not _tracked(t, other):
        value = _data(other)
        if op in ("fill", "copy"):
            np.copyto(t._data, value)
        else:
            _INPLACE[op](t._data, value, out=t._data)
        t._version.value += 1
        return t
    _check_writable(t)
    old = _make(t._data.copy(), t._grad_fn, t._out)  # the forward may save the old value
    old._requires_grad = t._requires_grad
    result = binary(op, old, other, None if op in _INPLACE else _NAMES[op])
    if result is NotImplemented:
        raise TypeError(f"unsupported operand for in-place {op}: {type(other).__name__}")
    _commit(t, result)
    return t


def apply_(t: Tensor, compute: Callable[[Tensor], Tensor]) -> Tensor:
    """``t`` replaced in place by ``compute(t)`` (``t.exp_()``, ``t.clamp_(0, 1)``): same
    Tensor, same memory, version bumped. Recorded as ``inplace`` records, with ``t``'s old
    value as the input of ``compute`` and ``t`` taking the result's history."""
    if not _tracked(t, None):
        np.copyto(t._data, compute(_make(t._data))._data)
        t._version.value += 1
        return t
    _check_writable(t)
    old = _make(t._data.copy(), t._grad_fn, t._out)
    old._requires_grad = t._requires_grad
    _commit(t, compute(old))
    return t


def setitem(t: Tensor, index: Any, value: Any) -> None:
    """``t[index] = value``, in place."""
    index = _index(index)
    if not _tracked(t, value):
        t._data[index] = _data(value)
        t._version.value += 1
        return
    _check_writable(t)
    # Recorded like PyTorch's CopySlices: the write runs, compiled, on a copy of t's old
    # value, and t takes the result and its node.
    old = _make(t._data.copy(), t._grad_fn, t._out)
    old._requires_grad = t._requires_grad
    name = "IndexPutBackward0" if _index_name(index) == "IndexBackward0" else "CopySlices"
    _commit(t, _graph.call_function(_setitem_function(), (old, index, value), {}, name))


def _setitem_function() -> Op:
    function = _functions.get("setitem")
    if function is None:
        function = _functions["setitem"] = define(
            "setitem", ["x", "index", "value"], "y", ("y = x.copy()", "y[index] = value"))
    return function


def _getitem_function() -> Op:
    function = _functions.get("getitem")
    if function is None:
        function = _functions["getitem"] = define("getitem", ["x", "index"], "x[index]")
    return function


def _check_writable(t: Tensor) -> None:
    """Refuse, as PyTorch does, a recorded in-place change that would lose a gradient."""
    if t._grad_fn is None and t._requires_grad:
        raise RuntimeError(LEAF_INPLACE)
    base = t._base
    if base is not None:
        if t._nograd_view:
            raise RuntimeError(NOGRAD_VIEW_INPLACE)
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError(VIEW_OF_LEAF_INPLACE)


def _commit(t: Tensor, result: Tensor) -> None:
    """Make ``t`` hold ``result``'s value and history, after a recorded in-place change.

    When ``t`` views a base, the base's history is rewritten as PyTorch's ``CopySlices``
    does: the base's old value with ``t``'s elements replaced by ``result``; and ``t``'s
    history becomes the gather of those elements from the base's new history. The base's
    other views see that the base's history changed and derive theirs again (``sync``).
    """
    base = t._base
    if base is not None and not np.may_share_memory(base._data, t._data):
        t._base = t._seen = base = None  # its .data was replaced: no longer a view
    if base is None:
        np.copyto(t._data, result._data)
        t._version.value += 1
        _take_history(t, result)
        return
    index = _view_index(base, t)
    old = _make(base._data.copy(), base._grad_fn, base._out)
    old._requires_grad = base._requires_grad
    np.copyto(t._data, result._data)
    t._version.value += 1
    if index is None:  # a 0-d base: its one element is the view's
        written = numpy_call(np.reshape, (result, ()), {})
    else:
        written = _graph.call_function(_setitem_function(), (old, index, result), {},
                                       "CopySlices")
    _take_history(base, written)
    _derive(t, base, index)


def _take_history(t: Tensor, result: Tensor) -> None:
    t._grad_fn, t._out, t._requires_grad = result._grad_fn, result._out, result._requires_grad
    if t._retains and t._grad_fn is not None:
        t._grad_fn.retain(t._out, t)


# -- views ------------------------------------------------------------------------------------

NOGRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked)."
)
NOGRAD_VIEW_STALE = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked)."
)
UNMAPPED_VIEW = (
    "an in-place change reaches a Tensor through a view whose elements cannot be located in "
    "its base's memory (a view that reinterprets the dtype or repeats elements); its gradient "
    "cannot be derived. Change a copy (t.clone()) instead."
)


def sync(t: Tensor) -> None:
    """Derive again the history of the view ``t`` if its base's history changed since.

    A view's value is always a gather of its base's elements, so the gather of the base's
    current history is right for it; a view made with grad mode off has no history to derive,
    and its use after a recorded change of its base is refused, as PyTorch refuses it.
    """
    base = t._base
    if base._grad_fn is t._seen:
        return
    if t._nograd_view:
        raise RuntimeError(NOGRAD_VIEW_STALE)
    if not np.may_share_memory(base._data, t._data):  # the base's .data was replaced
        t._base = t._seen = None
        return
    _derive(t, base, _view_index(base, t))


def _derive(t: Tensor, base: Tensor, index: tuple | None) -> None:
    """Make ``t``'s history the gather of its elements (``index``) from ``base``'s."""
    t._seen = base._grad_fn
    if not base._requires_grad:
        t._grad_fn, t._out, t._requires_grad = None, 0, False
        return
    # A stand-in for the base with a version counter of its own: the gather needs only the
    # base's shape, so later changes of the base must not make it refuse to run backwards.
    source = _make(base._data, base._grad_fn, base._out)
    source._requires_grad = True
    token = grad_mode._enabled.set(True)
    try:
        if index is None:
            view = numpy_call(np.reshape, (source, t._data.shape), {})
        else:
            view = _graph.call_function(_getitem_function(), (source, index), {},
                                        "AsStridedBackward0")
    finally:
        grad_mode._enabled.reset(token)
    _take_history(t, view)


def _view_index(base: Tensor, t: Tensor) -> tuple | None:
    """An index that gathers ``t``'s elements from ``base``: integer arrays, one per axis;
    None for a 0-d base (``t`` then holds its one element)."""
    positions = positions_in(base._data, t._data)
    if positions is None:
        raise RuntimeError(UNMAPPED_VIEW)
    if base._data.ndim == 0:
        return None
    return np.unravel_index(positions, base._data.shape)


def _offsets(a: np.ndarray) -> np.ndarray:
    """The byte offset of each element of ``a`` from its first element's address."""
    offsets = np.zeros((), dtype=np.intp)
    for n, stride in zip(a.shape, a.strides, strict=True):
        offsets = np.add.outer(offsets, np.arange(n, dtype=np.intp) * stride)
    return offsets


def positions_in(base: np.ndarray, view: np.ndarray) -> np.ndarray | None:
    """For each element of ``view``, the flat (C order) position in ``base`` of the element at
    the same address; None when ``view`` is not made of ``base``'s elements."""
    if view.dtype != base.dtype:
        return None
    if view.size == 0:
        return np.zeros(view.shape, dtype=np.intp)
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    wanted = start + _offsets(view)
    if base.flags.c_contiguous:
        item = base.itemsize
        positions, rest = np.divmod(wanted, item)
        if rest.any() or positions.min() < 0 or positions.max() >= base.size:
            return None
        return positions
    offsets = np.ravel(_offsets(base))
    order = np.argsort(offsets, kind="stable")
    ordered = offsets[order]
    if ordered.size > 1 and not np.all(ordered[1:] != ordered[:-1]):
        return None  # the base repeats an element (a broadcast)
    k = np.minimum(np.searchsorted(ordered, wanted), ordered.size - 1)
    if not np.array_equal(ordered[k], wanted):
        return None
    return order[k]


# Tensor's methods call these; tensor.py sits below this module, which hands them to it here.
bind_ops(SimpleNamespace(
    apply_=apply_, array_ufunc=array_ufunc, backward=_graph.backward, binary=binary,
    getitem=getitem, inplace=inplace, numpy_call=numpy_call, plain=plain, reduction=reduction,
    setitem=setitem, sync=sync, unary=unary))
