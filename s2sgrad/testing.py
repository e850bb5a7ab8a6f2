"""Gradient checking by central finite differences, in float64.

``check_grads(f, *args)`` compares the compiled vector-Jacobian product of ``f`` with central
differences of ``f`` along random directions, for every floating-point argument (or those
named by ``wrt``), and the compiled forward's value with a plain call of ``f``. It raises
AssertionError with the two numbers when they disagree, so it can be used directly in tests.

The same differences check a gradient that comes from anywhere else (a hand-written formula,
a derivative rule, a Tensor's ``.grad``):

- ``central_difference(f, args, i, v)``: the derivative of ``f`` at ``args`` along ``v`` in
  argument ``i``, ``(f(x + eps v) - f(x - eps v)) / (2 eps)``; with ``weight=u``, of
  ``<u, f>`` (for an array output);
- ``assert_gradient_matches(f, args, i, grad, rng)``: ``<grad, v>`` against that difference
  along random directions ``v``;
- ``numeric_gradient(f, args, i)``: the whole gradient of a scalar ``f``, one difference per
  entry (for small arguments).

Complex arguments and outputs are checked in the convention of ``s2sgrad.gradient`` (JAX's
and HIPS autograd's): a direction ``v`` of a complex argument moves its real and imaginary
parts at once, a weight ``u`` of a complex output makes the real loss ``Re <u, f>``, and a
gradient ``grad`` agrees when ``Re sum(grad * v)`` is the difference of that loss.

The moved argument is computed in float64 (complex128), a float32 input included: in float32 most of a
step of ``EPS`` is lost to rounding. The step is ``EPS`` = 1e-6, and an analytic ``a`` and a
numeric ``n`` agree when ``|a - n| <= ATOL + RTOL |n|``, with ``RTOL`` = 1e-5 and ``ATOL`` =
1e-7.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import _like, _vjp, batched_jvp, batched_vjp, gradient, jvp
from .compiler import sourcefile

# A central difference is off by about EPS**2 / 6 times the third derivative (truncation)
# plus 1e-16 |f| / EPS (rounding): at EPS = 1e-6, near 1e-10 for values and derivatives of
# order one, far below RTOL; ATOL covers the rounding where the derivative is near zero.
EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-7


def random_direction(value: Any, rng: np.random.Generator) -> Any:
    """A standard normal direction of ``value``'s shape, in float64 (a float for a scalar
    that is not an array); for a dict, list or tuple, one of the same structure (zero where
    an item is not a float)."""
    if isinstance(value, dict):
        return {k: random_direction(v, rng) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return _like(value, [random_direction(v, rng) for v in value])
    if not _is_float(value):
        return np.zeros(np.shape(value)) if isinstance(value, np.ndarray) else 0.0
    if _is_complex(value):  # the real and the imaginary parts move
        return rng.standard_normal(np.shape(value)) + 1j * rng.standard_normal(np.shape(value))
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape)
    return float(rng.standard_normal())


def _is_complex(value: Any) -> bool:
    return isinstance(value, complex) or (isinstance(value, (np.ndarray, np.generic))
                                          and np.asarray(value).dtype.kind == "c")


def _dot(a: Any, b: Any) -> float:
    """The inner product of two values of one structure, summed over their items."""
    if isinstance(a, dict):
        return sum(_dot(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return sum(_dot(x, y) for x, y in zip(a, b, strict=True))
    return float(np.real(np.sum(np.asarray(a, dtype=complex if _is_complex(a) else float)
                                * b)))


def _moved(value: Any, step: Any) -> Any:
    """``value + step`` in float64, of ``value``'s kind: an array, a NumPy scalar, a float,
    or a dict, list or tuple of them (items that are not floats stay as they are)."""
    if isinstance(value, dict):
        return {k: _moved(v, step[k]) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return _like(value, [_moved(v, d) for v, d in zip(value, step, strict=True)])
    if not _is_float(value):
        return value
    if _is_complex(value):
        return np.asarray(value, dtype=np.complex128) + step if isinstance(
            value, np.ndarray) else complex(value) + step
    if isinstance(value, np.ndarray):
        return np.asarray(value.astype(np.float64) + step)
    if isinstance(value, np.generic):
        return np.float64(value) + step
    return float(value) + step


def _weighted(out: Any, weight: Any) -> float:
    if weight is not None:  # Re <u, f> for a complex output
        return float(np.real(np.sum(weight * np.asarray(out))))
    if np.ndim(out) != 0:
        raise ValueError(f"a central difference of an output of shape {np.shape(out)} needs a "
                         "weight= of that shape")
    return float(out)


def central_difference(fn: Callable, args: Sequence[Any], i: int, direction: Any, *,
                       weight: Any = None, eps: float = EPS) -> float:
    """d/dt of ``fn(*args)`` with ``args[i] + t * direction``, at t = 0, by a central
    difference of step ``eps``; with ``weight``, of ``<weight, fn(...)>``. The other arguments
    are passed as they are."""
    plus, minus = list(args), list(args)
    plus[i] = _moved(args[i], _scaled(direction, eps))
    minus[i] = _moved(args[i], _scaled(direction, -eps))
    return (_weighted(fn(*plus), weight) - _weighted(fn(*minus), weight)) / (2 * eps)


def _scaled(direction: Any, factor: float) -> Any:
    if isinstance(direction, dict):
        return {k: _scaled(v, factor) for k, v in direction.items()}
    if isinstance(direction, (list, tuple)):
        return _like(direction, [_scaled(v, factor) for v in direction])
    return factor * direction


def _shapes(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shapes(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    return np.shape(value)


def numeric_gradient(fn: Callable, args: Sequence[Any], i: int, *, eps: float = EPS) -> Any:
    """The gradient of the scalar ``fn(*args)`` with respect to ``args[i]``, one central
    difference per entry: an array of ``args[i]``'s shape, or a float for a scalar."""
    if not isinstance(args[i], np.ndarray):
        return central_difference(fn, args, i, 1.0, eps=eps)
    grad = np.zeros(args[i].shape)
    for index in np.ndindex(grad.shape):
        unit = np.zeros(grad.shape)
        unit[index] = 1.0
        grad[index] = central_difference(fn, args, i, unit, eps=eps)
    return grad


