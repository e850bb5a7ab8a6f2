"""Derivative rules as templates: read a rule's source once, inline its body at a call site.

Inlining substitutes the rule's parameters by the atoms at the call site, gives the rule's own
locals fresh names, and folds ``if`` tests on static facts (constants, ``x is None``,
``np.ndim(x)`` of a known rank, ``np.iscomplexobj(x)`` of a known dtype), so only the branch that applies reaches the generated code::

    @vjp_rule(np.sum, shape="reduce")         at  s = np.sum(h, axis=1)   with g = s_bar:
    def sum(g, ans, a, axis=None, ...):
        if axis is not None and not keepdims:     _g1 = np.expand_dims(s_bar, 1)
            g = np.expand_dims(g, axis)           contribution to h:
        return np.broadcast_to(g, np.shape(a))        np.broadcast_to(_g1, np.shape(h))

A rule whose tests cannot be decided at transform time is not inlined: the call site calls the
rule function itself (``call_arguments``), which is always correct, only less specialised.

A ``*args`` parameter is bound to the tuple of the call's atoms, so its uses fold to atoms:
``len(arys)`` is a constant, ``arys[k]`` (with ``k`` a constant: a rule registered with
``each=`` is inlined once per argument) the k-th atom, ``arys[:k] + (g,) + arys[k + 1:]`` a
tuple of atoms, and ``f(*others)`` passes them one by one. Unpacking assigns (``g_q, g_r = g``
of a container's cotangent) read the items one by one: ``_g_q = g[0]``.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..naming import Namer
from ..rules.check import RuleError, check_rule, location
from ..rules.registry import Rule
from .parse import source_lines

UNKNOWN = object()


@dataclass(frozen=True)
class Template:
    rule: Rule
    node: gast.FunctionDef
    outputs: tuple[bool, ...]  # per leading parameter: can the rule return a contribution?
    globals: dict[str, Any]  # the rule module's globals (and builtins) that the body reads
    locals: frozenset[str] = frozenset()  # names the body assigns

    @property
    def function(self) -> Callable:
        return self.rule.template


@functools.cache
def _parse_template(fn: Callable, each: str | None = None
                    ) -> tuple[gast.FunctionDef, tuple[bool, ...], dict[str, Any], frozenset[str]]:
    if not (getattr(fn, "__module__", None) or "").startswith("s2sgrad."):
        # what inlining would misread is refused (rules/check.py); the library's own rules
        # are checked by the test suite, which keeps a first compile cheap
        check_rule(fn, each)
    source = textwrap.dedent("".join(source_lines(fn.__code__, fn.__globals__)[0]))
    node = gast.parse(source).body[0]
    node.decorator_list = []
    width = 0
    given: list[bool] = []
    for ret in (n for n in _own_nodes(node) if isinstance(n, gast.Return)):
        values = ret.value.elts if isinstance(ret.value, gast.Tuple) else [ret.value]
        width = max(width, len(values))
        given += [False] * (width - len(given))
        for i, v in enumerate(values):
            if not (syntax.is_const(v) and v.value is None):
                given[i] = True
    own = list(_own_nodes(node))
    params = syntax.names_written(node.args)
    assigned = {n.id for n in own if isinstance(n, gast.Name)
                and isinstance(n.ctx, (gast.Store, gast.Del))} | {
        n.name for n in own if isinstance(n, (gast.FunctionDef, gast.ClassDef))} | {
        (a.asname or a.name).split(".")[0] for n in own
        if isinstance(n, (gast.Import, gast.ImportFrom)) for a in n.names}
    assigned -= params
    used = {n.id for n in own if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            and n.id not in params | assigned}
    module_globals = {}
    for n in sorted(used):  # one order whatever the hash seed: the generated text is stable
        if n in fn.__globals__:
            module_globals[n] = fn.__globals__[n]
        elif hasattr(builtins, n):
            # bound by name in the generated code too, where a variable may shadow a builtin
            module_globals[n] = getattr(builtins, n)
        else:
            raise RuleError(f"rule {fn.__name__} ({location(fn)}) reads {n}, which is neither "
                            f"one of its names nor a global of {fn.__module__}")
    return node, tuple(given), module_globals, frozenset(assigned)


def _own_nodes(node: gast.AST):
    """The nodes of a function's body, not those of functions nested in it."""
    todo = list(gast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef,
                              gast.Lambda)):
            todo.extend(gast.iter_child_nodes(n))


def template_of(rule: Rule) -> Template:
    node, outputs, module_globals, assigned = _parse_template(rule.template, rule.each)
    return Template(rule, node, outputs, module_globals, assigned)


def call_arguments(template: Template, params: dict[str, Any]
                   ) -> tuple[list[gast.expr], list[tuple[str, gast.expr]]]:
    """The arguments of a call of the rule function itself, from the inlining bindings
    (``g``, ``ans``, each parameter, the ``each`` index): positional ones in order, the
    atoms of ``*args`` one by one, keyword-only ones by name."""
    args: list[gast.expr] = []
    keywords: list[tuple[str, gast.expr]] = []
    for p in inspect.signature(template.function).parameters.values():
        value = params[p.name]
        if p.kind is p.VAR_POSITIONAL:
            args.extend(value.elts if isinstance(value, gast.Tuple) else value)
        elif p.kind is p.KEYWORD_ONLY:
            keywords.append((p.name, value))
        else:
            args.append(value)
    return args, keywords


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
    # does this name hold complex values (np.iscomplexobj(x))? None where not known
    is_complex: Callable[[str], bool | None] = lambda name: None


