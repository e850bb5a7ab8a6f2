"""The public transforms: ``@grad``, ``gradient``, ``value_and_grad``, ``vjp``, ``show``.

Each call finds (or compiles, once) the forward/backward pair specialised to the kinds and
ranks of the arguments, then runs forward and backward back to back. The look-up on the hot
path is one dict access keyed by the arguments' types, ranks and dtypes.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import parse as parse_module
from .analyze import UNKNOWN_ARRAY, abstract_of
from .errors import TransformError
from .parse import parse, unwrap
from .pipeline import Compiled, compile_vjp
from .rules import registry

Wrt = int | Sequence[int]


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
        else:
            key.append(abstract_of(a))
    if kwargs:
        key.append(tuple((k, (str, v) if strings else str) if type(v) is str else (
            k, abstract_of(v)) for k, v in sorted(kwargs.items())))
    return tuple(key)


# In a _Specialiser's cache under a key with strings by type: the pairs of these arguments
# depend on the strings' values, and are under the key with strings by value.
BY_STRING_VALUE = object()


class _Specialiser:
    """Finds the compiled pair for a call: a fast key in front of the compiler's cache."""

    def __init__(self, fn: Callable):
        self.fn = unwrap(fn)
        if not inspect.isfunction(self.fn):
            parse(self.fn)  # raises the TransformError that explains why
        self.signature = inspect.signature(self.fn, follow_wrapped=False)
        self.params = [p.name for p in self.signature.parameters.values()
                       if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.star = next((p.name for p in self.signature.parameters.values()
                          if p.kind == p.VAR_POSITIONAL), None)
        self.cache: dict[tuple, Compiled] = {}
        self.last: Compiled | None = None
        self._paths: list[tuple[str, ...]] | None = None
        self.owners: weakref.WeakSet = weakref.WeakSet()  # the @grad Functions of fn
        self._forwarded: tuple[Any, Callable] | None = None

    def target(self) -> Callable:
        """What the compiler reads: the function itself, or, when a derivative rule is
        registered for it (or for a ``@grad`` Function of it), a function whose one
        operation is a call of it, which the compiler differentiates with that rule."""
        rule = registry.lookup(self.fn)
        for owner in () if rule is not None else list(self.owners):
            rule = registry.lookup(owner)
            if rule is not None:
                break
        if rule is None:
            return self.fn
        if self._forwarded is None or self._forwarded[0] is not rule:
            from .runtime.ops import forwarding
            self._forwarded = (rule, forwarding(rule.primitive, self.signature))
        return self._forwarded[1]

    def compiled(self, wrt: tuple[int, ...], args: tuple, kwargs: dict,
                 lifted: dict[str, str] | None = None, lifted_wrt: tuple[str, ...] = ()
                 ) -> Compiled:
        """``lifted`` maps paths the function reads (``'self.W'``) to the keyword-only
        parameters that replace them; their values are in ``kwargs``, and ``lifted_wrt``
        names those to differentiate."""
        extra = (tuple(lifted.items()), lifted_wrt) if lifted else ()
        key = (wrt, _fast_key(args, kwargs)) + extra
        found = self.cache.get(key)
        by_type = found is not BY_STRING_VALUE
        if not by_type:
            key = (wrt, _fast_key(args, kwargs, strings=True)) + extra
            found = self.cache.get(key)
        if found is not None and (found.version is not registry.version or (
                found.fn.__code__ is not found.code) or (found.fn.__defaults__ is not
                                                         found.defaults) or (
                found.walk and not found.valid())):
            found = None  # a function it calls was redefined: compile again
        if found is None:
            if len(self.cache) > 4096:  # many distinct shapes: keep the look-up table small
                self.cache.clear()
            found = self._compile(wrt, args, kwargs, lifted or {}, lifted_wrt)
            if found.by_string_value and by_type:
                self.cache[key] = BY_STRING_VALUE
                key = (wrt, _fast_key(args, kwargs, strings=True)) + extra
            self.cache[key] = found
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
            self._paths = self._implicit_paths() if self.target() is self.fn else []
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
        try:
            paths = parse_module.implicit_paths(self.fn)
        except TransformError:  # no source: nothing to lift (a gradient would say why)
            return []
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
                 lifted: dict[str, str] | None = None, lifted_wrt: tuple[str, ...] = ()
                 ) -> Compiled:
        name = getattr(self.fn, "__qualname__", "function")
        lifted = lifted or {}
        extra = {k: kwargs[k] for k in lifted.values() if k in kwargs}
        kwargs = {k: v for k, v in kwargs.items() if k not in extra}
        try:  # the signature now: the defaults may have been rebound since
            bound = inspect.signature(self.fn, follow_wrapped=False).bind(*args, **kwargs)
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
        return compile_vjp(self.target(), tuple(names) + tuple(lifted_wrt), signature,
                           lifted=lifted)

    def default(self) -> Compiled:
        """The pair with respect to every parameter, for arrays of unknown rank."""
        if self.last is None:
            signature = {p: UNKNOWN_ARRAY for p in self.signature.parameters}
            self.last = compile_vjp(self.target(), tuple(self.params), signature)
        return self.last


