"""The cotangents: each active name's adjoint variable, whether it holds a value yet, and the
statements that add to it.

Takes contributions (``accumulate(atom, expr)``) while the adjoint is written backwards; the
first contribution to a cotangent assigns it, a later one adds to it (``tree_add`` for a
container's), and ``zero`` starts one at zero where a block may or may not add to it. Every
adjoint statement is written here (``emit``), into the block being written (``out``), at
the source position of the statement being reversed (``current``). ``returned`` gives the
adjoint's final ``return``: the cotangents of the differentiated parameters, zeros for one
that received nothing.

    accumulate(x, g * 2)    ->  x_bar = g * 2
    accumulate(x, g * 3)    ->  x_bar = x_bar + g * 3
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

from ... import syntax
from ...runtime.containers import tree_add, zeros_tree
from ..analyze import Abstract
from ..context import Context


class Cotangents:
    def __init__(self, ctx: Context, seed: str, result: gast.expr,
                 structure: Callable[[str, Any], str] = lambda name, where: name):
        self.ctx = ctx
        self.structure = structure  # a container -> where its structure then is read
        self.bar_of: dict[str, str] = {}  # primal name -> name of its cotangent
        self.defined: set[str] = set()  # primal names whose cotangent has a value
        self.out: list[gast.stmt] = []
        self.current: gast.stmt | None = None
        # the operation being reversed involves complex values: a real operand's
        # contribution is the real part of what its rule gives (see rules/registry.py)
        self.complex_op = False
        if isinstance(result, gast.Name) and result.id in ctx.analysis.active:
            self.bar_of[result.id] = seed  # the adjoint's parameter
            self.defined.add(result.id)

    def ndim(self, name: str) -> int | None:
        """Ranks of primal names, and of cotangents (a cotangent has its primal's rank)."""
        for primal, bar in self.bar_of.items():
            if bar == name:
                return self.ctx.analysis.ndim(primal)
        return self.ctx.analysis.ndim(name)

    def is_complex(self, name: str) -> bool | None:
        """Whether a primal name, or a cotangent (its primal's dtype), holds complex
        values; None where it is not known."""
        for primal, bar in self.bar_of.items():
            if bar == name:
                name = primal
        value = self.ctx.analysis.values.get(name)
        return None if value is None or value.kind not in ("array", "scalar") else value.complex

    def bar(self, name: str) -> str:
        if name not in self.bar_of:
            self.bar_of[name] = self.ctx.namer.fresh(f"{name}_bar")
        return self.bar_of[name]

    def emit(self, stmt: gast.stmt) -> None:
        self.out.append(syntax.located(stmt, self.current))

    def accumulate(self, atom: Any, contribution: gast.expr) -> None:
        if not isinstance(atom, gast.Name) or atom.id not in self.ctx.analysis.active:
            return
        target = self.bar(atom.id)
        value = self.ctx.analysis.values.get(atom.id)
        if self.complex_op and value is not None and value.kind in ("array", "scalar") and \
                not value.complex:
            contribution = syntax.call(f"{self.ctx.np}.real", [contribution])
        if atom.id in self.defined and _structured(self.ctx.analysis.values.get(atom.id)):
            helper = self.ctx.bindings.claim("tree_add", tree_add)
            contribution = syntax.call(syntax.name(helper), [syntax.name(target), contribution])
        elif atom.id in self.defined:
            contribution = syntax.binop(syntax.name(target), "Add", contribution)
        self.defined.add(atom.id)
        self.emit(syntax.assign(target, contribution))

    def zero(self, name: str, origin: gast.AST) -> None:
        """Start the cotangent of ``name`` at zero (before a block that may add to it)."""
        zero = self.zero_like(name, origin)
        self.out.append(syntax.located(syntax.assign(self.bar(name), zero), origin))
        self.defined.add(name)

    def zero_like(self, name: str, where: gast.AST | None = None) -> gast.expr:
        """Zeros shaped like ``name``'s value, in the adjoint of ``where`` (a container's
        as that version held its items: see ``Forward.structure``)."""
        value = self.ctx.analysis.values.get(name)
        if value is not None and value.kind == "scalar":
            return syntax.const(0.0)
        return self.zeros_shaped(name, syntax.name(self.structure(name, where) if _structured(
            value) else name))

    def zeros_shaped(self, name: str, like: gast.expr) -> gast.expr:
        """Zeros shaped like ``like`` (``name``'s value or cotangent): zeros per item for
        a structure (see ``_structured``), else an array."""
        value = self.ctx.analysis.values.get(name)
        if _structured(value):
            if value.type in (list, tuple) and value.items and all(
                    v.kind == "scalar" and v.float for _, v in value.items):
                # a list or tuple of floats: a list of zeros as long
                return syntax.binop(syntax.list_([syntax.const(0.0)]), "Mult",
                                    syntax.call(syntax.name("len"), [like]))
            return syntax.call(syntax.name(self.ctx.bindings.claim("zeros_tree", zeros_tree)),
                               [like])
        return syntax.call(f"{self.ctx.np}.zeros_like", [like])

    def returned(self, wrt: tuple[str, ...]) -> gast.stmt:
        """``return (p_bar, ...)`` for the parameters ``wrt``."""
        grads = [syntax.name(self.bar(p)) if p in self.defined else self.zero_like(p)
                 for p in wrt]
        return syntax.ret(syntax.tuple_(grads))


def _structured(value: Abstract | None) -> bool:
    """A value whose cotangent may be a structure (a tuple, list or dict, or an object of a
    dict's subclass read through its own methods): added item by item, zeros per item."""
    return value is not None and value.kind == "object"
