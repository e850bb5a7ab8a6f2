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
"""

from __future__ import annotations

from dataclasses import dataclass

import gast
import numpy as np

from . import syntax
from .naming import Namer
from .parse import MISSING, Parsed


@dataclass(frozen=True)
class Normalized:
    parsed: Parsed
    node: gast.FunctionDef  # the ANF function
    namer: Namer  # knows every name in use; later passes draw fresh names from it
    # Statements that came from `x += y` (by index), with the version of x they update and
    # where that value came from: 'param', 'alias' (a copy or a possible view of another
    # value) or 'fresh'. NumPy's += updates in place, visible through aliases.
    augmented: dict[int, tuple[str, str, str]]  # id -> (user name, version, origin)
    writes: dict[int, tuple[str, str, str]]  # `y[i] = v` statements by id, the same way
    placeholders: frozenset[int]  # `v = None` statements that only bind a name early
    # `n = len(xs)` statements that start a loop over the items of xs (xs[0], xs[1], ...):
    # the analysis checks that xs is a sequence whose items these are
    iterations: frozenset[int] = frozenset()


_NOT_SEQUENCES = (iter, map, filter, np.ndindex, np.ndenumerate, np.nditer)

SETITEM = "__setitem__"  # y_1 = __setitem__(y[idx], v): the ANF form of y[idx] = v
APPEND = "__append__"  # xs_1 = __append__(xs, v): the ANF form of xs.append(v)


def _is_append(call: gast.expr, local_names: frozenset[str]) -> bool:
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
            and call.func.value.id in local_names and len(call.args) == 1
            and not call.keywords)


def _rename_store(target: gast.expr, renames: dict[str, str]) -> gast.expr:
    for n in gast.walk(target):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    return target

# Calls whose result may share memory with their first argument.
_VIEWS = {"reshape", "transpose", "ravel", "squeeze", "swapaxes", "moveaxis", "view",
          "expand_dims", "broadcast_to", "asarray", "asanyarray", "atleast_1d", "atleast_2d",
          "flip", "diagonal", "real", "imag", "T", "mT"}


def normalize(parsed: Parsed) -> Normalized:
    taken = {n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name)}
    namer = Namer(taken | set(parsed.params))
    anf = _ANF(parsed, namer)
    result = namer.fresh("result")
    lifted = _lift_returns(parsed, [syntax.clone(s) for s in parsed.node.body], result)
    body = anf.block(lifted)
    body.append(syntax.located(syntax.ret(syntax.name(result)), parsed.node.body[-1]))
    fn = syntax.clone(parsed.node)
    fn.body = _drop_dead_copies(body)
    return Normalized(parsed, fn, namer, dict(anf.augmented), dict(anf.writes),
                      frozenset(anf.placeholders), frozenset(anf.iterations))


def _lift_returns(parsed: Parsed, stmts: list[gast.stmt], result: str) -> list[gast.stmt]:
    """Make every path end in exactly one ``result = value``, by moving the statements after
    an ``if`` that returns on some path into its branches (tail duplication)."""
    out: list[gast.stmt] = []
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, gast.Return):
            value = stmt.value if stmt.value is not None else syntax.const(None)
            result_name = syntax.name(result, store=True)
            out.append(syntax.located(syntax.assign(result_name, value), stmt))
            return out  # the rest is unreachable
        if isinstance(stmt, (gast.For, gast.While)) and _has_return(stmt):
            ret = next(_returns(stmt))
            raise parsed.error("'return' inside a loop is not supported yet", ret,
                               "Assign the result to a variable, 'break', and return after "
                               "the loop.")
        if isinstance(stmt, gast.If) and _has_return(stmt):
            rest = stmts[k + 1:]
            stmt.body = _lift_returns(parsed, stmt.body + [syntax.clone(s) for s in rest],
                                      result)
            stmt.orelse = _lift_returns(parsed, stmt.orelse + [syntax.clone(s) for s in rest],
                                        result)
            out.append(stmt)
            return out
        out.append(stmt)
    last = stmts[-1] if stmts else parsed.node
    out.append(syntax.located(syntax.assign(result, syntax.const(None)), last))
    return out


def _worst(*origins: str) -> str:
    """Where a value may come from, of several: an argument, else an alias, else fresh."""
    for origin in ("param", "alias"):
        if origin in origins:
            return origin
    return "fresh"


def _drop_dead_copies(body: list[gast.stmt]) -> list[gast.stmt]:
    """Remove copies ``a = b`` (merges, loop versions) whose target nothing reads."""
    while True:
        read = {n.id for s in body for n in gast.walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
        dead = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Assign)
                and isinstance(n.value, gast.Name) and isinstance(n.targets[0], gast.Name)
                and n.targets[0].id not in read]
        if not dead:
            return body
        dead_ids = {id(d) for d in dead}
        body = _without(body, dead_ids)


def _without(stmts: list[gast.stmt], dead: set[int]) -> list[gast.stmt]:
    out = []
    for s in stmts:
        if id(s) in dead:
            continue
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, _without(getattr(s, field), dead))
        if isinstance(s, gast.If) and not s.body:
            s.body = [syntax.pass_()]
        out.append(s)
    return out


def _returns(node: gast.AST):
    """The return statements of ``node``'s own code (not of functions defined in it)."""
    todo = list(gast.iter_child_nodes(node))
    while todo:
        n = todo.pop(0)
        if isinstance(n, gast.Return):
            yield n
        elif not isinstance(n, (gast.FunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(n))


def _has_return(node: gast.AST) -> bool:
    return next(_returns(node), None) is not None


def _rebound(body: list[gast.stmt]) -> set[str]:
    """Names that ``body`` binds anew (by assignment, unpacking, a loop target or a nested
    def), not counting augmented assignments (``x += y`` updates an array in place)."""
    names = set()
    for node in gast.walk(syntax.module(body)):
        if isinstance(node, gast.AugAssign):
            continue
        if isinstance(node, (gast.Assign, gast.AnnAssign, gast.For)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in gast.walk(target) if isinstance(n, gast.Name)
                          and isinstance(n.ctx, gast.Store)}
        elif isinstance(node, gast.FunctionDef):
            names.add(node.name)
    return names


def _appended_to(body: list[gast.stmt]) -> set[str]:
    """Names ``xs`` of ``xs.append(v)`` calls in ``body``."""
    return {n.func.value.id for n in gast.walk(syntax.module(body))
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
            and n.func.attr == "append" and isinstance(n.func.value, gast.Name)}


def _jumps(body: list[gast.stmt], kinds: tuple) -> bool:
    """Does ``body`` break or continue its own loop (not a nested one)?"""
    for stmt in body:
        if isinstance(stmt, kinds):
            return True
        if isinstance(stmt, gast.If) and (_jumps(stmt.body, kinds) or _jumps(stmt.orelse, kinds)):
            return True
    return False


class _ANF:
    def __init__(self, parsed: Parsed, namer: Namer):
        self.parsed = parsed
        self.namer = namer
        self.current: dict[str, str] = {p: p for p in parsed.params}  # user name -> version
        self.origin: dict[str, str] = {p: "param" for p in parsed.params}  # version -> origin
        self.augmented: dict[int, tuple[str, str, str]] = {}
        self.reassigned: set[str] = set()  # generated names assigned more than once (flags)
        self.synthetic: set[str] = set()  # variables of desugared expressions (versioned)
        self.comprehension_locals: set[str] = set()
        self.local_functions: dict[str, gast.AST] = {}  # nested defs and lambdas by name
        self.inlining: set[str] = set()
        self.placeholders: set[int] = set()  # `v = None` binding a loop version early
        self.iterations: set[int] = set()  # `n = len(xs)` of loops over xs's items
        self.writes: dict[int, tuple[str, str, str]] = {}  # y[i] = v statements, as augmented
        self.out: list[gast.stmt] = []

    # --- statements ----------------------------------------------------------------------

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        """The ANF of a list of statements (a function body, a branch, a loop body)."""
        outer, self.out = self.out, []
        for stmt in stmts:
            self.statement(stmt)
        body, self.out = self.out, outer
        return body

    def statement(self, stmt: gast.stmt) -> None:
        if isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value)
        elif isinstance(stmt, gast.AnnAssign):
            self.assign([stmt.target], stmt.value)
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
            self.store(stmt.target, stmt.value, stmt.op, stmt)
        elif isinstance(stmt, gast.AugAssign):
            previous = self.current.get(stmt.target.id)
            value = syntax.binop(syntax.name(stmt.target.id), stmt.op, stmt.value)
            self.assign([stmt.target], syntax.located(value, stmt))
            if previous is not None:
                self.augmented[id(self.out[-1])] = (
                    stmt.target.id, previous, self.origin.get(previous, "fresh"))
        elif isinstance(stmt, gast.Expr) and _is_append(
                stmt.value, self.parsed.local_names | self.synthetic):
            self.append(stmt.value.func.value, stmt.value.args[0], stmt)
        elif isinstance(stmt, gast.Expr):
            if not syntax.is_const(stmt.value):  # a docstring or a bare constant does nothing
                self.emit(syntax.expr_stmt(self.operation(stmt.value)), stmt)
        elif isinstance(stmt, gast.If):
            self.branch(stmt, self.atom(stmt.test), stmt.body, stmt.orelse)
        elif isinstance(stmt, gast.For):
            self.for_loop(stmt)
        elif isinstance(stmt, gast.While):
            self.while_loop(stmt)
        elif isinstance(stmt, gast.FunctionDef):  # inlined where it is called
            self.local_functions[stmt.name] = stmt
        elif isinstance(stmt, gast.Break):  # only the loop guard desugaring makes these
            self.emit(syntax.break_(), stmt)
        elif isinstance(stmt, gast.Assert):
            test = self.atom(stmt.test)
            msg = None if stmt.msg is None else self.atom(stmt.msg)
            self.emit(syntax.assert_(test, msg), stmt)
        elif isinstance(stmt, gast.Raise):
            self.emit(syntax.rename(syntax.clone(stmt), dict(self.current)), stmt)
        elif isinstance(stmt, gast.Pass):
            pass
        else:  # fence lets nothing else through (Continue is desugared by guard_jumps)
            raise syntax.unexpected("normalize", stmt)

    def branch(self, origin: gast.AST, test: gast.expr, body: list, orelse: list) -> None:
        """``if test: body else: orelse``, with variables assigned in it merged after it."""
        if isinstance(test, gast.Name) and test.id in self.reassigned:
            # a flag or a desugared value may be assigned again later: test a copy of it
            copy = self.namer.temp()
            self.emit(syntax.assign(copy, test), origin)
            test = syntax.name(copy)
        before = dict(self.current)
        then_block = self.block(body)
        after_then, self.current = self.current, dict(before)
        else_block = self.block(orelse)
        after_else = self.current
        merged = dict(before)
        for user in sorted(set(after_then) | set(after_else)):
            a, b = after_then.get(user), after_else.get(user)
            if a == b:
                merged[user] = a
                continue
            version = self.namer.fresh(user)
            self.origin[version] = _worst(self.origin.get(a, "fresh"), self.origin.get(b, "fresh"))
            if a is not None:  # merge copies are not the user's code: no source position
                then_block.append(syntax.assign(version, syntax.name(a)))
            if b is not None:
                else_block.append(syntax.assign(version, syntax.name(b)))
            merged[user] = version
        self.current = merged
        self.emit(syntax.if_(test, then_block, else_block), origin)

    def for_loop(self, stmt: gast.For) -> None:
        if stmt.orelse:
            raise self.parsed.error("'for ... else' is not supported", stmt,
                                    "Use a flag variable instead of the else clause.")
        iterable = stmt.iter
        kind = self.parsed.resolve(iterable.func) if isinstance(iterable, gast.Call) else None
        items: list[tuple[gast.expr, gast.expr | None]] = []  # (target, sequence) per item
        if kind in _NOT_SEQUENCES or (isinstance(iterable, gast.Call) and isinstance(
                iterable.func, gast.Attribute) and iterable.func.attr in (
                "items", "keys", "values")):
            raise self.parsed.error(
                "a for loop over an iterator is not supported: the loop is differentiated as "
                "a loop over indices", iterable, "Loop over range(n), an array, a list or a "
                "tuple (enumerate, zip and reversed of those work too).")
        # The iterable (and enumerate's start) is evaluated once, before the loop, as
        # Python does: a body (or the loop's own target) that rebinds the name it came from
        # does not change it.
        rebound = _rebound(stmt.body) | syntax.names_written(stmt.target)
        start = counters = None
        strict = False
        if kind is reversed and len(iterable.args) == 1 and not iterable.keywords:
            sequence = self.evaluated_once(iterable.args[0], rebound, stmt)
            count = self.operation(syntax.call(syntax.name("len"), [sequence]), temp=True)
            last = self.operation(syntax.binop(count, "Sub", syntax.const(1)), temp=True)
            sequence_range = self.operation(syntax.call(syntax.name("range"), [
                last, syntax.const(-1), syntax.const(-1)]), temp=True)
            index_target = syntax.name(self.namer.fresh("_i"), store=True)
            items = [(stmt.target, sequence)]
        elif kind is range and not iterable.keywords:
            sequence_range = self.operation(syntax.call(syntax.name("range"), iterable.args),
                                            temp=True)
            index_target = stmt.target
        else:
            if kind is enumerate:
                start = self.enumerate_start(iterable)
                if not (isinstance(stmt.target, gast.Tuple) and len(stmt.target.elts) == 2):
                    raise self.parsed.error(
                        "a loop over enumerate(...) must unpack (index, item)", stmt.target,
                        "Write `for i, item in enumerate(xs):`.")
                sources = [self.sequence(iterable.args[0], rebound, stmt)]
                counter, item = stmt.target.elts
                index_target = syntax.name(self.namer.fresh("_i"), store=True)
                if start is None and sources[0][1] is None:
                    index_target = counter  # the counter is the index itself
                else:
                    items.append((counter, None))
                items.append((item, sources[0]))
                if start is not None:
                    start = self.evaluated_once(start, rebound, stmt)
            elif kind is zip:
                strict = self.zip_strict(iterable)
                if not (isinstance(stmt.target, gast.Tuple) and len(stmt.target.elts) == len(
                        iterable.args)):
                    raise self.parsed.error(
                        f"a loop over zip(...) of {len(iterable.args)} sequences must unpack "
                        f"{len(iterable.args)} names", stmt.target,
                        "Write `for a, b in zip(xs, ys):`.")
                sources = [self.sequence(a, rebound, stmt) for a in iterable.args]
                index_target = syntax.name(self.namer.fresh("_i"), store=True)
                items = list(zip(stmt.target.elts, sources, strict=True))
            else:
                sources = [self.sequence(iterable, rebound, stmt)]
                index_target = syntax.name(self.namer.fresh("_i"), store=True)
                items = [(stmt.target, sources[0])]
            lengths = [length for _, _, length in sources]
            if strict:  # zip(..., strict=True): unequal lengths raise, as zip itself does
                for k, length in enumerate(lengths[1:], start=2):
                    differ = self.operation(syntax.compare(lengths[0], ["NotEq"], [length]),
                                            temp=True)
                    message = f"zip() argument {k} has a different length from argument 1"
                    self.branch(iterable, differ, [syntax.located(syntax.raise_(
                        "ValueError", message), iterable)], [])
            count = lengths[0]
            for length in lengths[1:]:
                count = self.operation(syntax.call(syntax.name("min"), [count, length]),
                                       temp=True)
            sequence_range = self.operation(syntax.call(syntax.name("range"), [count]),
                                            temp=True)
            if start is not None:  # enumerate(xs, start): the counters, a range (which,
                end = self.operation(syntax.binop(start, "Add", count), temp=True)  # as
                counters = self.operation(syntax.call(syntax.name("range"), [  # enumerate
                    start, end]), temp=True)  # does, refuses a start that is not an int)
        if not isinstance(index_target, gast.Name):
            raise self.parsed.error("only a name, or (index, item) with enumerate, or a tuple "
                                    "with zip, can be the target of a for loop", stmt.target,
                                    "Unpack the item inside the loop body.")
        prelude = []
        for t, source in items:
            index = syntax.name(index_target.id)
            if source is None:  # the counter of enumerate: the index, or counters[index]
                value = index if counters is None else syntax.subscript(
                    syntax.clone(counters), index)
            else:
                seq, last = source[:2] if isinstance(source, tuple) else (source, None)
                if last is not None:  # reversed(xs): item i is xs[len(xs) - 1 - i]
                    index = syntax.binop(syntax.clone(last), "Sub", index)
                value = syntax.subscript(syntax.clone(seq), index)
            where = t if isinstance(t, gast.AST) else stmt.target  # the loop's target
            prelude.append(syntax.located(syntax.assign(t, syntax.located(value, where)), where))
        carried = self.loop_carried(stmt.body + prelude, index_target.id)
        loop_var = index_target.id
        before = self.current.get(loop_var)
        version = self.define(loop_var) if loop_var in self.parsed.local_names else loop_var
        if loop_var in self.parsed.local_names:  # after a loop that ran zero times, the
            kept = syntax.name(before) if before else syntax.const(None)  # variable keeps
            binding = syntax.assign(version, kept)                        # its old value
            if before is None:
                self.placeholders.add(id(binding))
            self.out.append(binding)
        body = self.loop_body(prelude, stmt.body, carried, stmt)
        self.emit(syntax.for_(syntax.name(version, store=True), sequence_range, body), stmt)

    def while_loop(self, stmt: gast.While) -> None:
        if stmt.orelse:
            raise self.parsed.error("'while ... else' is not supported", stmt,
                                    "Use a flag variable instead of the else clause.")
        stop = syntax.located(syntax.if_(syntax.not_(stmt.test), [syntax.break_()], []),
                              stmt.test)
        carried = self.loop_carried(stmt.body, None)
        body = self.loop_body([stop], stmt.body, carried, stmt)
        self.emit(syntax.while_(syntax.const(True), body), stmt)

    def enumerate_start(self, call: gast.Call) -> gast.expr | None:
        """The ``start`` of ``enumerate(xs, start)`` or ``enumerate(xs, start=...)``."""
        keywords = {k.arg: k.value for k in call.keywords}
        unknown = [k for k in call.keywords if k.arg != "start"]
        if unknown or not 1 <= len(call.args) + len(keywords) <= 2 or not call.args:
            raise self.parsed.error(
                "enumerate() here takes a sequence and an optional start", (
                    unknown[0].value if unknown else call),
                "Write `enumerate(xs)` or `enumerate(xs, start)`.")
        return call.args[1] if len(call.args) == 2 else keywords.get("start")

    def zip_strict(self, call: gast.Call) -> bool:
        """Whether ``zip(..., strict=...)`` asks for equal lengths (a constant flag)."""
        strict = False
        for keyword in call.keywords:
            if keyword.arg != "strict" or not syntax.is_const(keyword.value):
                raise self.parsed.error(
                    "zip() here takes sequences and an optional constant strict=True/False",
                    keyword.value, "Write `zip(xs, ys)` or `zip(xs, ys, strict=True)`.")
            strict = bool(keyword.value.value)
        if not call.args:
            raise self.parsed.error("a loop over zip() of nothing", call,
                                    "Give zip() the sequences to loop over.")
        return strict

    def sequence(self, node: gast.expr, rebound: set[str], loop: gast.For
                 ) -> tuple[gast.expr, bool, gast.expr]:
        """A sequence a loop indexes (``xs`` or ``reversed(xs)``), evaluated before the loop:
        (the sequence, its last index if reversed else None, its length)."""
        backwards = False
        if isinstance(node, gast.Call):
            kind = self.parsed.resolve(node.func)
            if kind is reversed and len(node.args) == 1 and not node.keywords:
                node, backwards = node.args[0], True
            elif kind in (enumerate, zip, reversed) or kind in _NOT_SEQUENCES:
                raise self.parsed.error(
                    f"a loop over {kind.__name__}() inside enumerate, zip or reversed is not "
                    "supported", node, "Loop over indices (range(len(xs))) and index the "
                    "sequences in the body.")
        atom = self.evaluated_once(node, rebound, loop)
        length = self.operation(syntax.call(syntax.name("len"), [atom]), temp=True)
        syntax.located(self.out[-1], node)  # where the loop names what it loops over
        self.iterations.add(id(self.out[-1]))
        last = self.operation(syntax.binop(length, "Sub", syntax.const(1)), temp=True) \
            if backwards else None
        return atom, last, length

    def evaluated_once(self, node: gast.expr, rebound: set[str], loop: gast.For
                       ) -> gast.expr:
        """An atom holding the value of ``node`` as it is before the loop. A name the loop
        body assigns again is copied first: its name would read the loop's own version."""
        atom = self.atom(node)
        if isinstance(atom, gast.Name) and atom.id in rebound and (
                atom.id in self.parsed.local_names or atom.id in self.synthetic):
            copy = self.namer.temp()
            self.emit(syntax.assign(copy, atom), loop.iter)
            return syntax.name(copy)
        if isinstance(atom, gast.Name) and atom.id in _appended_to(loop.body):
            raise self.parsed.error(
                f"the loop appends to '{atom.id}', the list it loops over", loop.iter,
                "Loop over a copy (`for v in list(xs):`) or build a new list.")
        return atom

    def loop_carried(self, body: list[gast.stmt], loop_var: str | None) -> list[str]:
        """User variables the body assigns (their values flow from one iteration on)."""
        written = set()
        names = self.parsed.local_names | self.synthetic
        for stmt in body:
            written |= {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
                        and isinstance(n.ctx, gast.Store) and n.id in names}
            written |= {n.func.value.id for n in gast.walk(stmt)  # xs.append(v)
                        if isinstance(n, gast.Call) and _is_append(n, names)}
            written |= {n.value.id for n in gast.walk(stmt)  # y[i] = v makes a new version
                        if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
                        and isinstance(n.value, gast.Name)}
            written |= {n.target.value.id for n in gast.walk(stmt)
                        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Subscript)
                        and isinstance(n.target.value, gast.Name)}
        written.discard(loop_var)
        return sorted(written)

    def loop_body(self, head: list[gast.stmt], body: list[gast.stmt], carried: list[str],
                  loop: gast.stmt) -> list[gast.stmt]:
        """A loop body in ANF: loop versions copied in at the start and out at the end,
        ``break`` and ``continue`` turned into flags; ``head`` (the item of a for loop, the
        test of a while loop) runs first in each iteration."""
        prefix, body = self.guard_jumps(body, loop)
        body = prefix + head + body
        loop_versions = {}
        for user in carried:
            loop_versions[user] = self.namer.fresh(user)
            # the loop version holds the value from before the loop or from the body's end
            before = self.origin.get(self.current.get(user), "fresh")
            inside = [self.origin_of(s.value) for s in syntax.in_order(body)
                      if isinstance(s, gast.Assign) and any(
                          syntax.is_name(t, user) for t in s.targets)]
            self.origin[loop_versions[user]] = _worst(before, *inside)
            if user in self.current:  # before the loop: the loop version starts as the value
                self.out.append(syntax.assign(loop_versions[user],
                                              syntax.name(self.current[user])))
            else:  # first assigned in the loop: bound before it, so it can be saved after it
                placeholder = syntax.assign(loop_versions[user], syntax.const(None))
                self.placeholders.add(id(placeholder))
                self.out.append(placeholder)
        outer, self.out = self.out, []
        for user, version in loop_versions.items():
            if user in self.current:  # in the body: read the value this iteration starts with
                start = self.define(user)
                self.origin[start] = self.origin[version]
                self.out.append(syntax.assign(start, syntax.name(version)))
            else:
                self.current[user] = version
        for stmt in body:
            self.statement(stmt)
        for user, version in loop_versions.items():
            if self.current.get(user) not in (None, version):
                self.out.append(syntax.assign(version, syntax.name(self.current[user])))
            self.current[user] = version
        block, self.out = self.out, outer
        return block

    def guard_jumps(self, body: list[gast.stmt], loop: gast.stmt) -> list[gast.stmt]:
        """``break``/``continue`` -> flags: the rest of the body runs under ``if not _skip``
        and ``if _break: break`` stops the loop before the next iteration."""
        has_break = _jumps(body, (gast.Break,))
        if not has_break and not _jumps(body, (gast.Continue,)):
            return [], body
        skip = self.namer.fresh("_skip")
        stop = self.namer.fresh("_break") if has_break else None
        self.reassigned |= {skip, stop}

        def located(node):  # flags and guards are not the user's code: no source position
            return node

        def guard(stmts):
            out = []
            for k, s in enumerate(stmts):
                if isinstance(s, (gast.Break, gast.Continue)):
                    if isinstance(s, gast.Break):
                        out.append(located(syntax.assign(stop, syntax.const(True))))
                    out.append(located(syntax.assign(skip, syntax.const(True))))
                    return out  # the rest of this block is unreachable
                if isinstance(s, gast.If) and (_jumps([s], (gast.Break, gast.Continue))):
                    s.body, s.orelse = guard(s.body), guard(s.orelse)
                    out.append(s)
                    rest = guard(stmts[k + 1:])
                    if rest:
                        out.append(located(syntax.if_(syntax.not_(syntax.name(skip)), rest,
                                                      [])))
                    return out
                out.append(s)
            return out

        prefix = [located(syntax.assign(skip, syntax.const(False)))]
        if stop:
            self.out.append(syntax.assign(stop, syntax.const(False)))
            prefix.insert(0, located(syntax.if_(syntax.name(stop), [syntax.break_()], [])))
        return prefix, guard(body)

    def store(self, target: gast.Subscript, value: gast.expr, op: gast.operator | None,
              origin: gast.AST) -> None:
        """``y[idx] = v`` (or ``y[idx] op= v``) -> ``y_1 = __setitem__(y[idx], v)``: a new
        version of y, which optimize makes an in-place update where that is safe."""
        base = target.value
        if not (isinstance(base, gast.Name) and base.id in self.parsed.local_names):
            raise self.parsed.error("only a variable's elements can be assigned to", target,
                                    "Assign to a name first, e.g. `row = y[i]; ...`.")
        previous = self.load(base).id
        index = self.index(target.slice)
        if op is not None:  # y[idx] += v  is  y[idx] = y[idx] + v, evaluated once
            current = syntax.name(self.namer.temp())
            read = syntax.subscript(syntax.name(previous), syntax.clone(index))
            self.emit(syntax.assign(current.id, read), origin)
            value = syntax.located(syntax.binop(current, op, value), origin)
        atom = self.atom(value)
        region = syntax.subscript(syntax.name(previous), index)
        new = self.define(base.id)
        self.origin[new] = self.origin.get(previous, "fresh")
        self.emit(syntax.assign(new, syntax.call(syntax.name(SETITEM), [region, atom])), origin)
        self.writes[id(self.out[-1])] = (base.id, previous, self.origin.get(previous, "fresh"))

    def append(self, base: gast.Name, value: gast.expr, origin: gast.AST) -> None:
        """``xs.append(v)`` -> ``xs_1 = __append__(xs, v)``: a new version of the list, which
        the forward makes by appending in place."""
        previous = self.load(base).id
        atom = self.atom(value)
        new = self.define(base.id)
        self.origin[new] = self.origin.get(previous, "fresh")
        self.emit(syntax.assign(new, syntax.call(syntax.name(APPEND), [
            syntax.name(previous), atom])), origin)

    def inline(self, call: gast.Call) -> gast.expr:
        """A call of a nested function or lambda, with its body in place: its parameters and
        locals get fresh names, its free variables read the enclosing ones as they are now
        (as Python's closures do), and its returns assign one result."""
        function = call.func if isinstance(call.func, gast.Lambda) else \
            self.local_functions[call.func.id]
        what = getattr(function, "name", "lambda")
        if what in self.inlining:
            raise self.parsed.error(f"the nested function {what}() calls itself: recursion "
                                    "is not supported", call, "Write it as a loop.")
        args = function.args
        if args.vararg or args.kwarg or args.kwonlyargs:
            raise self.parsed.error("nested functions with *args, **kwargs or keyword-only "
                                    "parameters are not supported", call,
                                    "Use plain parameters.")
        names = [a.id for a in args.posonlyargs + args.args]
        defaults = dict(zip(names[len(names) - len(args.defaults):], args.defaults,
                            strict=True))
        bound: dict[str, gast.expr] = dict(zip(names, call.args, strict=False))
        if len(call.args) > len(names):
            raise self.parsed.error(f"{what}() takes {len(names)} arguments", call)
        for keyword in call.keywords:
            if keyword.arg not in names or keyword.arg in bound:
                raise self.parsed.error(f"{what}() got an unexpected argument "
                                        f"'{keyword.arg}'", keyword.value)
            bound[keyword.arg] = keyword.value
        for name in names:
            if name not in bound:
                if name not in defaults:
                    raise self.parsed.error(f"{what}() is missing the argument '{name}'", call)
                bound[name] = defaults[name]
        body = function.body if isinstance(function, gast.FunctionDef) else [
            syntax.located(syntax.ret(function.body), function.body)]
        inner_locals = set(names) | {n.id for s in body for n in gast.walk(s)
                                     if isinstance(n, gast.Name)
                                     and isinstance(n.ctx, gast.Store)}
        renames = {n: self.namer.fresh(f"{n}_{what}" if what != "lambda" else f"_{n}")
                   for n in sorted(inner_locals)}
        self.synthetic |= set(renames.values())
        for name in names:  # the arguments, evaluated here, in order
            self.emit(syntax.assign(self.define(renames[name]), self.atom(bound[name])), call)
        result = self.synthetic_variable()
        renamed = [syntax.rename(syntax.clone(s), renames) for s in body]
        for stmt in renamed:
            for n in gast.walk(stmt):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and \
                        n.id in renames:
                    n.id = renames[n.id]
        self.inlining.add(what)
        try:
            for stmt in _lift_returns(self.parsed, renamed, result):
                self.statement(stmt)
        finally:
            self.inlining.discard(what)
        return syntax.name(self.current[result])

    def comprehension(self, node: gast.ListComp | gast.GeneratorExp) -> gast.expr:
        """``[f(x) for x in xs if c]`` -> a list built by a loop: ``_l = []``, then for each
        x (renamed: a comprehension's names stay inside it) ``if c: _l.append(f(x))``."""
        result = self.synthetic_variable()
        self.emit(syntax.assign(self.define(result), syntax.list_([])), node)
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
        self.comprehension_locals |= set(renames.values()) | {result}
        for stmt in inner:
            self.statement(stmt)
        return syntax.name(self.current[result])

    def assign(self, targets: list[gast.expr], value: gast.expr) -> None:
        first, *others = targets
        if isinstance(value, gast.Lambda) and isinstance(first, gast.Name) and not others:
            self.local_functions[first.id] = value  # f = lambda v: ...: inlined where called
            return
        if isinstance(first, gast.Subscript):
            if others:
                raise self.parsed.error("chained assignment to an element is not supported",
                                        first, "Write one assignment per statement.")
            self.store(first, value, None, first)
            return
        if isinstance(first, gast.Name):
            result = self.operation(value, target=first).id
        else:
            result = None
            self.unpack(first, value)
        for target in others:  # a = b = value: later targets copy the first
            if result is None:
                raise self.parsed.error("chained assignment to a tuple is not supported",
                                        target, "Write one assignment per statement.")
            self.emit(syntax.assign(self.define(target.id), syntax.name(result)), target)

    def unpack(self, target: gast.Tuple | gast.List, value: gast.expr) -> None:
        if isinstance(value, (gast.Tuple, gast.List)):
            if len(value.elts) != len(target.elts):
                raise self.parsed.error(
                    f"cannot unpack {len(value.elts)} values into {len(target.elts)} names",
                    value, "Give as many names as values.")
            atoms = [self.atom(v) for v in value.elts]  # every right-hand side before a store
            for t, a in zip(target.elts, atoms, strict=True):
                self.emit(syntax.assign(self.define(t.id), a), t)
            return
        whole = self.atom(value)  # n, m = x.shape  ->  n = _t1[0]; m = _t1[1]
        for k, t in enumerate(target.elts):
            item = syntax.subscript(syntax.clone(whole), syntax.const(k))
            name = self.define(t.id)
            self.origin[name] = "alias"
            self.emit(syntax.assign(name, item), t)

    # --- expressions ---------------------------------------------------------------------

    def atom(self, node: gast.expr) -> gast.expr:
        """An atom holding the value of ``node``, emitting statements as needed."""
        if self.is_atom(node):
            return self.load(node)
        if (isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd))
                and syntax.is_const(node.operand)
                and isinstance(node.operand.value, (int, float, complex))):
            value = node.operand.value
            return syntax.const(-value if isinstance(node.op, gast.USub) else value)
        if isinstance(node, (gast.ListComp, gast.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, gast.IfExp):
            result = self.synthetic_variable()
            self.branch(node, self.atom(node.test), [syntax.located(syntax.assign(
                result, node.body), node.body)], [syntax.located(syntax.assign(
                    result, node.orelse), node.orelse)])
            return syntax.name(self.current[result])
        if isinstance(node, gast.BoolOp):  # a and b: b only if a is true; the value is a or b
            result = self.synthetic_variable()
            first, *rest = node.values
            value = self.atom(first)
            for other in rest:
                self.emit(syntax.assign(self.define(result), value), node)
                taken = [syntax.located(syntax.assign(result, other), other)]
                is_and = isinstance(node.op, gast.And)
                self.branch(node, syntax.name(self.current[result]), taken if is_and else [],
                            [] if is_and else taken)
                value = syntax.name(self.current[result])
            return value
        if isinstance(node, gast.Compare) and len(node.ops) > 1:  # a < b < c
            result = self.synthetic_variable()
            left = self.atom(node.left)
            self.chain(node, result, left, node.ops, node.comparators)
            return syntax.name(self.current[result])
        return self.operation(node, temp=True)

    def chain(self, node: gast.Compare, result: str, left: gast.expr, ops: list,
              comparators: list) -> None:
        """``left op0 c0 op1 c1 ...``: each operand evaluated once, the rest only while true."""
        right = self.atom(comparators[0])
        first = syntax.compare(left, ops[:1], [right])
        self.emit(syntax.assign(self.define(result), syntax.located(first, node)), node)
        if len(ops) > 1:
            rest = syntax.compare(right, ops[1:], comparators[1:])
            self.branch(node, syntax.name(self.current[result]),
                        [syntax.located(syntax.assign(result, rest), node)], [])

    def synthetic_variable(self) -> str:
        """A variable the desugaring introduces; versioned and merged like the user's own."""
        name = self.namer.temp()
        self.synthetic.add(name)
        return name

    def operation(self, node: gast.expr, target: gast.Name | None = None,
                  temp: bool = False) -> gast.expr:
        """Emit ``target = <one operation on atoms>`` (a new temporary if ``temp``); with
        neither, return the operation."""
        if isinstance(node, (gast.IfExp, gast.BoolOp, gast.ListComp, gast.GeneratorExp)) or (
                isinstance(node, gast.Compare) and len(node.ops) > 1):
            node = syntax.located(self.atom(node), node)  # desugared to an if: copy its value
        if isinstance(node, gast.BinOp):
            op = syntax.binop(self.atom(node.left), node.op, self.atom(node.right))
        elif isinstance(node, gast.UnaryOp):
            op = syntax.unaryop(node.op, self.atom(node.operand))
        elif isinstance(node, gast.Compare):
            op = syntax.compare(self.atom(node.left), node.ops,
                                [self.atom(c) for c in node.comparators])
        elif isinstance(node, gast.Call) and (isinstance(node.func, gast.Lambda) or (
                isinstance(node.func, gast.Name) and node.func.id in self.local_functions)):
            op = self.inline(node)  # the result of a nested function, as an atom
        elif isinstance(node, gast.Call):
            op = syntax.call(self.callee(node.func), [self.atom(a) for a in node.args],
                             [(k.arg, self.atom(k.value)) for k in node.keywords])
        elif isinstance(node, gast.Attribute) and not self.is_atom(node):
            op = syntax.attribute(self.atom(node.value), node.attr)
        elif isinstance(node, gast.Subscript):
            op = syntax.subscript(self.atom(node.value), self.index(node.slice))
        elif isinstance(node, (gast.Tuple, gast.List)):
            elts = [self.atom(e) for e in node.elts]
            op = syntax.tuple_(elts) if isinstance(node, gast.Tuple) else syntax.list_(elts)
        elif isinstance(node, gast.Dict):
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
        name = self.define(target.id)
        self.origin[name] = self.origin_of(op)
        self.emit(syntax.assign(name, op), node)
        return syntax.name(name)

    def origin_of(self, op: gast.expr) -> str:
        """'alias' if the value may share memory with another value, else 'fresh'."""
        if isinstance(op, (gast.Name, gast.Subscript)):
            return "alias"
        if isinstance(op, gast.Attribute):
            return "alias" if op.attr in _VIEWS else "fresh"
        if isinstance(op, gast.Call):
            attr = op.func.attr if isinstance(op.func, gast.Attribute) else getattr(
                op.func, "id", "")
            return "alias" if attr in _VIEWS else "fresh"
        return "fresh"

    def callee(self, func: gast.expr) -> gast.expr:
        if self.is_static(func):
            return func
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
        return path is not None and path.split(".")[0] not in self.parsed.local_names

    def is_atom(self, node: gast.expr) -> bool:
        return (isinstance(node, gast.Name) or syntax.is_const(node)
                or syntax.is_static_tuple(node) or self.is_static(node))

    def load(self, node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Name) and node.id in self.local_functions:
            raise self.parsed.error(
                f"the nested function '{node.id}' is used other than by calling it", node,
                "Nested functions and lambdas are inlined where they are called; pass "
                "values, not the function, or define it at module level.")
        if isinstance(node, gast.Lambda):
            raise self.parsed.error("a lambda is used other than by calling it", node,
                                    "Define a module-level function instead.")
        if isinstance(node, gast.Name) and node.id in self.synthetic:
            return syntax.located(syntax.name(self.current[node.id]), node)
        if isinstance(node, gast.Name) and node.id in self.namer.generated:
            return syntax.clone(node)  # made by this pass: already in normal form
        if isinstance(node, gast.Name) and node.id in self.parsed.local_names:
            if node.id not in self.current:
                raise self.parsed.error(f"'{node.id}' is used before it is assigned", node)
            return syntax.located(syntax.name(self.current[node.id]), node)
        if isinstance(node, gast.Name) and self.parsed.lookup(node.id) is MISSING:
            raise self.parsed.error(f"name '{node.id}' is not defined", node,
                                    "Define it before the function is first called, or pass "
                                    "it in as an argument.")
        return syntax.clone(node)

    def define(self, user_name: str) -> str:
        """The name a new assignment to ``user_name`` stores into (a new version if needed)."""
        if user_name not in self.parsed.local_names and user_name not in self.synthetic:
            return user_name  # a temporary: assigned once, where it is made
        taken = user_name in self.current or (
            user_name in self.namer.generated and user_name not in self.synthetic)
        version = self.namer.fresh(user_name) if taken else self.namer.reserve(user_name)
        self.current[user_name] = version
        return version

    def emit(self, stmt: gast.stmt, origin: gast.AST) -> None:
        self.out.append(syntax.located(stmt, origin))
