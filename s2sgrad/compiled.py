"""What the compiler returns: a ``Compiled`` forward/backward pair (reverse mode) and a
``CompiledJvp`` tangent function (forward mode), with what is known of the output and what
must still hold for the result to stay valid (``valid``).

Part of the compiler layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .analyze import Abstract
from .parse import still_valid
from .rules import registry


@dataclass(frozen=True)
class Compiled:
    """A compiled forward/backward pair for one (function, wrt, signature)."""

    fn: Callable
    name: str
    wrt: tuple[str, ...]  # differentiated parameters, in the order backward returns them
    signature: tuple[tuple[str, Abstract], ...]
    forward: Callable
    backward: Callable
    forward_source: str
    adjoint_source: str
    saved: tuple[str, ...]  # the primal values the forward keeps for the adjoint
    result_value: Abstract  # what is known of the output
    filename: str
    result_aliases: frozenset[str] = frozenset()  # parameters the output may share memory with
    dependencies: tuple = ()  # what non-local names resolved to (see parse.still_valid)
    version: object = None  # the rule table's version it was compiled with (registry.version)
    by_string_value: bool = False  # specialised on the values of string arguments

    # the function's code, defaults and keyword defaults when compiled (see parse.own_state)
    code: Any = None
    defaults: Any = None
    own: tuple = ()
    # whether a call must walk ``dependencies`` (and keyword defaults) to know it is valid;
    # the code and the defaults are checked by identity on every call (api)
    walk: bool = True
    # saved values that may share memory with arrays outside: (index, parameter or None); a
    # backward that runs later copies them when the forward runs (own_saved)
    external: tuple = ()
    # for a Derivative's pair (higher.py): the compiled tangent function and pair it calls
    calls: tuple = ()

    def own_saved(self, saved: tuple, protected: set | frozenset = frozenset()) -> tuple:
        """``saved`` with the arrays it may share with the outside copied, so that a
        backward run later sees the values of the forward; the parameters in ``protected``
        are guarded another way (a Tensor's version counter)."""
        if not self.external:
            return saved
        own = list(saved)
        for i, param in self.external:
            if isinstance(own[i], np.ndarray) and param not in protected:
                own[i] = own[i].copy()
            elif type(own[i]) is list:  # a loop's stack: the views in it (rows of an argument)
                own[i] = [_own_views(v) for v in own[i]]
        return tuple(own)

    def valid(self) -> bool:
        """Still what compiling now would give: the same rules, the same code and defaults,
        the same resolved names."""
        return _valid(self)

    @property
    def source(self) -> str:
        return self.forward_source + "\n\n" + self.adjoint_source


def _valid(compiled: Any) -> bool:
    return compiled.version is registry.version and still_valid(compiled.own) and \
        still_valid(compiled.dependencies)


@dataclass(frozen=True)
class CompiledJvp:
    """A compiled tangent function for one (function, wrt, signature): ``jvp(*args,
    **kwargs, <x>_dot=...)`` returns ``(out, out_dot)`` (or ``out_dot`` alone)."""

    fn: Callable
    name: str
    wrt: tuple[str, ...]  # the parameters that move, in the order of tangent_params
    signature: tuple[tuple[str, Abstract], ...]
    jvp: Callable
    source: str
    tangent_params: tuple[str, ...]  # the keyword-only parameters taking wrt's tangents
    result_value: Abstract
    filename: str
    result_aliases: frozenset[str] = frozenset()
    dependencies: tuple = ()
    version: object = None
    by_string_value: bool = False
    code: Any = None
    defaults: Any = None
    own: tuple = ()
    walk: bool = True
    batch: str | None = None  # batched: the keyword-only parameter taking the batch size
    # batched, where it cannot be done: why (``jvp`` is None; one direction at a time)
    unbatchable: str | None = None
    # batched, a direction costs what the whole batch's first derivative costs (forward over
    # forward, see higher.derivative_rows): worth it for few directions only
    quadratic: bool = False

    def valid(self) -> bool:
        return _valid(self)


def _own_views(value: Any) -> Any:
    """A value pushed on a loop's stack, with the arrays in it that view another array's
    memory copied (what the loop made itself owns its memory)."""
    if isinstance(value, np.ndarray):
        return value.copy() if value.base is not None else value
    if type(value) is tuple:
        return tuple(_own_views(v) for v in value)
    return value
