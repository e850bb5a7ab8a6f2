"""Pass 5, reverse: the forward function that saves, and the adjoint, from the analysis.

Before: an ``Analysis`` of an ANF function.
After:  ``Reversed``: the forward body and the adjoint body.
        - forward: the primal statements; calls to differentiated callees replaced by their
          forward functions; for each active loop a trip counter; at the end of each active
          block (a branch, a loop body) a ``__push__(k)`` marker.
        - adjoint: for each active statement in reverse order, the derivative rule inlined
          as a template; contributions reduced to their operand's shape where the shapes can
          differ; the first contribution to a cotangent assigned, later ones added. An
          ``if`` becomes an ``if`` on the same (saved) condition, a loop a loop over its trip
          count; each reverse block starts with a ``__pop__(k)`` marker. Cotangents of values
          from outside a block that receive contributions inside it start at zero before it.
        ``optimize`` prunes the adjoint, then turns the markers into pushes and pops of exactly
        the values each reverse block reads (the top-level ones become the saved tuple).

    h = np.tanh(_t1)    ->  forward: h = np.tanh(_t1)
                            adjoint: _t1_bar = h_bar * (1.0 - h * h)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from . import shapes, syntax
from .analyze import Analysis, Op, is_container, returns_new_array
from .naming import Namer
from .normalize import _VIEWS
from .parse import MISSING
from .runtime.containers import add_item, tree_add, zeros_tree
from .runtime.indexing import last_writes
from .runtime.unbroadcast import unbroadcast
from .templates import Facts, inline, template_of


@dataclass(frozen=True)
class Reversed:
    analysis: Analysis
    forward: list[gast.stmt]  # without the final return
    adjoint: list[gast.stmt]  # ends with the return of the cotangents
    bindings: dict[str, Any]  # names the generated code reads -> the objects they name
    result: gast.expr  # what the forward returns as its output
    namer: Namer
    shape_saves: frozenset[str]  # forward statements that only serve an unbroadcast
    seed: str  # the adjoint's parameter: the cotangent of the output
    saved: str  # the adjoint's parameter: what the forward saved
    bar_of: dict[str, str]  # primal name -> the name of its cotangent
    result_aliases: frozenset[str]  # parameters whose memory the result may share
    snapshot_of: dict[str, str]  # a copy taken for the adjoint -> the name it copies


PUSH, POP = "__push__", "__pop__"  # markers that optimize turns into stack operations


class Bindings:
    """Names the generated code uses for objects outside it (``np``, rules, callees)."""

    def __init__(self, analysis: Analysis, namer: Namer):
        self.parsed = analysis.normalized.parsed
        self.namer = namer
        self.names: dict[str, Any] = {}

    def claim(self, preferred: str, obj: Any) -> str:
        if preferred in self.names:
            if self.names[preferred] is obj:
                return preferred
        elif preferred not in self.parsed.local_names and preferred not in self.namer.generated:
            seen = self.parsed.lookup(preferred)
            if seen is MISSING or seen is obj:
                self.names[self.namer.reserve(preferred)] = obj
                return preferred
        for name, bound in self.names.items():
            if bound is obj and name.startswith(preferred):
                return name
        name = self.namer.fresh(preferred)
        self.names[name] = obj
        return name


def reverse(analysis: Analysis) -> Reversed:
    return _Reverser(analysis).run()


class _Reverser:
    def __init__(self, analysis: Analysis):
        self.a = analysis
        self.namer = analysis.normalized.namer
        self.bindings = Bindings(analysis, self.namer)
        self.np = self.bindings.claim("np", np)
        self.bar_of: dict[str, str] = {}  # primal name -> name of its cotangent
        self.defined: set[str] = set()  # primal names whose cotangent has a value
        self.extra: dict[int, list[gast.stmt]] = {}  # forward statements after statement i
        self.shape_of: dict[tuple, str] = {}
        self.callee_saved: dict[int, str] = {}
        self.trips: dict[int, str] = {}  # loop -> its trip counter
        self.snapshots: dict[tuple, str] = {}
        self.before: dict[int, list[gast.stmt]] = {}  # forward statements before statement i
        self.writes = _Writes(analysis)
        self.block_ids: dict[int, int] = {}
        self.adjoint: list[gast.stmt] = []
        self.facts = Facts(ndim=self._ndim, is_none=self._is_none,
                           is_numpy=lambda name: self.bindings.names.get(name) is np)
        self.saved = self.namer.fresh("saved")
        self.seed = self.namer.fresh("out_bar")

    def _ndim(self, name: str) -> int | None:
        """Ranks of primal names, and of cotangents (a cotangent has its primal's rank)."""
        for primal, bar in self.bar_of.items():
            if bar == name:
                return self.a.ndim(primal)
        return self.a.ndim(name)

    def _is_none(self, name: str) -> bool | None:
        """True or False where certain; None leaves an ``is None`` test to run time."""
        value = self.a.values.get(name)
        if value is None or value.none:
            return None
        if value.kind == "none":
            return True
        if value.kind == "scalar" or is_container(value) or (
                value.kind == "array" and value.dims is not None):
            return False
        return None  # a value of unknown kind (read from an object, returned by a call)

    def run(self) -> Reversed:
        body = self.a.body
        self.blocks = 0
        result = self.a.result
        if isinstance(result, gast.Name) and result.id in self.a.active:
            self.bar_of[result.id] = self.seed
            self.defined.add(result.id)
        self.adjoint = self.adjoint_block(body[:-1], None)
        self.adjoint.append(self.returned_gradients())
        forward = self.forward_block(body[:-1])  # after the adjoint: it asks for saves
        return Reversed(self.a, forward, self.adjoint, self.bindings.names, result, self.namer,
                        frozenset(self.shape_of.values()) | frozenset(self.snapshots.values()),
                        self.seed, self.saved,
                        dict(self.bar_of), self.writes.result_aliases(result),
                        {copy: name for (_, name), copy in self.snapshots.items()})

    # --- forward -------------------------------------------------------------------------

    def is_active(self, stmts: list[gast.stmt]) -> bool:
        """Does the block compute an active value (so that it has an adjoint)?"""
        for stmt in stmts:
            for node in gast.walk(stmt):
                if isinstance(node, gast.Assign) and any(
                        t in self.a.active for t in syntax.names_written(node.targets[0])):
                    return True
        return False

    def block_id(self, stmts: list[gast.stmt]) -> int:
        key = id(stmts[0]) if stmts else 0
        if key not in self.block_ids:
            self.blocks += 1
            self.block_ids[key] = self.blocks
        return self.block_ids[key]

    def forward_block(self, stmts: list[gast.stmt], marker: int | None = None
                      ) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, (gast.Assign, gast.Expr)):
                lowered = self.forward_statement(stmt)
                out.extend(self.before.get(id(stmt), []))
                out.extend(lowered if isinstance(lowered, list) else [lowered])
                out.extend(self.extra.get(id(stmt), []))
            elif isinstance(stmt, gast.If) and self.is_active([stmt]):
                body = self.forward_block(stmt.body, self.block_id(stmt.body or [stmt]))
                orelse = self.forward_block(stmt.orelse, self.block_id(stmt.orelse or [stmt.test]))
                out.append(syntax.located(syntax.if_(stmt.test, body, orelse), stmt))
            elif isinstance(stmt, (gast.If, gast.For, gast.While)) and not self.is_active(
                    [stmt]):  # no adjoint, but element writes and appends still lowered
                lowered = syntax.clone(stmt)
                lowered.body = self.forward_block(stmt.body) or [gast.Pass()]
                lowered.orelse = self.forward_block(stmt.orelse)
                out.append(lowered)
            elif isinstance(stmt, (gast.For, gast.While)):  # active: counts its trips
                trips = self.trip_counter(stmt)
                out.append(syntax.located(syntax.assign(trips, syntax.const(0)), stmt))
                body = self.forward_block(stmt.body, self.block_id(stmt.body))
                body.insert(len(body) - 1, syntax.located(syntax.assign(trips, syntax.binop(
                    syntax.name(trips), "Add", syntax.const(1))), stmt))
                loop = syntax.clone(stmt)
                loop.body = body
                out.append(loop)
            elif isinstance(stmt, (gast.Assert, gast.Raise, gast.Break, gast.Pass)):
                out.append(stmt)
            else:
                raise syntax.unexpected("reverse", stmt, "the forward")
        if marker is not None:
            out.append(syntax.expr_stmt(syntax.call(syntax.name(PUSH), [syntax.const(marker)])))
        return out

    def forward_statement(self, stmt: gast.stmt) -> gast.stmt | list[gast.stmt]:
        op = self.a.ops[id(stmt)]
        if op.kind == "setitem":  # y_1 = y; y_1[idx] = v: in place, as NumPy does it
            region = stmt.value.args[0]
            store = gast.Subscript(value=syntax.name(op.target), slice=syntax.clone(
                region.slice), ctx=gast.Store())
            return [syntax.located(syntax.assign(op.target, syntax.clone(region.value)), stmt),
                    syntax.located(syntax.assign(store, syntax.clone(stmt.value.args[1])),
                                   stmt)]
        if op.kind == "append":  # xs_1 = xs; xs_1.append(v): in place, as Python does it
            base, value = stmt.value.args
            return [syntax.located(syntax.assign(op.target, syntax.clone(base)), stmt),
                    syntax.located(syntax.expr_stmt(syntax.call(syntax.attribute(
                        syntax.name(op.target), "append"), [syntax.clone(value)])), stmt)]
        if self.writes.is_in_place(stmt):  # x += y on an array: x_1 = x; x_1 += y
            value = stmt.value
            update = gast.AugAssign(target=syntax.name(op.target, store=True), op=value.op,
                                    value=syntax.clone(value.right))
            return [syntax.located(syntax.assign(op.target, syntax.clone(value.left)), stmt),
                    syntax.located(update, stmt)]
        if op.kind != "call" or op.target not in self.a.active:
            return stmt
        compiled = op.callee
        fname = self.bindings.claim(f"{compiled.name}_forward", compiled.forward)
        saved = self.callee_saved_name(stmt, compiled)
        call = stmt.value
        # op.callee_args: the receiver first for a method call (model.apply(x))
        args = [self.copy_if_at_risk(stmt, syntax.clone(a)) for a in op.callee_args]
        new = syntax.unpack([op.target, saved], syntax.call(syntax.name(fname), args))
        new.value.keywords = [gast.keyword(arg=k.arg, value=self.copy_if_at_risk(stmt, k.value))
                              for k in getattr(call, "keywords", ())]  # a ``+`` or ``[]`` has none
        return syntax.located(new, stmt)

    def copy_if_at_risk(self, stmt: gast.stmt, atom: gast.expr) -> gast.expr:
        """A callee's forward may keep its argument for its adjoint: pass it a copy when a
        later element assignment may change it."""
        if isinstance(atom, gast.Name) and self.writes.at_risk(atom.id, stmt):
            return syntax.call(f"{self.np}.copy", [atom])
        return atom

    # --- values a later element assignment would overwrite ----------------------------------

    def snapshot_atom(self, stmt: gast.stmt, atom: Any) -> Any:
        if isinstance(atom, gast.Name):
            return syntax.name(self.snapshot(stmt, atom.id))
        return atom

    def snapshot(self, stmt: gast.stmt, name: str) -> str:
        """The name under which the adjoint of ``stmt`` reads ``name``: ``name`` itself, or a
        copy taken right after ``stmt`` when an element assignment that runs later (further
        on, or in a later iteration) may change the array ``name`` shares memory with."""
        if not self.writes.at_risk(name, stmt):
            return name
        key = (id(stmt), name)
        if key not in self.snapshots:
            copy = self.namer.fresh(f"{name}_copy")
            self.snapshots[key] = copy
            value = self.a.values.get(name)
            copier = syntax.name(value.type.__name__) if is_container(value) else \
                syntax.dotted_expr(f"{self.np}.copy")
            take = syntax.located(syntax.assign(copy, syntax.call(copier, [syntax.name(name)])),
                                  stmt)
            # a value the statement itself overwrites (x *= y reads the old x) is copied
            # before it; anything else right after it
            when = self.before if self.writes.overwrites(stmt, name) else self.extra
            when.setdefault(id(stmt), []).append(take)
        return self.snapshots[key]

    def trip_counter(self, loop: gast.stmt) -> str:
        if id(loop) not in self.trips:
            self.trips[id(loop)] = self.namer.fresh("_trips")
        return self.trips[id(loop)]

    def callee_saved_name(self, stmt: gast.stmt, compiled: Any) -> str:
        if id(stmt) not in self.callee_saved:
            self.callee_saved[id(stmt)] = self.namer.fresh(f"{compiled.name}_saved")
        return self.callee_saved[id(stmt)]

    def save_shape(self, stmt: gast.stmt, atom: str) -> str:
        """The shape of ``atom`` as the forward saw it at ``stmt`` (saved right after it)."""
        key = (id(stmt), atom)
        if key not in self.shape_of:
            name = self.namer.fresh(f"{atom}_shape")
            save = syntax.assign(name, syntax.call(f"{self.np}.shape", [syntax.name(atom)]))
            self.extra.setdefault(id(stmt), []).append(syntax.located(save, stmt))
            self.shape_of[key] = name
        return self.shape_of[key]

    # --- adjoint -------------------------------------------------------------------------

    def bar(self, name: str) -> str:
        if name not in self.bar_of:
            self.bar_of[name] = self.namer.fresh(f"{name}_bar")
        return self.bar_of[name]

    def emit(self, stmt: gast.stmt) -> None:
        self.adjoint.append(syntax.located(stmt, self.current))

    def accumulate(self, atom: Any, contribution: gast.expr) -> None:
        if not isinstance(atom, gast.Name) or atom.id not in self.a.active:
            return
        target = self.bar(atom.id)
        if atom.id in self.defined and is_container(self.a.values.get(atom.id)):
            helper = self.bindings.claim("tree_add", tree_add)
            contribution = syntax.call(syntax.name(helper), [syntax.name(target), contribution])
        elif atom.id in self.defined:
            contribution = syntax.binop(syntax.name(target), "Add", contribution)
        self.defined.add(atom.id)
        self.emit(syntax.assign(target, contribution))

    def zero(self, name: str, origin: gast.AST) -> None:
        """Start the cotangent of ``name`` at zero (before a block that may add to it)."""
        value = self.a.values.get(name)
        if is_container(value):
            zero = syntax.call(syntax.name(self.bindings.claim("zeros_tree", zeros_tree)),
                               [syntax.name(name)])
        elif value is not None and value.kind == "scalar":
            zero = syntax.const(0.0)
        else:
            zero = syntax.call(f"{self.np}.zeros_like", [syntax.name(name)])
        self.adjoint.append(syntax.located(syntax.assign(self.bar(name), zero), origin))
        self.defined.add(name)

    def adjoint_block(self, stmts: list[gast.stmt], marker: int | None) -> list[gast.stmt]:
        outer, self.adjoint = self.adjoint, []
        if marker is not None:
            self.adjoint.append(syntax.expr_stmt(syntax.call(syntax.name(POP),
                                                             [syntax.const(marker)])))
        for stmt in reversed(stmts):
            self.current = stmt
            if isinstance(stmt, gast.Assign):
                self.adjoint_of(stmt, self.a.ops[id(stmt)])
                for target in syntax.names_written(stmt.targets[0]):
                    self.defined.discard(target)  # this value's cotangent is now used up
            elif isinstance(stmt, gast.If) and self.is_active([stmt]):
                self.if_adjoint(stmt)
            elif isinstance(stmt, (gast.For, gast.While)) and self.is_active([stmt]):
                self.loop_adjoint(stmt)
            elif isinstance(stmt, gast.Expr):  # a call kept for its effect: no value, or
                op = self.a.ops.get(id(stmt))
                if op is not None and op.target is not None and op.target in self.a.active:
                    raise syntax.unexpected("reverse", stmt, "an effect with an active value")
            elif not isinstance(stmt, (gast.If, gast.For, gast.While, gast.Assert, gast.Raise,
                                       gast.Break, gast.Pass)):  # inactive, or no adjoint
                raise syntax.unexpected("reverse", stmt, "the adjoint")
        block, self.adjoint = self.adjoint, outer
        return block

    def contributed(self, nodes: Any) -> list[str]:
        """Active names that the active assignments among ``nodes`` add contributions to."""
        names = []
        for node in nodes:
            op = self.a.ops.get(id(node)) if isinstance(node, gast.Assign) else None
            if op is None or op.target not in self.a.active:
                continue
            for p in ["x"] if op.kind == "copy" else op.diff_params:
                atom = op.bindings.get(p)
                names += [a.id for a in (atom if isinstance(atom, tuple) else (atom,))
                          if isinstance(a, gast.Name) and a.id in self.a.active]
        return names

    def incoming(self, stmt: gast.stmt) -> list[str]:
        """Active names from outside ``stmt``'s blocks that statements inside add to (for a
        loop, also its own loop versions, which a later iteration adds to)."""
        inside = _assigned(gast.walk(stmt))
        loop = isinstance(stmt, (gast.For, gast.While))
        return sorted({n for n in self.contributed(gast.walk(stmt)) if loop or n not in inside})

    def incoming_block(self, stmts: list[gast.stmt]) -> list[str]:
        """Outer names that statements directly in ``stmts`` (not in nested blocks) add to."""
        inside = _assigned(gast.walk(syntax.module(stmts)))
        return [n for n in self.contributed(stmts) if n not in inside]

    def if_adjoint(self, stmt: gast.If) -> None:
        # An outer value that both branches add to is first written in each; one that only
        # one branch adds to starts at zero before the if.
        both = set(self.incoming_block(stmt.body)) & set(self.incoming_block(stmt.orelse))
        for name in self.incoming(stmt):
            if name not in self.defined and name not in both:
                self.zero(name, stmt)
        before = set(self.defined)
        body = self.adjoint_block(stmt.body, self.block_id(stmt.body or [stmt]))
        after_body, self.defined = self.defined, set(before)
        orelse = self.adjoint_block(stmt.orelse, self.block_id(stmt.orelse or [stmt.test]))
        self.defined &= after_body
        self.current = stmt
        self.emit(syntax.if_(stmt.test, body or [gast.Pass()], orelse))

    def loop_adjoint(self, stmt: gast.For | gast.While) -> None:
        inside = _assigned(gast.walk(syntax.module(stmt.body)))
        for name in self.incoming(stmt):
            if name not in self.defined and name not in inside:
                self.zero(name, stmt)
        for name in _read_before_written(stmt.body):  # loop versions: carried over
            if name not in self.a.active:
                continue
            if name not in self.defined:
                self.zero(name, stmt)
        before = set(self.defined)
        body = self.adjoint_block(stmt.body, self.block_id(stmt.body))
        for name in sorted(before - self.defined):  # used up and not added to again: the
            bar = syntax.name(self.bar(name))          # earlier iteration starts from zero
            body.append(syntax.located(syntax.assign(self.bar(name), syntax.call(
                f"{self.np}.zeros_like", [bar])), stmt))
        self.defined = before
        self.current = stmt
        trips = syntax.call(syntax.name("range"), [syntax.name(self.trip_counter(stmt))])
        self.emit(gast.For(target=syntax.name("_", store=True), iter=trips, body=body,
                           orelse=[], type_comment=None))

    def adjoint_of(self, stmt: gast.stmt, op: Op) -> None:
        t = op.target
        if t is None or t not in self.a.active or t not in self.defined:
            return
        g = syntax.name(self.bar(t))
        if op.kind == "copy":
            self.accumulate(op.bindings["x"], g)
        elif op.kind == "rule":
            self.rule_adjoint(stmt, op, g)
        elif op.kind == "call":
            self.call_adjoint(stmt, op, g)
        elif op.kind == "setitem":
            self.setitem_adjoint(stmt, op, g)
        elif op.kind == "pack":  # t = (a, b): a gets t_bar[0], b gets t_bar[1]
            for key, element in op.bindings.items():
                self.accumulate(element, gast.Subscript(value=syntax.clone(g), slice=(
                    syntax.const(key)), ctx=gast.Load()))
        elif op.kind == "item":  # a = t[k]: t_bar gets a_bar added at k
            container, key = op.bindings["c"], op.bindings["key"]
            if container.id not in self.defined:
                self.zero(container.id, stmt)
            helper = self.bindings.claim("add_item", add_item)
            index = self.index_value(key)
            self.emit(syntax.assign(self.bar(container.id), syntax.call(syntax.name(helper), [
                syntax.name(self.bar(container.id)), index, g])))
        elif op.kind == "append":  # xs_1 = xs + [v]: v gets the last item, xs the rest
            base, value = op.bindings["xs"], op.bindings["v"]
            self.accumulate(value, gast.Subscript(value=syntax.clone(g), slice=syntax.const(-1),
                                                  ctx=gast.Load()))
            rest = gast.Subscript(value=syntax.clone(g), slice=gast.Slice(
                lower=None, upper=syntax.const(-1), step=None), ctx=gast.Load())
            self.accumulate(base, rest)
        elif op.kind not in ("nondiff", "effect"):  # those pass no gradient by definition
            raise syntax.unexpected("reverse", stmt, f"an operation of kind {op.kind!r}")

    def setitem_adjoint(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        """``y_1 = y with y[idx] = v``: v gets the region of the cotangent (where it landed),
        y the cotangent with the region zeroed."""
        base, index, value = op.bindings["a"], op.bindings["index"], op.bindings["v"]
        if isinstance(value, gast.Name) and value.id in self.a.active:
            region = gast.Subscript(value=syntax.clone(g), slice=syntax.clone(index),
                                    ctx=gast.Load())
            if not self.is_basic(index, base.id):  # a repeated position keeps the last write
                helper = self.bindings.claim("last_writes", last_writes)
                mask = syntax.call(syntax.name(helper), [
                    syntax.name(self.save_shape(stmt, base.id)), self.index_value(index)])
                region = syntax.binop(region, "Mult", mask)
            self.accumulate(value, self.fit(stmt, region, value.id, None))
        if isinstance(base, gast.Name) and base.id in self.a.active:
            rest = self.namer.fresh(f"_{base.id.lstrip('_')}_rest")
            self.emit(syntax.assign(rest, syntax.call(syntax.attribute(syntax.clone(g), "copy"))))
            zero = gast.Subscript(value=syntax.name(rest), slice=syntax.clone(index),
                                  ctx=gast.Store())
            self.emit(syntax.assign(zero, syntax.const(0.0)))
            self.accumulate(base, syntax.name(rest))

    def index_value(self, index: gast.expr) -> gast.expr:
        """An index (``i, 1:n, ...``) as a value to pass to a function: slices as
        ``slice(...)`` objects, since ``a:b`` is only valid inside brackets."""
        if not any(isinstance(n, gast.Slice) for n in gast.walk(index)):
            return syntax.clone(index)
        return syntax.index_value(index, self.bindings.claim("slice", slice))

    def is_basic(self, index: gast.expr, base: str) -> bool:
        """Is the index made of ints, slices, None and ... only (no position can repeat)?"""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for part in parts:
            if isinstance(part, gast.Slice) or syntax.is_const(part):
                continue
            value = self.a.values.get(part.id) if isinstance(part, gast.Name) else None
            if value is None or value.kind != "scalar" or value.float:
                return False
        return True

    def rule_adjoint(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        rule = op.rule
        template = template_of(rule)
        params = {"g": g, "ans": syntax.name(self.snapshot(stmt, op.target))}
        params.update({p: self.snapshot_atom(stmt, a) for p, a in op.bindings.items()})
        global_names = {k: self.bindings.claim(k, v) for k, v in template.globals.items()}
        wanted = [p for p in op.diff_params
                  if isinstance(op.bindings.get(p), gast.Name)
                  and op.bindings[p].id in self.a.active]
        inlined = inline(template, params, self.facts, self.namer, global_names)
        if inlined is None:
            contributions = self.call_rule(template, params)
        else:
            for inlined_stmt in inlined.statements:
                self.emit(inlined_stmt)
            contributions = inlined.contributions
        for p, c in zip(rule.params, contributions):
            if p not in wanted or c is None:
                continue
            atom = op.bindings[p]
            if rule.shape == "elementwise":
                c = self.fit(stmt, c, atom.id, op.target)
            self.accumulate(atom, c)

    def call_rule(self, template, params: dict) -> list[gast.expr | None]:
        """A rule whose tests depend on run-time values: call it rather than inline it."""
        fn = self.bindings.claim(f"{template.function.__name__}_vjp", template.function)
        names = ["g", "ans", *template.rule.params]
        args = [self.index_value(params[n]) for n in names]
        result = self.namer.fresh("_c")
        self.emit(syntax.assign(result, syntax.call(syntax.name(fn), args)))
        if len(template.outputs) == 1:
            return [syntax.name(result)]
        return [gast.Subscript(value=syntax.name(result), slice=syntax.const(k), ctx=gast.Load())
                for k in range(len(template.outputs))]

    def fit(self, stmt: gast.stmt, c: gast.expr, atom: str, out: str | None) -> gast.expr:
        """Reduce a contribution shaped like ``out`` to the shape of ``atom``, if they can differ.

        Where the analysis knows which axes have size 1 this is a plain ``np.sum`` over the
        broadcast axes (or nothing); elsewhere a run-time ``unbroadcast``.
        """
        if out is not None and self.a.same_shape(atom, out):
            return c
        operand = self.a.values[atom].dims
        result = None if out is None else self.a.values[out].dims
        if operand == ():
            return c if result == () else syntax.call(f"{self.np}.sum", [c])
        if result is None and out is None:  # a region of unknown shape
            helper = self.bindings.claim("unbroadcast", unbroadcast)
            return syntax.call(syntax.name(helper), [c, syntax.name(self.save_shape(stmt, atom))])
        plan = None if operand is None or result is None else shapes.sum_axes(operand, result)
        if plan is None:
            helper = self.bindings.claim("unbroadcast", unbroadcast)
            return syntax.call(syntax.name(helper), [c, syntax.name(self.save_shape(stmt, atom))])
        lead, kept = plan
        if lead:
            c = syntax.call(f"{self.np}.sum", [c], {"axis": _axes(lead)})
        if kept:
            c = syntax.call(f"{self.np}.sum", [c], {"axis": _axes(kept),
                                                     "keepdims": syntax.const(True)})
        return c

    def call_adjoint(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        compiled = op.callee
        fname = self.bindings.claim(f"{compiled.name}_backward", compiled.backward)
        saved = self.callee_saved_name(stmt, compiled)
        call = syntax.call(syntax.name(fname), [syntax.name(saved), g])
        names, direct, pending, packed = [], [], [], []
        for p in op.diff_params:  # the callee returns one cotangent per differentiated param
            atom = op.bindings[p]
            if isinstance(atom, tuple):  # *args: a tuple of cotangents, one per argument
                names.append(self.namer.fresh(f"_{p}_bar"))
                packed.append((atom, names[-1]))
                continue
            active = isinstance(atom, gast.Name) and atom.id in self.a.active
            if active and atom.id not in self.defined and atom.id not in direct:
                direct.append(atom.id)  # first contribution: unpack straight into the bar
                names.append(self.bar(atom.id))
            else:
                names.append(self.namer.fresh(f"_{p}_bar"))
                if active:
                    pending.append((atom, names[-1]))
        if len(names) == 1:
            call = gast.Subscript(value=call, slice=syntax.const(0), ctx=gast.Load())
            self.emit(syntax.assign(names[0], call))
        else:
            self.emit(syntax.unpack(names, call))
        self.defined.update(direct)
        for atom, name in pending:
            self.accumulate(atom, syntax.name(name))
        for atoms, name in packed:
            for k, atom in enumerate(atoms):
                self.accumulate(atom, gast.Subscript(value=syntax.name(name),
                                                     slice=syntax.const(k), ctx=gast.Load()))

    def returned_gradients(self) -> gast.stmt:
        grads = []
        for p in self.a.wrt:
            if p in self.defined:
                grads.append(syntax.name(self.bar(p)))
                continue
            value = self.a.values.get(p)
            if is_container(value):
                grads.append(syntax.call(syntax.name(self.bindings.claim(
                    "zeros_tree", zeros_tree)), [syntax.name(p)]))
            elif value is not None and value.kind == "scalar":
                grads.append(syntax.const(0.0))
            else:
                grads.append(syntax.call(f"{self.np}.zeros_like", [syntax.name(p)]))
        return syntax.ret(syntax.tuple_(grads))


def _assigned(nodes: Any) -> set[str]:
    return {t for n in nodes if isinstance(n, gast.Assign)
            for t in syntax.names_written(n.targets[0])}


def _names_read_here(stmt: gast.stmt) -> set[str]:
    """Names a statement reads itself (for an if or a loop: its test or range only)."""
    if isinstance(stmt, gast.If):
        return syntax.names_read(stmt.test)
    if isinstance(stmt, gast.For):
        return syntax.names_read(stmt.iter)
    if isinstance(stmt, gast.While):
        return set()
    return syntax.names_read(stmt)


def _read_before_written(body: list[gast.stmt]) -> list[str]:
    """Names the body reads before it assigns them: values from the previous iteration."""
    written: set[str] = set()
    carried: list[str] = []
    for node in syntax.in_order(body):
        if isinstance(node, gast.Assign):
            for name in sorted(syntax.names_read(node.value)):
                if name not in written and name not in carried:
                    carried.append(name)
            written |= syntax.names_written(node.targets[0])
    return [n for n in carried if n in written]


def _axes(axes: tuple[int, ...]) -> gast.expr:
    return syntax.const(axes[0]) if len(axes) == 1 else syntax.tuple_(syntax.const(a) for a in axes)


def _may_hold_array(value: Any) -> bool:
    """An array, or a value that may be one or hold one (unknown, a container)."""
    return value is None or value.kind in ("array", "object")


class _Writes:
    """Which values may be changed by an in-place update that runs after a statement.

    In-place updates are element assignments (``y[i] = v``) and augmented assignments to
    arrays (``h += x``), which NumPy performs in the array's memory. Names are grouped by
    the memory they may share: copies, views (indexing, reshapes, transposes, a user
    function's result and its arguments) and the versions an update makes are one group.
    A name is at risk after statement S when its group is updated after S in program order,
    or anywhere in a loop that contains S (a later iteration). Updates of a group that
    holds an argument, and reads through another name of a group after an update (NumPy
    would show the new values, the gradient would not), are refused here.
    """

    def __init__(self, analysis: Analysis):
        self.group: dict[str, str] = {}
        self.position: dict[int, int] = {}
        self.loops: list[tuple[int, int]] = []  # (first, last) positions of each loop body
        self.writes: dict[str, list[tuple[int, gast.stmt]]] = {}  # new version -> update
        self.in_place: set[int] = set()  # augmented assignments done in place
        self.defs: dict[str, list[int]] = {}
        self.reads: dict[str, list[tuple[int, gast.stmt]]] = {}
        self.values = analysis.values
        self.parsed = analysis.normalized.parsed
        self.augmented = analysis.normalized.augmented
        self.branch_path: dict[int, tuple] = {}  # position -> ((if position, branch), ...)
        self.contained: set[str] = set()  # values put into a tuple, list or dict
        self._walk(analysis.body[:-1], analysis)
        self._check()

    def _find(self, name: str) -> str:
        while self.group.get(name, name) != name:
            name = self.group[name]
        return name

    def _union(self, a: str, b: str) -> None:
        self.group[self._find(a)] = self._find(b)

    def _walk(self, stmts: list[gast.stmt], analysis: Analysis, path: tuple = ()) -> None:
        for stmt in stmts:
            here = self.position[id(stmt)] = len(self.position)
            self.branch_path[here] = path
            for name in _names_read_here(stmt):
                self.reads.setdefault(name, []).append((here, stmt))
            if isinstance(stmt, (gast.For, gast.While)):
                if isinstance(stmt, gast.For):
                    self.defs.setdefault(stmt.target.id, []).append(here)
                first = len(self.position)
                self._walk(stmt.body, analysis, path)
                self.loops.append((first, len(self.position) - 1))
            elif isinstance(stmt, gast.If):
                self._walk(stmt.body, analysis, path + ((here, True),))
                self._walk(stmt.orelse, analysis, path + ((here, False),))
            elif isinstance(stmt, gast.Assign):
                op = analysis.ops.get(id(stmt))
                target = op.target if op is not None else None
                if target is None:
                    continue
                self.defs.setdefault(target, []).append(here)
                for name in self._shares_memory_with(stmt, op):
                    self._union(target, name)
                if op.kind in ("setitem", "append") or id(stmt) in self.in_place:
                    self.writes.setdefault(target, []).append((here, stmt))

    def _shares_memory_with(self, stmt: gast.Assign, op: Any) -> list[str]:
        value = stmt.value
        if op.kind == "setitem":
            return [op.bindings["a"].id]
        if op.kind == "append":  # the same list; its new item is remembered as contained
            self.contained |= {a.id for a in [op.bindings["v"]] if isinstance(a, gast.Name)}
            return [op.bindings["xs"].id]
        if op.kind == "pack":
            self.contained |= {a.id for a in op.bindings.values() if isinstance(a, gast.Name)}
            return []
        if op.kind == "item":  # an array inside a container: not to be updated in place
            self.contained.add(op.target)
            return []
        augmented = self.augmented.get(id(stmt))
        target_value = self.values.get(op.target)
        if augmented is not None and target_value is not None and (
                target_value.kind == "array" or target_value.type is list):  # xs += [v] too
            self.in_place.add(id(stmt))
            return [augmented[1]]  # x += y updates x's memory
        if isinstance(value, gast.Name):
            return [value.id]
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            return [] if target_value is not None and target_value.ndim == 0 else [
                value.value.id]
        if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
            owner = self.values.get(value.value.id)
            if owner is None or owner.kind == "object":  # an array held by an object (or a
                return [value.value.id]                   # module): the object's memory
            return [value.value.id] if value.attr in _VIEWS else []
        if isinstance(value, gast.Call):
            func = value.func
            name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", "")
            if op.kind == "call":  # the callee knows which arguments its result may share
                aliased = getattr(op.callee, "result_aliases", None)
                return [a.id for p, atom in op.bindings.items()
                        for a in (atom if isinstance(atom, tuple) else (atom,))
                        if isinstance(a, gast.Name) and (aliased is None or p in aliased)]
            if op.kind in ("rule", "nondiff", "unknown") and returns_new_array(op):
                return []
            # Anything else may return a view of its array arguments (np.fliplr, np.split,
            # np.asarray, a function without a rule): assume it shares their memory.
            receiver = func.value if isinstance(func, gast.Attribute) and isinstance(
                func.value, gast.Name) and func.value.id in self.values else None
            atoms = ([receiver] if receiver is not None else []) + list(value.args) + [
                k.value for k in value.keywords]
            return [a.id for a in atoms if isinstance(a, gast.Name) and _may_hold_array(
                self.values.get(a.id))]
        return []

    def _loop_of(self, position: int) -> tuple[int, int] | None:
        inner = [(f, last) for f, last in self.loops if f <= position <= last]
        return min(inner, key=lambda r: r[1] - r[0]) if inner else None

    def _check(self) -> None:
        params = set(self.parsed.params)
        for target, updates in self.writes.items():
            group = self._find(target)
            names = set(self.group) | set(self.group.values()) | set(self.defs) | params
            members = [n for n in names if self._find(n) == group]
            for position, stmt in updates:
                inside = [m for m in members if m in self.contained]
                if inside and stmt.value.func.id != "__append__" if isinstance(
                        stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name) else (
                        inside):
                    raise self.parsed.error(
                        f"this updates, in place, an array that was put into a tuple, list or "
                        f"dict ('{self._user(inside[0])}'): it would change there too, which the "
                        "gradient cannot follow", stmt, "Copy it before the update, or update a new "
                        "name (`h = h + x`).")
                shared = [m for m in members if m in params]
                if shared:
                    raise self.parsed.error(
                        f"this updates, in place, memory that the argument '{shared[0]}' "
                        "shares: NumPy would change the caller's array", stmt,
                        "Copy the array first, e.g. `y = x.copy()`.")
                outside = [m for m in members if m not in self.defs and m not in params
                           and self.parsed.lookup(m) is not MISSING]
                if outside:
                    raise self.parsed.error(
                        f"this updates, in place, memory of '{outside[0]}', a variable from "
                        "outside the function: NumPy would change it there, which the "
                        "gradient cannot follow", stmt,
                        "Copy the array first (`w = WORK.copy()`), or return the new values.")
                for member in members:
                    if member != target and self._stale_read(member, position):
                        read = self._stale_read(member, position)
                        raise self.parsed.error(
                            f"'{self._user(member)}' shares memory with an array updated in place "
                            "before this use: NumPy shows the new values here, which the "
                            "gradient cannot follow", read,
                            "Copy the array before the update (`k = h.copy()`), or use a new "
                            "name for the result (`h = h + x`).")

    def _user(self, name: str) -> str:
        """The name the user wrote for a version of it (``h_2`` -> ``h``)."""
        base, _, suffix = name.rpartition("_")
        if name not in self.parsed.local_names and suffix.isdigit() and \
                base in self.parsed.local_names:
            return base
        return name if name in self.parsed.local_names else "a value computed here"

    def _stale_read(self, name: str, write: int) -> gast.stmt | None:
        """A read of ``name`` that runs after the update at ``write`` with no new assignment
        to ``name`` in between (counting the way around a loop that holds both)."""
        defs = self.defs.get(name, [])
        loop = self._loop_of(write)
        for read, stmt in self.reads.get(name, []):
            if read == write or self._exclusive(read, write):
                continue
            if read > write:
                if not any(write < d < read for d in defs):
                    return stmt
            elif loop is not None and loop[0] <= read <= loop[1] and not any(
                    write < d <= loop[1] or loop[0] <= d < read for d in defs):
                return stmt  # read in a later iteration, with no assignment between
        return None

    def _exclusive(self, a: int, b: int) -> bool:
        """Are two positions in different branches of one if (never both in one run)?"""
        branches = dict(self.branch_path.get(a, ()))
        return any(branches.get(at, side) != side for at, side in self.branch_path.get(b, ()))

    def result_aliases(self, result: gast.expr) -> frozenset[str]:
        """The parameters whose memory the returned value may share."""
        if not isinstance(result, gast.Name):
            return frozenset()
        group = self._find(result.id)
        return frozenset(p for p in self.parsed.params if self._find(p) == group)

    def is_in_place(self, stmt: gast.stmt) -> bool:
        return id(stmt) in self.in_place

    def overwrites(self, stmt: gast.stmt, name: str) -> bool:
        """Does ``stmt`` itself update the memory ``name`` refers to?"""
        if id(stmt) not in self.in_place:
            return False
        target = stmt.targets[0].id
        return self._find(name) == self._find(target) and name != target

    def at_risk(self, name: str, stmt: gast.stmt) -> bool:
        if not self.writes:
            return False
        group = self._find(name)
        where = self.position.get(id(stmt))
        if where is None:
            return False
        if self.overwrites(stmt, name):
            return True
        for target, updates in self.writes.items():
            if self._find(target) != group:
                continue
            for write, _ in updates:
                if write > where:
                    return True
                if any(first <= where <= last and first <= write <= last
                       for first, last in self.loops):
                    return True
        return False
