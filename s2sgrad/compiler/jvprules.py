"""Part of pass 5 of forward mode, tangent: the tangent of an operation of kind ``rule``, from
its primitive's forward-mode rule (``@s2sgrad.jvp_rule``).

Takes an assignment ``y = prim(...)`` whose target is active, and its ``Op``; gives the
statement, then the one that assigns the target's tangent (through ``Dots``):

    linear    y = np.sum(x, axis=0)   the same call on the tangents: np.sum(x_dot, axis=0)
    inlined   y = np.tanh(x)          the rule's template inlined with g = x_dot, one term
                                      per moving operand, summed: x_dot * (1.0 - y * y)
    called    a template that tests a value known only at run time is called instead

A term of an elementwise rule shaped like its operand is broadcast to the output's shape;
the terms of a tuple or list result are added item by item (``items_added``); a tangent
that would be another tangent or a view while its value is new memory is copied where the
function writes elements of an active array (``owned``). A primitive with a reverse-mode
rule only is refused at the user's line. With a batch, a primitive that names axes takes
its entry of batching.py (``LINEAR``, ``PRODUCTS``), a rule with no form for rows is called
on each row (``row_by_row``), and what cannot be done for rows raises ``NotBatchable``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..rules import registry
from ..runtime.containers import tree_add
from . import batching
from .analyze import UPDATES, Op, is_container
from .context import Context
from .dots import Dots
from .simplify import simplify
from .templates import Facts, Template, call_arguments, inline, template_of


class JvpRules:
    def __init__(self, ctx: Context, dots: Dots):
        self.ctx, self.dots = ctx, dots
        self.analysis = ctx.analysis
        self.parsed = ctx.analysis.normalized.parsed
        self.batch = dots.batch
        self.facts = Facts(ndim=self.analysis.ndim, is_none=self.analysis.is_none,
                           is_numpy=lambda name: self.ctx.bindings.names.get(name) is np,
                           is_complex=self.is_complex)
        # an element write into an active array: tangents must own memory as values do
        self.owning = any(op.kind in UPDATES and op.target in self.analysis.active
                          for op in self.analysis.ops.values())

    def without_constants(self, call: gast.expr, jvp: Any, op: Op,
                          stmt: gast.stmt) -> gast.expr:
        """A linear primitive's call on the tangents with 0 for the parameters that add a
        constant (``np.sum(x_dot, initial=0)``), given by name."""
        given = [p for p in jvp.constant if p in op.bindings and not (
            syntax.is_const(op.bindings[p]) and op.bindings[p].value is None)]
        if not given or not isinstance(call, gast.Call):
            return call
        named = {k.arg for k in call.keywords}
        if any(p not in named for p in given):
            raise self.parsed.error(
                f"{op.what}() is given {given[0]!r} by position: its forward-mode derivative "
                "gives it 0, by name", stmt, f"Pass it by name: `{given[0]}=...`.")
        return syntax.call(call.func, call.args, [
            (k.arg, syntax.const(0) if k.arg in given else k.value) for k in call.keywords])

    def is_complex(self, name: str) -> bool | None:
        """Whether a primal name holds complex values; None where it is not known."""
        value = self.analysis.values.get(name)
        return None if value is None or value.kind not in ("array", "scalar") else value.complex

    def rule(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        jvp = registry.jvp_lookup(op.rule.primitive)
        if jvp is None:
            raise self.parsed.error(
                f"{op.what}() has a reverse-mode rule but no forward-mode one, so its "
                "forward-mode derivative (jvp, hessian, a derivative of a gradient) is not "
                "known", stmt, "Register one beside its vjp rule with @s2sgrad.jvp_rule.")
        diff = [op.bindings[p] for p in op.diff_params if p in op.bindings]
        if jvp.linear:
            value = self.without_constants(self.dots.on_tangents(stmt.value, diff), jvp, op,
                                           stmt)
            if self.batch:
                value = self.batched_rule(batching.LINEAR, op) or value
            return [stmt, self.dots.assign_dot(op.target, self.owned(op, value))]
        if self.batch and jvp.template is not op.rule.template:
            if op.rule.container is not None:
                raise batching.NotBatchable(
                    f"{op.what}() returns a {op.rule.shape} of arrays, whose forward-mode rule "
                    "has no form for a batch of tangents")
            value = self.batched_rule(batching.PRODUCTS, op) if op.rule.primitive in \
                batching.PRODUCTS else self.row_by_row(jvp, op)
            return [stmt, self.dots.assign_dot(op.target, self.owned(op, value))]
        out: list[gast.stmt] = [stmt]
        template = self.template(jvp, op)
        global_names = {k: self.ctx.bindings.claim(k, v) for k, v in template.globals.items()}
        terms: list[gast.expr] = []
        moving = []
        star, each = op.rule.star, op.rule.each
        # (entry of the return, the moving atom, the index bound to `each`): one per moving
        # parameter, and for a rule inlined per argument of *args, one per moving argument
        sites = []
        for i, p in enumerate(op.rule.params):
            atom = op.bindings.get(p)
            if p not in op.diff_params:
                continue
            if each is not None and p == star:
                sites += [(i, a, k) for k, a in enumerate(atom) if self.dots.is_active(a)]
            elif self.dots.is_active(atom):
                sites.append((i, atom, None))
        for i, atom, k in sites:
            moving.append(atom.id)
            g = syntax.name(self.dots.dot(atom.id))
            if self.batch:  # rows broadcast as the output does: x_dot[:, None]
                g = batching.expand(self.dots.site(op), g, atom, self.analysis.ndim(op.target))
            params = {"g": g, "ans": syntax.name(op.target)}
            params.update(op.bindings)
            if each is not None:
                params[each] = syntax.const(0 if k is None else k)
            inlined = inline(template, params, self.facts, self.ctx.namer, global_names)
            if inlined is None and self.batch:
                raise batching.NotBatchable(
                    f"the forward-mode rule of {op.what}() tests a value known at run time")
            if inlined is None:  # a test on run-time values: call the template
                several = len(template.outputs) > 1
                if several and jvp.template is not op.rule.template:
                    # a call computes every entry from one g, which only a pointwise rule
                    # (its own vjp template) can take for every operand
                    raise self.parsed.error(
                        f"the forward-mode rule of {op.what}() tests a value known only at "
                        "run time, and has several entries, so it can be neither inlined "
                        "nor called", stmt, "Test only static facts in the jvp rule "
                        "(constants, `x is None`, np.ndim(x)).")
                fn = self.ctx.bindings.claim(f"{template.function.__name__}_jvp",
                                             template.function)
                args, keywords = call_arguments(template, {
                    n: syntax.tuple_(v) if isinstance(v, tuple) else v
                    for n, v in params.items()})
                term = syntax.call(syntax.name(fn), syntax.clone(args), syntax.clone(keywords))
                if several:
                    term = syntax.subscript(term, syntax.const(i))
            else:
                term = inlined.contributions[i] if i < len(inlined.contributions) else None
                if term is None:
                    continue
                out.extend(simplify(s) for s in _needed(inlined.statements, term))
            terms.append(term)
        if not terms:
            return out + [self.dots.assign_dot(op.target, self.dots.zero(syntax.name(op.target)))]
        target = self.analysis.values.get(op.target)
        if op.rule.container is not None and target is not None and is_container(target):
            return out + [self.dots.assign_dot(op.target,
                                               self.items_added(terms, target, op, stmt))]
        total = terms[0]
        for term in terms[1:]:
            total = syntax.binop(total, "Add", term)
        if op.rule.shape in ("elementwise", "scalar") and target is not None and \
                target.kind == "array" and not any(self.full_shaped(m, op) for m in moving):
            # a term shaped like its operand, which the output broadcasts
            shape = self.dots.site(op).rows_shape() if self.batch else syntax.call(
                f"{self.ctx.np}.shape", [syntax.name(op.target)])
            total = syntax.call(f"{self.ctx.np}.broadcast_to", [total, shape])
        total = simplify(syntax.expr_stmt(total)).value  # x_dot * 1.0 is x_dot itself
        out.append(self.dots.assign_dot(op.target, self.owned(op, total)))
        return out

    def items_added(self, terms: list[gast.expr], target: Any, op: Op,
                    stmt: gast.stmt) -> gast.expr:
        """The tangent of a tuple or list result: the terms (one tuple of item tangents per
        moving operand) added item by item, never with + (which would concatenate them):
        ``(t1[0] + t2[0], t1[1] + t2[1])``, or ``tree_add`` where the number of items is
        not known when compiling."""
        count = None if target.items is None else len(target.items)
        for term in terms:
            if isinstance(term, (gast.Tuple, gast.List)) and count is not None and \
                    len(term.elts) != count:
                raise self.parsed.error(
                    f"the forward-mode rule of {op.what}() gives a tangent of "
                    f"{len(term.elts)} items for a result of {count}", stmt,
                    "Return one tangent per item of the result.")
        if len(terms) == 1:
            return terms[0]
        if count is None:
            helper = self.ctx.bindings.claim("tree_add", tree_add)
            total = terms[0]
            for term in terms[1:]:
                total = syntax.call(syntax.name(helper), [total, term])
            return total

        def item(term: gast.expr, k: int) -> gast.expr:
            if isinstance(term, (gast.Tuple, gast.List)):
                return syntax.clone(term.elts[k])
            return syntax.subscript(syntax.clone(term), syntax.const(k))

        sums = []
        for k in range(count):
            total = item(terms[0], k)
            for term in terms[1:]:
                total = syntax.binop(total, "Add", item(term, k))
            sums.append(total)
        return syntax.tuple_(sums)

    def batched_rule(self, table: dict, op: Op) -> gast.expr | None:
        """The tangent of a primitive that names axes, for rows (batching.py)."""
        entry = table.get(op.rule.primitive)
        if entry is None:
            raise batching.NotBatchable(f"{op.what}() has no rule for a batch of tangents")
        return entry(self.dots.site(op))

    def row_by_row(self, jvp: registry.JvpRule, op: Op) -> gast.expr:
        """A forward-mode rule with no batched form, called on each row of the one moving
        operand's tangent: ``np.stack([max_jvp(g, y, x) for g in x_dot])``."""
        template = self.template(jvp, op)
        moving = [p for p in op.diff_params if self.dots.is_active(op.bindings.get(p))]
        if len(template.outputs) != 1 or len(moving) != 1:
            raise batching.NotBatchable(f"{op.what}() has no rule for a batch of tangents")
        fn = self.ctx.bindings.claim(f"{template.function.__name__}", template.function)
        row = self.ctx.namer.fresh("row")
        params = {"g": syntax.name(row), "ans": syntax.name(op.target), **op.bindings}
        term = syntax.call(syntax.name(fn), [syntax.clone(params[n]) for n in
                                             ["g", "ans", *op.rule.params]])
        rows = syntax.list_comp(term, row, self.dots.tangent_of(op.bindings[moving[0]]))
        return syntax.call(f"{self.ctx.np}.stack", [rows])

    def full_shaped(self, moving: str, op: Op) -> bool:
        """Does a term of an elementwise rule that ``moving``'s tangent scales have the
        output's shape? Yes when ``moving`` has it, or no other operand can broadcast it."""
        a = self.analysis
        if a.same_shape(moving, op.target):
            return True
        mine, out = a.values[moving].dims, a.values[op.target].dims
        if mine is not None and out is not None and len(mine) == len(out) and not any(
                d is not False for d in mine):  # no axis of size 1: nothing stretches it
            return True
        others = [b for p, b in op.bindings.items() if p in op.rule.params and not (
            isinstance(b, gast.Name) and b.id == moving)]
        return mine is not None and all(
            syntax.is_const(b) or (isinstance(b, gast.Name) and a.ndim(b.id) == 0)
            for b in others)

    def template(self, jvp: registry.JvpRule, op: Op) -> Template:
        found = template_of(dataclasses.replace(op.rule, template=jvp.template))
        return found

    def owned(self, op: Op, value: gast.expr) -> gast.expr:
        """A tangent that is new memory where its value is: copied if it would be another
        tangent or a view, in a function that writes elements in place."""
        target = self.analysis.values.get(op.target)
        if not self.owning or target is None or target.kind != "array":
            return value
        if isinstance(value, gast.Name) or (isinstance(value, gast.Call) and (
                syntax.dotted_name(value.func) or "").endswith("broadcast_to")):
            return syntax.call(f"{self.ctx.np}.array", [value])
        return value


def _needed(stmts: list[gast.stmt], value: gast.expr) -> list[gast.stmt]:
    """The statements of an inlined template that ``value`` needs (the others compute
    another operand's term)."""
    needed = syntax.names_read(value)
    kept = []
    for stmt in reversed(stmts):
        written = syntax.names_written(stmt)
        if written & needed or not written:
            kept.append(stmt)
            needed |= syntax.names_read(stmt)
    return kept[::-1]
