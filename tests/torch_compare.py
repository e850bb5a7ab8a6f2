"""One check, shared by the Tensor test modules: a function applied to an s2sgrad Tensor and
to a torch tensor holding the same values gives the same shape, dtype and values, and the
same gradient of a randomly weighted sum of its result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from s2sgrad.autograd.tensor import tensor


def assert_like_torch(torch: Any, fn: Callable, value: np.ndarray, rng: np.random.Generator,
                      tol: float) -> None:
    """``tol``: relative and absolute tolerance of the values; the gradients agree to 1e-6
    relative, 1e-12 absolute."""
    x = tensor(value, requires_grad=True)
    tx = torch.tensor(value, requires_grad=True)
    y, ty = fn(x), fn(tx)
    assert tuple(y.shape) == tuple(ty.shape)
    assert str(y.dtype) == str(ty.dtype) and y.dtype == ty.dtype
    assert y.requires_grad and ty.requires_grad
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    w = rng.standard_normal(tuple(ty.shape))
    (y * tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-12)
