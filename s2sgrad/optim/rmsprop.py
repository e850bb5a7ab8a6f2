"""RMSprop, ``RMSprop``, with PyTorch's update formula: a running mean of squared gradients,
optionally centred, with ``eps`` added to its root, and optional momentum."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, _check


class RMSprop(Optimizer):
    """RMSprop (Hinton), PyTorch's formulation: ``eps`` is added to the root of the running
    mean square, ``centered`` subtracts the squared running mean of the gradient first, and
    ``momentum`` keeps a buffer of the scaled steps."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        _check("alpha value", alpha)
        super().__init__(params, {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                                  "centered": centered, "weight_decay": weight_decay,
                                  "maximize": maximize})

    def update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any],
               group: dict[str, Any]) -> None:
        alpha = group["alpha"]
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(p.data)
            if group["momentum"] > 0:
                state["momentum_buffer"] = np.zeros_like(p.data)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(p.data)
        state["step"] += 1
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p.data
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * g * g
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg += (g - grad_avg) * (1 - alpha)  # PyTorch's lerp
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += g / avg
            p.data -= group["lr"] * buf
        else:
            p.data -= group["lr"] * (g / avg)
