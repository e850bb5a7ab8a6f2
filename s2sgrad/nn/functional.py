"""Layers and losses as functions, reached as ``nn.functional`` (PyTorch's
``torch.nn.functional``).

    import s2sgrad.nn.functional as F
    loss = F.cross_entropy(F.linear(x, w, b), labels)

Every function is written with Tensor operations, so gradients come from the operations'
derivative rules. Arguments may be Tensors or arrays (arrays are constants). Losses take
``reduction``: ``"mean"`` (the default), ``"sum"`` or ``"none"``; those whose PyTorch
signature still has the older ``size_average`` and ``reduce`` take them too, as PyTorch reads
them (with its deprecation warning). ``inplace=True`` is accepted where PyTorch takes it, and
gives a new Tensor all the same.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autograd.random import source
from ..autograd.tensor import Size, Tensor, tensor
from ..autograd.tensor import tensor as tensor_

_REDUCTIONS = ("none", "mean", "sum")


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else tensor(np.asarray(x))


def _array(x: Any) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """``reduction``, or what the deprecated ``size_average`` and ``reduce`` ask for when one
    of them is given (``reduce=False``: ``"none"``; else ``"mean"`` unless
    ``size_average=False``), with PyTorch's warning."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        reduction = "none"
    else:
        reduction = "sum" if size_average is False else "mean"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", UserWarning, stacklevel=3)
    return reduction


def _warn_size(input: Tensor, target: Any) -> None:
    shape = tuple(_array(target).shape)
    if shape != tuple(input.shape):
        warnings.warn(f"Using a target size ({Size(shape)}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


def _check_weight(input: Tensor, weight: Any) -> None:
    if tuple(_array(weight).shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")


# -- activations -----------------------------------------------------------------------------

def relu(input: Any) -> Tensor:
    return _t(input).relu()


def tanh(input: Any) -> Tensor:
    return _t(input).tanh()


def sigmoid(input: Any) -> Tensor:
    return _t(input).sigmoid()


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x`` (whose slope the gradient at 0
    takes, as in PyTorch)."""
    x = _t(input)
    return x.where(_array(x) > 0, x * negative_slope)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    x = _t(input)
    positive = _array(x) > 0
    return x.where(positive, alpha * np.expm1(x.where(~positive, 0.0)))


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, computed without overflow; ``x`` itself where
    ``beta * x > threshold``, as in PyTorch."""
    x = _t(input)
    scaled = x * beta
    linear = _array(scaled) > threshold
    return x.where(linear, np.logaddexp(0.0, scaled.where(~linear, 0.0)) / beta)


def silu(input: Any, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)``."""
    x = _t(input)
    return x * x.sigmoid()


def gelu(input: Any, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` with Phi the standard normal CDF, ``0.5 * (1 + erf(x / sqrt(2)))``
    (which needs SciPy); ``approximate="tanh"`` uses
    ``0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))`` instead."""
    x = _t(input)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1.0 + inner.tanh())
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh, got "
                           f"{approximate!r}")
    from scipy import special  # an optional dependency, needed only here

    return 0.5 * x * (1.0 + special.erf(x * (1.0 / math.sqrt(2.0))))


def _softmax_dim(ndim: int) -> int:
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Any, dim: int | None = None, dtype: Any = None) -> Tensor:
    """Softmax along ``dim``; without ``dim``, PyTorch's implicit choice (0 for 0-, 1- and
    3-dimensional input, else 1)."""
    x = _t(input)
    return x.softmax(_softmax_dim(x.ndim) if dim is None else dim, dtype)


