"""Objects the function builds: each attribute a variable, each method inlined.

Takes the instantiations, attribute reads and writes, and method calls of objects that
the function itself builds; gives, through the walk, statements on variables:

    layer = Lin(w)              layer_w = w; layer_b = 0.0           __init__ inlined
    h = layer.forward(x)        _t1 = layer_w @ x; ...; h = _t3     forward inlined
    y = layer(x)                as layer.__call__(x)
    layer.b = v                 layer_b_1 = v                        a new version
    model = build(W, b)         (build's body inlined: the Dense it returns is model)
    d = st.norm(m, s)           (nothing: m and s are remembered)
    p = d.logpdf(x)             p = st.norm.logpdf(x, m, s)          frozen distributions

A class is followed this way where the function calls it to build an instance, and it is a
class defined at the top level of a module (the function's or another, whose names its
methods read as they do there: methods.py), with a Python ``__init__``, not of an
installed package. So is a function of the user's that returns an object it builds
(``build``, one ``return``, of any module): its body is inlined, and the object it returns
is the one its caller names (as is one a method returns). ``__init__`` and every method, property and ``__call__`` the function
uses are inlined where they are called, ``self`` standing for the object; each attribute
``__init__`` sets is a variable of its own, versioned, merged and carried through loops
like the user's. The object never exists at run time, so the function may use it only
through its attributes and methods. Used as a value (passed on, returned, stored in a
container, tested), it is refused, as are an attribute neither ``__init__`` nor the class
sets, a method read without a call, a class built inside a loop (or on several paths into
one name), and static and class methods. ``super().m(...)`` in a method is the call of the base class's m it makes
(``Base.m(self, ...)``). A class attribute read through the object (``self.scale``,
``Cls().scale``) is read from the class; one that a method or the function also sets is a
variable that starts as the class's value, as Python's instance attribute shadows the
class's once set. A method's defaults are the values Python evaluated when the class was
defined.

A frozen scipy.stats distribution (``d = st.norm(m, s)``, or ``st.norm(m, s).logpdf(x)``)
is followed the same way: its methods are the distribution's own, given the parameters it
was frozen with, which have rules. It too exists only through its method calls.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import textwrap
import types
from typing import Any

import gast

from ... import syntax
from ..parse import MISSING, installed_package
from .methods import Sources
from .walk import Walk


class Objects:
    def __init__(self, walk: Walk, expressions: Any):
        self.walk, self.expressions = walk, expressions
        self.parsed, self.namer, self.versions = walk.parsed, walk.namer, walk.versions
        self.classes: dict[str, type] = {}  # an object's variable -> its class
        self.class_ref: dict[str, gast.expr] = {}  # ... -> the expression naming the class
        self.fields: dict[str, dict[str, str]] = {}  # ... -> attribute -> its variable
        self.building: set[str] = set()  # objects whose __init__ is being inlined
        self.loop_depth = 0  # loops the walk is inside (maintained by Loops)
        # a frozen scipy.stats distribution -> (the distribution, its arguments, keywords)
        self.frozen: dict[str, tuple[gast.expr, list, list]] = {}
        self.sources = Sources(walk)  # the methods' source, read here

    # --- building --------------------------------------------------------------------------

    def is_object(self, node: Any) -> bool:
        return isinstance(node, gast.Name) and node.id in self.classes

    def is_value_of_its_own(self, node: Any) -> bool:
        """An object built here, or a frozen distribution: neither exists at run time."""
        return isinstance(node, gast.Name) and (node.id in self.classes
                                                or node.id in self.frozen)

    # --- frozen scipy.stats distributions ----------------------------------------------------

    def freezes(self, call: gast.expr) -> bool:
        """``st.norm(loc, scale)``: a scipy.stats distribution called to freeze it."""
        if not isinstance(call, gast.Call) or not self.expressions.is_static(call.func):
            return False
        dist = self.parsed.resolve(call.func)
        return (type(dist).__module__ or "").startswith("scipy.stats") and callable(
            getattr(dist, "freeze", None)) and not isinstance(dist, type)

    def freeze(self, name: str, call: gast.Call) -> None:
        """``d = st.norm(m, s)``: its arguments evaluated now; ``d.logpdf(x)`` is then
        ``st.norm.logpdf(x, m, s)``, which has a rule."""
        if any(isinstance(a, gast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):
            raise self.parsed.error("a frozen distribution made with * or ** arguments",
                                    call, "Pass its parameters by name or position.")
        if self.expressions.functions.bindings()[name] > 1:
            raise self.parsed.error(
                f"'{name}' holds a frozen distribution and is bound again elsewhere in the "
                "function", call, "Give each distribution its own name.")
        if self.loop_depth and name in self.parsed.local_names:
            raise self.parsed.error(
                f"a frozen distribution is given the name '{name}' inside a loop", call,
                "Call its method where it is made (`st.norm(m, s).logpdf(x)`), or call the "
                "distribution's own method with the parameters (`st.norm.logpdf(x, m, s)`).")
        args = [self.expressions.atom(a) for a in call.args]
        keywords = [(k.arg, self.expressions.atom(k.value)) for k in call.keywords]
        self.frozen[name] = (syntax.clone(call.func), args, keywords)

    def frozen_call(self, call: gast.Call) -> gast.Call:
        """``d.logpdf(x)`` of a frozen distribution: the distribution's method, with the
        parameters it was frozen with after the call's own positional arguments."""
        func = call.func
        if isinstance(func.value, gast.Call):  # st.norm(m, s).logpdf(x)
            name = self.versions.synthetic_variable()
            self.freeze(name, func.value)
        else:
            name = func.value.id
        dist, args, keywords = self.frozen[name]
        given = {k.arg for k in call.keywords}
        return syntax.located(syntax.call(
            syntax.attribute(syntax.clone(dist), func.attr),
            list(call.args) + [syntax.clone(a) for a in args],
            [(k.arg, k.value) for k in call.keywords] + [
                (k, syntax.clone(v)) for k, v in keywords if k not in given]), call)

    def builds(self, call: gast.expr) -> type | None:
        """The class ``call`` instantiates, where it is one followed here, else None:
        exceptions, named tuples, dataclasses and classes with rules of their own for
        building or attributes stay calls, as before."""
        if not isinstance(call, gast.Call) or not self.expressions.is_static(call.func):
            return None
        cls = self.parsed.resolve(call.func)
        if not _followed(cls):
            return None
        if "<locals>" in cls.__qualname__:
            raise self.parsed.error(
                f"the class {cls.__name__} is defined inside a function: its methods read "
                "names of that function, which the compiler does not see", call,
                "Define the class at the top level of the module.")
        return cls

    def factory(self, call: gast.expr) -> types.FunctionType | None:
        """The function ``call`` calls where it is one of the user's that returns an object
        it builds of a class followed here (``build_model(params)``, of any module): its
        body is inlined where it is called, and the object is built here. Else None."""
        if not isinstance(call, gast.Call) or not self.expressions.is_static(call.func):
            return None
        fn = self.parsed.resolve(call.func)
        if not isinstance(fn, types.FunctionType) or fn.__code__.co_freevars or \
                installed_package(fn) or (fn.__module__ or "").split(".")[0] == "s2sgrad" or \
                fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_VARARGS |
                                        inspect.CO_VARKEYWORDS) or fn.__kwdefaults__:
            return None
        return fn if _returns_what_it_builds(fn) else None

    def makes(self, node: gast.expr) -> bool:
        """Does ``node`` build an object followed here (``Lin(w)``, ``build_model(p)``)?"""
        return self.builds(node) is not None or self.factory(node) is not None

    def construct(self, name: str, call: gast.Call, cls: type) -> None:
        """``name = Cls(...)``: its attributes as variables, set by ``__init__`` inlined."""
        if self.loop_depth:
            raise self.parsed.error(
                f"an object of class {cls.__name__} is built inside a loop: objects built "
                "here are followed through their attributes, once", call,
                "Build it before the loop and update its attributes in the loop.")
        if name not in self.parsed.local_names and name not in self.versions.synthetic:
            raise self.value_use(name, call, cls)  # the function's result
        if self.expressions.functions.bindings()[name] > 1 or name in self.classes:
            raise self.parsed.error(
                f"'{name}' holds an object built here and is bound again elsewhere in the "
                "function: which object it holds would be known only at run time", call,
                "Give each object its own name.")
        self.classes[name], self.class_ref[name] = cls, syntax.clone(call.func)
        self.fields[name] = {}
        written = {a.attr for n in gast.walk(self.parsed.node) for a in _changed_attributes(n)
                   if isinstance(a.value, gast.Name) and a.value.id == name}
        for attr in sorted(_class_values_set(cls, written)):
            # an attribute the class holds that a method or the function sets: the class's
            # value until then (in every branch and loop version), the instance's once set
            self.fields[name][attr] = self.namer.fresh(f"{name.lstrip('_')}_{attr}")
            self.versions.synthetic.add(self.fields[name][attr])
            self.walk.emit(syntax.assign(self.versions.define(self.fields[name][attr]),
                                         syntax.attribute(syntax.clone(call.func), attr)),
                           call)
        init = inspect.getattr_static(cls, "__init__")
        if init is object.__init__:
            if call.args or call.keywords:
                raise self.parsed.error(f"{cls.__name__}() takes no arguments", call)
            return
        self.building.add(name)
        try:
            self.inline(name, init, call, "__init__",
                        syntax.attribute(syntax.clone(call.func), "__init__"))
        finally:
            self.building.discard(name)

    def value_use(self, name: str, node: gast.AST, cls: type | None = None) -> Exception:
        """The refusal of an object built here (or a frozen distribution) used as a value."""
        cls = cls or self.classes.get(name)
        what = f"{cls.__name__} object" if cls is not None else "frozen distribution"
        return self.parsed.error(
            f"the {what} '{name}' built here is used as a value (passed on, "
            "returned, stored or tested): objects built inside the function are followed "
            "through their attributes and methods only", node,
            "Build it outside the function and pass it in, or pass on the values of its "
            f"attributes (`{name}.<attribute>`).")

    def temporary(self, call: gast.Call) -> str | None:
        """``Lin(w)(x)``, ``Lin(w).forward(x)``: the object built, under a name of its own;
        None where ``call`` calls no object being built."""
        func = call.func
        return self.built(func.value if isinstance(func, gast.Attribute) else func)

    def built(self, node: gast.expr) -> str | None:
        """``Lin(w)`` where its object is used at once (called, a method or an attribute
        read): built under a name of its own, returned; None where ``node`` builds none."""
        cls = self.builds(node)
        if cls is None and self.factory(node) is None:
            return None
        name = self.versions.synthetic_variable()
        if cls is not None:
            self.construct(name, node, cls)
        else:
            self.make(name, node)
        return name

    def make(self, name: str, call: gast.Call) -> None:
        """``name = build_model(params)`` of a ``factory``: its body inlined, ``name``
        the object it returns."""
        fn = self.factory(call)
        parsed = self.sources.read(fn, call)
        self.parsed.dependencies.append((fn, "__code__", "is", fn.__code__))
        made = self.expressions.functions.inline(call, function=parsed.node,
                                                 what=fn.__qualname__,
                                                 defaults=_method_defaults(fn, call.func))
        self.alias(name, made, call)

    def alias(self, name: str, made: gast.expr, node: gast.AST) -> None:
        """``name`` holds the object built here that ``made`` names (what a factory or a
        method returned): the same attributes, under either name."""
        if not self.is_object(made):
            raise self.parsed.error(
                f"'{name}' holds what a function returns that builds an object on some paths "
                "only: which value it holds would be known only at run time", node,
                "Return the object on every path, or build it here.")
        if self.loop_depth:
            raise self.parsed.error(
                f"an object of class {self.classes[made.id].__name__} is built inside a "
                "loop: objects built here are followed through their attributes, once",
                node, "Build it before the loop and update its attributes in the loop.")
        if name not in self.parsed.local_names and name not in self.versions.synthetic:
            raise self.value_use(name, node, self.classes[made.id])
        if self.expressions.functions.bindings()[name] > 1 or name in self.classes:
            raise self.parsed.error(
                f"'{name}' holds an object built here and is bound again elsewhere in the "
                "function: which object it holds would be known only at run time", node,
                "Give each object its own name.")
        self.classes[name] = self.classes[made.id]
        self.class_ref[name] = self.class_ref[made.id]
        self.fields[name] = self.fields[made.id]

    def reads(self, node: gast.expr) -> bool:
        """Is ``node`` an attribute of an object built here (``layer.w``, ``Cls().a``)?"""
        return isinstance(node, gast.Attribute) and (
            self.is_object(node.value) or self.makes(node.value))

    # --- attributes ------------------------------------------------------------------------

    def read(self, node: gast.Attribute) -> gast.expr:
        """``obj.attr``: its variable, a property's getter inlined, or a class attribute (a
        value no method sets, or one read before any does: see ``construct``)."""
        if not self.is_object(node.value):  # Cls(...).attr: built first
            node = syntax.located(syntax.attribute(syntax.name(self.built(node.value)),
                                                   node.attr), node)
        obj, attr = node.value.id, node.attr
        if attr in self.fields[obj]:
            return syntax.located(syntax.name(self.versions.current[self.fields[obj][attr]]),
                                  node)
        cls = self.classes[obj]
        held = inspect.getattr_static(cls, attr, MISSING)
        if isinstance(held, property) and isinstance(held.fget, types.FunctionType):
            return self.inline(obj, held.fget, syntax.located(syntax.call(
                syntax.name(obj), []), node), attr, syntax.attribute(syntax.attribute(
                    syntax.clone(self.class_ref[obj]), attr), "fget"))
        if held is MISSING:
            raise self.parsed.error(
                f"'{obj}.{attr}': the {cls.__name__} object built here has no attribute "
                f"'{attr}' yet (its attributes are those __init__ sets)", node,
                "Set every attribute in __init__.")
        if isinstance(held, (types.FunctionType, staticmethod, classmethod, property)):
            raise self.parsed.error(
                f"'{obj}.{attr}' reads a method of an object built here without calling it",
                node, f"Call it where it is used: `{obj}.{attr}(...)`.")
        return syntax.located(syntax.attribute(syntax.clone(self.class_ref[obj]), attr), node)

    def write(self, target: gast.Attribute, value: gast.expr, origin: gast.AST) -> None:
        """``obj.attr = value``: a new version of the attribute's variable."""
        obj, attr = target.value.id, target.attr
        fields = self.fields[obj]
        cls = self.classes[obj]
        if hasattr(inspect.getattr_static(cls, attr, None), "__set__"):
            raise self.parsed.error(
                f"'{obj}.{attr} = ...' sets a property (or another descriptor) of "
                f"{cls.__name__}, whose setter is not followed", target,
                "Set the attribute the setter would set, directly.")
        if attr not in fields and obj not in self.building:
            raise self.parsed.error(
                f"'{obj}.{attr} = ...' adds the attribute '{attr}' to an object built "
                "here after __init__: its attributes are those __init__ sets", target,
                f"Set '{attr}' in __init__ (to None if it has no value yet).")
        atom = self.expressions.atom(value)  # (before the attribute exists: it may read it)
        if attr not in fields:
            fields[attr] = self.namer.fresh(f"{obj.lstrip('_')}_{attr}")
            self.versions.synthetic.add(fields[attr])
        self.walk.emit(syntax.assign(self.versions.define(fields[attr]), atom), origin)

    def variable(self, node: gast.expr) -> gast.expr:
        """``obj.attr`` of an object built here, as the name of its attribute's variable
        (the target of ``obj.hs.append(h)`` or ``obj.buf[i] = v``); anything else as is."""
        if isinstance(node, gast.Attribute) and self.is_object(node.value) and \
                node.attr in self.fields[node.value.id]:
            return syntax.located(syntax.name(self.fields[node.value.id][node.attr]), node)
        return node

    def variables(self, body: list[gast.stmt]) -> set[str]:
        """The attribute variables a loop over ``body`` may set, which it carries: those
        the body assigns (``obj.attr = v``), those any method of the class of an object it
        uses assigns (``self.attr = v`` anywhere in the class), and, where the body calls a
        nested function or a lambda (which may set any), all of them."""
        nodes = [n for stmt in body for n in gast.walk(stmt)]  # (an explicit __init__: all)
        if any(isinstance(n, gast.Call) and (isinstance(n.func, gast.Lambda) or isinstance(
                n.func, gast.Name) and n.func.id in self.expressions.functions.local_functions)
               or isinstance(n, gast.Attribute) and n.attr == "__init__" for n in nodes):
            return {v for fields in self.fields.values() for v in fields.values()}
        carried = set()
        for n in nodes:
            for changed in _changed_attributes(n):
                if self.is_object(changed.value) and changed.attr in self.fields[
                        changed.value.id]:
                    carried.add(self.fields[changed.value.id][changed.attr])
            if self.is_object(n):
                written = _set_by_methods(self.classes[n.id])
                carried |= {v for a, v in self.fields[n.id].items()
                            if a in written or "*" in written}
        return carried

    # --- methods ---------------------------------------------------------------------------

    def calls(self, call: gast.Call) -> bool:
        """Is ``call`` a method of an object built here: ``obj.method(...)``, ``obj(...)``,
        or ``Base.method(obj, ...)``?"""
        func = call.func
        if self.is_object(func):
            return True
        if isinstance(func, gast.Attribute) and (
                isinstance(func.value, gast.Name) and func.value.id in self.frozen
                or self.freezes(func.value)):
            return True  # d.logpdf(x), st.norm(m, s).logpdf(x)
        if isinstance(func, gast.Attribute) and self.is_object(func.value):
            return func.attr not in self.fields[func.value.id]  # else a function held there
        if self.makes(func.value if isinstance(func, gast.Attribute) else func):
            return True  # Lin(w)(x), Lin(w).forward(x), build(p).forward(x)
        if not (call.args and self.is_object(call.args[0])
                and self.expressions.is_static(func)):
            return False
        function = self.parsed.resolve(func)
        return any(vars(c).get(getattr(function, "__name__", None)) is function
                   for c in self.classes[call.args[0].id].__mro__)

    def call(self, call: gast.Call) -> gast.expr:
        """The method of ``call`` (see ``calls``) inlined: its value as an atom."""
        func = call.func
        if isinstance(func, gast.Attribute) and (
                isinstance(func.value, gast.Name) and func.value.id in self.frozen
                or self.freezes(func.value)):
            return self.expressions.atom(self.frozen_call(call))
        built = self.temporary(call)
        if built is not None:  # Lin(w)(x): built, then called
            func = syntax.located(syntax.name(built), func) if not isinstance(
                func, gast.Attribute) else syntax.attribute(syntax.name(built), func.attr)
        if self.is_object(func):
            obj, attr = func.id, "__call__"
        elif isinstance(func, gast.Attribute) and self.is_object(func.value):
            obj, attr = func.value.id, func.attr
        else:  # Base.method(obj, ...): the base class's method, on obj
            obj, function = call.args[0].id, self.parsed.resolve(func)
            rest = syntax.located(syntax.call(syntax.clone(func), call.args[1:], [
                (k.arg, k.value) for k in call.keywords]), call)
            return self.inline(obj, function, rest, function.__name__, syntax.clone(func))
        cls = self.classes[obj]
        method = inspect.getattr_static(cls, attr, MISSING)
        if not isinstance(method, types.FunctionType):
            kind = type(method).__name__ if method is not MISSING else "no such method"
            raise self.parsed.error(
                f"'{obj}.{attr}(...)' of the {cls.__name__} object built here ({kind}): only "
                "plain methods are followed", call,
                "Write it as a plain method, or a function of the attributes.")
        return self.inline(obj, method, call, attr,
                           syntax.attribute(syntax.clone(self.class_ref[obj]), attr))

    def inline(self, obj: str, method: types.FunctionType, call: gast.Call,
               attr: str, ref: gast.expr) -> gast.expr:
        """The method's body in place, ``self`` standing for ``obj``: its value as an atom.
        ``ref`` names the method from the function's module (``Lin.forward``)."""
        code = method.__code__
        cls = self.classes[obj]
        if installed_package(method):
            raise self.parsed.error(
                f"{cls.__name__}.{attr} belongs to an installed package, whose source is not "
                "differentiated", call,
                "Build the object outside and pass its arrays in, or call "
                f"s2sgrad.differentiate_through('{method.__module__.split('.')[0]}') first.")
        if set(code.co_freevars) - {"__class__"}:  # (__class__: the cell super() reads)
            raise self.parsed.error(
                f"{cls.__name__}.{attr} reads {', '.join(code.co_freevars)} from an enclosing "
                "scope: not followed", call,
                "Pass the values in as arguments, or write the method without them.")
        # compiled again if the class's attribute is replaced (cls.forward = other)
        self.parsed.dependencies.append((cls, attr, "static", inspect.getattr_static(
            cls, attr, method)))
        parsed = self.sources.read(method, call, cls)
        return self.expressions.functions.inline(call, function=parsed.node, self_name=obj,
                                                 what=method.__qualname__,
                                                 defaults=_method_defaults(method, ref))


