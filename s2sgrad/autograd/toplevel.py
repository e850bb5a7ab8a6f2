"""PyTorch's functions at the top of its namespace (``torch.exp(t)``, ``torch.sum(t,
dim=0)``, ``torch.where(c, a, b)``) as thin names over Tensor's methods of the same name:
``s2sgrad.exp(t)`` is ``t.exp()``, with the same arguments, values, gradients and graph. A
NumPy array or a number given as ``input`` is made a Tensor first, as PyTorch takes them.

The names that are also Python's builtins (``sum``, ``max``, ``min``, ``abs``, ``all``,
``any``, ``round``, ``pow``) are in ``SHADOWING``: the package offers them on demand and
leaves them out of ``__all__``, so that ``from s2sgrad import *`` hides no builtin.

In the Tensor layer, above tensor.py and creators.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .creators import as_tensor
from .tensor import Tensor

# Tensor methods that are also PyTorch functions of the Tensor as their first argument
METHODS = (
    "exp", "log", "log1p", "expm1", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan",
    "sinh", "cosh", "tanh", "asin", "acos", "atan", "sigmoid", "relu", "square", "neg",
    "reciprocal", "sign", "floor", "ceil", "trunc", "clamp", "clip", "mean", "prod", "std",
    "var", "argmax", "argmin", "amax", "amin", "logsumexp", "softmax", "log_softmax",
    "cumsum", "cumprod", "norm", "flatten", "reshape", "squeeze", "unsqueeze", "transpose",
    "permute", "flip", "roll", "t", "matmul", "mm", "bmm", "dot", "outer", "maximum",
    "minimum", "atan2", "sort", "topk", "gather", "index_select", "masked_select", "split",
    "chunk", "unbind", "diag", "triu", "tril", "clone", "eq", "ne", "lt", "le", "gt", "ge",
    "sum", "abs", "all", "any", "round", "pow",
)
SHADOWING = frozenset({"sum", "max", "min", "abs", "all", "any", "round", "pow"})


def _tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else as_tensor(value)


def _method(name: str) -> Callable[..., Any]:
    def function(input: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(_tensor(input), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``s2sgrad.{name}(input, ...)``: ``input.{name}(...)``, as PyTorch's."
    return function


FUNCTIONS: dict[str, Callable[..., Any]] = {name: _method(name) for name in METHODS}


def _extremum(name: str, pairwise: str) -> Callable[..., Any]:
    def function(input: Any, *args: Any, **kwargs: Any) -> Any:
        other = args[0] if args else kwargs.get("other")
        if isinstance(other, (Tensor, np.ndarray)):  # torch.max(a, b): elementwise
            return getattr(_tensor(input), pairwise)(other)
        return getattr(_tensor(input), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``s2sgrad.{name}(input)``, ``(input, dim, keepdim)`` (values and "
                        f"indices) or ``(input, other)`` (elementwise), as PyTorch's.")
    return function


def where(condition: Any, input: Any, other: Any) -> Tensor:
    """``input`` where ``condition`` holds, else ``other`` (PyTorch's argument order)."""
    return _tensor(input).where(condition, other)


FUNCTIONS.update(max=_extremum("max", "maximum"), min=_extremum("min", "minimum"),
                 where=where)
