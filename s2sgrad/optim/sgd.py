"""Stochastic gradient descent, ``SGD``, with PyTorch's update formula: momentum, dampening,
weight decay and Nesterov momentum as options, the first step's momentum buffer being the
gradient itself."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, _check


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, dampening, weight decay and
    Nesterov momentum (PyTorch's formulation: the first step's buffer is the gradient)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize})

    def update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any],
               group: dict[str, Any]) -> None:
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p.data
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(g, copy=True)
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * g
            g = g + momentum * buf if group["nesterov"] else buf
        p.data -= group["lr"] * g
