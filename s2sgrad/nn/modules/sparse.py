"""``Embedding``, as PyTorch's ``torch.nn.modules.sparse``: a table of vectors looked up by
integer indices (``functional.embedding``); the row ``padding_idx`` gets no gradient, and
starts at zero unless the table is given."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autograd import grad_mode
from ...autograd.tensor import Tensor
from .. import functional, init
from ..parameter import Parameter
from .module import Module, _float_dtype


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, initialised N(0, 1),
    looked up by integer indices. The row ``padding_idx`` starts at zero and gets no
    gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 _weight: Any = None, _freeze: bool = False, dtype: Any = None) -> None:
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(np.empty((num_embeddings, embedding_dim),
                                             dtype=_float_dtype(dtype)),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            data = _weight.data if isinstance(_weight, Tensor) else np.asarray(_weight)
            if data.shape != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(data, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight[self.padding_idx] = 0.0

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None) -> Embedding:
        rows, cols = np.shape(embeddings.data if isinstance(embeddings, Tensor) else embeddings)
        return cls(rows, cols, padding_idx, _weight=embeddings, _freeze=freeze)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text if self.padding_idx is None else f"{text}, padding_idx={self.padding_idx}"

    def forward(self, input: Any) -> Tensor:
        return functional.embedding(input, self.weight, self.padding_idx)
