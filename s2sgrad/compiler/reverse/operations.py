"""The adjoint of each operation kind: what one assignment's operation contributes to the
cotangents of its operands, given its target's cotangent ``g``.

Takes an assignment and its ``Op`` (``adjoint``); writes the contributions through
``Cotangents``. Each kind of ``Op`` is one entry of ``adjoints``; a kind without one is an
internal error (``unknown`` has none: analyze refuses it wherever a gradient would flow
through it):

    copy     y = x                        x gets g
    rule     y = np.tanh(x)               the rule's template inlined (its tests on static
                                          facts folded), or the rule called where a test
                                          needs run-time values; an elementwise rule's
                                          contributions fitted to their operand's shape
    call     y = f(x)                     the callee's backward on what its forward saved
    setitem  y_1 = __setitem__(y[i], v)   v gets g's region, y gets g with the region zeroed
                                          (``zeroed_at``); of np.add.at (a third argument,
                                          'add'), v gets g's region and y gets g
    pack     t = (a, b)                   a gets g[0], b gets g[1]
    item     a = t[k]                     t gets g added at k (``add_leaf``, ``add_item``)
    put      d_1 = __setitem__(d[k], v)   v gets g[k], d gets g with zeros at k shaped like
                                          the item it replaced (none for a new dict key)
    append   xs_1 = __append__(xs, v)     v gets g[-1], xs gets g[:-1]
    insert   xs_1 = __insert__(xs, i, v)  v gets g at the place it went, xs the rest
    pop      xs_1 = __pop_item__(xs, k, item)    xs gets g with zeros for item put back at
                                          k (item, read before the pop, has its own adjoint)
    nondiff, effect                       nothing: no gradient flows through them

    h = np.tanh(_t1)    ->  _t1_bar = h_bar * (1.0 - h * h)
"""

from __future__ import annotations

from collections.abc import Callable

import gast
import numpy as np

from ... import syntax
from ...rules.shapes import getitem
from ...runtime.containers import add_item, add_leaf, inserted_at, with_item_back, without_item
from ...runtime.indexing import add_at, add_at_each, last_writes, zeroed_at
from ..analyze import Op, is_complex
from ..context import Context
from ..templates import Facts, call_arguments, inline, template_of
from .broadcast import Broadcast
from .cotangents import Cotangents
from .forward import Forward


