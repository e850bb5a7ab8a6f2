"""Tensor's selections by index and by mask, as PyTorch's: ``gather``, ``select``,
``index_select``, ``masked_select``, ``masked_fill`` and ``where``. Each checks its index or
mask as PyTorch does (an integer index, a bool mask, its dimensions), then takes the entries
through an index of the Tensor (``t[...]``) or a NumPy function of it through ops.py, so that
the entries taken get their gradient.

    t.index_select(1, idx)   ->  t[:, idx]
    t.masked_fill(m, v)      ->  _ops.numpy_call(np.where, (m, v, t), {})

``Indexing`` is a base of ``Tensor`` and holds no state (``__slots__ = ()``).

In the Tensor layer, below tensor.py: imports printing.py only. tensor.py, which imports it,
binds in it what it reads of the modules above: ``_ops`` (ops.py's operations, through
``bind_ops``) and ``Tensor``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .printing import dtype_name

# Bound by tensor.py: the operations on Tensors (ops.py's), and the class.
_ops: Any = None
Tensor: Any = None


class Indexing:
    """Tensor's selections by index and by mask."""

    __slots__ = ()

    def gather(self, dim: int, index: Any) -> Tensor:
        """``out[i][j] = t[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims);
        ``index`` may be smaller than ``t`` along every dimension."""
        index = index._data if isinstance(index, Tensor) else np.asarray(index)
        if index.dtype.kind not in "iu":
            raise RuntimeError(f"gather(): Expected dtype int64 for index, got {index.dtype}")
        if index.ndim != self._data.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as "
                               "input tensor")
        dim = dim % max(self._data.ndim, 1)
        if self._data.ndim:
            window = tuple(slice(None) if d == dim else slice(0, index.shape[d])
                           for d in range(self._data.ndim))
            source = self[window] if any(
                index.shape[d] != self._data.shape[d] for d in range(self._data.ndim)
                if d != dim) else self
        else:
            source = self
        return _ops.numpy_call(np.take_along_axis, (source, index, dim), {})

    def select(self, dim: int, index: int) -> Tensor:
        """The slice at ``index`` along ``dim``, without that dimension (a view)."""
        return self[(slice(None),) * (dim % self._data.ndim) + (index,)]

    def index_select(self, dim: int, index: Any) -> Tensor:
        """The entries at the positions ``index`` (a vector of integers) along ``dim``."""
        index = _index_array(index)
        if index.ndim > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        if index.dtype.kind not in "iu":
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        return self[(slice(None),) * (dim % max(self._data.ndim, 1)) + (index.reshape(-1),)]

    def masked_select(self, mask: Any) -> Tensor:
        """The entries where ``mask`` (broadcast with this Tensor) is True, as a vector."""
        mask = _index_array(mask)
        if mask.dtype != np.bool_:
            raise RuntimeError(f"masked_select: expected BoolTensor for mask, got "
                               f"{dtype_name(mask.dtype)}")
        shape = np.broadcast_shapes(self._data.shape, mask.shape)
        x = self if self._data.shape == shape else self.expand(shape)
        return x[np.broadcast_to(mask, shape)]

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """A copy with ``value`` where ``mask`` (broadcast to this shape) is True; a Tensor
        ``value`` (0-d) gets the gradient of the filled elements."""
        mask = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
        if mask.dtype != np.bool_:
            raise RuntimeError(f"masked_fill only supports boolean masks, but got mask with "
                               f"dtype {mask.dtype}")
        if isinstance(value, Tensor):
            value = value.to(self._data.dtype)
        else:
            value = np.asarray(value, dtype=self._data.dtype)
        result = _ops.numpy_call(np.where, (mask, value, self), {})
        if result.shape != self.shape:
            raise RuntimeError(f"masked_fill: the mask of shape {tuple(mask.shape)} does not "
                               f"broadcast to the tensor's shape {tuple(self.shape)}")
        return result

    def where(self, condition: Any, other: Any) -> Tensor:
        """``self`` where ``condition`` is True, else ``other`` (broadcast together)."""
        condition = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
        return _ops.numpy_call(np.where, (condition.astype(bool), self, other), {})


def _index_array(index: Any) -> np.ndarray:
    return index._data if isinstance(index, Tensor) else np.asarray(index)
