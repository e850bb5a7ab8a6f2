"""What ``gradient(f)`` and ``value_and_grad(f)`` return: a ``Derivative``, a callable the
compiler recognises, so that differentiating code that calls one (or a transform of one) is
higher order rather than a refusal (see ``higher.py``). And what ``checkpoint(f)`` returns:
a ``Checkpointed``, which the compiler recognises too (its calls save their arguments
rather than what the adjoint of ``f`` reads, and the adjoint runs ``f``'s forward again).

A Derivative is called like the function it differentiates and returns what the transform
returns; how it runs is given by the public API (``set_maker``), which sits above the
compiler. An exception raised in the code it runs leaves with a note naming the user's
lines (``errors.note_generated``). Part of the compiler layer; imports only ``errors``.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any

from ..errors import note_generated

# Set by the public API: (function, positions, with_value) -> a Derivative that runs it;
# and its functions that make Derivatives (gradient -> False, value_and_grad -> True).
_maker: Callable[[Any, tuple[int, ...], bool], Derivative] | None = None
_makers: dict[Any, bool] = {}


def set_maker(maker: Callable[[Any, tuple[int, ...], bool], Derivative],
              makers: dict[Any, bool]) -> None:
    global _maker
    _maker = maker
    _makers.update(makers)


def maker_of(fn: Any) -> bool | None:
    """For ``gradient`` False, for ``value_and_grad`` True (with the value), else None."""
    try:
        return _makers.get(fn)
    except TypeError:  # unhashable
        return None


def make(target: Any, positions: tuple[int, ...], with_value: bool) -> Derivative:
    """``gradient(target, positions)`` (``value_and_grad`` with ``with_value``)."""
    return _maker(target, positions, with_value)


class Derivative:
    """``gradient(f, wrt)`` or ``value_and_grad(f, wrt)``: ``derivative_of`` is ``f`` (a
    function, or another Derivative), ``positions`` the positional parameters it
    differentiates, ``single`` whether the gradient is one value rather than a tuple."""

    def __init__(self, target: Any, positions: tuple[int, ...], single: bool, with_value: bool,
                 call: Callable, name: str):
        self.derivative_of = target
        self.positions = positions
        self.single = single
        self.with_value = with_value
        self._call = call
        self.__signature__ = signature_of(target)
        self.__name__ = self.__qualname__ = name
        self.__doc__ = getattr(target, "__doc__", None)
        self.__module__ = getattr(target, "__module__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._call(*args, **kwargs)
        except BaseException as exc:
            note_generated(exc)
            raise

    @property
    def transform(self) -> str:
        kind = "value_and_grad" if self.with_value else "gradient"
        target = getattr(self.derivative_of, "__name__", "f")
        wrt = self.positions[0] if self.single else self.positions
        return f"{kind}({target}, wrt={wrt})"

    def __repr__(self) -> str:
        return f"<s2sgrad.{self.transform}>"


def signature_of(fn: Any) -> inspect.Signature:
    if isinstance(fn, Derivative):
        return fn.__signature__
    target = getattr(fn, "fn", fn) if hasattr(fn, "compiled_for") else fn
    try:
        return inspect.signature(target, follow_wrapped=False)
    except (TypeError, ValueError):  # a cache (functools.lru_cache) has none of its own
        return inspect.signature(target)


class Checkpointed:
    """``checkpoint(f)``: called, it is ``f``. A call of it in differentiated code runs
    ``f`` itself in the forward and keeps only its arguments; the adjoint runs the forward
    of ``f`` again, with its saves, right before the backward of ``f``. What ``f``'s
    adjoint would have read is then alive for one call at a time, not for the whole
    forward: memory for computation (one more forward of ``f``)."""

    checkpoint_of: Any = None  # the function (marks the class for the analysis)

    def __init__(self, fn: Callable):
        if not callable(fn) or isinstance(fn, type):
            raise TypeError(f"checkpoint() takes a function, not {type(fn).__name__}")
        self.fn = self.checkpoint_of = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """Read through an instance (a decorated method): the method bound to it."""
        return self if obj is None else Checkpointed(types.MethodType(self.fn, obj))

    def __repr__(self) -> str:
        return f"<s2sgrad.checkpoint({getattr(self.fn, '__qualname__', self.fn)!r})>"


def checkpoint(fn: Callable) -> Checkpointed:
    """``f`` whose calls in differentiated code are recomputed in the adjoint instead of
    saved: the forward keeps ``f``'s arguments, the adjoint runs ``f``'s forward again right
    before its backward. Use it on a block of a deep model, or on a chunk of a long loop::

        @s2sgrad.checkpoint
        def chunk(h, params):          # 100 steps: their saves live only in the adjoint
            for _ in range(100):
                h = step(h, params)
            return h

        def loss(h, params):
            for _ in range(100):       # 10,000 steps, 100 states kept
                h = chunk(h, params)
            return np.sum(h * h)

    Called outside differentiated code it is ``f``. The derivatives are the same as
    without it."""
    if isinstance(fn, Checkpointed):
        return fn
    return Checkpointed(fn)
