"""The public transforms: ``@grad``, ``gradient``, ``value_and_grad``, ``vjp``, ``show``.

Each call finds (or compiles, once) the forward/backward pair specialised to the kinds and
ranks of the arguments (``function.py``), then runs forward and backward back to back. An
exception raised in generated code leaves with a note naming the user's lines it ran for
(``errors.note_generated``, added where the code is run: a Derivative's call, ``_vjp``
and its pullback, ``_jvp``, ``batched_jvp``).

The public API layer: imports the compiler (``function``, ``analyze``), not the Tensor layer.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import backends
from .compiler import higher
from .compiler.analyze import abstract_of
from .compiler.analyze.values import backend_of, dtype_kind
from .compiler.batching import NotBatchable
from .compiler.compiled import state_of
from .compiler.derivatives import Derivative, set_maker
from .compiler.function import BoundFunction, Function, specialiser
from .compiler.higher import stand_in_of
from .errors import TransformError, note_generated
from .rules import registry
from .runtime.odeint import register as register_odeint

Wrt = int | Sequence[int]


def _bound(fn: Callable) -> tuple[Callable, tuple]:
    """A bound method (or ``@grad`` method on an instance) -> (the function, (self,))."""
    if isinstance(fn, Derivative):
        return fn, ()
    if isinstance(fn, BoundFunction):
        return fn.function, (fn.obj,)
    if inspect.ismethod(fn):
        return fn.__func__, (fn.__self__,)
    call = getattr(type(fn), "__call__", None)  # noqa: B004 (the method itself)
    if not inspect.isroutine(fn) and not isinstance(fn, (type, Function)) and isinstance(
            call, types.FunctionType):  # an object with __call__ (a class-based decorator)
        return call, (fn,)
    if isinstance(fn, functools.partial) or not inspect.isfunction(fn) and not isinstance(
            fn, (type, Function)) and registry.lookup(fn) is not None:
        # np.linalg.det, np.sin, partial(f, k=2.0): a function with source that calls it
        return stand_in_of(fn), ()
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
    if isinstance(out, np.ndarray) and out.size == 1 and out.dtype.kind == "f":
        return np.ones(out.shape, out.dtype)  # a size-1 array: its one entry is the value
    if backend_of(out) is not None and out.ndim == 0 and dtype_kind(out) == "f":
        return backends.ones_like(out)  # another library's array (a lazy one stays lazy)
    shape = np.shape(out) if isinstance(out, (np.ndarray, np.generic, int)) else None
    if shape is not None and shape != ():
        raise TypeError(f"gradient of {fname}(): the function must return a scalar, but it "
                        f"returned an array of shape {shape}. Reduce it (e.g. np.sum) or use "
                        "s2sgrad.vjp with a seed of that shape.")
    if np.iscomplexobj(out):
        raise TypeError(f"gradient of {fname}(): the function must return a real scalar, but it "
                        f"returned a complex value ({type(out).__name__}). Return np.real, "
                        "np.imag or np.abs of it, or use s2sgrad.vjp with a complex seed.")
    raise TypeError(f"gradient of {fname}(): the function must return a floating-point scalar, "
                    f"but it returned {type(out).__name__}")


def _plan(x: Any) -> Any:
    """How the cotangent of ``x`` becomes its gradient, the same for every call of one
    specialisation: None for a float (as it is), ``list`` for a list of floats (a list of
    its own), else ``_as_gradient``."""
    if type(x) is float:
        return None
    if type(x) is list and x and set(map(type, x)) == {float}:
        return list
    return _as_gradient


def _as_gradient(g: Any, x: Any, seed: Any) -> Any:
    """The cotangent as a gradient for ``x``: an array of x's dtype that owns its memory
    (a rule may return a read-only broadcast view, or the seed itself); for a dict, list
    or tuple of parameters, the same structure."""
    if isinstance(x, dict):
        return {k: _as_gradient(g[k], v, seed) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_as_gradient(a, b, seed) for a, b in zip(g, x, strict=True)]
        if not isinstance(x, tuple):
            return items
        return type(x)._make(items) if hasattr(type(x), "_make") else tuple(items)
    if type(g) is not np.ndarray and backend_of(g) is not None:
        # another library's array (a NumPy parameter's gradient through chunked data): kept
        # there, never brought into memory here; its arrays are not written in place
        if g.dtype == x.dtype:
            return g
        astype = getattr(g, "astype", None)  # the array API standard's is a function
        return astype(x.dtype) if astype is not None else g.__array_namespace__().astype(
            g, x.dtype)
    if type(x) is np.ndarray and (type(g) is not np.ndarray or g.dtype != x.dtype
                                  or not g.flags.writeable or g is seed):
        return np.array(g, dtype=x.dtype)
    return g


def value_and_grad(fn: Callable, wrt: Wrt = 0) -> Derivative:
    """``value_and_grad(f, wrt)(*args) -> (f(*args), gradient)``; a tuple if ``wrt`` is one.
    The result can itself be differentiated (``gradient(value_and_grad(f))``, a call of it
    inside a differentiated function)."""
    return _derivative(fn, wrt, True)


def gradient(fn: Callable, wrt: Wrt = 0) -> Derivative:
    """``gradient(f, wrt)(*args)``: the gradient of scalar ``f`` with respect to ``args[wrt]``
    (a tuple of them if ``wrt`` is a tuple). ``gradient(gradient(f))`` is the second
    derivative; a call of a gradient inside a differentiated function is differentiated
    too (higher order).

    ``f`` returns a real number. For a complex argument ``z = x + iy`` the gradient is
    ``df/dx - i df/dy``, as in JAX and HIPS autograd (its conjugate is the direction of
    steepest ascent); a real argument's gradient is real, whatever complex values ``f``
    computes on the way."""
    return _derivative(fn, wrt, False)


def _derivative(fn: Callable, wrt: Wrt, with_value: bool) -> Derivative:
    """One Derivative per (function, positions, value or not), kept in the function's state
    (``compiled.state_of``: on the function, freed with it): what it compiles is cached on
    it, so gradient(f) made again in a loop (hvp in a solver) reuses it."""
    if isinstance(fn, types.MethodType):  # made anew at each read: nothing to keep it on
        return _make_derivative(fn, wrt, with_value)
    key = (wrt if isinstance(wrt, (int, np.integer)) else tuple(wrt), with_value)
    made = state_of(fn).derivatives
    found = made.get(key)
    if found is None:
        found = made[key] = _make_derivative(fn, wrt, with_value)
    return found


def _make_derivative(fn: Callable, wrt: Wrt, with_value: bool) -> Derivative:
    target = fn
    fn, prefix = _bound(fn)
    if not prefix:  # (a stand-in for a function without source)
        target = fn
    spec = specialiser(fn)
    positions, single = _normalize_wrt(wrt)
    positions = tuple(i + len(prefix) if i >= 0 else i for i in positions)
    fname = spec.name

    plain: dict[int, tuple] = {}  # per specialisation: are all differentiated args floats?

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
            known = plain[id(compiled)] = (compiled, tuple(_plan(args[i]) for i in positions))
        if any(known[1]):  # arrays: owned, writable, in the argument's dtype
            grads = tuple(g if plan is None else list(g) if plan is list else
                          _as_gradient(g, args[i], seed)
                          for g, i, plan in zip(grads, positions, known[1], strict=True))
        return out, (grads[0] if single else grads)

    def gradient_fn(*args, **kwargs):
        return value_and_grad_fn(*args, **kwargs)[1]

    own = tuple(i - len(prefix) for i in positions)
    name = f"{'value_and_grad' if with_value else 'gradient'}_{fname}"
    return Derivative(target, own, single, with_value,
                      value_and_grad_fn if with_value else gradient_fn, name)


def _make(target: Any, positions: Wrt, with_value: bool) -> Derivative:
    return _derivative(target, positions, with_value)


set_maker(_make, {gradient: False, value_and_grad: True})


def _differentiable(value: Any, raw: Any) -> bool:
    """A float, a float array, or a dict, list or tuple holding some."""
    return value.float and (value.kind in ("scalar", "array")
                            or isinstance(raw, (dict, list, tuple)))


def vjp(fn: Callable, *args: Any, **kwargs: Any) -> tuple[Any, Callable]:
    """``out, pullback = vjp(f, *args)``; ``pullback(seed)`` gives a cotangent for every
    positional argument (None for arguments that are not floating point)."""
    return _vjp(fn, args, kwargs)


def _vjp(fn: Callable, args: tuple, kwargs: dict, only: tuple[int, ...] | None = None
         ) -> tuple[Any, Callable]:
    """``vjp``; with ``only``, the cotangents of those positions alone (None elsewhere)."""
    if hasattr(fn, "_s2sgrad_transpose"):
        return _vjp_of_linear(fn, args, kwargs)
    original = fn
    fn, prefix = _bound(fn)
    spec = specialiser(fn)
    args = prefix + args
    limit = len(args) if spec.star is not None else len(spec.params)
    positions = tuple(i for i, a in enumerate(args[:limit])
                      if _differentiable(abstract_of(a), a) and (
                          only is None or i - len(prefix) in only))
    compiled = spec.compiled(positions, args, kwargs)
    try:
        out, saved = compiled.forward(*args, **kwargs)
    except BaseException as exc:
        note_generated(exc)
        raise
    saved = compiled.own_saved(saved)  # the pullback may run after the arguments change
    out_shape = None if isinstance(out, (tuple, list, dict)) else np.shape(out)

    def pullback(seed: Any) -> tuple:
        if not isinstance(out, (tuple, list, dict)) and np.shape(seed) != out_shape:
            raise ValueError(f"Mismatch in shape: the seed has a shape of {np.shape(seed)} and "
                             f"the output of {spec.name}() has a shape of {out_shape}")
        try:
            grads = compiled.backward(saved, seed)
        except BaseException as exc:
            note_generated(exc)
            raise
        if spec.star is not None:
            grads = spec.by_position(grads, positions, len(args))
        grads = iter(grads)
        every = tuple(_as_gradient(next(grads), args[i], seed) if i in positions else None
                      for i in range(len(args)))
        return every[len(prefix):]

    pullback._s2sgrad_transform = f"the pullback of vjp({spec.name})"
    if not kwargs:
        user = args[len(prefix):]

        def transpose(cotangents: Any) -> Any:
            """The pullback's own pullback: J w, for w one entry per argument (None for
            one that does not move), by the tangent function of f."""
            if not isinstance(cotangents, (tuple, list)) or len(cotangents) != len(user):
                raise ValueError(f"the pullback of the pullback of vjp({spec.name}) "
                                 f"takes one cotangent per argument ({len(user)}), as a tuple")
            tangents = [w if w is not None and i + len(prefix) in positions else None
                        for i, w in enumerate(cotangents)]
            return jvp(original, user, tangents)[1]

        pullback._s2sgrad_transpose = transpose
    return out, pullback


def _vjp_of_linear(fn: Callable, args: tuple, kwargs: dict) -> tuple[Any, Callable]:
    """The vjp of a linear map the transforms made: a pullback ``u -> J^T u`` or a
    pullback of one. Its pullback is its transpose, ``w -> (J w,)`` for vjp's pullback (the
    tangent function of f), and so on to any depth: the transpose of ``v -> (L^T v,)`` is
    ``t -> L(t[0])``."""
    if len(args) != 1 or kwargs:
        raise TypeError(f"{fn._s2sgrad_transform} takes one argument")
    out = fn(args[0])
    transpose = fn._s2sgrad_transpose

    def pullback(cotangent: Any) -> tuple:
        return (transpose(cotangent),)

    def transpose_of_pullback(cotangents: Any) -> Any:
        if not isinstance(cotangents, (tuple, list)) or len(cotangents) != 1:
            raise ValueError(f"the pullback of the pullback of vjp({fn._s2sgrad_transform}) "
                             "takes a tuple of one cotangent")
        return fn(cotangents[0])

    pullback._s2sgrad_transform = f"the pullback of vjp({fn._s2sgrad_transform})"
    pullback._s2sgrad_transpose = transpose_of_pullback
    return out, pullback


def jvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``out, out_dot = jvp(f, primals, tangents)``: ``f(*primals)`` and its derivative
    along ``tangents`` (one per primal; ``None`` for one that does not move), computed by
    the generated tangent function in one pass (forward mode)."""
    return _jvp(fn, primals, tangents, "jvp")


