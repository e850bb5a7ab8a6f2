"""The source of a method (or of a function that builds an object) inlined into the
function: read, checked, and made to mean here what it means where it is defined.

Takes a method of a class the function builds an object of (or a function that returns
one it builds, ``build_model(params)``), and the call that inlines it; gives its parsed
source, fenced at its own positions, with

    super().forward(x)      Base.forward(self, x)      the base after the method's class
                                                       in the object's ``__mro__``
    softplus(v)             softplus_1(v)              a name of the method's own module,
                                                       bound beside the function's closure
                                                       where the function's module names
                                                       another object (or none) so

and, for the code of another module, every position that of the call: the function's
file is the one the generated code's comments and the errors of later passes point into.
A name the method's module rebinds compiles the function again (a dependency).
"""

from __future__ import annotations

import builtins
import functools
import sys
import types
from typing import Any

import gast

from ... import syntax
from ..parse import MISSING, Parsed, parse
from ..validity import identity
from .walk import Walk


class Sources:
    def __init__(self, walk: Walk):
        self.walk, self.parsed, self.namer = walk, walk.parsed, walk.namer
        # (name, id) of an object a method of another module reads -> the name bound to it
        self.bound: dict[tuple[str, int], str] = {}

    def read(self, fn: types.FunctionType, call: gast.Call, cls: type | None = None
             ) -> Parsed:
        """``fn``'s source, to inline at ``call`` (a method of ``cls``, if given)."""
        parsed = parse(fn)
        self.walk.fence(parsed)  # the source passes the function's own checks
        if fn.__code__.co_filename != self.parsed.filename or fn.__globals__ is not \
                self.parsed.globals:
            self.from_another_module(parsed, call)
        if cls is not None:
            self.resolve_super(parsed.node, fn, cls, call)
        return parsed

    def resolve_super(self, node: gast.FunctionDef, method: types.FunctionType, cls: type,
                      call: gast.Call) -> None:
        """``super().m(args)`` in a method as the call it makes, ``Base.m(self, args)``,
        where Base is the class after the method's own in the object's ``__mro__`` that
        defines m (``super(Own, self)`` the same way): a call of a base's method on the
        object, which ``call`` follows."""
        own = dict(zip(method.__code__.co_freevars, method.__closure__ or (), strict=True))
        me = node.args.args[0].id if node.args.args else None
        for n in gast.walk(node):
            receiver = n.func.value if isinstance(n, gast.Call) and isinstance(
                n.func, gast.Attribute) else None
            if not (isinstance(receiver, gast.Call) and syntax.is_name(receiver.func, "super")):
                continue
            if not receiver.args and "__class__" in own:
                start = own["__class__"].cell_contents
            elif len(receiver.args) == 2 and syntax.is_name(receiver.args[1], me):
                start = self.parsed.resolve(receiver.args[0])
            else:
                start = None
            mro = list(cls.__mro__)
            after = mro[mro.index(start) + 1:] if start in mro else []
            base = next((c for c in after if n.func.attr in vars(c)), None)
            ref = self.path_to(base) if base is not None else None
            if ref is None:
                raise self.parsed.error(
                    f"super().{n.func.attr}(...) in {cls.__name__}: the base class that "
                    "defines it is not a class of the module's top level", n,
                    "Call the base class's method by name: Base.method(self, ...).")
            n.func = gast.copy_location(syntax.attribute(ref, n.func.attr), n.func)
            n.args = [syntax.name(me)] + n.args
        if any(syntax.is_name(n, "super") for n in gast.walk(node)):
            found = next(n for n in gast.walk(node) if syntax.is_name(n, "super"))
            raise self.parsed.error(
                "super() is followed only as the receiver of a method call, super().m(...)",
                found, "Call the base class's method by name: Base.method(self, ...).")


    def from_another_module(self, parsed: Parsed, call: gast.Call) -> None:
        """A method of a class of another module, read where the function's code is: each
        name it reads from its own module's globals (``softplus``, ``np``) stands for the
        object it names there, under a name the function's code resolves to that object
        (its own name where the function's module names the same object), and its
        statements are placed at the call: the positions of the function's own file (its
        source has passed the checks at its own positions)."""
        method = parsed.fn
        params = {n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name) and
                  not isinstance(n.ctx, gast.Load)}
        renames = {}
        for n in gast.walk(parsed.node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                    n.id not in parsed.local_names and n.id not in params and \
                    n.id not in renames and n.id not in ("super", "__class__"):
                value = method.__globals__.get(n.id, getattr(builtins, n.id, MISSING))
                if value is MISSING:
                    continue  # Python raises a NameError there, as the method would
                renames[n.id] = self.reference(value, n.id, method.__globals__).id
        for n in gast.walk(parsed.node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in renames:
                n.id = renames[n.id]
            if hasattr(n, "lineno"):
                for key in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                    setattr(n, key, getattr(call, key, None))

    def path_to(self, cls: type) -> gast.expr | None:
        """An expression the function's code resolves to the class ``cls`` of a module's top
        level (``Base``, ``Outer.Inner``), or None (a class defined inside a function)."""
        module = sys.modules.get(cls.__module__)
        head, *rest = cls.__qualname__.split(".")
        if module is None or "<locals>" in rest or functools.reduce(
                lambda v, a: getattr(v, a, MISSING), [head, *rest], module) is not cls:
            return None
        ref = self.reference(getattr(module, head), head, vars(module))
        for attr in rest:
            ref = syntax.attribute(ref, attr)
        return ref

    def reference(self, value: Any, name: str, module: dict) -> gast.Name:
        """A name the function's code resolves to ``value``, which the module whose globals
        are ``module`` names ``name``: ``name`` itself where the function sees the same
        object under it, else a name of its own bound to it (beside the function's closure,
        as the names its body imports are). Compiled again if the module rebinds it."""
        if module.get(name, MISSING) is value:
            self.parsed.dependencies.append((module, name, *identity(value)))
        if self.parsed.lookup(name) is value:
            return syntax.name(name)
        bound = self.bound.get((name, id(value)))
        if bound is None:
            bound = self.bound[(name, id(value))] = self.namer.fresh(name)
            self.parsed.closure[bound] = types.CellType(value)
        return syntax.name(bound)
