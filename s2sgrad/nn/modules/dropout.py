"""``Dropout``, as PyTorch's ``torch.nn.modules.dropout``: ``functional.dropout`` while the
module is training, the identity after ``eval()``."""

from __future__ import annotations

from typing import Any

from ...autograd.tensor import Tensor
from .. import functional
from .module import Module


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` (drawn from the default
    generator, which ``s2sgrad.manual_seed`` resets) and scale the rest by ``1 / (1 - p)``; in
    eval mode, the identity."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        if p < 0.0 or p > 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

    def forward(self, input: Any) -> Tensor:
        return functional.dropout(input, self.p, self.training)
