"""What the compiler returns: a ``Compiled`` forward/backward pair (reverse mode) and a
``CompiledJvp`` tangent function (forward mode), with what is known of the output and what
must still hold for the result to stay valid (``valid``); and where it is kept: the
``FunctionState`` of the function it was compiled for (``state_of``), stored on that
function, so that what was compiled for a function is freed with it.

    state_of(f).vjp[key]     the pair compiled for f and one specialisation
    state_of(f).spec         f's specialiser (function.py); .derivatives: gradient(f) and co.

Part of the compiler layer.
"""

from __future__ import annotations

import types
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .analyze import Abstract
from .derivatives import Derivative
from .validity import current


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
    dependencies: tuple = ()  # what non-local names resolved to (see validity.still_valid)
    version: object = None  # the rule table's version it was compiled with (registry.version)
    by_string_value: bool = False  # specialised on the values of string arguments

    # the function's code, defaults and keyword defaults when compiled (see validity.own_state)
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
    # the random-number function it (or a callee) calls, if any: a checkpoint of it would
    # draw other numbers when its forward runs again
    draws: str = ""

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
        return current(self)

    @property
    def source(self) -> str:
        return self.forward_source + "\n\n" + self.adjoint_source


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
        return current(self)


def _own_views(value: Any) -> Any:
    """A value pushed on a loop's stack, with the arrays in it that view another array's
    memory copied (what the loop made itself owns its memory)."""
    if isinstance(value, np.ndarray):
        return value.copy() if value.base is not None else value
    if type(value) is tuple:
        return tuple(_own_views(v) for v in value)
    return value


class FunctionState:
    """What s2sgrad keeps for one function (or Derivative, or ``@grad`` Function): its
    specialiser, the pairs and tangent functions compiled for it by key, the Derivatives
    made of it, the Tensor layer's seeded gradients of it, and for a batched tangent
    function, its transpose (higher.py). ``owner`` is the object it belongs to:
    ``functools.wraps`` copies a function's attributes onto its wrapper, whose copy of the
    state is then not its own."""

    __slots__ = ("derivatives", "jvp", "owner", "seeded", "spec", "transposed", "vjp")

    def __init__(self, owner: Any):
        self.owner = owner
        self.spec: Any = None
        self.vjp: dict = {}
        self.jvp: dict = {}
        self.derivatives: dict = {}
        self.seeded: dict = {}
        self.transposed: Any = None


_ATTRIBUTE = "_s2sgrad_state"

# Objects that carry their state as an attribute; function.py adds its Function types.
_STORED_ON: tuple[type, ...] = (types.FunctionType, Derivative)

# The state of other callables (callable instances, whose attributes are the user's; an
# lru_cache, a partial): by identity, the least recently used first. A state here holds its
# owner, so an id is not reused while its entry lasts, and holds what that owner holds (a
# decorator instance and the function it wraps). What it saves is a Derivative made again
# (microseconds: the compiled pairs are kept on the function behind the callable), so it is
# small: 64 covers the callables of this kind a program differentiates over and over.
_ELSEWHERE = 64
_elsewhere: OrderedDict[int, FunctionState] = OrderedDict()


def store_on(cls: type) -> None:
    """Keep the state of instances of ``cls`` on them (``_s2sgrad_state``)."""
    global _STORED_ON
    _STORED_ON += (cls,)


def state_of(owner: Any) -> FunctionState:
    """The state of ``owner``, made on first use."""
    if isinstance(owner, _STORED_ON):
        held = owner.__dict__
        state = held.get(_ATTRIBUTE)
        if state is None or state.owner is not owner:
            state = held[_ATTRIBUTE] = FunctionState(owner)
        return state
    state = _elsewhere.get(id(owner))
    if state is None or state.owner is not owner:
        state = _elsewhere[id(owner)] = FunctionState(owner)
        if len(_elsewhere) > _ELSEWHERE:
            _elsewhere.popitem(last=False)
    else:
        _elsewhere.move_to_end(id(owner))
    return state


# Per code object, the templates its compiles left for the other functions of that code
# (pipeline._Shared, by mode and key): held weakly, an entry lives as long as its code.
shared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def cache_sizes() -> dict[str, int]:
    """The sizes of the tables kept outside the functions (for tests and benchmarks): the
    states kept by identity (bounded), the code objects with templates (one per live code
    object compiled) and their templates (bounded per code object)."""
    return {"elsewhere": len(_elsewhere), "codes": len(shared),
            "templates": sum(len(v) for table in list(shared.values()) for v in table.values())}
