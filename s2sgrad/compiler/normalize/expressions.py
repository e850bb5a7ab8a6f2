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
appends to a new list, a dict comprehension one that assigns the items of a new dict. A call of a nested function, a lambda or a partial is inlined, its
body in place (``functions``), and one used as a value is the tuple of what it closes
over (``Functions.value``); a call of a builtin that builds a container, and an index
of ``np.r_`` or ``np.c_``, is normalized as the expression it stands for (``forms``).

A name used before it is assigned, or not defined at all, is refused here.
"""

from __future__ import annotations

from typing import Any

import gast
import numpy as np

from ... import syntax
from ..parse import MISSING, Parsed
from .forms import Forms
from .functions import Functions
from .objects import Objects
from .spreads import Spreads
from .walk import Walk

POP_ITEM = "__pop_item__"  # xs_1 = __pop_item__(xs, i, item): xs without its item at i


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
        self.functions = Functions(walk, self)  # nested functions, lambdas and partials
        self.forms = Forms(walk, self)  # calls that stand for other expressions
        self.objects = Objects(walk, self)
        self.spreads = Spreads(walk, self, walk.lengths)  # g(*xs), first, *rest = xs
        self.outputs: Any = None  # calls that write into an array (outputs.py), set after
        self.mappings: set[gast.expr] = set()  # the m of {**m}, which loops copy by key
        self.arguments: set[int] = set()  # ids of the nodes passed straight to a call

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
        if isinstance(node, (gast.ListComp, gast.GeneratorExp, gast.DictComp)):
            return self.comprehension(node)
        if isinstance(node, gast.Dict) and any(k is None for k in node.keys):
            return self.spread_display(node)
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
                             gast.DictComp, gast.NamedExpr)) or (
                isinstance(node, gast.Compare) and len(node.ops) > 1) or (
                isinstance(node, gast.Dict) and any(k is None for k in node.keys)):
            node = syntax.located(self.atom(node), node)  # desugared to an if: copy its value
        functions = self.functions
        if isinstance(node, gast.BinOp):
            node = self.converted(node)
            op = syntax.binop(self.atom(node.left), node.op, self.atom(node.right))
        elif isinstance(node, gast.UnaryOp):
            op = syntax.unaryop(node.op, self.atom(node.operand))
        elif isinstance(node, gast.Compare):
            op = syntax.compare(self.atom(node.left), node.ops,
                                [self.atom(c) for c in node.comparators])
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id in functions.partials:  # g(y) of g = partial(f, a, k=b): f(a, y, k=b)
            func, args, keywords = functions.partials[node.func.id]
            given = {k.arg for k in node.keywords}
            call = syntax.call(syntax.clone(func), syntax.clone(args) + node.args, [
                (k, syntax.clone(v)) for k, v in keywords if k not in given] + [
                (k.arg, k.value) for k in node.keywords])
            return self.operation(syntax.located(call, node), target, temp)
        elif isinstance(node, gast.Call) and self.outputs.output_of(node) is not None:
            written = self.outputs.write_output(node, *self.outputs.output_of(node))
            return self.operation(written, target, temp)  # np.add(a, b, out=c) is c
        elif isinstance(node, gast.Call) and self.forms.builtin_form(node) is not None:
            return self.operation(self.forms.builtin_form(node), target, temp)
        elif isinstance(node, gast.Call) and self.is_extremum(node):
            return self.operation(syntax.located(self.extremum(node), node), target, temp)
        elif isinstance(node, gast.Call) and self.objects.calls(node):
            op = self.objects.call(node)  # a method of an object built here, inlined
            if target is not None and self.objects.is_object(op):  # it returned one
                self.objects.alias(target.id, op, node)
                return syntax.located(syntax.name(target.id), node)
        elif isinstance(node, gast.Call) and self.objects.builds(node) is not None:
            raise self.objects.value_use(f"{syntax.dotted_name(node.func)}(...)", node,
                                         self.parsed.resolve(node.func))
        elif isinstance(node, gast.Call) and self.is_pop(node):
            op = self.pop(node)  # the item taken out, as an atom
        elif isinstance(node, gast.Call) and (isinstance(node.func, gast.Lambda) or (
                isinstance(node.func, gast.Name) and node.func.id in functions.local_functions)):
            op = functions.inline(node)  # the result of a nested function, as an atom
        elif isinstance(node, gast.Call):
            node = self.converted(node)
            func = self.callee(node.func)
            op = syntax.call(func, self.spreads.call_arguments(node.args),
                             self.spreads.call_keywords(node.keywords))
        elif self.objects.reads(node):
            op = self.objects.read(node)
        elif isinstance(node, gast.Attribute) and not self.is_atom(node):
            op = syntax.attribute(self.atom(node.value), node.attr)
        elif self.forms.is_concatenation(node):  # np.r_[...], np.c_[...]
            return self.operation(self.forms.concatenation(node), target, temp)
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

    def converted(self, call: gast.Call | gast.BinOp) -> gast.Call | gast.BinOp:
        """``call`` with each argument the analysis found to be a list or tuple where NumPy
        converts it written as that conversion (``np.mean(losses)``: ``np.mean(np.asarray
        (losses))``; ``x * [1.0, 2.0]``: ``x * np.asarray([1.0, 2.0])``), so that the rule
        sees the array NumPy makes."""
        span = tuple(getattr(call, a, None) for a in (
            "lineno", "col_offset", "end_lineno", "end_col_offset"))
        slots = {site[4] for site in self.walk.conversions if site[:4] == span}
        if not slots:
            return call
        numpy = numpy_name(self.parsed)

        def convert(value: gast.expr) -> gast.expr:
            return syntax.located(syntax.call(f"{numpy}.asarray", [value]), value)

        if isinstance(call, gast.BinOp):
            return syntax.replace(call, **{side: convert(getattr(call, side))
                                           for side in ("left", "right") if side in slots})
        return syntax.replace(
            call, args=[convert(a) if i in slots else a for i, a in enumerate(call.args)],
            keywords=[syntax.replace(k, value=convert(k.value)) if k.arg in slots else k
                      for k in call.keywords])

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
        self.emit(syntax.assign(new, syntax.located(syntax.call(syntax.name(POP_ITEM), [
            syntax.clone(previous), syntax.clone(key), syntax.clone(item)]), call)), call)
        return item

    def is_atom(self, node: gast.expr) -> bool:
        return (isinstance(node, gast.Name) or syntax.is_const(node)
                or syntax.is_static_tuple(node) or self.is_static(node))

    def load(self, node: gast.expr) -> gast.expr:
        functions = self.functions
        if isinstance(node, gast.Name) and node.id in functions.partials:
            raise self.parsed.error(
                f"the partial function '{node.id}' is used other than by calling it", node,
                "Call it directly, or make it outside the differentiated function and pass "
                "it in as an argument.")
        if isinstance(node, gast.Name) and node.id in functions.closure_names:
            return syntax.clone(node)  # a function made into a value here (below)
        if isinstance(node, gast.Name) and node.id in functions.local_functions or \
                isinstance(node, gast.Lambda):  # a value: what it closes over, in a tuple
            return functions.value(node, argument=id(node) in self.arguments)
        if self.objects.is_value_of_its_own(node):
            raise self.objects.value_use(node.id, node)
        current = self.versions.current
        if isinstance(node, gast.Name) and node.id in self.versions.deleted:
            raise self.parsed.error(
                f"'{self.user_name(node.id)}' is read after `del "
                f"{self.user_name(node.id)}` (on this path, or on one that leads here): "
                "Python raises an UnboundLocalError", node,
                "Read it before the del, or assign it again first.")
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

    def user_name(self, name: str) -> str:
        """The name the user wrote for a variable (a nested function's local is renamed
        ``v_fn`` where it is inlined)."""
        original = self.functions.originals.get(name)
        return name if original is None else original

    # --- desugared into statements -------------------------------------------------------

    def comprehension(self, node: gast.ListComp | gast.GeneratorExp | gast.DictComp
                      ) -> gast.expr:
        """``[f(x) for x in xs if c]`` -> a list built by a loop: ``_l = []``, then for each
        x (renamed: a comprehension's names stay inside it) ``if c: _l.append(f(x))``;
        ``{k: f(x) for ...}`` the same way, a dict built by ``_d[k] = f(x)`` (the key
        evaluated first, as Python does)."""
        result = self.versions.synthetic_variable()
        is_dict = isinstance(node, gast.DictComp)
        empty = syntax.dict_([], []) if is_dict else syntax.list_([])
        self.emit(syntax.assign(self.versions.define(result), empty), node)
        renames = {}
        for generator in node.generators:
            for n in gast.walk(generator.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.namer.fresh(f"_{n.id}")
        if is_dict:
            inner = self.dict_item(result, syntax.rename(syntax.clone(node.key), renames),
                                   syntax.rename(syntax.clone(node.value), renames))
        else:
            elt = syntax.rename(syntax.clone(node.elt), renames)
            inner = [syntax.located(syntax.expr_stmt(syntax.call(
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

    def spread_display(self, node: gast.Dict) -> gast.expr:
        """``{**m, 'k': v, **e}`` -> a dict built in the order Python builds it: ``_d = {}``,
        then the items of m copied by a loop over its keys (unrolled where the analysis
        knows them), ``_d['k'] = v``, the items of e; each mapping evaluated once, where it
        stands:

            _d = {}
            for _k in m:
                _d[_k] = m[_k]
            _d['k'] = v"""
        values = list(node.values)
        if node in self.forms.calls:  # dict(m, k=v): its arguments first, as for any call
            values = [self.atom(v) for v in values]
        result = self.versions.synthetic_variable()
        self.emit(syntax.assign(self.versions.define(result), syntax.dict_([], [])), node)
        for key, value in zip(node.keys, values, strict=True):
            if key is not None:
                for stmt in self.dict_item(result, key, value):
                    self.walk.statement(stmt)
                continue
            mapping = syntax.located(self.atom(value), value)
            self.mappings.add(mapping)  # the analysis refuses what is not a dict
            k = syntax.name(self.namer.fresh("_k"))
            copy = self.dict_item(result, syntax.located(syntax.clone(k), value),
                                  syntax.located(syntax.subscript(syntax.clone(mapping), k),
                                                 value))
            self.walk.statement(syntax.located(syntax.for_(
                syntax.name(k.id, store=True), mapping, copy), value))
        return syntax.name(self.versions.current[result])

    def dict_item(self, result: str, key: gast.expr, value: gast.expr) -> list[gast.stmt]:
        """``result[key] = value``, the key evaluated before the value."""
        stmts = []
        if not (isinstance(key, gast.Name) or syntax.is_const(key)):
            computed = self.namer.temp()
            stmts.append(syntax.located(syntax.assign(computed, key), key))
            key = syntax.located(syntax.name(computed), key)
        target = syntax.located(syntax.subscript(syntax.name(result), key, store=True), value)
        return stmts + [syntax.located(syntax.assign(target, value), value)]


    def is_extremum(self, call: gast.Call) -> bool:
        """``max(xs)`` or ``min(xs)`` of one iterable (``max(a, b)`` and ``max([a, b, c])``
        are calls of the two-argument rule; ``key=`` and ``default=`` are not taken)."""
        return self.is_static(call.func) and len(call.args) == 1 and not call.keywords and \
            not isinstance(call.args[0], gast.Starred) and any(
                self.parsed.resolve(call.func) is f for f in (max, min))

    def extremum(self, call: gast.Call) -> gast.expr:
        """``max(xs)`` as Python computes it: the first item, then each later one that is
        larger (``min``: smaller), so the first of equal largest items is the result::

            if len(xs) == 0: raise ValueError(...)
            _best = xs[0]
            for _item in xs[1:]:
                if _item > _best:
                    _best = _item
        """
        largest = self.parsed.resolve(call.func) is max
        items = self.atom(call.args[0])
        best = self.versions.synthetic_variable()
        item = self.namer.fresh("_item")
        empty = syntax.compare(syntax.call(syntax.name("len"), [syntax.clone(items)]),
                               ["Eq"], [syntax.const(0)])
        stmts = [
            syntax.if_(empty, [syntax.raise_("ValueError", _EMPTY[largest])], []),
            syntax.assign(best, syntax.subscript(syntax.clone(items), syntax.const(0))),
            syntax.for_(syntax.name(item, store=True), syntax.subscript(
                syntax.clone(items), syntax.slice_(syntax.const(1))), [syntax.if_(
                    syntax.compare(syntax.name(item), ["Gt" if largest else "Lt"],
                                   [syntax.name(best)]),
                    [syntax.assign(best, syntax.name(item))], [])])]
        for stmt in stmts:
            self.walk.statement(syntax.located(stmt, call))
        return syntax.name(self.versions.current[best])


def _empty_message(fn: Any) -> str:
    try:
        fn([])
    except ValueError as error:
        return str(error)
    raise AssertionError(f"{fn.__name__}([]) did not raise")


# what this Python's max() and min() say of an empty sequence (by largest: max, then min)
_EMPTY = {True: _empty_message(max), False: _empty_message(min)}


def numpy_name(parsed: Parsed) -> str | None:
    """A name by which the function's module reads NumPy (``np`` first), for the
    conversions normalize writes; None where it has none."""
    names = sorted(n for n, v in parsed.globals.items() if v is np and
                   n not in parsed.local_names)
    return "np" if "np" in names else next(iter(names), None)


def _rename_store(target: gast.expr, renames: dict[str, str]) -> gast.expr:
    for n in gast.walk(target):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    return target
