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
a missing one is an internal error.

With ``batched``, every tangent has a leading axis of ``batch`` directions (batching.py):
the function takes ``batch`` as a keyword-only parameter, and what it cannot do for rows
raises ``NotBatchable``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..rules import registry
from ..runtime.containers import tree_add, zeros_tree
from . import batching, statements
from .aliasing import Aliasing
from .analyze import UPDATES, Analysis, Op, is_container
from .context import Context
from .simplify import simplify
from .templates import Facts, Template, call_arguments, inline, template_of


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
        self.counters: list[str] = []  # the targets of the range loops around a statement
        self.parsed = analysis.normalized.parsed
        self.active = analysis.active
        self.dot_of: dict[str, str] = {}
        self.facts = Facts(ndim=analysis.ndim, is_none=analysis.is_none,
                           is_numpy=lambda name: self.ctx.bindings.names.get(name) is np)
        # names that hold a range(...) made once: the loops over them say so
        self.ranges = {op.target: stmt.value for stmt, op in analysis.ops.items()
                       if op.kind == "nondiff" and op.primitive is range
                       and isinstance(stmt, gast.Assign)}
        # an element write into an active array: tangents must own memory as values do
        self.owning = any(op.kind in UPDATES and op.target in self.active
                          for op in analysis.ops.values())
        self.statements: dict[type, Callable[[gast.stmt], list[gast.stmt]]] = {
            gast.Assign: self.computing, gast.Expr: self.computing,
            gast.If: self.branch, gast.For: self.loop, gast.While: self.loop,
            gast.Assert: self.kept, gast.Raise: self.kept, gast.Break: self.kept,
            gast.Continue: self.kept, gast.Pass: self.kept,
        }
        self.by_op: dict[str, Callable[[gast.stmt, Op], list[gast.stmt]]] = {
            "copy": self.copy, "rule": self.rule, "call": self.call,
            "setitem": self.setitem, "pack": self.substituted, "item": self.substituted,
            "put": self.setitem, "append": self.append, "insert": self.insert,
            "pop": self.pop, "nondiff": self.primal, "effect": self.primal,
            "unknown": self.primal,
        }

    def run(self, returns: str) -> Tangents:
        params = [p for p in self.analysis.wrt]
        tangent_params = tuple(self.dot(p) for p in params)
        body = self.block(self.analysis.body[:-1])
        result = self.analysis.result
        out_dot = syntax.name(self.dot(result.id)) if self.is_active(result) else \
            self.zero(result)
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
            read = set()
            for stmt in statements.in_order(body, "tangent"):
                read |= syntax.names_read(stmt)

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
            if statements.kind(stmt, "tangent").blocks:
                new = statements.map_blocks(stmt, lambda b: self.prune(b, dead), "tangent")
                stmt = stmt if all(getattr(new, f) == getattr(stmt, f) for f in
                                   statements.kind(stmt, "tangent").blocks) else new
            out.append(stmt)
        return out

    # --- names ---------------------------------------------------------------------------

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
            return syntax.call(syntax.name(helper), [syntax.clone(atom), *batch])
        return syntax.clone(atom)

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

    def loop(self, stmt: gast.For | gast.While) -> list[gast.stmt]:
        made = self.ranges.get(stmt.iter.id) if isinstance(stmt, gast.For) and isinstance(
            stmt.iter, gast.Name) else None
        counter = stmt.target.id if made is not None and isinstance(
            stmt.target, gast.Name) else None
        if counter is not None:  # an int in the body (None, if ever, only after the loop)
            self.counters.append(counter)
        body = syntax.block(self.block(stmt.body))
        if counter is not None:
            self.counters.pop()
        if made is not None:  # for t in range(n): a loop over indices when read again
            return [syntax.replace(stmt, iter=syntax.clone(made), body=body)]
        return [syntax.replace(stmt, body=body)]

    def kept(self, stmt: gast.stmt) -> list[gast.stmt]:
        return [stmt]

    # --- operations ----------------------------------------------------------------------

    def primal(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """No derivative; an active name it assigns (a constant on one side of a branch)
        has a zero tangent there."""
        return [stmt, self.assign_dot(op.target, self.zero(syntax.name(op.target)))]

    def assign_dot(self, target: str, value: gast.expr) -> gast.stmt:
        return simplify(syntax.assign(self.dot(target), value))

    def copy(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        return [stmt, self.assign_dot(op.target, self.tangent_of(op.bindings["x"]))]

    def substituted(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """A linear operation: the same expression on the tangents (a tuple of tangents, an
        item of the container's tangent; a named tuple's field ``res.Q`` is its item, and
        the tangent a plain tuple: ``res_dot[0]``)."""
        if op.kind == "item" and isinstance(stmt.value, gast.Attribute):
            return [stmt, self.assign_dot(op.target, syntax.subscript(
                self.tangent_of(op.bindings["c"]), syntax.clone(op.bindings["key"])))]
        diff = list(op.bindings.values()) if op.kind == "pack" else [op.bindings.get("c")]
        return [stmt, self.assign_dot(op.target, self.on_tangents(stmt.value, diff))]

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

    def rule(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        jvp = registry.jvp_lookup(op.rule.primitive)
        if jvp is None:
            raise self.parsed.error(
                f"{op.what}() has a reverse-mode rule but no forward-mode one, so its "
                "forward-mode derivative (jvp, hessian, a derivative of a gradient) is not "
                "known", stmt, "Register one beside its vjp rule with @s2sgrad.jvp_rule.")
        diff = [op.bindings[p] for p in op.diff_params if p in op.bindings]
        if jvp.linear:
            value = self.on_tangents(stmt.value, diff)
            if self.batch:
                value = self.batched_rule(batching.LINEAR, op) or value
            return [stmt, self.assign_dot(op.target, self.owned(op, value))]
        if self.batch and jvp.template is not op.rule.template:
            if op.rule.container is not None:
                raise batching.NotBatchable(
                    f"{op.what}() returns a {op.rule.shape} of arrays, whose forward-mode rule "
                    "has no form for a batch of tangents")
            value = self.batched_rule(batching.PRODUCTS, op) if op.rule.primitive in \
                batching.PRODUCTS else self.row_by_row(jvp, op)
            return [stmt, self.assign_dot(op.target, self.owned(op, value))]
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
                sites += [(i, a, k) for k, a in enumerate(atom) if self.is_active(a)]
            elif self.is_active(atom):
                sites.append((i, atom, None))
        for i, atom, k in sites:
            moving.append(atom.id)
            g = syntax.name(self.dot(atom.id))
            if self.batch:  # rows broadcast as the output does: x_dot[:, None]
                g = batching.expand(self.site(op), g, atom, self.analysis.ndim(op.target))
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
            return out + [self.assign_dot(op.target, self.zero(syntax.name(op.target)))]
        target = self.analysis.values.get(op.target)
        if op.rule.container is not None and target is not None and is_container(target):
            return out + [self.assign_dot(op.target, self.items_added(terms, target, op, stmt))]
        total = terms[0]
        for term in terms[1:]:
            total = syntax.binop(total, "Add", term)
        if op.rule.shape in ("elementwise", "scalar") and target is not None and \
                target.kind == "array" and not any(self.full_shaped(m, op) for m in moving):
            # a term shaped like its operand, which the output broadcasts
            shape = self.site(op).rows_shape() if self.batch else syntax.call(
                f"{self.ctx.np}.shape", [syntax.name(op.target)])
            total = syntax.call(f"{self.ctx.np}.broadcast_to", [total, shape])
        total = simplify(syntax.expr_stmt(total)).value  # x_dot * 1.0 is x_dot itself
        out.append(self.assign_dot(op.target, self.owned(op, total)))
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

    def batched_rule(self, table: dict, op: Op) -> gast.expr | None:
        """The tangent of a primitive that names axes, for rows (batching.py)."""
        entry = table.get(op.rule.primitive)
        if entry is None:
            raise batching.NotBatchable(f"{op.what}() has no rule for a batch of tangents")
        return entry(self.site(op))

    def row_by_row(self, jvp: registry.JvpRule, op: Op) -> gast.expr:
        """A forward-mode rule with no batched form, called on each row of the one moving
        operand's tangent: ``np.stack([max_jvp(g, y, x) for g in x_dot])``."""
        template = self.template(jvp, op)
        moving = [p for p in op.diff_params if self.is_active(op.bindings.get(p))]
        if len(template.outputs) != 1 or len(moving) != 1:
            raise batching.NotBatchable(f"{op.what}() has no rule for a batch of tangents")
        fn = self.ctx.bindings.claim(f"{template.function.__name__}", template.function)
        row = self.ctx.namer.fresh("row")
        params = {"g": syntax.name(row), "ans": syntax.name(op.target), **op.bindings}
        term = syntax.call(syntax.name(fn), [syntax.clone(params[n]) for n in
                                             ["g", "ans", *op.rule.params]])
        rows = syntax.list_comp(term, row, self.tangent_of(op.bindings[moving[0]]))
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

    def call(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """``y, y_dot = f_jvp(x, x_dot=x_dot)``: the callee's tangent function."""
        if op.target is None or op.target not in self.active:
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
            keywords.append((kw, self.tangent_of(atom) if not isinstance(atom, tuple) else
                             syntax.tuple_([self.tangent_of(a) for a in atom])))
        if self.batch:
            keywords.append((compiled.batch, syntax.name(self.batch)))
        new = syntax.unpack([op.target, self.dot(op.target)],
                            syntax.call(syntax.name(fname), args, keywords))
        return [new]

    def setitem(self, stmt: gast.stmt, op: Op) -> list[gast.stmt]:
        """y[i] = v; y_1 = y, and the same on the tangents."""
        region = stmt.value.args[0]

        def write(base: gast.expr, value: gast.expr) -> gast.stmt:
            return syntax.assign(syntax.subscript(base, syntax.clone(region.slice), store=True),
                                 value)

        def write_rows(base: gast.expr, value: gast.expr) -> gast.stmt:
            return batching.write_rows(self.site(op), base, region.slice, value,
                                       stmt.value.args[1])

        return self.in_place(op, region.value, stmt.value.args[1], write,
                             write_rows if self.batch else write)

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
        dot = self.dot(op.target)
        if self.is_active(base):
            updated = syntax.name(self.dot(base.id))
        else:
            out.insert(0, syntax.assign(dot, self.tangent_of(base)))
            updated = syntax.name(dot)
        out.append(update_dot(updated, self.tangent_of(value)))
        if self.is_active(base):
            out.append(syntax.assign(dot, syntax.clone(updated)))
        return out


class _ReplaceConstants(gast.NodeTransformer):
    def __init__(self, consts: set[int], zero: Callable[[Any], gast.expr]):
        self.consts, self.zero = consts, zero

    def visit_Constant(self, node: gast.Constant) -> gast.expr:
        return self.zero(node) if id(node) in self.consts else node


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
