"""Weight initialisation, reached as ``nn.init`` (PyTorch's ``torch.nn.init``).

    nn.init.xavier_uniform_(layer.weight)
    nn.init.zeros_(layer.bias)

Each function fills a Tensor (or Parameter) in place, under ``no_grad``, keeping its dtype, and
returns it. Random draws come from ``generator`` (a ``numpy.random.Generator``) when given,
else from the default generator, which ``s2sgrad.manual_seed`` resets (autograd/random.py).

Fans follow PyTorch: for a weight of shape ``(out, in, *kernel)``, ``fan_in = in * prod(kernel)``
and ``fan_out = out * prod(kernel)``; Tensors of fewer than 2 dimensions have no fans.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import grad_mode
from ..autograd.random import source
from ..autograd.tensor import Tensor

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for a nonlinearity: 1 for linear layers and sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (slope ``param``, 0.01 by
    default), 3/4 for selu."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor: Tensor, values: Any) -> Tensor:
    with grad_mode.no_grad():
        tensor.copy_(np.asarray(values, dtype=tensor.dtype))
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: np.random.Generator | None = None) -> Tensor:
    """Fill with samples of U(a, b)."""
    return _fill(tensor, source(generator).uniform(a, b, size=tuple(tensor.shape)))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: np.random.Generator | None = None) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    return _fill(tensor, source(generator).normal(mean, std, size=tuple(tensor.shape)))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, np.full(tuple(tensor.shape), val))


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: np.random.Generator | None = None) -> Tensor:
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot and Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: np.random.Generator | None = None) -> Tensor:
    """N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: np.random.Generator | None = None) -> Tensor:
    """U(-b, b) with ``b = gain * sqrt(3 / fan)`` (He et al.); ``a`` is leaky_relu's
    negative slope."""
    if 0 in tuple(tensor.shape):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: np.random.Generator | None = None) -> Tensor:
    """N(0, std^2) with ``std = gain / sqrt(fan)``."""
    if 0 in tuple(tensor.shape):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)
