"""Loops: ``for`` over a range with the items indexed, ``while True`` with its test first.

Takes a user-level ``for`` or ``while`` statement; gives, through the walk, the loop in the
two forms normalized code has: ``for <name> in <range>:`` and ``while True:`` whose body
starts with ``if <atom>: break``. A ``for`` loop over a sequence, ``enumerate`` (with its
start), ``zip`` (``strict=True`` checks the lengths first) or ``reversed`` becomes a loop
over a range with the items indexed; zips and enumerates nest in one another, each bound to
its part of the target (``for i, (a, (b, c)) in enumerate(zip(xs, zip(ys, zs)))``). The
sequences are evaluated once, before the loop, as Python does (copied to a temporary if the
body rebinds their name):

    for i, v in enumerate(xs):        _t1 = len(xs)
        h = h + v * i         ->      _t2 = range(_t1)
                                      i = None
                                      h_1 = h
                                      v_1 = None
                                      for i in _t2:
                                          h_2 = h_1
                                          v_2 = xs[i]
                                          _t3 = v_2 * i
                                          h_3 = h_2 + _t3
                                          h_1 = h_3

``zip(*xs)`` passes xs[0], xs[1], ... as its sequences, as many as the target unpacks: the
analysis checks that xs is known to hold that many when compiling (a rule's tuple result,
a tuple argument, a display), and refuses it otherwise.

``break`` and ``continue`` become flags: the rest of the body runs under ``if not _skip``,
and ``if _break: break`` ends the loop before the next iteration. The variables the body
assigns get loop versions (see versions.py). Loops over iterators (``map``, ``iter``,
``dict.items()``) and ``for``/``while`` with an ``else`` are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast
import numpy as np

from ... import syntax
from .assignments import is_append
from .expressions import Expressions, is_pop
from .walk import Walk

_NOT_SEQUENCES = (iter, map, filter, np.ndindex, np.ndenumerate, np.nditer)
_VIEWS = ("items", "values", "keys")  # a dict's views, looped over by key
_UNROLLED = 16  # the most functions a loop over functions is unrolled for


class Loops:
    def __init__(self, walk: Walk, expressions: Expressions):
        self.walk = walk
        self.parsed, self.namer, self.versions = walk.parsed, walk.namer, walk.versions
        self.emit, self.branch = walk.emit, walk.branch
        self.atom, self.operation = expressions.atom, expressions.operation
        self.is_static = expressions.is_static
        self.default_variables = expressions.functions.default_variables
        self.objects = expressions.objects
        self.iterations: set[gast.stmt] = set()  # `n = len(xs)` of loops over xs's items
        self.unpacked: dict[gast.stmt, int] = {}  # `_t = xs[0]` of zip(*xs) -> len(xs)

    def for_loop(self, stmt: gast.For) -> None:
        if stmt.orelse:
            raise self.parsed.error("'for ... else' is not supported", stmt,
                                    "Use a flag variable instead of the else clause.")
        if self.over_functions(stmt):
            return
        stmt = self.over_dict_views(stmt)
        iterable = stmt.iter
        kind = self.parsed.resolve(iterable.func) if isinstance(iterable, gast.Call) else None
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
        if kind is reversed and len(iterable.args) == 1 and not iterable.keywords and not \
                isinstance(iterable.args[0], gast.Starred):
            self.reversible(iterable.args[0])
            sequence = self.evaluated_once(iterable.args[0], rebound, stmt)
            count = self.operation(syntax.call(syntax.name("len"), [sequence]), temp=True)
            last = self.operation(syntax.binop(count, "Sub", syntax.const(1)), temp=True)
            sequence_range = self.operation(syntax.call(syntax.name("range"), [
                last, syntax.const(-1), syntax.const(-1)]), temp=True)
            index_target = syntax.name(self.namer.fresh("_i"), store=True)
            prelude = [_item(stmt.target, syntax.subscript(syntax.clone(sequence), syntax.name(
                index_target.id)), stmt.target)]
        elif kind is range and not iterable.keywords:
            sequence_range = self.operation(syntax.call(syntax.name("range"), iterable.args),
                                            temp=True)
            index_target = stmt.target
            prelude = []
        else:
            source = self.source(iterable, stmt.target, None, rebound, stmt)
            count = self.length(source)
            sequence_range = self.operation(syntax.call(syntax.name("range"), [count]),
                                            temp=True)
            self.counters(source, count)
            index_target = syntax.name(self.namer.fresh("_i"), store=True)
            if isinstance(source, _Enumerated) and source.start is None and isinstance(
                    stmt.target.elts[0], gast.Name) and not (
                    isinstance(source.item, _Sequence) and source.item.last is not None):
                index_target = stmt.target.elts[0]  # the counter is the index itself
                bound = self.items(stmt.target.elts[1], source.item, index_target.id)
            else:
                bound = self.items(stmt.target, source, index_target.id)
            prelude = [_item(t, value, t) for t, value in bound]
        if not isinstance(index_target, gast.Name):
            raise self.parsed.error("only a name, or (index, item) with enumerate, or a tuple "
                                    "with zip, can be the target of a for loop", stmt.target,
                                    "Unpack the item inside the loop body.")
        carried = self.loop_carried(stmt.body + prelude, index_target.id)
        loop_var = index_target.id
        before = self.versions.current.get(loop_var)
        local = loop_var in self.parsed.local_names
        version = self.versions.define(loop_var) if local else loop_var
        if local:  # after a loop that ran zero times, the variable keeps its old value
            kept = syntax.name(before) if before else syntax.const(None)
            binding = syntax.assign(version, kept)
            if before is None:
                self.versions.placeholders.add(binding)
            self.walk.out.append(binding)
        body = self.loop_body(prelude, stmt.body, carried, stmt)
        self.emit(syntax.for_(syntax.name(version, store=True), sequence_range, body), stmt)

    def over_functions(self, stmt: gast.For) -> bool:
        """A loop over a fixed sequence that holds functions (a module-level tuple, or a
        tuple or list written out of names from outside), with or without enumerate, is
        unrolled, so that each call knows the function it calls:

            for act in (np.tanh, softplus):      act = np.tanh
                h = h + act(x)            ->     h = h + act(x)
                                                 act = softplus
                                                 h = h + act(x)

        A module-level list may grow after the compile and is not unrolled."""
        iterable, target, counter = stmt.iter, stmt.target, None
        if isinstance(iterable, gast.Call) and self.parsed.resolve(iterable.func) is \
                enumerate and len(iterable.args) == 1 and not iterable.keywords and \
                isinstance(target, gast.Tuple) and len(target.elts) == 2:
            (iterable,), (counter, target) = iterable.args, target.elts
        if isinstance(iterable, (gast.Tuple, gast.List)) and iterable.elts and all(
                self.is_static(e) for e in iterable.elts):
            items = list(iterable.elts)
            values = [self.parsed.resolve(e) for e in items]
        elif syntax.dotted_name(iterable) is not None and \
                self.is_static(iterable):
            recorded = len(self.parsed.dependencies)
            values = self.parsed.resolve(iterable)
            if not isinstance(values, tuple):
                return False
            if len(self.parsed.dependencies) > recorded:
                # the compile unrolled this very tuple: rebinding the name to another tuple
                # (a notebook cell run again) must recompile, not only a change of its type
                where, name, _, _ = self.parsed.dependencies[-1]
                self.parsed.dependencies[-1] = (where, name, "is", values)
            items = [syntax.located(syntax.subscript(syntax.clone(iterable), syntax.const(k)),
                                    iterable) for k in range(len(values))]
        else:
            return False
        if not any(callable(v) and not isinstance(v, type) for v in values) or \
                len(values) > _UNROLLED or _jumps(stmt.body, (gast.Break, gast.Continue)):
            return False
        for k, item in enumerate(items):
            if counter is not None:
                self.walk.statement(syntax.located(syntax.assign(
                    counter, syntax.const(k)), counter))
            self.walk.statement(syntax.located(syntax.assign(target, item), target))
            for s in stmt.body:
                self.walk.statement(syntax.clone(s))
        return True

    def source(self, node: gast.expr, target: gast.expr, outer: str | None,
               rebound: set[str], loop: gast.For) -> _Source:
        """What a loop (or one of its zip's or enumerate's arguments, inside ``outer``)
        iterates over, with ``target`` what each item is bound to: a zip of sources, an
        enumerate of one, or a sequence indexed by the loop. The sequences are evaluated
        here, in the order Python evaluates them. ``zip(*xs)`` passes as many sequences as
        the target unpacks, xs[0], xs[1], ...; the analysis checks that xs holds that many
        (``unpacked``)."""
        kind = self.parsed.resolve(node.func) if isinstance(node, gast.Call) else None
        inside = f" inside {outer}()" if outer else ""
        if kind is enumerate:
            if any(isinstance(a, gast.Starred) for a in node.args):
                raise self.parsed.error(
                    "enumerate() of a starred argument", node,
                    "Write `enumerate(xs)` or `enumerate(xs, start)`.")
            start = self.enumerate_start(node)
            if not (isinstance(target, gast.Tuple) and len(target.elts) == 2):
                raise self.parsed.error(
                    f"a loop over enumerate(...){inside} must unpack (index, item)",
                    target if outer is None else node,
                    "Write `for i, item in enumerate(xs):`.")
            item = self.source(node.args[0], target.elts[1], "enumerate", rebound, loop)
            if start is not None:
                start = self.evaluated_once(start, rebound, loop)
            return _Enumerated(item, start)
        if kind is not zip:
            return self.sequence(node, rebound, loop)
        strict = self.zip_strict(node)
        arguments = self.zip_arguments(node, target)
        n = sum(a[1] if isinstance(a, tuple) else 1 for a in arguments)
        if not (isinstance(target, gast.Tuple) and len(target.elts) == n):
            if outer is None:
                raise self.parsed.error(
                    f"a loop over zip(...) of {n} sequences must unpack {n} names", target,
                    "Write `for a, b in zip(xs, ys):`.")
            raise self.parsed.error(
                f"a loop over zip(){inside} must unpack its {n} items", node,
                f"Write `for i, (a, b) in {outer}(zip(xs, ys)):`.")
        parts, targets = [], iter(target.elts)
        for argument in arguments:
            atoms = self.spread(*argument, rebound, loop) if isinstance(argument, tuple) \
                else [argument]
            parts.extend(self.source(a, next(targets), "zip", rebound, loop) for a in atoms)
        return _Zipped(parts, strict, node)

    def zip_arguments(self, call: gast.Call, target: gast.expr) -> list:
        """The arguments of ``zip(...)``, a starred tuple or list display spread out; a
        starred argument whose length only the value knows (``zip(*pair)``) is there once
        for each name the target gives it: (the Starred node, how many) in place of its
        sequences."""
        arguments: list = []
        for a in call.args:
            if isinstance(a, gast.Starred) and isinstance(a.value, (gast.Tuple, gast.List)) \
                    and not any(isinstance(e, gast.Starred) for e in a.value.elts):
                arguments.extend(a.value.elts)
            else:
                arguments.append(a)
        if not arguments:
            raise self.parsed.error("a loop over zip() of nothing", call,
                                    "Give zip() the sequences to loop over.")
        spread = [a for a in arguments if isinstance(a, gast.Starred)]
        if not spread:
            return arguments
        others = len(arguments) - len(spread)
        named = len(target.elts) if isinstance(target, gast.Tuple) else None
        if len(spread) > 1 or named is None or named <= others:
            what = "two starred arguments" if len(spread) > 1 else \
                "a starred argument, and the loop does not unpack its items" if named is None \
                else "a starred argument, and the loop unpacks no name for its sequences"
            raise self.parsed.error(
                f"zip() of {what}: how many sequences a starred argument holds is not known "
                "when compiling, and the loop is compiled for a fixed number of them",
                spread[1] if len(spread) > 1 else spread[0],
                "Pass the sequences by name, e.g. `for w, v in zip(vals, vecs.T):`, or "
                "unpack one name per sequence: `for w, v in zip(*pair):`.")
        return [(a, named - others) if isinstance(a, gast.Starred) else a for a in arguments]

    def spread(self, argument: gast.Starred, count: int, rebound: set[str],
               loop: gast.For) -> list[gast.expr]:
        """The ``count`` sequences of ``*xs`` in a zip: xs evaluated once, then xs[0],
        xs[1], ...; the read of xs[0] is where the analysis checks that xs holds ``count``
        items, a number it knows when compiling."""
        whole = self.evaluated_once(argument.value, rebound, loop)
        atoms = []
        for k in range(count):
            atoms.append(self.operation(syntax.located(syntax.subscript(
                syntax.clone(whole), syntax.const(k)), argument), temp=True))
            if k == 0:
                self.unpacked[self.walk.out[-1]] = count
        return atoms

    def length(self, source: _Source) -> gast.expr:
        """How many items a source has: a sequence's length, the shortest of a zip's (after
        ``strict=True`` checked that they are equal, as zip itself does)."""
        if isinstance(source, _Sequence):
            return source.length
        if isinstance(source, _Enumerated):
            return self.length(source.item)
        lengths = [self.length(part) for part in source.parts]
        if source.strict:  # zip(..., strict=True): unequal lengths raise, as zip itself does
            for k, length in enumerate(lengths[1:], start=2):
                differ = self.operation(syntax.compare(lengths[0], ["NotEq"], [length]),
                                        temp=True)
                message = f"zip() argument {k} has a different length from argument 1"
                self.branch(source.call, differ, [syntax.located(syntax.raise_(
                    "ValueError", message), source.call)], [])
        count = lengths[0]
        for length in lengths[1:]:
            count = self.operation(syntax.call(syntax.name("min"), [count, length]),
                                   temp=True)
        return count

    def counters(self, source: _Source, count: gast.expr) -> None:
        """The counters of each ``enumerate(xs, start)``: range(start, start + count), which,
        as enumerate does, refuses a start that is not an int."""
        if isinstance(source, _Enumerated):
            if source.start is not None:
                end = self.operation(syntax.binop(source.start, "Add", count), temp=True)
                source.counters = self.operation(syntax.call(syntax.name("range"), [
                    source.start, end]), temp=True)
            self.counters(source.item, count)
        elif isinstance(source, _Zipped):
            for part in source.parts:
                self.counters(part, count)

    def items(self, target: gast.expr, source: _Source, index: str
              ) -> list[tuple[gast.expr, gast.expr]]:
        """(target, value) of each name the loop binds at index ``index``, left to right."""
        if isinstance(source, _Sequence):  # xs[i], or xs[len(xs) - 1 - i] if reversed
            at = syntax.name(index) if source.last is None else syntax.binop(
                syntax.clone(source.last), "Sub", syntax.name(index))
            return [(target, syntax.subscript(syntax.clone(source.sequence), at))]
        if isinstance(source, _Enumerated):  # the index, or the counters at it
            counter, item = target.elts
            value = syntax.name(index) if source.counters is None else syntax.subscript(
                syntax.clone(source.counters), syntax.name(index))
            return [(counter, value)] + self.items(item, source.item, index)
        return [bound for t, part in zip(target.elts, source.parts, strict=True)
                for bound in self.items(t, part, index)]

    def over_dict_views(self, stmt: gast.For) -> gast.For:
        """``d.items()``, ``d.values()`` and ``d.keys()`` (alone, or inside enumerate or
        zip): a loop over the keys, listed before the loop, with each item read by key:

            for k, v in d.items():          _t1 = d.keys()
                s = s + v * w[k]     ->     _t2 = list(_t1)
                                            for _k in _t2:  (as a loop over a list)
                                                k, v = _k, d[_k]
                                                s = s + v * w[k]"""
        def view(node):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                    node.func.attr in _VIEWS and not node.args and not node.keywords:
                return node
            return None

        iterable, target = stmt.iter, stmt.target
        wrapped = None
        if isinstance(iterable, gast.Call) and self.parsed.resolve(iterable.func) in (
                enumerate, zip, reversed) and any(view(a) for a in iterable.args):
            wrapped = iterable
        elif view(iterable) is None:
            return stmt
        calls = wrapped.args if wrapped is not None else [iterable]
        targets = list(target.elts) if wrapped is not None and isinstance(
            target, gast.Tuple) and len(target.elts) == len(calls) + (
            self.parsed.resolve(wrapped.func) is enumerate) else None
        if wrapped is not None and targets is None and self.parsed.resolve(
                wrapped.func) is not reversed:
            return stmt  # the loop's own check names what it expects
        prelude, new_args = [], []
        offset = 1 if wrapped is not None and self.parsed.resolve(wrapped.func) is \
            enumerate else 0
        for k, call in enumerate(calls):
            found = view(call)
            if found is None:
                new_args.append(call)
                continue
            owner = self.atom(found.func.value)  # the dict, evaluated once, before the loop
            keys = self.operation(syntax.call(syntax.name("list"), [self.operation(
                syntax.located(syntax.call(syntax.attribute(owner, "keys"), []), call),
                temp=True)]), temp=True)
            key = syntax.name(self.namer.fresh("_k"))
            new_args.append(keys)
            read = syntax.located(syntax.subscript(syntax.clone(owner), syntax.clone(key)),
                                  call)
            value = {"keys": syntax.clone(key), "values": read,
                     "items": syntax.tuple_([syntax.clone(key), read])}[found.func.attr]
            item_target = targets[k + offset] if targets is not None else target
            prelude.append(syntax.located(syntax.assign(item_target, value), item_target))
            if targets is not None:
                targets[k + offset] = syntax.name(key.id, store=True)
            else:
                target = syntax.name(key.id, store=True)
        if wrapped is not None:
            iterable = syntax.located(syntax.call(syntax.clone(wrapped.func), new_args, [
                (kw.arg, kw.value) for kw in wrapped.keywords]), wrapped)
        else:
            iterable = new_args[0]
        if targets is not None:
            target = syntax.located(syntax.tuple_(targets, store=True), stmt.target)
        loop = syntax.located(syntax.for_(target, iterable, prelude + stmt.body), stmt)
        loop.orelse = stmt.orelse
        return loop

    def while_loop(self, stmt: gast.While) -> None:
        if stmt.orelse:
            raise self.parsed.error("'while ... else' is not supported", stmt,
                                    "Use a flag variable instead of the else clause.")
        stop = syntax.located(syntax.if_(syntax.not_(stmt.test), [syntax.break_()], []),
                              stmt.test)
        carried = self.loop_carried([stop] + stmt.body, None)  # (k := k + 1) in the test
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

    def sequence(self, node: gast.expr, rebound: set[str], loop: gast.For) -> _Sequence:
        """A sequence a loop indexes (``xs`` or ``reversed(xs)``), evaluated before the loop,
        with its length (and its last index if reversed)."""
        backwards = False
        if isinstance(node, gast.Call):
            kind = self.parsed.resolve(node.func)
            if kind is reversed and len(node.args) == 1 and not node.keywords and not \
                    isinstance(node.args[0], gast.Starred):
                node, backwards = node.args[0], True
                self.reversible(node)
            elif kind in _NOT_SEQUENCES:
                raise self.parsed.error(
                    f"a loop over {kind.__name__}() inside enumerate, zip or reversed is not "
                    "supported", node, "Loop over indices (range(len(xs))) and index the "
                    "sequences in the body.")
        atom = self.evaluated_once(node, rebound, loop)
        length = self.operation(syntax.call(syntax.name("len"), [atom]), temp=True)
        syntax.located(self.walk.out[-1], node)  # where the loop names what it loops over
        self.iterations.add(self.walk.out[-1])
        last = self.operation(syntax.binop(length, "Sub", syntax.const(1)), temp=True) \
            if backwards else None
        return _Sequence(atom, length, last)

    def reversible(self, node: gast.expr) -> None:
        """``reversed(zip(...))`` and the like: Python cannot reverse what is not a
        sequence (it raises a TypeError)."""
        kind = self.parsed.resolve(node.func) if isinstance(node, gast.Call) else None
        if kind in (enumerate, zip, reversed) or kind in _NOT_SEQUENCES:
            raise self.parsed.error(
                f"reversed() of {kind.__name__}(): it is not a sequence, and Python cannot "
                "reverse it", node, "Reverse the sequences inside it: "
                "`zip(reversed(xs), reversed(ys))`.")

    def evaluated_once(self, node: gast.expr, rebound: set[str], loop: gast.For
                       ) -> gast.expr:
        """An atom holding the value of ``node`` as it is before the loop. A name the loop
        body assigns again is copied first: its name would read the loop's own version."""
        atom = self.atom(node)
        if isinstance(atom, gast.Name) and atom.id in rebound and (
                atom.id in self.parsed.local_names or atom.id in self.versions.synthetic):
            copy = self.namer.temp()
            self.emit(syntax.assign(copy, atom), loop.iter)
            return syntax.name(copy)
        if isinstance(atom, gast.Name) and atom.id in _appended_to(loop.body):
            raise self.parsed.error(
                f"the loop changes '{atom.id}' (an append, insert or pop), the list it loops "
                "over", loop.iter,
                "Loop over a copy (`for v in list(xs):`) or build a new list.")
        return atom

    def loop_carried(self, body: list[gast.stmt], loop_var: str | None) -> list[str]:
        """User variables the body assigns (their values flow from one iteration on)."""
        written = set()
        names = self.parsed.local_names | self.versions.synthetic
        for stmt in body:
            written |= {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
                        and isinstance(n.ctx, gast.Store) and n.id in names}
            written |= _changed_by_method([stmt], names)  # xs.append(v), insert, pop
            written |= {_root(n.value) for n in gast.walk(stmt)  # y[i] = v, y.T[i] = v
                        if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
                        and _root(n.value) is not None}
            written |= {n.target.value.id for n in gast.walk(stmt)
                        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Subscript)
                        and isinstance(n.target.value, gast.Name)}
        written |= self.objects.variables(body)  # attributes set there, or by a method
        written |= self.default_variables(body)  # defaults of the defs there
        written.discard(loop_var)
        return sorted(written)

    def loop_body(self, head: list[gast.stmt], body: list[gast.stmt], carried: list[str],
                  loop: gast.stmt) -> list[gast.stmt]:
        """A loop body in ANF: loop versions copied in at the start and out at the end,
        ``break`` and ``continue`` turned into flags; ``head`` (the item of a for loop, the
        test of a while loop) runs first in each iteration."""
        prefix, body = self.guard_jumps(body, loop)
        loop_versions, before = self.versions.enter_loop(carried)
        self.walk.out.extend(before)
        start = self.versions.start_iteration(loop_versions)
        self.objects.loop_depth += 1
        try:
            walked = self.walk.block(prefix + head + body)
        finally:
            self.objects.loop_depth -= 1
        return start + walked + self.versions.end_iteration(loop_versions)

    def guard_jumps(self, body: list[gast.stmt], loop: gast.stmt
                    ) -> tuple[list[gast.stmt], list[gast.stmt]]:
        """``break``/``continue`` -> flags: the rest of the body runs under ``if not _skip``
        and ``if _break: break`` stops the loop before the next iteration. Flags and guards
        are not the user's code: they have no source position."""
        has_break = _jumps(body, (gast.Break,))
        if not has_break and not _jumps(body, (gast.Continue,)):
            return [], body
        skip = self.namer.fresh("_skip")
        stop = self.namer.fresh("_break") if has_break else None
        self.versions.reassigned |= {skip, stop}

        def guard(stmts):
            out = []
            for k, s in enumerate(stmts):
                if isinstance(s, (gast.Break, gast.Continue)):
                    if isinstance(s, gast.Break):
                        out.append(syntax.assign(stop, syntax.const(True)))
                    out.append(syntax.assign(skip, syntax.const(True)))
                    return out  # the rest of this block is unreachable
                if isinstance(s, gast.If) and (_jumps([s], (gast.Break, gast.Continue))):
                    s.body, s.orelse = guard(s.body), guard(s.orelse)
                    out.append(s)
                    rest = guard(stmts[k + 1:])
                    if rest:
                        out.append(syntax.if_(syntax.not_(syntax.name(skip)), rest, []))
                    return out
                out.append(s)
            return out

        prefix = [syntax.assign(skip, syntax.const(False))]
        if stop:
            self.walk.out.append(syntax.assign(stop, syntax.const(False)))
            prefix.insert(0, syntax.if_(syntax.name(stop), [syntax.break_()], []))
        return prefix, guard(body)


