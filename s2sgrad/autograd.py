"""PyTorch's ``torch.autograd`` functions over s2sgrad Tensors.

``grad(outputs, inputs)`` returns gradients without touching ``.grad``; ``backward(tensors)``
is ``t.backward()`` for several roots at once.
"""

from .runtime.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .runtime.graph import backward, grad

__all__ = ["backward", "enable_grad", "grad", "is_grad_enabled", "no_grad", "set_grad_enabled"]