def _method_defaults(method: types.FunctionType, ref: gast.expr) -> dict[str, gast.expr]:
    """The defaults of a method, as Python evaluated them when the class was defined (not
    its default expressions, which would read the function's own names here): a literal
    as a constant, anything else read from the method itself, ``ref.__defaults__[k]``."""
    values = method.__defaults__ or ()
    code = method.__code__
    names = code.co_varnames[:code.co_argcount]
    found = {}
    for k, value in enumerate(values):
        param = names[len(names) - len(values) + k]
        found[param] = syntax.const(value) if _is_literal(value) and not isinstance(
            value, tuple) else syntax.subscript(syntax.attribute(syntax.clone(ref),
                                                                 "__defaults__"),
                                                syntax.const(k))
    return found


def _is_literal(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, complex))


def _class_values_set(cls: type, written: set[str]) -> set[str]:
    """The attributes ``cls`` (or a base) holds as plain values (not methods, properties or
    other descriptors) that one of its methods, ``__init__`` included, may set, or that are
    ``written`` (by the function, on the object)."""
    set_by = _set_by_methods(cls) | _set_by_methods(cls, "") | written
    keys = {key for base in cls.__mro__[:-1] for key in vars(base)}
    return {key for key in keys if (key in set_by or "*" in set_by) and not key.startswith(
        "__") and not hasattr(type(inspect.getattr_static(cls, key)), "__get__")}


