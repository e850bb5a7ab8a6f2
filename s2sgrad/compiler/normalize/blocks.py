"""``with`` blocks: the context managers known to leave values as they are, and no_grad.

Takes a user's ``with`` statement; gives a normalized ``with`` whose one item is the user's
call of a known context manager, with constant arguments, around the ANF of its body:

    with np.errstate(divide="ignore"):        with np.errstate(divide="ignore"):
        y = np.log(x) * 2.0           ->          _t1 = np.log(x)
                                                   y = _t1 * 2.0

``with a, b:`` is ``with a: with b:``. The body always runs, once, so its variables need
no merge. The forward runs it under the manager, and the adjoint runs the body's adjoint
under it too (NumPy's error state applies to the adjoint's arithmetic as to the
forward's). What a manager does is looked up by the object its call resolves to
(``CONTEXTS``); each is one of:

    "plain"   values unchanged (np.errstate, warnings.catch_warnings, contextlib.nullcontext)
    "stop"    the values the body computes carry no gradient (no_grad: a stop-gradient)
    "grad"    the body's values carry gradients, even inside a "stop" block (enable_grad)

The Tensor layer registers its grad-mode managers (``register_context``), whose mode may
depend on the call's arguments (``set_grad_enabled(False)``). Any other manager is refused
at its line, and so is ``with ... as name``: what they do cannot be known here.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from ... import syntax
from .walk import Walk

PLAIN, STOP, GRAD = "plain", "stop", "grad"

# manager (the class or function a with's call resolves to) -> its mode, given the call's
# constant arguments
CONTEXTS: dict[Any, Callable[..., str]] = {
    np.errstate: lambda *args, **kwargs: PLAIN,
    warnings.catch_warnings: lambda *args, **kwargs: PLAIN,
    contextlib.nullcontext: lambda *args, **kwargs: PLAIN,
}


def register_context(manager: Any, mode: Callable[..., str]) -> None:
    """Declare what ``with manager(...)`` does to the values its body computes: ``mode``
    maps the call's (constant) arguments to "plain", "stop" or "grad"."""
    CONTEXTS[manager] = mode


class Blocks:
    def __init__(self, walk: Walk):
        self.walk = walk
        self.parsed = walk.parsed
        self.modes: dict[gast.stmt, str] = {}  # each normalized with -> its mode

    def with_(self, stmt: gast.With) -> None:
        item, *rest = stmt.items
        body = [syntax.replace(stmt, items=rest)] if rest else stmt.body
        mode = self.mode(item)
        walk = self.walk
        new = syntax.replace(stmt, items=[syntax.clone(item)], body=syntax.block(walk.block(body)))
        self.modes[new] = mode
        walk.emit(new, stmt)

    def mode(self, item: gast.withitem) -> str:
        call, parsed = item.context_expr, self.parsed
        if not isinstance(call, gast.Call) or syntax.dotted_name(call.func) is None:
            raise parsed.error("a 'with' block is supported only on a call of a known context "
                               "manager (np.errstate(...), no_grad(), ...)", call,
                               "Write the call in the 'with' line, or move the block out of "
                               "the differentiated function.")
        manager = parsed.resolve(call.func)
        name = syntax.dotted_name(call.func)
        if manager is contextlib.suppress:
            raise parsed.error("contextlib.suppress is not supported in a differentiated "
                               "function: it changes which statements run", call,
                               "Write the try/except it stands for.")
        if manager not in CONTEXTS:
            raise parsed.error(f"the context manager {name}(...) is not known to leave the "
                               "values its block computes unchanged", call,
                               "Move the 'with' block out of the differentiated function "
                               "(np.errstate, warnings.catch_warnings and no_grad are "
                               "supported).")
        if item.optional_vars is not None:
            raise parsed.error("'with ... as name' is not supported in a differentiated "
                               "function", item.optional_vars,
                               "Drop 'as name' (the block runs under the manager all the "
                               "same), or move the block out of the function.")
        values = [a for a in call.args] + [k.value for k in call.keywords]
        if any(isinstance(a, gast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords) or \
                not all(syntax.is_const(v) or syntax.is_static_tuple(v) for v in values):
            raise parsed.error(f"the arguments of {name}(...) in a 'with' line must be "
                               "constants", call,
                               "Write the settings out, e.g. np.errstate(divide=\"ignore\").")
        return CONTEXTS[manager](*[syntax.const_value(a) for a in call.args],
                                 **{k.arg: syntax.const_value(k.value) for k in call.keywords})
