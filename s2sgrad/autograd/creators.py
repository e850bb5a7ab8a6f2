"""Tensor creators with PyTorch's signatures (``zeros``, ``arange``, ``linspace``, ``full``,
``randn``, ``cat``, ``stack``, ``from_numpy``...): PyTorch's dtypes, except that a floating
result is float64 (our default) where PyTorch's is float32. The random ones draw from
``generator=`` or the one default generator that ``manual_seed`` resets (random.py).

In the Tensor layer, beside tensor.py.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .printing import dtype_name
from .random import source
from .tensor import (
    Tensor,
    _dtype,
    _leaf,
    _number,
    _numeric,
    _shape,
)


def _or_default(dtype: Any, default: Any = np.float64) -> np.dtype:
    return np.dtype(default) if dtype is None else _dtype(dtype)


def _scalar_dtype(value: Any) -> np.dtype:
    """The dtype PyTorch gives a Tensor filled with the number ``value`` (floats: ours)."""
    value = _number(value)
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    return np.dtype(np.complex128 if isinstance(value, complex) else np.float64)


def _like(t: Any, dtype: Any) -> tuple[tuple[int, ...], np.dtype]:
    data = t._data if isinstance(t, Tensor) else np.asarray(t)
    return data.shape, data.dtype if dtype is None else _dtype(dtype)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A Tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    return _leaf(np.zeros(_shape(size), dtype=_or_default(dtype)), requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A Tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``."""
    return _leaf(np.ones(_shape(size), dtype=_or_default(dtype)), requires_grad)


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A Tensor whose values are whatever its new memory held: ``empty(2, 3)``."""
    return _leaf(np.empty(_shape(size), dtype=_or_default(dtype)), requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A Tensor of ``size`` filled with ``fill_value``; its dtype follows the value (bool,
    int64, float64, complex128) unless given."""
    dtype = _scalar_dtype(fill_value) if dtype is None else _dtype(dtype)
    return _leaf(np.full(_shape((size,)), _number(fill_value), dtype=dtype), requires_grad)


