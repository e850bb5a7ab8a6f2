"""Nested functions, lambdas and partials: each call of one inlined, its body in place.

Takes the nested defs, lambdas and ``functools.partial`` calls the function binds to a name,
and the calls of them; gives, through the walk, the body of the function called in place of
each call, with fresh names for its locals, its free variables read as they are at the call
and its defaults as the def evaluated them (where it ran, as Python does), and an atom that
holds its result:

    c = 2.0                        c = 2.0
    def scaled(v, k=c): ...   ->   k_scaled_default = c        (where the def runs)
    c = 5.0                        c_1 = 5.0
    scaled(x)                      v_scaled = x; k_scaled = k_scaled_default; ...
    g = partial(f, a, k=b)         (its arguments evaluated here, as atoms)
    g(y)                           f(a, y, k=b)

A name is followed this way only if nothing else ever binds it, so that every call of it
means this function. A variable the function declares ``nonlocal`` is the enclosing
function's own: the inlined body assigns its next version there, as Python's call
rebinds it. Starred and ``**`` arguments are passed item by item (``spreads``).
Recursion and ``*args``, ``**kwargs`` or keyword-only parameters are refused. A function
used other than by calling it (passed to a function, held in a container, returned) is
made into a value (``value``): the tuple of what it closes over, which the analysis knows
as a closure of the function that stands for all of them (``parse.nested_function``). The methods of an object the function builds are inlined here too
(``objects``), ``self`` standing for the object.
"""

from __future__ import annotations

import collections
import functools
from typing import Any

import gast

from ... import syntax
from ..parse import MISSING, nested_code, nested_function
from .returns import lift_returns
from .walk import Walk


