"""The adjoint of each statement kind: a block's statements in reverse order, a branch as a
branch on the same condition, a loop as a loop over its trip count.

Takes a normalized block (``block``) and gives its adjoint block; each statement's
adjoint is one entry of ``reversers`` (by statement class; a missing one is an internal
error), an assignment's the adjoint of its operation (``operations``). A block nested in
a branch or a loop starts with a ``__pop__(k)`` marker. The cotangent of a value from
outside a block that receives contributions inside it starts at zero before the block,
unless every path through the block writes it first:

    if _t1:               ->  x_bar = np.zeros_like(x)       only one branch adds to x_bar
        y = x * 2.0           if _t1:
    else:                         __pop__(1)
        y = np.ones(3)            x_bar = x_bar + y_bar * 2.0
                              else:
                                  __pop__(2)

A statement that computes no active value (nor holds one that does) has no adjoint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import gast

from ... import syntax
from .. import statements
from ..context import POP, Context
from .cotangents import Cotangents
from .forward import Forward
from .operations import Operations


class Adjoint:
    def __init__(self, ctx: Context, forward: Forward, cotangents: Cotangents,
                 operations: Operations):
        self.ctx, self.forward, self.cotangents = ctx, forward, cotangents
        self.operations = operations
        self.reversers: dict[type, Callable[[gast.stmt], None]] = {
            gast.Assign: self.assignment, gast.Expr: self.effect,
            gast.If: self.branch, gast.For: self.loop, gast.While: self.loop,
            gast.With: self.managed, syntax.Try: self.guarded, gast.Assert: self.nothing, gast.Raise: self.nothing, gast.Break: self.nothing,
            gast.Pass: self.nothing,
        }

    def block(self, stmts: list[gast.stmt], marker: int | None) -> list[gast.stmt]:
        cot = self.cotangents
        outer, cot.out = cot.out, []
        if marker is not None:
            cot.out.append(syntax.expr_stmt(syntax.call(syntax.name(POP),
                                                        [syntax.const(marker)])))
        for stmt in reversed(stmts):
            cot.current = stmt
            if statements.kind(stmt, "reverse").blocks and not self.ctx.is_active([stmt]):
                continue
            reverse = self.reversers.get(type(stmt))
            if reverse is None:
                raise syntax.unexpected("reverse", stmt, "the adjoint")
            reverse(stmt)
        block, cot.out = cot.out, outer
        return block

    def assignment(self, stmt: gast.Assign) -> None:
        self.operations.adjoint(stmt, self.ctx.analysis.ops[stmt])
        for target in syntax.names_written(stmt.targets[0]):
            self.cotangents.defined.discard(target)  # this value's cotangent is now used up

    def effect(self, stmt: gast.Expr) -> None:
        """A call kept for its effect: it has no value, or an inactive one."""
        op = self.ctx.analysis.ops.get(stmt)
        if op is not None and op.target is not None and op.target in self.ctx.analysis.active:
            raise syntax.unexpected("reverse", stmt, "an effect with an active value")

    def nothing(self, stmt: gast.stmt) -> None:
        """An assert, a raise, a break, a pass: no value, no adjoint."""

    def branch(self, stmt: gast.If | syntax.Try, test: gast.expr | None = None,
               fields: tuple[str, str] = ("body", "orelse")) -> None:
        cot = self.cotangents
        first, second = (getattr(stmt, f) for f in fields)
        # An outer value that both branches add to is first written in each; one that only
        # one branch adds to starts at zero before the if.
        both = set(self.incoming_block(first)) & set(self.incoming_block(second))
        for name in self.incoming(stmt):
            if name not in cot.defined and name not in both:
                cot.zero(name, stmt)
        before = set(cot.defined)
        body = self.block(first, self.forward.marker(stmt, fields[0]))
        after_body, cot.defined = cot.defined, set(before)
        orelse = self.block(second, self.forward.marker(stmt, fields[1]))
        cot.defined &= after_body
        cot.current = stmt
        cot.emit(syntax.if_(stmt.test if test is None else test, body, orelse))

    def guarded(self, stmt: syntax.Try) -> None:
        """A try: the reverse of the block that ran to its end, as its flag says."""
        flag = self.ctx.analysis.normalized.flags[stmt]
        self.branch(stmt, syntax.name(flag), ("body", "handler"))

    def managed(self, stmt: gast.With) -> None:
        """The adjoint of a with block's body, under the same manager (NumPy's error state
        holds for the adjoint's arithmetic as for the forward's)."""
        body = self.block(stmt.body, None)  # it runs once: no marker, no zeros before it
        if body:
            self.cotangents.current = stmt
            self.cotangents.emit(syntax.replace(stmt, body=body))

    def loop(self, stmt: gast.For | gast.While) -> None:
        cot, active = self.cotangents, self.ctx.analysis.active
        inside = _assigned(statements.in_order(stmt.body, "reverse"))
        for name in self.incoming(stmt):
            if name not in cot.defined and name not in inside:
                cot.zero(name, stmt)
        for name in _read_before_written(stmt.body):  # loop versions: carried over
            if name not in active:
                continue
            if name not in cot.defined:
                cot.zero(name, stmt)
        before = set(cot.defined)
        body = self.block(stmt.body, self.forward.marker(stmt, "body"))
        carried = set(_read_before_written(stmt.body))
        first = next((s for s in stmt.body if isinstance(s, (gast.Assign, gast.Expr))), None)
        for name in sorted(before - cot.defined):  # used up and not added to again: the
            bar = syntax.name(cot.bar(name))         # earlier iteration starts from zero
            value = self.ctx.analysis.values.get(name)
            if name not in carried and first is not None and value is not None and \
                    value.kind == "array":
                # a value each iteration makes anew (h = layer(h_in)) may change shape
                # from one iteration to the next (layers of different widths): the zeros
                # take the shape it had when this iteration began
                shape = self.forward.save_shape(first, name, before=True)
                zero = syntax.call(f"{self.ctx.np}.zeros", [syntax.name(shape)])
            else:
                zero = cot.zeros_shaped(name, bar)
            body.append(syntax.located(syntax.assign(cot.bar(name), zero), stmt))
        cot.defined = before
        cot.current = stmt
        trips = syntax.call(syntax.name("range"), [syntax.name(self.forward.trip_counter(stmt))])
        cot.emit(syntax.for_(syntax.name("_", store=True), trips, body))

    # --- which cotangents a block adds to ----------------------------------------------------

    def contributed(self, stmts: Iterable[gast.stmt]) -> list[str]:
        """Active names that the active assignments among ``stmts`` add contributions to."""
        a = self.ctx.analysis
        names = []
        for stmt in stmts:
            op = a.ops.get(stmt) if isinstance(stmt, gast.Assign) else None
            if op is None or op.target not in a.active:
                continue
            for p in ["x"] if op.kind == "copy" else op.diff_params:
                atom = op.bindings.get(p)
                names += [v.id for v in (atom if isinstance(atom, tuple) else (atom,))
                          if isinstance(v, gast.Name) and v.id in a.active]
        return names

    def incoming(self, stmt: gast.stmt) -> list[str]:
        """Active names from outside ``stmt``'s blocks that statements inside add to (for a
        loop, also its own loop versions, which a later iteration adds to)."""
        inside = _assigned(statements.in_order([stmt], "reverse"))
        loop = statements.kind(stmt, "reverse").loop
        return sorted({n for n in self.contributed(statements.in_order([stmt], "reverse"))
                       if loop or n not in inside})

    def incoming_block(self, stmts: list[gast.stmt]) -> list[str]:
        """Outer names that statements directly in ``stmts`` (not in nested blocks) add to."""
        inside = _assigned(statements.in_order(stmts, "reverse"))
        return [n for n in self.contributed(stmts) if n not in inside]


def _assigned(stmts: Iterable[gast.stmt]) -> set[str]:
    return {t for s in stmts if isinstance(s, gast.Assign)
            for t in syntax.names_written(s.targets[0])}


def _read_before_written(body: list[gast.stmt]) -> list[str]:
    """Names the body reads before it assigns them: values from the previous iteration."""
    written: set[str] = set()
    carried: list[str] = []
    for stmt in statements.in_order(body, "reverse"):
        if isinstance(stmt, gast.Assign):
            for name in sorted(syntax.names_read(stmt.value)):
                if name not in written and name not in carried:
                    carried.append(name)
            written |= syntax.names_written(stmt.targets[0])
    return [n for n in carried if n in written]
