"""The one module that builds and inspects gast nodes.

Every other pass goes through these helpers, so a change in gast's node constructors touches
this file only. Nodes are plain gast nodes; passes never hang extra attributes on them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

import gast

Node = gast.AST
Expr = gast.expr
Stmt = gast.stmt


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


def call(func: str | Expr, args: Iterable[Expr] = (), keywords: dict[str, Expr] | None = None
         ) -> gast.Call:
    if isinstance(func, str):
        func = dotted_expr(func)
    kws = [gast.keyword(arg=k, value=v) for k, v in (keywords or {}).items()]
    return gast.Call(func=func, args=list(args), keywords=kws)


def attribute(value: Expr, attr: str) -> gast.Attribute:
    return gast.Attribute(value=value, attr=attr, ctx=gast.Load())


def dotted_expr(path: str) -> Expr:
    """``'np.linalg.norm'`` -> the Name/Attribute chain."""
    head, *rest = path.split(".")
    node: Expr = name(head)
    for part in rest:
        node = attribute(node, part)
    return node


def binop(left: Expr, op: str, right: Expr) -> gast.BinOp:
    return gast.BinOp(left=left, op=getattr(gast, op)(), right=right)


def ret(value: Expr | None) -> gast.Return:
    return gast.Return(value=value)


def expr_stmt(value: Expr) -> gast.Expr:
    return gast.Expr(value=value)


def if_(test: Expr, body: list[Stmt], orelse: list[Stmt]) -> gast.If:
    return gast.If(test=test, body=body or [gast.Pass()], orelse=orelse)


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


def clone(node: Node) -> Node:
    return copy.deepcopy(node)


def located(new: Node, old: Node) -> Node:
    """Give ``new`` (and its children without one) the source position of ``old``."""
    gast.copy_location(new, old)
    for child in gast.walk(new):
        if hasattr(child, "lineno") and getattr(child, "lineno", None) is None:
            gast.copy_location(child, old)
    return new


# --- inspecting ------------------------------------------------------------------------------

def walk(node: Node) -> Iterator[Node]:
    return gast.walk(node)


def in_order(stmts: list[Stmt]) -> Iterator[Stmt]:
    """The statements of a block and of its nested blocks, in program order."""
    for stmt in stmts:
        yield stmt
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from in_order(inner)


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
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


def names_written(node: Node) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Param))}


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
    return gast.gast_to_ast(node)