def _jvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any], mode: str) -> Any:
    """``jvp``; with ``mode`` "tangent", the tangent alone (the value is not computed where
    the tangent does not need it)."""
    if hasattr(fn, "_s2sgrad_transpose"):  # a pullback is linear: its tangent is itself
        if len(primals) != 1 or len(tangents) != 1:
            raise TypeError(f"{fn._s2sgrad_transform} takes one argument")
        dot = _zeros_like(fn(primals[0])) if tangents[0] is None else fn(tangents[0])
        return (fn(primals[0]), dot) if mode == "jvp" else dot
    fn, prefix = _bound(fn)
    spec = specialiser(fn)
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp of {spec.name}(): {len(primals)} primals but "
                         f"{len(tangents)} tangents; give one tangent per primal (None for "
                         "one that does not move)")
    args = prefix + primals
    positions = tuple(len(prefix) + i for i, t in enumerate(tangents) if t is not None)
    if not positions:
        out = spec.fn(*args)
        return (out, _zeros_like(out)) if mode == "jvp" else _zeros_like(out)
    for i in positions:
        _check_tangent(spec.name, args[i], tangents[i - len(prefix)])
    compiled = spec.compiled(positions, args, {}, mode=mode)
    dots = {}
    for i in positions:
        param = spec.params[i] if i < len(spec.params) else spec.star
        t = tangents[i - len(prefix)]
        if i >= len(spec.params):  # values received by *args: one tangent tuple
            t = tuple(tangents[k - len(prefix)] if k in positions else _zeros_like(args[k])
                      for k in range(len(spec.params), len(args)))
        dots[compiled.tangent_params[compiled.wrt.index(param)]] = t
    try:
        return compiled.jvp(*args, **dots)
    except BaseException as exc:
        note_generated(exc)
        raise


