"""Which function a call runs: a rule, a user function, a refusal.

``Calls.call`` resolves a call's function atom to one known object per compiled pair and
picks what the call is; ``Callees`` (callees.py) makes the operation of a call of the
function found:

    np.tanh(h)          a rule (``primitive``): its parameters bound to the call's atoms
    helper(x, w)        a user function: compiled for these arguments and differentiated
                        through (``user_call``); so are methods, a callable object's
                        __call__, a decorator's own code and functions passed in
    x.shape             a call without a gradient (``rules.nondifferentiable``)
    rhs(t, y)           a nested function made into a value (``Abstract.closure``): the
                        function that stands for its closures, the tuple of what it
                        closes over first (a user function)
    fn(x)               fn chosen at run time: refused
    lib(x)              no rule: fine while nothing differentiated flows in (``opaque``)

A function value known by identity (``Abstract.value``) resolves like a global name: the
compiled pair is specialised on it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from ... import syntax
from ...rules import registry
from .. import derivatives
from ..derivatives import Checkpointed, Derivative, checkpoint
from ..parse import MISSING, unwrap
from ..validity import has_own_attributes
from . import checks, spreads
from .callees import Callees
from .facts import Facts, Op
from .values import (
    Abstract,
    abstract_of,
    holds_closure,
    installed_package,
    is_container,
    is_library,
    is_sequence,
    namespace_of,
    package_method,
    user_method,
)


class Calls:
    def __init__(self, facts: Facts, callees: Callees):
        self.facts = facts
        self.parsed = facts.parsed
        self.value, self.is_varied, self.set_value = facts.value, facts.is_varied, facts.set_value
        self.callees = callees

    def call(self, node: gast.Call, target: str | None) -> Op:
        func = node.func
        for keyword in node.keywords:
            if keyword.arg == "out" and any(k.arg == "where" for k in node.keywords):
                raise self.parsed.error(
                    "'out=' with 'where=': the out array keeps its values where the "
                    "condition is false, which is not followed", keyword.value,
                    "Write the selection out: `y = np.where(c, np.multiply(a, b), y)`.")
            if keyword.arg == "out":
                raise self.parsed.error(
                    "'out=' is followed where it names a local array variable of a NumPy "
                    "or SciPy function's call, not here", keyword.value,
                    "Assign the result instead (`y = np.clip(x, lo, hi)`), or write it into "
                    "a local array: `np.clip(x, lo, hi, out=y)`.")
        args = list(node.args)
        keywords = {k.arg: k.value for k in node.keywords}
        spread = [a for a in args if isinstance(a, gast.Starred)]
        if spread:  # f(*xs): written out item by item where a gradient flows through it
            receiver = func.value if isinstance(func, gast.Attribute) else None
            if self.callees.receives_varied(args, keywords, receiver):
                spreads.arguments(self.facts, spread, keywords.get(None))
                raise self.parsed.error(
                    "a call with a starred argument (*xs) that receives differentiated "
                    "values, where how many items xs holds is not known when compiling (an "
                    "array, a list built in a loop): which parameter receives each value "
                    "is not known", spread[0], "Pass the arguments one by one "
                    "(`f(xs[0], xs[1])`, `x.reshape(s[0], s[1])`), spread a tuple or list of "
                    "known length, or pass the tuple itself where the function takes one "
                    "(`x.reshape(s)`).")
            return self.callees.opaque(target, args, keywords,
                                       self.user_name(func) or "a function", receiver=receiver)
        if None in keywords:
            spreads.arguments(self.facts, [], keywords[None])  # g(**d): d's keys known
            raise self.parsed.error(
                "**kwargs in a call is followed only where a function passes its own "
                "**kwargs on unchanged (not after kwargs.update(...) or kwargs[k] = v)",
                keywords[None], "Pass the arguments by name: `fn(x, scale=7.0)`.")
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id in self.facts.values and self.facts.values[func.value.id].value is None:
            return self.method_call(func, args, keywords, target, node)
        made = self.facts.values.get(func.id) if isinstance(func, gast.Name) else None
        if made is not None and made.closure is not None:  # a nested function made a value
            return self.callees.user_call(made.closure, [func] + args, keywords, target, node)
        if isinstance(func, gast.Name) and func.id in self.facts.static_alias:
            func = self.facts.static_alias[func.id]
        resolved = self.callee_of(func)
        if resolved is MISSING:
            if self.is_varied(func):
                raise self.parsed.error(
                    "this calls a function value that depends on a differentiated input, "
                    "chosen at run time among functions made or picked inside the "
                    "differentiated code (a branch between functions, an item at a computed "
                    "index); the compiler differentiates only calls to functions it can "
                    "identify", node,
                    "Call each function directly (branch around the calls: `y = square(x) if "
                    "c else cube(x)`), or pass the function in as an argument.")
            if isinstance(func, gast.Name) and func.id in self.facts.values:
                call = user_method(self.facts.values[func.id], "__call__")
                if call is not None:  # an object passed in, called: its class's __call__
                    self.parsed.dependencies.append((self.facts.values[func.id].type, "__call__",
                                                     "static", call))
                    return self.callees.user_call(call, [func] + args, keywords, target, node)
                call = package_method(self.facts.values[func.id], "__call__")
                if call is not None:  # a package's object passed in (a spline): called
                    return self.callees.primitive(call, [func] + args, keywords, target, node)
            name = self.user_name(func)
            op = self.callees.opaque(
                target, args, keywords, name or "a function computed here",
                receiver=func.value if isinstance(func, gast.Attribute) else None)
            if name is None or isinstance(func, gast.Name):
                shown = f"'{name}'" if name else "a function value"
                return Op(op.kind, op.target, what=op.what, refusal=(
                    (f"this calls {shown}, a function that is not known when the code is "
                    "compiled (it is chosen at run time: a loop over functions, a branch "
                    "between functions, an item at a computed key), so its derivative "
                    "cannot be chosen"),
                    ("Call each function directly (unroll the loop, or branch around the "
                    "calls), or pass the function in as an argument.")))
            return op
        return self.call_resolved(resolved, func, args, keywords, target, node)

    def user_name(self, func: gast.expr) -> str | None:
        """The name the user wrote for a function atom (a version of a local name counts),
        or None for the compiler's own temporaries."""
        name = syntax.dotted_name(func)
        if name is None:
            return None
        head = name.split(".")[0]
        base = head.rsplit("_", 1)[0] if head.rsplit("_", 1)[-1].isdigit() else head
        if head in self.parsed.local_names:
            return name
        if base in self.parsed.local_names:  # a version of it: fn_1
            return base + name[len(head):]
        return name if head not in self.facts.values else None

    def call_resolved(self, resolved: Any, func: gast.expr, args: list, keywords: dict,
                      target: str | None, node: gast.AST) -> Op:
        """A call of a known object: a rule, a user function, a method, a callable object."""
        if resolved in (eval, exec, compile, globals, locals, vars):
            raise self.parsed.error(f"{resolved.__name__}() is not supported", node,
                                    "Write the code out directly.")
        if isinstance(resolved, Derivative):  # higher order: see higher.py
            return self.callees.user_call(resolved, args, keywords, target, node)
        if isinstance(resolved, Checkpointed):  # recomputed in the adjoint, if differentiated
            op = self.call_resolved(resolved.fn, func, args, keywords, target, node)
            return self.recomputed(op, node)
        if resolved is checkpoint:
            return self.checkpointed(args, keywords, target, node)
        if _finds_namespace(resolved):
            return self.namespace(resolved, args, keywords, target, node)
        maker = derivatives.maker_of(resolved)
        if maker is not None:
            return self.derivative(resolved, maker, args, keywords, target, node)
        checks.refuse_transform(self.facts, resolved, node)
        if isinstance(resolved, functools.partial) and self.callees.receives_varied(args, keywords):
            raise self.parsed.error(
                "a call of a functools.partial object: the arguments it holds are not "
                "differentiated through", node,
                "Pass the function and its extra arguments separately, and call "
                "fn(x, *extra) inside.")
        if resolved is sum and len(args) == 2 and is_sequence(self.value(args[1])):
            raise self.parsed.error(
                "sum(..., start) of lists or tuples concatenates them: this is not "
                "differentiated yet", node,
                "Write the concatenation with +, or build one list with a comprehension.")
        if resolved in (max, min) and len(args) == 1 and not keywords and \
                self.value(args[0]).kind == "array":  # max(x) of an array: its largest item
            resolved = np.max if resolved is max else np.min
        if resolved is sum and len(args) == 1 and not keywords and \
                self.value(args[0]).kind == "array":  # sum(x) of an array: over its first axis
            return self.callees.primitive(np.sum, args, {"axis": syntax.const(0)}, target, node)
        same = registry.same_call(resolved, args, keywords)
        if same is not None:  # np.add.reduce(x): np.sum(x, axis=0)'s rule
            primitive, args, keywords, defaults = same
            keywords.update({k: syntax.const(v) for k, v in defaults.items()})
            return self.callees.primitive(primitive, args, keywords, target, node)
        if registry.lookup(resolved) is not None or registry.is_nondifferentiable(resolved):
            return self.callees.primitive(resolved, args, keywords, target, node)
        if installed_package(unwrap(resolved)) or installed_package(
                getattr(type(resolved), "__call__", None)):  # noqa: B004 (the method itself)
            # a package's own source is not entered: called, with a rule or refused
            return self.callees.primitive(resolved, args, keywords, target, node)
        if inspect.ismethod(resolved) and isinstance(func, gast.Attribute) and isinstance(
                resolved.__func__, types.FunctionType) and not is_library(resolved.__func__):
            return self.callees.user_call(resolved.__func__, [func.value] + args, keywords,
                                          target, node,
                                          infer=has_own_attributes(resolved.__self__))
        unwrapped = unwrap(resolved)
        if isinstance(unwrapped, types.FunctionType) and not is_library(unwrapped) and \
                not inspect.ismethod(resolved):
            return self.callees.user_call(unwrapped, args, keywords, target, node)
        call = getattr(type(resolved), "__call__", None)  # noqa: B004 (the method itself)
        if not isinstance(resolved, (type, types.BuiltinFunctionType, np.ufunc)) and isinstance(
                call, types.FunctionType) and not is_library(call):  # an object's __call__
            return self.callees.user_call(call, [func] + args, keywords, target, node)
        return self.callees.primitive(resolved, args, keywords, target, node)

    def derivative(self, resolved: Any, with_value: bool, args: list, keywords: dict,
                   target: str | None, node: gast.AST) -> Op:
        """``gradient(f, wrt)`` of a function known here: made now, so that calls of it are
        calls of one known Derivative (the statement still runs, making an equal one)."""
        fn = self.callee_of(args[0]) if args else MISSING
        if args and isinstance(args[0], gast.Name) and holds_closure(self.value(args[0])):
            made = self.value(args[0]).closure
            holder = made._s2sgrad_captures[0] if made is not None else "closure"
            shown = "a lambda" if holder == "closure" else f"the nested function '{holder}'"
            raise self.parsed.error(
                f"{resolved.__name__}() of {shown}, made inside the differentiated code: not "
                "followed yet", args[0],
                "Define the function at module level and pass it the values it reads from "
                f"here as arguments: `{resolved.__name__}(f, wrt=0)(y, x)` for "
                "`def f(y, x): ...`.")
        wrt = args[1] if len(args) > 1 else keywords.get("wrt", syntax.const(0))
        if fn is MISSING or len(args) > 2 or set(keywords) - {"wrt"} or not (
                syntax.is_const(wrt) or syntax.is_static_tuple(wrt)):
            raise self.parsed.error(
                f"{resolved.__name__}() of a function or of positions not known when the "
                "code is compiled", node, f"Name the function and the positions directly: "
                f"`{resolved.__name__}(f, wrt=0)`.")
        made = resolved(fn, syntax.const_value(wrt))
        self.set_value(target, abstract_of(made))
        return Op("nondiff", target, what=resolved.__name__)

    def namespace(self, find: Callable, args: list, keywords: dict, target: str | None,
                  node: gast.AST) -> Op:
        """``xp = array_namespace(X, w)`` or ``xp = X.__array_namespace__()``: the namespace
        of the arrays' library, known here since the library is part of the key; found by
        calling ``find`` on an array of each argument's library (the statement still runs,
        finding the same one), so that calls through ``xp`` resolve to its functions."""
        samples = []
        for atom in args:
            value = self.value(atom)
            if value.kind != "array":
                raise self.parsed.error(
                    "the array namespace of a value that is not known to be an array", atom,
                    "Pass the arrays only: `xp = array_namespace(X, w)`.")
            samples.append(namespace_of(value.backend).zeros(()))
        options = {}
        for key, atom in keywords.items():
            options[key] = self.callees.static(atom)
            if options[key] is MISSING:
                raise self.parsed.error(
                    f"'{key}=' of an array namespace lookup is not known when the code is "
                    "compiled", atom, f"Pass '{key}' as a literal.")
        self.set_value(target, abstract_of(find(*samples, **options)))
        return Op("nondiff", target, what="array_namespace")

    def recomputed(self, op: Op, node: gast.AST) -> Op:
        """The call ``op`` of a checkpointed function (if differentiated through, a user
        call) marked to run again in the adjoint; refused where that run could compute
        something else than the forward's: it draws random numbers, it reads data from
        outside (a global, a closure's variable), or it is given an object whose
        attributes it may read (they may change before the adjoint runs)."""
        if op.kind != "call":
            return op
        what = op.what
        if getattr(op.callee, "draws", ""):
            raise self.parsed.error(
                f"checkpoint({what}): {what}() draws random numbers ({op.callee.draws}); its "
                "forward runs again in the adjoint, where it would draw others, and the "
                "gradient would be of another function", node,
                "Draw the numbers outside and pass them in as an argument, or call "
                f"{what} without checkpoint().")
        data = next((dep[1] for dep in op.callee.dependencies if dep[2] in ("shape", "type")),
                    None)
        if data is not None:
            raise self.parsed.error(
                f"checkpoint({what}): {what}() reads '{data}' from outside (a global or a "
                "closure's variable); its forward runs again in the adjoint, which would read "
                f"'{data}' as it is then, not as the forward saw it", node,
                f"Pass '{data}' to {what}() as an argument, or call {what} without "
                "checkpoint().")
        atoms = [a for bound in op.bindings.values() for a in (
            bound if isinstance(bound, tuple) else bound.values() if isinstance(bound, dict)
            else (bound,))]  # positional, keyword, *args and **kwargs arguments alike
        for atom in atoms:
            value = self.value(atom) if isinstance(atom, gast.Name) else None
            if value is not None and _holds_object(value):
                raise self.parsed.error(
                    f"checkpoint({what}): {what}() is given '{atom.id}', which is or holds "
                    "an object whose attributes it may read; its forward runs again in the "
                    "adjoint, which would read them as they are then, not as the forward saw "
                    "them", node,
                    f"Pass the arrays {what}() reads to it as arguments (a function of "
                    f"`h, W` rather than a method reading `self.W`), or call {what} without "
                    "checkpoint().")
        return dataclasses.replace(op, recompute=True)

    def checkpointed(self, args: list, keywords: dict, target: str | None,
                     node: gast.AST) -> Op:
        """``checkpoint(f)`` of a function known here: made now, so that calls of it are
        calls of one known Checkpointed (the statement still runs, making an equal one)."""
        fn = self.callee_of(args[0]) if len(args) == 1 and not keywords else MISSING
        if fn is MISSING:
            raise self.parsed.error(
                "checkpoint() of a function not known when the code is compiled", node,
                "Name the function directly: `checkpoint(block)(h, w)`, or decorate its "
                "definition with @s2sgrad.checkpoint.")
        self.set_value(target, abstract_of(checkpoint(fn)))
        return Op("nondiff", target, what="checkpoint")

    def callee_of(self, func: gast.expr) -> Any:
        """The object a call's function atom refers to: a non-local name, or a local name
        whose value the compiled code is specialised on (a function passed as an
        argument, or picked from a dict of functions by a key known here). MISSING if
        unknown."""
        resolved = self.parsed.resolve(func)
        if resolved is MISSING and isinstance(func, gast.Name) and func.id in self.facts.values:
            value = self.facts.values[func.id]
            if value.value is not None:
                return value.value
        if resolved is MISSING and isinstance(func, gast.Attribute) and isinstance(
                func.value, gast.Name) and func.value.id in self.facts.values:
            owner = self.facts.values[func.value.id].value  # a module passed in: xp.sum
            if owner is not None:
                return getattr(owner, func.attr, MISSING)
        return resolved

    def method_call(self, func: gast.Attribute, args: list, keywords: dict,
                    target: str | None, node: gast.AST) -> Op:
        """``v.name(...)``: a method of the value's known kind, resolved on its class."""
        owner = self.facts.values[func.value.id]
        held = dict(owner.items or ()) if not is_container(owner) else {}
        if func.attr in held and held[func.attr].value is not None:
            # a function stored on the object (self.act = np.tanh): specialised on
            return self.call_resolved(held[func.attr].value, func, args, keywords, target, node)
        if func.attr == "__array_namespace__" and owner.kind == "array":
            return self.namespace(lambda array, **options: array.__array_namespace__(**options),
                                  [func.value, *args], keywords, target, node)
        method = self.method_of(owner, func.attr)
        if owner.kind == "object" and owner.type is not None and owner.type.__module__ not in (
                "builtins",) and method is not MISSING:
            # the class may be changed between calls: recompile if this attribute is
            self.parsed.dependencies.append((owner.type, func.attr, "static", method))
        if is_container(owner) and self.callees.receives_varied(args, keywords, func.value):
            checks.refuse_container_method(self.facts, owner, func.attr, node)
        if method is MISSING:
            return self.callees.opaque(target, args, keywords, f".{func.attr}()",
                                       receiver=func.value)
        if owner.kind == "object" and isinstance(method, (staticmethod, types.FunctionType)) \
                and installed_package(getattr(method, "__func__", method)):
            # a method of an installed package's class (a scipy spline's): called, never
            # entered, as the package's functions are; refused if differentiated, at this call
            receiver = [] if isinstance(method, staticmethod) else [func.value]
            return self.callees.primitive(getattr(method, "__func__", method),
                                          receiver + args, keywords, target, node)
        if owner.kind == "object" and isinstance(method, staticmethod) and isinstance(
                method.__func__, types.FunctionType):
            return self.callees.user_call(method.__func__, args, keywords, target, node)
        if owner.kind == "object" and isinstance(method, types.FunctionType):
            return self.callees.user_call(method, [func.value] + args, keywords, target, node,
                                          infer=owner.items is not None)
        if owner.kind == "object" and isinstance(method, Checkpointed) and isinstance(
                method.fn, types.FunctionType):  # a checkpointed method: refused above
            return self.recomputed(self.callees.user_call(method.fn, [func.value] + args,
                                                          keywords, target, node), node)
        if owner.kind == "object" and isinstance(method, classmethod) and \
                self.callees.receives_varied(args, keywords, func.value):
            raise self.parsed.error(
                f"a classmethod called on an instance ({func.value.id}.{func.attr}): not "
                "differentiated through yet", node,
                f"Call it on the class: `{owner.type.__name__}.{func.attr}(...)`.")
        return self.callees.primitive(method, [func.value] + args, keywords, target, node)

    def method_of(self, owner: Abstract, attr: str) -> Any:
        if owner.kind == "array":
            return getattr(np.ndarray, attr, MISSING)
        if owner.kind == "scalar":
            return getattr(float, attr, MISSING)
        if owner.kind == "object" and owner.type is not None:
            return inspect.getattr_static(owner.type, attr, MISSING)
        return MISSING


def _finds_namespace(resolved: Any) -> bool:
    """Whether ``resolved`` is a function that gives the array API namespace of arrays
    (``array_api_compat.array_namespace`` and its older name)."""
    module = getattr(resolved, "__module__", None)
    return isinstance(module, str) and module.startswith("array_api_compat") and getattr(
        resolved, "__name__", None) in ("array_namespace", "get_namespace")


def _holds_object(value: Abstract) -> bool:
    """An object of a user class (not a function or a value known by identity), or a tuple,
    list or dict that may hold one."""
    if is_container(value):
        return value.items is None or any(_holds_object(v) for _, v in value.items)
    return value.kind == "object" and value.value is None
