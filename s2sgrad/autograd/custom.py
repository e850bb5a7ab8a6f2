"""``autograd.Function``, PyTorch's custom operation: a ``forward(ctx, *args)`` and a
``backward(ctx, *grad_outputs)`` written by the user, run eagerly on Tensors.

    class Exp(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = np.exp(x)                  # Tensors in, with grad mode off
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y                   # one gradient (or None) per forward argument

    out = Exp.apply(x)                      # a node in the graph, as a compiled call's

``apply`` runs ``forward`` with grad mode off and records one node whose backward calls
``backward`` (with grad mode off too) for the Tensor arguments that require grad;
``ctx.needs_input_grad``, ``ctx.saved_tensors``, ``ctx.mark_non_differentiable`` and
``once_differentiable`` are PyTorch's. The backward is the user's Python, not generated
code: the node cannot be differentiated again (``create_graph=True`` through it is refused),
and ``apply`` inside a ``@grad`` function is not read by the compiler (a ``vjp_rule`` is the
compiled form: docs/rules.md).

In the Tensor layer, above graph.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import grad_mode
from .graph import record
from .tensor import Tensor, _make


class FunctionCtx:
    """What ``forward`` leaves for ``backward``: ``save_for_backward(*tensors)`` and
    ``saved_tensors``, ``needs_input_grad`` (one bool per forward argument), and any
    attribute set on it."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.to_save: tuple = ()
        self.non_differentiable: set[int] = set()

    def save_for_backward(self, *tensors: Any) -> None:
        self.to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        return self.to_save

    def mark_non_differentiable(self, *outputs: Any) -> None:
        self.non_differentiable |= {id(o) for o in outputs}

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class _Backward:
    """The pair a node of ``apply`` holds: its backward calls the user's ``backward``."""

    def __init__(self, cls: type, ctx: FunctionCtx, wrt: tuple[int, ...], count: int):
        self.cls, self.ctx, self.wrt, self.count = cls, ctx, wrt, count
        self.adjoint_source = f"{cls.__qualname__}.backward (written by hand)"
        self.not_again = (
            f"create_graph=True through {cls.__name__}Backward: the backward of a custom "
            f"autograd.Function ({cls.__qualname__}.backward) is Python s2sgrad does not "
            "differentiate. Register its derivative with @s2sgrad.vjp_rule on a function "
            "of arrays instead: that form is differentiated again.")

    def backward(self, saved: Any, out_bar: Any) -> tuple:
        grads = out_bar if isinstance(out_bar, tuple) else (out_bar,)
        with grad_mode.no_grad():
            given = self.cls.backward(self.ctx, *(_make(np.asarray(g)) for g in grads))
        given = given if isinstance(given, tuple) else (given,)
        if len(given) != self.count:
            raise RuntimeError(f"function {self.cls.__name__}Backward returned an incorrect "
                               f"number of gradients (expected {self.count}, got "
                               f"{len(given)})")
        return tuple(None if given[i] is None else np.asarray(
            given[i].data if isinstance(given[i], Tensor) else given[i])
            for i in self.wrt)


class Function:
    """PyTorch's ``torch.autograd.Function``: subclass it with static ``forward(ctx, ...)``
    and ``backward(ctx, ...)``, and call ``apply``."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        needs = tuple(isinstance(a, Tensor) and a.requires_grad and grad_mode.is_grad_enabled()
                      for a in args)
        ctx = FunctionCtx(needs)
        with grad_mode.no_grad():
            out = cls.forward(ctx, *args)
        outs = out if isinstance(out, tuple) else (out,)
        arrays = [np.asarray(o.data if isinstance(o, Tensor) else o) for o in outs]
        wrt = tuple(i for i, n in enumerate(needs) if n)
        if not wrt:
            made = [o if isinstance(o, Tensor) else _make(a) for o, a in zip(outs, arrays,
                                                                              strict=True)]
            return tuple(made) if isinstance(out, tuple) else made[0]
        pair = _Backward(cls, ctx, wrt, len(args))
        result = record(f"{cls.__name__}Backward", pair, ctx,
                        tuple(arrays) if isinstance(out, tuple) else arrays[0], args, wrt)
        results = result if isinstance(result, tuple) else (result,)
        for o, r in zip(outs, results, strict=True):
            if id(o) in ctx.non_differentiable:
                r._grad_fn, r._requires_grad = None, False
        return result


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """PyTorch's marker for a backward that cannot be differentiated again: every custom
    backward here is one already."""
    @functools.wraps(backward)
    def wrapper(ctx: Any, *grad_outputs: Any) -> Any:
        return backward(ctx, *grad_outputs)
    return wrapper
