"""The walk every job of normalize writes through: the block being written, one statement at
a time, and ``if`` statements with their variables merged after them.

Takes user-level statements (after fence and ``lift_returns``); gives the ANF block of each
list of them (``block``), written one normalized statement at a time (``emit``, at the
source position of what it came from). ``statement`` runs the handler of the statement's
class from ``handlers``: the table in the package's ``__init__``, registered there because
the jobs that handle statements call back into the walk (for the branches and bodies they
desugar), so this module cannot import them.

    walk.block([<if h.sum() > 0: ...>])  ->  [_t1 = h.sum(), _t2 = _t1 > 0, if _t2: ...]
    walk.branch(node, test, body, orelse)    an if, its variables merged after it (a
                                             variable either branch deletes is unbound)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

from ... import syntax
from ...naming import Namer
from ..parse import Parsed
from .versions import Versions


class Walk:
    def __init__(self, parsed: Parsed, namer: Namer,
                 fence: Callable[[Parsed], Any] = lambda parsed: parsed,
                 conversions: frozenset[tuple] = frozenset(),
                 lengths: dict[int, Any] | None = None,
                 folds: dict[tuple[int, int], bool] | None = None):
        self.parsed = parsed
        self.namer = namer
        self.fence = fence  # checks the source of a method inlined here (see objects)
        # the arguments NumPy converts to arrays that the analysis found to be lists or
        # tuples: (the call's source span..., the argument's position or keyword)
        self.conversions = conversions
        self.lengths = lengths or {}  # the size of each spread site the analysis asked for
        # the user's ifs whose test the analysis found to have one value on every run (its
        # source position -> that value): only the block that runs is written
        self.folds = folds or {}
        self.tests: dict[gast.If, tuple] = {}  # each user if with a test of no effect
        self.versions = Versions(parsed, namer)
        self.handlers: dict[type, Callable[[gast.stmt], None]] = {}  # by statement class
        self.out: list[gast.stmt] = []  # the block being written

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        """The ANF of a list of statements (a function body, a branch, a loop body)."""
        outer, self.out = self.out, []
        for stmt in stmts:
            self.statement(stmt)
        body, self.out = self.out, outer
        return body

    def statement(self, stmt: gast.stmt) -> None:
        handler = self.handlers.get(type(stmt))
        if handler is None:  # fence lets no other statement through (see the table)
            raise syntax.unexpected("normalize", stmt)
        handler(stmt)

    def branch(self, origin: gast.AST, test: gast.expr, body: list, orelse: list) -> None:
        """``if test: body else: orelse``, with variables assigned in it merged after it."""
        versions = self.versions
        if isinstance(test, gast.Name) and test.id in versions.reassigned:
            # a flag or a desugared value may be assigned again later: test a copy of it
            copy = self.namer.temp()
            self.emit(syntax.assign(copy, test), origin)
            test = syntax.name(copy)
        before, deleted = dict(versions.current), set(versions.deleted)
        then_block = self.block(body)
        after_then, versions.current = versions.current, dict(before)
        deleted_then, versions.deleted = versions.deleted, set(deleted)
        else_block = self.block(orelse)
        versions.merge(before, after_then, then_block, versions.current, else_block)
        versions.delete(deleted_then | versions.deleted)  # deleted on some path: unbound
        self.emit(syntax.if_(test, then_block, else_block), origin)

    def emit(self, stmt: gast.stmt, origin: gast.AST) -> None:
        self.out.append(syntax.located(stmt, origin))
