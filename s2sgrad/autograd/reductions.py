"""Tensor's reductions and statistics, as PyTorch's: sums, means and products along
dimensions (``sum``, ``mean``, ``prod``, ``all``, ``any``), extrema and where they are
(``max``, ``min``, ``amax``, ``amin``, ``argmax``, ``argmin``), ``softmax``, ``log_softmax``,
``logsumexp``, ``var``, ``std``, ``norm``, running sums and products (``cumsum``,
``cumprod``), and orderings (``sort``, ``topk``). Those with a gradient run through ops.py
(``_ops.reduction``, ``_ops.numpy_call``), so they are in the graph; indices and tests
(``argmax``, ``all``, the ``indices`` of ``max(dim)`` and ``sort``) are int64 or bool Tensors
outside it. ``max(dim)``, ``min(dim)``, ``sort`` and ``topk`` return ``(values, indices)``,
named tuples as PyTorch's (``ReturnMax``...).

    t.sum(0)               ->  _ops.reduction(np.sum, t, 0, False, None, None)
    t.var(unbiased=False)  ->  _ops.numpy_call(np.var, (t,), {"ddof": 0})
    t.max(0)               ->  ReturnMax(values, indices): t's entries at the indices of
                               np.argmax(t.data, axis=0), and those indices

``Reductions`` is a base of ``Tensor`` and holds no state (``__slots__ = ()``).

In the Tensor layer, below tensor.py: imports shaping.py and conversions.py. tensor.py, which
imports it, binds in it what it reads of the modules above: ``_ops`` (ops.py's operations,
through ``bind_ops``), ``Tensor`` and ``_make``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .conversions import _floating
from .shaping import _axis

# Bound by tensor.py: the operations on Tensors (ops.py's), the class, and ``_make`` (a
# Tensor around an array, outside the graph).
_ops: Any = None
Tensor: Any = None
_make: Any = None


class Reductions:
    """Tensor's reductions and statistics."""

    __slots__ = ()

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            axis: Any = None, keepdims: bool | None = None) -> Tensor:
        """Sum over ``dim`` (PyTorch's name) or ``axis`` (NumPy's); all axes by default.
        With ``dtype``, the Tensor is converted to it first (in the graph), as in PyTorch."""
        x = self if dtype is None else self.to(dtype)
        return _ops.reduction(np.sum, x, dim, keepdim, axis, keepdims)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
             axis: Any = None, keepdims: bool | None = None) -> Tensor:
        """Mean over ``dim`` / ``axis``; all axes by default; ``dtype`` as for ``sum``."""
        x = self if dtype is None else self.to(dtype)
        return _ops.reduction(np.mean, x, dim, keepdim, axis, keepdims)

    def prod(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.reduction(np.prod, self, dim, keepdim, None, None)

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """Whether every element (along ``dim``) is nonzero: a bool Tensor, no gradient."""
        return _make(np.asarray(np.all(self._data, axis=_axis(dim), keepdims=keepdim)))

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """Whether some element (along ``dim``) is nonzero: a bool Tensor, no gradient."""
        return _make(np.asarray(np.any(self._data, axis=_axis(dim), keepdims=keepdim)))

    # -- extrema -----------------------------------------------------------------------------

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """The index of the (first) largest element, of the flattened Tensor without ``dim``:
        int64, no gradient."""
        return _make(np.asarray(np.argmax(self._data, axis=dim, keepdims=keepdim),
                                dtype=np.int64))

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """The index of the (first) smallest element; as ``argmax``."""
        return _make(np.asarray(np.argmin(self._data, axis=dim, keepdims=keepdim),
                                dtype=np.int64))

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        """Without ``dim``, the largest element (its gradient shared evenly by ties); with
        ``dim``, ``(values, indices)`` along it (the gradient to the index returned); with a
        Tensor, the elementwise maximum."""
        return _extremum(self, dim, keepdim, np.max, np.argmax, np.maximum, ReturnMax)

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        """As ``max``, for the smallest."""
        return _extremum(self, dim, keepdim, np.min, np.argmin, np.minimum, ReturnMin)

    def amax(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        """The largest entries along ``dim`` (all by default); the gradient is shared evenly
        by equal ones."""
        return _ops.reduction(np.amax, self, _all_if_empty(dim), keepdim, None, None)

    def amin(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        """The smallest entries along ``dim``; as ``amax``."""
        return _ops.reduction(np.amin, self, _all_if_empty(dim), keepdim, None, None)

    # -- normalisations, statistics ----------------------------------------------------------

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Tensor:
        """``log(exp(t).sum(dim))``, computed after subtracting the maximum along ``dim``
        (a constant), so that large entries do not overflow."""
        x = _floating(self)
        axes = _axis(dim)
        top = np.max(x._data, axis=axes, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)  # all -inf (or inf): shift by nothing
        out = (x - top).exp().sum(axes, keepdim=True).log() + top
        return out if keepdim else out.squeeze(axes)

    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        """``exp(t) / exp(t).sum(dim)``, computed after subtracting the maximum along ``dim``
        (a constant: softmax does not change when a constant is added along ``dim``)."""
        x = self if dtype is None else self.to(dtype)
        e = (x - np.max(x._data, axis=dim, keepdims=True)).exp()
        return e / e.sum(dim, keepdim=True)

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        """``t - log(exp(t).sum(dim))``, computed after subtracting the maximum along
        ``dim``."""
        x = self if dtype is None else self.to(dtype)
        shifted = x - np.max(x._data, axis=dim, keepdims=True)
        return shifted - shifted.exp().sum(dim, keepdim=True).log()

    def var(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        """The variance along ``dim`` (all elements by default), divided by ``N - correction``;
        ``unbiased=False`` is ``correction=0``. ``t.var(False)`` is ``t.var(unbiased=False)``."""
        return _spread(np.var, self, dim, unbiased, keepdim, correction)

    def std(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        """The square root of ``var`` with the same arguments."""
        return _spread(np.std, self, dim, unbiased, keepdim, correction)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
        """The ``p``-norm of the elements along ``dim`` (an int or a tuple; all by default),
        as one vector: ``"fro"`` is 2, ``inf`` the largest magnitude."""
        order = 2.0 if p in ("fro", None) else float(p)
        n = self._data.ndim
        dims = tuple(range(n)) if dim is None else (
            (dim,) if isinstance(dim, int) else tuple(dim))
        dims = tuple(sorted({d % n for d in dims})) if n else ()
        rest = [d for d in range(n) if d not in dims]
        kept = [self._data.shape[d] for d in rest]
        x = self.permute(*rest, *dims) if n else self
        result = _ops.numpy_call(np.linalg.norm, (x.reshape(*kept, -1),),
                                 {"ord": order, "axis": -1})
        if keepdim:
            result = result.reshape(*[1 if d in dims else self._data.shape[d]
                                      for d in range(n)])
        return result

    # -- cumulative functions, orderings -----------------------------------------------------

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        """Running sums along ``dim`` (after converting to ``dtype``, if given)."""
        x = self if dtype is None else self.to(dtype)
        return _ops.numpy_call(np.cumsum, (x,), {"axis": dim})

    def cumprod(self, dim: int, *, dtype: Any = None) -> Tensor:
        """Running products along ``dim`` (after converting to ``dtype``, if given)."""
        x = self if dtype is None else self.to(dtype)
        return _ops.numpy_call(np.cumprod, (x,), {"axis": dim})

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        """``(values, indices)`` sorted along ``dim``, NaN as the largest value. The sort is
        always stable (equal entries keep their order), which PyTorch gives with
        ``stable=True``. The gradient of ``values`` goes to the entries they were taken
        from."""
        indices = _sort_indices(self._data, dim, descending)
        return ReturnSort(_taken(self, indices, dim), _make(indices))

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) entries
        along ``dim``, in order; of equal entries, the first ones."""
        size = self._data.shape[dim] if self._data.ndim else 1
        if not 0 <= k <= size:
            raise RuntimeError("selected index k out of range")
        indices = _sort_indices(self._data, dim, largest)
        if self._data.ndim:
            indices = np.take(indices, np.arange(k), axis=dim)
        return ReturnTopk(_taken(self, indices, dim), _make(indices))


class ReturnMax(NamedTuple):
    """``t.max(dim)``: the values and their indices along ``dim``."""
    values: Tensor
    indices: Tensor


class ReturnMin(NamedTuple):
    """``t.min(dim)``: the values and their indices along ``dim``."""
    values: Tensor
    indices: Tensor


class ReturnSort(NamedTuple):
    """``t.sort(dim)``: the sorted values and where they were along ``dim``."""
    values: Tensor
    indices: Tensor


class ReturnTopk(NamedTuple):
    """``t.topk(k, dim)``: the ``k`` values and where they were along ``dim``."""
    values: Tensor
    indices: Tensor


def _extremum(t: Tensor, dim: Any, keepdim: bool, reduce: Any, arg: Any, pairwise: Any,
              result: Any) -> Any:
    if isinstance(dim, Tensor):
        return _ops.numpy_call(pairwise, (t, dim), {})
    if dim is None:
        return _ops.numpy_call(reduce, (t,), {})
    indices = np.expand_dims(arg(t._data, axis=dim), dim)
    values = _ops.numpy_call(np.take_along_axis, (t, indices, dim), {})
    if not keepdim:
        values = values.squeeze(dim)
        indices = np.squeeze(indices, dim)
    return result(values, _make(np.asarray(indices, dtype=np.int64)))


def _sort_indices(data: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """The int64 indices that sort ``data`` along ``dim``, stably (equal entries keep their
    order, descending too), NaN as the largest value."""
    if data.ndim == 0:
        return np.zeros((), dtype=np.int64)
    if not descending:
        return np.argsort(data, axis=dim, kind="stable").astype(np.int64)
    # sorting the reversed entries and reversing the result keeps equal ones in order
    reverse = np.argsort(np.flip(data, dim), axis=dim, kind="stable")
    return np.flip(data.shape[dim] - 1 - reverse, dim).astype(np.int64)


def _taken(t: Tensor, indices: np.ndarray, dim: int) -> Tensor:
    """The entries of ``t`` at ``indices`` along ``dim`` (differentiable)."""
    if t._data.ndim == 0:
        return t.clone()
    return _ops.numpy_call(np.take_along_axis, (t, indices, dim), {})


def _all_if_empty(dim: Any) -> Any:
    """PyTorch's ``dim=()`` (all dimensions) as NumPy's ``axis=None``."""
    axes = _axis(dim)
    return None if isinstance(axes, tuple) and not axes else axes


def _spread(func: Any, t: Tensor, dim: Any, unbiased: bool, keepdim: bool,
            correction: Any) -> Tensor:
    if isinstance(dim, bool):  # the old form t.var(unbiased)
        dim, unbiased = None, dim
    ddof = (1 if unbiased else 0) if correction is None else correction
    kwargs: dict[str, Any] = {"ddof": ddof}
    if dim is not None:
        kwargs["axis"] = _axis(dim)
    if keepdim:
        kwargs["keepdims"] = True
    return _ops.numpy_call(func, (t,), kwargs)
