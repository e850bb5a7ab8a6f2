"""Pass 5, reverse: the forward function that saves, and the adjoint, from the analysis.

Before: an ``Analysis`` of an ANF function.
After:  ``Reversed``: the forward body (the primal statements, calls to differentiated callees
        replaced by their forward functions, plus the shapes an unbroadcast will need) and the
        adjoint body (for each active statement in reverse order, the derivative rule inlined
        as a template; contributions reduced to their input's shape where the shapes can
        differ; the first contribution to a cotangent assigned, later ones added), ending in
        the return of the input cotangents. Which primal values the adjoint reads is left to
        ``optimize``, which prunes first.

    h = np.tanh(_t1)    ->  forward: h = np.tanh(_t1)
                            adjoint: _t1_bar = h_bar * (1.0 - h * h)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from . import shapes, syntax
from .analyze import Analysis, Op
from .naming import Namer
from .parse import MISSING
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
        self.shape_of: dict[str, str] = {}
        self.callee_saved: dict[int, str] = {}
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
        value = self.a.values.get(name)
        if value is None:
            return None
        return value.kind == "none"

    def run(self) -> Reversed:
        body = self.a.body
        forward = [self.forward_statement(i, stmt) for i, stmt in enumerate(body)]
        result = self.a.result
        if isinstance(result, gast.Name) and result.id in self.a.active:
            self.bar_of[result.id] = self.seed
            self.defined.add(result.id)
        for i in reversed(range(len(body))):
            self.current = body[i]
            self.adjoint_of(i, self.a.ops[i])
        self.adjoint.append(self.returned_gradients())
        out: list[gast.stmt] = list(self.extra.get(-1, []))  # shapes of parameters
        for i, stmt in enumerate(forward):
            if not isinstance(stmt, gast.Return):
                out.append(stmt)
            out.extend(self.extra.get(i, []))
        return Reversed(self.a, out, self.adjoint, self.bindings.names, result, self.namer,
                        frozenset(self.shape_of.values()), self.seed, self.saved,
                        dict(self.bar_of))

    # --- forward -------------------------------------------------------------------------

    def forward_statement(self, i: int, stmt: gast.stmt) -> gast.stmt:
        op = self.a.ops[i]
        if op.kind != "call" or op.target not in self.a.active:
            return stmt
        compiled = op.callee
        fname = self.bindings.claim(f"{compiled.name}_forward", compiled.forward)
        saved = self.namer.fresh(f"{compiled.name}_saved")
        self.callee_saved[i] = saved
        call = stmt.value
        new = syntax.unpack([op.target, saved], syntax.call(syntax.name(fname), call.args))
        new.value.keywords = call.keywords
        return syntax.located(new, stmt)

    def save_shape(self, i: int, atom: str) -> str:
        if atom not in self.shape_of:
            name = self.namer.fresh(f"{atom}_shape")
            stmt = syntax.assign(name, syntax.call(f"{self.np}.shape", [syntax.name(atom)]))
            where = self.definition_index(atom, i)
            self.extra.setdefault(where, []).append(
                syntax.located(stmt, self.a.body[max(where, 0)]))
            self.shape_of[atom] = name
        return self.shape_of[atom]

    def definition_index(self, atom: str, use: int) -> int:
        for j, op in enumerate(self.a.ops[:use]):
            if op.target == atom:
                return j
        return -1 if atom in self.a.normalized.parsed.params else use

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
        if atom.id in self.defined:
            contribution = syntax.binop(syntax.name(target), "Add", contribution)
        self.defined.add(atom.id)
        self.emit(syntax.assign(target, contribution))

    def adjoint_of(self, i: int, op: Op) -> None:
        t = op.target
        if t is None or t not in self.a.active or t not in self.defined:
            return
        g = syntax.name(self.bar(t))
        if op.kind == "copy":
            self.accumulate(op.bindings["x"], g)
        elif op.kind == "rule":
            self.rule_adjoint(i, op, g)
        elif op.kind == "call":
            self.call_adjoint(i, op, g)

    def rule_adjoint(self, i: int, op: Op, g: gast.expr) -> None:
        rule = op.rule
        template = template_of(rule)
        params = {"g": g, "ans": syntax.name(op.target)}
        params.update({p: a for p, a in op.bindings.items()})
        global_names = {k: self.bindings.claim(k, v) for k, v in template.globals.items()}
        wanted = [p for p in op.diff_params
                  if isinstance(op.bindings.get(p), gast.Name)
                  and op.bindings[p].id in self.a.active]
        inlined = inline(template, params, self.facts, self.namer, global_names)
        if inlined is None:
            contributions = self.call_rule(template, params)
        else:
            for stmt in inlined.statements:
                self.emit(stmt)
            contributions = inlined.contributions
        for p, c in zip(rule.params, contributions):
            if p not in wanted or c is None:
                continue
            atom = op.bindings[p]
            if rule.shape == "elementwise":
                c = self.fit(i, c, atom.id, op.target)
            self.accumulate(atom, c)

    def call_rule(self, template, params: dict) -> list[gast.expr | None]:
        """A rule whose tests depend on run-time values: call it rather than inline it."""
        fn = self.bindings.claim(f"{template.function.__name__}_vjp", template.function)
        names = ["g", "ans", *template.rule.params]
        args = [params[n] for n in names]
        result = self.namer.fresh("_c")
        self.emit(syntax.assign(result, syntax.call(syntax.name(fn), args)))
        if len(template.outputs) == 1:
            return [syntax.name(result)]
        return [gast.Subscript(value=syntax.name(result), slice=syntax.const(k), ctx=gast.Load())
                for k in range(len(template.outputs))]

    def fit(self, i: int, c: gast.expr, atom: str, out: str) -> gast.expr:
        """Reduce a contribution shaped like ``out`` to the shape of ``atom``, if they can differ.

        Where the analysis knows which axes have size 1 this is a plain ``np.sum`` over the
        broadcast axes (or nothing); elsewhere a run-time ``unbroadcast``.
        """
        if self.a.same_shape(atom, out):
            return c
        operand, result = self.a.values[atom].dims, self.a.values[out].dims
        if operand == ():
            return c if result == () else syntax.call(f"{self.np}.sum", [c])
        plan = None if operand is None or result is None else shapes.sum_axes(operand, result)
        if plan is None:
            helper = self.bindings.claim("unbroadcast", unbroadcast)
            return syntax.call(syntax.name(helper), [c, syntax.name(self.save_shape(i, atom))])
        lead, kept = plan
        if lead:
            c = syntax.call(f"{self.np}.sum", [c], {"axis": _axes(lead)})
        if kept:
            c = syntax.call(f"{self.np}.sum", [c], {"axis": _axes(kept),
                                                     "keepdims": syntax.const(True)})
        return c

    def call_adjoint(self, i: int, op: Op, g: gast.expr) -> None:
        compiled = op.callee
        fname = self.bindings.claim(f"{compiled.name}_backward", compiled.backward)
        call = syntax.call(syntax.name(fname), [syntax.name(self.callee_saved[i]), g])
        names, direct, pending = [], [], []
        for p in op.diff_params:  # the callee returns one cotangent per differentiated param
            atom = op.bindings[p]
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

    def returned_gradients(self) -> gast.stmt:
        grads = []
        for p in self.a.wrt:
            if p in self.defined:
                grads.append(syntax.name(self.bar(p)))
                continue
            value = self.a.values.get(p)
            if value is not None and value.kind == "scalar":
                grads.append(syntax.const(0.0))
            else:
                grads.append(syntax.call(f"{self.np}.zeros_like", [syntax.name(p)]))
        return syntax.ret(syntax.tuple_(grads))


def _axes(axes: tuple[int, ...]) -> gast.expr:
    return syntax.const(axes[0]) if len(axes) == 1 else syntax.tuple_(syntax.const(a) for a in axes)
