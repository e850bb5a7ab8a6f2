"""Finite-difference checking of Tensor gradients, for the Tensor-layer tests (and its tests).

``check_backward(f, *arrays)`` makes leaf Tensors of the float64 ``arrays``, runs ``f`` on
them, back-propagates a random cotangent, and compares every leaf's ``.grad`` with central
differences of the same weighted output, element by element (``s2sgrad.testing``'s
``numeric_gradient``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from s2sgrad.autograd.grad_mode import no_grad
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.testing import numeric_gradient


def check_backward(f: Callable[..., Tensor], *arrays: np.ndarray, seed: int = 0,
                   rtol: float = 1e-6, atol: float = 1e-8) -> list[np.ndarray]:
    """Assert that ``backward()`` through ``f`` matches finite differences; return the grads."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    leaves = [tensor(a, requires_grad=True) for a in arrays]
    out = f(*leaves)
    u = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(tensor(u))

    def weighted(*values: np.ndarray) -> float:
        with no_grad():
            return float(np.sum(u * f(*[tensor(v) for v in values]).data))

    grads = []
    for i, leaf in enumerate(leaves):
        assert leaf.grad is not None, f"no gradient reached input {i}"
        expected = numeric_gradient(weighted, arrays, i)
        np.testing.assert_allclose(leaf.grad.data, expected, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i}")
        grads.append(leaf.grad.data)
    return grads


def test_check_backward_catches_a_wrong_gradient() -> None:
    x = np.array([1.0, 2.0])

    def wrong(t: Tensor) -> Tensor:
        # x * x.detach() has gradient x, not 2x: backward and finite differences disagree.
        return t * t.detach()

    with pytest.raises(AssertionError, match="gradient of input 0"):
        check_backward(wrong, x)
