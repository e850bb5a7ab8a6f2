"""The generated code in the forms a library's code takes: NumPy's functions as its arrays'
methods where a NumPy programmer calls them (``method_forms``), or NumPy's calls in the names
and forms of the array API standard (``standard_forms``). Rewrites of gast statements, in
place; what they cannot rewrite is left as it is, for the backend's check to refuse.

Part of the compiler layer.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import syntax


def method_forms(stmts: list[gast.stmt], bindings: dict, ranks: dict[str, int]
                 ) -> list[gast.stmt]:
    """``stmts`` with NumPy's calls on names known to be arrays (``ranks``: their ranks) in
    the arrays' method forms (``_MethodForms``)."""
    forms = _MethodForms(ranks, bindings)
    return [forms.visit(s) for s in stmts]


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
            index = [syntax.slice_() for _ in range(axis)] + [syntax.const(None)]
            if axis == rank and rank > 1:
                index = [syntax.const(Ellipsis), syntax.const(None)]
            return syntax.located(syntax.subscript(array, syntax.tuple_(index)
                                                   if len(index) > 1 else index[0]), node)
        return node


def standard_forms(stmts: list[gast.stmt], bindings: dict, ranks: dict[str, int],
                   arrays: set[str]) -> list[gast.stmt]:
    """``stmts`` (rewritten in place) with NumPy's calls in the names and forms of the array
    API standard, which NumPy 2 also has: ``np.concatenate`` -> ``np.concat``,
    ``np.transpose(a)`` -> ``np.permute_dims(a, (1, 0))`` (a's rank known),
    ``np.outer(a, b)`` -> a column times a row, ``np.shape(a)`` -> ``a.shape`` (``arrays``:
    the names known to hold arrays, of any rank), and a
    comparison used as a number (``u - (u != 0)``) cast to the compared value's dtype (the
    standard does no arithmetic on booleans). The code then runs unchanged on the standard's
    namespace bound to NumPy's name (``Namespace.bind``); a call the standard lacks is left
    as it is, for the backends pass to refuse at the user's line."""
    forms = _StandardForms(ranks, arrays, bindings, *_comparisons(stmts))
    return [forms.visit(s) for s in stmts]


def _comparisons(stmts: list[gast.stmt]) -> tuple[dict[str, str], set[str]]:
    """The names assigned a comparison of a named value (``hits = a == m``), each with that
    value's name; and those of them the code uses only as numbers (never as a condition:
    ``where``'s first argument, a test)."""
    assigned, conditions = {}, set()
    for stmt in stmts:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], gast.Name) and isinstance(node.value, gast.Compare) \
                    and isinstance(node.value.left, gast.Name):
                assigned[node.targets[0].id] = node.value.left.id
            tests = []
            if isinstance(node, (gast.If, gast.While, gast.IfExp, gast.Assert)):
                tests.append(node.test)
            elif isinstance(node, gast.BoolOp):
                tests.extend(node.values)
            elif isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
                tests.append(node.operand)
            elif isinstance(node, gast.Call) and (syntax.dotted_name(node.func) or "").endswith(
                    ".where") and node.args:
                tests.append(node.args[0])
            conditions.update(n.id for t in tests for n in gast.walk(t)
                              if isinstance(n, gast.Name))
    return assigned, set(assigned) - conditions


# NumPy's names that the array API standard spells differently (NumPy 2 has both)
_STANDARD_NAMES = {
    "concatenate": "concat", "power": "pow", "absolute": "abs", "true_divide": "divide",
    "amax": "max", "amin": "min", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
    "arctan2": "atan2", "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh",
}


# The standard's functions that take as keywords only what NumPy's take by position too:
# how many NumPy's take first by position, then the names of the rest, in NumPy's order (a
# call passing more positionally gets them as keywords)
_KEYWORD_ONLY = {
    "sum": (1, ("axis", "dtype", "out", "keepdims")), "prod": (1, ("axis", "dtype", "out",
                                                                    "keepdims")),
    "mean": (1, ("axis", "dtype", "out", "keepdims")), "max": (1, ("axis", "out", "keepdims")),
    "min": (1, ("axis", "out", "keepdims")), "std": (1, ("axis", "dtype", "out", "ddof",
                                                          "keepdims")),
    "var": (1, ("axis", "dtype", "out", "ddof", "keepdims")), "flip": (1, ("axis",)),
    "roll": (2, ("axis",)), "concat": (1, ("axis",)), "stack": (1, ("axis",)),
    "unstack": (1, ("axis",)), "tensordot": (2, ("axes",)), "argsort": (1, ("axis",)),
}
# and NumPy's keywords that the standard names otherwise
_KEYWORD_NAMES = {("std", "ddof"): "correction", ("var", "ddof"): "correction"}