# the derivatives of scipy.integrate.odeint differentiate its func with these
register_odeint(_vjp, jvp)


def _like(value: list | tuple, items: list) -> list | tuple:
    """``items`` in a container of ``value``'s type (a named tuple's class included)."""
    return type(value)._make(items) if hasattr(type(value), "_make") else type(value)(items)


def _zeros_like(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _zeros_like(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return _like(value, [_zeros_like(v) for v in value])
    if isinstance(value, float):
        return 0.0
    return np.zeros_like(value)


def _check_tangent(fname: str, primal: Any, tangent: Any) -> None:
    """A tangent has its primal's structure and shape."""
    if isinstance(primal, dict):
        if not isinstance(tangent, dict) or set(tangent) != set(primal):
            raise ValueError(f"jvp of {fname}(): a tangent of a dict must be a dict with the "
                             f"same keys ({sorted(primal)})")
        for k in primal:
            _check_tangent(fname, primal[k], tangent[k])
        return
    if isinstance(primal, (list, tuple)):
        if not isinstance(tangent, (list, tuple)) or len(tangent) != len(primal):
            raise ValueError(f"jvp of {fname}(): a tangent of a {type(primal).__name__} of "
                             f"{len(primal)} items must hold as many")
        for p, t in zip(primal, tangent, strict=True):
            _check_tangent(fname, p, t)
        return
    if np.shape(tangent) != np.shape(primal):
        raise ValueError(f"jvp of {fname}(): a tangent has shape {np.shape(tangent)} but its "
                         f"primal has shape {np.shape(primal)}")


def hvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """The Hessian of scalar ``f`` at ``primals`` times ``tangents`` (None for an argument
    held fixed): the tangent of ``gradient(f)`` along ``tangents``, without forming the
    Hessian. One array, or a tuple when several arguments move."""
    moving = tuple(i for i, t in enumerate(tangents) if t is not None)
    if not moving:
        raise ValueError("hvp: give a tangent for at least one argument")
    wrt = moving[0] if len(moving) == 1 else moving
    return _jvp(gradient(fn, wrt), primals, tangents, "tangent")


def jacobian(fn: Callable, wrt: Wrt = 0, mode: str | None = None) -> Callable:
    """``jacobian(f, wrt)(*args)``: the derivative of every output entry with respect to
    every entry of ``args[wrt]``, of shape ``out.shape + arg.shape`` (a tuple, one per
    argument, if ``wrt`` is a tuple). ``mode`` "rev" builds all its rows in one batched
    pullback (``batched_vjp``), "fwd" all its columns in one call of the tangent function
    generated for a batch of directions (``batched_jvp``); where that cannot be generated,
    one vjp per output entry or one jvp per input entry. By default "rev" for outputs at
    most half as large as the inputs. A gradient's Jacobian (a Hessian) is batched by
    forward mode over its generated code, and where that cannot be read, by forward mode
    over f's batched tangent function for up to 32 rows or columns."""
    if mode not in (None, "rev", "fwd"):
        raise ValueError(f"jacobian(mode={mode!r}): mode is 'rev', 'fwd' or None")
    positions, single = _normalize_wrt(wrt)

    @functools.wraps(fn)
    def jacobian_fn(*args):
        out = fn(*args)
        shape = np.shape(out)
        size_out = int(np.size(out))
        size_in = sum(int(np.size(args[i])) for i in positions)
        batched = {"rev": lambda: _batched_rows(fn, args, positions, out),
                   "fwd": lambda: _columns(fn, args, positions, shape)}
        if mode is None:  # the cheaper batch, then the other, then the fewer passes
            order = ["rev", "fwd"] if size_out * _ROWS_PER_BATCH <= size_in else ["fwd", "rev"]
        else:
            order = [mode]
        for chosen in order:
            blocks = batched[chosen]()
            if blocks is not None:
                return blocks[0] if single else tuple(blocks)
        fewer = mode or ("rev" if size_out <= size_in else "fwd")
        blocks = _rows_one_by_one(fn, args, positions, out) if fewer == "rev" else \
            _columns_one_by_one(fn, args, positions, shape)
        return blocks[0] if single else tuple(blocks)

    jacobian_fn._s2sgrad_transform = f"jacobian({getattr(fn, '__name__', 'f')})"
    return jacobian_fn


# Below one output entry per this many input entries, a Jacobian is cheaper by its rows in
# one batched pullback than by its columns in one batched tangent call. A row costs a forward
# and a reverse sweep of a direction, a column the forward alone: on a dense layer of 300
# inputs and 10 to 300 outputs (with and without a cumsum), a row costs 2 to 5 times what a
# column costs, and the two take as long at 100 to 150 outputs.
_ROWS_PER_BATCH = 2


# Up to this many directions, a Hessian's columns are cheaper in one batched call than one
# Hessian-vector product each where the batched call is forward mode over f's batched
# tangent function (``quadratic``: forward mode refused f's adjoint), whose arrays hold
# n x n tangents of each value (n^3 entries for a vector of n). Measured: at n = 10 the
# batched call takes a third of the time, at n = 50 as long (elementwise, a loop, a dense
# layer), at n = 200 4 to 15 times as long. Forward over reverse has no such limit.
_BATCHED_HESSIAN = 32

# Directions per batched call: a Jacobian's columns (or rows) are built this many at a time,
# so that the tangents of every value stay a few hundred times the value's size.
_CHUNK = 256


def _batched_record(fn: Callable, args: tuple, positions: tuple[int, ...], batch: int
                    ) -> bool:
    """Whether ``fn``'s batched tangent function in ``positions`` exists and is worth a
    batch of ``batch`` directions."""
    target, prefix = _bound(fn)
    compiled = specialiser(target).compiled(tuple(len(prefix) + i for i in positions),
                                            prefix + tuple(args), {}, mode="batched")
    return not compiled.unbatchable and not (compiled.quadratic and batch > _BATCHED_HESSIAN)


def _rows_one_by_one(fn: Callable, args: tuple, positions: tuple[int, ...], out: Any) -> list:
    """The Jacobian a row at a time: one pullback per output entry."""
    shape = np.shape(out)
    _, pullback = _vjp(fn, args, {}, positions)
    rows = [pullback(np.reshape(e, shape) if shape else type(out)(e.item()))
            for e in np.eye(int(np.size(out)))]
    return [np.reshape(np.stack([np.asarray(r[i]) for r in rows]), shape + np.shape(args[i]))
            for i in positions]


def _batched_rows(fn: Callable, args: tuple, positions: tuple[int, ...], out: Any
                  ) -> list | None:
    """Every row of the Jacobian of ``fn`` in ``args[positions]`` in one batched pullback,
    the cotangents being the identity (one output entry per row). None where it cannot be
    batched (see ``batched_vjp``)."""
    if not isinstance(out, (np.ndarray, float)) or any(
            not isinstance(args[i], (np.ndarray, float)) for i in positions):
        return None
    batch, shape = int(np.size(out)), np.shape(out)
    if batch == 0 or not _batched_record(fn, args, positions, batch):
        return None
    eye = np.eye(batch)
    parts = []
    for first in range(0, batch, _CHUNK):
        chunk = eye[first:first + _CHUNK]
        try:
            parts.append(batched_vjp(fn, args, np.reshape(chunk, (len(chunk),) + shape),
                                     wrt=positions))
        except NotBatchable:
            return None
    return [np.reshape(np.concatenate([part[i] for part in parts]), shape + np.shape(args[i]))
            for i in positions]


def _columns_one_by_one(fn: Callable, args: tuple, positions: tuple[int, ...], shape: tuple
                        ) -> list:
    """The Jacobian a column at a time: one jvp per input entry."""
    blocks = []
    for i in positions:
        columns = []
        for e in np.eye(int(np.size(args[i]))):
            tangents = [None] * len(args)
            tangents[i] = np.reshape(e, np.shape(args[i])) if isinstance(
                args[i], np.ndarray) else float(e[0])
            columns.append(np.asarray(jvp(fn, args, tangents)[1]))
        block = np.stack(columns, axis=-1) if columns else np.zeros(shape + (0,))
        blocks.append(np.reshape(block, shape + np.shape(args[i])))
    return blocks


def _columns(fn: Callable, args: tuple, positions: tuple[int, ...], shape: tuple
             ) -> list | None:
    """Every column of the Jacobian of ``fn`` in ``args[positions]`` in one call of the
    batched tangent function: the tangents are the identity, one direction per row. None
    where it cannot be batched (see batching.py)."""
    if any(not isinstance(args[i], (np.ndarray, float)) for i in positions):
        return None
    sizes = [int(np.size(args[i])) for i in positions]
    batch, start = sum(sizes), 0
    if batch == 0 or not _batched_record(fn, args, positions, batch):
        return None
    eyes = []
    for size in sizes:
        eye = np.zeros((batch, size))
        eye[start:start + size] = np.eye(size)
        start += size
        eyes.append(eye)
    parts = []
    for first in range(0, batch, _CHUNK):
        rows = [None] * len(args)
        for i, eye in zip(positions, eyes, strict=True):
            chunk = eye[first:first + _CHUNK]
            rows[i] = np.reshape(chunk, (len(chunk),) + np.shape(args[i]))
        try:
            part = batched_jvp(fn, args, rows)
        except NotBatchable:
            return None
        if not isinstance(part, np.ndarray) or part.shape[1:] != shape:
            return None  # not an array: a column at a time
        parts.append(part)
    out_dot = parts[0] if len(parts) == 1 else np.concatenate(parts)
    blocks, start = [], 0
    for i, size in zip(positions, sizes, strict=True):
        block = np.moveaxis(out_dot[start:start + size], 0, -1)
        blocks.append(np.reshape(block, shape + np.shape(args[i])))
        start += size
    return blocks


def batched_jvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """The tangents of ``f(*primals)`` along many directions in one pass: each tangent has
    a leading axis of directions (``(k,) + np.shape(x)``; None for a primal that does not
    move), and so has the result, row ``j`` being the jvp along the ``j``-th directions.
    Raises ``NotBatchable`` (with the reason) where the tangent function cannot be
    generated for rows; ``jvp`` along each direction is then the way."""
    fn, prefix = _bound(fn)
    spec = specialiser(fn)
    args = prefix + tuple(primals)
    moving = tuple(len(prefix) + i for i, t in enumerate(tangents) if t is not None)
    if not moving:
        raise ValueError("batched_jvp: give rows of tangents for at least one argument")
    batch = len(tangents[moving[0] - len(prefix)])
    for i in moving:
        rows = tangents[i - len(prefix)]
        if np.shape(rows) != (batch,) + np.shape(args[i]):
            raise ValueError(f"batched_jvp of {spec.name}(): rows of tangents of shape "
                             f"{np.shape(rows)} for a primal of shape {np.shape(args[i])}; "
                             f"expected {(batch,) + np.shape(args[i])}")
    compiled = spec.compiled(moving, args, {}, mode="batched")
    if compiled.unbatchable:
        raise NotBatchable(compiled.unbatchable)
    dots = {}
    for i in moving:
        param = spec.params[i] if i < len(spec.params) else spec.star
        rows = np.asarray(tangents[i - len(prefix)], dtype=float)
        if i >= len(spec.params):  # values received by *args: one tuple of rows
            rows = tuple(np.asarray(tangents[k - len(prefix)], dtype=float) if k in moving
                         else np.zeros((batch,) + np.shape(args[k]))
                         for k in range(len(spec.params), len(args)))
        dots[compiled.tangent_params[compiled.wrt.index(param)]] = rows
    try:
        return compiled.jvp(*args, **dots, **{compiled.batch: batch})
    except BaseException as exc:
        note_generated(exc)
        raise


def batched_vjp(fn: Callable, primals: Sequence[Any], cotangents: Any,
                wrt: Wrt | None = None) -> tuple:
    """The pullbacks of ``f`` at ``primals`` of many cotangents in one pass: ``cotangents``
    has a leading axis (``(k,) + np.shape(out)``), and so has each result, row ``j`` being
    what ``vjp``'s pullback gives for ``cotangents[j]``. One entry per primal: rows for the
    floating-point ones (or those ``wrt`` names), None for the others.

    It is reverse mode over f's batched tangent function, which is linear in its rows of
    tangents (``higher.transposed``). Raises ``NotBatchable`` (with the reason) where that
    function cannot be generated or read back; a pullback per row is then the way."""
    target, prefix = _bound(fn)
    spec = specialiser(target)
    args = prefix + tuple(primals)
    if wrt is None:
        positions = tuple(i for i, a in enumerate(primals) if _differentiable(abstract_of(a), a))
    else:
        positions = _normalize_wrt(wrt)[0]
    moving = tuple(len(prefix) + i % len(primals) for i in positions)
    if not moving:
        raise ValueError("batched_vjp: no floating-point argument to differentiate")
    if any(i >= len(spec.params) for i in moving):
        raise NotBatchable(f"batched_vjp of {spec.name}(): a value passed through "
                           "*args is pulled back one row at a time")
    batch = int(np.shape(cotangents)[0]) if np.ndim(cotangents) else 0
    compiled = spec.compiled(moving, args, {}, mode="batched")
    if compiled.unbatchable:
        raise NotBatchable(compiled.unbatchable)
    found = higher.transposed(compiled, spec.fn)
    if found.refused:
        raise NotBatchable(found.refused)
    zeros = tuple(np.zeros((batch,) + np.shape(args[i])) for i in moving)
    try:
        rows, pullback = _vjp(found.fn, zeros + args, {}, tuple(range(len(moving))))
    except TransformError as exc:  # the batched code has what the reverse pass refuses
        found.refused = exc.reason
        raise NotBatchable(exc.reason) from None
    if not isinstance(rows, np.ndarray):
        raise NotBatchable(f"batched_vjp of {spec.name}(): the output is a "
                           f"{type(rows).__name__}, not an array")
    if np.shape(cotangents) != rows.shape:
        raise ValueError(f"batched_vjp of {spec.name}(): cotangents of shape "
                         f"{np.shape(cotangents)} for an output of shape {rows.shape[1:]}; "
                         f"expected {(batch,) + rows.shape[1:]}")
    pulled = pullback(np.asarray(cotangents, dtype=float))
    found_rows = dict(zip(moving, pulled, strict=False))
    return tuple(found_rows.get(len(prefix) + i) for i in range(len(primals)))


def jacfwd(fn: Callable, wrt: Wrt = 0) -> Callable:
    """``jacobian(f, wrt, mode="fwd")``: a column per input entry, by forward mode."""
    return jacobian(fn, wrt, mode="fwd")


def jacrev(fn: Callable, wrt: Wrt = 0) -> Callable:
    """``jacobian(f, wrt, mode="rev")``: a row per output entry, by reverse mode."""
    return jacobian(fn, wrt, mode="rev")


def hessian(fn: Callable, wrt: Wrt = 0) -> Callable:
    """``hessian(f, wrt)(*args)``: the second derivatives of scalar ``f``, the Jacobian of
    its gradient, of shape ``arg.shape + arg.shape`` (a tuple of tuples of blocks if
    ``wrt`` is a tuple). Its columns come from batched calls of the gradient's tangent
    function (forward mode over f's generated gradient, see ``higher.derivative_rows``);
    where forward mode cannot read that gradient, from forward mode over f's batched tangent
    function for up to 32 entries; else each column is one Hessian-vector product."""
    positions, single = _normalize_wrt(wrt)
    grad_fn = gradient(fn, wrt)

    def hessian_fn(*args):
        if single:
            return jacobian(grad_fn, positions[0], mode="fwd")(*args)
        rows = []
        for k in range(len(positions)):
            row = jacobian(_item(grad_fn, k), positions, mode="fwd")(*args)
            rows.append(row)
        return tuple(rows)

    hessian_fn = functools.wraps(fn)(hessian_fn)
    hessian_fn._s2sgrad_transform = f"hessian({getattr(fn, '__name__', 'f')})"
    return hessian_fn


def _item(fn: Callable, k: int) -> Callable:
    def item(*args):
        return fn(*args)[k]
    return item


def grad(fn: Callable, argnums: Wrt | None = None, has_aux: bool = False
         ) -> Function | Derivative:
    """Decorator, PyTorch-style: prepare ``fn`` for differentiation (compiled lazily, once
    per signature); called with Tensors that require grad it records the graph for
    ``backward()``, called with arrays it returns ``fn``'s value.

    JAX's spelling, ``grad(fn, argnums=k)``, is JAX's grad: the function that returns the
    gradient, ``gradient(fn, wrt=k)``. ``has_aux=True`` is refused with what to write."""
    if has_aux:
        raise TypeError(
            "s2sgrad.grad(fn, has_aux=True): auxiliary outputs are not supported. Return the "
            "scalar alone from the function you differentiate (s2sgrad.gradient(fn) or "
            "s2sgrad.value_and_grad(fn)) and compute the auxiliary value in another call.")
    if argnums is not None:
        return gradient(fn, wrt=argnums)
    if isinstance(fn, Function):
        return fn
    made = Function(fn)
    caller = sys._getframe(1)
    line = linecache.getline(caller.f_code.co_filename, caller.f_lineno).lstrip()
    if line.startswith("@"):  # a decorator on the def (among others, or on a method):
        made.said_pytorch_style()  # PyTorch's style, chosen
    return made


def show(fn: Callable, *args: Any, wrt: Wrt | None = None) -> None:
    """Print the forward and adjoint source generated for ``fn``: for arrays of unknown
    rank, or specialised to ``args`` (differentiated in ``wrt``, by default every float
    argument). For a derivative (``gradient(f)``), also the tangent function of ``f`` and
    the pair that differentiates it, where its second derivatives come from."""
    spec = specialiser(fn)
    if args:
        positions = _normalize_wrt(wrt)[0] if wrt is not None else tuple(
            i for i, a in enumerate(args) if _differentiable(abstract_of(a), a))
        compiled = spec.compiled(positions, args, {})
    else:
        compiled = spec.default()
    print(compiled.forward_source)
    print(compiled.adjoint_source)
    for part in getattr(compiled, "calls", ()):
        if hasattr(part, "adjoint_source"):
            print(part.forward_source)
            print(part.adjoint_source)
        else:
            print(part.source)
