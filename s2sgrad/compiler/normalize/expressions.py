"""Expressions to atoms: each operation becomes one statement whose operands are atoms.

Takes an expression of user-level Python; gives an atom that holds its value (``atom``) or
one operation on atoms (``operation``), after emitting, through the walk, the statements
that compute the operands, in Python's evaluation order:

    np.tanh(x @ w) + b      ->     _t1 = x @ w
                                   _t2 = np.tanh(_t1)
                                   _t3 = _t2 + b          (the atom: _t3)

An atom is a local name (at its current version), a constant, a tuple of constants, or a
static reference to something outside the function (``np.pi``). Expressions with control
flow become statements: ``a if c else b``, ``and``/``or`` and chained comparisons become
``if`` statements that assign a synthetic variable (each operand evaluated once, the rest
only while needed); a list comprehension or generator expression becomes a loop that
appends to a new list; a call of a nested function or lambda is inlined, its body in
place with fresh names for its locals, its free variables read as they are at the call and
its defaults as the def evaluated them (where it ran, as Python does):

    c = 2.0                        c = 2.0
    def scaled(v, k=c): ...   ->   k_scaled_default = c        (where the def runs)
    c = 5.0                        c_1 = 5.0
    scaled(x)                      v_scaled = x; k_scaled = k_scaled_default; ...

A name used before it is assigned, or not defined at all, is refused here.
"""

from __future__ import annotations

import collections
import functools

import gast
import numpy as np

from ... import syntax
from ..parse import MISSING
from .objects import Objects
from .returns import lift_returns
from .walk import Walk

POP_ITEM = "__pop_item__"  # xs_1 = __pop_item__(xs, i, item): xs without its item at i
# How a function passed on gets what it read from the differentiated function
_PASS_VALUES = (", and pass it the values it reads from here as arguments: "
                "`odeint(rhs, y0, t, args=(k,))` for `def rhs(y, t, k): ...`.")


def is_pop(call: gast.expr, local_names: frozenset[str]) -> bool:
    """``xs.pop()``, ``xs.pop(i)``, ``d.pop(k)`` on a local name (not ``d.pop(k, default)``:
    left a call, which the analysis refuses as a change it cannot follow)."""
    func = getattr(call, "func", None)
    return (isinstance(call, gast.Call) and isinstance(func, gast.Attribute)
            and func.attr == "pop" and isinstance(func.value, gast.Name)
            and func.value.id in local_names and len(call.args) <= 1 and not call.keywords
            and not any(isinstance(a, gast.Starred) for a in call.args))


