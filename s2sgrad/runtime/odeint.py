"""The derivatives of ``scipy.integrate.odeint``: the adjoint method (reverse mode) and the
forward sensitivity equations (forward mode), each solved with ``odeint`` itself.

For ``ys = odeint(func, y0, t, args)``, ``ys[i] = y(t[i])`` where ``y' = f(y, s, *args)``
and ``y(t[0]) = y0``. With ``g`` the cotangent of ``ys`` (one row per time):

- reverse (``odeint_backward``): the adjoint ``a(s) = dL/dy(s)`` solves ``a' = -a^T df/dy``
  between the output times, backwards from ``a = g[-1]`` at ``t[-1]``, and jumps by ``g[i]``
  at each ``t[i]``; the parameters' cotangent ``a_p`` gathers ``a^T df/dp`` along the way
  (``a_p' = -a^T df/dp``, from 0). ``y`` is solved backwards beside them, the augmented
  state being ``[y, a, a_p]`` (Chen et al. 2018, "Neural ordinary differential equations";
  Pontryagin's adjoint), restarted from the forward solution ``ys[i]`` at each output time:
  where ``y`` is unstable backwards (strong damping), more output times keep it accurate.
  Then ``y0`` gets ``a(t[0])``, ``t[i]`` (``i > 0``) gets ``g[i] . f(ys[i], t[i])``, and
  ``t[0]`` gets ``-a(t[0]) . f(y0, t[0])`` with ``a(t[0])`` before ``g[0]`` is added
  (``ys[0]`` is ``y0`` wherever ``t[0]`` is);
- forward (``odeint_tangent``): the tangent ``d(s)`` of ``y(s)`` solves
  ``d' = df/dy d + df/dp dp`` from ``d(t[0]) = dy0 - f(y0, t[0]) dt[0]``, beside ``y``, and
  ``ys[i]`` moves by ``d(t[i]) + f(ys[i], t[i]) dt[i]``.

``a^T df/dy`` and ``a^T df/dp`` come from one call of the pullback of ``func``, ``df/dy d +
df/dp dp`` from one call of its tangent function, both compiled by s2sgrad from ``func``'s
source (once per kind of arguments, cached like any compiled function). How ``func`` is
differentiated is given by the public API (``register``), which sits above the runtime.

The parameters are the float entries of ``args`` (floats, float arrays, and dicts, lists and
tuples holding them); the other entries (ints, strings, functions) are passed as they are and
get zeros. The solver settings of the call (tolerances, step limits) are used for the
augmented system too; ``Dfun``, ``col_deriv``, ``ml`` and ``mu`` describe the Jacobian of
``func`` alone, and are not. A solve of the augmented system that fails raises, naming the
setting to change, where odeint itself would warn and return a partial solution.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

# Set by the public API: vjp(fn, args, kwargs, positions) -> (out, pullback), the pullback
# giving one cotangent per argument (None outside positions); jvp(fn, primals, tangents) ->
# (out, tangent).
_vjp: Callable | None = None
_jvp: Callable | None = None


def register(vjp: Callable, jvp: Callable) -> None:
    global _vjp, _jvp
    _vjp, _jvp = vjp, jvp


def odeint_backward(g: Any, ans: Any, func: Callable, y0: Any, t: Any, args: tuple = (),
                    tfirst: bool = False, **solver: Any) -> tuple:
    """The cotangents of ``y0``, ``t`` and ``args`` for ``ans = odeint(func, y0, t, args)``
    and the cotangent ``g`` of ``ans``; ``args``' is a list with one item per entry (zeros
    for an entry that is not a float). ``solver`` holds odeint's settings."""
    times = np.asarray(t, dtype=float)
    ys = np.asarray(ans, dtype=float)
    n, size = ys.shape
    g = np.reshape(np.asarray(g, dtype=float), ys.shape)
    rhs = Rhs(func, args, tfirst)
    width = rhs.width
    adjoint = g[-1].copy()
    g_params = np.zeros(width)
    g_t = np.zeros(n)
    tolerances = _augmented(solver, size, 2 * size + width)

    def dynamics(state, s):
        y, a = state[:size], state[size:2 * size]
        f, a_y, a_p = rhs.pullback(y, s, -a)
        return np.concatenate([f, a_y, a_p])

    for i in range(n - 1, 0, -1):
        g_t[i] = g[i] @ rhs.value(ys[i], times[i])
        if times[i] != times[i - 1]:
            start = np.concatenate([ys[i], adjoint, g_params])
            end = _solve(dynamics, start, times[[i, i - 1]], tolerances, "adjoint")[-1]
            adjoint, g_params = end[size:2 * size], end[2 * size:]
        if i == 1:
            g_t[0] = -(adjoint @ rhs.value(ys[0], times[0]))
        adjoint = adjoint + g[i - 1]
    return _like(adjoint, y0), _like(g_t, t), rhs.unflatten(g_params)


