"""Constant folding and algebraic identities on generated statements: ``g * 1.0``,
``x ** 1``, ``a + -b``, ``None is None``. A shared home of the passes that write code from
templates (optimize, for the adjoint; tangent, for the tangent function).

Part of the compiler layer.
"""

from __future__ import annotations

import operator

import gast

from .. import syntax

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
         gast.Div: operator.truediv, gast.Pow: operator.pow}


def simplify(stmt: gast.stmt) -> gast.stmt:
    """A copy of ``stmt`` with constants folded and identities removed (``g * 1``,
    ``x ** (2 - True)`` -> ``x``)."""
    return Simplify().visit(syntax.clone(stmt))


class Simplify(gast.NodeTransformer):
    """Fold constants and drop multiplications by one, powers of one, additions of zero."""

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        left, right, op = node.left, node.right, type(node.op)
        if syntax.is_const(left) and syntax.is_const(right) and op in _FOLD:
            try:
                value = _FOLD[op](left.value, right.value)
            except (ArithmeticError, TypeError, ValueError):
                return node
            if isinstance(value, complex) and not any(
                    isinstance(v, complex) for v in (left.value, right.value)):
                return node  # (-8.0) ** (1 / 3): Python makes a complex, NumPy a nan
            return syntax.located(syntax.const(value), node)
        if op in (gast.Mult, gast.Div, gast.Pow) and _is(right, 1):
            return left
        if op is gast.Mult and _is(left, 1):
            return right
        if op in (gast.Add, gast.Sub) and _is(right, 0):
            return left
        if op in (gast.Add, gast.Sub) and isinstance(right, gast.UnaryOp) and isinstance(
                right.op, gast.USub):  # a + -b -> a - b
            flipped = syntax.binop(left, "Sub" if op is gast.Add else "Add", right.operand)
            return syntax.located(flipped, node)
        return node

    def visit_Compare(self, node: gast.Compare) -> gast.expr:
        """``None is None``, ``0 == 1``: a template's test of a constant argument."""
        self.generic_visit(node)
        if len(node.ops) == 1 and syntax.is_const(node.left) and syntax.is_const(
                node.comparators[0]) and type(node.ops[0]) in _COMPARE and (
                not isinstance(node.ops[0], (gast.Is, gast.IsNot))
                or None in (node.left.value, node.comparators[0].value)):
            value = _COMPARE[type(node.ops[0])](node.left.value, node.comparators[0].value)
            return syntax.located(syntax.const(value), node)
        return node

    def visit_IfExp(self, node: gast.IfExp) -> gast.expr:
        self.generic_visit(node)
        if syntax.is_const(node.test) and isinstance(node.test.value, (bool, type(None))):
            return node.body if node.test.value else node.orelse
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


_COMPARE = {gast.Is: operator.is_, gast.IsNot: operator.is_not, gast.Eq: operator.eq,
            gast.NotEq: operator.ne}


def _is(node: gast.expr, number: int) -> bool:
    return (syntax.is_const(node) and type(node.value) in (int, float)
            and node.value == number)
