"""s2sgrad: source-to-source automatic differentiation for Python and NumPy.

``@s2sgrad.grad`` reads a function's source and compiles a forward function that saves what
the reverse pass needs and an adjoint function that computes input cotangents, as readable
Python. Functional transforms (``gradient``, ``value_and_grad``, ``vjp``) call the pair back to
back; Tensors with ``requires_grad`` give PyTorch's ``backward()`` / ``.grad`` semantics.
Forward mode (``jvp``) compiles one tangent function from the same analysis.

The modules form layers, bottom to top. A module imports only from its own layer and the
ones below, and no imports form a cycle (tests/test_layering.py checks both against this
table; a package stands for all its modules):

    leaf:     errors naming shapes syntax runtime
    compiler: compiler backends rules
    tensor:   autograd nn optim serialization utils
    api:      api testing __main__ __init__

A lower layer that calls a higher one offers a registration point instead of importing it:
``function.register_tensor_call`` (a Function called with Tensors) and ``tensor.bind_ops``
(Tensor's operations).
"""

from typing import Any

# importing rules registers them
from . import autograd, nn, optim, rules, testing, utils  # noqa: F401
from .api import (
    batched_jvp,
    batched_vjp,
    grad,
    gradient,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    show,
    value_and_grad,
    vjp,
)
from .autograd import toplevel as _toplevel
from .autograd.creators import (
    arange,
    as_tensor,
    cat,
    concat,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    stack,
    zeros,
    zeros_like,
)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .autograd.random import Generator, default_generator, initial_seed, manual_seed, seed
from .autograd.tensor import DTYPES as _DTYPES
from .autograd.tensor import (
    DType,
    Size,
    Tensor,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    short,
    tensor,
    uint8,
)
from .compiler.analyze.values import differentiate_through
from .compiler.batching import NotBatchable
from .compiler.derivatives import checkpoint
from .compiler.function import Function
from .errors import TransformError
from .rules import jvp_rule, linear, nondifferentiable, vjp_rule
from .serialization import load, save

# ``s2sgrad.float``, ``s2sgrad.int`` and ``s2sgrad.bool`` are the dtypes float32, int32 and
# bool, as in PyTorch. They are looked up on demand rather than bound here, and left out of
# ``__all__``: bound, they would hide the builtins in this module, and ``from s2sgrad import *``
# would hide them in the importer's.
_BUILTIN_NAMED: dict[str, Any] = {name: _DTYPES[name] for name in ("bool", "float", "int")}
# PyTorch's top-level functions (``s2sgrad.exp(t)``, ``s2sgrad.sum(t, dim=0)``): bound here,
# except those named as builtins, which are looked up on demand as the dtypes above are
_BUILTIN_NAMED.update({name: fn for name, fn in _toplevel.FUNCTIONS.items()
                       if name in _toplevel.SHADOWING})
globals().update({name: fn for name, fn in _toplevel.FUNCTIONS.items()
                  if name not in _toplevel.SHADOWING})


def __getattr__(name: str) -> Any:
    try:
        return _BUILTIN_NAMED[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *_BUILTIN_NAMED])


__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)

__all__ = [  # noqa: RUF022  (sorted as sorted() sorts, not naturally: complex128 < complex64)
    "DType",
    "Function",
    "Generator",
    "NotBatchable",
    "Size",
    "Tensor",
    "TransformError",
    "arange",
    "as_tensor",
    "autograd",
    "batched_jvp",
    "batched_vjp",
    "cat",
    "cdouble",
    "cfloat",
    "checkpoint",
    "complex128",
    "complex64",
    "concat",
    "default_generator",
    "differentiate_through",
    "double",
    "empty",
    "empty_like",
    "enable_grad",
    "eye",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "full_like",
    "grad",
    "gradient",
    "half",
    "hessian",
    "hvp",
    "inference_mode",
    "initial_seed",
    "int16",
    "int32",
    "int64",
    "int8",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "jvp_rule",
    "linear",
    "linspace",
    "load",
    "long",
    "manual_seed",
    "nn",
    "no_grad",
    "nondifferentiable",
    "ones",
    "ones_like",
    "optim",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "randperm",
    "save",
    "seed",
    "set_grad_enabled",
    "short",
    "show",
    "stack",
    "tensor",
    "testing",
    "uint8",
    "utils",
    "value_and_grad",
    "vjp",
    "vjp_rule",
    "zeros",
    "zeros_like",
]
