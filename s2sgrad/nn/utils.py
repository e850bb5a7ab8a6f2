"""Utilities over parameters' gradients, reached as ``nn.utils`` (PyTorch's ``torch.nn.utils``).

    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()

``clip_grad_norm_`` scales the gradients in place (bumping their version counters, as any
in-place change does) and returns the total norm they had, a 0-d Tensor.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..autograd import grad_mode
from ..autograd.tensor import Tensor, tensor


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients so that their total norm is at most ``max_norm``; returns the norm.

    The total norm is the ``norm_type``-norm (``float("inf")`` for the largest magnitude) of
    all the gradients as one vector; parameters whose ``.grad`` is None are skipped. Each
    gradient is multiplied by ``min(max_norm / (total_norm + 1e-6), 1)``, as in PyTorch. A
    non-finite total norm raises RuntimeError if ``error_if_nonfinite``; otherwise the
    gradients are scaled by it anyway (to NaN or zero).
    """
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return tensor(0.0)
    norm_type = float(norm_type)
    norms = [np.linalg.norm(g.data.ravel(), ord=norm_type) for g in grads]
    dtype = np.result_type(*(g.data.dtype for g in grads))
    total = np.asarray(np.linalg.norm(np.array(norms, dtype=dtype), ord=norm_type), dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    coef = np.minimum(float(max_norm) / (total + 1e-6), 1.0).astype(dtype)
    with grad_mode.no_grad(), np.errstate(invalid="ignore"):  # inf * 0 is NaN, silently
        for g in grads:
            g.mul_(coef)
    return tensor(total, dtype=dtype)
