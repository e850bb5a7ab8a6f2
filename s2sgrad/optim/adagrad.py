"""Adagrad, ``Adagrad``, with PyTorch's update formula: the sum of squared gradients so far,
``eps`` added to its root, and a learning rate that decays with the step count."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, _check


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), PyTorch's formulation: each step divides the gradient by the
    root of the sum of its squares so far plus ``eps``, at a learning rate
    ``lr / (1 + (step - 1) * lr_decay)``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("lr_decay value", lr_decay)
        _check("weight_decay value", weight_decay)
        _check("initial_accumulator_value value", initial_accumulator_value)
        _check("epsilon value", eps)
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "maximize": maximize})

    def update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any],
               group: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["sum"] = np.full_like(p.data, group["initial_accumulator_value"])
        state["step"] += 1
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p.data
        lr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += g * g
        p.data -= lr * (g / (np.sqrt(state["sum"]) + group["eps"]))
