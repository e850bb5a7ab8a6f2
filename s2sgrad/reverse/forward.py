"""The forward that saves: the primal statements, lowered, with what the adjoint reads.

Takes the normalized body (``block``) after the adjoint was built: building it asks for the
saves (``snapshot``, ``save_shape``, ``trip_counter``, ``callee_saved_name``, ``marker``).
Gives the forward body:

    - each active loop counts its trips (``_trips = 0`` before it, ``_trips = _trips + 1``
      in it), and each active block (a branch, a loop body) ends with a ``__push__(k)``
      marker;
    - element writes and appends are done in place, as NumPy and Python do them
      (``y_1 = y; y_1[i] = v``), and so are the in-place updates aliasing found
      (``x_1 = x; x_1 += y``);
    - a differentiated callee's call becomes a call of its forward, which also returns what
      its adjoint needs (``h, f_saved = f_forward(x)``);
    - a value that a later in-place update may overwrite is copied where the adjoint
      reads it (``h_copy = np.copy(h)``), and an operand's shape saved where a contribution
      is reduced to it (``x_shape = np.shape(x)``).

    y_1 = __setitem__(y[0], _t1)    ->  y_1 = y
                                        y_1[0] = _t1

Each statement class has one entry in ``lowering``, each operation kind one in ``by_op``; a
missing one is an internal error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

from .. import statements, syntax
from ..analyze import Op, is_container
from .context import PUSH, Context


class Forward:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.before: dict[int, list[gast.stmt]] = {}  # forward statements before statement i
        self.extra: dict[int, list[gast.stmt]] = {}  # forward statements after statement i
        self.shape_of: dict[tuple, str] = {}
        self.snapshots: dict[tuple, str] = {}
        self.callee_saved: dict[int, str] = {}
        self.trips: dict[int, str] = {}  # loop -> its trip counter
        self.markers: dict[tuple, int] = {}  # (statement, block field) -> its marker
        # by class (a compound statement that computes no active value keeps its blocks,
        # lowered, whatever its class)
        self.lowering: dict[type, Callable[[gast.stmt], list[gast.stmt]]] = {
            gast.Assign: self.computing, gast.Expr: self.computing,
            gast.If: self.branch, gast.For: self.loop, gast.While: self.loop,
            gast.Assert: self.kept, gast.Raise: self.kept, gast.Break: self.kept,
            gast.Pass: self.kept,
        }
        # a computing statement, by the kind of its operation
        self.by_op: dict[str, Callable[[gast.stmt, Op], list[gast.stmt]]] = {
            "setitem": self.element_write, "append": self.append, "call": self.callee,
            "copy": self.computed, "rule": self.computed, "pack": self.computed,
            "item": self.computed, "nondiff": self.computed, "effect": self.computed,
            "unknown": self.computed,
        }

    def block(self, stmts: list[gast.stmt], marker: int | None = None) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            kind = statements.kind(stmt, "reverse")
            if kind.blocks and not self.ctx.is_active([stmt]):
                # no adjoint, but element writes and appends still lowered
                out.append(statements.map_blocks(stmt, self.block, "reverse"))
                continue
            lower = self.lowering.get(type(stmt))
            if lower is None:
                raise syntax.unexpected("reverse", stmt, "the forward")
            out.extend(lower(stmt))
        if marker is not None:
            out.append(syntax.expr_stmt(syntax.call(syntax.name(PUSH), [syntax.const(marker)])))
        return out

    # --- statements ------------------------------------------------------------------------

    def computing(self, stmt: gast.stmt) -> list[gast.stmt]:
        op = self.ctx.analysis.ops[stmt]
        lower = self.by_op.get(op.kind)
        if lower is None:
            raise syntax.unexpected("reverse", stmt, f"an operation of kind {op.kind!r}")
        lowered = lower(stmt, op)
        return self.before.get(id(stmt), []) + lowered + self.extra.get(id(stmt), [])

    def branch(self, stmt: gast.If) -> list[gast.stmt]:
        body = self.block(stmt.body, self.marker(stmt, "body"))
        orelse = self.block(stmt.orelse, self.marker(stmt, "orelse"))
        return [syntax.located(syntax.if_(stmt.test, body, orelse), stmt)]

    def loop(self, stmt: gast.For | gast.While) -> list[gast.stmt]:
        trips = self.trip_counter(stmt)
        start = syntax.located(syntax.assign(trips, syntax.const(0)), stmt)
        body = self.block(stmt.body, self.marker(stmt, "body"))
        body.insert(len(body) - 1, syntax.located(syntax.assign(trips, syntax.binop(
            syntax.name(trips), "Add", syntax.const(1))), stmt))
        return [start, syntax.replace(stmt, body=body)]

    def kept(self, stmt: gast.stmt) -> list[gast.stmt]:
        return [stmt]

    # --- operations ------------------------------------------------------------------------

    def computed(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """The statement itself, or an update aliasing found in place: x_1 = x; x_1 += y."""
        if not self.ctx.aliases.is_in_place(stmt):
            return [stmt]
        value = stmt.value
        update = syntax.aug_assign(op.target, value.op, syntax.clone(value.right))
        return [syntax.located(syntax.assign(op.target, syntax.clone(value.left)), stmt),
                syntax.located(update, stmt)]

    def element_write(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """y_1 = y; y_1[idx] = v: in place, as NumPy does it."""
        region = stmt.value.args[0]
        store = syntax.subscript(syntax.name(op.target), syntax.clone(region.slice), store=True)
        return [syntax.located(syntax.assign(op.target, syntax.clone(region.value)), stmt),
                syntax.located(syntax.assign(store, syntax.clone(stmt.value.args[1])), stmt)]

    def append(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """xs_1 = xs; xs_1.append(v): in place, as Python does it."""
        base, value = stmt.value.args
        return [syntax.located(syntax.assign(op.target, syntax.clone(base)), stmt),
                syntax.located(syntax.expr_stmt(syntax.call(syntax.attribute(
                    syntax.name(op.target), "append"), [syntax.clone(value)])), stmt)]

    def callee(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """The callee's forward, which also returns what its adjoint needs (for an active
        result; otherwise the call itself)."""
        if op.target not in self.ctx.analysis.active or self.ctx.aliases.is_in_place(stmt):
            return self.computed(stmt, op)
        compiled = op.callee
        fname = self.ctx.bindings.claim(f"{compiled.name}_forward", compiled.forward)
        saved = self.callee_saved_name(stmt, compiled)
        call = stmt.value
        # op.callee_args: the receiver first for a method call (model.apply(x))
        args = [self.copy_if_at_risk(stmt, syntax.clone(a)) for a in op.callee_args]
        keywords = [(k.arg, self.copy_if_at_risk(stmt, syntax.clone(k.value)))
                    for k in getattr(call, "keywords", ())]  # a ``+`` or ``[]`` has none
        new = syntax.unpack([op.target, saved], syntax.call(syntax.name(fname), args, keywords))
        return [syntax.located(new, stmt)]

    def copy_if_at_risk(self, stmt: gast.stmt, atom: gast.expr) -> gast.expr:
        """A callee's forward may keep its argument for its adjoint: pass it a copy when a
        later element assignment may change it."""
        if isinstance(atom, gast.Name) and self.ctx.aliases.at_risk(atom.id, stmt):
            return syntax.call(f"{self.ctx.np}.copy", [atom])
        return atom

    # --- what the adjoint reads --------------------------------------------------------------

    def marker(self, stmt: gast.stmt, field: str) -> int:
        """The number of a block of ``stmt``: its forward ends with ``__push__(k)``, its
        reverse block starts with ``__pop__(k)``."""
        return self.markers.setdefault((id(stmt), field), len(self.markers) + 1)

    def snapshot_atom(self, stmt: gast.stmt, atom: Any) -> Any:
        if isinstance(atom, gast.Name):
            return syntax.name(self.snapshot(stmt, atom.id))
        return atom

    def snapshot(self, stmt: gast.stmt, name: str) -> str:
        """The name under which the adjoint of ``stmt`` reads ``name``: ``name`` itself, or a
        copy taken right after ``stmt`` when an element assignment that runs later (further
        on, or in a later iteration) may change the array ``name`` shares memory with."""
        if not self.ctx.aliases.at_risk(name, stmt):
            return name
        key = (id(stmt), name)
        if key not in self.snapshots:
            copy = self.ctx.namer.fresh(f"{name}_copy")
            self.snapshots[key] = copy
            value = self.ctx.analysis.values.get(name)
            copier = syntax.name(value.type.__name__) if is_container(value) else \
                syntax.dotted_expr(f"{self.ctx.np}.copy")
            take = syntax.located(syntax.assign(copy, syntax.call(copier, [syntax.name(name)])),
                                  stmt)
            # a value the statement itself overwrites (x *= y reads the old x) is copied
            # before it; anything else right after it
            when = self.before if self.ctx.aliases.overwrites(stmt, name) else self.extra
            when.setdefault(id(stmt), []).append(take)
        return self.snapshots[key]

    def trip_counter(self, loop: gast.stmt) -> str:
        if id(loop) not in self.trips:
            self.trips[id(loop)] = self.ctx.namer.fresh("_trips")
        return self.trips[id(loop)]

    def callee_saved_name(self, stmt: gast.stmt, compiled: Any) -> str:
        if id(stmt) not in self.callee_saved:
            self.callee_saved[id(stmt)] = self.ctx.namer.fresh(f"{compiled.name}_saved")
        return self.callee_saved[id(stmt)]

    def save_shape(self, stmt: gast.stmt, atom: str, before: bool = False) -> str:
        """The shape of ``atom`` as the forward saw it at ``stmt`` (saved right after it,
        or right before it)."""
        key = (id(stmt), atom, before)
        if key not in self.shape_of:
            name = self.ctx.namer.fresh(f"{atom}_shape")
            save = syntax.assign(name, syntax.call(f"{self.ctx.np}.shape", [syntax.name(atom)]))
            where = self.before if before else self.extra
            where.setdefault(id(stmt), []).append(syntax.located(save, stmt))
            self.shape_of[key] = name
        return self.shape_of[key]

    def only_for_the_adjoint(self) -> frozenset[str]:
        """The forward's statements that only serve the adjoint (shapes, copies): optimize
        drops those it no longer reads."""
        return frozenset(self.shape_of.values()) | frozenset(self.snapshots.values())

    def snapshot_of(self) -> dict[str, str]:
        """A copy taken for the adjoint -> the name it copies."""
        return {copy: name for (_, name), copy in self.snapshots.items()}