class Expressions:
    def __init__(self, walk: Walk):
        self.walk = walk
        self.parsed, self.namer, self.versions = walk.parsed, walk.namer, walk.versions
        self.emit, self.branch = walk.emit, walk.branch
        self.local_functions: dict[str, gast.AST] = {}  # nested defs and lambdas by name
        # ... and the atoms their defaults were evaluated to where the def ran
        self.defaults: dict[str, dict[str, gast.expr]] = {}
        self._default_variables: dict[tuple[str, str], str] = {}  # (function, parameter)
        # g = functools.partial(f, a, k=b): what g's calls call, with a and b as atoms
        self.partials: dict[str, tuple[gast.expr, list, list]] = {}
        self._bindings: collections.Counter | None = None  # how often each name is bound
        self.inlining: set[str] = set()
        self.objects = Objects(walk, self)

    def atom(self, node: gast.expr) -> gast.expr:
        """An atom holding the value of ``node``, emitting statements as needed."""
        if self.is_atom(node):
            return self.load(node)
        if self.objects.reads(node):
            return self.objects.read(node)  # an attribute of an object built here
        if (isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd))
                and syntax.is_const(node.operand)
                and isinstance(node.operand.value, (int, float, complex))):
            value = node.operand.value
            return syntax.const(-value if isinstance(node.op, gast.USub) else value)
        if isinstance(node, (gast.ListComp, gast.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, gast.NamedExpr):  # (n := value): assigned here, read as n
            return self.operation(node.value, target=node.target)
        versions = self.versions
        if isinstance(node, gast.IfExp):
            result = versions.synthetic_variable()
            self.branch(node, self.atom(node.test), [syntax.located(syntax.assign(
                result, node.body), node.body)], [syntax.located(syntax.assign(
                    result, node.orelse), node.orelse)])
            return syntax.name(versions.current[result])
        if isinstance(node, gast.BoolOp):  # a and b: b only if a is true; the value is a or b
            result = versions.synthetic_variable()
            first, *rest = node.values
            value = self.atom(first)
            for other in rest:
                self.emit(syntax.assign(versions.define(result), value), node)
                taken = [syntax.located(syntax.assign(result, other), other)]
                is_and = isinstance(node.op, gast.And)
                self.branch(node, syntax.name(versions.current[result]),
                            taken if is_and else [], [] if is_and else taken)
                value = syntax.name(versions.current[result])
            return value
        if isinstance(node, gast.Compare) and len(node.ops) > 1:  # a < b < c
            result = versions.synthetic_variable()
            left = self.atom(node.left)
            self.chain(node, result, left, node.ops, node.comparators)
            return syntax.name(versions.current[result])
        return self.operation(node, temp=True)

    def chain(self, node: gast.Compare, result: str, left: gast.expr, ops: list,
              comparators: list) -> None:
        """``left op0 c0 op1 c1 ...``: each operand evaluated once, the rest only while true."""
        right = self.atom(comparators[0])
        first = syntax.compare(left, ops[:1], [right])
        self.emit(syntax.assign(self.versions.define(result), syntax.located(first, node)),
                  node)
        if len(ops) > 1:
            rest = syntax.compare(right, ops[1:], comparators[1:])
            self.branch(node, syntax.name(self.versions.current[result]),
                        [syntax.located(syntax.assign(result, rest), node)], [])

    def operation(self, node: gast.expr, target: gast.Name | None = None,
                  temp: bool = False) -> gast.expr:
        """Emit ``target = <one operation on atoms>`` (a new temporary if ``temp``); with
        neither, return the operation."""
        if isinstance(node, (gast.IfExp, gast.BoolOp, gast.ListComp, gast.GeneratorExp,
                             gast.NamedExpr)) or (
                isinstance(node, gast.Compare) and len(node.ops) > 1):
            node = syntax.located(self.atom(node), node)  # desugared to an if: copy its value
        if isinstance(node, gast.BinOp):
            op = syntax.binop(self.atom(node.left), node.op, self.atom(node.right))
        elif isinstance(node, gast.UnaryOp):
            op = syntax.unaryop(node.op, self.atom(node.operand))
        elif isinstance(node, gast.Compare):
            op = syntax.compare(self.atom(node.left), node.ops,
                                [self.atom(c) for c in node.comparators])
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id in self.partials:  # g(y) of g = partial(f, a, k=b): f(a, y, k=b)
            func, args, keywords = self.partials[node.func.id]
            given = {k.arg for k in node.keywords}
            call = syntax.call(syntax.clone(func), syntax.clone(args) + node.args, [
                (k, syntax.clone(v)) for k, v in keywords if k not in given] + [
                (k.arg, k.value) for k in node.keywords])
            return self.operation(syntax.located(call, node), target, temp)
        elif isinstance(node, gast.Call) and self.builtin_form(node) is not None:
            return self.operation(self.builtin_form(node), target, temp)
        elif isinstance(node, gast.Call) and self.objects.calls(node):
            op = self.objects.call(node)  # a method of an object built here, inlined
        elif isinstance(node, gast.Call) and self.objects.builds(node) is not None:
            raise self.objects.value_use(f"{syntax.dotted_name(node.func)}(...)", node,
                                         self.parsed.resolve(node.func))
        elif isinstance(node, gast.Call) and self.is_pop(node):
            op = self.pop(node)  # the item taken out, as an atom
        elif isinstance(node, gast.Call) and (isinstance(node.func, gast.Lambda) or (
                isinstance(node.func, gast.Name) and node.func.id in self.local_functions)):
            op = self.inline(node)  # the result of a nested function, as an atom
        elif isinstance(node, gast.Call):
            op = syntax.call(self.callee(node.func), [
                syntax.located(syntax.starred(self.atom(a.value)), a)
                if isinstance(a, gast.Starred)
                else self.atom(a) for a in node.args],
                [(k.arg, self.atom(k.value)) for k in node.keywords])
        elif self.objects.reads(node):
            op = self.objects.read(node)
        elif isinstance(node, gast.Attribute) and not self.is_atom(node):
            op = syntax.attribute(self.atom(node.value), node.attr)
        elif isinstance(node, gast.Subscript) and self.is_static(node.value) and \
                _one_of(self.parsed.resolve(node.value), np.r_, np.c_):
            return self.operation(self.concatenation(node), target, temp)
        elif isinstance(node, gast.Subscript):
            op = syntax.subscript(self.atom(node.value), self.index(node.slice))
        elif isinstance(node, (gast.Tuple, gast.List)):
            elts = [self.atom(e) for e in node.elts]
            op = syntax.tuple_(elts) if isinstance(node, gast.Tuple) else syntax.list_(elts)
        elif isinstance(node, gast.JoinedStr):  # f"w{k}": a string, its values as atoms
            if any(isinstance(p, gast.FormattedValue) and p.format_spec is not None and any(
                    isinstance(q, gast.FormattedValue) for q in p.format_spec.values)
                   for p in node.values):
                raise self.parsed.error("an f-string with a computed format spec", node,
                                        "Format the value with a constant spec.")
            op = syntax.formatted(node, [self.atom(p.value) for p in node.values
                                         if isinstance(p, gast.FormattedValue)])
        elif isinstance(node, gast.Dict):
            keys = [self.atom(k) if isinstance(k, gast.UnaryOp) else k for k in node.keys]
            node = syntax.located(syntax.dict_(keys, node.values), node)  # {-1: h0}
            if any(k is None or not syntax.is_const(k) for k in node.keys):
                raise self.parsed.error("dict keys must be constants here", node,
                                        "Write the keys out, e.g. {'W': W, 'b': b}.")
            op = syntax.dict_([syntax.clone(k) for k in node.keys],
                              [self.atom(v) for v in node.values])
        elif self.is_atom(node) or isinstance(node, gast.Lambda):  # an atom: a copy
            op = self.load(node)  # (a lambda is refused there: it is only ever called)
        else:
            raise syntax.unexpected("normalize", node, "an expression")
        syntax.located(op, node)
        if temp:  # numbered after the operands, so temporaries count in evaluation order
            target = syntax.name(self.namer.temp(), store=True)
        if target is None:
            return op
        name = self.versions.define(target.id)
        self.emit(syntax.assign(name, op), node)
        return syntax.located(syntax.name(name), node)  # a refusal of it points at node

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

    def concatenation(self, node: gast.Subscript) -> gast.Call:
        """``np.r_[a, 0:3, b]`` and ``np.c_[a, b]`` as the concatenations they make:

            np.r_[a, 0:3, b]   np.concatenate((np.atleast_1d(a), np.arange(0, 3, 1),
                                               np.atleast_1d(b)))
            np.c_[a, b]        np.concatenate((np.column_stack((a,)),
                                               np.column_stack((b,))), axis=-1)

        (``column_stack`` of one array makes a 1-d array a column and leaves others as
        they are, as ``np.c_`` does). Directives (``np.r_['0,2', ...]``) and complex steps
        (``0:1:5j``, a linspace) are refused."""
        rows = self.parsed.resolve(node.value) is np.r_
        path = syntax.dotted_name(node.value)
        module = path.rpartition(".")[0]  # np.r_ -> np, numpy.r_ -> numpy
        if not module or self.parsed.resolve(syntax.dotted_expr(module)) is not np:
            module = next((k for k, v in self.parsed.globals.items() if v is np), None)
        if module is None:
            raise self.parsed.error(f"{path}[...] in a module that does not import numpy "
                                    "as a name", node, "Write np.concatenate directly.")
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        parts = []
        for item in items:
            if syntax.is_const(item) and isinstance(item.value, str) or isinstance(
                    item, gast.Slice) and item.step is not None and syntax.is_const(
                    item.step) and isinstance(item.step.value, complex):
                raise self.parsed.error(
                    f"{'np.r_' if rows else 'np.c_'}[...] with a directive or a complex "
                    "step is not supported", item, "Write np.concatenate, np.stack or "
                    "np.linspace directly.")
            if isinstance(item, gast.Slice):
                parts.append(syntax.located(syntax.call(f"{module}.arange", [
                    item.lower or syntax.const(0), item.upper,
                    item.step or syntax.const(1)]), item))
            elif rows:
                parts.append(syntax.located(syntax.call(f"{module}.atleast_1d", [item]), item))
            else:
                parts.append(syntax.located(syntax.call(f"{module}.column_stack", [
                    syntax.tuple_([item])]), item))
        keywords = [] if rows else [("axis", syntax.const(-1))]
        return syntax.located(syntax.call(f"{module}.concatenate", [syntax.tuple_(parts)],
                                          keywords), node)

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

    def builtin_form(self, call: gast.Call) -> gast.expr | None:
        """Calls of builtins that build containers, as the displays and comprehensions they
        stand for (None for any other call):

            dict(a=x, b=y)       {'a': x, 'b': y}
            tuple([a, b])        (a, b)                  list((a, b))      [a, b]
            list(v for v in xs)  [v for v in xs]         max([a, b, c])    max(max(a, b), c)
            map(f, xs, ys)       [f(_a0, _a1) for _a0, _a1 in zip(xs, ys)]
            list(zip(xs, ys))    [(_a0, _a1) for _a0, _a1 in zip(xs, ys)]"""
        if not self.is_static(call.func) or any(isinstance(a, gast.Starred)
                                                for a in call.args):
            return None
        kind = self.parsed.resolve(call.func)
        args, keywords = call.args, call.keywords
        new = None
        if kind is dict and not args and keywords and all(k.arg for k in keywords):
            new = syntax.dict_([syntax.const(k.arg) for k in keywords],
                               [k.value for k in keywords])
        elif _one_of(kind, tuple, list) and len(args) == 1 and not keywords:
            (arg,) = args
            if isinstance(arg, gast.Call) and self.is_static(arg.func) and \
                    _one_of(self.parsed.resolve(arg.func), map, zip) and not arg.keywords:
                arg = self.mapped(arg)
            if isinstance(arg, (gast.Tuple, gast.List, gast.ListComp)):
                elts = getattr(arg, "elts", None)
                if kind is tuple and elts is not None:
                    new = syntax.tuple_(elts)
                elif kind is list:
                    new = syntax.list_(elts) if elts is not None else arg
            elif isinstance(arg, gast.GeneratorExp) and kind is list:
                new = syntax.list_comp(arg.elt, None, generators=arg.generators)
        elif kind is map and len(args) >= 2 and not keywords:
            new = self.mapped(call)
        elif _one_of(kind, max, min) and not keywords and (len(args) > 2 or len(args) == 1 and (
                isinstance(args[0], (gast.Tuple, gast.List)) and len(args[0].elts) >= 2)):
            items = args[0].elts if len(args) == 1 else args
            new = items[0]  # max(a, b, c) is max(max(a, b), c): the first largest wins
            for item in items[1:]:
                new = syntax.located(syntax.call(syntax.clone(call.func), [new, item]), item)
        return None if new is None else syntax.located(new, call)

    def mapped(self, call: gast.Call) -> gast.ListComp | gast.Call:
        """``map(f, xs, ...)`` or ``zip(xs, ...)`` as a list comprehension."""
        is_map = self.parsed.resolve(call.func) is map
        sequences = call.args[1:] if is_map else call.args
        if not sequences or any(isinstance(s, gast.Starred) for s in sequences):
            return call  # zip(*xs): as many sequences as xs holds, not known here
        names = [f"_a{k}" for k in range(len(sequences))]
        items = [syntax.name(n) for n in names]
        elt = syntax.call(syntax.clone(call.args[0]), items) if is_map else syntax.tuple_(items)
        target = syntax.name(names[0], store=True) if len(names) == 1 else syntax.tuple_(
            [syntax.name(n, store=True) for n in names], store=True)
        source = sequences[0] if len(sequences) == 1 else syntax.call(
            syntax.name("zip"), sequences)
        return syntax.located(syntax.list_comp(syntax.located(elt, call), target, source),
                              call)

    def callee(self, func: gast.expr) -> gast.expr:
        if self.is_static(func):
            return func
        if isinstance(func, gast.Attribute) and self.objects.is_object(func.value):
            return self.objects.read(func)  # a function held in an object's attribute
        if isinstance(func, gast.Attribute):  # a method call: x.sum(), (a @ b).mean()
            return syntax.located(syntax.attribute(self.atom(func.value), func.attr), func)
        return self.atom(func)

    def index(self, node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Slice):
            return syntax.slice_(*(None if part is None else self.atom(part)
                                   for part in (node.lower, node.upper, node.step)))
        if isinstance(node, gast.Tuple):
            return syntax.tuple_(self.index(e) for e in node.elts)
        return self.atom(node)

    # --- names ---------------------------------------------------------------------------

    def is_static(self, node: gast.expr) -> bool:
        """A Name/Attribute chain of non-local names (``np.pi``, ``math.sin``, ``SCALE``)."""
        path = syntax.dotted_name(node)
        if path is None:
            return False
        root = path.split(".")[0]
        return root not in self.parsed.local_names and root not in self.versions.synthetic \
            and root not in self.objects.classes

    def is_pop(self, call: gast.Call) -> bool:
        return is_pop(call, self.parsed.local_names | self.versions.synthetic)

    def pop(self, call: gast.Call) -> gast.expr:
        """``xs.pop(i)`` -> ``_t1 = xs[i]; xs_1 = __pop_item__(xs, i, _t1)``: the item read,
        then a new version of the container without it; the item is the call's value."""
        key = self.atom(call.args[0]) if call.args else syntax.const(-1)
        previous = self.load(call.func.value)
        item = syntax.name(self.namer.temp())
        self.emit(syntax.assign(item.id, syntax.subscript(previous, syntax.clone(key))), call)
        new = self.versions.define(call.func.value.id)
        self.emit(syntax.assign(new, syntax.call(syntax.name(POP_ITEM), [
            syntax.clone(previous), syntax.clone(key), syntax.clone(item)])), call)
        return item

    def is_atom(self, node: gast.expr) -> bool:
        return (isinstance(node, gast.Name) or syntax.is_const(node)
                or syntax.is_static_tuple(node) or self.is_static(node))

    def load(self, node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Name) and node.id in self.partials:
            raise self.parsed.error(
                f"the partial function '{node.id}' is used other than by calling it", node,
                "Call it directly, or make it outside the differentiated function and pass "
                "it in as an argument.")
        if isinstance(node, gast.Name) and node.id in self.local_functions:
            raise self.parsed.error(
                f"the nested function '{node.id}' is used other than by calling it", node,
                "Nested functions and lambdas are inlined where they are called; pass "
                f"values, not the function, or define it at module level{_PASS_VALUES}")
        if isinstance(node, gast.Lambda):
            raise self.parsed.error("a lambda is used other than by calling it", node,
                                    f"Define a module-level function instead{_PASS_VALUES}")
        if self.objects.is_value_of_its_own(node):
            raise self.objects.value_use(node.id, node)
        current = self.versions.current
        if isinstance(node, gast.Name) and node.id in self.versions.synthetic:
            return syntax.located(syntax.name(current[node.id]), node)
        if isinstance(node, gast.Name) and node.id in self.namer.generated:
            return syntax.clone(node)  # made by this pass: already in normal form
        if isinstance(node, gast.Name) and node.id in self.parsed.local_names:
            if node.id not in current:
                raise self.parsed.error(f"'{node.id}' is used before it is assigned", node)
            return syntax.located(syntax.name(current[node.id]), node)
        if isinstance(node, gast.Name) and self.parsed.lookup(node.id) is MISSING:
            raise self.parsed.error(f"name '{node.id}' is not defined", node,
                                    "Define it before the function is first called, or pass "
                                    "it in as an argument.")
        return syntax.clone(node)

    # --- desugared into statements -------------------------------------------------------

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
        if any(isinstance(a, gast.Starred) for a in call.args):
            raise self.parsed.error(f"a starred argument to the nested function {what}()",
                                    call, "Pass the arguments one by one.")
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
                                     and isinstance(n.ctx, gast.Store)}
        stem = what.rpartition(".")[2].strip("_") or what
        renames = {n: self.namer.fresh(f"{n}_{stem}" if what != "lambda" else f"_{n}")
                   for n in sorted(inner_locals - {receiver})}
        self.versions.synthetic |= set(renames.values())
        if receiver is not None:
            renames[receiver] = self_name
        for name in names:  # the parameters, bound to the arguments' atoms
            self.emit(syntax.assign(self.versions.define(renames[name]), bound[name]), call)
        result = self.versions.synthetic_variable()
        renamed = [syntax.rename(syntax.clone(s), renames) for s in body]
        for stmt in renamed:
            for n in gast.walk(stmt):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and \
                        n.id in renames:
                    n.id = renames[n.id]
        self.inlining.add(what)
        try:
            for stmt in lift_returns(self.parsed, renamed, result):
                self.walk.statement(stmt)
        finally:
            self.inlining.discard(what)
        return syntax.name(self.versions.current[result])

    def comprehension(self, node: gast.ListComp | gast.GeneratorExp) -> gast.expr:
        """``[f(x) for x in xs if c]`` -> a list built by a loop: ``_l = []``, then for each
        x (renamed: a comprehension's names stay inside it) ``if c: _l.append(f(x))``."""
        result = self.versions.synthetic_variable()
        self.emit(syntax.assign(self.versions.define(result), syntax.list_([])), node)
        renames = {}
        for generator in node.generators:
            for n in gast.walk(generator.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.namer.fresh(f"_{n.id}")
        elt = syntax.rename(syntax.clone(node.elt), renames)
        inner: list[gast.stmt] = [syntax.located(syntax.expr_stmt(syntax.call(
            syntax.attribute(syntax.name(result), "append"), [elt])), node.elt)]
        for generator in reversed(node.generators):
            for condition in reversed(generator.ifs):
                test = syntax.rename(syntax.clone(condition), renames)
                inner = [syntax.located(syntax.if_(test, inner, []), condition)]
            target = _rename_store(syntax.clone(generator.target), renames)
            iterable = syntax.rename(syntax.clone(generator.iter), renames)
            inner = [syntax.located(syntax.for_(target, iterable, inner), node)]
        for stmt in inner:
            self.walk.statement(stmt)
        return syntax.name(self.versions.current[result])


def _defaults(function: gast.FunctionDef | gast.Lambda) -> dict[str, gast.expr]:
    """The default expression of each positional parameter that has one."""
    args = function.args
    names = [a.id for a in args.posonlyargs + args.args]
    return dict(zip(names[len(names) - len(args.defaults):], args.defaults, strict=True))


def _reads_variables(default: gast.expr, expressions: Expressions) -> bool:
    """Whether a default's value depends on when it is evaluated: anything but a constant,
    a name from outside the function (``np.pi``; ``global`` is refused, so it never
    changes here) and a function (a lambda or a nested def, only ever called)."""
    if isinstance(default, gast.Lambda) or isinstance(default, gast.Name) and (
            default.id in expressions.local_functions):
        return False
    return not (syntax.is_const(default) or syntax.is_static_tuple(default)
                or expressions.is_static(default))


def _one_of(value: object, *options: object) -> bool:
    """Is ``value`` one of ``options`` (by identity: ``==`` of an array with a function or
    with ``np.r_`` compares, or iterates, element by element)?"""
    return any(value is option for option in options)


def _rename_store(target: gast.expr, renames: dict[str, str]) -> gast.expr:
    for n in gast.walk(target):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    return target
