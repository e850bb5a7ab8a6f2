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
               through; a nested function or lambda made into a value: the function
               that stands for its closures, given what it closes over; a function
               chosen at run time: refused; a call without a rule that receives a differentiated value:
               refused, even where its result is unused (it may mutate its arguments)
    for v in s arrays, tuples, lists: read by position; dicts: by key (spreads.py); sets,
               objects: refused

Values that change kind join soundly (``join``: None on one path keeps ``is None``
tests at run time; a number and an array join to an array of unknown rank). A cast to a
dtype that is not known is refused; writes into arrays that certainly hold integers carry
no gradient. Each refusal is a TransformError at the user's file:line:col with a hint.

The pass is a package, one module per job:

    values.py      Abstract: what is known of a value; abstract_of (the specialisation key)
    facts.py       what the walk knows at a point (values, shape classes, varied names), Op
    operations.py  what an operator, an index, an attribute or a container display means
    calls.py       which function a call runs: a rule, a user function, a refusal
    callees.py     what a call of a known function is: a rule bound to the call's atoms, a
                   user function compiled for them, a function without a rule
    inference.py   the kind, rank and shape class of a call's result
    checks.py      the refusals of the forward walk
    spreads.py     which spreads (g(*xs), a, *rest = xs) are written out item by item
    activity.py    which varied names the output depends on (a backward data-flow pass)

This module walks the statements (``statements.kind`` says how each nests) and returns
the ``Analysis``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast

from ... import syntax
from .. import statements
from ..normalize import PLAIN, STOP, Normalized
from ..parse import MISSING
from . import checks, spreads
from .activity import active
from .callees import Callees
from .calls import Calls
from .checks import NeedsArray  # noqa: F401
from .facts import OP_KINDS, UPDATES, Facts, Op  # noqa: F401
from .operations import Operations
from .values import (  # noqa: F401
    SCALAR,
    UNKNOWN_ARRAY,
    Abstract,
    ShapeTuple,
    abstract_of,
    described,
    identified,
    is_complex,
    is_container,
    join,
)


@dataclass(frozen=True)
class Analysis:
    normalized: Normalized
    wrt: tuple[str, ...]
    ops: dict[gast.stmt, Op]  # the operation of each ANF statement
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

    def is_none(self, name: str) -> bool | None:
        """Whether ``name`` holds None: True or False where certain (a global: what it
        holds now); None leaves an ``is None`` test to run time (a value of unknown kind,
        read from an object or returned by a call)."""
        value = self.values.get(name)
        if value is None and name not in self.normalized.parsed.local_names:
            # a global or a closure's variable: what it holds now, which a rebinding to
            # another type compiles again (validity.identity)
            found = self.normalized.parsed.lookup(name)
            return None if found is MISSING else found is None
        return _is_none(value)

    def same_shape(self, a: str, b: str) -> bool:
        ca, cb = self.shape_class.get(a), self.shape_class.get(b)
        return ca is not None and ca == cb


class Fold(Exception):
    """Ifs whose test has one value on every call (``x`` where x is None, a string or a
    function the compile is specialised on; ``x is None`` where x certainly is or is not
    None): normalize writes only the block that runs, and the analysis runs again, so the
    other block (a plot, a print, a debug check of an argument left at None) is neither
    analysed nor compiled. ``sites``: source position -> the value."""

    def __init__(self, sites: dict[tuple[int, int], bool]):
        super().__init__(f"{len(sites)} ifs with a known test")
        self.sites = sites


def _is_none(value: Abstract | None) -> bool | None:
    """Whether a local value is None on every call (True), on none (False), or either."""
    if value is None or value.none:
        return None
    if value.kind == "none":
        return True
    if value.kind == "scalar" or is_container(value) or (
            value.kind == "array" and value.dims is not None):
        return False
    return None


def analyze(normalized: Normalized, wrt: tuple[str, ...], signature: dict[str, Abstract],
            compile_callee: Callable[..., Any]) -> Analysis:
    return _Walk(normalized, tuple(wrt), signature, compile_callee).run()


