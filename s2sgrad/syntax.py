"""The one module that builds and inspects gast nodes.

Every other pass goes through these helpers, so a change in gast's node constructors touches
this file only. Nodes are plain gast nodes; passes never hang extra attributes on them, and
never change a node an earlier pass returned: a pass that rewrites a statement builds a new one
(``replace``, ``statements.map_blocks``) or works on its own ``clone``.

Every walk that dispatches on node kind ends in an ``else`` that raises ``unexpected(pass,
node)``, an ``InternalError``: a node no case covers is a compiler bug, never skipped.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Iterator
from typing import Any

import gast

Node = gast.AST
Expr = gast.expr
Stmt = gast.stmt


class InternalError(AssertionError):
    """A pass met a node it has no case for: a bug in the compiler, not in the user's code
    (fence refuses what the passes do not handle, with the user's file:line:col)."""


def unexpected(pass_name: str, node: Node, where: str = "") -> InternalError:
    """The error a pass raises from the ``else`` of a dispatch on node kind."""
    at = f" at line {node.lineno}" if getattr(node, "lineno", None) else ""
    context = f" in {where}" if where else ""
    return InternalError(f"s2sgrad internal error: {pass_name} has no case for "
                         f"{type(node).__name__}{context}{at}; please report this")


# --- building --------------------------------------------------------------------------------

def name(id: str, store: bool = False) -> gast.Name:
    ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=id, ctx=ctx, annotation=None, type_comment=None)


def param(id: str) -> gast.Name:
    return gast.Name(id=id, ctx=gast.Param(), annotation=None, type_comment=None)


def const(value: Any) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def tuple_(elts: Iterable[Expr], store: bool = False) -> gast.Tuple:
    return gast.Tuple(elts=list(elts), ctx=gast.Store() if store else gast.Load())


def assign(target: str | Expr, value: Expr) -> gast.Assign:
    if isinstance(target, str):
        target = name(target, store=True)
    return gast.Assign(targets=[target], value=value, type_comment=None)


def unpack(targets: list[str], value: Expr) -> gast.Assign:
    return assign(tuple_([name(t, store=True) for t in targets], store=True), value)


def call(func: str | Expr, args: Iterable[Expr] = (),
         keywords: dict[str, Expr] | Iterable[tuple[str | None, Expr]] = ()) -> gast.Call:
    """``func(*args, **keywords)``; ``keywords`` as a dict or as (name, value) pairs, where a
    name of None stands for ``**value``."""
    if isinstance(func, str):
        func = dotted_expr(func)
    pairs = keywords.items() if isinstance(keywords, dict) else keywords
    return gast.Call(func=func, args=list(args), keywords=[keyword(k, v) for k, v in pairs])


def subscript(value: Expr, index: Expr, store: bool = False) -> gast.Subscript:
    return gast.Subscript(value=value, slice=index, ctx=gast.Store() if store else gast.Load())


def slice_(lower: Expr | None = None, upper: Expr | None = None, step: Expr | None = None
           ) -> gast.Slice:
    """``lower:upper:step`` (an index, only valid inside brackets)."""
    return gast.Slice(lower=lower, upper=upper, step=step)


def list_(elts: Iterable[Expr]) -> gast.List:
    return gast.List(elts=list(elts), ctx=gast.Load())


def list_comp(elt: Expr, target: str | Expr, iter: Expr | None = None,
              generators: list | None = None) -> gast.ListComp:
    """``[elt for target in iter]`` (``target`` a name or a store target), or with the
    ``generators`` of another comprehension."""
    if generators is None:
        target = name(target, store=True) if isinstance(target, str) else target
        generators = [gast.comprehension(target=target, iter=iter, ifs=[], is_async=0)]
    return gast.ListComp(elt=elt, generators=generators)


def dict_comp(key: Expr, value: Expr, target: Expr, iter: Expr) -> gast.DictComp:
    """``{key: value for target in iter}``."""
    generators = [gast.comprehension(target=target, iter=iter, ifs=[], is_async=0)]
    return gast.DictComp(key=key, value=value, generators=generators)


def formatted(node: gast.JoinedStr, values: list[Expr]) -> gast.JoinedStr:
    """The f-string ``node`` with its formatted values replaced by ``values``, in order
    (its conversions and format specs kept)."""
    parts, it = [], iter(values)
    for part in node.values:
        if isinstance(part, gast.FormattedValue):
            part = gast.FormattedValue(value=next(it), conversion=part.conversion,
                                       format_spec=part.format_spec)
        parts.append(part)
    return gast.JoinedStr(values=parts)


