"""Pass 3, normalize: desugar, then A-normal form in single-assignment style.

Before: a fenced FunctionDef.
After:  a FunctionDef whose body holds only
          name = <atom> | <atom> op <atom> | op <atom> | <atom> cmp <atom>
               | f(<atom>, ..., k=<atom>) | <atom>.attr | <atom>[<index of atoms>]
               | (<atom>, ...)
          f(<atom>, ...)            (a call kept for its effect, e.g. print)
          assert <atom> / raise ...
          return <atom>
        where an atom is a local name, a constant, a tuple of constants, or a static reference
        to something outside the function (``np.pi``). Every name is assigned once: a user
        variable assigned again gets a numbered version (``h``, ``h_1``), so no value is ever
        overwritten. Each statement keeps the source position of the expression it came from.

    h = np.tanh(x @ w)        _t1 = x @ w
    h = h * 2.0        ->     h = np.tanh(_t1)
    return np.sum(h)          h_1 = h * 2.0
                              _t2 = np.sum(h_1)
                              return _t2
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from . import syntax
from .naming import Namer
from .parse import MISSING, Parsed


@dataclass(frozen=True)
class Normalized:
    parsed: Parsed
    node: gast.FunctionDef  # the ANF function
    namer: Namer  # knows every name in use; later passes draw fresh names from it
    # Statements that came from `x += y` (by index), with the version of x they update and
    # where that value came from: 'param', 'alias' (a copy or a possible view of another
    # value) or 'fresh'. NumPy's += updates in place, visible through aliases.
    augmented: dict[int, tuple[str, str, str]]  # index -> (user name, version, origin)


# Calls whose result may share memory with their first argument.
_VIEWS = {"reshape", "transpose", "ravel", "squeeze", "swapaxes", "moveaxis", "view",
          "expand_dims", "broadcast_to", "asarray", "asanyarray", "atleast_1d", "atleast_2d",
          "flip", "diagonal", "real", "imag", "T", "mT"}


def normalize(parsed: Parsed) -> Normalized:
    taken = {n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name)}
    namer = Namer(taken | set(parsed.params))
    anf = _ANF(parsed, namer)
    body: list[gast.stmt] = []
    for stmt in parsed.node.body:
        body.extend(anf.statement(stmt))
    fn = syntax.clone(parsed.node)
    fn.body = body or [syntax.ret(syntax.const(None))]
    augmented = {i: anf.augmented[id(s)] for i, s in enumerate(body) if id(s) in anf.augmented}
    return Normalized(parsed, fn, namer, augmented)


class _ANF:
    def __init__(self, parsed: Parsed, namer: Namer):
        self.parsed = parsed
        self.namer = namer
        self.current: dict[str, str] = {p: p for p in parsed.params}  # user name -> version
        self.origin: dict[str, str] = {p: "param" for p in parsed.params}  # version -> origin
        self.augmented: dict[int, tuple[str, str, str]] = {}
        self.out: list[gast.stmt] = []

    # --- statements ----------------------------------------------------------------------

    def statement(self, stmt: gast.stmt) -> list[gast.stmt]:
        self.out = []
        if isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value)
        elif isinstance(stmt, gast.AnnAssign):
            self.assign([stmt.target], stmt.value)
        elif isinstance(stmt, gast.AugAssign):
            previous = self.current.get(stmt.target.id)
            value = gast.BinOp(left=syntax.name(stmt.target.id), op=stmt.op, right=stmt.value)
            self.assign([stmt.target], syntax.located(value, stmt))
            if previous is not None:
                self.augmented[id(self.out[-1])] = (
                    stmt.target.id, previous, self.origin.get(previous, "fresh"))
        elif isinstance(stmt, gast.Return):
            value = syntax.const(None) if stmt.value is None else self.atom(stmt.value)
            self.emit(syntax.ret(value), stmt)
        elif isinstance(stmt, gast.Expr):
            if not syntax.is_const(stmt.value):  # a docstring or a bare constant does nothing
                self.emit(syntax.expr_stmt(self.operation(stmt.value)), stmt)
        elif isinstance(stmt, gast.Assert):
            test = self.atom(stmt.test)
            msg = None if stmt.msg is None else self.atom(stmt.msg)
            self.emit(gast.Assert(test=test, msg=msg), stmt)
        elif isinstance(stmt, gast.Raise):
            self.emit(syntax.rename(syntax.clone(stmt), dict(self.current)), stmt)
        elif isinstance(stmt, gast.Pass):
            pass
        else:  # fence lets nothing else through
            raise self.parsed.error(f"internal: unexpected {type(stmt).__name__}", stmt)
        return self.out

    def assign(self, targets: list[gast.expr], value: gast.expr) -> None:
        first, *others = targets
        if isinstance(first, gast.Name):
            self.operation(value, target=first)
            result = self.current[first.id]
        else:
            result = None
            self.unpack(first, value)
        for target in others:  # a = b = value: later targets copy the first
            if result is None:
                raise self.parsed.error("chained assignment to a tuple is not supported",
                                        target, "Write one assignment per statement.")
            self.emit(syntax.assign(self.define(target.id), syntax.name(result)), target)

    def unpack(self, target: gast.Tuple | gast.List, value: gast.expr) -> None:
        if isinstance(value, (gast.Tuple, gast.List)):
            if len(value.elts) != len(target.elts):
                raise self.parsed.error(
                    f"cannot unpack {len(value.elts)} values into {len(target.elts)} names",
                    value, "Give as many names as values.")
            atoms = [self.atom(v) for v in value.elts]  # every right-hand side before a store
            for t, a in zip(target.elts, atoms, strict=True):
                self.emit(syntax.assign(self.define(t.id), a), t)
            return
        whole = self.atom(value)  # n, m = x.shape  ->  n = _t1[0]; m = _t1[1]
        for k, t in enumerate(target.elts):
            item = gast.Subscript(value=syntax.clone(whole), slice=syntax.const(k),
                                  ctx=gast.Load())
            name = self.define(t.id)
            self.origin[name] = "alias"
            self.emit(syntax.assign(name, item), t)

    # --- expressions ---------------------------------------------------------------------

    def atom(self, node: gast.expr) -> gast.expr:
        """An atom holding the value of ``node``, emitting statements as needed."""
        if self.is_atom(node):
            return self.load(node)
        if (isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd))
                and syntax.is_const(node.operand)
                and isinstance(node.operand.value, (int, float, complex))):
            value = node.operand.value
            return syntax.const(-value if isinstance(node.op, gast.USub) else value)
        return self.operation(node, temp=True)

    def operation(self, node: gast.expr, target: gast.Name | None = None,
                  temp: bool = False) -> gast.expr:
        """Emit ``target = <one operation on atoms>`` (a new temporary if ``temp``); with
        neither, return the operation."""
        if isinstance(node, gast.BinOp):
            op = gast.BinOp(left=self.atom(node.left), op=node.op, right=self.atom(node.right))
        elif isinstance(node, gast.UnaryOp):
            op = gast.UnaryOp(op=node.op, operand=self.atom(node.operand))
        elif isinstance(node, gast.Compare):
            op = gast.Compare(left=self.atom(node.left), ops=node.ops,
                              comparators=[self.atom(c) for c in node.comparators])
        elif isinstance(node, gast.Call):
            op = gast.Call(func=self.callee(node.func), args=[self.atom(a) for a in node.args],
                           keywords=[gast.keyword(arg=k.arg, value=self.atom(k.value))
                                     for k in node.keywords])
        elif isinstance(node, gast.Attribute) and not self.is_atom(node):
            op = syntax.attribute(self.atom(node.value), node.attr)
        elif isinstance(node, gast.Subscript):
            op = gast.Subscript(value=self.atom(node.value), slice=self.index(node.slice),
                                ctx=gast.Load())
        elif isinstance(node, (gast.Tuple, gast.List)):
            op = type(node)(elts=[self.atom(e) for e in node.elts], ctx=gast.Load())
        else:  # an atom: a copy
            op = self.load(node)
        syntax.located(op, node)
        if temp:  # numbered after the operands, so temporaries count in evaluation order
            target = syntax.name(self.namer.temp(), store=True)
        if target is None:
            return op
        name = self.define(target.id)
        self.origin[name] = self.origin_of(op)
        self.emit(syntax.assign(name, op), node)
        return syntax.name(name)

    def origin_of(self, op: gast.expr) -> str:
        """'alias' if the value may share memory with another value, else 'fresh'."""
        if isinstance(op, (gast.Name, gast.Subscript)):
            return "alias"
        if isinstance(op, gast.Attribute):
            return "alias" if op.attr in _VIEWS else "fresh"
        if isinstance(op, gast.Call):
            attr = op.func.attr if isinstance(op.func, gast.Attribute) else getattr(
                op.func, "id", "")
            return "alias" if attr in _VIEWS else "fresh"
        return "fresh"

    def callee(self, func: gast.expr) -> gast.expr:
        if self.is_static(func):
            return func
        if isinstance(func, gast.Attribute):  # a method call: x.sum(), (a @ b).mean()
            return syntax.located(syntax.attribute(self.atom(func.value), func.attr), func)
        return self.atom(func)

    def index(self, node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Slice):
            parts = {k: (None if getattr(node, k) is None else self.atom(getattr(node, k)))
                     for k in ("lower", "upper", "step")}
            return gast.Slice(**parts)
        if isinstance(node, gast.Tuple):
            return syntax.tuple_(self.index(e) for e in node.elts)
        return self.atom(node)

    # --- names ---------------------------------------------------------------------------

    def is_static(self, node: gast.expr) -> bool:
        """A Name/Attribute chain of non-local names (``np.pi``, ``math.sin``, ``SCALE``)."""
        path = syntax.dotted_name(node)
        return path is not None and path.split(".")[0] not in self.parsed.local_names

    def is_atom(self, node: gast.expr) -> bool:
        return (isinstance(node, gast.Name) or syntax.is_const(node)
                or syntax.is_static_tuple(node) or self.is_static(node))

    def load(self, node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Name) and node.id in self.parsed.local_names:
            if node.id not in self.current:
                raise self.parsed.error(f"'{node.id}' is used before it is assigned", node)
            return syntax.located(syntax.name(self.current[node.id]), node)
        if isinstance(node, gast.Name) and self.parsed.lookup(node.id) is MISSING:
            raise self.parsed.error(f"name '{node.id}' is not defined", node,
                                    "Define it before the function is first called, or pass "
                                    "it in as an argument.")
        return syntax.clone(node)

    def define(self, user_name: str) -> str:
        """The name a new assignment to ``user_name`` stores into (a new version if needed)."""
        version = user_name if user_name not in self.current else self.namer.fresh(user_name)
        self.current[user_name] = version
        return version

    def emit(self, stmt: gast.stmt, origin: gast.AST) -> None:
        self.out.append(syntax.located(stmt, origin))