class Functions:
    def __init__(self, walk: Walk, expressions: Any):
        self.walk = walk
        self.parsed, self.namer, self.versions = walk.parsed, walk.namer, walk.versions
        self.emit = walk.emit
        self.atom, self.is_static = expressions.atom, expressions.is_static
        self.expressions = expressions
        self.local_functions: dict[str, gast.AST] = {}  # nested defs and lambdas by name
        # ... and the atoms their defaults were evaluated to where the def ran
        self.defaults: dict[str, dict[str, gast.expr]] = {}
        self._default_variables: dict[tuple[str, str], str] = {}  # (function, parameter)
        # g = functools.partial(f, a, k=b): what g's calls call, with a and b as atoms
        self.partials: dict[str, tuple[gast.expr, list, list]] = {}
        self._bindings: collections.Counter | None = None  # how often each name is bound
        self.inlining: set[str] = set()
        self.originals: dict[str, str] = {}  # an inlined local's name -> the user's name
        self.generators: set[str] = set()  # nested generator functions: calls make lists
        # nested functions and lambdas made into values (``value``): the statement that
        # makes each, with the function that stands for its closures and whether it is
        # made for one call only (see ``value``); and the names those statements assign
        self.closures: dict[gast.stmt, tuple[Any, bool]] = {}
        self.closure_names: set[str] = set()
        self.results: set[str] = set()  # the variables returns assign (lift_returns)
        self._valuing: list[str] = []  # the functions being made into values, outermost first

    def bindings(self) -> collections.Counter:
        """How often each name is bound in the function's source (assigned, or the name of
        a nested def)."""
        if self._bindings is None:
            self._bindings = collections.Counter(
                n.id for n in gast.walk(self.parsed.node)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
            for n in gast.walk(self.parsed.node):
                if isinstance(n, gast.FunctionDef) and n is not self.parsed.node:
                    self._bindings[n.name] += 1
        return self._bindings

    def define_function(self, name: str, function: gast.AST, where: gast.AST) -> None:
        """``name`` holds a nested def or a lambda, inlined where it is called: only if
        nothing else ever binds the name, so that every call means this function."""
        if self.bindings()[name] > 1:
            raise self.parsed.error(
                f"'{name}' is bound to a function here and is bound again elsewhere in the "
                "function (in another branch, a loop, or later): which function a call of "
                f"'{name}' means would be known only at run time", where,
                "Give each function its own name, and choose between the calls with if/else.")
        if isinstance(function, gast.AST):
            self.local_functions[name] = function
            self.defaults[name] = self.evaluated_defaults(function, name)

    def evaluated_defaults(self, function: gast.FunctionDef | gast.Lambda,
                           name: str | None = None) -> dict[str, gast.expr]:
        """The defaults of a nested def or lambda, evaluated here, where the def runs (as
        Python evaluates them, once): each parameter's default as an atom. One that reads
        the function's variables is assigned to a variable of its own (``default_variable``,
        versioned and carried through loops like the user's), which the calls of ``name``
        read: the value the default had here, whatever the names in it hold by then. A
        lambda called where it is written (no ``name``) uses its defaults at once. A lambda
        (or a nested function) given as a default is kept as it is: a function is only ever
        called, and refused where it is used otherwise."""
        found = {}
        for param, default in _defaults(function).items():
            if not _reads_variables(default, self):
                found[param] = default if isinstance(default, gast.Lambda) or isinstance(
                    default, gast.Name) and default.id in self.local_functions else \
                    self.atom(default)
                continue
            atom = self.atom(default)
            if name is not None:
                variable = self.default_variable(name, param)
                self.emit(syntax.assign(self.versions.define(variable), atom), default)
                atom = syntax.name(variable)
            found[param] = atom
        return found

    def default_variable(self, function: str, param: str) -> str:
        """The variable that holds the default of ``param`` of the nested function (or
        lambda) ``function``, as its def evaluated it."""
        key = (function, param)
        if key not in self._default_variables:
            self._default_variables[key] = self.namer.fresh(f"{param}_{function}_default")
            self.versions.synthetic.add(self._default_variables[key])
        return self._default_variables[key]

    def default_variables(self, stmts: list[gast.stmt]) -> set[str]:
        """The default variables the defs (and lambdas) in ``stmts`` assign: a loop whose
        body holds one carries them, for calls after it or in the next iteration."""
        found = set()
        for n in (n for stmt in stmts for n in gast.walk(stmt)):
            if isinstance(n, gast.FunctionDef):
                name, function = n.name, n
            elif isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                    n.targets[0], gast.Name) and isinstance(n.value, gast.Lambda):
                name, function = n.targets[0].id, n.value
            else:
                continue
            found |= {self.default_variable(name, param)
                      for param, default in _defaults(function).items()
                      if _reads_variables(default, self)}
        return found

    def nonlocal_variables(self, stmts: list[gast.stmt]) -> set[str]:
        """The variables that calls in ``stmts`` of nested functions (defined before or
        there) may assign through ``nonlocal``: a loop whose body calls one carries them."""
        defs = {n.name: n for stmt in stmts for n in gast.walk(stmt)
                if isinstance(n, gast.FunctionDef)}
        found = set()
        for n in (n for stmt in stmts for n in gast.walk(stmt)):
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name):
                function = defs.get(n.func.id) or self.local_functions.get(n.func.id)
                if isinstance(function, gast.FunctionDef):
                    found |= {name for d in gast.walk(function)
                              if isinstance(d, gast.Nonlocal) for name in d.names}
        return found

    def value(self, node: gast.Name | gast.Lambda, argument: bool = False) -> gast.expr:
        """A nested function or lambda used as a value (passed to a function, held in a
        container, returned): the tuple of the values of its free variables, read here,
        which the analysis knows as a closure of the function that stands for all of them
        (``parse.nested_function``). A callee that receives it is compiled for that
        function, and a call of it passes the tuple first, so that gradients flow back to
        what it closes over::

            def rhs(t, y): return beta * y        rhs = (beta,)
            y = euler(rhs, y, t0, t1, n)    ->    y_1 = euler(rhs, y, t0, t1, n)

        Python's closures read their variables when they are called, not when they are
        made: the tuple holds what they will read only where each variable is assigned
        once, not in a loop (or, for a function made for one call (``argument``: it is an
        argument of the call), in a loop), and is never changed in place; anything else is
        refused here."""
        if isinstance(node, gast.Lambda):
            function, name = node, None
        else:
            function, name = self.local_functions[node.id], node.id
        what = f"the nested function '{name}'" if name else "a lambda"
        shown = name or "the lambda"
        parsed = self.parsed
        if name in self._valuing or name in self.generators or name in self.inlining:
            raise parsed.error(f"{what} refers to itself, as a value", node,
                               "Write the recursion as a loop.")
        if _declared_nonlocal(function.body if isinstance(function, gast.FunctionDef)
                              else []):
            raise parsed.error(
                f"{what} is used as a value and assigns the variables of the function around "
                "it (nonlocal), which is not followed", node,
                f"Return the new values from {shown} instead.")
        if any(not (syntax.is_const(d) or syntax.is_static_tuple(d))
               for d in function.args.defaults) or any(
                d is not None for d in function.args.kw_defaults) or \
                getattr(function, "decorator_list", None):
            raise parsed.error(
                f"{what} is used as a value and has defaults that are not constants, or "
                "decorators: not followed", node,
                "Give its defaults as constants, and pass other values as arguments.")
        originals = self.originals
        params = tuple(originals.get(p, p) for p in _all_params(function.args))
        code = nested_code(parsed.fn, function, params)
        if code is None:
            raise parsed.error(
                f"{what} is used as a value, and its code is not found in "
                f"{getattr(parsed.fn, '__qualname__', 'the function')}", node,
                "Define it in the differentiated function itself, or at module level.")
        used = {}  # the name each free variable of the code has here
        for n in gast.walk(function):
            if isinstance(n, gast.Name):
                used.setdefault(originals.get(n.id, n.id), n.id)
        self._valuing.append(name)
        try:
            atoms = [self.captured(used.get(free, free), free, shown, node, argument)
                     for free in code.co_freevars]
        finally:
            self._valuing.pop()
        defaults = tuple(syntax.const_value(d) for d in function.args.defaults)
        holder = name or "closure"
        stand_in = nested_function(code, parsed.fn.__globals__, defaults, holder)
        target = self.namer.fresh(name or "closure")  # (a version of the user's name)
        self.closure_names.add(target)
        self.emit(syntax.assign(target, syntax.tuple_(atoms)), node)
        self.closures[self.walk.out[-1]] = (stand_in, argument)
        return syntax.located(syntax.name(target), node)

    def captured(self, here: str, free: str, shown: str, node: gast.AST,
                 argument: bool) -> gast.expr:
        """The atom of a variable a function made into a value closes over: ``here`` is its
        name in this function (a local of an inlined function is renamed), ``free`` its
        name in the function's code."""
        parsed = self.parsed
        if here in self.local_functions:
            return self.value(syntax.located(syntax.name(here), node), argument)
        if here not in parsed.local_names and here not in self.versions.synthetic:
            if parsed.lookup(free) is MISSING:  # a variable of a function around this one
                raise parsed.error(f"'{free}', which {shown} reads, is not defined when it "
                                   "is used as a value here", node,
                                   "Assign it before this line.")
            return syntax.located(syntax.name(free), node)
        user = self.originals.get(here, here)
        sites, changed = _binding_sites(parsed.node, user)
        if len(sites) != 1 or changed:
            raise parsed.error(
                f"{shown} is used as a value and reads '{user}', which is "
                f"{'changed in place' if changed else 'assigned more than once'} in the "
                f"function: Python's closures read their variables when they are called, "
                "not when they are made, so which value each call reads is not followed",
                node, f"Give the value {shown} reads a name of its own, assigned once, or "
                f"pass it to {shown} as an argument.")
        if sites[0] and not argument:
            raise parsed.error(
                f"{shown} is used as a value and reads '{user}', which is assigned in a "
                "loop: Python's closures read their variables when they are called, so a "
                "function kept from an earlier step would read the later value", node,
                f"Pass {shown} straight to the function that calls it, or pass '{user}' to "
                f"{shown} as an argument.")
        return self.expressions.load(syntax.located(syntax.name(here), node))

    def partial(self, name: str, call: gast.Call) -> bool:
        """``g = functools.partial(f, a, k=b)`` with f a function known here (or a nested
        one): its arguments evaluated now, its calls written out as calls of f."""
        if not (self.is_static(call.func) and self.parsed.resolve(call.func) is
                functools.partial and call.args) or any(
                isinstance(a, gast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):
            return False
        func = call.args[0]
        if not (self.is_static(func) or isinstance(func, gast.Name) and (
                func.id in self.local_functions)):
            return False
        args = [self.atom(a) for a in call.args[1:]]
        keywords = [(k.arg, self.atom(k.value)) for k in call.keywords]
        self.define_function(name, None, call)
        self.partials[name] = (func, args, keywords)
        return True

    def inline(self, call: gast.Call, function: gast.AST | None = None,
               self_name: str | None = None, what: str | None = None,
               defaults: dict[str, gast.expr] | None = None) -> gast.expr:
        """A call of a nested function or lambda, with its body in place: its parameters and
        locals get fresh names, its free variables read the enclosing ones as they are now
        (as Python's closures do), and its returns assign one result. The arguments are
        evaluated in the call's order; a parameter not given reads its default as the def
        evaluated it (``defaults``: the atoms of ``evaluated_defaults``; a lambda called
        where it is written evaluates them here, before the arguments). A method of an
        object built here (``function`` given) has ``self`` stand for the object
        ``self_name``, and its defaults are given."""
        if function is None and isinstance(call.func, gast.Lambda):
            function = call.func
            defaults = self.evaluated_defaults(function)
        elif function is None:
            function = self.local_functions[call.func.id]
            defaults = self.defaults[call.func.id]
        what = what or getattr(function, "name", "lambda")
        if what in self.inlining:
            raise self.parsed.error(f"the nested function {what}() calls itself: recursion "
                                    "is not supported", call, "Write it as a loop.")
        args = function.args
        if any(isinstance(a, gast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):  # g(*xs), g(**d): item by item
            call = self.expressions.spreads.inlined_arguments(call)
            if call is None:  # the analysis asks for the size first (or refuses)
                return syntax.const(None)
        if args.vararg or args.kwarg or args.kwonlyargs:
            raise self.parsed.error("nested functions with *args, **kwargs or keyword-only "
                                    "parameters are not supported", call,
                                    "Use plain parameters.")
        names = [a.id for a in args.posonlyargs + args.args]
        defaults = defaults or {}
        receiver = names.pop(0) if self_name is not None and names else None
        given: dict[str, gast.expr] = dict(zip(names, call.args, strict=False))
        if len(call.args) > len(names):
            raise self.parsed.error(f"{what}() takes {len(names)} arguments", call)
        for keyword in call.keywords:
            if keyword.arg not in names or keyword.arg in given:
                raise self.parsed.error(f"{what}() got an unexpected argument "
                                        f"'{keyword.arg}'", keyword.value)
            given[keyword.arg] = keyword.value
        missing = [name for name in names if name not in given and name not in defaults]
        if missing:
            raise self.parsed.error(f"{what}() is missing the argument '{missing[0]}'", call)
        bound = {name: self.atom(value) for name, value in given.items()}  # in call order
        for name in names:
            if name not in bound:
                bound[name] = self.atom(defaults[name])
        body = function.body if isinstance(function, gast.FunctionDef) else [
            syntax.located(syntax.ret(function.body), function.body)]
        inner_locals = set(names) | {n.id for s in body for n in gast.walk(s)
                                     if isinstance(n, gast.Name)
                                     and isinstance(n.ctx, (gast.Store, gast.Del))}
        inner_locals -= _declared_nonlocal(body)  # the enclosing function's variables
        stem = what.rpartition(".")[2].strip("_") or what
        renames = {n: self.namer.fresh(f"{n}_{stem}" if what != "lambda" else f"_{n}")
                   for n in sorted(inner_locals - {receiver})}
        self.versions.synthetic |= set(renames.values())
        self.originals.update({new: old for old, new in renames.items()})
        if receiver is not None:
            renames[receiver] = self_name
        for name in names:  # the parameters, bound to the arguments' atoms
            self.emit(syntax.assign(self.versions.define(renames[name]), bound[name]), call)
        result = self.versions.synthetic_variable()
        self.results.add(result)
        renamed = [syntax.rename(syntax.clone(s), renames) for s in body]
        for stmt in renamed:
            for n in gast.walk(stmt):
                if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)) \
                        and n.id in renames:
                    n.id = renames[n.id]
                elif isinstance(n, gast.Nonlocal):  # of a def inside: these variables
                    n.names = [renames.get(name, name) for name in n.names]
        self.inlining.add(what)
        try:
            for stmt in lift_returns(self.parsed, renamed, result):
                self.walk.statement(stmt)
        finally:
            self.inlining.discard(what)
        if self.expressions.objects.is_object(syntax.name(result)):
            return syntax.name(result)  # it returned an object it built: that object
        return syntax.name(self.versions.current[result])


