"""Losses as layers, as PyTorch's ``torch.nn.modules.loss``: each keeps its settings
(``reduction``, ``weight``, ...) and calls the function of ``nn.functional`` that
computes it in ``forward(input, target)``. Constructors whose PyTorch signature still takes
``size_average`` and ``reduce`` take them too, read into ``reduction`` with PyTorch's
warning."""

from __future__ import annotations

from typing import Any

from ...autograd.tensor import Tensor
from .. import functional
from .module import Module


class MSELoss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        self.reduction = reduction

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.mse_loss(input, target, self.reduction)


class L1Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        self.reduction = functional._legacy_reduction(size_average, reduce, reduction)

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        self.reduction = functional._legacy_reduction(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.smooth_l1_loss(input, target, reduction=self.reduction,
                                         beta=self.beta)


class HuberLoss(Module):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        self.reduction = reduction
        self.delta = delta

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(Module):
    """``functional.binary_cross_entropy``; ``weight`` is a buffer, as in PyTorch."""

    def __init__(self, weight: Any = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        self.register_buffer("weight", None if weight is None else functional._t(weight))
        self.reduction = functional._legacy_reduction(size_average, reduce, reduction)

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.binary_cross_entropy(input, target, self.weight,
                                               reduction=self.reduction)


class NLLLoss(Module):
    def __init__(self, weight: Any = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.nll_loss(input, target, self.weight, self.ignore_index,
                                   self.reduction)


class CrossEntropyLoss(Module):
    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.cross_entropy(input, target, self.weight, self.ignore_index,
                                        self.reduction, self.label_smoothing)


class BCEWithLogitsLoss(Module):
    def __init__(self, weight: Any = None, reduction: str = "mean",
                 pos_weight: Any = None) -> None:
        self.weight = weight
        self.reduction = reduction
        self.pos_weight = pos_weight

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.binary_cross_entropy_with_logits(input, target, self.weight,
                                                           self.reduction, self.pos_weight)
