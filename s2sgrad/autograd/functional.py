"""PyTorch's ``torch.autograd.functional`` over s2sgrad Tensors: ``vjp``, ``jvp``,
``jacobian``, ``hessian``, ``hvp`` and ``vhp`` of a function of Tensors.

``func`` takes Tensors (one, or a tuple ``inputs``) and returns a Tensor (or a tuple of
them): Tensor operators, ``@s2sgrad.grad`` functions, or both. Everything runs on the graph
the calls record; second derivatives use ``create_graph`` (graph.py). As in PyTorch, results
are detached unless ``create_graph=True``, and ``jacobian``/``hessian`` build one row per
output entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import graph
from .tensor import Tensor, tensor


def _as_tuple(value: Any) -> tuple[tuple, bool]:
    if isinstance(value, tuple):
        return value, True
    return (value,), False


def _leaves(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs that require grad: the caller's own Tensors if they do and the result keeps
    its graph, detached copies otherwise (as PyTorch's functional API does)."""
    out = []
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"the inputs must be Tensors, not {type(t).__name__}")
        out.append(t if create_graph and t.requires_grad else
                   t.detach().requires_grad_(True))
    return tuple(out)


def _grads(outputs: tuple, inputs: tuple, seeds: tuple, create_graph: bool) -> tuple:
    found = graph.grad(outputs, inputs, seeds, create_graph=create_graph, allow_unused=True,
                       retain_graph=True)
    return tuple(tensor(np.zeros_like(x.data)) if g is None else
                 (g if create_graph else g.detach()) for g, x in zip(found, inputs, strict=True))


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False) -> tuple:
    """``(func(inputs), v^T J)``, as ``torch.autograd.functional.vjp``."""
    inputs, many = _as_tuple(inputs)
    leaves = _leaves(inputs, create_graph)
    out = func(*leaves)
    outs, _ = _as_tuple(out)
    seeds = (None,) * len(outs) if v is None else _as_tuple(v)[0]
    grads = _grads(outs, leaves, seeds, create_graph)
    value = out if create_graph else _detached(out)
    return value, (grads if many else grads[0])


def jvp(func: Callable, inputs: Any, v: Any, create_graph: bool = False) -> tuple:
    """``(func(inputs), J v)``, as ``torch.autograd.functional.jvp``: by the double-vjp
    trick (J v is the vjp of the linear map u -> J^T u)."""
    inputs, _ = _as_tuple(inputs)
    tangents = _as_tuple(v)[0]
    leaves = _leaves(inputs, True)
    out = func(*leaves)
    outs, many_out = _as_tuple(out)
    dummies = tuple(tensor(np.zeros_like(o.data), requires_grad=True) for o in outs)
    grads = graph.grad(outs, leaves, dummies, create_graph=True, allow_unused=True,
                       retain_graph=True)
    pairs = [(g, t) for g, t in zip(grads, tangents, strict=True) if g is not None]
    moved = _grads(tuple(g for g, _ in pairs), dummies, tuple(t for _, t in pairs),
                   create_graph) if pairs else tuple(tensor(np.zeros_like(o.data))
                                                     for o in outs)
    value = out if create_graph else _detached(out)
    return value, (moved if many_out else moved[0])


def jacobian(func: Callable, inputs: Any, create_graph: bool = False) -> Any:
    """The Jacobian of ``func`` at ``inputs``: for one input and one output a Tensor of
    shape ``out.shape + input.shape``; tuples of them otherwise (as PyTorch nests them)."""
    inputs, many = _as_tuple(inputs)
    leaves = _leaves(inputs, True)
    out = func(*leaves)
    outs, many_out = _as_tuple(out)
    blocks = []
    for o in outs:
        rows = []
        for e in np.eye(o.data.size):
            rows.append(_grads((o,), leaves, (tensor(np.reshape(e, o.shape)),), create_graph))
        per_input = []
        for k, x in enumerate(leaves):
            stacked = np.stack([r[k].data for r in rows]) if rows else np.zeros((0,) + x.shape)
            per_input.append(tensor(np.reshape(stacked, tuple(o.shape) + tuple(x.shape))))
        blocks.append(tuple(per_input) if many else per_input[0])
    return tuple(blocks) if many_out else blocks[0]


def hessian(func: Callable, inputs: Any, create_graph: bool = False) -> Any:
    """The Hessian of scalar ``func`` at ``inputs`` (the Jacobian of its gradient)."""
    inputs_tuple, many = _as_tuple(inputs)

    def gradient(*xs: Tensor) -> Any:
        grads = graph.grad(func(*xs), xs, create_graph=True, allow_unused=True)
        grads = tuple(tensor(np.zeros_like(x.data)) if g is None else g
                      for g, x in zip(grads, xs, strict=True))
        return grads if many else grads[0]

    return jacobian(gradient, inputs_tuple if many else inputs_tuple[0], create_graph)


def hvp(func: Callable, inputs: Any, v: Any, create_graph: bool = False) -> tuple:
    """``(func(inputs), H v)`` for scalar ``func``, by a double backward."""
    inputs, many = _as_tuple(inputs)
    tangents = _as_tuple(v)[0]
    leaves = _leaves(inputs, True)
    out = func(*leaves)
    grads = graph.grad(out, leaves, create_graph=True, allow_unused=True)
    used = [(g, t) for g, t in zip(grads, tangents, strict=True) if g is not None]
    inner = sum(((g * _tensor(t)).sum() for g, t in used), tensor(0.0))
    products = _grads((inner,), leaves, (None,), create_graph) if used else tuple(
        tensor(np.zeros_like(x.data)) for x in leaves)
    value = out if create_graph else out.detach()
    return value, (products if many else products[0])


def vhp(func: Callable, inputs: Any, v: Any, create_graph: bool = False) -> tuple:
    """``(func(inputs), v^T H)``: the Hessian is symmetric, so it is ``hvp``."""
    return hvp(func, inputs, v, create_graph)


def _tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else tensor(np.asarray(value))


def _detached(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_detached(v) for v in value)
    return value.detach() if isinstance(value, Tensor) else value
