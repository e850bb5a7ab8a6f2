"""Pass 6, optimize: make the adjoint lean, then decide exactly what the forward saves.

Before: ``Reversed`` forward and adjoint bodies.
After:  ``Optimized``: the adjoint with constants folded and identities removed (``g * 1.0``,
        ``x ** 1``), copies propagated (``x_bar = out_bar`` disappears), dead statements
        removed; ``saved``, the primal names the adjoint still reads, in the order the forward
        defines them; the forward with the shape saves no one reads dropped and its return
        ``return out, (saved...)`` appended.

    adjoint:  _t1_bar = out_bar          ->   h_bar = out_bar * 2
              h_bar = _t1_bar * 2 ** 1
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass

import gast

from . import syntax
from .reverse import Reversed

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
         gast.Div: operator.truediv, gast.Pow: operator.pow}


@dataclass(frozen=True)
class Optimized:
    reversed: Reversed
    forward: list[gast.stmt]
    adjoint: list[gast.stmt]
    saved: tuple[str, ...]


def optimize(rev: Reversed) -> Optimized:
    adjoint = [_Simplify().visit(s) for s in rev.adjoint]
    adjoint = _propagate_copies(adjoint, rev)
    adjoint = _eliminate_dead(adjoint)
    params = rev.analysis.normalized.parsed.params
    defined = list(params) + [t for s in rev.forward for t in _targets(s)]
    read = set().union(*(syntax.names_read(s) for s in adjoint)) if adjoint else set()
    written = {t for s in adjoint for t in _targets(s)}
    saved = tuple(dict.fromkeys(n for n in defined if n in read and n not in written))
    forward = [s for s in rev.forward
               if not (set(_targets(s)) & rev.shape_saves and not set(_targets(s)) & set(saved))]
    out = syntax.tuple_([syntax.clone(rev.result), syntax.tuple_(syntax.name(n) for n in saved)])
    forward.append(syntax.ret(out))
    return Optimized(rev, forward, adjoint, saved)


def _targets(stmt: gast.stmt) -> list[str]:
    if isinstance(stmt, gast.Assign):
        return sorted(syntax.names_written(stmt.targets[0]))
    return []


class _Simplify(gast.NodeTransformer):
    """Fold constants and drop multiplications by one, powers of one, additions of zero."""

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        left, right, op = node.left, node.right, type(node.op)
        if syntax.is_const(left) and syntax.is_const(right) and op in _FOLD:
            try:
                return syntax.located(syntax.const(_FOLD[op](left.value, right.value)), node)
            except (ArithmeticError, TypeError):
                return node
        if op in (gast.Mult, gast.Div, gast.Pow) and _is(right, 1):
            return left
        if op is gast.Mult and _is(left, 1):
            return right
        if op in (gast.Add, gast.Sub) and _is(right, 0):
            return left
        return node

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp) \
                and isinstance(node.operand.op, gast.USub):
            return node.operand.operand
        if isinstance(node.op, gast.USub) and syntax.is_const(node.operand) \
                and isinstance(node.operand.value, (int, float)):
            return syntax.located(syntax.const(-node.operand.value), node)
        return node


def _is(node: gast.expr, number: int) -> bool:
    return (syntax.is_const(node) and type(node.value) in (int, float)
            and node.value == number)


def _propagate_copies(adjoint: list[gast.stmt], rev: Reversed) -> list[gast.stmt]:
    """Remove copies ``a = b`` where ``a`` and ``b`` are each assigned once.

    A temporary that is read only by the copy takes the copy's name (``w_bar = _g1`` turns
    ``_g1 = ...`` into ``w_bar = ...``); otherwise later reads of ``a`` read ``b``.
    """
    counts = Counter(t for s in adjoint for t in _targets(s))
    reads = Counter(n.id for s in adjoint for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    renamed_defs: dict[str, str] = {}  # temporary -> the copy's target
    mapping: dict[str, str] = {}
    out = []
    for stmt in adjoint:
        if (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, gast.Name)):
            a, b = stmt.targets[0].id, stmt.value.id
            if counts[a] == 1 and counts[b] == 1 and reads[b] == 1 and b.startswith("_"):
                renamed_defs[b] = a
                continue
            if counts[a] == 1 and counts[b] <= 1:
                mapping[a] = mapping.get(b, b)
                continue
        out.append(stmt)
    for stmt in out:
        syntax.rename(stmt, mapping)
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and node.id in renamed_defs:
                node.id = renamed_defs[node.id]
    return out


def _eliminate_dead(adjoint: list[gast.stmt]) -> list[gast.stmt]:
    live: set[str] = set()
    kept = []
    for stmt in reversed(adjoint):
        if isinstance(stmt, gast.Return):
            live |= syntax.names_read(stmt)
            kept.append(stmt)
            continue
        if isinstance(stmt, gast.Expr):  # an in-place update of its first argument
            first = stmt.value.args[0] if getattr(stmt.value, "args", None) else None
            if isinstance(first, gast.Name) and first.id not in live:
                continue
            live |= syntax.names_read(stmt)
            kept.append(stmt)
            continue
        targets = set(_targets(stmt))
        if not targets & live:
            continue
        live -= targets
        live |= syntax.names_read(stmt.value)
        kept.append(stmt)
    return kept[::-1]