def odeint_tangent(ans: Any, func: Callable, y0: Any, t: Any, args: tuple = (),
                   dy0: Any = None, dt: Any = None, dargs: Any = None, tfirst: bool = False,
                   **solver: Any) -> Any:
    """The tangent of ``ans = odeint(func, y0, t, args)`` when ``y0``, ``t`` and ``args``
    move by ``dy0``, ``dt`` and ``dargs`` (None for one that does not move; ``dargs`` has
    one item per entry of ``args``). ``solver`` holds odeint's settings."""
    moving = dargs is not None
    times = np.asarray(t, dtype=float)
    ys = np.asarray(ans, dtype=float)
    n, size = ys.shape
    rhs = Rhs(func, args, tfirst)
    start = np.zeros(size) if dy0 is None else np.ravel(np.asarray(dy0, dtype=float))
    if dt is not None:
        dt = np.ravel(np.asarray(dt, dtype=float))
        start = start - rhs.value(ys[0], times[0]) * dt[0]
    out = np.zeros((n, size))
    if np.any(start) or moving:

        def dynamics(state, s):
            f, d = rhs.tangent(state[:size], s, state[size:], dargs if moving else None)
            return np.concatenate([f, d])

        states = _solve(dynamics, np.concatenate([ys[0], start]), times,
                        _augmented(solver, size, 2 * size), "sensitivity")
        out = states[:, size:]
    if dt is not None:
        for i in range(n):  # ys[0] is y0 wherever t[0] is: d(t[0]) + f dt[0] = 0
            out[i] = out[i] + rhs.value(ys[i], times[i]) * dt[i]
    return np.reshape(out, np.shape(ans))


class Rhs:
    """``func`` as the solver calls it, with its value, pullback and tangent on flat arrays."""

    def __init__(self, func: Callable, args: tuple, tfirst: bool):
        if _vjp is None:
            raise RuntimeError("scipy.integrate.odeint is differentiated through s2sgrad's "
                               "public API: import s2sgrad")
        self.func, self.args, self.tfirst = func, args, tfirst
        self.y_at = 1 if tfirst else 0
        self.floats = [k for k, a in enumerate(args) if _leaves(a)]
        self.sizes = [[np.size(leaf) for leaf in _leaves(args[k])] for k in self.floats]
        self.width = sum(sum(s) for s in self.sizes)

    def call_args(self, y: np.ndarray, s: float) -> tuple:
        return ((s, y) if self.tfirst else (y, s)) + self.args

    def value(self, y: np.ndarray, s: float) -> np.ndarray:
        return _flat(self.func(*self.call_args(y, float(s))))

    def pullback(self, y: np.ndarray, s: float, seed: np.ndarray) -> tuple:
        """``f``, ``seed^T df/dy`` and ``seed^T df/dp`` (flat) at ``(y, s)``."""
        positions = (self.y_at,) + tuple(2 + k for k in self.floats)
        out, pullback = _vjp(self.func, self.call_args(y, float(s)), {}, positions)
        grads = pullback(_shaped_like(seed, out))
        flat = [_flat(leaf) for k in self.floats
                for leaf in _grad_leaves(grads[2 + k], self.args[k])]
        return _flat(out), _flat(grads[self.y_at]), np.concatenate(flat or [np.zeros(0)])

    def tangent(self, y: np.ndarray, s: float, d: np.ndarray, dargs: Any) -> tuple:
        """``f`` and ``df/dy d + df/dp dargs`` (flat) at ``(y, s)``."""
        primals = self.call_args(y, float(s))
        tangents = [None] * len(primals)
        tangents[self.y_at] = d
        if dargs is not None:
            for k in self.floats:
                tangents[2 + k] = dargs[k]
        out, dot = _jvp(self.func, primals, tangents)
        return _flat(out), _flat(dot)

    def unflatten(self, flat: np.ndarray) -> list:
        """The parameters' cotangent, one item per entry of ``args``."""
        out = [_zeros_like(a) for a in self.args]
        at = 0
        for k, sizes in zip(self.floats, self.sizes, strict=True):
            pieces = []
            for size in sizes:
                pieces.append(flat[at:at + size])
                at += size
            out[k] = _rebuild(self.args[k], iter(pieces))
        return out


