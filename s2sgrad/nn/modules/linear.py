"""``Linear`` (``y = x @ weight.T + bias``, initialised as PyTorch initialises it) and
``Identity``, as PyTorch's ``torch.nn.modules.linear``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autograd.tensor import Tensor
from .. import functional, init
from ..parameter import Parameter
from .module import Module, _float_dtype


class Linear(Module):
    """``y = x @ weight.T + bias``; ``weight`` has shape ``(out_features, in_features)``.

    Initialised as PyTorch does: ``weight`` by ``init.kaiming_uniform_(a=sqrt(5))``, that is
    U(-1/sqrt(in_features), 1/sqrt(in_features)), and ``bias`` from the same range."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: Any = None) -> None:
        self.in_features = in_features
        self.out_features = out_features
        dtype = _float_dtype(dtype)
        self.weight = Parameter(np.empty((out_features, in_features), dtype=dtype))
        self.bias = Parameter(np.empty(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")

    def forward(self, input: Any) -> Tensor:
        return functional.linear(input, self.weight, self.bias)


class Identity(Module):
    """The input itself; takes (and ignores) any arguments, as PyTorch's does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def forward(self, input: Any) -> Any:
        return input