def _leaves(value: Any) -> list:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _check_differentiable(fname: str, i: int, param: str, value: Any) -> None:
    if isinstance(value, (dict, list, tuple)) and (  # a structure of parameters
            not isinstance(value, dict) or all(isinstance(k, str) for k in value)):
        for leaf in _leaves(value):
            _check_differentiable(fname, i, param, leaf)
        return
    kind = abstract_of(value)
    if kind.kind in ("scalar", "array") and kind.float:
        if np.iscomplexobj(value):
            raise TypeError(f"{fname}(): argument {i} ('{param}') is complex; complex "
                            "differentiation is not supported")
        return
    if kind.kind in ("scalar", "array"):
        dtype = np.asarray(value).dtype
        raise TypeError(
            f"{fname}(): argument {i} ('{param}') is an integer or boolean value ({dtype}); "
            "only floating-point inputs can be differentiated. Pass a float instead, e.g. "
            f"np.asarray({param}, dtype=float).")
    raise TypeError(f"{fname}(): argument {i} ('{param}') is a {type(value).__name__}; only "
                    "floats and floating-point NumPy arrays can be differentiated here")


_specialisers: dict[Callable, _Specialiser] = {}


def _specialiser(fn: Callable) -> _Specialiser:
    if isinstance(fn, Function):
        return fn._spec
    raw = unwrap(fn)
    spec = _specialisers.get(raw)
    if spec is None:
        spec = _specialisers[raw] = _Specialiser(raw)
    return spec


def _bound(fn: Callable) -> tuple[Callable, tuple]:
    """A bound method (or ``@grad`` method on an instance) -> (the function, (self,))."""
    if isinstance(fn, BoundFunction):
        return fn.function, (fn.obj,)
    if inspect.ismethod(fn):
        return fn.__func__, (fn.__self__,)
    call = getattr(type(fn), "__call__", None)
    if not inspect.isroutine(fn) and not isinstance(fn, (type, Function)) and isinstance(
            call, types.FunctionType):  # an object with __call__ (a class-based decorator)
        return call, (fn,)
    return fn, ()


def _normalize_wrt(wrt: Wrt) -> tuple[tuple[int, ...], bool]:
    if isinstance(wrt, (int, np.integer)):
        return (int(wrt),), True
    wrt = tuple(int(i) for i in wrt)
    if not wrt:
        raise ValueError("wrt must name at least one argument")
    return wrt, False


def _seed(out: Any, fname: str) -> Any:
    if isinstance(out, float):
        return 1.0
    if isinstance(out, (np.ndarray, np.generic)) and out.ndim == 0 and out.dtype.kind == "f":
        return out.dtype.type(1.0) if isinstance(out, np.generic) else np.ones((), out.dtype)
    shape = np.shape(out) if isinstance(out, (np.ndarray, np.generic, int)) else None
    if shape is not None and shape != ():
        raise TypeError(f"gradient of {fname}(): the function must return a scalar, but it "
                        f"returned an array of shape {shape}. Reduce it (e.g. np.sum) or use "
                        "s2sgrad.vjp with a seed of that shape.")
    raise TypeError(f"gradient of {fname}(): the function must return a floating-point scalar, "
                    f"but it returned {type(out).__name__}")


def _as_gradient(g: Any, x: Any, seed: Any) -> Any:
    """The cotangent as a gradient for ``x``: an array of x's dtype that owns its memory
    (a rule may return a read-only broadcast view, or the seed itself); for a dict, list
    or tuple of parameters, the same structure."""
    if isinstance(x, dict):
        return {k: _as_gradient(g[k], v, seed) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_as_gradient(a, b, seed) for a, b in zip(g, x, strict=True)]
        return tuple(items) if isinstance(x, tuple) else items
    if type(x) is np.ndarray and (type(g) is not np.ndarray or g.dtype != x.dtype
                                  or not g.flags.writeable or g is seed):
        return np.array(g, dtype=x.dtype)
    return g


def value_and_grad(fn: Callable, wrt: Wrt = 0) -> Callable:
    """``value_and_grad(f, wrt)(*args) -> (f(*args), gradient)``; a tuple if ``wrt`` is one."""
    fn, prefix = _bound(fn)
    spec = _specialiser(fn)
    positions, single = _normalize_wrt(wrt)
    positions = tuple(i + len(prefix) if i >= 0 else i for i in positions)
    fname = spec.fn.__name__

    plain: dict[int, tuple] = {}  # per specialisation: are all differentiated args floats?

    @functools.wraps(spec.fn)
    def value_and_grad_fn(*args, **kwargs):
        if prefix:
            args = prefix + args
        compiled = spec.compiled(positions, args, kwargs)
        out, saved = compiled.forward(*args, **kwargs)
        seed = 1.0 if type(out) is float else _seed(out, fname)
        grads = compiled.backward(saved, seed)
        if spec.star is not None:
            grads = spec.by_position(grads, positions, len(args))
        known = plain.get(id(compiled))
        if known is None or known[0] is not compiled:
            known = plain[id(compiled)] = (compiled, all(type(args[i]) is float
                                                         for i in positions))
        if not known[1]:  # arrays: owned, writable, in the argument's dtype
            grads = tuple(_as_gradient(g, args[i], seed) for g, i in zip(grads, positions,
                                                                          strict=True))
        return out, (grads[0] if single else grads)

    value_and_grad_fn._s2sgrad_transform = f"value_and_grad({fname})"
    return value_and_grad_fn