@functools.cache
def _set_by_methods(cls: type, skip: str = "__init__") -> frozenset[str]:
    """The attributes some method of ``cls`` (or of its bases) other than ``skip``
    (``__init__``, unless told) assigns: ``self.a = ...``, ``self.a += ...``,
    ``self.a, self.b = ...``."""
    found = set()
    for base in cls.__mro__[:-1]:
        for key, member in vars(base).items():
            if key == skip:
                continue
            function = member.fget if isinstance(member, property) else member
            if not isinstance(function, types.FunctionType):
                continue
            try:
                tree = gast.parse(textwrap.dedent(inspect.getsource(function)))
            except (OSError, TypeError, SyntaxError):
                return frozenset({"*"})
            args = tree.body[0].args.args if tree.body and isinstance(
                tree.body[0], gast.FunctionDef) else []
            me = args[0].id if args else "self"
            found |= {a.attr for n in gast.walk(tree) for a in _changed_attributes(n)
                      if isinstance(a.value, gast.Name) and a.value.id == me}
    return frozenset(found)


def _changed_attributes(node: gast.AST) -> list[gast.Attribute]:
    """The attributes ``node`` sets or changes in place: ``o.a = v`` (and ``+=``),
    ``o.a[i] = v``, ``o.a.append(v)``, ``o.a.insert(i, v)``, ``o.a.pop()``."""
    if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Store):
        return [node]
    if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) and \
            isinstance(node.value, gast.Attribute):
        return [node.value]
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            node.func.attr in ("append", "insert", "pop") and isinstance(
                node.func.value, gast.Attribute):
        return [node.func.value]
    return []