class Operations:
    def __init__(self, ctx: Context, forward: Forward, cotangents: Cotangents,
                 broadcast: Broadcast):
        self.ctx, self.forward, self.cotangents = ctx, forward, cotangents
        self.broadcast = broadcast
        self.facts = Facts(ndim=cotangents.ndim, is_none=ctx.analysis.is_none,
                           is_numpy=lambda name: ctx.bindings.names.get(name) is np,
                           is_complex=cotangents.is_complex)
        self.adjoints: dict[str, Callable[[gast.stmt, Op, gast.expr], None]] = {
            "copy": self.copy, "rule": self.rule, "call": self.call, "setitem": self.setitem,
            "pack": self.pack, "item": self.item, "append": self.append, "put": self.put,
            "insert": self.insert, "pop": self.pop,
            "nondiff": self.nothing, "effect": self.nothing,
        }

    def adjoint(self, stmt: gast.stmt, op: Op) -> None:
        t = op.target
        if t is None or t not in self.ctx.analysis.active or t not in self.cotangents.defined:
            return
        g = syntax.name(self.cotangents.bar(t))
        write = self.adjoints.get(op.kind)
        if write is None:
            raise syntax.unexpected("reverse", stmt, f"an operation of kind {op.kind!r}")
        # an operation on complex values gives its real operands the real part of theirs
        self.cotangents.complex_op = self.involves_complex(op)
        try:
            write(stmt, op, g)
        finally:
            self.cotangents.complex_op = False

    def involves_complex(self, op: Op) -> bool:
        """Whether the operation's result or one of its operands may be complex."""
        values = self.ctx.analysis.values
        atoms = [op.target, *(a for b in op.bindings.values()
                              for a in (b if isinstance(b, tuple) else (b,)))]
        return any(isinstance(a, (str, gast.Name)) and (
            values.get(a if isinstance(a, str) else a.id) is not None) and is_complex(
                values[a if isinstance(a, str) else a.id]) for a in atoms)

    def nothing(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        """No gradient flows through the operation, by definition."""

    def copy(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        self.cotangents.accumulate(op.bindings["x"], g)

    def pack(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        for key, element in op.bindings.items():
            self.cotangents.accumulate(element, syntax.subscript(syntax.clone(g),
                                                                 syntax.const(key)))

    def item(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        cot = self.cotangents
        container, key = op.bindings["c"], op.bindings["key"]
        if container.id not in cot.defined:
            cot.zero(container.id, stmt)
        # a number, or an array of known rank (one of unknown rank may be a tuple held in a
        # list that appends built): added as a leaf
        item = self.ctx.analysis.values.get(op.target)
        if item is not None and (item.kind == "scalar" or (
                item.kind == "array" and item.dims is not None)):
            helper = self.ctx.bindings.claim("add_leaf", add_leaf)
        else:
            helper = self.ctx.bindings.claim("add_item", add_item)
        index = self.index_value(key)
        cot.emit(syntax.assign(cot.bar(container.id), syntax.call(syntax.name(helper), [
            syntax.name(cot.bar(container.id)), index, g])))

    def append(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        base, value = op.bindings["xs"], op.bindings["v"]
        self.cotangents.accumulate(value, syntax.subscript(syntax.clone(g), syntax.const(-1)))
        rest = syntax.subscript(syntax.clone(g), syntax.slice_(upper=syntax.const(-1)))
        self.cotangents.accumulate(base, rest)

    def put(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        base, key, value = op.bindings["c"], op.bindings["key"], op.bindings["v"]
        active = self.ctx.analysis.active
        self.cotangents.accumulate(value, syntax.subscript(syntax.clone(g), syntax.clone(key)))
        if isinstance(base, gast.Name) and base.id in active:
            old = self.forward.item_before(stmt, base.id, key)
            helper = self.ctx.bindings.claim("without_item", without_item)
            self.cotangents.accumulate(base, syntax.call(syntax.name(helper), [
                syntax.clone(g), syntax.clone(key), syntax.name(old)]))

    def insert(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        base, index, value = op.bindings["xs"], op.bindings["index"], op.bindings["v"]
        cot = self.cotangents
        at = syntax.name(self.ctx.namer.fresh("_at"))
        helper = self.ctx.bindings.claim("inserted_at", inserted_at)
        cot.emit(syntax.assign(at.id, syntax.call(syntax.name(helper), [
            syntax.clone(g), syntax.clone(index)])))
        cot.accumulate(value, syntax.subscript(syntax.clone(g), syntax.clone(at)))
        before = syntax.subscript(syntax.clone(g), syntax.slice_(upper=syntax.clone(at)))
        after = syntax.subscript(syntax.clone(g), syntax.slice_(
            lower=syntax.binop(syntax.clone(at), "Add", syntax.const(1))))
        cot.accumulate(base, syntax.binop(before, "Add", after))

    def pop(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        base, key, item = op.bindings["xs"], op.bindings["key"], op.bindings["item"]
        helper = self.ctx.bindings.claim("with_item_back", with_item_back)
        self.cotangents.accumulate(base, syntax.call(syntax.name(helper), [
            syntax.clone(g), syntax.clone(key), syntax.name(self.forward.snapshot(
                stmt, item.id))]))

    def recompute(self, stmt: gast.stmt, op: Op, saved: str) -> None:
        """``saved = f_forward(h, w)[1]``: what a checkpointed callee's backward reads, made
        again from its arguments as the forward's call received them."""
        compiled = op.callee
        fname = self.ctx.bindings.claim(f"{compiled.name}_forward", compiled.forward)
        forward = self.forward
        args = [forward.snapshot_atom(stmt, syntax.clone(a)) for a in op.callee_args]
        keywords = [(k.arg, forward.snapshot_atom(stmt, syntax.clone(k.value)))
                    for k in getattr(stmt.value, "keywords", ())]
        again = syntax.call(syntax.name(fname), args, keywords)
        self.cotangents.emit(syntax.assign(saved, syntax.subscript(again, syntax.const(1))))

    def setitem(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        """``y_1 = y with y[idx] = v``: v gets the region of the cotangent (where it landed),
        y the cotangent with the region zeroed."""
        cot, active = self.cotangents, self.ctx.analysis.active
        base, index, value = op.bindings["a"], op.bindings["index"], op.bindings["v"]
        if "ufunc" in op.bindings:
            self.scatter(stmt, op, g)
            return
        basic = self.is_basic(index)
        if isinstance(value, gast.Name) and value.id in active:
            region = syntax.subscript(syntax.clone(g), syntax.clone(index))
            found = self.ctx.analysis.values.get(value.id)
            if self.one_element(base.id, index) and found is not None and found.dims == ():
                cot.accumulate(value, region)  # one element, as a number: not a view
            else:
                if basic:  # a view of g: copied, so that g's region can be zeroed in place
                    region = syntax.call(syntax.attribute(region, "copy"))  # (inplace.py)
                else:  # a repeated position keeps the last write
                    helper = self.ctx.bindings.claim("last_writes", last_writes)
                    mask = syntax.call(syntax.name(helper), [syntax.name(
                        self.forward.save_shape(stmt, base.id)), self.index_value(index)])
                    region = syntax.binop(region, "Mult", mask)
                cot.accumulate(value, self.broadcast.fit(stmt, region, value.id, None))
        if isinstance(base, gast.Name) and base.id in active:
            helper = self.ctx.bindings.claim("zeroed_at", zeroed_at)
            cot.accumulate(base, syntax.call(syntax.name(helper), [
                syntax.clone(g), self.index_value(index)]))

    def scatter(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        """``np.add.at(y, idx, v)``: v gets the region of the cotangent (each occurrence of a
        position reads it), fitted to v's shape; y gets the cotangent as it is. For
        ``np.subtract.at``, v gets the region negated."""
        cot, active = self.cotangents, self.ctx.analysis.active
        base, index, value = op.bindings["a"], op.bindings["index"], op.bindings["v"]
        if isinstance(value, gast.Name) and value.id in active:
            region = syntax.subscript(syntax.clone(g), syntax.clone(index))
            if op.bindings["ufunc"].value == "subtract":
                region = syntax.unaryop("USub", region)
            cot.accumulate(value, self.broadcast.fit(stmt, region, value.id, None))
        if isinstance(base, gast.Name) and base.id in active:
            cot.accumulate(base, syntax.clone(g))

    def gather(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        """``y = a[index]``: a gets g added at index, into zeros shaped like a where this
        is its first contribution."""
        a, index = op.bindings["a"], op.bindings["index"]
        if not (isinstance(a, gast.Name) and a.id in self.ctx.analysis.active):
            return
        index = self.snapshot(stmt, index)
        cot = self.cotangents
        bar = cot.bar(a.id)
        if a.id not in cot.defined:
            value = self.ctx.analysis.values.get(a.id)
            if value is not None and value.complex and value.backend is None:
                shape = self.forward.save_shape(stmt, a.id)  # zeros that hold a complex g
                zeros = syntax.call(f"{self.ctx.np}.zeros", [syntax.name(shape), syntax.name(
                    self.ctx.bindings.claim("complex", complex))])
            elif value is not None and value.backend is not None:
                # another library's array: zeros of that library, laid out as it is (a Dask
                # array's chunks), rather than NumPy's zeros of its shape
                zeros = syntax.call(f"{self.ctx.np}.zeros_like", [syntax.name(a.id)])
            else:
                shape = self.forward.save_shape(stmt, a.id)
                zeros = syntax.call(f"{self.ctx.np}.zeros", [syntax.name(shape)])
            cot.emit(syntax.assign(bar, zeros))
            cot.defined.add(a.id)
        helper = self.ctx.bindings.claim(*(("add_at", add_at) if self.is_basic(index) else (
            "add_at_each", add_at_each)))
        cot.emit(syntax.assign(bar, syntax.call(syntax.name(helper), [
            syntax.name(bar), self.index_value(index), g])))

    def index_value(self, index: gast.expr) -> gast.expr:
        """An index (``i, 1:n, ...``) as a value to pass to a function: slices as
        ``slice(...)`` objects, since ``a:b`` is only valid inside brackets."""
        if not any(isinstance(n, gast.Slice) for n in gast.walk(index)):
            return syntax.clone(index)
        return syntax.index_value(index, self.ctx.bindings.claim("slice", slice))

    def one_element(self, base: str, index: gast.expr) -> bool:
        """Does ``base[index]`` name one element: an integer for each of its axes?"""
        found = self.ctx.analysis.values.get(base)
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        if found is None or found.ndim != len(parts):
            return False
        for part in parts:
            value = self.ctx.analysis.values.get(part.id) if isinstance(part, gast.Name) \
                else None
            if not ((syntax.is_const(part) and type(part.value) is int) or (
                    value is not None and value.kind == "scalar" and not value.float)):
                return False
        return True

    def is_basic(self, index: gast.expr) -> bool:
        """Is the index made of ints, slices, None and ... only (no position can repeat)?"""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for part in parts:
            if isinstance(part, gast.Slice) or syntax.is_const(part):
                continue
            value = self.ctx.analysis.values.get(part.id) if isinstance(part, gast.Name) \
                else None
            if value is None or value.kind != "scalar" or value.float:
                return False
        return True

    def rule(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        """The rule's template inlined (or called) with ``g``; a rule registered with
        ``each=`` once per argument of its ``*args``, each inlining giving that argument's
        contribution (and, the first, those of the parameters before ``*args``)."""
        rule, active = op.rule, self.ctx.analysis.active
        if rule.template is getitem:
            self.gather(stmt, op, g)
            return
        template = template_of(rule)
        params = {"g": g, "ans": syntax.name(self.forward.snapshot(stmt, op.target))}
        params.update({p: self.snapshot(stmt, a) for p, a in op.bindings.items()})
        global_names = {k: self.ctx.bindings.claim(k, v) for k, v in template.globals.items()}

        def is_active(atom: object) -> bool:
            return isinstance(atom, gast.Name) and atom.id in active

        wanted = [p for p in op.diff_params if is_active(op.bindings.get(p))]
        if rule.each is None:
            pairs = zip(rule.params, self.contributions(template, params, global_names))
            for p, c in pairs:
                if p in wanted and c is not None:
                    self.cotangents.accumulate(op.bindings[p], self.fitted(
                        stmt, op, c, op.bindings[p]))
            return
        star = rule.star
        leading = rule.params[:rule.params.index(star)]
        operands = op.bindings[star]
        for k, atom in enumerate(operands):
            first = k == 0 and any(p in wanted for p in leading)
            if not (first or (star in op.diff_params and is_active(atom))):
                continue
            found = self.contributions(template, {**params, rule.each: syntax.const(k)},
                                       global_names)
            found = found + [None] * (len(leading) + 1 - len(found))
            if first:
                for p, c in zip(leading, found):
                    if p in wanted and c is not None:
                        self.cotangents.accumulate(op.bindings[p], self.fitted(
                            stmt, op, c, op.bindings[p]))
            if star in op.diff_params and is_active(atom) and found[len(leading)] is not None:
                self.cotangents.accumulate(atom, self.fitted(stmt, op, found[len(leading)],
                                                             atom))

    def fitted(self, stmt: gast.stmt, op: Op, c: gast.expr, atom: gast.Name) -> gast.expr:
        """An elementwise rule's contribution, shaped like the output, reduced to the
        operand's shape."""
        if op.rule.shape != "elementwise":
            return c
        return self.broadcast.fit(stmt, c, atom.id, op.target)

    def snapshot(self, stmt: gast.stmt, atom: object) -> object:
        """The atom the adjoint reads (a tuple of them for a ``*args`` parameter)."""
        if isinstance(atom, tuple):
            return syntax.tuple_([self.forward.snapshot_atom(stmt, a) for a in atom])
        return self.forward.snapshot_atom(stmt, atom)

    def contributions(self, template, params: dict, global_names: dict
                      ) -> list[gast.expr | None]:
        """The template's contributions: its body inlined into the adjoint, or a call."""
        inlined = inline(template, params, self.facts, self.ctx.namer, global_names)
        if inlined is None:
            return self.call_rule(template, params)
        for inlined_stmt in inlined.statements:
            self.cotangents.emit(inlined_stmt)
        return inlined.contributions

    def call_rule(self, template, params: dict) -> list[gast.expr | None]:
        """A rule whose tests depend on run-time values: call it rather than inline it."""
        fn = self.ctx.bindings.claim(f"{template.function.__name__}_vjp", template.function)
        args, keywords = call_arguments(template, params)
        call = syntax.call(syntax.name(fn), [self.index_value(a) for a in args],
                           [(k, self.index_value(v)) for k, v in keywords])
        result = self.ctx.namer.fresh("_c")
        self.cotangents.emit(syntax.assign(result, call))
        if len(template.outputs) == 1:
            return [syntax.name(result)]
        return [syntax.subscript(syntax.name(result), syntax.const(k))
                for k in range(len(template.outputs))]

    def call(self, stmt: gast.stmt, op: Op, g: gast.expr) -> None:
        """The callee's backward, on what its forward saved, gives one cotangent per
        differentiated parameter."""
        cot, active = self.cotangents, self.ctx.analysis.active
        compiled = op.callee
        fname = self.ctx.bindings.claim(f"{compiled.name}_backward", compiled.backward)
        saved = self.forward.callee_saved_name(stmt, compiled)
        if op.recompute:  # checkpointed: the callee's forward again, on what the call saw
            self.recompute(stmt, op, saved)
        call = syntax.call(syntax.name(fname), [syntax.name(saved), g])
        names, direct, pending, packed = [], [], [], []
        for p in op.diff_params:
            atom = op.bindings[p]
            if isinstance(atom, tuple):  # *args: a tuple of cotangents, one per argument
                names.append(self.ctx.namer.fresh(f"_{p}_bar"))
                packed.append((atom, names[-1]))
                continue
            is_active = isinstance(atom, gast.Name) and atom.id in active
            if is_active and atom.id not in cot.defined and atom.id not in direct:
                direct.append(atom.id)  # first contribution: unpack straight into the bar
                names.append(cot.bar(atom.id))
            else:
                names.append(self.ctx.namer.fresh(f"_{p}_bar"))
                if is_active:
                    pending.append((atom, names[-1]))
        if len(names) == 1:
            call = syntax.subscript(call, syntax.const(0))
            cot.emit(syntax.assign(names[0], call))
        else:
            cot.emit(syntax.unpack(names, call))
        cot.defined.update(direct)
        for atom, name in pending:
            cot.accumulate(atom, syntax.name(name))
        for atoms, name in packed:
            for k, atom in enumerate(atoms):
                cot.accumulate(atom, syntax.subscript(syntax.name(name), syntax.const(k)))
