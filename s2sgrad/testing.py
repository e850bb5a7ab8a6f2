"""Gradient checking by central finite differences in random directions.

``check_grads(f, *args)`` compares the compiled vector-Jacobian product of ``f`` with a
central difference of ``f`` along a random direction, for every floating-point argument
(or those named by ``wrt``), in float64. It raises AssertionError with the two numbers when
they disagree, so it can be used directly in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import vjp


def _is_float(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return True
    return isinstance(value, (np.ndarray, np.floating)) and np.asarray(value).dtype.kind == "f"


def _random_like(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, float):
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(value)).astype(np.asarray(value).dtype)


def _add(value: Any, direction: Any, step: float) -> Any:
    if isinstance(value, float):
        return value + step * direction
    return np.asarray(value) + step * direction


def check_grads(fn: Callable, *args: Any, wrt: int | Sequence[int] | None = None, order: int = 1,
                eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7, directions: int = 2,
                seed: int = 0) -> None:
    """Check the gradient of ``fn`` at ``args`` against central finite differences, and
    the compiled forward's value against a plain call of ``fn``.

    For a random output weighting ``u`` and random input directions ``v``, compares
    ``<vjp(u), v>`` with ``(<u, f(x + eps v)> - <u, f(x - eps v)>) / (2 eps)``, once per
    differentiable argument and ``directions`` times. Use float64 inputs.
    """
    if order != 1:
        raise ValueError(f"check_grads(order={order}): only first-order checks are available; "
                         "higher orders need differentiating the generated adjoint")
    rng = np.random.default_rng(seed)
    positions = range(len(args)) if wrt is None else ([wrt] if isinstance(wrt, int) else wrt)
    positions = [i for i in positions if _is_float(args[i])]
    if not positions:
        raise ValueError("check_grads: no floating-point argument to check")
    out, pullback = vjp(fn, *args)
    if not _is_float(out) and not isinstance(out, np.floating):
        raise TypeError(f"check_grads: {fn.__name__} returned {type(out).__name__}, "
                        "not a floating-point value")
    plain = fn(*args)
    if np.shape(out) != np.shape(plain) or not np.allclose(out, plain, rtol=1e-12, atol=0.0,
                                                          equal_nan=True):
        raise AssertionError(
            f"the compiled forward of {fn.__name__} computes {out!r}, but calling it "
            f"computes {plain!r}")
    for _ in range(directions):
        u = _random_like(out if isinstance(out, np.ndarray) else float(out), rng)
        grads = pullback(u if isinstance(out, np.ndarray) else type(out)(u))
        for i in positions:
            v = _random_like(args[i], rng)
            plus = list(args)
            minus = list(args)
            plus[i] = _add(args[i], v, eps)
            minus[i] = _add(args[i], v, -eps)
            numeric = (np.sum(u * fn(*plus)) - np.sum(u * fn(*minus))) / (2 * eps)
            analytic = np.sum(grads[i] * v)
            if np.shape(grads[i]) != np.shape(args[i]):
                raise AssertionError(
                    f"gradient of {fn.__name__} wrt argument {i} has shape "
                    f"{np.shape(grads[i])}, but the argument has shape {np.shape(args[i])}")
            if not np.isclose(analytic, numeric, rtol=rtol, atol=atol):
                raise AssertionError(
                    f"gradient of {fn.__name__} wrt argument {i} disagrees with finite "
                    f"differences: <grad, v> = {analytic!r}, numeric = {numeric!r}")
