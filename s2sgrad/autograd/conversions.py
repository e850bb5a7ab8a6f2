"""Tensor's conversions to other dtypes and its new Tensors of its own dtype, as PyTorch's:
``to`` (a dtype, another Tensor's dtype, or the CPU), ``type`` (PyTorch's names of Tensor
types, ``"torch.DoubleTensor"``), ``type_as``, and ``new_zeros``, ``new_ones``,
``new_empty``, ``new_full``, ``new_tensor``. A conversion to a floating dtype stays in the
graph (through ops.py); one to integers or bools, outside it, as in PyTorch. A new Tensor is a
leaf, of this Tensor's dtype unless told otherwise.

    t.to(np.float32)     ->  _ops.numpy_call(np.ndarray.astype, (t, float32), {})
    t.to("int64")        ->  _make(t.data.astype(int64))     (no gradient)
    t.new_zeros(2, 3)    ->  _leaf(np.zeros((2, 3), dtype=t.dtype), False)

``Conversions`` is a base of ``Tensor`` and holds no state (``__slots__ = ()``); ``_floating``
and ``_number`` convert for the other bases and the creators.

In the Tensor layer, below tensor.py: imports dtypes.py and shaping.py. tensor.py, which
imports it, binds in it what it reads of the modules above: ``_ops`` (ops.py's operations,
through ``bind_ops``), ``Tensor``, ``_make`` and ``_leaf``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import _TYPE_NAMES, _TYPES_BY_NAME, _dtype, check_device, device_type
from .shaping import _shape

# Bound by tensor.py: the operations on Tensors (ops.py's), the class, ``_make`` (a Tensor
# around an array, outside the graph) and ``_leaf`` (a leaf around an array, checked).
_ops: Any = None
Tensor: Any = None
_make: Any = None
_leaf: Any = None


class Conversions:
    """Tensor's conversions to other dtypes, and its new Tensors of its own dtype."""

    __slots__ = ()

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """A Tensor of another dtype: ``t.to(np.float32)``, ``t.to("float64")``,
        ``t.to(other)`` (other's dtype). The device ``"cpu"`` changes nothing; another one
        raises RuntimeError. The result is ``self`` when the dtype is already right, else a
        copy that stays in the graph (when the new dtype is floating)."""
        dtype = kwargs.pop("dtype", None)
        if kwargs.get("device") is not None:
            check_device(kwargs["device"])
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg._data.dtype
            elif device_type(arg) is not None:
                check_device(arg)
            elif not isinstance(arg, bool):  # non_blocking, copy, given by position
                dtype = arg
        if dtype is None:
            return self
        dtype = _dtype(dtype)
        if dtype == self._data.dtype:
            return self
        if dtype.kind not in "fc":
            return _make(self._data.astype(dtype))
        return _ops.numpy_call(np.ndarray.astype, (self, dtype), {})

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """Without ``dtype``, PyTorch's name of this Tensor's type (``"torch.DoubleTensor"``);
        with one (a dtype, or such a name), ``self.to(dtype)``."""
        if dtype is None:
            return "torch." + _TYPE_NAMES[self._data.dtype]
        if isinstance(dtype, str) and dtype.removeprefix("torch.") in _TYPES_BY_NAME:
            dtype = _TYPES_BY_NAME[dtype.removeprefix("torch.")]
        return self.to(dtype)

    def type_as(self, other: Tensor) -> Tensor:
        """``self.to(other.dtype)``."""
        return self.to(other._data.dtype)

    # -- new Tensors of this one's dtype -----------------------------------------------------

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        """Zeros of ``size``, of this Tensor's dtype unless told otherwise."""
        return _leaf(np.zeros(_shape(size), dtype=self._new_dtype(dtype)), requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _leaf(np.ones(_shape(size), dtype=self._new_dtype(dtype)), requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _leaf(np.empty(_shape(size), dtype=self._new_dtype(dtype)), requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None,
                 requires_grad: bool = False) -> Tensor:
        return _leaf(np.full(_shape((size,)), _number(fill_value),
                             dtype=self._new_dtype(dtype)), requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        """A new leaf holding a copy of ``data``, of this Tensor's dtype unless told
        otherwise."""
        return Tensor(data, requires_grad=requires_grad, dtype=self._new_dtype(dtype))

    def _new_dtype(self, dtype: Any) -> np.dtype:
        return self._data.dtype if dtype is None else _dtype(dtype)


def _floating(t: Tensor) -> Tensor:
    """``t``, converted to float64 (our default) unless floating or complex already."""
    return t if t._data.dtype.kind in "fc" else t.to(np.float64)


def _number(value: Any) -> Any:
    return value.item() if isinstance(value, (Tensor, np.ndarray, np.generic)) else value
