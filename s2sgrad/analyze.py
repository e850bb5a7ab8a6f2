"""Pass 4, analyze: what each statement calls, what each value is, which values are active.

Before: an ANF function (``normalize``), the parameters to differentiate, and an abstract
        signature of the arguments (kind and rank of each).
After:  a frozen ``Analysis``: for every statement, the operation it performs (a derivative
        rule with its bound arguments, a differentiated callee, a copy, or a
        non-differentiable call); for every name, its abstract value (kind, rank) and shape
        class (names in one class are known to have equal shapes); the set of *active*
        names: those that depend on a differentiated input and that the output depends on.
        A call on active values with no derivative rule is a TransformError here.

    _t1 = x @ w          rule matmul(x, w)     rank 2   active
    n = x.shape          non-differentiable    object   inactive
    h = np.tanh(_t1)     rule tanh(_t1)        rank 2   active, same shape as _t1

A closed world: a derivative is picked only for what is known. Every value has a kind
(``Abstract``): a Python number, an array (rank, which axes have size 1, float or not,
complex), None, a tuple/list/dict (its items), an object of a known class, or a value the
compiled pair is specialised on by identity (a function, a dtype, a module, a string
whose value the code reads; see ``identified``). The meaning of an operation comes from
its operands' kinds:

    a + b      numbers/arrays: the rule of +; tuples/lists: concatenation; a user class:
               its __add__ / __radd__, differentiated through; anything else: refused
    a[i]       an array: indexing; a tuple/list/dict: its item; a user class: __getitem__;
               np.r_ and other objects that define []: refused where differentiated
    f(x)       a rule; a user function (a decorator's own code, a function passed in, one
               stored on an object, a default argument): compiled and differentiated
               through; a function chosen at run time or made from a differentiated
               value: refused; a call without a rule that receives a differentiated value:
               refused, even where its result is unused (it may mutate its arguments)
    for v in s arrays, tuples, lists: read by position; dicts, sets, objects: refused

Values that change kind join soundly (``join``: None on one path keeps ``is None``
tests at run time; a number and an array join to an array of unknown rank). A cast to a
dtype that is not known is refused; writes into arrays that certainly hold integers carry
no gradient. Each refusal is a TransformError at the user's file:line:col with a hint.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import operator
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from . import shapes, syntax
from .errors import TransformError
from .normalize import APPEND, SETITEM, Normalized
from .parse import MISSING, made_by_transform, unwrap
from .rules import registry
from .runtime import containers
from .rules.registry import Rule
from .templates import template_of


@dataclass(frozen=True)
class Abstract:
    """What is known of a value at transform time."""

    kind: str  # 'scalar' (Python number), 'array' (ndarray / numpy scalar), 'none', 'object'
    dims: tuple | None = None  # per axis: size 1 (True), not 1 (False), unknown (None)
    float: bool = True  # a floating-point value (only those carry gradients)
    type: type | None = None  # for 'object': the class, to resolve method calls
    items: tuple | None = None  # for tuples, lists, dicts: (key, Abstract) per item
    # The object itself, for values the compiled code is specialised on (see ``identified``):
    # functions and other callables, dtypes, strings. Calls through it resolve to it.
    value: Any = None
    complex: bool = False  # a complex number or array (not differentiated)
    none: bool = False  # None on some path (see join): `is None` tests are not folded

    @property
    def ndim(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    def __repr__(self) -> str:
        if self.kind == "object":
            return f"<{getattr(self.type, '__name__', 'object')}>"
        if self.kind == "none":
            return "None"
        dims = "?" if self.dims is None else "".join(
            {True: "1", False: "n", None: "?"}[d] for d in self.dims)
        return f"{self.kind}[{dims}{'' if self.float else ', int'}]"


class ShapeTuple(tuple):
    """Marks the abstract value of ``x.shape``: a tuple of ints."""


UNKNOWN_ARRAY = Abstract("array", None, True)
SCALAR = Abstract("scalar", (), True)


def join(a: Abstract, b: Abstract) -> Abstract:
    """What is known of a value that is ``a`` on one path and ``b`` on another.

    ``None`` joins to the other side, marked as maybe None: a value that is None on one path
    (``best = None`` before a loop that sets it) is used as what the other path makes it,
    since Python raises on arithmetic, calls and indexing of None; a test ``v is None``
    (``axis=None if flag else 0``) is left to run time."""
    if a == b:
        return a
    if a.kind == "none" or b.kind == "none":
        other = b if a.kind == "none" else a
        return other if other.kind == "none" else dataclasses.replace(other, none=True)
    if a.complex or b.complex:
        joined = join(Abstract(a.kind, a.dims, a.float, a.type, a.items),
                      Abstract(b.kind, b.dims, b.float, b.type, b.items))
        return Abstract(joined.kind, joined.dims, joined.float, joined.type, joined.items,
                        None, True)
    if {a.kind, b.kind} <= {"scalar", "array"}:
        if a.kind != b.kind:  # a Python number on one path, an array on another
            return Abstract("array", None, a.float or b.float)
        kind = a.kind
    elif a.kind == b.kind == "object" and a.type is b.type:
        if a.type in (tuple, list, dict):  # a container: items joined where they match
            items = None
            if a.items is not None and b.items is not None and [k for k, _ in a.items] == [
                    k for k, _ in b.items]:
                items = tuple((k, join(x, y)) for (k, x), (_, y) in zip(
                    a.items, b.items, strict=True))
            dims = a.dims if a.dims == b.dims else None
            return Abstract("object", dims, a.float or b.float, a.type, items)
        kind = "object"
    else:
        return Abstract("object", None, False, object)
    if a.dims is not None and b.dims is not None and len(a.dims) == len(b.dims):
        dims = tuple(x if x == y else None for x, y in zip(a.dims, b.dims, strict=True))
    else:
        dims = None
    return Abstract(kind, dims, a.float or b.float, a.type if a.type is b.type else None)


def identified(value: Any) -> bool:
    """Values the compiled code is specialised on by identity (or, for strings, equality):
    what a call, a cast or a lookup through them does depends on which one it is."""
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                              np.ufunc, functools.partial, type, np.dtype, str,
                              types.ModuleType)) or hasattr(value, "compiled_for")


_FUNCTION_TYPES = frozenset({types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                             np.ufunc, functools.partial})
_DATA_TYPES = frozenset({np.ndarray, float, int, bool, str, type(None), tuple, list, dict})


def _held_functions(value: Any) -> tuple | None:
    """(name, abstract value) of the functions stored on a user object, sorted by name;
    quick for objects that hold only data (this runs on every call)."""
    held = getattr(value, "__dict__", None)
    if not held or type(held) is not dict or _is_library_type(type(value)):
        return None
    found = None
    for k, v in held.items():
        t = type(v)
        if t in _DATA_TYPES:
            continue
        if t in _FUNCTION_TYPES or hasattr(t, "compiled_for"):
            found = (found or []) + [(k, abstract_of(v))]
    return tuple(sorted(found)) if found else None


def abstract_of(value: Any) -> Abstract:
    """The abstract value of a run-time argument (the cache key of a specialisation)."""
    if isinstance(value, bool):
        return Abstract("scalar", (), False)
    if isinstance(value, float):
        return SCALAR
    if isinstance(value, int):
        return Abstract("scalar", (), False)
    if isinstance(value, complex):
        return Abstract("scalar", (), True, complex=True)
    if isinstance(value, (np.ndarray, np.generic)):
        if isinstance(value, np.ndarray) and type(value) is not np.ndarray and isinstance(
                value, (np.matrix, np.ma.MaskedArray)):
            raise TypeError(
                f"{type(value).__name__} arguments are not supported: their operators differ "
                "from NumPy arrays' ('*' of np.matrix is a matrix product), which the "
                "derivative rules do not follow. Pass np.asarray(value) (and use '@' for "
                "matrix products).")
        kind = value.dtype.kind
        return Abstract("array", shapes.of_shape(value.shape), kind in "fc",
                        complex=kind == "c")
    if identified(value):
        return Abstract("object", None, False, type(value), value=value)
    functions = _held_functions(value)
    if functions:  # a user object: specialised on the functions it holds (self.act)
        return Abstract("object", None, False, type(value), functions)
    if value is None:
        return Abstract("none", None, False)
    if isinstance(value, (tuple, list)):
        items = tuple((k, abstract_of(v)) for k, v in enumerate(value))
        return Abstract("object", (None,) * len(value), any(a.float for _, a in items),
                        type(value), items)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = tuple((k, abstract_of(v)) for k, v in sorted(value.items()))
        return Abstract("object", None, any(a.float for _, a in items), dict, items)
    cls = type(value)
    known = _OBJECTS.get(cls)
    if known is None:
        known = _OBJECTS[cls] = Abstract("object", None, False, cls)
    return known


_OBJECTS: dict[type, Abstract] = {}  # the abstract value of a plain object, per class


def is_container(value: Abstract | None) -> bool:
    return value is not None and value.kind == "object" and value.type in (tuple, list, dict)


@dataclass(frozen=True)
class Op:
    """The operation of one ANF statement."""

    kind: str  # 'rule' | 'call' | 'copy' | 'nondiff' | 'unknown' | 'effect'
    target: str | None
    rule: Rule | None = None
    bindings: dict[str, gast.expr] = field(default_factory=dict)  # rule parameter -> atom
    callee: Any = None  # for 'call': the compiled callee
    callee_args: tuple[gast.expr, ...] = ()
    what: str = ""  # a readable name of the callee, for messages
    diff_params: tuple[str, ...] = ()  # parameters that can receive a contribution
    primitive: Any = None  # for 'rule', 'nondiff' and 'unknown' calls: the function called
    refusal: tuple[str, str] | None = None  # for 'unknown': why, and what to write instead
    always: bool = False  # refused even where the result is not used (it may mutate)


@dataclass(frozen=True)
class Analysis:
    normalized: Normalized
    wrt: tuple[str, ...]
    ops: dict[int, Op]  # the operation of each ANF statement, by id() of the statement
    values: dict[str, Abstract]
    shape_class: dict[str, int]
    active: frozenset[str]
    result: gast.expr  # the returned atom
    # the code depends on the value of a string argument (a dict of functions read by a
    # name passed in, a dtype named by a string): the pair is specialised on strings' values
    by_string_value: bool = False

    @property
    def body(self) -> list[gast.stmt]:
        return self.normalized.node.body

    def ndim(self, name: str) -> int | None:
        value = self.values.get(name)
        return None if value is None else value.ndim

    def same_shape(self, a: str, b: str) -> bool:
        ca, cb = self.shape_class.get(a), self.shape_class.get(b)
        return ca is not None and ca == cb


# Statements of the normalized code that compute no value: nothing to analyze in them.
_NO_VALUE = (gast.Return, gast.Break, gast.Continue, gast.Pass, gast.Raise, gast.Assert)

_BINOP_PRIMITIVES = {cls: getattr(operator, op) for cls, op in syntax.BINOPS.items()}
_UNARY_PRIMITIVES = {gast.USub: operator.neg, gast.UAdd: operator.pos,
                     gast.Not: operator.not_, gast.Invert: operator.invert}
_CMP_PRIMITIVES = {cls: getattr(operator, op, None) for cls, op in syntax.CMPOPS.items()}


def analyze(normalized: Normalized, wrt: tuple[str, ...], signature: dict[str, Abstract],
            compile_callee: Callable[..., Any]) -> Analysis:
    return _Analyzer(normalized, wrt, signature, compile_callee).run()


class _Analyzer:
    def __init__(self, normalized: Normalized, wrt, signature, compile_callee):
        self.normalized = normalized
        self.parsed = normalized.parsed
        self.wrt = tuple(wrt)
        self.values: dict[str, Abstract] = dict(signature)
        self.shape_class: dict[str, int] = {}
        self.compile_callee = compile_callee
        self.varied: set[str] = set(self.wrt)
        self.static_alias: dict[str, gast.expr] = {}
        self.dtype_kinds: dict[str, str] = {}  # names holding x.dtype: 'f', 'c' or 'i'
        self.by_string_value = False  # see Analysis.by_string_value
        # Arrays known to hold integers or booleans: writing a float into one truncates it,
        # so nothing differentiable flows through the write. A name is one if every
        # assignment to it makes one (``_int_result`` says whether the current one does).
        self.int_arrays: set[str] = set()
        self.not_int: set[str] = set()
        self._int_result = False
        self._classes = 0

    def run(self) -> Analysis:
        for p in self.parsed.params:
            self.values.setdefault(p, Abstract("object", None, False, object))
            self.shape_class[p] = self.new_class()
            value = self.values[p]
            if value.kind == "array" and not value.float and not value.complex:
                self.int_arrays.add(p)
        body = self.normalized.node.body
        self.ops: dict[int, Op] = {}
        self.forward_block(body)
        result = body[-1].value if isinstance(body[-1], gast.Return) else syntax.const(None)
        useful = {result.id} if isinstance(result, gast.Name) else set()
        active = self.useful_block(body, useful) & self.varied
        return Analysis(self.normalized, self.wrt, self.ops, self.values, self.shape_class,
                        frozenset(active), result, self.by_string_value)

    def forward_block(self, stmts: list[gast.stmt]) -> None:
        for stmt in stmts:
            if id(stmt) in self.normalized.placeholders:  # no value: the loop assigns it
                self.ops[id(stmt)] = Op("nondiff", stmt.targets[0].id)
                self.set_value(stmt.targets[0].id, Abstract("none", None, False))
            elif isinstance(stmt, (gast.Assign, gast.Expr)):
                if id(stmt) in self.normalized.iterations:
                    self.check_iterable(stmt.value.args[0], stmt)
                self.ops[id(stmt)] = self.forward(stmt)
            elif isinstance(stmt, gast.If):
                self.forward_block(stmt.body)
                self.forward_block(stmt.orelse)
            elif isinstance(stmt, (gast.For, gast.While)):
                if isinstance(stmt, gast.For):
                    self.set_value(stmt.target.id, Abstract("scalar", (), False))
                for _ in range(50):  # to a fixpoint: values flow around the loop
                    before = (dict(self.values), set(self.varied), len(self.not_int))
                    self.forward_block(stmt.body)
                    if (self.values, self.varied, len(self.not_int)) == before:
                        break
                else:
                    raise syntax.unexpected("analyze", stmt, "a loop without a fixpoint")
            elif not isinstance(stmt, _NO_VALUE):
                raise syntax.unexpected("analyze", stmt)

    def useful_block(self, stmts: list[gast.stmt], useful: set[str]) -> set[str]:
        """The names whose values the output depends on, before ``stmts`` run."""
        useful = set(useful)
        for stmt in reversed(stmts):
            if isinstance(stmt, gast.If):
                useful = self.useful_block(stmt.body, useful) | self.useful_block(
                    stmt.orelse, useful)
            elif isinstance(stmt, (gast.For, gast.While)):
                while True:  # what a later iteration needs, an earlier one must provide
                    after = self.useful_block(stmt.body, useful)
                    if after <= useful:
                        break
                    useful |= after
            elif isinstance(stmt, (gast.Assign, gast.Expr)):
                self.useful_statement(stmt, self.ops[id(stmt)], useful)
            elif not isinstance(stmt, _NO_VALUE):
                raise syntax.unexpected("analyze", stmt)
        return useful

    def check_effect(self, call: gast.expr) -> None:
        """A call whose result is dropped is kept for its effect. Printing is fine; a call
        that may change an array in place (x.sort(), np.copyto(h, y)) would change values
        the gradient depends on without the gradient knowing."""
        if not isinstance(call, gast.Call):
            return
        if self.parsed.resolve(call.func) in (print,):
            return
        arrays = [a for a in call.args + [k.value for k in call.keywords]
                  if self.value(a).kind == "array"]
        receiver = call.func.value if isinstance(call.func, gast.Attribute) and isinstance(
            call.func.value, gast.Name) and call.func.value.id in self.values else None
        if receiver is not None and self.value(receiver).kind == "array":
            arrays.append(receiver)
        if arrays:
            raise self.parsed.error(
                "a call whose result is not used, on an array: it may change the array in "
                "place, which the gradient cannot follow", call,
                "Assign the result to a name (e.g. `x = np.sort(x)`), or move the call "
                "outside the differentiated function.")

    def check_iterable(self, atom: gast.expr, stmt: gast.stmt) -> None:
        """A loop over the items of ``atom`` is compiled as reads of atom[0], atom[1], ...:
        right for arrays, lists and tuples, not for what iterates otherwise (a dict's keys,
        a set, an object with its own __iter__)."""
        value = self.value(atom)
        if value.kind in ("array", "scalar") or _is_sequence(value) or value.type in (
                ShapeTuple, str, range):
            return
        if value.kind == "object" and value.type is object:
            return  # nothing is known: an array from a call without a rule, most often
        what = _described(value)
        hint = "Loop over d.keys() written out as a tuple, or over a list of the items." \
            if value.type is dict else "Loop over a list or an array of the items."
        raise self.parsed.error(
            f"a loop over {what}: loops are compiled as reads of its items by position, "
            "which is what Python does for arrays, lists and tuples only", stmt, hint)

    def new_class(self) -> int:
        self._classes += 1
        return self._classes

    # --- forward: resolve each operation, infer kinds and ranks, propagate 'varied' -------

    def forward(self, stmt: gast.stmt) -> Op:
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0].id
            self._int_result = False
            op = self.operation(stmt.value, target)
            (self.int_arrays if self._int_result else self.not_int).add(target)
        elif isinstance(stmt, gast.Expr):
            self.check_effect(stmt.value)
            op = self.operation(stmt.value, None)
            op = Op("effect", None, what=op.what, refusal=op.refusal, always=op.always)
        else:
            raise syntax.unexpected("analyze", stmt)
        return op

    def value(self, atom: gast.expr) -> Abstract:
        if isinstance(atom, gast.Name) and atom.id in self.values:
            return self.values[atom.id]
        if syntax.is_const(atom):
            return abstract_of(atom.value)
        if syntax.is_static_tuple(atom):
            return abstract_of(syntax.const_value(atom))
        resolved = self.parsed.resolve(atom)
        if resolved is MISSING:
            return Abstract("object", None, False, object)
        v = abstract_of(resolved)
        # A global array may be rebound to another shape later: do not specialise on it.
        return v if v.kind != "array" else Abstract("array", None, v.float)

    def is_varied(self, atom: Any) -> bool:
        if isinstance(atom, tuple):  # the atoms a callee's *args receives
            return any(self.is_varied(a) for a in atom)
        return isinstance(atom, gast.Name) and atom.id in self.varied

    def set_value(self, target: str | None, value: Abstract, cls: int | None = None) -> None:
        """Record what ``target`` holds; a name assigned on several paths (a merge, a loop
        version) holds the join of what each assignment gives it."""
        if target is None:
            return
        cls = cls if cls is not None else self.new_class()
        if target in self.values and target not in self.parsed.params:
            value = join(self.values[target], value)
            if self.shape_class.get(target) != cls:
                cls = self.new_class()
        self.values[target] = value
        self.shape_class[target] = cls

    def operation(self, node: gast.expr, target: str | None) -> Op:
        if isinstance(node, gast.BinOp):
            return self.binary(node, target)
        if isinstance(node, gast.UnaryOp):
            return self.primitive(_UNARY_PRIMITIVES[type(node.op)], [node.operand], {},
                                  target, node)
        if isinstance(node, gast.Compare):
            prim = _CMP_PRIMITIVES.get(type(node.ops[0])) or operator.eq
            return self.primitive(prim, [node.left, node.comparators[0]], {}, target, node)
        if isinstance(node, gast.Call):
            return self.call(node, target)
        if isinstance(node, gast.Attribute) and not (isinstance(node.value, gast.Name)
                                                     and node.value.id in self.values):
            if self.parsed.resolve(node) is not MISSING and target is not None:
                self.static_alias[target] = node  # f = np.tanh: calls of f resolve to np.tanh
            self.set_value(target, self.value(node))
            return Op("nondiff", target)
        if isinstance(node, gast.Attribute) and node.attr == "dtype" and \
                self.value(node.value).kind in ("array", "scalar"):
            owner = self.value(node.value)  # x.dtype: its kind is known here, not its size
            self.set_value(target, Abstract("object", None, False, np.dtype))
            if target is not None:
                self.dtype_kinds[target] = "c" if owner.complex else "f" if owner.float else "i"
            return Op("nondiff", target, what="dtype")
        if isinstance(node, gast.Attribute) and self.value(node.value).value is not None:
            held = getattr(self.value(node.value).value, node.attr, MISSING)  # cls.scale
            value = abstract_of(held) if held is not MISSING else UNKNOWN_ARRAY
            self.set_value(target, value if value.kind != "array" else UNKNOWN_ARRAY)
            return Op("nondiff", target)
        if isinstance(node, gast.Attribute):
            owner = self.value(node.value)
            descriptor = self.method_of(owner, node.attr)
            if owner.kind == "object" and not is_container(owner):
                # an attribute of an object: a property runs its getter; anything else is
                # a value read from the object, of unknown kind
                if isinstance(descriptor, property) and isinstance(descriptor.fget,
                                                                    types.FunctionType):
                    self.parsed.dependencies.append((owner.type, node.attr, "static",
                                                     descriptor))
                    return self.user_call(descriptor.fget, [node.value], {}, target, node)
                return self.opaque(target, [node.value], f".{node.attr}")
            if descriptor is MISSING:
                return self.opaque(target, [node.value], f".{node.attr}")
            return self.primitive(descriptor, [node.value], {}, target, node)
        if isinstance(node, gast.Subscript):
            return self.subscript(node, target)
        if isinstance(node, (gast.Tuple, gast.List, gast.Dict)):
            if isinstance(node, gast.Dict):
                keys = [syntax.const_value(k) for k in node.keys]
                elements, kind = list(node.values), dict
            else:
                keys = list(range(len(node.elts)))
                elements = list(node.elts)
                kind = tuple if isinstance(node, gast.Tuple) else list
            items = tuple((k, self.value(e)) for k, e in zip(keys, elements, strict=True))
            self.set_value(target, Abstract(
                "object", None if kind is dict else (None,) * len(elements),
                any(a.float for _, a in items), kind, items))
            if any(self.is_varied(e) for e in elements) and target is not None:
                self.varied.add(target)
                return Op("pack", target, bindings=dict(zip(keys, elements, strict=True)),
                          diff_params=tuple(keys), what="a container")
            return Op("nondiff", target)
        if not isinstance(node, (gast.Name, gast.Constant, gast.Attribute)):
            raise syntax.unexpected("analyze", node, "an assigned value")
        # a copy of an atom
        if target is not None and not isinstance(node, gast.Name) and \
                self.parsed.resolve(node) is not MISSING:
            self.static_alias[target] = node  # f = np.tanh: calls of f resolve to np.tanh
        self.set_value(target, self.value(node),
                       self.shape_class.get(node.id) if isinstance(node, gast.Name) else None)
        self._int_result = isinstance(node, gast.Name) and self.is_int_array(node.id)
        if self.is_varied(node) and target is not None:
            self.varied.add(target)
        return Op("copy", target, bindings={"x": node})

    def binary(self, node: gast.BinOp, target: str | None) -> Op:
        """``a op b``: the operator's meaning comes from the operands' kinds. Numbers and
        arrays: arithmetic; tuples and lists: concatenation (+) and repetition (*); objects
        of a class that defines the operator: that method, differentiated through."""
        prim = _BINOP_PRIMITIVES[type(node.op)]
        left, right = self.value(node.left), self.value(node.right)
        operands = [node.left, node.right]
        # None has no operators: a None operand is a path on which Python raises (or one the
        # analysis has not yet seen the value of), so the other operand gives the meaning
        if left.kind == "none" and right.kind != "none":
            left = Abstract(right.kind, None, right.float, right.type)
        elif right.kind == "none" and left.kind != "none":
            right = Abstract(left.kind, None, left.float, left.type)
        if (_is_sequence(left) or _is_sequence(right)) and "array" not in (left.kind,
                                                                         right.kind):
            return self.sequence_op(node, prim, left, right, target)
        for value, atoms, name in ((left, operands, _DUNDER.get(prim)),
                                   (right, operands[::-1], _REFLECTED.get(prim))):
            method = _user_method(value, name)
            if method is None:
                continue
            if value is right and left.kind == "array":
                if self.is_varied(node.left) or self.is_varied(node.right):
                    raise self.parsed.error(
                        f"an array {_SYMBOLS[prim]} an object of class "
                        f"{value.type.__name__}: NumPy decides whether {name} runs", node,
                        f"Call the method explicitly: `b.{name}(a)`.")
                break
            self.parsed.dependencies.append((value.type, name, "static", method))
            return self.user_call(method, atoms, {}, target, node)
        return self.primitive(prim, operands, {}, target, node)

    def sequence_op(self, node: gast.BinOp, prim: Any, left: Abstract, right: Abstract,
                    target: str | None) -> Op:
        """``+`` and ``*`` of tuples and lists, as Python defines them."""
        varied = self.is_varied(node.left) or self.is_varied(node.right)
        if prim is operator.add and _is_sequence(left) and _is_sequence(right):
            items = None
            if left.items is not None and right.items is not None:
                items = tuple(enumerate([v for _, v in left.items] + [v for _, v in right.items]))
            value = Abstract("object", None if items is None else (None,) * len(items),
                             left.float or right.float, left.type, items)
            op = self.primitive(containers.concat, [node.left, node.right], {}, target, node)
        elif prim is operator.mul and (_is_sequence(left) != _is_sequence(right)):
            seq, count = (node.left, node.right) if _is_sequence(left) else (
                node.right, node.left)
            seq_value = left if _is_sequence(left) else right
            times = syntax.const_value(count) if syntax.is_const(count) else None
            items = None
            if seq_value.items is not None and isinstance(times, int):
                items = tuple(enumerate([v for _, v in seq_value.items] * max(times, 0)))
            value = Abstract("object", None if items is None else (None,) * len(items),
                             seq_value.float, seq_value.type, items)
            op = self.primitive(containers.repeat, [seq, count], {}, target, node)
        else:
            if not varied:
                self.set_value(target, Abstract("object", None, False, object))
                return Op("nondiff", target, what=_SYMBOLS.get(prim, "operator"))
            raise self.parsed.error(
                f"'{_SYMBOLS.get(prim, 'this operator')}' of {_described(left)} and "
                f"{_described(right)}: for tuples and lists only + of two of the same type "
                "and * by an int are defined", node,
                "Convert the items to an array first (np.array(...)) for arithmetic.")
        if target is not None:
            self.values[target] = value
        return op

    def subscript(self, node: gast.Subscript, target: str | None) -> Op:
        """``a[i]``: indexing is differentiated only where ``a`` is known to be an array
        (or a tuple, list or dict); ``np.r_[x, y]`` and other objects that define
        ``[]`` mean something else."""
        base = self.value(node.value)
        if is_container(base):
            return self.item(node, target)
        if base.type is ShapeTuple:  # x.shape[0], x.shape[1:]
            sliced = isinstance(node.slice, gast.Slice)
            self.set_value(target, Abstract("object", None, False, ShapeTuple) if sliced
                           else Abstract("scalar", (), False))
            return Op("nondiff", target, what="shape")
        if base.kind in ("array", "scalar"):
            self.refuse_boolean_index(node.slice, node)
            return self.primitive(operator.getitem, [node.value, node.slice], {}, target, node)
        index_atoms = [a for a in _index_atoms(node.slice)]
        varied = self.is_varied(node.value) or any(self.is_varied(a) for a in index_atoms)
        method = _user_method(base, "__getitem__")
        if method is not None and varied and not isinstance(node.slice, (gast.Slice,
                                                                         gast.Tuple)):
            self.parsed.dependencies.append((base.type, "__getitem__", "static", method))
            return self.user_call(method, [node.value, node.slice], {}, target, node)
        if varied:
            what = getattr(base.type, "__name__", "object")
            resolved = self.parsed.resolve(node.value)
            hint = "Index an array, or call a function." if resolved not in (
                np.r_, np.c_) else "Write np.concatenate([...]) (with np.atleast_1d for " \
                "numbers) instead: it is differentiated."
            name = syntax.dotted_name(node.value)
            raise self.parsed.error(
                f"'{name or what}[...]' is not indexing of an array (it is a {what}): what it "
                "computes is not differentiated", node, hint)
        self.set_value(target, Abstract("object", None, False, object))
        return Op("nondiff", target, what="[]")

    def method_of(self, owner: Abstract, attr: str) -> Any:
        if owner.kind == "array":
            return getattr(np.ndarray, attr, MISSING)
        if owner.kind == "scalar":
            return getattr(float, attr, MISSING)
        if owner.kind == "object" and owner.type is not None:
            return inspect.getattr_static(owner.type, attr, MISSING)
        return MISSING

    def item(self, node: gast.Subscript, target: str | None) -> Op:
        """``t[k]`` of a tuple, list or dict: the item (a slice of a list is a list)."""
        container = self.value(node.value)
        key = syntax.const_value(node.slice) if (syntax.is_const(node.slice)) else None
        if isinstance(node.slice, gast.Name) and node.slice.id in self.values:
            key = self.values[node.slice.id].value  # a string passed in: specialised on
            self.by_string_value |= isinstance(key, str)
        held = self.parsed.resolve(node.value)
        if held is not MISSING and key is not None and isinstance(held, (dict, list, tuple)):
            try:  # an item of a global dict or list: recompile if it is replaced
                self.parsed.dependencies.append((held, key, "item", held[key]))
            except (KeyError, IndexError, TypeError):
                pass
        items = dict(container.items or ())
        if isinstance(node.slice, gast.Slice):
            value = Abstract("object", None, container.float, list, None)
        elif key in items:
            value = items[key]
        elif container.items:
            value = container.items[0][1]
            for _, other in container.items[1:]:
                value = join(value, other)
        else:
            value = Abstract("array", None, True) if container.float else UNKNOWN_ARRAY
        self.set_value(target, value)
        if self.is_varied(node.value) and target is not None and value.float:
            self.varied.add(target)
            return Op("item", target, bindings={"c": node.value, "key": node.slice},
                      diff_params=("c",), what="an item")
        return Op("nondiff", target)

    def append(self, node: gast.Call, target: str | None) -> Op:
        """``xs_1 = __append__(xs, v)``: xs with v at its end."""
        base, value = node.args
        before = self.value(base)
        item = self.value(value)
        self.set_value(target, Abstract("object", None, before.float or item.float, list,
                                        None))
        if (self.is_varied(base) or self.is_varied(value)) and target is not None:
            self.varied.add(target)
        return Op("append", target, bindings={"xs": base, "v": value},
                  diff_params=("xs", "v"), what="append")

    def setitem(self, node: gast.Call, target: str | None) -> Op:
        """``y_1 = __setitem__(y[idx], v)``: y_1 is y with the region replaced by v."""
        region, value = node.args
        base = region.value
        self.refuse_boolean_index(region.slice, node)
        self.set_value(target, self.value(base), self.shape_class.get(base.id))
        if self.is_int_array(base.id):  # the value is truncated: piecewise constant
            self._int_result = True
            return Op("setitem", target, bindings={"a": base, "index": region.slice,
                                                   "v": value},
                      what="element assignment", diff_params=())
        if (self.is_varied(base) or self.is_varied(value)) and target is not None:
            self.varied.add(target)
        return Op("setitem", target, bindings={"a": base, "index": region.slice, "v": value},
                  what="element assignment", diff_params=("a", "v"))

    def refuse_boolean_index(self, index: Any, node: gast.AST) -> None:
        """``y[True]`` adds an axis of length 1 (or 0), unlike an int: not followed."""
        if any(syntax.is_const(a) and isinstance(a.value, bool) for a in _index_atoms(index)):
            raise self.parsed.error(
                "a scalar True/False as an index (it adds an axis, as None does, and selects "
                "all or nothing): not differentiated", node,
                "Index with y[None] or y[np.newaxis], or with a boolean array mask.")

    def is_int_array(self, name: str) -> bool:
        return name in self.int_arrays and name not in self.not_int

    def call(self, node: gast.Call, target: str | None) -> Op:
        func = node.func
        if syntax.is_name(func, SETITEM):
            return self.setitem(node, target)
        if syntax.is_name(func, APPEND):
            return self.append(node, target)
        for keyword in node.keywords:
            if keyword.arg == "out":
                raise self.parsed.error(
                    "'out=' writes the result into an existing array, which the gradient "
                    "cannot follow", keyword.value, "Assign the result instead: "
                    "`y = np.clip(x, lo, hi)`.")
        args = list(node.args)
        keywords = {k.arg: k.value for k in node.keywords}
        if None in keywords:
            raise self.parsed.error(
                "**kwargs in a call is followed only where a function passes its own "
                "**kwargs on unchanged (not after kwargs.update(...) or kwargs[k] = v)",
                keywords[None], "Pass the arguments by name: `fn(x, scale=7.0)`.")
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id in self.values and self.values[func.value.id].value is None:
            return self.method_call(func, args, keywords, target, node)
        if isinstance(func, gast.Name) and func.id in self.static_alias:
            func = self.static_alias[func.id]
        resolved = self.callee_of(func)
        if resolved is MISSING:
            if self.is_varied(func):
                raise self.parsed.error(
                    "this calls a function value that depends on a differentiated input (a "
                    "function made or chosen inside the differentiated code); the compiler "
                    "differentiates only calls to functions it can identify", node,
                    "Call a function defined with def (or passed in as an argument), and pass "
                    "the values it would close over as arguments.")
            if isinstance(func, gast.Name) and func.id in self.values:
                call = _user_method(self.values[func.id], "__call__")
                if call is not None:  # an object passed in, called: its class's __call__
                    self.parsed.dependencies.append((self.values[func.id].type, "__call__",
                                                     "static", call))
                    return self.user_call(call, [func] + args, keywords, target, node)
            name = self.user_name(func)
            op = self.opaque(target, args + list(keywords.values()),
                             name or "a function computed here")
            if name is None or isinstance(func, gast.Name):
                shown = f"'{name}'" if name else "a function value"
                return Op(op.kind, op.target, what=op.what, refusal=(
                    f"this calls {shown}, a function that is not known when the code is "
                    "compiled (it is chosen at run time: a loop over functions, a branch "
                    "between functions, an item at a computed key), so its derivative "
                    "cannot be chosen",
                    "Call each function directly (unroll the loop, or branch around the "
                    "calls), or pass the function in as an argument."))
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
        return name if head not in self.values else None

    def call_resolved(self, resolved: Any, func: gast.expr, args: list, keywords: dict,
                      target: str | None, node: gast.AST) -> Op:
        """A call of a known object: a rule, a user function, a method, a callable object."""
        if resolved in (eval, exec, compile, globals, locals, vars):
            raise self.parsed.error(f"{resolved.__name__}() is not supported", node,
                                    "Write the code out directly.")
        self.refuse_transform(resolved, node)
        if isinstance(resolved, functools.partial) and any(
                self.is_varied(a) for a in args + list(keywords.values())):
            raise self.parsed.error(
                "a call of a functools.partial object: the arguments it holds are not "
                "differentiated through", node,
                "Pass the function and its extra arguments separately, and call "
                "fn(x, *extra) inside.")
        if resolved is sum and len(args) == 2 and _is_sequence(self.value(args[1])):
            raise self.parsed.error(
                "sum(..., start) of lists or tuples concatenates them: this is not "
                "differentiated yet", node,
                "Write the concatenation with +, or build one list with a comprehension.")
        if resolved in (max, min) and len(args) == 1 and not keywords and \
                self.value(args[0]).kind == "array":  # max(x) of an array: its largest item
            resolved = np.max if resolved is max else np.min
        if resolved is sum and len(args) == 1 and not keywords and \
                self.value(args[0]).kind == "array":  # sum(x) of an array: over its first axis
            return self.primitive(np.sum, args, {"axis": syntax.const(0)}, target, node)
        if registry.lookup(resolved) is not None or registry.is_nondifferentiable(resolved):
            return self.primitive(resolved, args, keywords, target, node)
        if inspect.ismethod(resolved) and isinstance(func, gast.Attribute) and isinstance(
                resolved.__func__, types.FunctionType) and not _is_library(resolved.__func__):
            return self.user_call(resolved.__func__, [func.value] + args, keywords, target, node)
        unwrapped = unwrap(resolved)
        if isinstance(unwrapped, types.FunctionType) and not _is_library(unwrapped):
            if not inspect.ismethod(resolved):
                return self.user_call(unwrapped, args, keywords, target, node)
        call = getattr(type(resolved), "__call__", None)
        if not isinstance(resolved, (type, types.BuiltinFunctionType, np.ufunc)) and isinstance(
                call, types.FunctionType) and not _is_library(call):  # an object's __call__
            return self.user_call(call, [func] + args, keywords, target, node)
        return self.primitive(resolved, args, keywords, target, node)

    def callee_of(self, func: gast.expr) -> Any:
        """The object a call's function atom refers to: a non-local name, or a local name
        whose value the compiled code is specialised on (a function passed as an
        argument, or picked from a dict of functions by a key known here). MISSING if
        unknown."""
        resolved = self.parsed.resolve(func)
        if resolved is MISSING and isinstance(func, gast.Name) and func.id in self.values:
            value = self.values[func.id]
            if value.value is not None:
                return value.value
        if resolved is MISSING and isinstance(func, gast.Attribute) and isinstance(
                func.value, gast.Name) and func.value.id in self.values:
            owner = self.values[func.value.id].value  # a module passed in: xp.sum
            if owner is not None:
                return getattr(owner, func.attr, MISSING)
        return resolved

    def refuse_transform(self, resolved: Any, node: gast.AST) -> None:
        """Differentiating code that computes a derivative is higher order: not yet."""
        made = made_by_transform(resolved)
        module = getattr(resolved, "__module__", "") or ""
        name = getattr(resolved, "__name__", "")
        if made is None and module == "s2sgrad.api" and name in (
                "gradient", "value_and_grad", "vjp", "grad"):
            made = f"s2sgrad.{name}"
        if made is not None:
            raise self.parsed.error(
                f"this calls {made}, a derivative computed by s2sgrad, inside the function "
                "being differentiated: derivatives of derivatives (higher order) are not "
                "supported yet", node,
                "Write the inner derivative as a function of its own and differentiate the "
                "whole by hand, or compute it outside the differentiated function.")

    def method_call(self, func: gast.Attribute, args: list, keywords: dict,
                    target: str | None, node: gast.AST) -> Op:
        """``v.name(...)``: a method of the value's known kind, resolved on its class."""
        owner = self.values[func.value.id]
        held = dict(owner.items or ()) if not is_container(owner) else {}
        if func.attr in held and held[func.attr].value is not None:
            # a function stored on the object (self.act = np.tanh): specialised on
            return self.call_resolved(held[func.attr].value, func, args, keywords, target, node)
        method = self.method_of(owner, func.attr)
        if owner.kind == "object" and owner.type is not None and owner.type.__module__ not in (
                "builtins",) and method is not MISSING:
            # the class may be changed between calls: recompile if this attribute is
            self.parsed.dependencies.append((owner.type, func.attr, "static", method))
        if is_container(owner) and any(self.is_varied(a) for a in [func.value, *args,
                                                                   *keywords.values()]):
            self.refuse_container_method(owner, func.attr, node)
        if method is MISSING:
            return self.opaque(target, args + [func.value], f".{func.attr}()")
        if owner.kind == "object" and isinstance(method, staticmethod) and isinstance(
                method.__func__, types.FunctionType):
            return self.user_call(method.__func__, args, keywords, target, node)
        if owner.kind == "object" and isinstance(method, types.FunctionType):
            return self.user_call(method, [func.value] + args, keywords, target, node)
        if owner.kind == "object" and isinstance(method, classmethod) and any(
                self.is_varied(a) for a in args + list(keywords.values())):
            raise self.parsed.error(
                f"a classmethod called on an instance ({func.value.id}.{func.attr}): not "
                "differentiated through yet", node,
                f"Call it on the class: `{owner.type.__name__}.{func.attr}(...)`.")
        return self.primitive(method, [func.value] + args, keywords, target, node)

    def refuse_container_method(self, owner: Abstract, attr: str, node: gast.AST) -> None:
        kind = owner.type.__name__
        if attr not in _MUTATING.get(owner.type, ()):
            return
        hint = {"extend": "Write `xs = xs + ys`.", "insert": "Build a new list: "
                "`xs = xs[:i] + [v] + xs[i:]`.", "update": "Build a new dict."}.get(
            attr, "Build a new list or dict instead of changing this one.")
        raise self.parsed.error(
            f"{kind}.{attr}() changes the {kind} in place, which the gradient cannot follow",
            node, hint)

    def primitive(self, prim: Any, args: list, keywords: dict, target: str | None,
                  node: gast.AST) -> Op:
        what = registry.primitive_name(prim)
        atoms = args + list(keywords.values())
        self.refuse_out(prim, args, keywords, node)
        if registry.is_nondifferentiable(prim):
            self.infer_nondiff(prim, args, target, keywords)
            return Op("nondiff", target, what=what, primitive=prim)
        rule = registry.lookup(prim)
        if rule is None:
            return self.opaque(target, atoms, what, node, prim)
        if not any(self.is_varied(a) for a in atoms):  # a constant: no rule needed
            try:
                bindings = self.bind(rule, args, keywords, node, what)
            except TransformError:
                self.set_value(target, UNKNOWN_ARRAY)
                return Op("nondiff", target, what=what, primitive=prim)
        else:
            bindings = self.bind(rule, args, keywords, node, what)
        if rule.requires is not None and any(self.is_varied(a) for a in atoms):
            static = {p: _static(a) for p, a in bindings.items()}
            why = rule.requires(static, lambda p: self.value(bindings[p]).ndim)
            if why:
                raise self.parsed.error(why, node, "Write the function out, or register a "
                                        "rule that covers this call with @s2sgrad.vjp_rule.")
        template = template_of(rule)
        diff_params = tuple(p for p, given in zip(rule.params, template.outputs) if given)
        self.check_array_operands(rule, bindings, diff_params, what, node)
        self.infer(rule, bindings, target)
        first = bindings.get(rule.params[0]) if rule.params else None
        if isinstance(first, gast.Name) and self.is_int_array(first.id) and (
                rule.shape in ("same", "transpose", "permute") or rule.primitive in (
                    operator.getitem, *_RESHAPES)) and "dtype" not in bindings:
            self._int_result = True  # a copy, view or part of an integer array
        varied = any(self.is_varied(bindings.get(p)) for p in diff_params)
        if "dtype" in bindings and not (syntax.is_const(bindings["dtype"])
                                        and bindings["dtype"].value is None):
            cast = self.dtype_named(bindings["dtype"])
            if cast is None and varied:
                raise self.parsed.error(
                    f"{what}() casts to a dtype that is not known when the function is "
                    "compiled, so whether the result is differentiable cannot be told", node,
                    "Name the dtype directly (np.float64, 'float32', int), or pass it in as "
                    "an argument.")
            if cast is not None and target is not None and cast.kind not in "fc":
                # a cast to integers or booleans is piecewise constant: no gradient through it
                self._int_result = True
                value = self.values[target]
                self.values[target] = Abstract(value.kind, value.dims, False, value.type)
                return Op("nondiff", target, what=what, primitive=prim)
        if varied and target is not None:
            operands = [self.value(bindings[p]) for p in rule.params if p in bindings
                        and not isinstance(bindings[p], (gast.Slice, tuple))]
            if any(v.complex for v in operands) or (
                    target in self.values and self.values[target].complex):
                raise self.parsed.error(
                    f"{what}() on a complex value: complex numbers are not differentiated",
                    node, "Work with the real and imaginary parts as separate real arrays.")
            self.varied.add(target)
        return Op("rule", target, rule=rule, bindings=bindings, what=what,
                  diff_params=diff_params, primitive=prim)

    def refuse_out(self, prim: Any, args: list, keywords: dict, node: gast.AST) -> None:
        """An output array passed by position (np.clip(y, 0, 1, y), np.floor(y, y)) is
        written in place, as ``out=`` is: refused the same way."""
        out = None
        if isinstance(prim, np.ufunc):
            out = args[prim.nin] if len(args) > prim.nin else None
        else:
            rule = registry.lookup(prim)
            try:
                signature = inspect.signature(rule.template if rule is not None else prim)
                params = list(signature.parameters)[2:] if rule is not None else None
                bound = (inspect.Signature([signature.parameters[p] for p in params])
                         if params is not None else signature).bind_partial(*args, **keywords)
                out = bound.arguments.get("out")
            except (TypeError, ValueError):
                return
        if out is not None and not (syntax.is_const(out) and out.value is None):
            raise self.parsed.error(
                "an output array passed by position: it is written in place, which the "
                "gradient cannot follow", out, "Assign the result instead: "
                "`y = np.clip(y, lo, hi)`.")

    def check_array_operands(self, rule: Rule, bindings: dict, diff_params: tuple,
                             what: str, node: gast.AST) -> None:
        """The library's rules take arrays and numbers where they differentiate; NumPy
        converts a list or tuple there, the rules do not: such a call is refused unless
        the rule is one of those that take a sequence (np.stack, np.array, sum, ...)."""
        module = getattr(rule.template, "__module__", "") or ""
        if not module.startswith("s2sgrad.") or rule.primitive in _TAKES_SEQUENCES:
            return
        for p in diff_params:
            atom = bindings.get(p)
            if isinstance(atom, gast.expr) and _is_sequence(self.value(atom)):
                symbol = _SYMBOLS.get(rule.primitive)
                where = f"'{symbol}'" if symbol else f"{what}()"
                raise self.parsed.error(
                    f"{where} of {_described(self.value(atom))}: NumPy converts it to an "
                    "array, the derivative rule does not", node,
                    "Make the array explicitly: np.array([...]) (or np.stack([...]) of "
                    "arrays).")

    def dtype_named(self, atom: Any) -> np.dtype | None:
        """The dtype (or, for ``x.dtype``, its kind) a ``dtype=`` argument names, or None if
        it is not known when the function is compiled."""
        if isinstance(atom, gast.Name) and atom.id in self.values:
            value = self.values[atom.id]
            if value.value is not None:  # a dtype passed in as an argument
                self.by_string_value |= isinstance(value.value, str)
                try:
                    return np.dtype(value.value)
                except TypeError:
                    return None
            if atom.id in self.dtype_kinds:  # x.dtype of a known array, read into a name
                return np.dtype({"c": complex, "f": float, "i": int}[self.dtype_kinds[atom.id]])
        if isinstance(atom, gast.Attribute) and atom.attr == "dtype" and isinstance(
                atom.value, gast.Name) and atom.value.id in self.values:
            owner = self.values[atom.value.id]  # x.dtype: its kind is known, not its size
            if owner.kind in ("array", "scalar"):
                return np.dtype(complex if owner.complex else float if owner.float else int)
            return None
        return self.static_dtype(atom)

    def static_dtype(self, atom: Any) -> np.dtype | None:
        """The dtype a ``dtype=`` argument names, when it is known at transform time."""
        if atom is None or (syntax.is_const(atom) and atom.value is None):
            return None
        value = syntax.const_value(atom) if syntax.is_const(atom) else self.parsed.resolve(atom)
        if value is MISSING:
            return None
        try:
            return np.dtype(value)
        except TypeError:
            return None

    def bind(self, rule: Rule, args: list, keywords: dict, node: gast.AST, what: str) -> dict:
        """Bind call-site atoms to the rule's parameters, as Python binds the primitive's."""
        signature = inspect.signature(rule.template)
        params = list(signature.parameters.values())[2:]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
        bindings: dict[str, Any] = dict(zip((p.name for p in positional), args))
        extra = args[len(positional):]
        if star is not None:
            bindings[star] = syntax.tuple_(extra)
        elif extra:
            raise self.parsed.error(
                f"{what}() is called with {len(args)} positional arguments; its derivative "
                f"rule takes {len(positional)} ({', '.join(p.name for p in positional)})", node,
                "Pass the extra arguments by keyword, or extend the rule.")
        names = {p.name for p in params if p.kind != p.VAR_POSITIONAL}
        for key, value in keywords.items():
            if key not in names or key in bindings:
                raise self.parsed.error(
                    f"{what}() got the keyword argument '{key}', which its derivative rule "
                    f"does not accept here ({', '.join(p.name for p in params)})", node,
                    "Remove the argument, or register a rule that accepts it.")
            bindings[key] = value
        for p in params:
            if p.name in bindings:
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
                  node: gast.AST) -> Op:
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
        if not varied:
            self.set_value(target, UNKNOWN_ARRAY)
            return Op("nondiff", target, what=what)
        signature = {name: self.packed_value(atom) for name, atom in bound.arguments.items()}
        for param in bound.signature.parameters.values():  # defaults the callee will use
            if param.name not in signature and param.default is not param.empty and \
                    identified(param.default):
                signature[param.name] = abstract_of(param.default)
        compiled = self.compile_callee(fn, tuple(varied), signature, node)
        self.set_value(target, compiled.result_value)
        if target is not None:
            self.varied.add(target)
        return Op("call", target, callee=compiled, bindings=dict(bound.arguments), what=what,
                  callee_args=tuple(args), diff_params=tuple(varied))

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

    def opaque(self, target: str | None, atoms: list, what: str, node: Any = None,
               prim: Any = None) -> Op:
        """A call with no rule: fine while no differentiated value flows through it. One
        that receives a differentiated value is refused where its result is used (no
        derivative), and also where it is not, unless it is known not to change its
        arguments (print, np.isfinite): x.sort(), np.copyto(y, v), xs.reverse() would
        change values the gradient depends on without it knowing."""
        varied = any(self.is_varied(a) for a in atoms)
        if varied and target is not None:
            self.varied.add(target)
        self.set_value(target, UNKNOWN_ARRAY)
        refusal = None
        if varied and what.startswith("."):  # a method of a value of unknown class
            refusal = (f"the method {what} of a value whose class is not known when "
                       "compiling receives a differentiated value: it has no derivative rule, "
                       "and it may change its arguments in place",
                       "Call a function with a derivative rule, or a method of an argument's "
                       "class.")
        elif varied and not _is_pure(prim):
            short = _short(what)
            refusal = (f"no derivative rule for {what}, which receives a differentiated "
                       "value: it has no gradient, and it may change its arguments in place, "
                       "which the gradient cannot follow",
                       f"Register a rule with @s2sgrad.vjp_rule({short}) (or declare "
                       f"s2sgrad.nondifferentiable({short}) if it changes nothing), use a "
                       "function with a rule (np.sort(x) rather than x.sort()), or move the "
                       "call outside the differentiated function.")
        return Op("unknown", target, what=what, primitive=prim, refusal=refusal,
                  always=refusal is not None)

    # --- kinds and ranks -----------------------------------------------------------------

    def infer(self, rule: Rule, bindings: dict, target: str | None) -> None:
        if target is None:
            return
        operands = [bindings[p] for p in rule.params[:max(1, len(template_of(rule).outputs))]]
        values = [self.value(a) for a in operands]
        first = values[0]
        shape = rule.shape
        if shape == "elementwise":
            self.elementwise(operands, values, target)
            return
        dims: tuple | None = None
        if rule.primitive is operator.getitem:
            if first.kind != "array":  # an item of a tuple or list
                container = operands[0]
                if syntax.is_static_tuple(container):
                    items = [abstract_of(v) for v in syntax.const_value(container)]
                    item = items[0]
                    for other in items[1:]:
                        item = join(item, other)
                    self.set_value(target, item)
                else:
                    self.set_value(target, Abstract("object", None, False, object))
                return
            self.set_value(target, Abstract("array", self.index_dims(first.dims, bindings[
                rule.params[1]]), first.float))
            return
        if rule.primitive in _RESHAPES:
            new_shape = bindings.get("shape") or bindings.get("newshape")
            if rule.primitive is np.ndarray.reshape and isinstance(new_shape, gast.Tuple) \
                    and len(new_shape.elts) == 1:
                new_shape = new_shape.elts[0]  # x.reshape((3, 4)) rather than x.reshape(3, 4)
            self.set_value(target, Abstract("array", self.shape_dims(new_shape), True))
            return
        if shape == "reduce":
            axis = _static(bindings.get("axis"))
            keepdims = _static(bindings.get("keepdims", syntax.const(False)))
            if axis is not MISSING and isinstance(keepdims, bool):
                dims = shapes.reduce(first.dims, axis, keepdims)
        elif shape == "matmul" and len(values) > 1:
            dims = shapes.matmul(first.dims, values[1].dims)
        elif shape == "dot" and len(values) > 1:
            dims = shapes.dot(first.dims, values[1].dims)
        elif shape == "outer":
            dims = (None, None)
        elif shape == "transpose":
            axes = _static(bindings.get("axes"))
            if isinstance(axes, tuple) and len(axes) <= 1 and rule.params[-1:] == ("axes",) \
                    and inspect.signature(rule.template).parameters["axes"].kind == \
                    inspect.Parameter.VAR_POSITIONAL:
                axes = axes[0] if axes else None  # x.transpose(), x.transpose((1, 0))
            if axes is MISSING:
                dims = None if first.ndim is None else (None,) * first.ndim
            else:
                dims = shapes.transpose(first.dims, axes)
        elif shape == "permute":
            dims = None if first.ndim is None else (None,) * first.ndim
        elif shape == "same":
            dims = first.dims
        elif shape == "scalar":
            dims = ()
        if first.kind == "object":  # np.asarray(a list): its rank is not the list's length
            dims = None
        module = getattr(rule.primitive, "__module__", "") or ""
        python_scalar = shape == "scalar" and (  # math.* and float() return Python floats
            module == "math" or rule.primitive is float)
        kind = "scalar" if python_scalar or (
            shape == "scalar" and all(v.kind == "scalar" for v in values)) else "array"
        cls = self.shape_class.get(operands[0].id) if shape == "same" and isinstance(
            operands[0], gast.Name) else None
        self.set_value(target, Abstract(kind, dims, True, complex=first.complex), cls)

    def index_dims(self, dims: tuple | None, index: Any) -> tuple | None:
        """Dims of ``a[index]`` for ints, slices, None and ... (None for array indices)."""
        if dims is None:
            return None
        parts = index.elts if isinstance(index, gast.Tuple) else [index]

        def const(part, value):
            return syntax.is_const(part) and part.value is value

        consumed = sum(1 for p in parts if not (const(p, None) or const(p, Ellipsis)))
        if consumed > len(dims):
            return None
        out, axis = [], 0
        for part in parts:
            if const(part, None):
                out.append(True)
            elif const(part, Ellipsis):
                count = len(dims) - consumed
                out.extend(dims[axis:axis + count])
                axis += count
            elif isinstance(part, gast.Slice):
                whole = part.lower is None and part.upper is None and part.step is None
                out.append(dims[axis] if whole else None)
                axis += 1
            elif (syntax.is_const(part) and isinstance(part.value, int)
                  and not isinstance(part.value, bool)) or (
                    self.value(part).kind == "scalar" and not self.value(part).float):
                axis += 1  # an integer index drops the axis
            else:
                return None
        return tuple(out) + tuple(dims[axis:])

    def shape_dims(self, shape: Any) -> tuple | None:
        """Dims of an array made with ``shape`` (an atom: a literal, or a tuple of atoms)."""
        if shape is None:
            return None
        if syntax.is_const(shape) or syntax.is_static_tuple(shape):
            return shapes.of_literal(syntax.const_value(shape))
        if isinstance(shape, gast.Tuple):
            return tuple(shapes.of_literal(syntax.const_value(e))[0]
                         if syntax.is_const(e) and isinstance(e.value, int) else None
                         for e in shape.elts)
        value = self.value(shape)
        if value.kind == "object" and value.type in (tuple, list):
            return value.dims  # a tuple built in the function: its length is known
        if value.kind == "scalar" and not value.float:
            return (None,)
        return None

    def elementwise(self, operands: list, values: list[Abstract], target: str) -> None:
        arrays = [(a, v) for a, v in zip(operands, values, strict=True)
                  if v.kind in ("scalar", "array")]
        # A Python number only if every operand is one: an operand of any other kind (an
        # array, or a value of unknown kind) makes the result an array as far as is known.
        kind = "scalar" if all(v.kind == "scalar" for v in values) else "array"
        known = len(arrays) == len(values)
        dims = shapes.broadcast(*(v.dims for _, v in arrays)) if known else None
        classes = {self.shape_class.get(a.id) if isinstance(a, gast.Name) else None
                   for a, v in arrays if v.ndim != 0}
        cls = classes.pop() if known and len(classes) == 1 and None not in classes else None
        is_float = any(v.float for v in values)
        self.set_value(target, Abstract(kind, dims, is_float, complex=any(
            v.complex for v in values)), cls)

    def infer_nondiff(self, prim: Any, args: list, target: str | None,
                      keywords: dict | None = None) -> None:
        if target is None:
            return
        self._int_result = self.makes_integers(prim, args, keywords or {})
        if isinstance(prim, np.ufunc) or prim in _CMP_PRIMITIVES.values():
            self.elementwise(args, [self.value(a) for a in args], target)
            self.values[target] = Abstract(self.values[target].kind, self.values[target].dims,
                                           False)
        elif prim in (len, int, math.floor, math.ceil, np.ndarray.size, np.ndarray.ndim):
            self.set_value(target, Abstract("scalar", (), False))
        elif prim in (np.ndarray.shape, np.shape):
            rank = self.value(args[0]).ndim if args else None
            self.set_value(target, Abstract("object", None if rank is None else (None,) * rank,
                                            False, ShapeTuple))
        elif prim in _LIKE and args:
            cls = self.shape_class.get(args[0].id) if isinstance(args[0], gast.Name) else None
            self.set_value(target, Abstract("array", self.value(args[0]).dims, True), cls)
        elif prim in _FROM_SHAPE and args:
            self.set_value(target, Abstract("array", self.shape_dims(args[0]), True))
        elif prim in (np.arange, np.linspace):
            self.set_value(target, Abstract("array", (None,), True))
        elif prim in (np.eye, np.identity):
            self.set_value(target, Abstract("array", (None, None), True))
        elif (getattr(prim, "__module__", "") or "").startswith("numpy"):
            self.set_value(target, Abstract("array", None, False))
        else:
            self.set_value(target, Abstract("object", None, False, object))

    def makes_integers(self, prim: Any, args: list, keywords: dict) -> bool:
        """Does this call, without a gradient, certainly make integers or booleans?"""
        if prim in _CMP_PRIMITIVES.values() or prim in _BOOLEAN_UFUNCS:
            return True
        if prim in _LIKE + _FROM_SHAPE + (np.full, np.full_like):
            dtype = keywords.get("dtype")
            if dtype is None and len(args) > (2 if prim in (np.full, np.full_like) else 1):
                dtype = args[-1]
            cast = self.dtype_named(dtype) if dtype is not None else None
            if cast is None and dtype is None and prim in _LIKE:
                return isinstance(args[0], gast.Name) and self.is_int_array(args[0].id)
            return cast is not None and cast.kind in "biu"
        if prim is np.arange and "dtype" not in keywords:
            return all((syntax.is_const(a) and type(a.value) is int) or (
                self.value(a).kind == "scalar" and not self.value(a).float) for a in args)
        return False

    # --- backward: which varied values does the output depend on ---------------------------

    def useful_statement(self, stmt: gast.stmt, op: Op, useful: set[str]) -> None:
        if op.always:
            raise self.parsed.error(op.refusal[0], stmt.value if hasattr(
                stmt, "value") else stmt, op.refusal[1])
        if op.target is None or op.target not in useful or op.target not in self.varied:
            return
        if op.kind == "unknown" and op.refusal is not None:
            raise self.parsed.error(op.refusal[0], stmt.value if hasattr(
                stmt, "value") else stmt, op.refusal[1])
        if op.kind == "unknown" and op.what.startswith("."):  # a method of an unknown value
            raise self.parsed.error(
                f"the method {op.what} of a value whose class is not known when compiling "
                "(made inside the function, or read from an object), and the result depends "
                "on a differentiated input", stmt.value if hasattr(stmt, "value") else stmt,
                "Call a function with a derivative rule, or a method of an argument's class.")
        if op.kind == "unknown":
            raise self.parsed.error(
                f"no derivative rule for {op.what}, and the result depends on a "
                "differentiated input", stmt.value if hasattr(stmt, "value") else stmt,
                f"Register one with @s2sgrad.vjp_rule({_short(op.what)}), or mark it with "
                f"s2sgrad.nondifferentiable({_short(op.what)}) if it has no gradient.")
        if op.kind == "copy":
            useful |= syntax.names_read(op.bindings["x"])
        elif op.kind in ("rule", "call", "setitem", "pack", "item", "append"):
            for p in op.diff_params:
                atom = op.bindings.get(p)
                for a in (atom if isinstance(atom, tuple) else (atom,)):
                    if isinstance(a, gast.Name):
                        useful.add(a.id)