def _name(fn: Callable) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _agrees(fn: Callable, args: Sequence[Any], i: int, grad: Any, direction: Any, weight: Any,
            eps: float, rtol: float, atol: float) -> None:
    if _shapes(grad) != _shapes(args[i]):
        raise AssertionError(
            f"gradient of {_name(fn)} wrt argument {i} has shape {_shapes(grad)}, but the "
            f"argument has shape {_shapes(args[i])}")
    analytic = _dot(grad, direction)
    numeric = central_difference(fn, args, i, direction, weight=weight, eps=eps)
    if not np.isclose(analytic, numeric, rtol=rtol, atol=atol):
        raise AssertionError(
            f"gradient of {_name(fn)} wrt argument {i} disagrees with finite differences: "
            f"<grad, v> = {analytic!r}, numeric = {numeric!r}")


def assert_gradient_matches(fn: Callable, args: Sequence[Any], i: int, grad: Any,
                            rng: np.random.Generator | int = 0, *, weight: Any = None,
                            directions: int = 2, eps: float = EPS, rtol: float = RTOL,
                            atol: float = ATOL) -> None:
    """Check ``grad``, claimed to be the gradient of ``fn`` (of ``<weight, fn>`` if given)
    with respect to ``args[i]``: ``<grad, v>`` against ``central_difference`` along
    ``directions`` random ``v`` drawn from ``rng`` (a Generator or a seed). Raises
    AssertionError with the two numbers when they disagree."""
    rng = np.random.default_rng(rng)
    for _ in range(directions):
        _agrees(fn, args, i, grad, random_direction(args[i], rng), weight, eps, rtol, atol)


def _is_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_is_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_is_float(v) for v in value)
    if isinstance(value, bool):
        return False
    if isinstance(value, (float, complex)):
        return True
    return isinstance(value, (np.ndarray, np.floating, np.complexfloating)) and np.asarray(
        value).dtype.kind in "fc"