def zeros_like(input: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A Tensor of zeros with the shape and dtype of ``input``."""
    return full_like(input, 0, dtype=dtype, requires_grad=requires_grad)


def ones_like(input: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A Tensor of ones with the shape and dtype of ``input``."""
    return full_like(input, 1, dtype=dtype, requires_grad=requires_grad)


def full_like(input: Any, fill_value: Any, *, dtype: Any = None,
              requires_grad: bool = False) -> Tensor:
    """A Tensor filled with ``fill_value``, with the shape and dtype of ``input``."""
    shape, dtype = _like(input, dtype)
    return _leaf(np.full(shape, _number(fill_value), dtype=dtype), requires_grad)


def empty_like(input: Any, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """As ``empty``, with the shape and dtype of ``input``."""
    shape, dtype = _like(input, dtype)
    return _leaf(np.empty(shape, dtype=dtype), requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The ``n`` by ``m`` (``n`` by ``n``) matrix with ones on the diagonal."""
    return _leaf(np.eye(n, m, dtype=_or_default(dtype)), requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           requires_grad: bool = False) -> Tensor:
    """``start, start + step, ...`` up to ``end`` (excluded): ``arange(5)``, ``arange(1, 4)``,
    ``arange(0., 1, .1)``. int64 when the bounds and step are all integers, else float64; for
    an integer ``dtype`` they are truncated to integers first, as PyTorch does."""
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    if dtype is None:
        numbers = (start, end, step)
        dtype = np.int64 if all(isinstance(v, int) for v in numbers) else np.float64
    dtype = _dtype(dtype)
    if dtype.kind in "biu":
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if all(isinstance(v, int) for v in (start, end, step)):
        values = np.arange(start, end, step)
    else:  # PyTorch's size; its values too, but for rounding in the last bit
        values = start + step * np.arange(math.ceil((end - start) / step), dtype=np.float64)
    return _leaf(values.astype(dtype, copy=False), requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (both included), computed as
    PyTorch computes them, from ``start`` in the first half and from ``end`` in the second (so
    both ends are exact); float64 unless told otherwise."""
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = float(_number(start)), float(_number(end))
    i = np.arange(steps, dtype=np.float64)
    if steps == 1:
        values = np.full(1, start)
    else:
        step = (end - start) / (steps - 1)
        values = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))
    return _leaf(values.astype(_or_default(dtype), copy=False), requires_grad)


def _random_dtype(dtype: Any, name: str) -> np.dtype:
    dtype = _or_default(dtype)
    if dtype.kind not in "fc":
        raise RuntimeError(f"{name}(): expected a floating point or complex dtype, got "
                           f"{dtype_name(dtype)}")
    return dtype


def _uniform(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "c":  # real and imaginary parts each uniform, as PyTorch draws them
        parts = _uniform(rng, (*shape, 2), np.finfo(dtype).dtype)
        return (parts[..., 0] + 1j * parts[..., 1]).astype(dtype)
    values = rng.random(shape).astype(dtype, copy=False)
    if dtype != np.float64:  # rounding may have reached 1
        np.minimum(values, np.nextafter(dtype.type(1), dtype.type(0)), out=values)
    return values


def _normal(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "c":  # variance 1 in all: 1/2 in each part, as PyTorch draws them
        parts = rng.standard_normal((*shape, 2)) * math.sqrt(0.5)
        return (parts[..., 0] + 1j * parts[..., 1]).astype(dtype)
    return rng.standard_normal(shape).astype(dtype, copy=False)


def rand(*size: Any, generator: np.random.Generator | None = None, dtype: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Samples of U[0, 1) from ``generator`` or the default generator (see random.py):
    ``rand(5, 3)``. Other floating dtypes are the float64 samples rounded."""
    dtype = _random_dtype(dtype, "rand")
    return _leaf(_uniform(source(generator), _shape(size), dtype), requires_grad)


def randn(*size: Any, generator: np.random.Generator | None = None, dtype: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples from ``generator`` or the default generator (see random.py):
    ``randn(5, 3)``. Other floating dtypes are the float64 samples rounded."""
    dtype = _random_dtype(dtype, "randn")
    return _leaf(_normal(source(generator), _shape(size), dtype), requires_grad)


def rand_like(input: Any, *, generator: np.random.Generator | None = None, dtype: Any = None,
              requires_grad: bool = False) -> Tensor:
    """As ``rand``, with the shape and dtype of ``input``."""
    shape, dtype = _like(input, dtype)
    return rand(shape, generator=generator, dtype=dtype, requires_grad=requires_grad)


def randn_like(input: Any, *, generator: np.random.Generator | None = None, dtype: Any = None,
               requires_grad: bool = False) -> Tensor:
    """As ``randn``, with the shape and dtype of ``input``."""
    shape, dtype = _like(input, dtype)
    return randn(shape, generator=generator, dtype=dtype, requires_grad=requires_grad)


def randint(low: Any = 0, high: Any = None, size: Any = None, *,
            generator: np.random.Generator | None = None, dtype: Any = None,
            requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from ``[low, high)``: ``randint(10, (3,))``,
    ``randint(5, 10, (2, 2))``; int64 unless told otherwise."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=size)
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing the required argument 'size'")
    low, high = int(_number(low)), int(_number(high))
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    data = source(generator).integers(low, high, _shape((size,)), dtype=np.int64)
    return _leaf(data.astype(_or_default(dtype, np.int64), copy=False), requires_grad)


def randperm(n: int, *, generator: np.random.Generator | None = None, dtype: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0, ..., n - 1``; int64 unless told otherwise."""
    data = source(generator).permutation(operator.index(n))
    return _leaf(data.astype(_or_default(dtype, np.int64), copy=False), requires_grad)


def _joined(func: Any, tensors: Any, dim: int, name: str) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{name}(): expected a non-empty list of Tensors")
    result = func(tensors, axis=dim)  # through Tensor.__array_function__: recorded
    return result if isinstance(result, Tensor) else _leaf(result, False)


def cat(tensors: Any, dim: int = 0) -> Tensor:
    """The Tensors joined along the existing dimension ``dim`` (their dtypes promoted);
    differentiable."""
    return _joined(np.concatenate, tensors, dim, "cat")


concat = cat


def stack(tensors: Any, dim: int = 0) -> Tensor:
    """The Tensors (of one shape) joined along a new dimension ``dim``; differentiable."""
    return _joined(np.stack, tensors, dim, "stack")


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A Tensor sharing ``ndarray``'s memory and dtype: changes to one show in the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _leaf(_numeric(ndarray, None, copy=False), False)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a Tensor, copying only when needed: a Tensor of the right dtype is
    returned as it is (else converted by ``to``, in the graph), an ndarray of the right
    dtype is shared, anything else is copied."""
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray):
        return _leaf(_numeric(data, None if dtype is None else _dtype(dtype), copy=False), False)
    return Tensor(data, dtype=dtype)
