"""Models as classes, in PyTorch's spirit: a ``Module`` finds its parameters by itself.

    class Model(nn.Module):
        def __init__(self):
            self.W = nn.Parameter(np.random.randn(3, 1))
            self.b = nn.Parameter(np.zeros(1))

        def forward(self, x):
            return np.tanh(x @ self.W + self.b)

    model = Model()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()                      # model.W.grad, model.b.grad
    opt = optim.SGD(model.parameters(), lr=0.1)

Parameters are the attributes that are ``nn.Parameter``s (frozen ones too, as in PyTorch) or
other leaf Tensors that require grad, found in attribute order, recursively through
sub-modules and through lists, tuples and dicts of them. No registration and no
``super().__init__()`` call are needed. A plain Tensor that does not require grad is a
constant, not a parameter: to freeze a weight and unfreeze it later, make it a Parameter, so
that an optimizer built while it is frozen still holds it (optimizers skip a parameter whose
``.grad`` is None).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from . import nn_utils as utils
from .autograd.printing import format_tensor
from .autograd.tensor import Tensor

# ``nn.utils.clip_grad_norm_``, and ``from s2sgrad.nn.utils import clip_grad_norm_`` as with
# ``torch.nn.utils``, though nn is a module and not a package.
sys.modules[f"{__name__}.utils"] = utils


class Parameter(Tensor):
    """A leaf Tensor that requires grad by default: a model's weight."""

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        suffix = ["requires_grad=True"] if self._requires_grad else []
        return "Parameter containing:\n" + format_tensor(self.data, suffix)


class Module:
    """Base class of models: ``parameters()``, ``zero_grad()``, and ``model(x)`` calling
    ``forward``."""

    training: bool = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, parameter)`` pairs, each parameter once."""
        seen: set[int] = set()
        for name, value in _walk(self, prefix, set()):
            if id(value) not in seen:
                seen.add(id(value))
                yield name, value

    def parameters(self) -> Iterator[Tensor]:
        """The parameters held by this module and its sub-modules: every ``Parameter``
        (whether or not it requires grad now), and other leaf Tensors that require grad."""
        for _, p in self.named_parameters():
            yield p

    def modules(self) -> Iterator[Module]:
        """This module and every sub-module, each once."""
        seen: set[int] = set()
        stack: list[Any] = [self]
        while stack:
            value = stack.pop(0)
            if isinstance(value, Module):
                if id(value) in seen:
                    continue
                seen.add(id(value))
                yield value
                stack.extend(vars(value).values())
            elif isinstance(value, (list, tuple)):
                stack.extend(value)
            elif isinstance(value, dict):
                stack.extend(value.values())

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None, or to zeros in place)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p._grad is not None:
                p._grad.zero_()

    def train(self, mode: bool = True) -> Module:
        """Set ``training`` on this module and its sub-modules (for layers that care)."""
        for m in self.modules():
            m.training = mode
        return self

    def eval(self) -> Module:
        return self.train(False)

    def __repr__(self) -> str:
        names = [f"  {name}: shape {tuple(p.shape)}" for name, p in self.named_parameters()]
        return f"{type(self).__name__}(" + ("\n" + "\n".join(names) + "\n" if names else "") + ")"


def _walk(value: Any, name: str, active: set[int]) -> Iterator[tuple[str, Tensor]]:
    """Parameters reachable from ``value``, depth first, in attribute order."""
    if isinstance(value, Tensor):
        if isinstance(value, Parameter) or (value.requires_grad and value.is_leaf):
            yield name, value
        return
    if id(value) in active:  # a cycle of references between modules
        return
    if isinstance(value, Module):
        items = vars(value).items()
    elif isinstance(value, (list, tuple)):
        items = ((str(i), v) for i, v in enumerate(value))
    elif isinstance(value, dict):
        items = ((str(k), v) for k, v in value.items())
    else:
        return
    active.add(id(value))
    for key, item in items:
        yield from _walk(item, f"{name}.{key}" if name else key, active)
    active.discard(id(value))
