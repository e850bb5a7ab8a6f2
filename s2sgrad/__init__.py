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
    compiler: parse fence normalize statements analyze aliasing reverse tangent batching optimize
              inplace coalesce codegen templates rules compiled derivatives higher pipeline sourcefile
              function
    tensor:   autograd nn nn_utils optim lr_scheduler serialization data
              nn_functional nn_init
    api:      api testing __main__ __init__

A lower layer that calls a higher one offers a registration point instead of importing it:
``function.register_tensor_call`` (a Function called with Tensors) and ``tensor.bind_ops``
(Tensor's operations).
"""

from . import autograd, nn, optim, rules, testing  # noqa: F401  (importing rules registers them)
from .analyze.values import differentiate_through
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
from .autograd.grad_mode import (
    enable_grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .autograd.tensor import Tensor, ones, ones_like, randn, tensor, zeros, zeros_like
from .batching import NotBatchable
from .data import manual_seed, utils
from .derivatives import checkpoint
from .errors import TransformError
from .function import Function
from .rules import jvp_rule, linear, nondifferentiable, vjp_rule
from .serialization import load, save

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)

__all__ = [
    "Function",
    "NotBatchable",
    "Tensor",
    "TransformError",
    "autograd",
    "batched_jvp",
    "batched_vjp",
    "checkpoint",
    "differentiate_through",
    "enable_grad",
    "grad",
    "gradient",
    "hessian",
    "hvp",
    "is_grad_enabled",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "jvp_rule",
    "linear",
    "load",
    "manual_seed",
    "nn",
    "no_grad",
    "nondifferentiable",
    "ones",
    "ones_like",
    "optim",
    "randn",
    "save",
    "set_grad_enabled",
    "show",
    "tensor",
    "testing",
    "utils",
    "value_and_grad",
    "vjp",
    "vjp_rule",
    "zeros",
    "zeros_like",
]