class _StandardForms(gast.NodeTransformer):
    def __init__(self, ranks: dict[str, int], arrays: set[str], bindings: dict,
                 comparisons: dict[str, str], masks: set[str]):
        self.ranks = ranks
        self.arrays = arrays
        self.numpy = min((name for name, obj in bindings.items() if obj is np), default=None)
        self.comparisons = comparisons  # name -> the name of the value compared
        self.masks = masks  # those used only as numbers: cast where they are assigned

    def visit_Assign(self, node: gast.Assign) -> gast.stmt:
        self.generic_visit(node)
        target = node.targets[0]
        if isinstance(target, gast.Name) and target.id in self.masks:
            node.value = self.number(node.value)  # a mask used as numbers: 0.0 and 1.0
        return node

    def rank(self, node: gast.expr) -> int | None:
        return self.ranks.get(node.id) if isinstance(node, gast.Name) else None

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        func = syntax.dotted_name(node.func) or ""
        head, _, attr = func.rpartition(".")
        if head != self.numpy:
            return node
        args = node.args
        if attr in ("sum", "prod", "cumsum") and args:  # of booleans: of 0.0 and 1.0
            node.args = args = [self.number(args[0]), *args[1:]]
        if attr == "reshape":  # NumPy's default order is the standard's only one
            node.keywords = [k for k in node.keywords if not (
                k.arg == "order" and syntax.is_const(k.value) and k.value.value == "C")]
        if attr in _STANDARD_NAMES:
            attr = _STANDARD_NAMES[attr]
            node.func = syntax.attribute(syntax.name(head), attr)
        if attr in _KEYWORD_ONLY:
            first, rest = _KEYWORD_ONLY[attr]
            moved = [syntax.keyword(key, value)
                     for key, value in zip(rest, args[first:], strict=False)]
            node.args, args = args[:first], args[:first]
            node.keywords = moved + node.keywords
            for k in node.keywords:
                k.arg = _KEYWORD_NAMES.get((attr, k.arg), k.arg)
            return node
        if node.keywords:
            return node
        if attr in ("shape", "ndim", "size") and len(args) == 1 and isinstance(
                args[0], gast.Name) and args[0].id in self.arrays:
            return syntax.located(syntax.attribute(args[0], attr), node)
        if attr == "result_type" and len(args) == 1:
            return syntax.located(syntax.attribute(args[0], "dtype"), node)
        if attr == "swapaxes" and len(args) == 3 and all(syntax.is_const(a) for a in args[1:]):
            first, second = sorted(a.value for a in args[1:])
            if (first, second) == (-2, -1):
                return syntax.located(syntax.call(f"{head}.matrix_transpose", [args[0]]), node)
            rank = self.rank(args[0])
            if rank is not None:
                axes = list(range(rank))
                axes[first], axes[second] = axes[second], axes[first]
                return syntax.located(syntax.call(f"{head}.permute_dims", [args[0], syntax.tuple_(
                    syntax.const(i) for i in axes)]), node)
        if attr == "transpose" and len(args) == 1 and self.rank(args[0]) is not None:
            axes = syntax.tuple_(syntax.const(i) for i in reversed(range(self.rank(args[0]))))
            return syntax.located(syntax.call(f"{head}.permute_dims", [args[0], axes]), node)
        if attr == "transpose" and len(args) == 2:
            return syntax.located(syntax.call(f"{head}.permute_dims", args), node)
        if attr == "outer" and len(args) == 2:  # np.outer flattens both
            column = syntax.call(f"{head}.reshape", [args[0], syntax.tuple_(
                [syntax.const(-1), syntax.const(1)])])
            row = args[1] if self.rank(args[1]) == 1 else syntax.call(
                f"{head}.reshape", [args[1], syntax.tuple_([syntax.const(-1)])])
            return syntax.located(syntax.binop(column, "Mult", row), node)
        return node

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.op, (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)):
            node.left, node.right = self.number(node.left), self.number(node.right)
        return node

    def number(self, operand: gast.expr) -> gast.expr:
        """A comparison of a named value, or a name holding one that is also used as a
        condition, cast to the compared value's dtype."""
        if isinstance(operand, gast.Compare) and isinstance(operand.left, gast.Name):
            compared = operand.left.id
        elif isinstance(operand, gast.Name) and operand.id in self.comparisons and \
                operand.id not in self.masks:
            compared = self.comparisons[operand.id]
        else:
            return operand
        return syntax.call(f"{self.numpy}.astype", [operand, syntax.attribute(
            syntax.name(compared), "dtype")])


def _only_default_order(keywords: dict) -> bool:
    order = keywords.get("order")
    return set(keywords) <= {"order"} and (order is None or (
        syntax.is_const(order) and order.value == "C"))
