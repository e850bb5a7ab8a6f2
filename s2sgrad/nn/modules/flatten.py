"""``Flatten`` and ``Unflatten``, as PyTorch's ``torch.nn.modules.flatten``: ``Tensor.flatten``
and ``Tensor.unflatten`` as layers."""

from __future__ import annotations

from typing import Any

from ...autograd.tensor import Tensor
from .. import functional
from .module import Module


class Flatten(Module):
    """``input.flatten(start_dim, end_dim)``: by default every dimension but the first (the
    batch) made one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        self.start_dim = start_dim
        self.end_dim = end_dim

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"

    def forward(self, input: Any) -> Tensor:
        return functional._t(input).flatten(self.start_dim, self.end_dim)


class Unflatten(Module):
    """``input.unflatten(dim, unflattened_size)``: the dimension ``dim`` split in several."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        self.dim = dim
        self.unflattened_size = unflattened_size

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

    def forward(self, input: Any) -> Tensor:
        return functional._t(input).unflatten(self.dim, self.unflattened_size)
