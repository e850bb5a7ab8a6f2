"""s2sgrad: source-to-source automatic differentiation for Python and NumPy.

``@s2sgrad.grad`` reads a function's source and compiles a forward function that saves what
the reverse pass needs and an adjoint function that computes input cotangents, as readable
Python. Functional transforms (``gradient``, ``value_and_grad``, ``vjp``) call the pair back to
back; Tensors with ``requires_grad`` give PyTorch's ``backward()`` / ``.grad`` semantics.
"""

from . import rules, testing  # noqa: F401  (importing rules registers them)
from .api import Function, grad, gradient, show, value_and_grad, vjp  # noqa: F401
from .errors import TransformError  # noqa: F401
from .rules import nondifferentiable, vjp_rule  # noqa: F401

__version__ = "0.1.0"
