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
from dataclasses import dataclass

import gast
import numpy as np

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
    methods = _MethodForms(_array_ranks(rev), rev.bindings)
    adjoint = [methods.visit(s) for s in adjoint]
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


def _array_ranks(rev: Reversed) -> dict[str, int]:
    """Names certain to hold NumPy arrays, with their ranks: primal arrays, and the
    cotangents of primal arrays of rank >= 1 (a cotangent of rank 0 may be a Python float)."""
    values = rev.analysis.values
    ranks = {n: v.ndim for n, v in values.items() if v.kind == "array" and v.ndim is not None}
    ranks.update({bar: ranks[p] for p, bar in rev.bar_of.items()
                  if ranks.get(p, 0) >= 1 and bar != rev.seed})
    return ranks


class _MethodForms(gast.NodeTransformer):
    """``np.sum(a)`` -> ``a.sum()``, ``np.transpose(a)`` -> ``a.T``, ``np.expand_dims(a, 1)``
    -> ``a[:, None]``, ``np.shape(a)`` -> ``a.shape``: on names known to be arrays, the forms
    a NumPy programmer writes, which also skip the function wrappers' overhead."""

    def __init__(self, ranks: dict[str, int], bindings: dict):
        self.ranks = ranks
        self.numpy_names = {name for name, obj in bindings.items() if obj is np}

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        func = syntax.dotted_name(node.func) or ""
        head, _, attr = func.rpartition(".")
        if head not in self.numpy_names or not node.args or not isinstance(node.args[0],
                                                                           gast.Name):
            return node
        array, rest = node.args[0], node.args[1:]
        rank = self.ranks.get(array.id)
        if rank is None:
            return node
        keywords = {k.arg: k.value for k in node.keywords}
        if attr in ("sum", "mean") and not rest:
            return syntax.located(syntax.call(syntax.attribute(array, attr), [], keywords), node)
        if attr in ("shape", "size", "ndim") and not rest and not keywords:
            return syntax.located(syntax.attribute(array, attr), node)
        if attr == "transpose" and not rest and not keywords:
            return syntax.located(syntax.attribute(array, "T"), node)
        if attr == "reshape" and len(rest) == 1 and _only_default_order(keywords):
            return syntax.located(syntax.call(syntax.attribute(array, "reshape"), rest), node)
        if attr == "expand_dims" and len(rest) == 1 and not keywords and syntax.is_const(
                rest[0]) and isinstance(rest[0].value, int) and -rank - 1 <= rest[0].value <= rank:
            axis = rest[0].value % (rank + 1)
            index = [gast.Slice(lower=None, upper=None, step=None)] * axis + [syntax.const(None)]
            if axis == rank and rank > 1:
                index = [syntax.const(Ellipsis), syntax.const(None)]
            return syntax.located(gast.Subscript(value=array, slice=syntax.tuple_(index)
                                                 if len(index) > 1 else index[0],
                                                 ctx=gast.Load()), node)
        return node


def _only_default_order(keywords: dict) -> bool:
    order = keywords.get("order")
    return set(keywords) <= {"order"} and (order is None or (
        syntax.is_const(order) and order.value == "C"))


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
    """Remove copies ``a = b`` of cotangents.

    - A temporary read only by the copy takes the copy's name (``w_bar = _g1`` turns
      ``_g1 = ...`` into ``w_bar = ...``).
    - A copy whose target is next updated by accumulation is fused with it
      (``a = b; a = a + e`` becomes ``a = b + e``).
    - Otherwise, when ``a`` is assigned once and ``b`` is not assigned after the copy,
      later reads of ``a`` read ``b``.
    """
    out = list(adjoint)
    changed = True
    while changed:
        changed = False
        for k, stmt in enumerate(out):
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                    and isinstance(stmt.value, gast.Name)):
                continue
            a, b = stmt.targets[0].id, stmt.value.id
            before, after = out[:k], out[k + 1:]
            defs_after = [j for j, s in enumerate(after) if a in _targets(s)]
            if _is_temp_read_once(b, out, k):
                for s in before:
                    _rename_all(s, {b: a})
                del out[k]
            elif defs_after and _is_accumulation(after[defs_after[0]], a) and not any(
                    a in syntax.names_read(s) for s in after[:defs_after[0]]):
                update = after[defs_after[0]]
                update.value.left = syntax.name(b)  # a = a + e  ->  a = b + e
                del out[k]
            elif not defs_after and not any(b in _targets(s) for s in after):
                for s in after:
                    syntax.rename(s, {a: b})
                del out[k]
            else:
                continue
            changed = True
            break
    return out


def _is_temp_read_once(name: str, stmts: list[gast.stmt], copy_at: int) -> bool:
    if not name.startswith("_"):
        return False
    defs = [j for j, s in enumerate(stmts) if name in _targets(s)]
    reads = sum(1 for s in stmts for n in gast.walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id == name)
    return len(defs) == 1 and defs[0] < copy_at and reads == 1 and \
        isinstance(stmts[defs[0]].targets[0], gast.Name)


def _is_accumulation(stmt: gast.stmt, name: str) -> bool:
    return (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.BinOp)
            and isinstance(stmt.value.op, gast.Add) and syntax.is_name(stmt.value.left, name))


def _rename_all(stmt: gast.stmt, mapping: dict[str, str]) -> None:
    for node in gast.walk(stmt):
        if isinstance(node, gast.Name) and node.id in mapping:
            node.id = mapping[node.id]


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
