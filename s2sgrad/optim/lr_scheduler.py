"""Learning-rate schedulers with PyTorch's rules, reached as ``optim.lr_scheduler``.

    opt = optim.SGD(model.parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...)                 # opt.step() for each batch
        scheduler.step()

A scheduler sets each parameter group's ``lr`` from its epoch count ``last_epoch``. Creating
one takes a first step to epoch 0, stores ``initial_lr`` in every group that has none yet and
reads ``base_lrs`` from them. As in PyTorch, ``StepLR``, ``MultiStepLR``, ``ExponentialLR``
and ``CosineAnnealingLR`` are recursive (each step changes the group's current ``lr``, so a
change made by hand carries on), while
``LambdaLR`` is closed form (``base_lr * lr_lambda(epoch)``). ``ReduceLROnPlateau`` counts
epochs without improvement of a metric given to ``step(metric)`` instead.

``state_dict()`` holds every attribute but the optimizer (``LambdaLR`` leaves out its
functions, keeping only the attributes of callable objects); ``load_state_dict`` puts them
back. This module imports nothing from the package: it only reads and writes the optimizer's
``param_groups``.
"""

from __future__ import annotations

import collections
import math
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any


def _check_optimizer(optimizer: Any) -> None:
    if not isinstance(getattr(optimizer, "param_groups", None), list):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _lrs(optimizer: Any) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


class LRScheduler(ABC):
    """Base class: subclasses define ``get_lr``, the groups' learning rates at ``last_epoch``.

    ``last_epoch=-1`` starts a schedule; another value resumes one, and then every group must
    already have its ``initial_lr``.
    """

    def __init__(self, optimizer: Any, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming scheduler with last_epoch >= 0")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    @abstractmethod
    def get_lr(self) -> list[float]:
        """The learning rates for ``last_epoch``, one per group (called by ``step``)."""

    def step(self) -> None:
        """Advance one epoch and set the groups' learning rates (after ``optimizer.step()``)."""
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)

    def get_last_lr(self) -> list[float]:
        """The learning rates the last ``step`` set, one per group."""
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes saved by ``state_dict``."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """Each group's lr is its initial lr times ``lr_lambda(epoch)``: one function for all
    groups, or a list with one per group."""

    def __init__(self, optimizer: Any, lr_lambda: Callable[[int], float]
                 | Sequence[Callable[[int], float]], last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The attributes, with ``lr_lambdas`` holding None for each plain function (or lambda)
        and a copy of the ``__dict__`` of each callable object."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes; the functions stay, callable objects get their attributes."""
        saved = dict(state_dict)
        lr_lambdas = saved.pop("lr_lambdas")
        self.__dict__.update(saved)
        for fn, attributes in zip(self.lr_lambdas, lr_lambdas, strict=True):
            if attributes is not None:
                fn.__dict__.update(attributes)

    def get_lr(self) -> list[float]:
        return [base_lr * fn(self.last_epoch)
                for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class StepLR(LRScheduler):
    """Multiplies each group's lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Any, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]


class MultiStepLR(LRScheduler):
    """Multiplies each group's lr by ``gamma`` at each epoch of ``milestones`` (a milestone
    given twice, twice)."""

    def __init__(self, optimizer: Any, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = collections.Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        times = self.milestones.get(self.last_epoch, 0)
        return [group["lr"] * self.gamma ** times for group in self.optimizer.param_groups]


class ExponentialLR(LRScheduler):
    """Multiplies each group's lr by ``gamma`` every epoch."""

    def __init__(self, optimizer: Any, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]


class CosineAnnealingLR(LRScheduler):
    """Anneals each group's lr from its initial lr to ``eta_min`` along half a cosine period
    of ``T_max`` epochs, then back up, and so on (PyTorch's recursive form: each step scales
    the current lr's distance to ``eta_min``)."""

    def __init__(self, optimizer: Any, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _lrs(self.optimizer)
        if self._step_count == 1 and self.last_epoch > 0:  # resumed: the closed form
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:  # leaving the minimum
            return [group["lr"] + (base_lr - self.eta_min)
                    * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in groups]


class ReduceLROnPlateau(LRScheduler):
    """Multiplies each group's lr by ``factor`` (not below ``min_lr``) once the metric given to
    ``step(metric)`` has not improved for more than ``patience`` epochs, then waits
    ``cooldown`` epochs before counting again.

    The metric improves when it beats the best so far by more than ``threshold``: relatively
    (``threshold_mode="rel"``: below ``best * (1 - threshold)`` in mode ``"min"``, above
    ``best * (1 + threshold)`` in mode ``"max"``) or absolutely (``"abs"``: by ``threshold``).
    A reduction smaller than ``eps`` is skipped. It does not set ``initial_lr``.
    """

    def __init__(self, optimizer: Any, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | Sequence[float] = 0,
                 eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr: float | None = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _lrs(optimizer)
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def get_lr(self) -> list[float]:
        """The groups' current learning rates: ``step(metric)`` changes them."""
        return _lrs(self.optimizer)

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: Any) -> None:  # type: ignore[override]
        """Count one epoch with this value of the metric, and reduce the lrs if it is time."""
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _lrs(self.optimizer)

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs, strict=True):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes saved by ``state_dict``."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
