"""Derivative rules as templates: read a rule's source once, inline its body at a call site.

Inlining substitutes the rule's parameters by the atoms at the call site, gives the rule's own
locals fresh names, and folds ``if`` tests on static facts (constants, ``x is None``,
``np.ndim(x)`` of a known rank), so only the branch that applies reaches the generated code::

    @vjp_rule(np.sum, shape="reduce")         at  s = np.sum(h, axis=1)   with g = s_bar:
    def sum(g, ans, a, axis=None, ...):
        if axis is not None and not keepdims:     _g1 = np.expand_dims(s_bar, 1)
            g = np.expand_dims(g, axis)           contribution to h:
        return np.broadcast_to(g, np.shape(a))        np.broadcast_to(_g1, np.shape(h))

A rule whose tests cannot be decided at transform time is not inlined: the call site calls the
rule function itself, which is always correct, only less specialised.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from . import syntax
from .naming import Namer
from .rules.registry import Rule

UNKNOWN = object()


@dataclass(frozen=True)
class Template:
    rule: Rule
    node: gast.FunctionDef
    outputs: tuple[bool, ...]  # per leading parameter: can the rule return a contribution?
    globals: dict[str, Any]  # the rule module's globals that the body reads

    @property
    def function(self) -> Callable:
        return self.rule.template


@functools.cache
def _parse_template(fn: Callable) -> tuple[gast.FunctionDef, tuple[bool, ...], dict[str, Any]]:
    source = textwrap.dedent(inspect.getsource(fn))
    node = gast.parse(source).body[0]
    node.decorator_list = []
    params = [a.id for a in node.args.args][2:]
    width = 0
    given = [False] * len(params)
    for ret in (n for n in gast.walk(node) if isinstance(n, gast.Return)):
        values = ret.value.elts if isinstance(ret.value, gast.Tuple) else [ret.value]
        width = max(width, len(values))
        for i, v in enumerate(values):
            if not (syntax.is_const(v) and v.value is None):
                given[i] = True
    local = {a.id for a in node.args.args} | syntax.names_written(node)
    used = {n for n in syntax.names_read(node) if n not in local}
    module_globals = {n: fn.__globals__[n] for n in used if n in fn.__globals__}
    return node, tuple(given[:width]), module_globals


def template_of(rule: Rule) -> Template:
    node, outputs, module_globals = _parse_template(rule.template)
    return Template(rule, node, outputs, module_globals)


@dataclass
class Inlined:
    statements: list[gast.stmt]
    contributions: list[gast.expr | None]  # one per leading parameter


@dataclass(frozen=True)
class Facts:
    """What the analysis knows about the names at a call site."""

    ndim: Callable[[str], int | None]
    is_none: Callable[[str], bool | None]
    is_numpy: Callable[[str], bool] = lambda name: False  # does this name refer to numpy?


def inline(template: Template, bindings: dict[str, gast.expr], facts: Facts, namer: Namer,
           global_names: dict[str, str]) -> Inlined | None:
    """The template's body specialised to ``bindings``, or None if a test stays undecided.

    ``bindings`` maps each parameter (including ``g`` and ``ans``) to an atom or an index
    expression; ``global_names`` maps the rule module's globals to the names that refer to
    them in generated code.
    """
    env: dict[str, gast.expr] = dict(bindings)
    env.update({k: syntax.name(v) for k, v in global_names.items() if k != v})
    out: list[gast.stmt] = []
    try:
        result = _inline_block(template.node.body, env, facts, namer, out)
    except _Undecided:
        return None
    if result is None:
        raise TypeError(f"the rule {template.function.__name__} does not end with a return")
    contributions = result + [None] * (len(template.outputs) - len(result))
    return Inlined(out, contributions)


def _inline_block(body: list[gast.stmt], env: dict[str, gast.expr], facts: Facts,
                  namer: Namer, out: list[gast.stmt]) -> list[gast.expr | None] | None:
    for stmt in body:
        if isinstance(stmt, gast.Return):
            values = stmt.value.elts if isinstance(stmt.value, gast.Tuple) else [stmt.value]
            return [None if syntax.is_const(v) and v.value is None else _subst(v, env, facts)
                    for v in values]
        if isinstance(stmt, gast.If):
            test = static_eval(_subst(stmt.test, env, facts), facts)
            if test is UNKNOWN:
                raise _Undecided
            result = _inline_block(stmt.body if test else stmt.orelse, env, facts, namer, out)
            if result is not None:
                return result
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            value = _subst(stmt.value, env, facts)
            target = stmt.targets[0].id
            if isinstance(value, gast.Name) or syntax.is_const(value):
                env[target] = value
            else:
                fresh = namer.fresh("_" + target.lstrip("_"))
                out.append(syntax.assign(fresh, value))
                env[target] = syntax.name(fresh)
        elif isinstance(stmt, gast.Expr):
            out.append(syntax.expr_stmt(_subst(stmt.value, env, facts)))
        elif isinstance(stmt, gast.Pass):
            continue
        else:
            raise _Undecided
    return None


class _Undecided(Exception):
    """A test in the template cannot be decided at transform time."""


def _subst(node: gast.expr, env: dict[str, gast.expr], facts: Facts) -> gast.expr:
    """``node`` with parameters replaced, and ``np.ndim(x)`` of a known rank folded."""
    return _FoldRanks(facts).visit(syntax.rename(syntax.clone(node), env))


class _FoldRanks(gast.NodeTransformer):
    """Fold ``np.ndim(x)`` of a known rank, and pure NumPy index arithmetic on constants
    (``np.argsort(np.mod((1, 0), 2))`` -> ``(1, 0)``), so the adjoint reads as written."""

    def __init__(self, facts: Facts):
        self.facts = facts

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        if _is_ndim_call(node):
            value = static_eval(node, self.facts)
            if value is not UNKNOWN:
                return syntax.located(syntax.const(value), node)
        func = syntax.dotted_name(node.func) or ""
        head, _, attr = func.rpartition(".")
        if attr in _PURE and self.facts.is_numpy(head) and not node.keywords and all(
                syntax.is_const(a) or syntax.is_static_tuple(a) for a in node.args):
            value = _PURE[attr](*(syntax.const_value(a) for a in node.args))
            literal = _literal(value)
            if literal is not None:
                return syntax.located(literal, node)
        return node


    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and syntax.is_const(node.operand) \
                and isinstance(node.operand.value, (int, float)):
            return syntax.located(syntax.const(-node.operand.value), node)
        return node


_PURE = {"argsort": np.argsort, "mod": np.mod, "reshape": np.reshape, "add": np.add,
         "subtract": np.subtract, "negative": np.negative}


def _literal(value: Any) -> gast.expr | None:
    """A small integer array or number as a Python literal (a tuple for 1-d arrays)."""
    array = np.asarray(value)
    if array.dtype.kind not in "iu" or array.ndim > 1 or array.size > 32:
        return None
    if array.ndim == 0:
        return syntax.const(int(array))
    return syntax.tuple_(syntax.const(int(v)) for v in array)


def _is_ndim_call(node: gast.Call) -> bool:
    func = syntax.dotted_name(node.func) or ""
    return func.split(".")[-1] == "ndim" and len(node.args) == 1 and not node.keywords


def static_eval(node: gast.expr, facts: Facts) -> Any:
    """The value of a test known at transform time, or UNKNOWN."""
    if syntax.is_const(node):
        return node.value
    if isinstance(node, gast.Tuple):
        values = [static_eval(e, facts) for e in node.elts]
        return UNKNOWN if any(v is UNKNOWN for v in values) else tuple(values)
    if isinstance(node, gast.UnaryOp):
        value = static_eval(node.operand, facts)
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, gast.Not):
            return not value
        if isinstance(node.op, gast.USub):
            return -value
        return UNKNOWN
    if isinstance(node, gast.BoolOp):
        is_and = isinstance(node.op, gast.And)
        seen_unknown = False
        for v in node.values:
            value = static_eval(v, facts)
            if value is UNKNOWN:
                seen_unknown = True
            elif bool(value) != is_and:  # a False in 'and', a True in 'or' decides
                return value
        return UNKNOWN if seen_unknown else is_and
    if isinstance(node, gast.Compare) and len(node.ops) == 1:
        left, right, op = node.left, node.comparators[0], node.ops[0]
        if isinstance(op, (gast.Is, gast.IsNot)) and syntax.is_const(right) and right.value is None:
            if syntax.is_const(left):
                verdict = left.value is None
            elif isinstance(left, gast.Name):
                verdict = facts.is_none(left.id)
                if verdict is None:
                    return UNKNOWN
            else:
                verdict = False
            return verdict if isinstance(op, gast.Is) else not verdict
        a, b = static_eval(left, facts), static_eval(right, facts)
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        compare = {gast.Eq: lambda: a == b, gast.NotEq: lambda: a != b,
                   gast.Lt: lambda: a < b, gast.LtE: lambda: a <= b,
                   gast.Gt: lambda: a > b, gast.GtE: lambda: a >= b}.get(type(op))
        return UNKNOWN if compare is None else compare()
    if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords:
        func = syntax.dotted_name(node.func) or ""
        arg = node.args[0]
        if _is_ndim_call(node):
            if isinstance(arg, gast.Name):
                rank = facts.ndim(arg.id)
                return UNKNOWN if rank is None else rank
            value = static_eval(arg, facts)
            return UNKNOWN if value is UNKNOWN else np.ndim(value)
        if func == "len" or func.split(".")[-1] == "size":
            if isinstance(arg, gast.Tuple):  # the length of a tuple of atoms is static
                return len(arg.elts)
            value = static_eval(arg, facts)
            if func == "len":
                return len(value) if isinstance(value, tuple) else UNKNOWN
            return UNKNOWN if value is UNKNOWN else int(np.size(value))
        if func == "isinstance":
            return UNKNOWN
    return UNKNOWN
