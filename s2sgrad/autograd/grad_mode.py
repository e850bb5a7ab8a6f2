"""Grad mode: whether calls on Tensors record a graph.

The flag lives in a ContextVar, so it is per thread (a new thread starts with grad enabled, as
in PyTorch) and per asyncio task. ``no_grad``, ``enable_grad``, ``set_grad_enabled`` and
``inference_mode`` work as context managers and as decorators::

    with no_grad():
        w -= lr * w.grad

    @no_grad()            # or @no_grad
    def evaluate(x): ...

``inference_mode`` is ``no_grad`` that also sets a second flag, which
``is_inference_mode_enabled`` reads, as PyTorch's does; the Tensors made inside are ordinary
Tensors (PyTorch's restrictions on its inference tensors are not reproduced).

In the Tensor layer; imports nothing of s2sgrad.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_enabled: ContextVar[bool] = ContextVar("s2sgrad_grad_enabled", default=True)
_inference: ContextVar[bool] = ContextVar("s2sgrad_inference_mode", default=False)


def is_grad_enabled() -> bool:
    """True when operations on Tensors that require grad record a graph."""
    return _enabled.get()


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return _inference.get()


class _GradMode:
    """Base of the three switches: sets the flag on enter, restores it on exit."""

    mode: bool

    def __enter__(self) -> None:
        self.prev = _enabled.get()
        _enabled.set(self.mode)

    def __exit__(self, *exc: object) -> None:
        _enabled.set(self.prev)

    def __call__(self, fn: F) -> F:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _enabled.get()
            _enabled.set(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _enabled.set(prev)

        return wrapper  # type: ignore[return-value]


class _NoParamDecorator(_GradMode):
    # Lets ``@no_grad`` be written with or without parentheses, as PyTorch allows.
    def __new__(cls, fn: Callable | None = None):
        self = super().__new__(cls)
        if fn is None:
            return self
        self.__init__()
        return self(fn)


class no_grad(_NoParamDecorator):
    """Disable graph recording: results of Tensor operations do not require grad."""

    mode = False


class enable_grad(_NoParamDecorator):
    """Re-enable graph recording, e.g. inside a ``no_grad`` block."""

    mode = True


class set_grad_enabled(_GradMode):
    """Set grad mode to ``mode``.

    Called as a function it takes effect at once (``set_grad_enabled(False)``); as a context
    manager or decorator it restores the previous mode on exit.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _enabled.get()
        self.mode = bool(mode)
        _enabled.set(self.mode)

    def __enter__(self) -> None:
        pass  # the mode was set by __init__; __exit__ restores self.prev

    def __call__(self, fn: F) -> F:
        _enabled.set(self.prev)  # as a decorator, only the decorated calls change the mode
        return super().__call__(fn)


class inference_mode:
    """Inference mode on (``mode=True``): no graph is recorded, and
    ``is_inference_mode_enabled()`` is True; or off (``mode=False``), which, as in PyTorch,
    also turns grad mode on. The previous modes come back on exit. A context manager and a
    decorator, with or without parentheses (``@inference_mode``)."""

    def __new__(cls, mode: Any = True) -> Any:
        self = super().__new__(cls)
        if callable(mode):  # @inference_mode, without parentheses
            self.__init__()
            return self(mode)
        return self

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self.prev: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        self.prev.append((_enabled.get(), _inference.get()))
        _enabled.set(not self.mode)
        _inference.set(self.mode)

    def __exit__(self, *exc: object) -> None:
        grad, inference = self.prev.pop()
        _enabled.set(grad)
        _inference.set(inference)

    def __call__(self, fn: F) -> F:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            grad = _enabled.set(not mode)
            inference = _inference.set(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _inference.reset(inference)
                _enabled.reset(grad)

        return wrapper  # type: ignore[return-value]
