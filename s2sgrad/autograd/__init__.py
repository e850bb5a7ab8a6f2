"""PyTorch's ``torch.autograd`` functions over s2sgrad Tensors, and the Tensor layer behind them.

``grad(outputs, inputs)`` returns gradients without touching ``.grad``; ``backward(tensors)``
is ``t.backward()`` for several roots at once; ``functional`` has ``jacobian``, ``hessian``,
``hvp``, ``vjp`` and ``jvp`` of functions of Tensors; ``Function`` is a custom operation
with a hand-written backward (custom.py).

The package is the Tensor layer, above the compiler: ``printing.py`` and ``dtypes.py`` at the
bottom, the modules of Tensor's bases (``shaping.py``, ``reductions.py``, ``indexing.py``,
``conversions.py``: its methods of one theme each), ``tensor.py`` (Tensor) and
``creators.py``, ``grad_mode.py``, ``graph.py`` (the graph between compiled calls and the
backward engine), and ``ops.py`` (eager operations through the compiler) on top. It imports
the compiler, never the public API (``api.py``).
"""

from . import functional, ops  # noqa: F401  (ops binds Tensor's operations)
from .custom import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .graph import backward, grad

__all__ = ["Function", "FunctionCtx", "backward", "enable_grad", "functional", "grad",
           "is_grad_enabled", "no_grad", "once_differentiable", "set_grad_enabled"]