def inline(template: Template, bindings: dict[str, gast.expr], facts: Facts, namer: Namer,
           global_names: dict[str, str]) -> Inlined | None:
    """The template's body specialised to ``bindings``, or None if a test stays undecided.

    ``bindings`` maps each parameter (including ``g`` and ``ans``) to an atom or an index
    expression; ``global_names`` maps the rule module's globals to the names that refer to
    them in generated code.
    """
    env: dict[str, gast.expr] = {k: syntax.tuple_(v) if isinstance(v, tuple) else v
                                 for k, v in bindings.items()}
    env.update({k: syntax.name(v) for k, v in global_names.items() if k != v})
    out: list[gast.stmt] = []
    try:
        result = _inline_block(template.node.body, env, facts, namer, out, template)
    except _Undecided:
        _check_callable(template)
        return None
    if result is None:
        raise _error(template, "can end without a return for this call", None,
                     "Give every branch of its tests a return")
    contributions = result + [None] * (len(template.outputs) - len(result))
    return Inlined(out, contributions)


def _check_callable(template: Template) -> None:
    """A rule that is called rather than inlined gets its arguments as ``call_arguments``
    spells them, which a rule registered with ``each=`` is written for (its ``*args`` one
    by one, its index by keyword). Any other rule with ``*args`` or keyword-only parameters
    would be called with arguments it may not expect: refuse it."""
    if template.rule.each is not None:
        return
    kinds = inspect.signature(template.function).parameters.values()
    odd = [p for p in kinds if p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY)]
    if odd:
        names = ", ".join(("*" if p.kind is p.VAR_POSITIONAL else "") + p.name for p in odd)
        raise _error(template, f"has a test that cannot be decided at transform time, so it "
                     f"would be called instead of inlined, and a call cannot pass its "
                     f"parameters {names}", None, "Test only static facts (constants, "
                     "`x is None`, np.ndim(x)), or give the rule positional parameters only")


def _error(template: Template, message: str, node: gast.AST | None, hint: str) -> RuleError:
    fn = template.function
    line = None
    if node is not None and getattr(node, "lineno", None) and hasattr(fn, "__code__"):
        line = fn.__code__.co_firstlineno + node.lineno - 1
    return RuleError(f"rule {fn.__name__} ({location(fn, line)}) {message}. {hint}")


def _inline_block(body: list[gast.stmt], env: dict[str, gast.expr], facts: Facts,
                  namer: Namer, out: list[gast.stmt], template: Template
                  ) -> list[gast.expr | None] | None:
    for stmt in body:
        _check_bound(stmt, env, template)
        if isinstance(stmt, gast.Return):
            values = stmt.value.elts if isinstance(stmt.value, gast.Tuple) else [stmt.value]
            found = [_starless(_subst(v, env, facts), template, stmt) for v in values]
            # None, or a local the branch taken set to None: no contribution
            return [None if syntax.is_const(v) and v.value is None else v for v in found]
        if isinstance(stmt, gast.If):
            test = static_eval(_subst(stmt.test, env, facts), facts)
            if test is UNKNOWN:
                raise _Undecided
            result = _inline_block(stmt.body if test else stmt.orelse, env, facts, namer, out,
                                   template)
            if result is not None:
                return result
        elif isinstance(stmt, gast.Assign) and all(isinstance(t, gast.Name)
                                                   for t in stmt.targets):
            value = _starless(_subst(stmt.value, env, facts), template, stmt)
            first = stmt.targets[0].id
            value = _atom(value, first, namer, out)
            for target in stmt.targets:  # a = b = value binds both
                env[target.id] = value
        elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], (gast.Tuple, gast.List)) and all(
                isinstance(t, gast.Name) for t in stmt.targets[0].elts):
            # a, b = value: the items one by one (a container's cotangent g, or ans)
            value = _starless(_subst(stmt.value, env, facts), template, stmt)
            targets = [t.id for t in stmt.targets[0].elts]
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(targets):
                items = value.elts
            else:
                whole = _atom(value, "_".join(t.lstrip("_") for t in targets), namer, out)
                items = [syntax.subscript(syntax.clone(whole), syntax.const(k))
                         for k in range(len(targets))]
            for target, item in zip(targets, items, strict=True):
                env[target] = _atom(item, target, namer, out)
        elif isinstance(stmt, gast.Expr):
            out.append(syntax.expr_stmt(_starless(_subst(stmt.value, env, facts), template,
                                                  stmt)))
        elif isinstance(stmt, gast.Pass):
            continue
        else:
            raise _Undecided
    return None


