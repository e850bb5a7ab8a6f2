"""``with`` blocks (the context managers known to leave values as they are, and no_grad) and
``try`` blocks.

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

A ``try`` with one ``except`` clause becomes a ``syntax.Try`` whose two blocks are walked as
an if's: the variables either assigns are merged after it, and each block ends by setting a
flag (True in the body, False in the handler) that the adjoint branches on:

    try:                                  try:
        L = np.linalg.cholesky(K)             L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:   ->        L_2 = L
        L = np.linalg.cholesky(K + J)         _ok = True
                                          except np.linalg.LinAlgError:
                                              _t1 = K + J
                                              L_1 = np.linalg.cholesky(_t1)
                                              L_2 = L_1
                                              _ok = False

That is Python's meaning only where a body that raised partway did nothing the rest of the
function sees: the handler reads no variable the body assigns, a variable the body assigns
and the handler does not is not read after the try, the body holds no branch or loop (whose
saves would outlive it), and no update in place of a value from outside it (analyze checks
that one). The rest is refused at its line. ``else:`` runs where the flag is True, and a
``finally:`` block after the try (an exception that leaves the try ends the call, and with
it the gradient); a try without ``except`` is its body followed by its finally block.

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
        self.flags: dict[gast.stmt, str] = {}  # each normalized try -> its flag

    def try_(self, stmt: gast.Try) -> None:
        walk, versions = self.walk, self.walk.versions
        if not stmt.handlers:  # try/finally
            for s in stmt.body + stmt.finalbody:
                walk.statement(s)
            return
        handler = self._handler(stmt)
        self._check_partial(stmt, handler)
        before = dict(versions.current)
        body = walk.block(stmt.body)
        self._check_body(body)
        after_body, versions.current = versions.current, dict(before)
        caught = walk.block(handler.body)
        versions.merge(before, after_body, body, versions.current, caught)
        flag = walk.namer.fresh("_ok")
        body.append(syntax.assign(flag, syntax.const(True)))
        caught.append(syntax.assign(flag, syntax.const(False)))
        new = syntax.try_(body, syntax.clone(handler.type), caught)
        self.flags[new] = flag
        walk.emit(new, stmt)
        if stmt.orelse:
            walk.branch(stmt, syntax.name(flag), stmt.orelse, [])
        for s in stmt.finalbody:
            walk.statement(s)

    def _handler(self, stmt: gast.Try) -> gast.ExceptHandler:
        parsed = self.parsed
        if len(stmt.handlers) > 1:
            raise parsed.error("a try with more than one except clause is not supported",
                               stmt.handlers[1], "Catch a tuple of exceptions in one "
                               "clause: except (KeyError, IndexError):")
        handler = stmt.handlers[0]
        if handler.name is not None:
            raise parsed.error("'except ... as name' is not supported in a differentiated "
                               "function", handler, "Drop 'as name'.")
        caught = handler.type
        parts = caught.elts if isinstance(caught, gast.Tuple) else [] if caught is None \
            else [caught]
        for part in parts:
            found = parsed.resolve(part)
            if not (isinstance(found, type) and issubclass(found, BaseException)):
                raise parsed.error("an except clause here must name exception classes "
                                   "from outside the function", part,
                                   "Write the class: except np.linalg.LinAlgError:")
        return handler

    def _check_partial(self, stmt: gast.Try, handler: gast.ExceptHandler) -> None:
        """What a body that raised partway assigned must not be seen after it: by the
        handler, or after the try where the handler does not assign it again."""
        parsed = self.parsed
        stored = _stored(stmt.body)
        assigned: set[str] = set()  # by the handler so far: read again, its own value
        for s in handler.body:
            node = next((n for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(
                n.ctx, gast.Load) and n.id in stored - assigned), None)
            assigned |= _stored([s])
            if node is not None:
                raise parsed.error(
                    f"the except block reads '{node.id}', which the try block assigns: "
                    "where the try block raised, it may hold either value", node,
                    f"Read the value '{node.id}' had before the try under another name.")
        # by position: the statements walked here are copies of the function's
        inside = [((s.lineno, s.col_offset), (s.end_lineno, s.end_col_offset))
                  for s in stmt.body + stmt.orelse]
        only_body = stored - _stored(handler.body) - _assigned_last(stmt.body)
        for node in gast.walk(parsed.node):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                    node.id in only_body and not any(
                        start <= (node.lineno, node.col_offset) < end for start, end in inside):
                raise parsed.error(
                    f"'{node.id}' is assigned in the try block and not in the except block, "
                    "and read after the try: where the try block raised partway, it holds "
                    "whichever value it had then", node,
                    f"Assign '{node.id}' in the except block too.")

    def _check_body(self, body: list[gast.stmt]) -> None:
        """No branch or loop in the body (a conditional expression, and/or, a loop): their
        saves would outlive a body that raised after them."""
        for s in body:
            if isinstance(s, gast.With):
                self._check_body(s.body)
            elif isinstance(s, (gast.If, gast.For, gast.While, syntax.Try)):
                raise self.parsed.error(
                    "a branch or a loop inside a try block (an if, a conditional expression, "
                    "and/or, a loop, a try) is not supported", s,
                    "Compute it before the try, or in a function the try block calls.")

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


def _stored(stmts: list[gast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _assigned_last(body: list[gast.stmt]) -> set[str]:
    """Names a body assigns once, in a statement after which nothing can raise (copies and
    constants): where the body raised, they were not assigned, as the merge after the try
    has it."""
    found = set()
    for k, stmt in enumerate(body):
        rest = body[k + 1:]
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and all(
                    isinstance(s, gast.Assign) and all(isinstance(t, gast.Name)
                                                       for t in s.targets)
                    and isinstance(s.value, (gast.Name, gast.Constant)) for s in rest):
            name = stmt.targets[0].id
            if name not in _stored(body[:k] + rest):
                found.add(name)
    return found
