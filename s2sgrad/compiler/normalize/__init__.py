"""Pass 3, normalize: desugar, then A-normal form in single-assignment style.

Before: a fenced FunctionDef.
After:  a FunctionDef whose statements are only
          name = <atom> | <atom> op <atom> | op <atom> | <atom> cmp <atom>
               | f(<atom>, ..., k=<atom>) | <atom>.attr | <atom>[<index of atoms>]
               | (<atom>, ...)
          f(<atom>, ...)            (a call kept for its effect, e.g. print)
          assert <atom> / raise ...
          if <atom>: <block> else: <block>
          for <name> in <atom>: <block>        (the atom is a range object)
          while True: <block>                   (the block starts with `if <atom>: break`)
          return <atom>                         (once, last)
        where an atom is a local name, a constant, a tuple of constants, or a static reference
        to something outside the function (``np.pi``). Within a block every name is
        assigned once: a user variable assigned again gets a numbered version (``h``, ``h_1``).
        Control flow is desugared: conditional expressions, ``and``/``or`` and chained
        comparisons become ``if`` statements; early returns are lifted so that every path
        ends in one ``return``; ``for`` loops over sequences, ``enumerate`` (with its start),
        ``zip`` (``strict=True`` checks the lengths first) and ``reversed`` become loops over a
        range with the items indexed, the sequences evaluated once before the loop as Python
        does (copied to a temporary if the body rebinds their name); ``break``/``continue``
        become flags that guard the rest of the body. A variable assigned in both branches of
        an ``if`` is merged by a copy at the end of each branch; a variable assigned in a loop
        has a loop version, copied in at the start of the body and out at its end. Each statement keeps
        the source position of the expression it came from.

    h = np.tanh(x @ w)        _t1 = x @ w
    if h.sum() > 0:           h = np.tanh(_t1)
        h = h * 2.0    ->     _t2 = h.sum()
    return np.sum(h)          _t3 = _t2 > 0
                              if _t3:
                                  h_1 = h * 2.0
                                  h_2 = h_1
                              else:
                                  h_2 = h
                              _t4 = np.sum(h_2)
                              return _t4

The pass is a package, one module per job:

    walk.py         the block being written; one statement by its handler; an if, merged
    returns.py      early returns lifted: every path ends in one assignment of the result
    expressions.py  expressions to atoms: operations, calls, conditional expressions,
                    and/or, chained comparisons, comprehensions, pops (POP_ITEM)
    functions.py    nested functions, lambdas and partials inlined where they are called
    generators.py   nested generator functions as functions that build the list they yield
    forms.py        calls of builtins that build containers, np.r_ and np.c_, as the
                    expressions they stand for
    objects.py      objects the function builds: attributes as variables, methods inlined
    methods.py      the source of a method inlined: super() calls, another module's names
    assignments.py  names, unpacking, element writes, appends and inserts (SETITEM, APPEND,
                    INSERT), augmented assignments, del
    outputs.py      calls that write into an array (out=, np.add.at) as element writes;
                    calls of NumPy functions whose value is dropped, dropped
    loops.py        for and while loops: loops over functions unrolled, over dict views
                    by key; break/continue as flags
    iterables.py    what a for loop goes through (a range, sequences, enumerate, zip,
                    reversed) as a range and the items at its index
    spreads.py      starred targets and arguments (a, *rest = xs; g(*xs), g(**d)) item by
                    item, for the sizes the analysis asks for (Respread)
    versions.py     single assignment: versions, merges, loop versions, dead copies dropped
    blocks.py       with blocks (the context managers known, what each does to gradients)
                    and try blocks (one except clause, a flag saying which block ran)

This module holds the table of user-level statements, each class with its handler, and the
pass's result, ``Normalized``. Normalize records facts about versions, not about memory:
which variable each version stands for and which statements update a version in place;
what may share memory is aliasing's to decide.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import gast

from ... import syntax
from ...naming import Namer
from ..parse import Parsed
from . import generators
from .assignments import APPEND, INSERT, SETITEM, Assignments, is_append  # noqa: F401
from .blocks import GRAD, PLAIN, STOP, Blocks, register_context  # noqa: F401
from .expressions import POP_ITEM, Expressions, numpy_name  # noqa: F401
from .loops import Loops
from .outputs import Outputs
from .returns import lift_returns
from .spreads import KEYS_AT_RUN_TIME, Respread  # noqa: F401
from .versions import drop_dead_copies
from .walk import Walk


@dataclass(frozen=True)
class Normalized:
    parsed: Parsed
    node: gast.FunctionDef  # the ANF function
    namer: Namer  # knows every name in use; later passes draw fresh names from it
    # Statements that came from `x += y`, with the user's name and the version of x they
    # update: NumPy's += updates that version in place, visible through its aliases. Tables
    # of statements are keyed by the statement itself (nodes compare by identity).
    augmented: dict[gast.stmt, tuple[str, str]]  # statement -> (user name, version updated)
    writes: dict[gast.stmt, tuple[str, str]]  # `y[i] = v` statements, the same way
    # of those, the writes through a view (`y.T[i] = v`, `b[i][j] = v`): the text the user
    # wrote and how many leading index parts index the view (to check: `i` is an integer)
    views: dict[gast.stmt, tuple[str, int]]
    # The variable each version stands for (`h_2` -> `h`; a parameter stands for itself),
    # the user's and those the desugaring introduces; temporaries are not versions.
    variable_of: dict[str, str]
    placeholders: frozenset[gast.stmt]  # `v = None` statements that only bind a name early
    # `n = len(xs)` statements that start a loop over the items of xs (xs[0], xs[1], ...):
    # the analysis checks that xs is a sequence whose items these are
    iterations: frozenset[gast.stmt] = frozenset()
    # `_t = xs[0]` statements that start reading the sequences of zip(*xs), with how many
    # the loop unpacks: the analysis checks that xs holds that many, a number it knows
    unpacked: tuple[tuple[gast.stmt, int], ...] = ()
    # `a = t[0]` statements that start unpacking `a, b = t`, with how many names: the
    # analysis checks the count where it knows t's length (Python raises otherwise)
    unpacks: tuple[tuple[gast.stmt, int], ...] = ()
    # `_t3 = _t2 + v` statements of `c[k] += v` (`_t2 = c[k]`), with the version of c and
    # _t2: Python updates the item in place where its own `+=` does (an array, a list)
    item_updates: tuple[tuple[gast.stmt, tuple[str, str]], ...] = ()
    # Spreads (see spreads.py): the starred arguments (and ``**`` values) a call passes as
    # they are, with their sites; the site statements ``_n = len(xs)`` with (site, what is
    # spread, how many items a starred target needs); the statements that start a spread
    # written out, with the spread atom and its size: the analysis asks for a site's size
    # (``Respread``) and checks the size of one written out
    spread_arguments: tuple[tuple[gast.AST, int], ...] = ()
    spread_sites: tuple[tuple[gast.stmt, tuple[int, str, int]], ...] = ()
    spread_written: tuple[tuple[gast.stmt, tuple[str, Any]], ...] = ()
    # the loops unrolled over a dict's keys: the dict's name where the loop starts, the
    # keys, the loop's site: the analysis checks that the dict holds those keys there
    unrolled: tuple[tuple[str, tuple, int], ...] = ()
    # each `with` statement -> what its manager does to the values of its body: PLAIN,
    # STOP (no_grad: they carry no gradient) or GRAD (enable_grad)
    contexts: dict[gast.stmt, str] = dataclasses.field(default_factory=dict)
    # each try statement -> its flag: True where its body ran to the end, False where its
    # handler did
    flags: dict[gast.stmt, str] = dataclasses.field(default_factory=dict)
    # `y_1 = __setitem__(y[...], _t1)` statements that write a call's result into its out=
    # array: the analysis checks that NumPy would cast the result into it
    outputs: frozenset[gast.stmt] = frozenset()
    # each if written from a user's if whose test has no effect -> (its source position,
    # "truth" or "none", the version the test reads, negated): the analysis finds those
    # whose test has one value on every call (``Fold``)
    tests: dict[gast.stmt, tuple] = dataclasses.field(default_factory=dict)
    # `rhs = (beta, gamma)` statements that make a nested function or lambda into a value
    # (functions.py): the function that stands for its closures, and whether the value is
    # made for one call only (its callee must not return it)
    closures: dict[gast.stmt, tuple[Any, bool]] = dataclasses.field(default_factory=dict)
    # `n = len(xs)` statements of loops over xs's items that can be unrolled, with the
    # loop's site: the analysis asks for one over a tuple of different functions
    # (``Respread`` with the site and the tuple's length; see loops.py, ``unrolled``)
    loop_sites: dict[gast.stmt, tuple] = dataclasses.field(default_factory=dict)


def normalize(parsed: Parsed, fence: Callable[[Parsed], Any] = lambda parsed: parsed,
              conversions: frozenset[tuple] = frozenset(),
              lengths: dict[int, Any] | None = None,
              folds: dict[tuple[int, int], bool] | None = None) -> Normalized:
    """``fence`` checks the source of each method inlined here as the function's own was
    checked (an object the function builds: see ``objects``). ``conversions`` names the
    arguments the analysis found to be lists or tuples where NumPy converts them to arrays
    (``analyze.NeedsArray``): each is written as the conversion, ``np.asarray(xs)``;
    ``lengths`` gives the size of each spread site the analysis asked for (``Respread``:
    see ``spreads``); ``folds`` the ifs whose test has one value on every call
    (``analyze.Fold``), of which only the block that runs is written."""
    taken = {n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name)}
    namer = Namer(taken | set(parsed.params))
    walk = Walk(parsed, namer, fence, conversions, lengths, folds)
    statements = _Statements(walk)
    result = namer.fresh("result")
    statements.expressions.functions.results.add(result)
    lifted = lift_returns(parsed, [syntax.clone(s) for s in parsed.node.body], result)
    body = walk.block(lifted)
    body.append(syntax.located(syntax.ret(syntax.name(result)), parsed.node.body[-1]))
    fn = syntax.clone(parsed.node)
    fn.body = drop_dead_copies(body)
    statements.blocks.check_partial(fn.body)
    versions, assignments = walk.versions, statements.assignments
    spreads = statements.expressions.spreads
    return Normalized(parsed, fn, namer, dict(assignments.augmented), dict(assignments.writes),
                      dict(assignments.views),
                      dict(versions.variable_of), frozenset(versions.placeholders),
                      frozenset(statements.loops.iterables.iterations),
                      tuple(statements.loops.iterables.unpacked.items()),
                      tuple(assignments.unpacks.items()),
                      tuple(assignments.item_updates.items()),
                      tuple(spreads.arguments.items()), tuple(spreads.statements.items()),
                      tuple(spreads.written.items()), tuple(spreads.unrolled),
                      dict(statements.blocks.modes), dict(statements.blocks.flags),
                      frozenset(statements.outputs.writes), dict(walk.tests),
                      dict(statements.expressions.functions.closures),
                      dict(statements.loops.sites))


class _Statements:
    """The handler of each user-level statement, by class (``Walk.handlers``). Fence lets
    no other statement through (``statements.SOURCE``, which lists this table's rows);
    ``return`` and ``continue`` never reach a handler (``lift_returns`` and
    ``Loops.guard_jumps`` desugar them first), and ``break`` only as the loop guards make
    it. A new construct adds its row here and in ``statements.SOURCE``."""

    TABLE: ClassVar[dict[type, str]] = {
        gast.Assign: "assign",
        gast.AnnAssign: "annotated_assign",
        gast.AugAssign: "augmented_assign",
        gast.Expr: "expression",
        gast.If: "if_",
        gast.For: "for_loop",
        gast.While: "while_loop",
        gast.FunctionDef: "function_def",
        gast.Break: "break_",
        gast.Assert: "assert_",
        gast.Raise: "raise_",
        gast.Pass: "pass_",
        gast.Delete: "delete",
        gast.Nonlocal: "nonlocal_",
        gast.With: "with_",
        gast.Try: "try_",
        gast.Import: "import_",
        gast.ImportFrom: "import_",
    }

    def __init__(self, walk: Walk):
        self.walk = walk
        self.expressions = Expressions(walk)
        self.assignments = Assignments(walk, self.expressions)
        self.loops = Loops(walk, self.expressions)
        self.blocks = Blocks(walk, self.expressions.objects)
        self.outputs = self.expressions.outputs = Outputs(walk, self.expressions,
                                                          self.assignments)
        walk.handlers.update({cls: getattr(self, name) for cls, name in self.TABLE.items()})

    def augmented_assign(self, stmt: gast.AugAssign) -> None:
        self.assignments.augmented_assign(stmt)

    def for_loop(self, stmt: gast.For) -> None:
        self.loops.for_loop(stmt)

    def while_loop(self, stmt: gast.While) -> None:
        self.loops.while_loop(stmt)

    def assign(self, stmt: gast.Assign) -> None:
        self.assignments.assign(stmt.targets, stmt.value)

    def annotated_assign(self, stmt: gast.AnnAssign) -> None:
        self.assignments.assign([stmt.target], stmt.value)

    def expression(self, stmt: gast.Expr) -> None:
        walk = self.walk
        local = walk.parsed.local_names | walk.versions.synthetic
        call = stmt.value
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute):
            # layer.hs.append(h): the append of the attribute's variable
            receiver = self.expressions.objects.variable(call.func.value)
            if receiver is not call.func.value:
                stmt = syntax.replace(stmt, value=syntax.replace(call, func=syntax.replace(
                    call.func, value=receiver)))
        if is_append(stmt.value, local):
            self.assignments.append(stmt.value.func.value, stmt.value.args[0], stmt)
        elif is_append(stmt.value, local, "insert"):
            self.assignments.insert(stmt.value.func.value, *stmt.value.args, stmt)
        elif self.expressions.is_pop(stmt.value):  # xs.pop(): its item unused
            self.expressions.pop(stmt.value)
        elif self.outputs.output_of(stmt.value) is not None:  # np.exp(x, out=y)
            self.outputs.write_output(stmt.value, *self.outputs.output_of(stmt.value))
        elif self.outputs.scatter(stmt.value):  # np.add.at(y, idx, v): emitted
            pass
        elif self.outputs.is_idle(stmt.value):  # np.sum(y), its value dropped
            self.outputs.idle(stmt.value)
        elif not syntax.is_const(stmt.value):  # a docstring or a bare constant does nothing
            walk.emit(syntax.expr_stmt(self.expressions.operation(stmt.value)), stmt)

    def if_(self, stmt: gast.If) -> None:
        site = (getattr(stmt, "lineno", None), getattr(stmt, "col_offset", None))
        form = self._pure_test(stmt.test) if site[0] is not None else None  # (not one the
        # desugaring of a jump writes)
        if form is not None and site in self.walk.folds:  # one block runs on every call
            for inner in stmt.body if self.walk.folds[site] else stmt.orelse:
                self.walk.statement(inner)
            return
        self.walk.branch(stmt, self.expressions.atom(stmt.test), stmt.body, stmt.orelse)
        if form is not None:
            self.walk.tests[self.walk.out[-1]] = (site, *form)

    def _pure_test(self, test: gast.expr) -> tuple | None:
        """A test that has no effect and may have one value on every call, with the version
        it reads: ``x`` ("truth", x) or ``x is None`` / ``x is not None`` ("none", x,
        negated); None for any other test (it is always written and run)."""
        current = self.walk.versions.current
        if isinstance(test, gast.Name) and test.id in current:
            return ("truth", current[test.id], False)
        if isinstance(test, gast.Compare) and len(test.ops) == 1 and isinstance(
                test.ops[0], (gast.Is, gast.IsNot)) and isinstance(test.left, gast.Name) \
                and test.left.id in current and syntax.is_const(test.comparators[0]) \
                and test.comparators[0].value is None:
            return ("none", current[test.left.id], isinstance(test.ops[0], gast.IsNot))
        return None

    def function_def(self, stmt: gast.FunctionDef) -> None:  # inlined where it is called
        function = stmt
        if generators.is_generator(stmt):  # the list of what it yields
            function = generators.list_builder(self.walk.parsed, stmt,
                                               self.walk.namer.fresh("_items"))
            self.expressions.functions.generators.add(stmt.name)
        self.expressions.functions.define_function(stmt.name, function, stmt)

    def break_(self, stmt: gast.Break) -> None:  # only the loop guards make these
        self.walk.emit(syntax.break_(), stmt)

    def assert_(self, stmt: gast.Assert) -> None:
        test = self.expressions.atom(stmt.test)
        msg = None if stmt.msg is None else self.expressions.atom(stmt.msg)
        self.walk.emit(syntax.assert_(test, msg), stmt)

    def raise_(self, stmt: gast.Raise) -> None:
        self.walk.emit(syntax.rename(syntax.clone(stmt), dict(self.walk.versions.current)),
                       stmt)

    def pass_(self, stmt: gast.Pass) -> None:
        pass

    def nonlocal_(self, stmt: gast.Nonlocal) -> None:
        pass  # the names are the enclosing function's own: an inlined call assigns them

    def delete(self, stmt: gast.Delete) -> None:
        for target in stmt.targets:
            self.assignments.delete(target)

    def with_(self, stmt: gast.With) -> None:
        self.blocks.with_(stmt)

    def try_(self, stmt: gast.Try) -> None:
        self.blocks.try_(stmt)

    def import_(self, stmt: gast.Import | gast.ImportFrom) -> None:
        pass  # parse bound its names, as names from outside the function


# The user-level statements normalize handles: what fence lets through.