def _check_bound(stmt: gast.stmt, env: dict[str, gast.expr], template: Template) -> None:
    """A local of the rule read before this path assigns it would reach the generated code
    as a bare name, where it could mean another variable: refuse it."""
    if isinstance(stmt, gast.If):
        read = stmt.test
    elif isinstance(stmt, (gast.Return, gast.Assign, gast.Expr)):
        read = stmt.value
    else:
        return
    if read is None:
        return
    unbound = sorted(n for n in syntax.names_read(read) if n in template.locals and n not in env)
    if unbound:
        raise _error(template, f"reads {unbound[0]} before assigning it, on the path its tests "
                     "take for this call", stmt, "Assign it in every branch")


def _atom(value: gast.expr, name: str, namer: Namer, out: list[gast.stmt]) -> gast.expr:
    """``value`` itself if it is a name, a constant or a tuple of them (``arys[:k]``, which
    later folds and unpacks by its atoms), else a fresh name assigned it."""
    if isinstance(value, gast.Name) or syntax.is_const(value) or (
            isinstance(value, gast.Tuple) and all(
                isinstance(e, gast.Name) or syntax.is_const(e) for e in value.elts)):
        return value
    fresh = namer.fresh("_" + name.lstrip("_"))
    out.append(syntax.assign(fresh, value))
    return syntax.name(fresh)


def _starless(node: gast.expr, template: Template, stmt: gast.stmt) -> gast.expr:
    """Refuse a ``*x`` left after folding: ``x`` was not a tuple of the call's atoms, and
    generated code passes arguments one by one (higher order reads it again)."""
    for n in gast.walk(node):
        if isinstance(n, gast.Starred):
            raise _error(template, "unpacks a value that is not a tuple of the call's "
                         "arguments with *", stmt, "Unpack only the *args parameter, or "
                         "tuples built from it and from atoms (arys[:k] + (g,) + "
                         "arys[k + 1:])")
    return node


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
        if any(isinstance(a, gast.Starred) and isinstance(a.value, gast.Tuple)
               for a in node.args):  # f(*arys): the atoms one by one
            node.args = [e for a in node.args for e in (
                a.value.elts if isinstance(a, gast.Starred) and isinstance(a.value, gast.Tuple)
                else [a])]
        if syntax.dotted_name(node.func) == "len" and len(node.args) == 1 and isinstance(
                node.args[0], gast.Tuple) and not node.keywords:
            return syntax.located(syntax.const(len(node.args[0].elts)), node)
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


    def visit_Subscript(self, node: gast.Subscript) -> gast.expr:
        # an item or a slice, at constants, of a tuple of atoms (a *args parameter)
        self.generic_visit(node)
        if not isinstance(node.value, gast.Tuple) or not isinstance(node.ctx, gast.Load):
            return node
        elts, index = node.value.elts, node.slice
        if syntax.is_const(index) and type(index.value) is int and \
                -len(elts) <= index.value < len(elts):
            return syntax.clone(elts[index.value])
        if isinstance(index, gast.Slice):
            parts = [getattr(index, k) for k in ("lower", "upper", "step")]
            if all(p is None or (syntax.is_const(p) and type(p.value) is int) for p in parts):
                bounds = [None if p is None else p.value for p in parts]
                return syntax.located(syntax.tuple_(
                    syntax.clone(e) for e in elts[slice(*bounds)]), node)
        return node

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        # k + 1 of constant ints; (a, b) + (c,) of tuples of atoms
        self.generic_visit(node)
        left, right = node.left, node.right
        if isinstance(node.op, gast.Add) and isinstance(left, gast.Tuple) and isinstance(
                right, gast.Tuple):
            return syntax.located(syntax.tuple_(left.elts + right.elts), node)
        if isinstance(node.op, (gast.Add, gast.Sub)) and all(
                syntax.is_const(o) and type(o.value) is int for o in (left, right)):
            value = left.value + right.value if isinstance(node.op, gast.Add) else \
                left.value - right.value
            return syntax.located(syntax.const(value), node)
        return node

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and syntax.is_const(node.operand) \
                and isinstance(node.operand.value, (int, float)):
            return syntax.located(syntax.const(-node.operand.value), node)
        return node

    def visit_Compare(self, node: gast.Compare) -> gast.expr:
        # A comparison of two numbers (b != 0 for a constant exponent b) is a constant, which
        # the optimizer's folding of arithmetic can then use: b - (b != 0) becomes b - 1.
        self.generic_visit(node)
        operands = [node.left, *node.comparators]
        if len(node.ops) == 1 and isinstance(node.ops[0], _ORDER) and all(
                syntax.is_const(o) and type(o.value) in (int, float, bool) for o in operands):
            value = static_eval(node, self.facts)
            if value is not UNKNOWN:
                return syntax.located(syntax.const(value), node)
        return node


_ORDER = (gast.Eq, gast.NotEq, gast.Lt, gast.LtE, gast.Gt, gast.GtE)


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
        if func.split(".")[-1] in ("iscomplexobj", "isrealobj") and isinstance(arg, gast.Name):
            verdict = facts.is_complex(arg.id)
            if verdict is None:
                return UNKNOWN
            return verdict if func.endswith("iscomplexobj") else not verdict
        if func == "isinstance":
            return UNKNOWN
    return UNKNOWN