def gradient(fn: Callable, wrt: Wrt = 0) -> Callable:
    """``gradient(f, wrt)(*args)``: the gradient of scalar ``f`` with respect to ``args[wrt]``."""
    inner = value_and_grad(fn, wrt)

    @functools.wraps(inner)
    def gradient_fn(*args, **kwargs):
        return inner(*args, **kwargs)[1]

    gradient_fn._s2sgrad_transform = f"gradient({getattr(fn, '__name__', 'f')})"
    return gradient_fn


def _differentiable(value: Any, raw: Any) -> bool:
    """A float, a float array, or a dict, list or tuple holding some."""
    return value.float and (value.kind in ("scalar", "array")
                            or isinstance(raw, (dict, list, tuple)))


def vjp(fn: Callable, *args: Any, **kwargs: Any) -> tuple[Any, Callable]:
    """``out, pullback = vjp(f, *args)``; ``pullback(seed)`` gives a cotangent for every
    positional argument (None for arguments that are not floating point)."""
    fn, prefix = _bound(fn)
    spec = _specialiser(fn)
    args = prefix + args
    limit = len(args) if spec.star is not None else len(spec.params)
    positions = tuple(i for i, a in enumerate(args[:limit])
                      if _differentiable(abstract_of(a), a))
    compiled = spec.compiled(positions, args, kwargs)
    out, saved = compiled.forward(*args, **kwargs)
    saved = compiled.own_saved(saved)  # the pullback may run after the arguments change
    out_shape = None if isinstance(out, (tuple, list, dict)) else np.shape(out)

    def pullback(seed: Any) -> tuple:
        if not isinstance(out, (tuple, list, dict)) and np.shape(seed) != out_shape:
            raise ValueError(f"Mismatch in shape: the seed has a shape of {np.shape(seed)} and "
                             f"the output of {spec.fn.__name__}() has a shape of {out_shape}")
        grads = compiled.backward(saved, seed)
        if spec.star is not None:
            grads = spec.by_position(grads, positions, len(args))
        grads = iter(grads)
        every = tuple(_as_gradient(next(grads), args[i], seed) if i in positions else None
                      for i in range(len(args)))
        return every[len(prefix):]

    pullback._s2sgrad_transform = f"the pullback of vjp({spec.fn.__name__})"
    return out, pullback


_TENSOR: Any = None


def _tensor_class() -> Any:
    global _TENSOR
    if _TENSOR is None:
        try:
            from .runtime.tensor import Tensor
        except ImportError:  # the Tensor layer is optional for the functional API
            Tensor = ()
        _TENSOR = Tensor
    return _TENSOR


class Function:
    """A function prepared for differentiation by ``@s2sgrad.grad``.

    Called with plain values it runs the original function; called with Tensors it runs the
    compiled forward and records a node for ``backward()``. ``forward_source`` and
    ``adjoint_source`` show the code generated for the most recent specialisation.
    """

    def __init__(self, fn: Callable):
        self.fn = unwrap(fn)
        functools.update_wrapper(self, self.fn)
        self._spec = _specialiser(self.fn)
        self._spec.owners.add(self)  # a rule registered for this Function applies to it

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tensor = _TENSOR if _TENSOR is not None else _tensor_class()
        if tensor:
            for a in args:
                if isinstance(a, tensor):
                    return self._call_with_tensors(args, kwargs)
            if kwargs and any(isinstance(v, tensor) for v in kwargs.values()):
                return self._call_with_tensors(args, kwargs)
            if self._spec.implicit(args, tensor):  # self.W, or a global Tensor
                return self._call_with_tensors(args, kwargs)
        return self.fn(*args, **kwargs)

    def _call_with_tensors(self, args: tuple, kwargs: dict) -> Any:
        from .runtime.graph import call_function
        return call_function(self, args, kwargs)

    def implicit_inputs(self, args: tuple) -> dict[str, Any]:
        """Tensors the function reads through its arguments' attributes or from globals."""
        return self._spec.implicit(args, _tensor_class())

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


def grad(fn: Callable) -> Function:
    """Decorator: prepare ``fn`` for differentiation (compiled lazily, once per signature)."""
    if isinstance(fn, Function):
        return fn
    return Function(fn)


def show(fn: Callable) -> None:
    """Print the forward and adjoint source generated for ``fn``."""
    compiled = _specialiser(fn).default()
    print(compiled.forward_source)
    print(compiled.adjoint_source)