def _weight_like(out: Any, rng: np.random.Generator) -> Any:
    """A random cotangent for ``out``, of its type and dtype (what its pullback takes)."""
    if _is_complex(out):
        u = rng.standard_normal(np.shape(out)) + 1j * rng.standard_normal(np.shape(out))
        return u.astype(out.dtype) if isinstance(out, np.ndarray) else type(out)(u)
    if isinstance(out, np.ndarray):
        return rng.standard_normal(out.shape).astype(out.dtype)
    return type(out)(rng.standard_normal())


def check_grads(fn: Callable, *args: Any, wrt: int | Sequence[int] | None = None, order: int = 1,
                modes: Sequence[str] = ("rev",), eps: float = EPS, rtol: float = RTOL,
                atol: float = ATOL, directions: int = 2, seed: int = 0) -> None:
    """Check the derivatives of ``fn`` at ``args`` against central finite differences, and
    the compiled forward's value against a plain call of ``fn``.

    For a random output weighting ``u`` and random input directions ``v``, compares the
    derivative ``<u, J v>`` with ``(<u, f(x + eps v)> - <u, f(x - eps v)>) / (2 eps)`` (the
    moved input in float64), once per differentiable argument and ``directions`` times;
    they agree when ``|analytic - numeric| <= atol + rtol |numeric|``. ``modes`` names the
    derivatives checked: "rev" computes ``<J^T u, v>`` with ``vjp``, "fwd" ``<u, J v>``
    with ``jvp``, "batch" ``<u, J v>`` for ``directions`` directions of every argument at
    once, with the batched tangent function (``batched_jvp``; it raises ``NotBatchable``
    where there is none), "batch-rev" ``<J^T u, v>`` for ``directions`` cotangents ``u`` at
    once (``batched_vjp``, the same way). Differentiable arguments are the floating-point
    ones, or those of them whose positions ``wrt`` names.
    """
    if order not in (1, 2):
        raise ValueError(f"check_grads(order={order}): the orders checked are 1 and 2")
    unknown = set(modes) - {"rev", "fwd", "batch", "batch-rev"}
    if unknown or not modes:
        raise ValueError(f"check_grads(modes={tuple(modes)!r}): modes are 'rev', 'fwd', "
                         "'batch' and 'batch-rev'")
    rng = np.random.default_rng(seed)
    positions = range(len(args)) if wrt is None else ([wrt] if isinstance(wrt, int) else wrt)
    positions = [i % len(args) for i in positions if _is_float(args[i])]
    if not positions:
        raise ValueError("check_grads: no floating-point argument to check")
    plain = fn(*args)
    if order == 2:
        # the second derivatives are the first derivatives of the gradient, which is
        # checked against differences of the (checked) first-order gradient
        check_grads(fn, *args, wrt=positions, modes=modes, eps=eps, rtol=rtol, atol=atol,
                    directions=directions, seed=seed)
        scalar = fn if np.ndim(plain) == 0 else weighted(fn, _weight_like(plain, rng))
        for i in positions:
            check_grads(gradient(scalar, i), *args, wrt=positions, modes=modes, eps=eps,
                        rtol=rtol, atol=atol, directions=directions, seed=seed + 1 + i)
        return
    if "rev" in modes:
        out, pullback = _vjp(fn, args, {}, tuple(positions))
        _check_value(fn, out, plain)
        for _ in range(directions):
            u = _weight_like(out, rng)
            grads = pullback(u)
            for i in positions:
                _agrees(fn, args, i, grads[i], random_direction(args[i], rng), u, eps, rtol,
                        atol)
    if "fwd" in modes:
        for _ in range(directions):
            for i in positions:
                v = random_direction(args[i], rng)
                tangents = [None] * len(args)
                tangents[i] = v if not isinstance(args[i], np.ndarray) else v.astype(
                    args[i].dtype)
                out, out_dot = jvp(fn, args, tangents)
                _check_value(fn, out, plain)
                if np.shape(out_dot) != np.shape(out):
                    raise AssertionError(
                        f"the tangent of {_name(fn)} along argument {i} has shape "
                        f"{np.shape(out_dot)}, but its output has shape {np.shape(out)}")
                u = _weight_like(out, rng)
                analytic = float(np.real(np.sum(u * out_dot)))
                numeric = central_difference(fn, args, i, v, weight=u, eps=eps)
                if not np.isclose(analytic, numeric, rtol=rtol, atol=atol):
                    raise AssertionError(
                        f"the jvp of {_name(fn)} along argument {i} disagrees with finite "
                        f"differences: <u, J v> = {analytic!r}, numeric = {numeric!r}")
    if "batch" in modes:
        _check_batched(fn, args, plain, positions, rng, directions, eps, rtol, atol)
    if "batch-rev" in modes:
        _check_batched_rev(fn, args, plain, positions, rng, directions, eps, rtol, atol)