def _declared_nonlocal(body: list[gast.stmt]) -> set[str]:
    """The names a function's body declares ``nonlocal`` (not those of defs inside it)."""
    found, todo = set(), list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Nonlocal):
            found |= set(node.names)
        elif not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(node))
    return found


def _all_params(args: gast.arguments) -> list[str]:
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    return names + [a.id for a in (args.vararg, args.kwarg) if a is not None]


_CHANGES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                      "setdefault", "popitem", "sort", "reverse", "fill", "resize",
                      "__setitem__", "__iadd__"})


def _binding_sites(function: gast.FunctionDef, name: str) -> tuple[list[bool], bool]:
    """Where ``name`` is bound in ``function``'s source, nested functions included (a
    parameter, an assignment, a loop's target, a del): per site, whether it is in a loop
    of the function it belongs to; and whether the value it names is changed in place
    anywhere (an element or attribute written, a method that changes its object)."""
    sites: list[bool] = []
    changed = False

    def visit(node: gast.AST, in_loop: bool) -> None:
        nonlocal changed
        if isinstance(node, (gast.FunctionDef, gast.Lambda)) and node is not function:
            in_loop = False
        elif isinstance(node, (gast.For, gast.While, gast.comprehension)):
            in_loop = True
        if isinstance(node, gast.Name) and node.id == name and isinstance(
                node.ctx, (gast.Store, gast.Param, gast.Del)):
            sites.append(in_loop)
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(
                node.ctx, (gast.Store, gast.Del)) and _root(node) == name:
            changed = True
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in _CHANGES and _root(node.func.value) == name:
            changed = True
        for child in gast.iter_child_nodes(node):
            visit(child, in_loop)

    visit(function, False)
    return sites, changed


def _root(node: gast.expr) -> str | None:
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _defaults(function: gast.FunctionDef | gast.Lambda) -> dict[str, gast.expr]:
    """The default expression of each positional parameter that has one."""
    args = function.args
    names = [a.id for a in args.posonlyargs + args.args]
    return dict(zip(names[len(names) - len(args.defaults):], args.defaults, strict=True))


def _reads_variables(default: gast.expr, functions: Functions) -> bool:
    """Whether a default's value depends on when it is evaluated: anything but a constant,
    a name from outside the function (``np.pi``; ``global`` is refused, so it never
    changes here) and a function (a lambda or a nested def, only ever called)."""
    if isinstance(default, gast.Lambda) or isinstance(default, gast.Name) and (
            default.id in functions.local_functions):
        return False
    return not (syntax.is_const(default) or syntax.is_static_tuple(default)
                or functions.is_static(default))
