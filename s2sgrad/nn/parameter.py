"""``Parameter``, as PyTorch's ``torch.nn.parameter``: a leaf Tensor that requires grad by
default, a model's weight. A ``Module`` counts the Parameters among its attributes as its
parameters whether or not they require grad at the moment, so that one frozen now is still
an optimizer's to update once unfrozen (see ``nn.modules.module``)."""

from __future__ import annotations

from typing import Any

from ..autograd.printing import format_tensor
from ..autograd.tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor that requires grad by default: a model's weight."""

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        suffix = ["requires_grad=True"] if self._requires_grad else []
        return "Parameter containing:\n" + format_tensor(self.data, suffix)