def starred(value: Expr) -> gast.Starred:
    """``*value`` in a call's arguments."""
    return gast.Starred(value=value, ctx=gast.Load())


def if_exp(test: Expr, body: Expr, orelse: Expr) -> gast.IfExp:
    return gast.IfExp(test=test, body=body, orelse=orelse)


def dict_(keys: Iterable[Expr], values: Iterable[Expr]) -> gast.Dict:
    return gast.Dict(keys=list(keys), values=list(values))


def keyword(arg: str | None, value: Expr) -> gast.keyword:
    return gast.keyword(arg=arg, value=value)


def attribute(value: Expr, attr: str) -> gast.Attribute:
    return gast.Attribute(value=value, attr=attr, ctx=gast.Load())


def dotted_expr(path: str) -> Expr:
    """``'np.linalg.norm'`` -> the Name/Attribute chain."""
    head, *rest = path.split(".")
    node: Expr = name(head)
    for part in rest:
        node = attribute(node, part)
    return node


def _operator(op: str | gast.AST) -> gast.AST:
    """An operator node from its gast class name (``'Add'``), or the node itself."""
    return getattr(gast, op)() if isinstance(op, str) else op


def binop(left: Expr, op: str | gast.operator, right: Expr) -> gast.BinOp:
    """``left op right``; ``op`` a class name (``'Add'``) or an operator node."""
    return gast.BinOp(left=left, op=_operator(op), right=right)


def unaryop(op: str | gast.unaryop, operand: Expr) -> gast.UnaryOp:
    return gast.UnaryOp(op=_operator(op), operand=operand)


def not_(operand: Expr) -> gast.UnaryOp:
    return unaryop("Not", operand)


def compare(left: Expr, ops: Iterable[str | gast.cmpop], comparators: Iterable[Expr]
            ) -> gast.Compare:
    """``left op0 c0 op1 c1 ...``; each op a class name (``'Lt'``) or a comparison node."""
    return gast.Compare(left=left, ops=[_operator(op) for op in ops],
                        comparators=list(comparators))


def ret(value: Expr | None) -> gast.Return:
    return gast.Return(value=value)


def expr_stmt(value: Expr) -> gast.Expr:
    return gast.Expr(value=value)


def aug_assign(target: str | Expr, op: str | gast.operator, value: Expr) -> gast.AugAssign:
    if isinstance(target, str):
        target = name(target, store=True)
    return gast.AugAssign(target=target, op=_operator(op), value=value)


def pass_() -> gast.Pass:
    return gast.Pass()


def break_() -> gast.Break:
    return gast.Break()


def assert_(test: Expr, msg: Expr | None = None) -> gast.Assert:
    return gast.Assert(test=test, msg=msg)


def block(stmts: list[Stmt]) -> list[Stmt]:
    """``stmts`` as the body of a compound statement, which cannot be empty."""
    return stmts or [pass_()]


def if_(test: Expr, body: list[Stmt], orelse: list[Stmt]) -> gast.If:
    return gast.If(test=test, body=block(body), orelse=orelse)


def for_(target: Expr, iter: Expr, body: list[Stmt]) -> gast.For:
    return gast.For(target=target, iter=iter, body=block(body), orelse=[], type_comment=None)


def while_(test: Expr, body: list[Stmt]) -> gast.While:
    return gast.While(test=test, body=block(body), orelse=[])


class Try(gast.Try):
    """The normalized try: one ``except`` clause, no ``else`` or ``finally``, and the
    handler's block also reachable as the field ``handler``, so that the passes walk its two
    blocks (``body``, ``handler``) by name, as they walk an if's (``statements.KINDS``)."""

    @property
    def handler(self) -> list[Stmt]:
        return self.handlers[0].body

    @handler.setter
    def handler(self, stmts: list[Stmt]) -> None:  # (Python requires it to hold one)
        self.handlers = [replace(self.handlers[0], body=block(stmts))]


def try_(body: list[Stmt], exception: Expr | None, handler: list[Stmt]) -> Try:
    """``try: body`` / ``except exception: handler``."""
    caught = gast.ExceptHandler(type=exception, name=None, body=block(handler))
    return Try(body=block(body), handlers=[caught], orelse=[], finalbody=[])


