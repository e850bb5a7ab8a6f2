"""s2sgrad: source-to-source automatic differentiation for Python and NumPy.

``@s2sgrad.grad`` reads a function's source and compiles a forward function that saves what
the reverse pass needs and an adjoint function that computes input cotangents, as readable
Python. Functional transforms (``gradient``, ``value_and_grad``, ``vjp``) call the pair back to
back; Tensors with ``requires_grad`` give PyTorch's ``backward()`` / ``.grad`` semantics.
"""

from . import autograd, nn, optim, rules, testing  # noqa: F401  (importing rules registers them)  # noqa: F401
from .api import Function, grad, gradient, show, value_and_grad, vjp  # noqa: F401
from .errors import TransformError  # noqa: F401
from .rules import nondifferentiable, vjp_rule  # noqa: F401
from .runtime.grad_mode import (  # noqa: F401
    enable_grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .runtime.tensor import Tensor, ones, ones_like, randn, tensor, zeros, zeros_like  # noqa: F401

__version__ = "0.1.0"
