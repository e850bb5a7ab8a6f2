"""What a call of a known function is, for the gradient: a rule, a user function, or a
function without a rule.

``Calls`` finds which function a call runs; ``Operations`` knows the function of an
operator, an index or an attribute itself (the rule of +, a property's getter, a class's
__getitem__). Either hands the function and the call's atoms here, for the call's ``Op``:

    np.tanh(h)          ``Callees.primitive``: the rule's parameters bound to the call's
                        atoms (``bind``), checked, and its result inferred; a call
                        without a gradient (``rules.nondifferentiable``) infers its result
    helper(x, w)        ``user_call``: compiled for these arguments (``compile_callee``)
                        where a differentiated value reaches it, differentiated through
    lib(x)              no rule (``opaque``): fine while nothing differentiated reaches it

What reaches a callee is one list of atoms (``reaching``): the receiver of a method, the
arguments, and what a starred argument or ``**`` spreads.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import types
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from ... import syntax
from ...errors import TransformError
from ...rules import registry
from ...rules.registry import Rule
from ..parse import MISSING
from ..templates import template_of
from . import checks, inference
from .facts import Facts, Op
from .values import (
    UNKNOWN_ARRAY,
    Abstract,
    abstract_of,
    holds_closure,
    identified,
    is_complex,
)


class Callees:
    def __init__(self, facts: Facts, compile_callee: Callable[..., Any]):
        self.facts = facts
        self.parsed = facts.parsed
        self.value, self.is_varied, self.set_value = facts.value, facts.is_varied, facts.set_value
        self.compile_callee = compile_callee

    def static(self, atom: Any) -> Any:
        """A literal's value, or a module's number constant read as an attribute
        (``np.inf``, ``-np.inf``, ``math.pi``); MISSING for anything else."""
        value = inference.static(atom)
        negated = isinstance(atom, gast.UnaryOp) and isinstance(atom.op, gast.USub)
        read = atom.operand if negated else atom
        if value is MISSING and isinstance(read, gast.Attribute):
            resolved = self.parsed.resolve(read)
            if isinstance(resolved, (int, float)) and not isinstance(resolved, bool):
                return -resolved if negated else resolved
        return value

    def primitive(self, prim: Any, args: list, keywords: dict, target: str | None,
                  node: gast.AST) -> Op:
        what = registry.primitive_name(prim)
        keywords = registry.mirrored_keywords(prim, keywords)
        atoms = self.reaching(args, keywords)
        checks.refuse_reaching_functions(self.facts, atoms, what, prim)
        checks.refuse_out(self.facts, prim, args, keywords, node)
        if registry.is_nondifferentiable(prim):
            if (registry.twin(prim) or prim) is np.sign and any(
                    self.is_varied(a) and is_complex(self.value(a)) for a in atoms):
                raise self.parsed.error(
                    f"{what}() of a complex value is z / |z|, which is not constant: its "
                    "derivative is not the zero of the sign of a real number", node,
                    "Write z / np.abs(z).")
            # another library's function: what NumPy's of the same name gives, it gives
            inference.infer_nondiff(self.facts, registry.twin(prim) or prim, args, target,
                                    keywords)
            return Op("nondiff", target, what=what, primitive=prim)
        rule = registry.lookup(prim)
        if rule is None:
            return self.opaque(target, args, keywords, what, node, prim)
        if not any(self.is_varied(a) for a in atoms):  # a constant: no rule needed
            try:
                bindings = self.bind(rule, args, keywords, node, what)
            except TransformError:
                self.set_value(target, UNKNOWN_ARRAY)
                return Op("nondiff", target, what=what, primitive=prim)
        else:
            bindings = self.bind(rule, args, keywords, node, what)
        if rule.requires is not None and any(self.is_varied(a) for a in atoms):
            static, ndim = inference.rule_view(self.facts, bindings, self.static)
            why = rule.requires(static, ndim)
            if why:
                raise self.parsed.error(why, node, "Write the function out, or register a "
                                        "rule that covers this call with @s2sgrad.vjp_rule.")
        for p in rule.held:
            if p in bindings and any(self.is_varied(a) for a in _atoms(bindings[p])):
                raise self.parsed.error(
                    f"{what}() is not differentiated with respect to its argument {p!r}, "
                    "which depends on a differentiated input here", node,
                    f"Compute {p!r} from values that are not differentiated, or register a "
                    f"rule for {what} that gives its derivative with @s2sgrad.vjp_rule.")
        template = template_of(rule)
        diff_params = tuple(p for p, given in zip(rule.params, template.outputs) if given)
        if rule.each is not None and not bindings[rule.star] and any(
                self.is_varied(bindings.get(p)) for p in diff_params):
            raise self.parsed.error(
                f"{what}() is called without arguments for *{rule.star}: its rule gives the "
                "contributions of the other parameters along with those of these arguments",
                node, f"Pass at least one argument for *{rule.star}, or register a rule for "
                "this call with @s2sgrad.vjp_rule.")
        for p in rule.params[len(template.outputs):]:  # static: the rule returns nothing for it
            atom = bindings.get(p)  # (the atoms a *args parameter collects, one by one)
            if atom is not None and any(self.is_varied(a) for a in _atoms(atom)):
                raise self.parsed.error(
                    f"{what}() takes {p!r} as a fixed setting, which gets no derivative, but "
                    "it depends on a differentiated input here", node,
                    f"Compute {p!r} from values that are not differentiated, or register a "
                    f"rule for {what} that differentiates it with @s2sgrad.vjp_rule.")
        checks.check_array_operands(self.facts, rule, bindings, diff_params, what, node)
        before = self.facts.values.get(target) if target is not None else None
        inference.infer(self.facts, rule, bindings, target, self.static)
        inference.complex_result(self.facts, rule, target, before)
        first = bindings.get(rule.params[0]) if rule.params else None
        if isinstance(first, gast.Name) and self.facts.is_int_array(first.id) and (
                rule.shape in ("same", "transpose", "permute") or rule.primitive in (
                    operator.getitem, *inference.RESHAPES)) and "dtype" not in bindings:
            self.facts.int_result = True  # a copy, view or part of an integer array
        varied = any(self.is_varied(bindings.get(p)) for p in diff_params)
        if "dtype" in bindings and not (syntax.is_const(bindings["dtype"])
                                        and bindings["dtype"].value is None):
            cast = inference.dtype_named(self.facts, bindings["dtype"])
            if cast is None and varied:
                raise self.parsed.error(
                    f"{what}() casts to a dtype that is not known when the function is "
                    "compiled, so whether the result is differentiable cannot be told", node,
                    "Name the dtype directly (np.float64, 'float32', int), or pass it in as "
                    "an argument.")
            if cast is not None and target is not None and cast.kind in "fc":
                value = self.facts.values[target]  # a cast to complex, or to real
                joined = before is not None and before.complex and \
                    target not in self.parsed.params
                self.facts.values[target] = dataclasses.replace(
                    value, complex=cast.kind == "c" or joined)
            if cast is not None and target is not None and cast.kind not in "fc":
                # a cast to integers or booleans is piecewise constant: no gradient through it
                self.facts.int_result = True
                value = self.facts.values[target]
                self.facts.values[target] = Abstract(value.kind, value.dims, False, value.type)
                return Op("nondiff", target, what=what, primitive=prim)
        if varied and target is not None:
            operands = [self.value(a) for p in rule.params if p in bindings
                        for a in (bindings[p] if isinstance(bindings[p], tuple)
                                  else (bindings[p],)) if not isinstance(a, gast.Slice)]
            if not rule.complex and (any(is_complex(v) for v in operands) or (
                    target in self.facts.values and self.facts.values[target].complex)):
                raise self.parsed.error(
                    f"{what}() on a complex value: its derivative rule holds for real numbers "
                    "only", node, "Work with the real and imaginary parts as separate real "
                    "arrays (np.real(z), np.imag(z)), or register a rule for complex values "
                    f"with @s2sgrad.vjp_rule({checks.short_name(what)}, complex=True).")
            self.facts.varied.add(target)
        return Op("rule", target, rule=rule, bindings=bindings, what=what,
                  diff_params=diff_params, primitive=prim)

    def bind(self, rule: Rule, args: list, keywords: dict, node: gast.AST, what: str) -> dict:
        """Bind call-site atoms to the rule's parameters, as Python binds the primitive's."""
        signature = inspect.signature(rule.template)
        params = list(signature.parameters.values())[2:]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
        bindings: dict[str, Any] = dict(zip((p.name for p in positional), args))
        extra = args[len(positional):]
        if star is not None and rule.each is not None:
            # differentiable: the atoms themselves, one contribution each (as a callee's)
            bindings[star] = tuple(extra)
        elif star is not None:
            bindings[star] = syntax.tuple_(extra)
        elif extra:
            raise self.parsed.error(
                f"{what}() is called with {len(args)} positional arguments; its derivative "
                f"rule takes {len(positional)} ({', '.join(p.name for p in positional)})", node,
                "Pass the extra arguments by keyword, or extend the rule.")
        names = {p.name for p in params if p.kind != p.VAR_POSITIONAL and p.name != rule.each}
        for key, value in keywords.items():
            if key not in names or key in bindings:
                raise self.parsed.error(
                    f"{what}() got the keyword argument '{key}', which its derivative rule "
                    f"does not accept here ({', '.join(p.name for p in params)})", node,
                    "Remove the argument, or register a rule that accepts it.")
            bindings[key] = value
        for p in params:
            if p.name in bindings or p.name == rule.each:
                continue
            if p.default is inspect.Parameter.empty:
                raise self.parsed.error(f"{what}() is missing the argument '{p.name}'", node)
            if not _is_literal(p.default):
                raise self.parsed.error(
                    f"the derivative rule of {what} has a default for '{p.name}' that is not "
                    "a literal; rule defaults must be None, numbers, strings or tuples", node)
            bindings[p.name] = syntax.const(p.default) if not isinstance(p.default, tuple) \
                else syntax.tuple_(syntax.const(v) for v in p.default)
        return bindings

    def user_call(self, fn: Callable, args: list, keywords: dict, target: str | None,
                  node: gast.AST, infer: bool = False) -> Op:
        """A call of a user function (or method): compiled and differentiated through where
        a differentiated value reaches it, else called as it is. ``infer``: what the call
        returns is wanted even then (a method of an object known by its attributes may
        return one of them, ``net.layer(0)``): the function is compiled for its arguments,
        differentiated with respect to none, for the kind of its result."""
        what = getattr(fn, "__qualname__", fn.__name__)
        try:
            bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **keywords)
        except TypeError as exc:
            raise self.parsed.error(f"call to {what}(): {exc}", node) from None
        varied = [name for name, atom in bound.arguments.items() if self.is_varied(atom)]
        for name, atom in bound.arguments.items():
            if isinstance(atom, dict) and any(self.is_varied(a) for a in atom.values()):
                raise self.parsed.error(
                    f"differentiated values passed to {what}() through **{name} are not "
                    "supported", node, "Pass them as named parameters of the function.")
        signature = {name: self.packed_value(atom) for name, atom in bound.arguments.items()}
        for param in bound.signature.parameters.values():  # defaults the callee will use
            if param.name not in signature and param.default is not param.empty and \
                    identified(param.default):
                signature[param.name] = abstract_of(param.default)
        # A function made into a value here is a tuple until it is called, which only the
        # callee's compile follows: compiled even where nothing differentiated reaches it;
        # so is a function that makes one, which it may return (a factory).
        if not varied and not hasattr(fn, "_s2sgrad_captures") and not any(
                holds_closure(v) for v in signature.values()) and not (
                _makes_functions(fn) and self.returns_function(fn, signature, node)):
            value = UNKNOWN_ARRAY
            if infer and target is not None:
                try:
                    value = self.compile_callee(fn, (), signature, node).result_value
                except TransformError:  # what it returns stays unknown, as it was
                    pass
            self.set_value(target, value)
            return Op("nondiff", target, what=what)
        compiled = self.compile_callee(fn, tuple(varied), signature, node)
        once = next((a.id for a in self.reaching(args, keywords) if isinstance(a, gast.Name)
                     and a.id in self.facts.transient), None)
        if once is not None and holds_closure(compiled.result_value):
            raise self.parsed.error(
                f"{what}() returns a function it is given, made here with variables a loop "
                "assigns: Python's closures read their variables when they are called, so "
                "the function returned would read the later values", node,
                "Call the function inside the helper, or pass those variables to it as "
                "arguments.")
        self.set_value(target, compiled.result_value)
        if target is not None:
            self.facts.varied.add(target)
        compiled_only = hasattr(fn, "_s2sgrad_captures") or holds_closure(
            compiled.result_value) or any(holds_closure(v) for v in signature.values())
        return Op("call", target, callee=compiled, bindings=dict(bound.arguments), what=what,
                  callee_args=tuple(args), diff_params=tuple(varied),
                  compiled_only=compiled_only)

    def returns_function(self, fn: Callable, signature: dict, node: gast.AST) -> bool:
        """Whether ``fn``, called with nothing differentiated, returns a function it makes
        (compiled to know; one that cannot be compiled is called as it is)."""
        try:
            return holds_closure(self.compile_callee(fn, (), signature, node).result_value)
        except TransformError:
            return False

    def packed_value(self, atom: Any) -> Abstract:
        """The abstract value of an argument, or of the tuple a callee's *args receives."""
        if isinstance(atom, tuple):
            items = tuple((k, self.value(a)) for k, a in enumerate(atom))
            return Abstract("object", (None,) * len(atom), any(v.float for _, v in items),
                            tuple, items)
        if isinstance(atom, dict):  # what a callee's **kwargs receives
            items = tuple((k, self.value(a)) for k, a in sorted(atom.items()))
            return Abstract("object", None, any(v.float for _, v in items), dict, items)
        return self.value(atom)

    def reaching(self, args: list, keywords: dict, receiver: gast.expr | None = None
                 ) -> list:
        """Every atom through which a call hands a value to its callee, the one list each
        check of what a callee receives reads: the receiver of a method, the positional
        arguments (for a starred one, the sequence it spreads) and the keyword arguments
        (for ``**``, the mapping it spreads). What a callee's ``*args`` or ``**kwargs``
        collects is a tuple or dict of such atoms (``Facts.is_varied`` looks inside).
        Nothing else reaches a callee from here: an object built in the function is never
        passed on (normalize refuses it as a value), so its attributes stay in the function,
        where they are read as variables; a nested function or a lambda passed on is the
        tuple of what it closes over, an atom like any other."""
        atoms = [] if receiver is None else [receiver]
        atoms += [a.value if isinstance(a, gast.Starred) else a for a in args]
        return atoms + list(keywords.values())

    def receives_varied(self, args: list, keywords: dict,
                        receiver: gast.expr | None = None) -> bool:
        """Whether a differentiated value reaches the callee by any channel (``reaching``)."""
        return any(self.is_varied(a) for a in self.reaching(args, keywords, receiver))

    def opaque(self, target: str | None, args: list, keywords: dict, what: str,
               node: Any = None, prim: Any = None, receiver: gast.expr | None = None) -> Op:
        """A call with no rule (or the read of an attribute of an object of unknown class,
        its ``receiver``): fine while no differentiated value reaches it, by any channel.
        One that receives a differentiated value is refused where its result is used (no
        derivative), and also where it is not, unless it is known not to change its
        arguments (print, np.isfinite): x.sort(), np.copyto(y, v), xs.reverse() would
        change values the gradient depends on without it knowing."""
        checks.refuse_reaching_functions(self.facts, self.reaching(args, keywords, receiver),
                                         what, prim)
        varied = self.receives_varied(args, keywords, receiver)
        if varied and target is not None:
            self.facts.varied.add(target)
        self.set_value(target, UNKNOWN_ARRAY)
        refusal = checks.unsupported_call(what, prim) if varied else None
        return Op("unknown", target, what=what, primitive=prim, refusal=refusal,
                  always=refusal is not None)


def _makes_functions(fn: Callable) -> bool:
    """Whether ``fn``'s code makes a nested function or a lambda (comprehensions aside)."""
    code = getattr(fn, "__code__", None)
    return code is not None and any(
        isinstance(c, types.CodeType) and c.co_name not in _COMPREHENSIONS
        for c in code.co_consts)


_COMPREHENSIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})


def _atoms(bound: Any) -> list:
    """The atoms bound to a rule's parameter: one, or those a ``*args`` parameter collects
    (a tuple of them, or a Tuple node); none for an index's slice."""
    if isinstance(bound, gast.Tuple):
        return list(bound.elts)
    if isinstance(bound, tuple):
        return list(bound)
    return [] if isinstance(bound, gast.Slice) else [bound]


def _is_literal(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_is_literal(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, complex))
