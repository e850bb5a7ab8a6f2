"""Iterables: what a ``for`` loop goes through, as a range and the items at its index.

Takes a user-level ``for`` statement; gives the range it runs over, the target that takes
the range's values and the statements that bind the loop's target to the items at that
index, which start each iteration (``Loops.for_loop`` makes the loop of them). A loop over
``range(...)`` runs over that range; one over a sequence, ``enumerate`` (with its start),
``zip`` (``strict=True`` checks the lengths first) or ``reversed`` runs over the indices of
its items. Zips and enumerates nest in one another, each bound to its part of the target
(``for i, (a, (b, c)) in enumerate(zip(xs, zip(ys, zs)))``). The sequences are evaluated
here, once, before the loop, as Python does (copied to a temporary if the body rebinds
their name):

    for i, (a, b) in enumerate(zip(xs, ys)):     _t1 = len(xs)
                                                 _t2 = len(ys)
                                                 _t3 = min(_t1, _t2)
                                                 _t4 = range(_t3)      the range
                                                 i                     the index
                                                 a = xs[i]             the items
                                                 b = ys[i]

``zip(*xs)`` passes xs[0], xs[1], ... as its sequences, as many as the target unpacks: the
analysis checks that xs is known to hold that many when compiling (a rule's tuple result,
a tuple argument, a display), and refuses it otherwise. A loop over an iterator (``map``,
``iter``, ``np.ndindex``), or over a list its body appends to, inserts into or pops from,
is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from ... import syntax
from .spreads import KEYS_AT_RUN_TIME
from .walk import Walk

_NOT_SEQUENCES = (iter, map, filter, np.ndindex, np.ndenumerate, np.nditer)
_UNROLLED_KEYS = 32  # the most keys a loop over a dict is unrolled for


class Iterables:
    def __init__(self, walk: Walk, expressions: Any):
        self.walk = walk
        self.parsed, self.namer, self.versions = walk.parsed, walk.namer, walk.versions
        self.emit, self.branch = walk.emit, walk.branch
        self.atom, self.operation = expressions.atom, expressions.operation
        self.spreads = expressions.spreads
        self.iterations: set[gast.stmt] = set()  # `n = len(xs)` of loops over xs's items
        self.unpacked: dict[gast.stmt, int] = {}  # `_t = xs[0]` of zip(*xs) -> len(xs)
        self.views: set[gast.expr] = set()  # the dicts of loops over d.items() (loops.py)
        self.mappings = expressions.mappings  # the m of {**m} (expressions.py)

    def indexed(self, stmt: gast.For, unroll: bool = False
                ) -> tuple[gast.expr, gast.expr, list[gast.stmt]] | Unrolled:
        """``stmt`` as a loop over a range: the range, evaluated here with the sequences it
        indexes; the target that takes its values (the loop's own for a loop over a range,
        else a new index, or enumerate's counter where it is the index); and the statements
        that bind the loop's target to the items at that index, which start each iteration.
        A loop over a dict whose keys the analysis knows (alone, reversed or enumerated),
        where ``unroll`` allows it, is ``Unrolled`` instead: the bindings of each key."""
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
            sequence, keys, site = self.keys(sequence, unroll, iterable.args[0])
            if keys is not None:
                return Unrolled([[(stmt.target, syntax.const(k))] for k in reversed(keys)])
            count = self.operation(syntax.call(syntax.name("len"), [sequence]), temp=True)
            self.site(site, "view" if iterable.args[0] in self.views else "loop")
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
            shape = _unrollable(iterable, self.parsed.resolve) if unroll else False
            source = self.source(iterable, stmt.target, None, rebound, stmt, shape)
            if isinstance(source, _Keys):
                return Unrolled([[(stmt.target, syntax.const(k))] for k in source.keys])
            if isinstance(source, _Enumerated) and isinstance(source.item, _Keys):
                return Unrolled(self.enumerated_keys(stmt.target, source))
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
        return sequence_range, index_target, prelude

    def source(self, node: gast.expr, target: gast.expr, outer: str | None,
               rebound: set[str], loop: gast.For, unroll: bool = False) -> _Source:
        """What a loop (or one of its zip's or enumerate's arguments, inside ``outer``)
        iterates over, with ``target`` what each item is bound to: a zip of sources, an
        enumerate of one, or a sequence indexed by the loop. The sequences are evaluated
        here, in the order Python evaluates them. ``zip(*xs)`` passes as many sequences as
        the target unpacks, xs[0], xs[1], ...; the analysis checks that xs holds that many
        (``unpacked``)."""
        kind = self.parsed.resolve(node.func) if isinstance(node, gast.Call) else None
        inside = f" inside {outer}()" if outer else ""
        if kind in (enumerate, zip) and isinstance(target, gast.Tuple) and any(
                isinstance(t, gast.Starred) for t in target.elts):
            raise self.parsed.error(
                f"a starred name among the names of a loop over {kind.__name__}()", target,
                "Give one name per item (`for i, (a, *rest) in enumerate(xs):` unpacks an "
                "item), or unpack inside the loop body.")
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
            item = self.source(node.args[0], target.elts[1], "enumerate", rebound, loop,
                               unroll)
            if start is not None:
                start = self.evaluated_once(start, rebound, loop)
            return _Enumerated(item, start)
        if kind is not zip:
            return self.sequence(node, rebound, loop, unroll)
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

    def sequence(self, node: gast.expr, rebound: set[str], loop: gast.For,
                 unroll: bool = False) -> _Sequence | _Keys:
        """A sequence a loop indexes (``xs`` or ``reversed(xs)``), evaluated before the loop,
        with its length (and its last index if reversed); a dict's keys where the analysis
        knows them and ``unroll`` allows it."""
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
        atom, keys, site = self.keys(atom, unroll, node)
        if keys is not None:
            return _Keys(tuple(reversed(keys)) if backwards else keys)
        length = self.operation(syntax.call(syntax.name("len"), [atom]), temp=True)
        syntax.located(self.walk.out[-1], node)  # where the loop names what it loops over
        self.iterations.add(self.walk.out[-1])
        self.site(site, "view" if node in self.views else "mapping" if node in self.mappings
                  else "loop")
        last = self.operation(syntax.binop(length, "Sub", syntax.const(1)), temp=True) \
            if backwards else None
        return _Sequence(atom, length, last)

    def keys(self, atom: gast.expr, unroll: bool, node: gast.expr
             ) -> tuple[gast.expr, tuple | None, int]:
        """What a loop over ``atom`` goes through where the analysis found a dict there (a
        site of its own, see ``spreads``): its keys, where they are known when compiling
        and the loop can be unrolled (the analysis checks at ``len(d)`` that the dict still
        holds those keys when the loop starts); else the list of its keys, made when the
        loop starts (``list(d.keys())``); ``atom`` itself, for anything else. With the
        loop's site."""
        site = self.spreads.site()
        keys = self.walk.lengths.get(site)
        if keys is None:
            return atom, None, site
        if keys != KEYS_AT_RUN_TIME and unroll and len(keys) <= _UNROLLED_KEYS:
            self.spreads.check_keys(atom, keys, site)
            return atom, keys, site
        listed = self.operation(syntax.located(syntax.call(syntax.attribute(atom, "keys"), []),
                                               node), temp=True)
        return self.operation(syntax.call(syntax.name("list"), [listed]), temp=True), None, \
            site

    def site(self, site: int, what: str) -> None:
        """``n = len(xs)``, just emitted, of the loop's sequence: the site where the
        analysis asks for a dict's keys (see ``keys``), unless it has; ``what`` is "view"
        for the dict of ``d.items()``, ``d.values()`` or ``d.keys()``, "mapping" for the
        m of ``{**m}`` and ``dict(m)``, "loop" otherwise."""
        if site not in self.walk.lengths:
            self.spreads.statements[self.walk.out[-1]] = (site, what, 0)

    def enumerated_keys(self, target: gast.Tuple, source: _Enumerated
                        ) -> list[list[tuple[gast.expr, gast.expr]]]:
        """The bindings of ``for i, k in enumerate(d, start)`` unrolled: i is start + n,
        k the n-th key."""
        counter, item = target.elts
        iterations = []
        for n, key in enumerate(source.item.keys):
            if source.start is None:
                count = syntax.const(n)
            elif syntax.is_const(source.start) and type(source.start.value) is int:
                count = syntax.const(source.start.value + n)
            else:
                count = syntax.binop(syntax.clone(source.start), "Add", syntax.const(n))
            iterations.append([(counter, count), (item, syntax.const(key))])
        return iterations

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


@dataclass
class Unrolled:
    """A loop over a dict's keys known when compiling, as the (target, value) bindings that
    start each of its iterations, in the order Python runs them."""

    iterations: list[list[tuple[gast.expr, gast.expr]]]


@dataclass
class _Keys:
    """The keys of a dict a loop goes through, known when compiling: the loop is unrolled."""

    keys: tuple


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


_Source = _Sequence | _Enumerated | _Zipped | _Keys


def _unrollable(iterable: gast.expr, resolve: Any) -> bool:
    """Whether a loop over ``iterable`` is unrolled where it goes through a dict whose keys
    are known: ``d``, ``reversed(d)`` or ``enumerate`` of one of those (in a zip, a loop
    over the dict's keys, listed when it starts)."""
    kind = resolve(iterable.func) if isinstance(iterable, gast.Call) else None
    if kind is enumerate and iterable.args:
        return _unrollable(iterable.args[0], resolve)
    return kind is not zip


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


def _appended_to(body: list[gast.stmt]) -> set[str]:
    """Names ``xs`` of ``xs.append(v)``, ``xs.insert(i, v)`` and ``xs.pop()`` calls in
    ``body``."""
    return {n.func.value.id for n in gast.walk(syntax.module(body))
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
            and n.func.attr in ("append", "insert", "pop")
            and isinstance(n.func.value, gast.Name)}
