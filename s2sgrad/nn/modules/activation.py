"""Activations as layers, as PyTorch's ``torch.nn.modules.activation``: each ``forward``
calls its function in ``nn.functional`` (``ReLU``'s is ``relu``, ``LogSoftmax``'s
``log_softmax``) with the settings its constructor took. ``inplace=True`` is accepted and
shown where PyTorch takes it, and the result is a new Tensor all the same."""

from __future__ import annotations

from typing import Any

from ...autograd.tensor import Tensor
from .. import functional
from .module import Module


class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, input: Any) -> Tensor:
        return functional.relu(input)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        self.negative_slope = negative_slope
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                         else "")

    def forward(self, input: Any) -> Tensor:
        return functional.leaky_relu(input, self.negative_slope)


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")

    def forward(self, input: Any) -> Tensor:
        return functional.elu(input, self.alpha)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        self.beta = beta
        self.threshold = threshold

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"

    def forward(self, input: Any) -> Tensor:
        return functional.softplus(input, self.beta, self.threshold)


class SiLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, input: Any) -> Tensor:
        return functional.silu(input)


class Tanh(Module):
    def forward(self, input: Any) -> Tensor:
        return functional.tanh(input)


class Sigmoid(Module):
    def forward(self, input: Any) -> Tensor:
        return functional.sigmoid(input)


class GELU(Module):
    """``x * Phi(x)`` (exact, through erf); ``approximate="tanh"`` for the tanh form."""

    def __init__(self, approximate: str = "none") -> None:
        self.approximate = approximate

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"

    def forward(self, input: Any) -> Tensor:
        return functional.gelu(input, approximate=self.approximate)


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

    def forward(self, input: Any) -> Tensor:
        return functional.softmax(input, self.dim)


class LogSoftmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

    def forward(self, input: Any) -> Tensor:
        return functional.log_softmax(input, self.dim)