class _Walk:
    """The forward walk: each statement's operation, and the facts it establishes."""

    def __init__(self, normalized: Normalized, wrt: tuple[str, ...],
                 signature: dict[str, Abstract], compile_callee: Callable[..., Any]):
        self.normalized = normalized
        self.wrt = wrt
        self.facts = Facts(normalized.parsed, wrt, signature)
        callees = Callees(self.facts, compile_callee)
        self.operations = Operations(self.facts, Calls(self.facts, callees), callees)
        self.ops: dict[gast.stmt, Op] = {}
        self.unpacked = dict(normalized.unpacked)
        self.unpacks = dict(normalized.unpacks)
        self.spread_sites = dict(normalized.spread_sites)
        self.spread_written = dict(normalized.spread_written)
        self.facts.spread_arguments = dict(normalized.spread_arguments)
        self.stopped = False  # inside a no_grad() block (and no enable_grad() in it)
        self.guarded: set[str] | None = None  # in a try block: the names it assigned so far
        self.tested: dict[gast.stmt, set] = {}  # each user if -> the values its test had
        sites = [form[0] for form in normalized.tests.values()]
        self.single_sites = {site for site in sites if sites.count(site) == 1}

    def run(self) -> Analysis:
        facts, parsed = self.facts, self.normalized.parsed
        for p in parsed.params:
            facts.values.setdefault(p, Abstract("object", None, False, object))
            facts.shape_class[p] = facts.new_class()
            value = facts.values[p]
            if value.kind == "array" and not value.float and not value.complex:
                facts.int_arrays.add(p)
        body = self.normalized.node.body
        self.block(body)
        for name, keys, site in self.normalized.unrolled:  # what each name holds is known
            spreads.unrolled(facts, name, keys, site)
        folds = self.folds()
        if folds:  # only the block that runs is written (normalize), and analysed again
            raise Fold(folds)
        result = body[-1].value if isinstance(body[-1], gast.Return) else syntax.const(None)
        return Analysis(self.normalized, self.wrt, self.ops, facts.values, facts.shape_class,
                        active(body, self.ops, facts.varied, result, parsed), result,
                        facts.by_string_value)

    def block(self, stmts: list[gast.stmt]) -> None:
        facts = self.facts
        for stmt in stmts:
            kind = statements.kind(stmt, "analyze")
            if stmt in self.normalized.placeholders:  # no value: the loop assigns it
                self.ops[stmt] = Op("nondiff", stmt.targets[0].id)
                facts.set_value(stmt.targets[0].id, Abstract("none", None, False))
            elif kind.computes:
                if stmt in self.spread_sites:  # (a loop over a dict: asks for its keys)
                    spreads.site(facts, stmt, *self.spread_sites[stmt])
                if stmt in self.normalized.iterations:
                    checks.check_iterable(facts, stmt.value.args[0], stmt)
                    spreads.loop_over_functions(facts, stmt.value.args[0],
                                                self.normalized.loop_sites.get(stmt))
                if stmt in self.unpacked:
                    checks.check_spread(facts, stmt.value.value, self.unpacked[stmt], stmt)
                if stmt in self.unpacks:
                    checks.check_unpack(facts, stmt.value.value, self.unpacks[stmt], stmt)
                if stmt in self.spread_written:
                    spreads.written(facts, stmt, *self.spread_written[stmt])
                if stmt in self.normalized.outputs:
                    checks.check_output(facts, *stmt.value.args, stmt)
                self.ops[stmt] = self.statement(stmt)
                if self.stopped or self.guarded is not None:
                    self.in_block(stmt, self.ops[stmt])
            elif kind.loop:
                if isinstance(stmt, gast.For):  # the loop's index
                    facts.set_value(stmt.target.id, Abstract("scalar", (), False))
                for _ in range(50):  # to a fixpoint: values flow around the loop
                    before = (dict(facts.values), set(facts.varied), len(facts.not_int))
                    for field in kind.blocks:
                        self.block(getattr(stmt, field))
                    if (facts.values, facts.varied, len(facts.not_int)) == before:
                        break
                else:
                    raise syntax.unexpected("analyze", stmt, "a loop without a fixpoint")
            else:
                outer, mode = self.stopped, self.normalized.contexts.get(stmt, PLAIN)
                self.stopped = outer if mode == PLAIN else mode == STOP
                guarded = self.guarded
                runs = self.test_value(stmt)
                for field in kind.blocks:
                    if runs is not None and field != ("body" if runs else "orelse"):
                        continue  # the block no call runs (while the test keeps its value)
                    # a try's body: what it updates in place must be its own
                    self.guarded = set() if stmt in self.normalized.flags and \
                        field == "body" else guarded
                    self.block(getattr(stmt, field))
                self.stopped, self.guarded = outer, guarded

    def test_value(self, stmt: gast.stmt) -> bool | None:
        """The value of a user's if's test where it has one on every call as far as the
        analysis knows yet (None otherwise), each one seen kept in ``tested``."""
        form = self.normalized.tests.get(stmt)
        if form is None or form[0] not in self.single_sites:
            return None  # (an if of a nested function inlined twice may differ between them)
        _, how, name, negated = form
        value = self.facts.values.get(name)
        known = None
        if how == "none":
            known = _is_none(value)
            known = None if known is None else known != negated
        elif value is not None and not value.none and value.kind == "none":
            known = False
        elif value is not None and not value.none and (
                isinstance(value.value, str) or callable(value.value)):
            known = bool(value.value)  # a string or a function the compile is specialised on
        self.tested.setdefault(stmt, set()).add(known)
        return known

    def folds(self) -> dict[tuple[int, int], bool]:
        """The ifs whose test had one value at every visit, the values now final, at a
        position no other if of the function shares (a nested function inlined twice)."""
        found = {}
        for stmt, seen in self.tested.items():
            if len(seen) == 1 and None not in seen and self.test_value(stmt) in seen:
                found[self.normalized.tests[stmt][0]] = next(iter(seen))
        return found

    def in_block(self, stmt: gast.stmt, op: Op) -> None:
        """A statement inside ``with no_grad()`` (its value carries no gradient), or in a
        try block. An update in place of a value that carries a gradient would change it
        for the code outside, whose gradient follows neither the old value nor the new one
        (under no_grad; in a try block that raised after it, where the handler runs):
        refused, unless the try block made the value itself."""
        updated = self.updated(stmt, op)
        parsed = self.normalized.parsed
        if updated in self.facts.varied and self.stopped:
            raise parsed.error(
                "an update in place, inside no_grad(), of a value that carries a gradient "
                "is not supported", stmt,
                "Compute a new value (y = y - v) rather than updating in place, or update "
                "a copy: y = y.copy().")
        if self.guarded is not None:
            if updated in self.facts.varied and updated not in self.guarded:
                raise parsed.error(
                    "an update in place, inside a try block, of a value from before it that "
                    "carries a gradient is not supported: where a later statement of the "
                    "block raises, the update stays", stmt,
                    "Compute a new value (y = y + v) rather than updating in place, or "
                    "update a copy made in the try block.")
            self.guarded.add(op.target)
        if self.stopped:
            self.facts.varied.discard(op.target)

    def closure(self, stmt: gast.Assign) -> Op:
        """``rhs = (beta, gamma)``, which normalize wrote for a nested function made into a
        value: the tuple, known as a closure of the function that stands for it."""
        facts, target = self.facts, stmt.targets[0].id
        stand_in, once = self.normalized.closures[stmt]
        before = facts.values.pop(target, None)  # (an earlier step of a loop made it too)
        op = self.operations.operation(stmt.value, target)
        value = dataclasses.replace(facts.values[target], closure=stand_in)
        facts.values[target] = value if before is None else join(before, value)
        if once:
            facts.transient.add(target)
        return op

    def updated(self, stmt: gast.stmt, op: Op) -> str | None:
        """The name whose value the statement changes in place, if any."""
        augmented = self.normalized.augmented.get(stmt)
        if augmented is not None:  # x += v: in place where x holds an array or a list
            value = self.facts.values.get(augmented[1])
            rebinds = value is not None and (value.kind in ("scalar", "none") or (
                value.kind == "object" and value.type in (tuple, str)))
            return None if rebinds else augmented[1]
        if op.kind not in UPDATES:
            return None
        base = stmt.value.args[0] if isinstance(stmt.value, gast.Call) and \
            stmt.value.args else None
        base = base.value if isinstance(base, gast.Subscript) else base
        return base.id if isinstance(base, gast.Name) else None

    def statement(self, stmt: gast.stmt) -> Op:
        facts = self.facts
        if isinstance(stmt, gast.Assign) and stmt in self.normalized.closures:
            return self.closure(stmt)
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0].id
            facts.int_result = False
            op = self.operations.operation(stmt.value, target)
            (facts.int_arrays if facts.int_result else facts.not_int).add(target)
            checks.check_function_values(facts, stmt, op)
            if isinstance(stmt.value, (gast.Tuple, gast.List, gast.Dict)) and any(n.id in facts.transient for n in gast.walk(
                    stmt.value) if isinstance(n, gast.Name)):
                facts.transient.add(target)  # a tuple of functions made for one call
            return op
        checks.check_effect(facts, stmt.value)  # an expression statement
        op = self.operations.operation(stmt.value, None)
        checks.check_function_values(facts, stmt, op)
        return Op("effect", None, what=op.what, refusal=op.refusal, always=op.always)
