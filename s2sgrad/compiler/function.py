"""The compiled-function object: ``Function`` (what ``@s2sgrad.grad`` returns) and the
specialiser that finds, or compiles once, the forward/backward pair for a call.

The look-up on the hot path is one dict access keyed by the arguments' types, ranks and
dtypes. Called with plain values a Function runs the original function; called with
Tensors it hands the call to the Tensor layer, which sits above the compiler and registers
its Tensor type and that call here (``register_tensor_call``).

Part of the compiler layer: imports the compiler's modules, never the Tensor layer or api.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import types
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import TransformError, note_generated
from ..rules import registry
from . import codegen
from . import parse as parse_module
from .analyze import UNKNOWN_ARRAY, abstract_of
from .compiled import state_of, store_on
from .derivatives import Derivative
from .higher import stand_in_of
from .parse import parse, unwrap
from .pipeline import Compiled, compile_jvp, compile_vjp
from .sourcefile import forwarding
from .validity import unchanged


def _fast_key(args: tuple, kwargs: dict, strings: bool = False) -> tuple:
    """What a compiled pair is specialised on, quickly: shapes and dtypes of arrays, types
    of numbers, abstract values of the rest. A string counts by its type only, unless
    ``strings``: most code does not depend on a string's value (a label, a mode compared at
    run time), and the pairs that do are looked up again with it (see BY_STRING_VALUE)."""
    key = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key.append((a.shape, a.dtype.char))
        elif t is float or t is int or t is bool:
            key.append(t)
        elif t is str:
            key.append((str, a) if strings else str)
        elif (t is list or t is tuple) and a:
            kinds = set(map(type, a))  # a list of floats, or of arrays: without abstract_of
            if kinds == {float}:
                key.append((t, len(a)))
            elif kinds == {np.ndarray}:
                key.append((t, *((v.shape, v.dtype.char) for v in a)))
            else:
                key.append(abstract_of(a))
        else:
            key.append(abstract_of(a))
    if kwargs:
        key.append(tuple((k, (str, v) if strings else str) if type(v) is str else (
            k, abstract_of(v)) for k, v in sorted(kwargs.items())))
    return tuple(key)


# What the source of a code object reads (parse.implicit_paths), for the closures made by
# one def: names only, so an entry lives as long as its code object.
_paths_read: weakref.WeakKeyDictionary[types.CodeType, list] = weakref.WeakKeyDictionary()


# In a _Specialiser's cache under a key with strings by type: the pairs of these arguments
# depend on the strings' values, and are under the key with strings by value.
BY_STRING_VALUE = object()


class _Specialiser:
    """Finds the compiled pair for a call: a fast key in front of the compiler's cache."""

    def __init__(self, fn: Callable):
        self.fn = unwrap(fn)
        # a function without source: a library function with a rule, or a partial, is
        # compiled as its stand-in; anything else is refused
        self.stand_in = None if inspect.isfunction(self.fn) or isinstance(
            self.fn, Derivative) else stand_in_of(self.fn)
        self.signature = self.signature_now()
        self.params = [p.name for p in self.signature.parameters.values()
                       if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.star = next((p.name for p in self.signature.parameters.values()
                          if p.kind == p.VAR_POSITIONAL), None)
        self.cache: dict[tuple, Compiled] = {}
        self.last: Compiled | None = None
        self._paths: list[tuple[str, ...]] | None = None
        self.owners: weakref.WeakSet = weakref.WeakSet()  # the @grad Functions of fn
        self._forwarded: tuple[Any, Callable] | None = None

    @property
    def name(self) -> str:
        """The function's name (a partial's: its function's)."""
        fn = self.fn.func if isinstance(self.fn, functools.partial) else self.fn
        return getattr(fn, "__name__", "function")

    def signature_now(self) -> inspect.Signature:
        """The signature of the function (its defaults may have been rebound), or of its
        stand-in."""
        return inspect.signature(self.stand_in or self.fn, follow_wrapped=False)

    def target(self) -> Callable:
        """What the compiler reads: the function itself, or, when a derivative rule is
        registered for it (or for a ``@grad`` Function of it), a function whose one
        operation is a call of it, which the compiler differentiates with that rule; for
        a function without source, its stand-in."""
        if self.stand_in is not None:
            return self.stand_in
        rule = registry.lookup(self.fn)
        for owner in () if rule is not None else list(self.owners):
            rule = registry.lookup(owner)
            if rule is not None:
                break
        if rule is None:
            return self.fn
        if self._forwarded is None or self._forwarded[0] is not rule:
            self._forwarded = (rule, forwarding(rule.primitive, self.signature))
        return self._forwarded[1]

    def compiled(self, wrt: tuple[int, ...], args: tuple, kwargs: dict,
                 lifted: dict[str, str] | None = None, lifted_wrt: tuple[str, ...] = (),
                 mode: str = "vjp") -> Compiled:
        """``lifted`` maps paths the function reads (``'self.W'``) to the keyword-only
        parameters that replace them; their values are in ``kwargs``, and ``lifted_wrt``
        names those to differentiate. ``mode`` "jvp" gives the tangent function
        (a ``CompiledJvp``) instead of the forward/backward pair, "tangent" one that
        returns the tangent alone."""
        extra = (tuple(lifted.items()), lifted_wrt) if lifted else ()
        if mode != "vjp":
            extra += (mode,)
        key = (wrt, _fast_key(args, kwargs)) + extra
        found = self.cache.get(key)
        by_type = found is not BY_STRING_VALUE
        if not by_type:
            key = (wrt, _fast_key(args, kwargs, strings=True)) + extra
            found = self.cache.get(key)
        if found is not None and not unchanged(found):
            found = None  # a function it calls was redefined: compile again
        if found is None:
            if len(self.cache) > 4096:  # many distinct shapes: keep the look-up table small
                self.cache.clear()
            found = self._compile(wrt, args, kwargs, lifted or {}, lifted_wrt, mode)
            if found.by_string_value and by_type:
                self.cache[key] = BY_STRING_VALUE
                key = (wrt, _fast_key(args, kwargs, strings=True)) + extra
            self.cache[key] = found
        if mode == "vjp":  # what forward_source and adjoint_source show
            self.last = found
        return found

    def by_position(self, grads: tuple, positions: tuple[int, ...], nargs: int) -> tuple:
        """The backward's cotangents (one per differentiated parameter, the ``*args`` tuple
        as one) as one per differentiated position."""
        names: list[str] = []
        out = []
        for i in positions:
            i %= nargs
            param = self.params[i] if i < len(self.params) else self.star
            if param not in names:
                names.append(param)
            g = grads[names.index(param)]
            out.append(g if i < len(self.params) else g[i - len(self.params)])
        return tuple(out)

    def implicit(self, args: tuple, tensor: type) -> dict[str, Any]:
        """The Tensors the function reads other than through its arguments: ``self.W``
        (an attribute chain from an argument) or a global or closure variable. Maps each
        path to its Tensor."""
        if self._paths is None:
            # a function with a rule reads nothing the rule does not name
            self._paths = self._implicit_paths() if self.target() is self.fn and not \
                isinstance(self.fn, Derivative) else []
        if not self._paths:
            return {}
        found: dict[str, Any] = {}
        closure = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or (),
                           strict=True))
        for path in self._paths:
            root = path[0]
            if root in self.params:
                position = self.params.index(root)
                if position >= len(args):
                    continue
                value, first = args[position], 1
            else:
                cell = closure.get(root)
                value = cell.cell_contents if cell is not None else self.fn.__globals__.get(root)
                first = 0
            if first == 0 and isinstance(value, tensor):
                found[root] = value
                continue
            for k in range(first, len(path)):
                if value is None or isinstance(value, (int, float, str, np.ndarray, tensor)):
                    break
                value = getattr(value, path[k], None)
                if isinstance(value, tensor):
                    found[".".join(path[:k + 1])] = value
                    break
        return found

    def _implicit_paths(self) -> list[tuple[str, ...]]:
        """The paths worth looking at on each call: attribute chains from parameters, and
        outside names that do not hold a module, a class or a function."""
        paths = _paths_read.get(self.fn.__code__)
        if paths is None:
            try:
                paths = parse_module.implicit_paths(self.fn)
            except TransformError:  # no source: nothing to lift (a gradient would say why)
                paths = []
            _paths_read[self.fn.__code__] = paths
        keep = []
        for path in paths:
            if path[0] not in self.params:
                value = self.fn.__globals__.get(path[0], getattr(builtins, path[0], None))
                if callable(value) or isinstance(value, types.ModuleType):
                    continue
            keep.append(path)
        return keep

    def lifted_names(self, paths: Sequence[str]) -> dict[str, str]:
        """Parameter names for lifted paths: 'self.W' -> 'self_W' (not clashing)."""
        code = self.fn.__code__
        taken = set(self.signature.parameters) | set(code.co_varnames) | set(
            code.co_names) - set(paths)  # a lifted global keeps its own name
        names = {}
        for path in paths:
            name = path.replace(".", "_")
            while name in taken:
                name += "_"
            taken.add(name)
            names[path] = name
        return names

    def _compile(self, wrt: tuple[int, ...], args: tuple, kwargs: dict,
                 lifted: dict[str, str] | None = None, lifted_wrt: tuple[str, ...] = (),
                 mode: str = "vjp") -> Compiled:
        name = getattr(self.fn, "__qualname__", "function")
        lifted = lifted or {}
        extra = {k: kwargs[k] for k in lifted.values() if k in kwargs}
        kwargs = {k: v for k, v in kwargs.items() if k not in extra}
        try:  # the signature now: the defaults may have been rebound since
            bound = self.signature_now().bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{name}(): {exc}") from None
        bound.apply_defaults()
        names = []
        for i in wrt:
            if not -len(args) <= i < len(args):
                raise ValueError(f"wrt={i} is out of range: {name}() was called with "
                                 f"{len(args)} positional arguments")
            i %= len(args)
            if i >= len(self.params) and self.star is None:
                raise ValueError(f"wrt={i}: {name}() takes only {len(self.params)} named "
                                 "positional parameters")
            param = self.params[i] if i < len(self.params) else self.star
            _check_differentiable(name, i, param, args[i])
            if param not in names:  # values received by *args: the tuple is differentiated
                names.append(param)
        signature = {k: abstract_of(v) for k, v in bound.arguments.items()}
        signature.update({k: abstract_of(v) for k, v in extra.items()})
        if mode in ("jvp", "tangent", "batched"):  # the tangent function; "tangent": out_dot
            # alone; "batched": out_dot alone, for a leading axis of directions
            return compile_jvp(self.target(), tuple(names), signature,
                               "both" if mode == "jvp" else "tangent", batched=mode == "batched")
        return compile_vjp(self.target(), tuple(names) + tuple(lifted_wrt), signature,
                           lifted=lifted)

    def default(self) -> Compiled:
        """The pair with respect to every parameter, for arrays of unknown rank."""
        if self.last is None:
            signature = {p: UNKNOWN_ARRAY for p in self.signature.parameters}
            self.last = compile_vjp(self.target(), tuple(self.params), signature)
        return self.last


