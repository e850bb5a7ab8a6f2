"""Adam and AdamW, with PyTorch's update formulas: bias-corrected moments, optional AMSGrad,
and weight decay either added to the gradient (``Adam``) or applied to the parameter before
the step (``AdamW``, and ``Adam(decoupled_weight_decay=True)``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, _check


class Adam(Optimizer):
    """Adam (Kingma & Ba), with PyTorch's bias correction, L2 ``weight_decay`` added to the
    gradient (or, with ``decoupled_weight_decay``, applied to the parameter as AdamW does), and
    optional AMSGrad."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False,
                 maximize: bool = False, decoupled_weight_decay: bool = False) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    def update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any],
               group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            if group.get("decoupled_weight_decay"):
                p.data *= 1 - group["lr"] * group["weight_decay"]
            else:
                g = g + group["weight_decay"] * p.data
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p.data)
            state["exp_avg_sq"] = np.zeros_like(p.data)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(p.data)
        state["step"] += 1
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (g - m) * (1 - beta1)  # PyTorch's lerp: m + (1 - beta1) * (g - m)
        v *= beta2
        v += (1 - beta2) * g * g
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
            v = state["max_exp_avg_sq"]
        step = state["step"]
        bias1 = 1 - beta1 ** step
        bias2_sqrt = (1 - beta2 ** step) ** 0.5
        denom = np.sqrt(v) / bias2_sqrt + group["eps"]
        p.data -= (group["lr"] / bias1) * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): each step first shrinks the
    parameter by ``lr * weight_decay``, and the gradient is left as it is."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize, decoupled_weight_decay=True)