@dataclass
class _Sequence:
    """A sequence the loop indexes: its atom, its length, its last index if reversed."""

    sequence: gast.expr
    length: gast.expr
    last: gast.expr | None = None


@dataclass
class _Enumerated:
    """``enumerate(item, start)``: the counters are range(start, start + count) (made once
    the count is known), or the index itself without a start."""

    item: _Source
    start: gast.expr | None = None
    counters: gast.expr | None = None


@dataclass
class _Zipped:
    """``zip(*parts)``, checked for equal lengths first if ``strict``."""

    parts: list[_Source]
    strict: bool
    call: gast.Call


_Source = _Sequence | _Enumerated | _Zipped


def _item(target: gast.expr, value: gast.expr, where: gast.AST) -> gast.stmt:
    """``target = value``, at the loop target it binds."""
    return syntax.located(syntax.assign(target, syntax.located(value, where)), where)


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


def _root(node: gast.expr) -> str | None:
    """``y`` of ``y``, ``y.T`` and ``y[i]``: the variable a write through them makes a new
    version of (see ``Assignments.through_view``)."""
    if isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _appended_to(body: list[gast.stmt]) -> set[str]:
    """Names ``xs`` of ``xs.append(v)``, ``xs.insert(i, v)`` and ``xs.pop()`` calls in
    ``body``."""
    return {n.func.value.id for n in gast.walk(syntax.module(body))
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
            and n.func.attr in ("append", "insert", "pop")
            and isinstance(n.func.value, gast.Name)}


def _changed_by_method(body: list[gast.stmt], names: frozenset[str]) -> set[str]:
    """Local names that ``xs.append(v)``, ``xs.insert(i, v)`` or ``xs.pop(...)`` in
    ``body`` give a new version (see ``Assignments.append``, ``Expressions.pop``)."""
    return {n.func.value.id for n in gast.walk(syntax.module(body))
            if isinstance(n, gast.Call) and (
                is_append(n, names) or is_append(n, names, "insert") or is_pop(n, names))}


def _jumps(body: list[gast.stmt], kinds: tuple) -> bool:
    """Does ``body`` break or continue its own loop (not a nested one)?"""
    for stmt in body:
        if isinstance(stmt, kinds):
            return True
        if isinstance(stmt, gast.If) and (_jumps(stmt.body, kinds) or _jumps(stmt.orelse, kinds)):
            return True
    return False
