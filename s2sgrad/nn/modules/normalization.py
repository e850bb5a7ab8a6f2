"""``LayerNorm``, as PyTorch's ``torch.nn.modules.normalization``: ``functional.layer_norm``
over the trailing ``normalized_shape`` dimensions, with a learned ``weight`` (ones) and
``bias`` (zeros) when ``elementwise_affine``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autograd.tensor import Tensor
from .. import functional
from ..parameter import Parameter
from .module import Module, _float_dtype


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dimensions, then scale by ``weight``
    (ones) and shift by ``bias`` (zeros) when ``elementwise_affine``."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, dtype: Any = None) -> None:
        shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                 else tuple(normalized_shape))
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        dtype = _float_dtype(dtype)
        if elementwise_affine:
            self.weight = Parameter(np.ones(shape, dtype=dtype))
            self.bias = Parameter(np.zeros(shape, dtype=dtype)) if bias else None
        else:
            self.weight = self.bias = None

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")

    def forward(self, input: Any) -> Tensor:
        return functional.layer_norm(input, self.normalized_shape, self.weight, self.bias,
                                     self.eps)