def _check_batched(fn: Callable, args: Sequence[Any], plain: Any, positions: list[int],
                   rng: np.random.Generator, directions: int, eps: float, rtol: float,
                   atol: float) -> None:
    """Row j of the batched tangent along directions v_j (every moving argument at once)
    against the central difference of f along v_j."""
    rows = [None] * len(args)
    for i in positions:
        rows[i] = np.stack([np.asarray(random_direction(args[i], rng))
                            for _ in range(directions)])
    out_dot = batched_jvp(fn, args, rows)
    if np.shape(out_dot) != (directions,) + np.shape(plain):
        raise AssertionError(
            f"the batched tangent of {_name(fn)} has shape {np.shape(out_dot)}, but "
            f"{directions} rows of its output have shape {(directions,) + np.shape(plain)}")
    for j in range(directions):
        u = _weight_like(plain, rng)
        analytic = float(np.real(np.sum(u * out_dot[j])))
        numeric = sum(central_difference(fn, args, i, rows[i][j] if isinstance(
            args[i], np.ndarray) else float(rows[i][j]), weight=u, eps=eps)
            for i in positions)
        if not np.isclose(analytic, numeric, rtol=rtol, atol=atol * len(positions)):
            raise AssertionError(
                f"row {j} of the batched jvp of {_name(fn)} disagrees with finite "
                f"differences: <u, J v> = {analytic!r}, numeric = {numeric!r}")


def _check_batched_rev(fn: Callable, args: Sequence[Any], plain: Any, positions: list[int],
                       rng: np.random.Generator, directions: int, eps: float, rtol: float,
                       atol: float) -> None:
    """Row j of the batched pullback of cotangents u_j against the central difference of
    <u_j, f> along a random direction of each argument."""
    weights = np.stack([np.asarray(_weight_like(plain, rng), dtype=float)
                        for _ in range(directions)])
    rows = batched_vjp(fn, args, weights, wrt=positions)
    for i in positions:
        if np.shape(rows[i]) != (directions,) + np.shape(args[i]):
            raise AssertionError(
                f"the batched pullback of {_name(fn)} gives argument {i} rows of shape "
                f"{np.shape(rows[i])}, not {(directions,) + np.shape(args[i])}")
        for j in range(directions):
            v = random_direction(args[i], rng)
            analytic = float(np.real(np.sum(rows[i][j] * v)))
            numeric = central_difference(fn, args, i, v, weight=weights[j], eps=eps)
            if not np.isclose(analytic, numeric, rtol=rtol, atol=atol):
                raise AssertionError(
                    f"row {j} of the batched vjp of {_name(fn)} wrt argument {i} disagrees "
                    f"with finite differences: <J^T u, v> = {analytic!r}, numeric = "
                    f"{numeric!r}")


def weighted(fn: Callable, weight: Any) -> Callable:
    """``np.sum(weight * fn(...))``, with ``fn``'s parameters, as a function with source (so
    that it can be differentiated, to any order)."""
    signature = inspect.signature(fn)
    bindings = {"fn_": fn, "weight_": weight}
    params, call = sourcefile.parameters(signature, bindings)
    name = sourcefile.identifier(f"weighted_{getattr(fn, '__name__', 'f')}", "weighted")
    return sourcefile.define(name, params, f"np.sum(weight_ * fn_({', '.join(call)}))", (),
                             bindings)


def _check_value(fn: Callable, out: Any, plain: Any) -> None:
    if not _is_float(out):
        raise TypeError(f"check_grads: {_name(fn)} returned {type(out).__name__}, "
                        "not a floating-point value")
    if np.shape(out) != np.shape(plain) or not np.allclose(out, plain, rtol=1e-12, atol=0.0,
                                                          equal_nan=True):
        raise AssertionError(
            f"the compiled forward of {_name(fn)} computes {out!r}, but calling it "
            f"computes {plain!r}")