def _followed(cls: Any) -> bool:
    """Is ``cls`` a class whose objects are followed through their attributes where the
    function builds one? Not exceptions, named tuples, dataclasses, library classes, nor
    classes with rules of their own for building or attributes, nor one whose ``__init__``
    is not Python's."""
    if not isinstance(cls, type) or type(cls) is not type or _is_library(cls) or \
            issubclass(cls, (BaseException, tuple, list, dict)) or \
            "__dataclass_fields__" in vars(cls) or any(
                name in vars(base) for base in cls.__mro__[:-1] for name in _OWN_RULES):
        return False
    init = inspect.getattr_static(cls, "__init__")
    return init is object.__init__ or isinstance(init, types.FunctionType)


def _returns_what_it_builds(fn: types.FunctionType) -> bool:
    """Does ``fn`` return an object it builds of a followed class (``return Dense(W, b)``,
    or ``model = Dense(W, b); ...; return model``), read from its source, with one return
    (so that every call returns that object)?"""
    try:
        tree = gast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return False
    if not isinstance(tree, gast.FunctionDef):
        return False
    nodes = list(_own_nodes(tree))
    built = {t.id for n in nodes if isinstance(n, gast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], gast.Name) and _builds_in(fn, n.value)
             for t in n.targets}
    returns = [n for n in nodes if isinstance(n, gast.Return)]
    return len(returns) == 1 and returns[0].value is not None and (
        _builds_in(fn, returns[0].value) or isinstance(returns[0].value, gast.Name)
        and returns[0].value.id in built)


def _own_nodes(node: gast.AST):
    """The nodes of a function's body, not those of the functions and classes inside it."""
    for child in gast.iter_child_nodes(node):
        yield child
        if not isinstance(child, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            yield from _own_nodes(child)


def _builds_in(fn: types.FunctionType, node: gast.expr) -> bool:
    """Is ``node`` a call, in ``fn``'s module, of a followed class?"""
    path = syntax.dotted_name(node.func) if isinstance(node, gast.Call) else None
    if path is None:
        return False
    head, *rest = path.split(".")
    value = fn.__globals__.get(head, getattr(builtins, head, MISSING))
    for attr in rest:
        value = getattr(value, attr, MISSING)
    return _followed(value)


# A class that defines one of these decides for itself what building it, or reading and
# writing its attributes, does: not followed as attributes-as-variables.
_OWN_RULES = ("__new__", "__slots__", "__getattribute__", "__getattr__", "__setattr__",
              "__delattr__", "__init_subclass__", "__class_getitem__")


def _is_library(cls: type) -> bool:
    module = (getattr(cls, "__module__", "") or "").split(".")[0]
    return module in ("builtins", "numpy", "scipy", "s2sgrad", "collections", "typing",
                      "functools", "math", "operator")