def raise_(exception: str, message: str) -> gast.Raise:
    """``raise exception(message)``"""
    return gast.Raise(exc=call(name(exception), [const(message)]), cause=None)


def index_value(index: Expr, slice_name: str = "slice") -> Expr:
    """A subscript's index as a value that can stand anywhere (a call argument, a tuple item):
    ``i, 1:n, ...`` -> ``(i, slice(1, n, None), ...)``. ``slice_name`` is the name that
    refers to the builtin ``slice`` in the generated code."""
    if isinstance(index, gast.Slice):
        return call(name(slice_name), [
            clone(part) if part is not None else const(None)
            for part in (index.lower, index.upper, index.step)])
    if isinstance(index, gast.Tuple):
        return tuple_(index_value(e, slice_name) for e in index.elts)
    return clone(index)


def function(fname: str, params: list[str], body: list[Stmt]) -> gast.FunctionDef:
    args = gast.arguments(args=[param(p) for p in params], posonlyargs=[], vararg=None,
                          kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return gast.FunctionDef(name=fname, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])


def module(body: list[Stmt]) -> gast.Module:
    return gast.Module(body=body, type_ignores=[])


def parse(source: str) -> gast.Module:
    return gast.parse(source)


def parse_expr(source: str) -> Expr:
    return gast.parse(source).body[0].value


def clone(node: Any) -> Any:
    """A deep copy of a node, or of a list or tuple of nodes. What is not a node (an
    identifier, a constant's value) is immutable and is shared."""
    kind = type(node)
    if kind is list:
        return [clone(n) for n in node]
    if isinstance(node, (list, tuple)):
        return kind(clone(n) for n in node)
    if not isinstance(node, gast.AST):
        return node
    copied = kind.__new__(kind)
    copied.__dict__.update({k: v if type(v) in _SHARED else clone(v)
                            for k, v in node.__dict__.items()})
    return copied


_SHARED = frozenset({str, int, float, bool, type(None)})  # immutable: what clone shares


def replace(node: Node, **fields: Any) -> Node:
    """A copy of ``node`` with ``fields`` replaced; the children it keeps are shared. A pass
    changes a node it received this way, leaving the earlier pass's tree as it was."""
    copied = type(node).__new__(type(node))
    copied.__dict__.update(node.__dict__)
    for field, value in fields.items():
        setattr(copied, field, value)  # (a Try's handler block is a property)
    return copied


def located(new: Node, old: Node) -> Node:
    """Give ``new`` (and its children without one) the source position of ``old``."""
    gast.copy_location(new, old)
    for child in _nodes(new):
        if hasattr(child, "lineno") and getattr(child, "lineno", None) is None:
            gast.copy_location(child, old)
    return new


# --- inspecting ------------------------------------------------------------------------------

def walk(node: Node) -> Iterator[Node]:
    return gast.walk(node)


def in_order(stmts: list[Stmt]) -> Iterator[Stmt]:
    """The statements of a block and of its nested blocks, in program order: the user's
    code, whatever statements it holds (the passes walk normalized and generated code
    through ``statements.in_order``, which knows each kind)."""
    for stmt in stmts:
        yield stmt
        for field in stmt._fields:
            value = getattr(stmt, field, None)
            if not isinstance(value, list):
                continue
            for item in value:
                if isinstance(item, gast.stmt):
                    yield from in_order([item])
                elif isinstance(item, gast.excepthandler):  # except ...: its block
                    yield from in_order(item.body)


def is_name(node: Any, id: str | None = None) -> bool:
    return isinstance(node, gast.Name) and (id is None or node.id == id)


def is_const(node: Any) -> bool:
    return isinstance(node, gast.Constant)


def is_static_tuple(node: Any) -> bool:
    return isinstance(node, gast.Tuple) and all(
        is_const(e) or is_static_tuple(e) for e in node.elts)


def const_value(node: Expr) -> Any:
    """The Python value of a constant or a tuple of constants."""
    if is_const(node):
        return node.value
    return tuple(const_value(e) for e in node.elts)