def _leaves(value: Any, path: str) -> list:
    """(path, leaf) of a structure of parameters: ``d['w']``, ``params[0]``."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}[{k!r}]")]
    if isinstance(value, (list, tuple)):
        return [leaf for k, v in enumerate(value) for leaf in _leaves(v, f"{path}[{k}]")]
    return [(path, value)]


def _check_differentiable(fname: str, i: int, param: str, value: Any) -> None:
    if isinstance(value, dict) and not all(isinstance(k, str) for k in value):
        raise TypeError(f"{fname}(): argument {i} ('{param}') is a dict with keys that are not "
                        "strings; a differentiated dict is keyed by names. Use string keys, "
                        "or a list.")
    if isinstance(value, (dict, list, tuple)):  # a structure of parameters
        for path, leaf in _leaves(value, param):
            _check_leaf(fname, i, param, path, leaf)
        return
    _check_leaf(fname, i, param, param, value)


def _check_leaf(fname: str, i: int, param: str, path: str, value: Any) -> None:
    where = f"argument {i} ('{param}')" + (f" holds at {path}" if path != param else " is")
    kind = abstract_of(value)
    if kind.kind in ("scalar", "array") and kind.float:  # real or complex (rules/registry.py)
        return
    if kind.kind in ("scalar", "array"):
        dtype = np.asarray(value).dtype
        raise TypeError(
            f"{fname}(): {where} an integer or boolean value ({dtype}); only floating-point "
            f"inputs can be differentiated. Pass a float instead, e.g. "
            f"np.asarray({path}, dtype=float).")
    hint = "" if path == param else (" Pass it as an argument of its own, and differentiate "
                                     "with respect to the others (wrt=...).")
    raise TypeError(f"{fname}(): {where} a {type(value).__name__}; only floats and "
                    f"floating-point NumPy arrays can be differentiated here.{hint}")


def specialiser(fn: Callable) -> _Specialiser:
    """The one specialiser of ``fn``, shared by the transforms and ``@grad`` Functions of it.
    It is kept on the function (``compiled.state_of``), and freed with it."""
    if isinstance(fn, Function):
        return fn._spec
    raw = unwrap(fn)
    state = state_of(raw)
    if state.spec is None:
        state.spec = _Specialiser(raw)
    return state.spec


# Set by the Tensor layer: its Tensor type, and the function that runs a Function on
# arguments of which some are Tensors (recording the graph for backward()).
_tensor: type | tuple = ()
_tensor_call: Callable[[Function, tuple, dict], Any] | None = None


def register_tensor_call(tensor: type, call: Callable[[Function, tuple, dict], Any]) -> None:
    """Make a Function called with a ``tensor`` (an argument, a keyword argument, or one it
    reads through an argument's attributes or a global) return ``call(function, args,
    kwargs)``."""
    global _tensor, _tensor_call
    _tensor, _tensor_call = tensor, call


_PYTORCH_STYLE = (
    "s2sgrad.grad({name}) is PyTorch-style: called on arrays, {name}() returns its value, "
    "and gradients flow from Tensors that require grad (x = s2sgrad.tensor(x, "
    "requires_grad=True); {name}(x).backward(); x.grad). For a function that returns the "
    "gradient, as JAX's and autograd's grad do, use s2sgrad.gradient({name}) or "
    "s2sgrad.value_and_grad({name}) (or s2sgrad.grad({name}, argnums=0)).")


_said: list[bool] = []


def _looks_like_a_gradient_wanted(args: tuple, value: Any) -> bool:
    """A first call on floating arrays or numbers that returns a floating scalar: how JAX's
    ``grad(f)(x)`` is written, where a gradient is wanted and the value comes back."""
    floating = any(isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
                   for a in args)
    return floating and (isinstance(value, float) or (
        isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind == "f"))


class Function:
    """A function prepared for differentiation by ``@s2sgrad.grad``.

    Called with plain values it runs the original function; called with Tensors it runs the
    compiled forward and records a node for ``backward()``. ``forward_source`` and
    ``adjoint_source`` show the code generated for the most recent specialisation.
    """

    def __init__(self, fn: Callable):
        self.fn = unwrap(fn)
        functools.update_wrapper(self, self.fn)
        self._spec = specialiser(self.fn)
        self._spec.owners.add(self)  # a rule registered for this Function applies to it
        self._lifted: dict[tuple, tuple] = {}
        self._plain_calls = 0  # the first plain call may be JAX's grad(f)(x): said once

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tensor = _tensor
        if tensor:
            try:
                for a in args:
                    if isinstance(a, tensor):
                        return _tensor_call(self, args, kwargs)
                if kwargs and any(isinstance(v, tensor) for v in kwargs.values()):
                    return _tensor_call(self, args, kwargs)
                if self._spec.implicit(args, tensor):  # self.W, or a global Tensor
                    return _tensor_call(self, args, kwargs)
            except BaseException as exc:  # from the compiled forward: name the user's lines
                note_generated(exc)
                raise
        if self._plain_calls:
            return self.fn(*args, **kwargs)
        self._plain_calls = 1
        value = self.fn(*args, **kwargs)
        if not _said and _looks_like_a_gradient_wanted(args, value):
            _said.append(True)  # once a process
            warnings.warn(_PYTORCH_STYLE.format(name=getattr(self.fn, "__name__", "f")),
                          UserWarning, stacklevel=2)
        return value

    def said_pytorch_style(self) -> None:
        """No notice on a plain call: the function was decorated, in PyTorch's style."""
        self._plain_calls = 1

    def implicit_inputs(self, args: tuple) -> dict[str, Any]:
        """Tensors the function reads through its arguments' attributes or from globals."""
        return self._spec.implicit(args, _tensor)

    def lifted_function(self, paths: Sequence[str]) -> tuple[Callable, dict[str, str]]:
        """The function with the values at ``paths`` (``'self.W'``) read from keyword-only
        parameters instead (and their names): what create_graph differentiates again."""
        names = self._spec.lifted_names(paths)
        key = tuple(names.items())
        found = self._lifted.get(key)
        if found is None or found[0] is not self.fn.__code__:
            found = self._lifted[key] = (self.fn.__code__, codegen.as_function(
                parse(self.fn, names)))
        return found[1], names

    def lifted_compiled(self, wrt: tuple[int, ...], args: tuple, kwargs: dict,
                        lifted: dict[str, Any]) -> tuple[Compiled, dict[str, Any]]:
        """The compiled pair with the Tensors in ``lifted`` (path -> Tensor) as extra,
        keyword-only inputs; returns it and the keyword arguments that pass their data."""
        names = self._spec.lifted_names(lifted)
        extra = {names[p]: t._data for p, t in lifted.items()}
        lifted_wrt = tuple(names[p] for p, t in lifted.items() if t.requires_grad)
        compiled = self._spec.compiled(wrt, args, {**kwargs, **extra}, names, lifted_wrt)
        return compiled, extra

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return BoundFunction(self, obj)

    def compiled_for(self, wrt: tuple[int, ...], args: tuple, kwargs: dict | None = None
                     ) -> Compiled:
        """The compiled pair for these raw arguments, differentiated at positions ``wrt``."""
        return self._spec.compiled(tuple(wrt), args, kwargs or {})

    @property
    def compiled(self) -> Compiled:
        return self._spec.default()

    @property
    def forward_source(self) -> str:
        return self._spec.default().forward_source

    @property
    def adjoint_source(self) -> str:
        return self._spec.default().adjoint_source

    def __repr__(self) -> str:
        return f"<s2sgrad.Function {self.fn.__qualname__}>"


class BoundFunction:
    """A ``@grad`` method looked up on an instance: ``model.loss``."""

    def __init__(self, function: Function, obj: Any):
        self.function = function
        self.obj = obj

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(self.obj, *args, **kwargs)

    @property
    def adjoint_source(self) -> str:
        return self.function.adjoint_source

    @property
    def forward_source(self) -> str:
        return self.function.forward_source


store_on(Function)  # gradient(f) of a @grad Function, or of a @grad method, is kept on it
store_on(BoundFunction)
