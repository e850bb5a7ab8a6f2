"""Finite-difference checks shared by the catalogue runners (straight-line, control flow)."""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

EPS = 1e-6  # the finite-difference step, and the tolerances of check_grads
RTOL = 1e-5
ATOL = 1e-7


def assert_unchanged(args: Sequence[Any], before: Sequence[Any], what: str) -> None:
    for i, (now, then) in enumerate(zip(args, before, strict=True)):
        if isinstance(now, np.ndarray):
            assert now.dtype == then.dtype and np.array_equal(now, then), \
                f"{what} modified its argument {i} in place"


def direction(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, float):
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(value))


def shifted(args: Sequence[Any], i: int, step: Any) -> list[Any]:
    out = list(args)
    out[i] = args[i] + step
    return out


def assert_matches_differences(fn: Callable, args: Sequence[Any], i: int, grad: Any,
                                rng: np.random.Generator) -> None:
    """<grad, v> against a central difference of fn along a random v (a scalar fn)."""
    for _ in range(2):
        v = direction(args[i], rng)
        numeric = (fn(*shifted(args, i, EPS * v)) - fn(*shifted(args, i, -EPS * v))) / (2 * EPS)
        analytic = np.sum(grad * v)
        assert np.isclose(analytic, numeric, rtol=RTOL, atol=ATOL), (
            f"gradient of {fn.__name__} wrt argument {i}: <grad, v> = {analytic!r}, "
            f"finite differences = {numeric!r}")
