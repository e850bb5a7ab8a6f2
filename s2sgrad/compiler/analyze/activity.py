"""Activity: which varied names the output depends on.

A name is *active* if it is varied (a differentiated input flows into it, found by the
forward walk) and useful (the returned value depends on it, found here by one backward
data-flow pass over the statements, loops iterated to a fixpoint). Only active names get
adjoints.

    h = np.tanh(x @ w)      varied, useful: active
    n = np.sum(x ** 2)      varied, not returned: not active (no adjoint is made for it)

This is also where a call without a derivative rule is refused: where its result is
useful (no gradient to pick), or always, where it may change a differentiated argument.
"""

from __future__ import annotations

import gast

from ... import syntax
from .. import statements
from ..parse import Parsed
from . import checks
from .facts import UPDATES, Op


def active(body: list[gast.stmt], ops: dict[int, Op], varied: set[str], result: gast.expr,
           parsed: Parsed) -> frozenset[str]:
    useful = {result.id} if isinstance(result, gast.Name) else set()
    return frozenset(_Useful(ops, varied, parsed).block(body, useful) & varied)


class _Useful:
    def __init__(self, ops: dict[int, Op], varied: set[str], parsed: Parsed):
        self.ops, self.varied, self.parsed = ops, varied, parsed

    def block(self, stmts: list[gast.stmt], useful: set[str]) -> set[str]:
        """The names whose values the output depends on, before ``stmts`` run."""
        useful = set(useful)
        for stmt in reversed(stmts):
            kind = statements.kind(stmt, "analyze")
            if kind.computes:
                self.statement(stmt, self.ops[stmt], useful)
            elif kind.loop:
                while True:  # what a later iteration needs, an earlier one must provide
                    after = useful
                    for field in kind.blocks:
                        after = self.block(getattr(stmt, field), after)
                    if after <= useful:
                        break
                    useful |= after
            elif kind.blocks:  # one of the blocks runs
                useful = set().union(*(self.block(getattr(stmt, f), useful)
                                       for f in kind.blocks))
        return useful

    def statement(self, stmt: gast.stmt, op: Op, useful: set[str]) -> None:
        at = stmt.value if hasattr(stmt, "value") else stmt
        if op.always:
            raise self.parsed.error(op.refusal[0], at, op.refusal[1])
        if op.target is None or op.target not in useful or op.target not in self.varied:
            return
        if op.kind == "unknown":
            raise self.parsed.error(*_used_without_rule(op, at))
        if op.kind == "copy":
            useful |= syntax.names_read(op.bindings["x"])
        elif op.kind in ("rule", "call", "pack", "item") or op.kind in UPDATES:
            for p in op.diff_params:
                atom = op.bindings.get(p)
                for a in (atom if isinstance(atom, tuple) else (atom,)):
                    if isinstance(a, gast.Name):
                        useful.add(a.id)
        elif op.kind not in ("nondiff", "effect"):
            raise syntax.unexpected("analyze", stmt, f"an operation of kind {op.kind!r}")


def _used_without_rule(op: Op, at: gast.AST) -> tuple:
    """The refusal of a call without a rule whose result the output depends on."""
    if op.refusal is not None:
        return op.refusal[0], at, op.refusal[1]
    if op.what.startswith("."):  # a method of an unknown value
        return ((f"{checks.member(op.what)} of a value whose class is not known when compiling "
                "(made inside the function, or read from an object), and the result depends "
                "on a differentiated input"), at,
                "Call a function with a derivative rule, or a method of an argument's class.")
    short = checks.short_name(op.what)
    return ((f"no derivative rule for {op.what}, and the result depends on a differentiated "
            "input"), at, (f"Register one with @s2sgrad.vjp_rule({short}), or, only if its "
            "result does not change with its inputs (a count, a rounding), mark it with "
            f"s2sgrad.nondifferentiable({short}): its gradient is then taken as zero."))
