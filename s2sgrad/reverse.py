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
from .aliasing import Aliasing, aliasing
from .analyze import Analysis, Op, is_container
from .naming import Namer
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


def reverse(analysis: Analysis, aliases: Aliasing | None = None) -> Reversed:
    """``aliases``: what shares memory (the aliasing pass), computed here if not given."""
    return _Reverser(analysis, aliases or aliasing(analysis)).run()


class _Reverser:
    def __init__(self, analysis: Analysis, aliases: Aliasing):
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
        self.writes = aliases
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
                out.append(syntax.replace(stmt, body=syntax.block(self.forward_block(stmt.body)),
                                          orelse=self.forward_block(stmt.orelse)))
            elif isinstance(stmt, (gast.For, gast.While)):  # active: counts its trips
                trips = self.trip_counter(stmt)
                out.append(syntax.located(syntax.assign(trips, syntax.const(0)), stmt))
                body = self.forward_block(stmt.body, self.block_id(stmt.body))
                body.insert(len(body) - 1, syntax.located(syntax.assign(trips, syntax.binop(
                    syntax.name(trips), "Add", syntax.const(1))), stmt))
                out.append(syntax.replace(stmt, body=body))
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
            store = syntax.subscript(syntax.name(op.target), syntax.clone(region.slice),
                                     store=True)
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
            update = syntax.aug_assign(op.target, value.op, syntax.clone(value.right))
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
        keywords = [(k.arg, self.copy_if_at_risk(stmt, syntax.clone(k.value)))
                    for k in getattr(call, "keywords", ())]  # a ``+`` or ``[]`` has none
        new = syntax.unpack([op.target, saved], syntax.call(syntax.name(fname), args, keywords))
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
        self.emit(syntax.if_(stmt.test, body, orelse))

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
        self.emit(syntax.for_(syntax.name("_", store=True), trips, body))

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
                self.accumulate(element, syntax.subscript(syntax.clone(g), syntax.const(key)))
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
            self.accumulate(value, syntax.subscript(syntax.clone(g), syntax.const(-1)))
            rest = syntax.subscript(syntax.clone(g), syntax.slice_(upper=syntax.const(-1)))
            self.accumulate(base, rest)
        elif op.kind not in ("nondiff", "effect"):  # those pass no gradient by definition
            raise syntax.unexpected("reverse", stmt, f"an operation of kind {op.kind!r}")

    def setitem_adjoint(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        """``y_1 = y with y[idx] = v``: v gets the region of the cotangent (where it landed),
        y the cotangent with the region zeroed."""
        base, index, value = op.bindings["a"], op.bindings["index"], op.bindings["v"]
        if isinstance(value, gast.Name) and value.id in self.a.active:
            region = syntax.subscript(syntax.clone(g), syntax.clone(index))
            if not self.is_basic(index, base.id):  # a repeated position keeps the last write
                helper = self.bindings.claim("last_writes", last_writes)
                mask = syntax.call(syntax.name(helper), [
                    syntax.name(self.save_shape(stmt, base.id)), self.index_value(index)])
                region = syntax.binop(region, "Mult", mask)
            self.accumulate(value, self.fit(stmt, region, value.id, None))
        if isinstance(base, gast.Name) and base.id in self.a.active:
            rest = self.namer.fresh(f"_{base.id.lstrip('_')}_rest")
            self.emit(syntax.assign(rest, syntax.call(syntax.attribute(syntax.clone(g), "copy"))))
            zero = syntax.subscript(syntax.name(rest), syntax.clone(index), store=True)
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
        return [syntax.subscript(syntax.name(result), syntax.const(k))
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
            call = syntax.subscript(call, syntax.const(0))
            self.emit(syntax.assign(names[0], call))
        else:
            self.emit(syntax.unpack(names, call))
        self.defined.update(direct)
        for atom, name in pending:
            self.accumulate(atom, syntax.name(name))
        for atoms, name in packed:
            for k, atom in enumerate(atoms):
                self.accumulate(atom, syntax.subscript(syntax.name(name), syntax.const(k)))

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
