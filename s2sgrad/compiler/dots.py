"""Part of pass 5 of forward mode, tangent: each active name's tangent, and a zero of its kind
for a value that does not move.

Takes the atoms (names and constants) a statement reads, as the pass lowers it; gives their
tangents (``tangent_of``): an active name's is the name ``<name>_dot`` (``dot``, made once),
any other atom's a zero of its kind (``zero``):

    x      active                        x_dot
    2.0    a float (an int)              0.0 (0)
    h      an array that does not move   np.zeros_like(h)
    xs     a tuple, list or dict         zeros_tree(xs)
    s      a string, None, a module      s itself: nothing of it moves

and from those the statement that assigns a target's tangent (``assign_dot``), an
expression computed on the tangents instead of the values (``on_tangents``: ``(a, b)``
becomes ``(a_dot, b_dot)``), and what batching.py sees of a statement (``site``). With a
batch (``batch``, the name of its size), a zero is rows of zeros:
``np.zeros((batch,) + np.shape(h))``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..runtime.containers import zeros_tree
from . import batching
from .analyze import Op, abstract_of, is_container
from .context import Context
from .parse import MISSING
from .simplify import simplify


class Dots:
    def __init__(self, ctx: Context, batch: str | None = None):
        self.ctx = ctx
        self.analysis = ctx.analysis
        self.active = ctx.analysis.active
        self.batch = batch  # batched: the name of the batch size
        self.counters: list[str] = []  # the targets of the range loops around a statement
        self.dot_of: dict[str, str] = {}

    def dot(self, name: str) -> str:
        if name not in self.dot_of:
            self.dot_of[name] = self.ctx.namer.fresh(f"{name}_dot")
        return self.dot_of[name]

    def is_active(self, atom: Any) -> bool:
        return isinstance(atom, gast.Name) and atom.id in self.active

    def tangent_of(self, atom: Any) -> gast.expr:
        """The tangent of an atom: its tangent name, or a zero of its kind."""
        if self.is_active(atom):
            return syntax.name(self.dot(atom.id))
        return self.zero(atom)

    def zero(self, atom: Any) -> gast.expr:
        """A zero tangent for a value that does not move: 0.0 for a float, a zero array or
        container shaped like it, and the value itself where nothing can move (an int, a
        string, None)."""
        if isinstance(atom, tuple):  # what a callee's *args receives
            return syntax.tuple_([self.zero(a) for a in atom])
        if syntax.is_const(atom):
            value = atom.value
            if isinstance(value, (bool, np.bool_)) or value is None or isinstance(value, str):
                return syntax.clone(atom)
            if self.batch and isinstance(value, float):
                return syntax.call(f"{self.ctx.np}.zeros", [syntax.name(self.batch)])
            return syntax.const(0 if isinstance(value, int) else 0.0)
        if not isinstance(atom, gast.Name):
            return syntax.clone(atom)
        value = self.analysis.values.get(atom.id)
        if value is None:  # a name from outside the function (a global array): what it holds
            held = self.analysis.normalized.parsed.resolve(atom)
            value = None if held is MISSING else abstract_of(held)
        if value is None or value.kind in ("none", "module", "callable"):
            return syntax.clone(atom)
        if self.batch and value.float and value.kind in ("scalar", "array"):
            # rows of zeros: (batch,) + np.shape(h)
            return syntax.call(f"{self.ctx.np}.zeros", [syntax.binop(
                syntax.tuple_([syntax.name(self.batch)]), "Add",
                syntax.call(f"{self.ctx.np}.shape", [syntax.clone(atom)]))])
        if value.kind == "scalar":
            return syntax.const(0.0 if value.float else 0)
        if value.kind == "array":
            return syntax.call(f"{self.ctx.np}.zeros_like", [syntax.clone(atom)])
        if is_container(value):
            helper = self.ctx.bindings.claim("zeros_tree", zeros_tree)
            batch = [syntax.name(self.batch)] if self.batch else []
            zeros = syntax.call(syntax.name(helper), [syntax.clone(atom), *batch])
            if value.type is tuple:  # a tangent has its value's structure: t + t_dot's tuple
                return syntax.call(syntax.name(self.ctx.bindings.claim("tuple", tuple)),
                                   [zeros])
            return zeros
        return syntax.clone(atom)

    def assign_dot(self, target: str, value: gast.expr) -> gast.stmt:
        return simplify(syntax.assign(self.dot(target), value))

    def on_tangents(self, value: gast.expr, diff: list[Any]) -> gast.expr:
        """``value`` with each differentiable atom in ``diff`` replaced by its tangent (the
        atoms of a ``*args`` parameter one by one)."""
        diff = [e for a in diff for e in (a if isinstance(a, tuple) else (a,))]
        names = {a.id for a in diff if isinstance(a, gast.Name)}
        mapping = {n: self.tangent_of(syntax.name(n)) for n in names}
        new = syntax.clone(value)
        consts = {id(a) for a in diff if syntax.is_const(a)}
        if consts:  # a constant moving part (a list's 0.0 item) becomes its zero
            copies = {id(b) for a, b in zip(gast.walk(value), gast.walk(new)) if id(a) in consts}
            new = _ReplaceConstants(copies, self.zero).visit(new)
        return syntax.rename(new, mapping)

    def site(self, op: Op) -> batching.Site:
        return batching.Site(op, self.ctx.np, self.batch, self.tangent_of, self.value_here,
                             self.is_active, self.ctx.namer.fresh, self.ctx.bindings.claim)

    def value_here(self, atom: Any) -> Any:
        """What is known of an atom at the statement being lowered: a range loop's counter
        is an int inside the loop, whatever it is before it."""
        if not isinstance(atom, gast.Name):
            return None
        value = self.analysis.values.get(atom.id)
        if value is not None and value.none and atom.id in self.counters:
            return dataclasses.replace(value, none=False)
        return value


class _ReplaceConstants(gast.NodeTransformer):
    def __init__(self, consts: set[int], zero: Callable[[Any], gast.expr]):
        self.consts, self.zero = consts, zero

    def visit_Constant(self, node: gast.Constant) -> gast.expr:
        return self.zero(node) if id(node) in self.consts else node