def _like(flat: np.ndarray, value: Any) -> Any:
    """A cotangent of ``value`` (``y0`` or ``t``, which odeint converts to arrays): an array
    of its shape, or for a list or tuple one cotangent per item."""
    shaped = np.reshape(flat, np.shape(value))
    return list(shaped) if isinstance(value, (list, tuple)) else shaped


def _is_float(x: Any) -> bool:
    return isinstance(x, float) or (isinstance(x, (np.ndarray, np.floating))
                                    and np.asarray(x).dtype.kind == "f")


def _leaves(value: Any) -> list:
    """The float leaves of a value, in order: the value itself, or the items of a dict,
    list or tuple (nested)."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value] if _is_float(value) else []


def _grad_leaves(grad: Any, like: Any) -> list:
    """The leaves of a cotangent of ``like``, one per float leaf of ``like`` (zeros where
    the pullback gave none)."""
    if isinstance(like, dict):
        return [leaf for k, item in like.items()
                for leaf in _grad_leaves(None if grad is None else grad[k], item)]
    if isinstance(like, (list, tuple)):
        return [leaf for k, item in enumerate(like)
                for leaf in _grad_leaves(None if grad is None else grad[k], item)]
    if not _is_float(like):
        return []
    return [np.zeros(np.shape(like)) if grad is None else grad]


def _rebuild(like: Any, pieces: Any) -> Any:
    """The structure of ``like``, its float leaves taken in order from ``pieces``."""
    if isinstance(like, dict):
        return {k: _rebuild(v, pieces) for k, v in like.items()}
    if isinstance(like, (list, tuple)):
        items = [_rebuild(v, pieces) for v in like]
        return tuple(items) if isinstance(like, tuple) else items
    if not _is_float(like):
        return _zeros_like(like)
    piece = next(pieces)
    return np.reshape(piece, np.shape(like)) if isinstance(like, np.ndarray) else \
        float(piece[0])


def _zeros_like(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _zeros_like(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_zeros_like(v) for v in value]
    return np.zeros(np.shape(value)) if isinstance(value, np.ndarray) else 0.0


def _flat(value: Any) -> np.ndarray:
    """A value of ``func`` (an array, or a list of numbers or arrays) as one float vector."""
    if isinstance(value, (list, tuple)):
        return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in value] or
                              [np.zeros(0)])
    return np.ravel(np.asarray(value, dtype=float))


def _shaped_like(flat: np.ndarray, out: Any) -> Any:
    """A flat vector in the structure of ``func``'s value ``out`` (the pullback's seed)."""
    if isinstance(out, (list, tuple)):
        pieces, at = [], 0
        for item in out:
            size = np.size(item)
            piece = flat[at:at + size]
            at += size
            pieces.append(np.reshape(piece, np.shape(item)) if isinstance(item, np.ndarray)
                          else float(piece[0]))
        return type(out)(pieces)
    if isinstance(out, np.ndarray):
        return np.reshape(flat, out.shape)
    return float(flat[0])


def _solve(dynamics: Callable, start: np.ndarray, times: np.ndarray, settings: dict,
           what: str) -> np.ndarray:
    """The states of the augmented system at ``times``; a solve that fails raises, rather
    than giving a derivative from a partial solution as odeint's warning would."""
    import scipy.integrate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(scipy.integrate, "ODEintWarning", Warning))
        states, info = scipy.integrate.odeint(dynamics, start, times, full_output=True,
                                              **settings)
    if info["message"] != "Integration successful.":
        raise RuntimeError(
            f"the derivative of scipy.integrate.odeint solves the {what} equations with odeint, "
            f"which failed between t = {times[0]} and t = {times[-1]}: {info['message']} Give "
            "the differentiated call a larger mxstep= (or looser rtol=, atol=), which its "
            "derivative uses too")
    return states


def _augmented(solver: dict, size: int, width: int) -> dict:
    """The call's solver settings for an augmented system of ``width`` entries whose first
    ``size`` are the original state: a tolerance given per entry of the state is kept for
    those, and its smallest value used for the others."""
    out = {k: v for k, v in solver.items() if v is not None}
    for key in ("rtol", "atol"):
        if key in out and np.ndim(out[key]) > 0:
            given = np.ravel(np.asarray(out[key], dtype=float))
            out[key] = np.concatenate([np.broadcast_to(given, (size,)),
                                       np.full(width - size, np.min(given))])
    return out