# Methods that change a list or dict in place (append is followed: see normalize).
_MUTATING = {list: ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                    "__setitem__", "__delitem__", "__iadd__", "__imul__"),
             dict: ("update", "pop", "popitem", "setdefault", "clear", "__setitem__",
                    "__delitem__")}

_SYMBOLS = {getattr(operator, op): symbol for op, symbol in (
    ("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"),
    ("mod", "%"), ("pow", "**"), ("matmul", "@"), ("lshift", "<<"), ("rshift", ">>"),
    ("and_", "&"), ("or_", "|"), ("xor", "^"))}
_DUNDER = {prim: f"__{prim.__name__.strip('_')}__" for prim in _SYMBOLS}
_DUNDER[operator.and_], _DUNDER[operator.or_] = "__and__", "__or__"
_REFLECTED = {prim: "__r" + name[2:] for prim, name in _DUNDER.items()}


# Primitives whose rules take a tuple or list of values (one contribution per item).
_TAKES_SEQUENCES = frozenset({np.stack, np.concatenate, sum, containers.concat,
                              containers.repeat, np.array, np.asarray, np.asanyarray,
                              np.ascontiguousarray})

# Functions without a rule known not to change their arguments: a call of one on a
# differentiated value is refused only where its result is used.
_PURE = frozenset({
    print, isinstance, type, id, str, repr, format, hash, bool, hasattr, callable, len,
    np.shape, np.ndim, np.size, np.allclose, np.isclose, np.array_equal, np.array_equiv,
    np.any, np.all, np.isfinite, np.isnan, np.isinf, np.iscomplexobj, np.isrealobj,
    np.may_share_memory, np.shares_memory, np.ndarray.any, np.ndarray.all, np.ndarray.item,
    np.ndarray.tolist, np.array2string, np.array_repr, np.array_str, np.result_type})


