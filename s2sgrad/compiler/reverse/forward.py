"""The forward that saves: the primal statements, lowered, with what the adjoint reads.

Takes the normalized body (``block``) after the adjoint was built: building it asks for the
saves (``snapshot``, ``save_shape``, ``trip_counter``, ``callee_saved_name``, ``marker``).
Gives the forward body:

    - each active loop counts its trips (``_trips = 0`` before it, ``_trips = _trips + 1``
      in it), and each active block (a branch, a loop body) ends with a ``__push__(k)``
      marker;
    - element writes, appends, inserts and pops are done in place, as NumPy and Python
      do them (``y_1 = y; y_1[i] = v``), and so are the in-place updates aliasing found
      (``x_1 = x; x_1 += y``);
    - a differentiated callee's call becomes a call of its forward, which also returns what
      its adjoint needs (``h, f_saved = f_forward(x)``);
    - a value that a later in-place update may overwrite is copied where the adjoint
      reads it (``h_copy = np.copy(h)``), and an operand's shape saved where a contribution
      is reduced to it (``x_shape = np.shape(x)``).

    y_1 = __setitem__(y[0], _t1)    ->  y_1 = y
                                        y_1[0] = _t1
    y_1 = __setitem__(y[i], v, 'add')  ->  y_1 = y
                                        np.add.at(y_1, i, v)

Each statement class has one entry in ``lowering``, each operation kind one in ``by_op``; a
missing one is an internal error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

from ... import syntax
from ...runtime.containers import copy_structure, item_or_absent
from .. import statements
from ..analyze import Op, is_container
from ..context import PUSH, Context


class Forward:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.before: dict[int, list[gast.stmt]] = {}  # forward statements before statement i
        self.extra: dict[int, list[gast.stmt]] = {}  # forward statements after statement i
        self.shape_of: dict[tuple, str] = {}
        self.snapshots: dict[tuple, str] = {}
        self.structures: dict[tuple, str] = {}  # a container -> the copy of its structure
        self.items_before: dict[tuple, str] = {}  # (a put, its container) -> the old item
        self.after: dict[int, list[gast.stmt]] = {}  # forward statements after loop i
        self.callee_saved: dict[int, str] = {}
        self.trips: dict[int, str] = {}  # loop -> its trip counter
        self.markers: dict[tuple, int] = {}  # (statement, block field) -> its marker
        # by class (a compound statement that computes no active value keeps its blocks,
        # lowered, whatever its class)
        self.lowering: dict[type, Callable[[gast.stmt], list[gast.stmt]]] = {
            gast.Assign: self.computing, gast.Expr: self.computing,
            gast.If: self.branch, gast.For: self.loop, gast.While: self.loop,
            gast.With: self.managed, syntax.Try: self.guarded, gast.Assert: self.kept, gast.Raise: self.kept, gast.Break: self.kept,
            gast.Pass: self.kept,
        }
        # a computing statement, by the kind of its operation
        self.by_op: dict[str, Callable[[gast.stmt, Op], list[gast.stmt]]] = {
            "setitem": self.element_write, "put": self.element_write, "append": self.append,
            "insert": self.insert, "pop": self.pop, "call": self.callee,
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
                out.extend(self.after.get(id(stmt), []))
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

    def managed(self, stmt: gast.With) -> list[gast.stmt]:
        """A with block runs once, where it stands: what its reverse reads is saved with
        the values of the block around it (no marker of its own)."""
        return [syntax.replace(stmt, body=syntax.block(self.block(stmt.body)))]

    def guarded(self, stmt: syntax.Try) -> list[gast.stmt]:
        """A try: each block pushes what its reverse reads at its end, so a body that
        raised partway pushes nothing (its flag, False, sends the adjoint to the handler's
        reverse)."""
        body = self.block(stmt.body, self.marker(stmt, "body"))
        handler = self.block(stmt.handler, self.marker(stmt, "handler"))
        return [syntax.replace(stmt, body=body, handler=handler)]

    def loop(self, stmt: gast.For | gast.While) -> list[gast.stmt]:
        trips = self.trip_counter(stmt)
        start = syntax.located(syntax.assign(trips, syntax.const(0)), stmt)
        body = self.block(stmt.body, self.marker(stmt, "body"))
        body.insert(len(body) - 1, syntax.located(syntax.assign(trips, syntax.binop(
            syntax.name(trips), "Add", syntax.const(1))), stmt))
        return [start, syntax.replace(stmt, body=body)] + self.after.get(id(stmt), [])

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
        """y_1 = y; y_1[idx] = v: in place, as NumPy does it (np.add.at(y_1, idx, v) for
        the element write of np.add.at)."""
        region = stmt.value.args[0]
        value = syntax.clone(stmt.value.args[1])
        if "ufunc" in op.bindings:
            ufunc = op.bindings["ufunc"].value
            write = syntax.expr_stmt(syntax.call(f"{self.ctx.np}.{ufunc}.at", [
                syntax.name(op.target), syntax.clone(region.slice), value]))
        else:
            write = syntax.assign(syntax.subscript(syntax.name(op.target),
                                                   syntax.clone(region.slice), store=True), value)
        return [syntax.located(syntax.assign(op.target, syntax.clone(region.value)), stmt),
                syntax.located(write, stmt)]

    def append(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """xs_1 = xs; xs_1.append(v): in place, as Python does it."""
        base, value = stmt.value.args
        return self.method_in_place(stmt, op, base, "append", [value])

    def insert(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """xs_1 = xs; xs_1.insert(i, v): in place, as Python does it."""
        base, index, value = stmt.value.args
        return self.method_in_place(stmt, op, base, "insert", [index, value])

    def pop(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """xs_1 = xs; xs_1.pop(i): in place (the item was read before, as ``item``)."""
        base, key, _ = stmt.value.args
        return self.method_in_place(stmt, op, base, "pop", [key])

    def method_in_place(self, stmt: gast.stmt, op: Op, base: gast.expr, method: str,
                        args: list[gast.expr]) -> list[gast.stmt]:
        return [syntax.located(syntax.assign(op.target, syntax.clone(base)), stmt),
                syntax.located(syntax.expr_stmt(syntax.call(syntax.attribute(
                    syntax.name(op.target), method), [syntax.clone(a) for a in args])), stmt)]

    def callee(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """The callee's forward, which also returns what its adjoint needs (for an active
        result; otherwise the call itself)."""
        inactive = op.target not in self.ctx.analysis.active
        if (inactive and not op.compiled_only) or self.ctx.aliases.is_in_place(stmt) \
                or op.recompute:  # a checkpointed callee: its forward runs in the adjoint
            return self.computed(stmt, op)
        compiled = op.callee
        fname = self.ctx.bindings.claim(f"{compiled.name}_forward", compiled.forward)
        # (a call that runs only as compiled, its result inactive: what it saves is unused)
        saved = "_" if inactive else self.callee_saved_name(stmt, compiled)
        call = stmt.value
        # op.callee_args: the receiver first for a method call (model.apply(x))
        args = [self.copy_if_at_risk(stmt, syntax.clone(a)) for a in op.callee_args]
        keywords = [(k.arg, self.copy_if_at_risk(stmt, syntax.clone(k.value)))
                    for k in getattr(call, "keywords", ())]  # a ``+`` or ``[]`` has none
        call = syntax.call(syntax.name(fname), args, keywords)
        new = syntax.unpack([op.target, saved], call) if op.target is not None else \
            syntax.expr_stmt(call)
        return [syntax.located(new, stmt)]

    def copy_if_at_risk(self, stmt: gast.stmt, atom: gast.expr) -> gast.expr:
        """A callee's forward may keep its argument for its adjoint: pass it a copy when a
        later element assignment may change it."""
        if isinstance(atom, gast.Name) and self.ctx.aliases.at_risk(atom.id, stmt):
            return syntax.call(self.copier(atom.id), [atom])
        return atom

    def copier(self, name: str) -> gast.expr:
        """What copies ``name``'s value: its own container type (``list(xs)``), else
        ``np.copy``."""
        value = self.ctx.analysis.values.get(name)
        if is_container(value):
            return syntax.name(value.type.__name__)
        return syntax.dotted_expr(f"{self.ctx.np}.copy")

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
            take = syntax.located(syntax.assign(copy, syntax.call(self.copier(name), [
                syntax.name(name)])), stmt)
            # a value the statement itself overwrites (x *= y reads the old x) is copied
            # before it; anything else right after it
            when = self.before if self.ctx.aliases.overwrites(stmt, name) else self.extra
            when.setdefault(id(stmt), []).append(take)
        return self.snapshots[key]

    def structure(self, name: str, where: gast.AST | None = None) -> str:
        """The name under which the adjoint of ``where`` reads the structure of the
        container ``name`` (its items, and theirs, as this version of it held them):
        ``name`` itself, or a copy of its containers, when an append, a pop, an insert or a
        new key that runs later may change the one object it names. Zeros of its
        cotangent are shaped like this, never like the container as it ends.

        The copy is taken wherever ``name`` is assigned; where ``where`` is outside a loop
        that assigns it (the adjoint reads it before reversing that loop, or after the loop
        in the forward's order), the value it needs is the one the loop ends with, copied
        once after the loop."""
        body = self.ctx.analysis.body
        defs = [s for s in statements.in_order(body, "reverse")
                if isinstance(s, gast.Assign) and name in syntax.names_written(s.targets[0])]
        loop = _outermost_loop(body, {id(s) for s in defs}, where)
        key = (name, id(loop) if loop is not None else None)
        if key in self.structures:
            return self.structures[key]
        aliases = self.ctx.aliases
        if not (aliases.changed_after(name, loop) if loop is not None else any(
                aliases.at_risk(name, s) for s in defs)):
            self.structures[key] = name
            return name
        copy = self.structures[key] = self.ctx.namer.fresh(f"{name}_as_was")
        helper = syntax.name(self.ctx.bindings.claim("copy_structure", copy_structure))
        for stmt in [loop] if loop is not None else defs:
            take = syntax.assign(copy, syntax.call(syntax.clone(helper), [syntax.name(name)]))
            where_to = self.after if loop is not None else self.extra
            where_to.setdefault(id(stmt), []).append(syntax.located(take, stmt))
        return copy

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

    def item_before(self, stmt: gast.stmt, base: str, key: gast.expr) -> str:
        """The item ``base[key]`` that ``stmt`` replaces, saved right before it (for a dict
        without the key, ``ABSENT``): the adjoint gives the old version's cotangent zeros
        of the old item's shape there."""
        key_of = (id(stmt), base)
        if key_of not in self.items_before:
            name = self.ctx.namer.fresh(f"{base}_item_was")
            helper = self.ctx.bindings.claim("item_or_absent", item_or_absent)
            save = syntax.assign(name, syntax.call(syntax.name(helper), [
                syntax.name(base), syntax.clone(key)]))
            self.before.setdefault(id(stmt), []).append(syntax.located(save, stmt))
            self.items_before[key_of] = name
        return self.items_before[key_of]

    def only_for_the_adjoint(self) -> frozenset[str]:
        """The forward's statements that only serve the adjoint (shapes, copies): optimize
        drops those it no longer reads."""
        return frozenset(self.shape_of.values()) | frozenset(self.snapshots.values()) | \
            frozenset(self.structures.values()) | frozenset(self.items_before.values())

    def snapshot_of(self) -> dict[str, str]:
        """A copy taken for the adjoint -> the name it copies."""
        copies = {copy: name for (_, name), copy in self.snapshots.items()}
        copies.update({copy: name for (name, _), copy in self.structures.items()
                       if copy != name})
        return copies


def _outermost_loop(stmts: list[gast.stmt], defs: set[int], where: gast.AST | None
                    ) -> gast.stmt | None:
    """The outermost loop among ``stmts`` that holds a statement of ``defs`` but not
    ``where`` (``where`` may be the loop itself), or None."""
    for stmt in stmts:
        kind = statements.kind(stmt, "reverse")
        if not kind.blocks:
            continue
        inside = {id(s) for s in statements.in_order([stmt], "reverse")}
        if kind.loop and inside & defs and (where is stmt or id(where) not in inside):
            return stmt
        for field in kind.blocks:
            found = _outermost_loop(getattr(stmt, field), defs, where)
            if found is not None:
                return found
    return None