def dotted_name(node: Any) -> str | None:
    """``np.linalg.norm`` -> 'np.linalg.norm'; None if ``node`` is not a Name/Attribute chain."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def names_read(node: Node) -> set[str]:
    return {n.id for n in _names(node) if isinstance(n.ctx, gast.Load)}


def names_written(node: Node) -> set[str]:
    return {n.id for n in _names(node) if isinstance(n.ctx, (gast.Store, gast.Param))}


def _names(node: Node) -> list[gast.Name]:
    """The ``Name`` nodes under ``node`` (itself included)."""
    return [n for n in _nodes(node) if type(n) is gast.Name]


def _nodes(node: Node) -> list[Node]:
    """The nodes under ``node`` (itself included), the ones ``gast.walk`` gives, in a list:
    a walk of the fields without its generators, since the passes ask this of every
    statement."""
    found, stack = [], [node]
    while stack:
        here = stack.pop()
        found.append(here)
        for field in here._fields:
            value = getattr(here, field, None)
            if type(value) is list:
                stack.extend(v for v in value if isinstance(v, gast.AST))
            elif isinstance(value, gast.AST):
                stack.append(value)
    return found


def rename(node: Node, mapping: dict[str, str | Expr]) -> Node:
    """Replace loaded names by other names (or expressions), in place; returns the node."""
    return _Substitute(mapping).visit(node)


class _Substitute(gast.NodeTransformer):
    def __init__(self, mapping: dict[str, str | Expr]):
        self.mapping = mapping

    def visit_Name(self, node: gast.Name) -> Expr:
        if isinstance(node.ctx, gast.Load) and node.id in self.mapping:
            new = self.mapping[node.id]
            if isinstance(new, str):
                return gast.copy_location(name(new), node)
            return gast.copy_location(clone(new), node)
        return node


BINOPS = {
    gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "truediv",
    gast.Pow: "pow", gast.MatMult: "matmul", gast.FloorDiv: "floordiv", gast.Mod: "mod",
    gast.BitAnd: "and_", gast.BitOr: "or_", gast.BitXor: "xor", gast.LShift: "lshift",
    gast.RShift: "rshift",
}
UNARYOPS = {gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not_", gast.Invert: "invert"}
CMPOPS = {
    gast.Lt: "lt", gast.LtE: "le", gast.Gt: "gt", gast.GtE: "ge", gast.Eq: "eq",
    gast.NotEq: "ne", gast.Is: "is_", gast.IsNot: "is_not", gast.In: "contains",
    gast.NotIn: "not_in",
}


def to_python_ast(node: Node):
    """The Python ``ast`` of ``node``, ready to render as source.

    A negative number is a constant after folding (``-0.5``), but the renderer writes it as
    ``-0.5``, which as the base of ``**`` reads back as ``-(0.5 ** 2)``: each such constant
    becomes a unary minus on its magnitude, which renders parenthesised where precedence
    needs it (``(-0.5) ** 2``) and evaluates to the same number."""
    return _NegativeConstants().visit(gast.gast_to_ast(node))


def _renders_negative(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value < 0
    if isinstance(value, float):
        return math.copysign(1.0, value) < 0 and not math.isnan(value)
    if isinstance(value, complex):  # written as its imaginary part alone when the real is 0
        return value.real == 0 and math.copysign(1.0, value.imag) < 0 and \
            not math.isnan(value.imag)
    return False


class _NegativeConstants(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if not _renders_negative(node.value):
            return node
        magnitude = ast.Constant(value=-node.value)
        return ast.copy_location(ast.UnaryOp(op=ast.USub(), operand=magnitude), node)


_SHAPE_QUERIES = {"shape": "shape", "size": "size", "ndim": "ndim", "len": "len"}


def shape_query(node: gast.AST, numpy_names: set[str]) -> tuple[str, str] | None:
    """``np.shape(x)``, ``x.shape``, ``np.size(x)``, ``len(x)``... -> (x, 'shape'|...)."""
    if isinstance(node, gast.Attribute) and node.attr in ("shape", "size", "ndim") and \
            isinstance(node.value, gast.Name):
        return node.value.id, node.attr
    if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords and \
            isinstance(node.args[0], gast.Name):
        func = dotted_name(node.func) or ""
        head, _, attr = func.rpartition(".")
        if (head in numpy_names and attr in ("shape", "size", "ndim")) or func == "len":
            return node.args[0].id, _SHAPE_QUERIES[attr or func]
    return None