def _is_pure(prim: Any) -> bool:
    try:
        return prim in _PURE or isinstance(prim, np.ufunc)
    except TypeError:
        return False


def _described(value: Abstract) -> str:
    """'a tuple', 'an array', 'a number': for messages."""
    if value.kind == "object" and value.type not in (None, object):
        name = value.type.__name__
    else:
        name = {"scalar": "number", "none": "None"}.get(value.kind, value.kind)
        if value.kind == "object":
            name = "value of unknown kind"
    return ("an " if name[0] in "aeiou" else "a ") + name


def _is_sequence(value: Abstract) -> bool:
    return value.kind == "object" and value.type in (tuple, list)


def _user_method(value: Abstract, name: str | None) -> Any:
    """The Python method ``name`` of a user class, or None (built-in types, NumPy, ours)."""
    if name is None or value.kind != "object" or value.type in (None, object) or \
            value.value is not None or _is_library_type(value.type):
        return None
    method = inspect.getattr_static(value.type, name, None)
    return method if isinstance(method, types.FunctionType) else None


def _is_library_type(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module.split(".")[0] in ("numpy", "s2sgrad", "builtins", "math", "operator")


def _index_atoms(index: Any) -> list:
    if isinstance(index, gast.Tuple):
        return [a for e in index.elts for a in _index_atoms(e)]
    if isinstance(index, gast.Slice):
        return [getattr(index, k) for k in ("lower", "upper", "step")
                if getattr(index, k) is not None]
    return [index]


_BOOLEAN_UFUNCS = frozenset({np.greater, np.greater_equal, np.less, np.less_equal, np.equal,
                             np.not_equal, np.logical_and, np.logical_or, np.logical_not,
                             np.logical_xor, np.isnan, np.isinf, np.isfinite, np.signbit})

_RESHAPES = (np.reshape, np.ndarray.reshape)
_LIKE = (np.zeros_like, np.ones_like, np.empty_like)
_FROM_SHAPE = (np.zeros, np.ones, np.empty)


def _is_library(fn: Callable) -> bool:
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in ("numpy", "s2sgrad", "math", "builtins", "operator")


def _is_literal(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_is_literal(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, complex))


def _static(atom: Any) -> Any:
    if atom is None:
        return None
    if syntax.is_const(atom) or syntax.is_static_tuple(atom):
        return syntax.const_value(atom)
    return MISSING


def _short(what: str) -> str:
    return what.replace("numpy.", "np.")
