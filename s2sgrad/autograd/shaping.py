"""Tensor's methods of shape and layout, as PyTorch's: the same entries in another shape
(``reshape``, ``flatten``, ``squeeze``, ``permute``, ``transpose``, ``expand``...), in pieces
(``split``, ``chunk``, ``unbind``), repeated (``repeat``, ``repeat_interleave``), reordered
(``flip``, ``roll``), and the diagonals and triangles of matrices (``diag``, ``triu``,
``tril``). Each is a NumPy function of the Tensor through ops.py (or an index, or another of
these methods), so it stays in the graph, and is a view where NumPy's result is one.

    t.reshape(2, 3)    ->  _ops.numpy_call(np.reshape, (t, (2, 3)), {})
    t.transpose(0, 1)  ->  _ops.numpy_call(np.swapaxes, (t, 0, 1), {})

``Shaping`` is a base of ``Tensor`` and holds no state (``__slots__ = ()``); ``_shape`` and
``_axis`` read sizes and dimensions as PyTorch writes them, for the creators and the other
bases too.

In the Tensor layer, below tensor.py: imports nothing of s2sgrad. tensor.py, which imports
it, binds in it what it reads of the modules above: ``_ops`` (ops.py's operations, through
``bind_ops``) and ``Tensor``.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

# Bound by tensor.py: the operations on Tensors (ops.py's), and the class.
_ops: Any = None
Tensor: Any = None


class Shaping:
    """Tensor's methods of shape and layout."""

    __slots__ = ()

    def reshape(self, *shape: Any) -> Tensor:
        """A Tensor with the same data and a new shape: ``t.reshape(2, 3)`` or ``((2, 3))``."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return _ops.numpy_call(np.reshape, (self, tuple(shape)), {})

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """The dimensions ``start_dim`` to ``end_dim`` (both included) made one."""
        shape = self._data.shape
        if not shape:
            return self.reshape(1)
        start, end = start_dim % len(shape), end_dim % len(shape)
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after "
                               "end_dim")
        return self.reshape(*shape[:start], math.prod(shape[start:end + 1]), *shape[end + 1:])

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        """The dimension ``dim`` split into ``sizes`` (one of which may be -1)."""
        shape = self._data.shape
        dim = dim % max(len(shape), 1)
        return self.reshape(*shape[:dim], *sizes, *shape[dim + 1:])

    def view_as(self, other: Tensor) -> Tensor:
        """``self.view(other.shape)``."""
        return self.reshape(other._data.shape)

    def contiguous(self) -> Tensor:
        """``self``: its values are read the same whatever the layout of its memory."""
        return self

    def squeeze(self, dim: int | None = None) -> Tensor:
        return _ops.numpy_call(np.squeeze, (self,), {} if dim is None else {"axis": dim})

    def unsqueeze(self, dim: int) -> Tensor:
        return _ops.numpy_call(np.expand_dims, (self, dim), {})

    @property
    def T(self) -> Tensor:
        """The dimensions reversed, like ``ndarray.T``."""
        return _ops.numpy_call(np.transpose, (self,), {})

    def t(self) -> Tensor:
        return self.T

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions (PyTorch's meaning, not NumPy's)."""
        return _ops.numpy_call(np.swapaxes, (self, dim0, dim1), {})

    def permute(self, *dims: Any) -> Tensor:
        if len(dims) == 1 and not isinstance(dims[0], int):
            dims = tuple(dims[0])
        return _ops.numpy_call(np.transpose, (self, tuple(dims)), {})

    def expand(self, *sizes: Any) -> Tensor:
        """A view repeating dimensions of size 1 (and adding leading ones) up to ``sizes``;
        -1 keeps a dimension's size."""
        if len(sizes) == 1 and not isinstance(sizes[0], int):
            sizes = tuple(sizes[0])
        lead = len(sizes) - self._data.ndim
        if lead < 0:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(sizes)}) must be greater or "
                f"equal to the number of dimensions in the tensor ({self._data.ndim})")
        shape = tuple(self._data.shape[i - lead] if s == -1 and i >= lead else s
                      for i, s in enumerate(sizes))
        if any(s < 0 for s in shape):
            raise RuntimeError(f"expand: -1 is not allowed for a new leading dimension: {sizes}")
        return _ops.numpy_call(np.broadcast_to, (self, shape), {})

    # -- reorderings, pieces, repeats --------------------------------------------------------

    def flip(self, *dims: Any) -> Tensor:
        """The order of the entries reversed along ``dims`` (``t.flip(0)``, ``t.flip([0,
        1])``, ``t.flip(0, 1)``); a copy, as in PyTorch."""
        axes = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], Sequence) else dims
        return _ops.numpy_call(np.flip, (self,), {"axis": tuple(axes)}).clone()

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        """The entries shifted by ``shifts`` along ``dims``, wrapping around; without
        ``dims``, those of the flattened Tensor (the shape is kept)."""
        kwargs = {} if dims is None else {"axis": _axis(dims)}
        return _ops.numpy_call(np.roll, (self, _axis(shifts)), kwargs)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """Views of consecutive pieces along ``dim``: of ``split_size`` entries each (the last
        one shorter), or of the sizes listed."""
        n = self._data.shape[dim]
        if isinstance(split_size_or_sections, Sequence):
            sizes = [operator.index(s) for s in split_size_or_sections]
            if sum(sizes) != n or any(s < 0 for s in sizes):
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                                   f"(input tensor's size at dimension {dim}), but got "
                                   f"split_sizes={sizes}")
        else:
            size = operator.index(split_size_or_sections)
            if size < 0:
                raise RuntimeError(f"split expects split_size be non-negative, but got "
                                   f"split_size={size}")
            if size == 0 and n:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                                   f"dimension size of {n}")
            sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
        lead = (slice(None),) * (dim % self._data.ndim)
        bounds = itertools.pairwise(itertools.accumulate(sizes, initial=0))
        return tuple(self[(*lead, slice(a, b))] for a, b in bounds)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """At most ``chunks`` views of equal size along ``dim`` (the last one may be shorter,
        and there are fewer when the size does not allow as many)."""
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = self._data.shape[dim]
        if n == 0:
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """The slices along ``dim``, each without that dimension (views)."""
        return tuple(self.select(dim, i) for i in range(self._data.shape[dim]))

    def repeat(self, *sizes: Any) -> Tensor:
        """The Tensor tiled ``sizes[d]`` times along each dimension ``d`` (new leading
        dimensions when ``sizes`` has more)."""
        reps = _shape(sizes)
        if len(reps) < self._data.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        return _ops.numpy_call(np.tile, (self, reps), {})

    def repeat_interleave(self, repeats: Any, dim: int | None = None, *,
                          output_size: int | None = None) -> Tensor:
        """Each entry repeated ``repeats`` times (or ``repeats[i]`` times for entry ``i``)
        along ``dim``; without ``dim``, those of the flattened Tensor."""
        if isinstance(repeats, Tensor):
            repeats = repeats._data
        return _ops.numpy_call(np.repeat, (self, repeats), {} if dim is None else {"axis": dim})

    # -- diagonals, triangles ----------------------------------------------------------------

    def diag(self, diagonal: int = 0) -> Tensor:
        """Of a vector, the square matrix with it on the ``diagonal``-th diagonal; of a
        matrix, that diagonal as a vector (a copy)."""
        if self._data.ndim == 1:
            return _ops.numpy_call(np.diag, (self,), {"k": diagonal})
        if self._data.ndim != 2:
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self._data.ndim}D")
        rows, cols = self._data.shape
        start_row, start_col = max(-diagonal, 0), max(diagonal, 0)
        i = np.arange(max(0, min(rows - start_row, cols - start_col)))
        return self[i + start_row, i + start_col]

    def triu(self, diagonal: int = 0) -> Tensor:
        """The entries on and above the ``diagonal``-th diagonal of each matrix (the last
        two dimensions), zeros below."""
        return _triangle(self, np.triu, diagonal, "triu")

    def tril(self, diagonal: int = 0) -> Tensor:
        """The entries on and below the ``diagonal``-th diagonal, zeros above."""
        return _triangle(self, np.tril, diagonal, "tril")


def _triangle(t: Tensor, func: Any, diagonal: int, name: str) -> Tensor:
    if t._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return _ops.numpy_call(func, (t,), {"k": diagonal})


def _axis(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, list) else dim


def _shape(size: tuple) -> tuple[int, ...]:
    """``(2, 3)`` from ``(2, 3)``, ``((2, 3),)`` or ``([2, 3],)`` (sizes written either way)."""
    if len(size) == 1 and isinstance(size[0], Sequence):
        size = tuple(size[0])
    return tuple(operator.index(n) for n in size)
