"""``with`` blocks (the context managers known to leave values as they are, and no_grad) and
``try`` blocks.

Takes a user's ``with`` statement; gives a normalized ``with`` whose one item is the user's
call of a known context manager, with constant arguments, around the ANF of its body:

    with np.errstate(divide="ignore"):        with np.errstate(divide="ignore"):
        y = np.log(x) * 2.0           ->          _t1 = np.log(x)
                                                   y = _t1 * 2.0

``with a, b:`` is ``with a: with b:``, and ``with contextlib.suppress(E): body`` the
``try: body`` / ``except E: pass`` it stands for. The body always runs, once, so its variables need
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
function sees. Checked on the versions, so that what a called function or method reads and
changes counts too: the handler reads no value from before the try of a variable the body
changes; a variable the body changes and the handler does not (an attribute of an object
built here too) is read nowhere after the try, unless the body changes it once, in a
statement after which nothing can raise; the body holds no branch or loop (whose saves
would outlive it), and no update in place of a value from outside it (analyze checks that
one). The rest is refused at its line. ``else:`` runs where the flag is True, and a
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
    def __init__(self, walk: Walk, objects: Any):
        self.walk = walk
        self.parsed = walk.parsed
        self.objects = objects  # objects built here: an attribute's variable, as written
        # a version merged after a try whose body changes it and whose handler does not ->
        # (its variable, the try): read after the try, refused (check_partial)
        self.partial: dict[str, tuple[str, gast.stmt]] = {}
        self.modes: dict[gast.stmt, str] = {}  # each normalized with -> its mode
        self.flags: dict[gast.stmt, str] = {}  # each normalized try -> its flag

    def try_(self, stmt: gast.Try) -> None:
        walk, versions = self.walk, self.walk.versions
        if not stmt.handlers:  # try/finally
            for s in stmt.body + stmt.finalbody:
                walk.statement(s)
            return
        handler = self._handler(stmt)
        before = dict(versions.current)
        body = walk.block(stmt.body)
        self._check_body(body)
        after_body, versions.current = versions.current, dict(before)
        caught = walk.block(handler.body)
        changed = {u for u, v in after_body.items() if before.get(u) != v}
        self._check_handler(caught, {before[u]: u for u in changed if u in before},
                            handler)
        again = {u for u, v in versions.current.items() if before.get(u) != v}
        # (a variable first bound in the body has no value to keep: Python's read after
        # the try would raise, where the merge would read None)
        partial = changed - again - (_assigned_last(body, versions.variable_of) & set(before))
        versions.merge(before, after_body, body, versions.current, caught)
        for user in partial:  # where the body raised partway, not what the merge says
            self.partial[versions.current[user]] = (user, stmt)
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

    def check_partial(self, body: list[gast.stmt]) -> None:
        """After the whole function: a variable a try block changes and its handler does
        not is read after the try nowhere (where the block raised partway, it holds
        whichever value it had then, which the merge after the try does not know)."""
        for s in syntax.in_order(body):
            if isinstance(s, (gast.Assign, gast.Expr, gast.Return, gast.If, gast.While,
                              gast.For)):
                head = s if not hasattr(s, "body") else getattr(s, "test", getattr(
                    s, "iter", None))
                read = syntax.names_read(head) if head is not None else set()
                found = next((v for v in sorted(read) if v in self.partial), None)
                if found is not None and not _is_merge_copy(s, self.partial):
                    user, where = self.partial[found]
                    raise self.parsed.error(
                        f"{self._shown(user)} is changed in the try block at line "
                        f"{where.lineno} and not in its except block, and read after the "
                        "try: where the try block raised partway, it holds whichever value "
                        "it had then", self._own(s, where),
                        f"Assign {self._shown(user)} in the except block too.")

    def _check_handler(self, caught: list[gast.stmt], stale: dict[str, str],
                       handler: gast.ExceptHandler) -> None:
        """The handler reads no value from before the try of a variable the body changes
        (where the body raised partway, the variable may hold either value)."""
        for s in syntax.in_order(caught):
            head = s if not hasattr(s, "body") else getattr(s, "test", getattr(s, "iter",
                                                                                None))
            read = syntax.names_read(head) if head is not None else set()
            found = next((stale[v] for v in sorted(read) if v in stale), None)
            if found is not None:
                raise self.parsed.error(
                    f"the except block reads {self._shown(found)}, which the try block "
                    "changes: where the try block raised partway, it may hold either value",
                    self._own(s, handler), f"Read the value {self._shown(found)} had before the try under "
                    "another name.")

    def _own(self, stmt: gast.stmt, outer: gast.AST) -> gast.AST:
        """``stmt`` where it is in the function's own source; ``outer`` (the try, the except
        clause) where it comes from a method inlined there."""
        fn = self.parsed.node
        inside = fn.lineno <= getattr(stmt, "lineno", 0) <= (fn.end_lineno or fn.lineno)
        return stmt if inside else outer

    def _shown(self, variable: str) -> str:
        """The user's spelling of a variable: an attribute of an object built here as
        ``obj.attr``."""
        for obj, fields in self.objects.fields.items():
            for attr, name in fields.items():
                if name == variable:
                    return f"'{obj}.{attr}'"
        return f"'{variable}'"

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
        call = item.context_expr
        if isinstance(call, gast.Call) and syntax.dotted_name(call.func) is not None and \
                self.parsed.resolve(call.func) is contextlib.suppress and \
                item.optional_vars is None and not call.keywords and call.args:
            # with suppress(E): body  is  try: body except E: pass
            caught = call.args[0] if len(call.args) == 1 else syntax.tuple_(call.args)
            self.try_(syntax.located(syntax.try_(body, caught, [syntax.pass_()]), stmt))
            return
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
            raise parsed.error("contextlib.suppress here must name the exceptions it "
                               "suppresses, with no 'as' name", call,
                               "Write suppress(KeyError), or the try/except it stands for.")
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


def _assigned_last(body: list[gast.stmt], variable_of: dict[str, str]) -> set[str]:
    """Variables a normalized body changes once, in a statement after which nothing can
    raise (copies and constants): where the body raised, they were not changed, as the
    merge after the try has it."""
    counts: dict[str, int] = {}
    for s in syntax.in_order(body):
        if isinstance(s, gast.Assign):
            for t in syntax.names_written(s.targets[0]):
                user = variable_of.get(t, t)
                counts[user] = counts.get(user, 0) + 1
    found = set()
    for k, s in enumerate(body):
        if isinstance(s, gast.Assign) and all(
                isinstance(r, gast.Assign) and isinstance(r.value, (gast.Name, gast.Constant))
                for r in body[k + 1:]):
            found |= {variable_of.get(t, t) for t in syntax.names_written(s.targets[0])
                      if counts[variable_of.get(t, t)] == 1}
    return found


def _is_merge_copy(stmt: gast.stmt, partial: dict) -> bool:
    """A copy of one partial version into another (the merges of a loop around the try)."""
    return isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name) and all(
        t in partial for t in syntax.names_written(stmt.targets[0]))