def log_softmax(input: Any, dim: int | None = None, dtype: Any = None) -> Tensor:
    """The logarithm of ``softmax``, computed stably."""
    x = _t(input)
    return x.log_softmax(_softmax_dim(x.ndim) if dim is None else dim, dtype)


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False,
            generator: np.random.Generator | None = None) -> Tensor:
    """In training, zero each element with probability ``p`` and scale the others by
    ``1 / (1 - p)``; otherwise the input itself. The mask is drawn from ``generator`` or from
    the default generator (``s2sgrad.manual_seed``). The result is a new Tensor even with
    ``inplace=True``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _t(input)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * np.zeros(tuple(x.shape), dtype=x.dtype)
    keep = source(generator).random(tuple(x.shape)) >= p
    return x * (keep.astype(x.dtype) / np.asarray(1.0 - p, dtype=x.dtype))


# -- layers ----------------------------------------------------------------------------------

def linear(input: Any, weight: Any, bias: Any = None) -> Tensor:
    """``input @ weight.T + bias``, with ``weight`` of shape ``(out_features, in_features)``."""
    out = _t(input) @ _t(weight).T
    return out if bias is None else out + bias


def _normalized_dims(input: Tensor, normalized_shape: Any) -> tuple[int, ...]:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size "
                           f"{list(input.shape)}")
    return tuple(range(input.ndim - len(shape), input.ndim))


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dimensions: zero mean and unit (biased)
    variance, ``(x - mean) / sqrt(var + eps)``, then ``* weight + bias``."""
    x = _t(input)
    dims = _normalized_dims(x, normalized_shape)
    centred = x - x.mean(dims, keepdim=True)
    var = (centred * centred).mean(dims, keepdim=True)
    out = centred / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def embedding(input: Any, weight: Any, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` picked by the integer indices ``input``: the result has shape
    ``input.shape + (embedding_dim,)``. Repeated indices add their gradients into the row; the
    row ``padding_idx`` gets no gradient."""
    index = _array(input)
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {index.dtype} instead")
    w = _t(weight)
    num = w.shape[0]
    if index.size and (index.min() < 0 or index.max() >= num):
        raise IndexError("index out of range in self")
    if padding_idx is not None:
        padding_idx = padding_idx + num if padding_idx < 0 else padding_idx
        rows = np.arange(num) != padding_idx
        w = w.where(rows[:, None], w.detach())
    return w[index]


def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    """Each integer of ``tensor`` as a row of zeros with a one at its index: an int64 Tensor
    of shape ``tensor.shape + (num_classes,)`` (``num_classes`` = the largest index + 1 by
    default), with no gradient."""
    index = _array(tensor)
    if index.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(index.max()) + 1 if index.size else 0
    if index.size and (index.min() < 0 or index.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes.")
    return tensor_(np.eye(num_classes, dtype=np.int64)[index])


def pad(input: Any, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Tensor:
    """``input`` padded: ``pad`` gives (before, after) pairs for the last dimension first,
    then the one before it (``(1, 1)`` pads the last, ``(1, 1, 2, 0)`` the last two); with
    ``value`` (0 by default) in ``"constant"`` mode, or by reflecting or repeating the edge
    (``"reflect"``, ``"replicate"``, ``"circular"``). The gradient flows to ``input``."""
    if len(pad) % 2:
        raise ValueError("Padding length must be divisible by 2")
    x = _t(input)
    if len(pad) // 2 > x.ndim:
        raise ValueError("Padding length should be less than or equal to two times the "
                         "input dimension")
    widths = [(0, 0)] * (x.ndim - len(pad) // 2) + [
        (pad[k], pad[k + 1]) for k in reversed(range(0, len(pad), 2))]
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=0.0 if value is None else value)
    source = _PAD_SOURCES.get(mode)
    if source is None:
        raise NotImplementedError(f"Padding mode \"{mode}\" is not supported")
    for axis, (before, after) in enumerate(widths):  # each padded axis read at its sources
        if before or after:
            positions = np.arange(-before, x.shape[axis] + after)
            x = x[(slice(None),) * axis + (source(positions, x.shape[axis]),)]
    return x


# Where each position of a padded axis reads the input, by mode: the edge repeated, the
# input mirrored about its edge (the edge once), or wrapped around.
_PAD_SOURCES = {
    "replicate": lambda i, n: np.clip(i, 0, n - 1),
    "reflect": lambda i, n: np.where(i < 0, -i, np.where(i > n - 1, 2 * (n - 1) - i, i)),
    "circular": lambda i, n: i % n,
}


# -- losses ----------------------------------------------------------------------------------

def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Tensor:
    """``(input - target)^2``, reduced."""
    _check_reduction(reduction)
    diff = _t(input) - target
    return _reduce(diff * diff, reduction)


def l1_loss(input: Any, target: Any, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean", weight: Any = None) -> Tensor:
    """``|input - target|`` (times ``weight``, of the input's shape), reduced; with a
    ``weight``, ``"mean"`` divides by the weights' sum."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    x = _t(input)
    _warn_size(x, target)
    loss = abs(x - target)
    if weight is None:
        return _reduce(loss, reduction)
    _check_weight(x, weight)
    loss = loss * weight
    return loss.sum() / np.sum(weight) if reduction == "mean" else _reduce(loss, reduction)


def smooth_l1_loss(input: Any, target: Any, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``d = |input - target| < beta``, else ``d - 0.5 beta``,
    reduced; ``beta=0`` is ``l1_loss``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    x = _t(input)
    _warn_size(x, target)
    d = abs(x - target)
    loss = (0.5 * d * d / beta).where(_array(d) < beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Tensor:
    """``0.5 d^2`` where ``d = |input - target| < delta``, else ``delta (d - 0.5 delta)``
    (times ``weight``, of the input's shape), reduced."""
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x = _t(input)
    _warn_size(x, target)
    d = abs(x - target)
    loss = (0.5 * d * d).where(_array(d) < delta, delta * (d - 0.5 * delta))
    if weight is not None:
        _check_weight(x, weight)
        loss = loss * weight
    return _reduce(loss, reduction)


# log(x) for x below this is taken as -100, as PyTorch's binary_cross_entropy takes it
_LOG_FLOOR = math.exp(-100.0)


def binary_cross_entropy(input: Any, target: Any, weight: Any = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``-weight [y log(x) + (1 - y) log(1 - x)]`` for probabilities ``x`` (``input``, in
    [0, 1]) and targets ``y``, each logarithm at least -100 as in PyTorch; reduced. Below
    that floor the gradient is 0, where PyTorch's is ``(x - y) / 1e-12``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    x = _t(input)
    shape = tuple(_array(target).shape)
    if shape != tuple(x.shape):
        raise ValueError(f"Using a target size ({Size(shape)}) that is different to the "
                         f"input size ({x.shape}) is deprecated. Please ensure they have the "
                         f"same size.")
    data = _array(x)
    if data.size and not ((data >= 0) & (data <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = np.log(x.clamp(min=_LOG_FLOOR)).clamp(min=-100.0)
    log_rest = np.log((1.0 - x).clamp(min=_LOG_FLOOR)).clamp(min=-100.0)
    loss = -(target * log_x + (1.0 - target) * log_rest)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _class_weight(weight: Any, ndim: int, class_dim: int, dtype: Any) -> np.ndarray:
    w = _array(weight).astype(dtype)
    return w.reshape((-1,) + (1,) * (ndim - class_dim - 1))


def nll_loss(input: Any, target: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """``-input[n, target[n]]`` (times ``weight[target[n]]``) for log-probabilities ``input`` of
    shape ``(N, C)``, ``(C,)`` or ``(N, C, d1, ...)`` and class indices ``target`` of shape
    ``(N,)``, ``()`` or ``(N, d1, ...)``. Targets equal to ``ignore_index`` count for nothing;
    ``"mean"`` divides by the total weight of the counted targets."""
    _check_reduction(reduction)
    x = _t(input)
    t = _array(target)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {t.dtype}")
    single = x.ndim == 1
    if single:
        x, t = x.unsqueeze(0), t[None]
    if x.ndim < 2 or t.shape != (x.shape[0],) + tuple(x.shape[2:]):
        raise ValueError(f"Expected target of shape {(x.shape[0],) + tuple(x.shape[2:])} for "
                         f"input of shape {tuple(x.shape)}, got {t.shape}")
    classes = x.shape[1]
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    if safe.size and (safe.min() < 0 or safe.max() >= classes):
        bad = safe[(safe < 0) | (safe >= classes)].flat[0]
        raise IndexError(f"Target {bad} is out of bounds.")
    picked = x.gather(1, np.expand_dims(safe, 1)).squeeze(1)
    w = np.ones(classes, dtype=x.dtype) if weight is None else _array(weight).astype(x.dtype)
    w = w[safe] * valid
    loss = -picked * w
    if reduction == "none":
        return loss.squeeze(0) if single else loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def cross_entropy(input: Any, target: Any, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)`` over logits of shape ``(N, C)``, ``(C,)``
    or ``(N, C, d1, ...)``. ``target`` holds class indices, or class probabilities of the
    input's shape (a float array). ``label_smoothing`` mixes the target with the uniform
    distribution over the classes."""
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    x = _t(input)
    class_dim = 0 if x.ndim == 1 else 1
    classes = x.shape[class_dim]
    logp = x.log_softmax(class_dim)
    t = target if isinstance(target, Tensor) else np.asarray(target)
    w = None if weight is None else _class_weight(weight, x.ndim, class_dim, x.dtype)
    if _array(t).dtype.kind == "f":  # class probabilities
        if label_smoothing > 0.0:
            t = t * (1.0 - label_smoothing) + label_smoothing / classes
        terms = logp * t if w is None else logp * t * w
        loss = -terms.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (x.numel() / classes)
        return _reduce(loss, reduction)
    nll = nll_loss(logp, t, weight, ignore_index, reduction)
    if label_smoothing == 0.0:
        return nll
    t = np.asarray(t)
    kept = t != ignore_index
    smooth = -(logp if w is None else logp * w).sum(class_dim) * kept.astype(x.dtype)
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / kept.sum()
        else:
            smooth = smooth.sum() / _array(weight)[t[kept]].sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1.0 - label_smoothing) * nll + smooth * (label_smoothing / classes)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Tensor:
    """``-[p y log s(x) + (1 - y) log(1 - s(x))] * weight`` with ``s`` the sigmoid and ``p``
    ``pos_weight``, computed stably from the logits as
    ``(1 - y) x - (1 + (p - 1) y) log s(x)``, ``log s(x) = -logaddexp(0, -x)``."""
    _check_reduction(reduction)
    x = _t(input)
    if tuple(_array(target).shape) != tuple(x.shape):
        raise ValueError(f"Target size ({tuple(_array(target).shape)}) must be the same as "
                         f"input size ({tuple(x.shape)})")
    log_sigmoid = -np.logaddexp(0.0, -x)
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight - 1.0) * target + 1.0)
    loss = (1.0 - target) * x - log_sigmoid
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)
