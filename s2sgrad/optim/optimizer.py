"""Optimizers over Tensors: ``SGD``, ``Adam``, ``AdamW`` and ``RMSprop``, with PyTorch's update
formulas; learning-rate schedulers in ``optim.lr_scheduler``.

    opt = optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

Updates change the parameters' data in place and bump their version counters, so a graph
that saved a parameter before the step refuses to run backward afterwards instead of
computing a wrong gradient. Hyperparameters live in ``param_groups`` (a list of dicts, one
per group of parameters) and can be changed between steps.

``state_dict()`` has PyTorch's layout: ``{"state": {index: {...}}, "param_groups": [{...,
"params": [indices]}]}``, parameters numbered in order across the groups, the state's values
NumPy arrays and numbers. ``load_state_dict`` puts such a dict into an optimizer over the same
parameters (matched by position), which then continues exactly as the saved one would have.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..autograd import grad_mode
from ..autograd.tensor import Tensor


class Optimizer(ABC):
    """Holds parameter groups and per-parameter state; subclasses define ``update``."""

    defaults: dict[str, Any]

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: dict[int, dict[str, Any]] = {}  # keyed by id(parameter)
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.param_groups: list[dict[str, Any]] = []
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group: ``{"params": [...], "lr": ...}``; unset options take the defaults."""
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append({**self.defaults, **group, "params": params})

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to None (the default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p._grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()`` if given.

        A parameter whose ``.grad`` is None (frozen, or not used by the loss) is skipped, as in
        PyTorch: its data, its version and its state (momentum buffer, Adam's moments and
        step count) stay as they are, and weight decay does not touch it.
        """
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        with grad_mode.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self.update(p, p.grad.data, self.state.setdefault(id(p), {}), group)
                        p._version.value += 1
        return loss

    def state_dict(self) -> dict[str, Any]:
        """The state and the groups' options, parameters replaced by their index: a copy, which
        later steps leave unchanged."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: copy.deepcopy(v) for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[key]: copy.deepcopy(value) for key, value in self.state.items()
                 if key in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the state and the options from ``state_dict`` (as made by ``state_dict()``),
        matching parameters by position. The dict is copied, not shared."""
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"])
               for g, s in zip(self.param_groups, saved_groups, strict=True)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        params = {i: p for saved, group in zip(saved_groups, self.param_groups, strict=True)
                  for i, p in zip(saved["params"], group["params"], strict=True)}
        state: dict[int, dict[str, Any]] = {}
        for i, saved in state_dict["state"].items():
            if i in params:
                p = params[i]
                state[id(p)] = {k: _cast(v, p.data.dtype) for k, v in saved.items()}
        self.state = state
        self.param_groups = [{**saved, "params": group["params"]}
                             for saved, group in zip(saved_groups, self.param_groups, strict=True)]

    @abstractmethod
    def update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any],
               group: dict[str, Any]) -> None:
        """Change ``p``'s data in place from its gradient (each optimizer's own rule)."""


def _cast(value: Any, dtype: np.dtype) -> Any:
    """A copy of a saved state value, floating arrays in the parameter's dtype."""
    if isinstance(value, np.ndarray):
        return value.astype(dtype) if np.issubdtype(value.dtype, np.floating) else value.copy()
    return copy.deepcopy(value)


def _check(name: str, value: float, low: float = 0.0) -> None:
    if not value >= low:
        raise ValueError(f"Invalid {name}: {value}")


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, dampening, weight decay and
    Nesterov momentum (PyTorch's formulation: the first step's buffer is the gradient)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize})

    def update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any],
               group: dict[str, Any]) -> None:
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p.data
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(g, copy=True)
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * g
            g = g + momentum * buf if group["nesterov"] else buf
        p.data -= group["lr"] * g


class Adam(Optimizer):
    """Adam (Kingma & Ba), with PyTorch's bias correction, L2 ``weight_decay`` added to the
    gradient (or, with ``decoupled_weight_decay``, applied to the parameter as AdamW does), and
    optional AMSGrad."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False,
                 maximize: bool = False, decoupled_weight_decay: bool = False) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    def update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any],
               group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            if group.get("decoupled_weight_decay"):
                p.data *= 1 - group["lr"] * group["weight_decay"]
            else:
                g = g + group["weight_decay"] * p.data
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p.data)
            state["exp_avg_sq"] = np.zeros_like(p.data)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(p.data)
        state["step"] += 1
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (g - m) * (1 - beta1)  # PyTorch's lerp: m + (1 - beta1) * (g - m)
        v *= beta2
        v += (1 - beta2) * g * g
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
            v = state["max_exp_avg_sq"]
        step = state["step"]
        bias1 = 1 - beta1 ** step
        bias2_sqrt = (1 - beta2 ** step) ** 0.5
        denom = np.sqrt(v) / bias2_sqrt + group["eps"]
        p.data -= (group["lr"] / bias1) * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): each step first shrinks the
    parameter by ``lr * weight_decay``, and the gradient is left as it is."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize, decoupled_weight_decay=True)


class RMSprop(Optimizer):
    """RMSprop (Hinton), PyTorch's formulation: ``eps`` is added to the root of the running
    mean square, ``centered`` subtracts the squared running mean of the gradient first, and
    ``momentum`` keeps a buffer of the scaled steps."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        _check("alpha value", alpha)
        super().__init__(params, {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                                  "centered": centered, "weight_decay": weight_decay,
                                  "maximize": maximize})

    def update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any],
               group: dict[str, Any]) -> None:
        alpha = group["alpha"]
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(p.data)
            if group["momentum"] > 0:
                state["momentum_buffer"] = np.zeros_like(p.data)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(p.data)
        state["step"] += 1
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p.data
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * g * g
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg += (g - grad_avg) * (1 - alpha)  # PyTorch's lerp
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += g / avg
            p.data -= group["lr"] * buf
        else:
            p.data -= group["lr"] * (g / avg)
