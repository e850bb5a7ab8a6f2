"""What every optimizer shares, ``Optimizer``: parameter groups, per-parameter state, ``step``,
``zero_grad`` and ``state_dict``, as in PyTorch. A subclass gives its update formula as
``update(p, grad, state, group)``, which changes ``p.data`` in place.

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
    """Refuse an option below ``low`` (or NaN), in PyTorch's words."""
    if not value >= low:
        raise ValueError(f"Invalid {name}: {value}")
