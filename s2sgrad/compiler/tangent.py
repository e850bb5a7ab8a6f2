"""Pass 5 of forward mode, tangent: the function that returns a value and its tangent.

Before: an ``Analysis`` of an ANF function, differentiated with respect to ``wrt`` (the
        inputs that move), and its ``Aliasing``.
After:  ``Tangents``: the body of ``f_jvp``, which runs every primal statement as ``f``
        does (element writes and appends in place) and, after each statement whose target
        is active, the statement that computes the target's tangent ``<target>_dot``:

    copy      y = x                  y_dot = x_dot
    rule      y = np.tanh(x)         the forward-mode rule inlined with g = x_dot, one
                                     term per moving operand, summed: g * (1.0 - y * y)
              y = np.sum(x, axis=0)  a linear primitive applied to the tangents:
                                     y_dot = np.sum(x_dot, axis=0)
    call      y = f(x)               y, y_dot = f_jvp(x, x_dot=x_dot)
    setitem   y_1 = __setitem__(y[i], v)   y_1_dot = y_dot; y_1_dot[i] = v_dot
              (of np.add.at)                np.add.at(y_1_dot, i, v_dot)
    pack      t = (a, b)             t_dot = (a_dot, b_dot)
    item      a = t[k]               a_dot = t_dot[k]
    put       d_1 = __setitem__(d[k], v)   d_1_dot = d_dot; d_1_dot[k] = v_dot (a list or dict)
    append    xs_1 = __append__(xs, v)     xs_1_dot = xs_dot; xs_1_dot.append(v_dot)
    insert    xs_1 = __insert__(xs, i, v)  xs_1_dot = xs_dot; xs_1_dot.insert(i, v_dot)
    pop       xs_1 = __pop_item__(xs, i, item)   xs_1_dot = xs_dot; xs_1_dot.pop(i)

A value that does not move has no tangent name; where an active statement reads one, its
tangent is a zero of its kind (``0.0``, ``np.zeros_like(h)``, ``zeros_tree(xs)``), which is
also how a loop-carried value that starts constant gets its first tangent. ``if``, ``for``
and ``while`` keep their shape, with the tangent statements inside. Tangents alias exactly
as their values do, so element writes can be done in place on them too; where a rule's
tangent would be another tangent or a broadcast view while its value is new memory, it is
copied if the function writes elements of an active array at all.

The tangent function takes the primal parameters as ``f`` does, then the tangents of
``wrt`` as keyword-only parameters, and returns ``(out, out_dot)`` (or ``out_dot`` only).
Each statement class has one entry in ``statements``, each operation kind one in ``by_op``;
a missing one is an internal error. ``Dots`` (dots.py) gives each name's tangent and the
zeros, ``JvpRules`` (jvprules.py) the tangent of an operation of kind ``rule``.

With ``batched``, every tangent has a leading axis of ``batch`` directions (batching.py):
the function takes ``batch`` as a keyword-only parameter, and what it cannot do for rows
raises ``NotBatchable``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast

from .. import syntax
from . import batching, statements
from .aliasing import Aliasing
from .analyze import UPDATES, Analysis, Op
from .context import Context
from .dots import Dots
from .jvprules import JvpRules


@dataclass(frozen=True)
class Tangents:
    analysis: Analysis
    body: list[gast.stmt]  # ends with the return
    bindings: dict[str, Any]  # names the generated code reads -> the objects they name
    tangent_params: tuple[str, ...]  # the keyword-only parameters: the tangents of wrt
    result_aliases: frozenset[str]
    batch: str | None = None  # batched: the keyword-only parameter taking the batch size


def tangent(analysis: Analysis, aliases: Aliasing, returns: str = "both",
            batched: Callable[[Any], Any] | None = None) -> Tangents:
    """``returns``: "both" for ``(out, out_dot)``, "tangent" for ``out_dot`` alone.
    ``batched``: tangents with a leading batch axis; it gives a callee's compiled batched
    tangent function (returning both)."""
    return _Tangent(analysis, aliases, batched).run(returns)


class _Tangent:
    def __init__(self, analysis: Analysis, aliases: Aliasing,
                 batched: Callable[[Any], Any] | None = None):
        self.analysis = analysis
        self.ctx = Context(analysis, aliases)
        self.batched = batched
        self.batch = self.ctx.namer.fresh("batch") if batched else None
        self.dots = Dots(self.ctx, self.batch)  # each name's tangent, and the zeros
        self.rules = JvpRules(self.ctx, self.dots)  # the tangent of a rule's operation
        self.parsed = analysis.normalized.parsed
        self.active = analysis.active
        # names that hold a range(...) made once: the loops over them say so
        self.ranges = {op.target: stmt.value for stmt, op in analysis.ops.items()
                       if op.kind == "nondiff" and op.primitive is range
                       and isinstance(stmt, gast.Assign)}
        self.statements: dict[type, Callable[[gast.stmt], list[gast.stmt]]] = {
            gast.Assign: self.computing, gast.Expr: self.computing,
            gast.If: self.branch, gast.For: self.loop, gast.While: self.loop,
            gast.With: self.managed, syntax.Try: self.guarded, gast.Assert: self.kept, gast.Raise: self.kept, gast.Break: self.kept,
            gast.Continue: self.kept, gast.Pass: self.kept,
        }
        self.by_op: dict[str, Callable[[gast.stmt, Op], list[gast.stmt]]] = {
            "copy": self.copy, "rule": self.rules.rule, "call": self.call,
            "setitem": self.setitem, "pack": self.substituted, "item": self.substituted,
            "put": self.setitem, "append": self.append, "insert": self.insert,
            "pop": self.pop, "nondiff": self.primal, "effect": self.primal,
            "unknown": self.primal,
        }

    def run(self, returns: str) -> Tangents:
        params = [p for p in self.analysis.wrt]
        tangent_params = tuple(self.dots.dot(p) for p in params)
        body = self.block(self.analysis.body[:-1])
        result = self.analysis.result
        out_dot = syntax.name(self.dots.dot(result.id)) if self.dots.is_active(result) else \
            self.dots.zero(result)
        value = out_dot if returns == "tangent" else syntax.tuple_(
            [syntax.clone(result), out_dot])
        body.append(syntax.located(syntax.ret(value), self.analysis.body[-1]))
        body = self.without_dead(body)
        return Tangents(self.analysis, body, self.ctx.bindings.names, tangent_params,
                        self.ctx.aliases.result_aliases(result), self.batch)

    def without_dead(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """Drop what nothing reads: a value only the primal output needed, when the tangent
        alone is returned. Only assignments of pure operations go (rules, copies, tuples,
        items, and the tangent statements), never a call kept for its effect."""
        while True:
            for _ in statements.in_order(body, "tangent"):  # (a kind with no case raises)
                pass
            read = set().union(*map(syntax.names_read, body))

            def dead(stmt: gast.stmt, read: set[str] = read) -> bool:
                if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                        and stmt.targets[0].id not in read):
                    return False
                op = self.analysis.ops.get(stmt)
                return op is None or op.kind in ("rule", "copy", "pack", "item")

            pruned = self.prune(body, dead)
            if pruned == body:
                return body
            body = pruned

    def prune(self, stmts: list[gast.stmt], dead: Callable[[gast.stmt], bool]
              ) -> list[gast.stmt]:
        out = []
        for stmt in stmts:
            if dead(stmt):
                continue
            if isinstance(stmt, syntax.Try):  # what may raise in its body decides which
                new = syntax.replace(stmt, handler=self.prune(stmt.handler, dead))  # block
                stmt = stmt if new.handler == stmt.handler else new                  # runs
            elif statements.kind(stmt, "tangent").blocks:
                new = statements.map_blocks(stmt, lambda b: self.prune(b, dead), "tangent")
                stmt = stmt if all(getattr(new, f) == getattr(stmt, f) for f in
                                   statements.kind(stmt, "tangent").blocks) else new
            out.append(stmt)
        return out

    # --- statements ----------------------------------------------------------------------

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            statements.kind(stmt, "tangent")
            lower = self.statements.get(type(stmt))
            if lower is None:
                raise syntax.unexpected("tangent", stmt)
            out.extend(lower(stmt))
        return out

    def computing(self, stmt: gast.stmt) -> list[gast.stmt]:
        op = self.analysis.ops[stmt]
        lower = self.by_op.get(op.kind)
        if lower is None:
            raise syntax.unexpected("tangent", stmt, f"an operation of kind {op.kind!r}")
        if op.kind not in UPDATES and op.kind != "call" and (
                op.target is None or op.target not in self.active):
            return [stmt]
        try:
            lowered = lower(stmt, op)
        except batching.NotBatchable as exc:  # placed at the user's line
            if exc.located:
                raise
            raise batching.NotBatchable(str(self.parsed.error(str(exc), stmt)),
                                        located=True) from None
        return [syntax.located(s, stmt) for s in lowered]

    def branch(self, stmt: gast.If) -> list[gast.stmt]:
        return [syntax.replace(stmt, body=syntax.block(self.block(stmt.body)),
                               orelse=self.block(stmt.orelse))]

    def managed(self, stmt: gast.With) -> list[gast.stmt]:
        """A with block: its tangents are computed under the same manager."""
        return [syntax.replace(stmt, body=syntax.block(self.block(stmt.body)))]

    def guarded(self, stmt: syntax.Try) -> list[gast.stmt]:
        """A try: the tangents of each block computed in it."""
        return [syntax.replace(stmt, body=syntax.block(self.block(stmt.body)),
                               handler=syntax.block(self.block(stmt.handler)))]

    def loop(self, stmt: gast.For | gast.While) -> list[gast.stmt]:
        made = self.ranges.get(stmt.iter.id) if isinstance(stmt, gast.For) and isinstance(
            stmt.iter, gast.Name) else None
        counter = stmt.target.id if made is not None and isinstance(
            stmt.target, gast.Name) else None
        if counter is not None:  # an int in the body (None, if ever, only after the loop)
            self.dots.counters.append(counter)
        body = syntax.block(self.block(stmt.body))
        if counter is not None:
            self.dots.counters.pop()
        if made is not None:  # for t in range(n): a loop over indices when read again
            return [syntax.replace(stmt, iter=syntax.clone(made), body=body)]
        return [syntax.replace(stmt, body=body)]

    def kept(self, stmt: gast.stmt) -> list[gast.stmt]:
        return [stmt]

    # --- operations ----------------------------------------------------------------------

    def primal(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """No derivative; an active name it assigns (a constant on one side of a branch)
        has a zero tangent there."""
        return [stmt, self.dots.assign_dot(op.target, self.dots.zero(syntax.name(op.target)))]

    def copy(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        return [stmt, self.dots.assign_dot(op.target, self.dots.tangent_of(op.bindings["x"]))]

    def substituted(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """A linear operation: the same expression on the tangents (a tuple of tangents, an
        item of the container's tangent; a named tuple's field ``res.Q`` is its item, and
        the tangent a plain tuple: ``res_dot[0]``)."""
        if op.kind == "item" and isinstance(stmt.value, gast.Attribute):
            return [stmt, self.dots.assign_dot(op.target, syntax.subscript(
                self.dots.tangent_of(op.bindings["c"]), syntax.clone(op.bindings["key"])))]
        diff = list(op.bindings.values()) if op.kind == "pack" else [op.bindings.get("c")]
        return [stmt, self.dots.assign_dot(op.target, self.dots.on_tangents(stmt.value, diff))]

    def call(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """``y, y_dot = f_jvp(x, x_dot=x_dot)``: the callee's tangent function."""
        inactive = op.target is None or op.target not in self.active
        if inactive and not op.compiled_only:
            return [stmt]
        compiled = op.callee
        if self.batch:
            compiled = self.batched(compiled)
        fname = self.ctx.bindings.claim(f"{compiled.name}_jvp", compiled.jvp)
        call = stmt.value
        args = [syntax.clone(a) for a in op.callee_args]
        keywords = [(k.arg, syntax.clone(k.value)) for k in getattr(call, "keywords", ())]
        for p, kw in zip(compiled.wrt, compiled.tangent_params, strict=True):
            atom = op.bindings[p]
            keywords.append((kw, self.dots.tangent_of(atom) if not isinstance(atom, tuple) else
                             syntax.tuple_([self.dots.tangent_of(a) for a in atom])))
        if self.batch:
            keywords.append((compiled.batch, syntax.name(self.batch)))
        call = syntax.call(syntax.name(fname), args, keywords)
        if inactive:  # (runs only as compiled: its tangent is unused)
            return [syntax.unpack([op.target or "_", "_"], call)]
        return [syntax.unpack([op.target, self.dots.dot(op.target)], call)]

    def setitem(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """y[i] = v; y_1 = y, and the same on the tangents (np.add.at(y, i, v) for the
        element write of np.add.at: its tangent adds v's at the same positions)."""
        region = stmt.value.args[0]
        ufunc = op.bindings["ufunc"].value if "ufunc" in op.bindings else None

        def write(base: gast.expr, value: gast.expr) -> gast.stmt:
            if ufunc is not None:
                return self.scatter(ufunc, base, syntax.clone(region.slice), value)
            return syntax.assign(syntax.subscript(base, syntax.clone(region.slice), store=True),
                                 value)

        def write_rows(base: gast.expr, value: gast.expr) -> gast.stmt:
            rows = batching.write_rows(self.dots.site(op), base, region.slice, value,
                                       stmt.value.args[1])
            if ufunc is None:
                return rows
            target = rows.targets[0]  # y_dot[:, i] = v_dot: added at each position
            index = syntax.index_value(target.slice, self.ctx.bindings.claim("slice", slice))
            return self.scatter(ufunc, target.value, index, rows.value)

        return self.in_place(op, region.value, stmt.value.args[1], write,
                             write_rows if self.batch else write)

    def scatter(self, ufunc: str, base: gast.expr, index: gast.expr,
                value: gast.expr) -> gast.stmt:
        """np.add.at(base, index, value)"""
        return syntax.expr_stmt(syntax.call(f"{self.ctx.np}.{ufunc}.at", [base, index, value]))

    def append(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """xs.append(v); xs_1 = xs, and the same on the tangents."""

        def grow(base: gast.expr, value: gast.expr) -> gast.stmt:
            return syntax.expr_stmt(syntax.call(syntax.attribute(base, "append"), [value]))

        return self.in_place(op, *stmt.value.args, grow, grow)

    def insert(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """xs.insert(i, v); xs_1 = xs, and the same on the tangents."""
        base, index, value = stmt.value.args

        def insert(base: gast.expr, value: gast.expr) -> gast.stmt:
            return syntax.expr_stmt(syntax.call(syntax.attribute(base, "insert"), [
                syntax.clone(index), value]))

        return self.in_place(op, base, value, insert, insert)

    def pop(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """xs.pop(i); xs_1 = xs, and the same on the tangents (the item was read before)."""
        base, key, item = stmt.value.args

        def pop(base: gast.expr, _: gast.expr) -> gast.stmt:
            return syntax.expr_stmt(syntax.call(syntax.attribute(base, "pop"), [
                syntax.clone(key)]))

        return self.in_place(op, base, item, pop, pop)

    def in_place(self, op: Op, base: gast.expr, value: gast.expr,
                 update: Callable[[gast.expr, gast.expr], gast.stmt],
                 update_dot: Callable[[gast.expr, gast.expr], gast.stmt]) -> list[gast.stmt]:
        """An update in place (an element write, an append) done on the name the user wrote,
        then the new version names it (the old one is never read again): read back as code
        (at higher order) it is the user's own update. Its tangent is updated the same way;
        a constant base starts moving here, from a zero tangent shaped like the base before
        the update (an append or an insert changes its length)."""
        out = [update(syntax.clone(base), syntax.clone(value)),
               syntax.assign(op.target, syntax.clone(base))]
        if op.target not in self.active:
            return out
        dot = self.dots.dot(op.target)
        if self.dots.is_active(base):
            updated = syntax.name(self.dots.dot(base.id))
        else:
            out.insert(0, syntax.assign(dot, self.dots.tangent_of(base)))
            updated = syntax.name(dot)
        out.append(update_dot(updated, self.dots.tangent_of(value)))
        if self.dots.is_active(base):
            out.append(syntax.assign(dot, syntax.clone(updated)))
        return out
