"""Where the forward's saves go (part of pass 6, optimize): the block markers reverse left
turn into stacks. Each forward block pushes, at its end, the values its reverse block reads;
the reverse block takes them first thing (``Stack``).

Part of the compiler layer.
"""

from __future__ import annotations

import functools
import types
from collections import Counter
from typing import Any

import gast
import numpy as np

from .. import syntax
from . import statements
from .reverse import POP, PUSH, Reversed

# the statements of the code reverse generates, walked through the table of kinds
_kind = functools.partial(statements.kind, pass_name="optimize", generated=True)
_in_order = functools.partial(statements.in_order, pass_name="optimize", generated=True)
_map_blocks = functools.partial(statements.map_blocks, pass_name="optimize", generated=True)


def _own_reads(stmt: gast.stmt) -> set[str]:
    """Names a statement reads itself: for one that holds blocks, those of its head."""
    kind = _kind(stmt)
    if not kind.blocks:
        return syntax.names_read(stmt)
    return syntax.names_read(getattr(stmt, kind.head)) if kind.head else set()


def _reads(stmts: list[gast.stmt]) -> set[str]:
    return set().union(*(syntax.names_read(s) for s in stmts)) if stmts else set()


def _definitely_assigned(stmts: list[gast.stmt]) -> list[str]:
    """Names every path through the block assigns, in order of assignment."""
    names: list[str] = []
    for stmt in stmts:
        kind = _kind(stmt)
        if isinstance(stmt, gast.Assign):
            names += sorted(syntax.names_written(stmt.targets[0]))
        elif kind.blocks and not kind.loop:  # one of the blocks runs: what each assigns
            first, *others = [_definitely_assigned(getattr(stmt, f)) for f in kind.blocks]
            names += [n for n in first if all(n in other for other in others)]
        # a loop may run zero times; the other statements bind no new name
    return list(dict.fromkeys(names))


def _targets(stmt: gast.stmt) -> list[str]:
    if isinstance(stmt, gast.Assign):
        return sorted(syntax.names_written(stmt.targets[0]))
    return []


class Stack:
    """Turns the block markers into stacks: each forward block pushes, at its end, the values
    its reverse block reads; the reverse block takes them first thing.

    A loop that no other loop holds pushes onto a list of its own, which its reverse loop
    walks backwards; it needs no trip counter (one push per trip) and takes nothing off a
    stack. Other blocks (branches, nested loops) push onto one shared stack, which their
    reverse blocks pop. A top-level loop over a range whose pushed values can be made
    again from its index and from values the loop does not change (a loop that only adds
    into a sum) pushes nothing: its reverse loop walks the range backwards and makes them
    again (``_again``). The loops:

        _trips = 0                          _steps = []
        for c in xs:                        for c in xs:
            ...                  ->             ...
            _trips = _trips + 1                 _steps.append((c, h))
            __push__(1)

        for _ in range(_trips):             for c, h in reversed(_steps):
            __pop__(1)               ->         ...
            ..."""

    def __init__(self, rev: Reversed):
        self.rev = rev
        self.namer = rev.namer
        self.name = rev.namer.fresh("_stack")
        self.needed: dict[int, list[str]] = {}
        self.used = False
        self.lists: dict[str, tuple[str, list[str]]] = {}  # trip counter -> its loop's list
        # trip counter -> (the range, the loop's target, the statements made again)
        self.again: dict[str, tuple[str, str, list[gast.stmt]]] = {}

    def pops(self, adjoint: list[gast.stmt]) -> list[gast.stmt]:
        self.reads: dict[int, set[str]] = {}
        self.adjoint = adjoint
        self._find_reads(adjoint)
        return adjoint

    def _find_reads(self, stmts: list[gast.stmt]) -> None:
        marker = _marker(stmts[0], POP) if stmts else None
        if marker is not None:
            self.reads[marker] = _reads(stmts[1:])
        for stmt in stmts:
            for field in _kind(stmt).blocks:
                self._find_reads(getattr(stmt, field))

    def pushes(self, stmts: list[gast.stmt], given: tuple[str, ...] = (),
               in_loop: bool = False, top: bool = True) -> list[gast.stmt]:
        """The forward block ``stmts`` with each push marker replaced by the push of what its
        reverse block reads; ``given``: names bound on entry (a loop's target); ``top``:
        the function's own body (not a block of a branch or a loop)."""
        out = []
        for stmt in stmts:
            marker = _marker(stmt, PUSH)
            if marker is not None:
                names = self._pushed(stmts, marker, given)
                if names:
                    self.used = True
                    out.append(self._push(self.name, names))
                continue
            kind = _kind(stmt)
            if kind.loop and not in_loop and self._own_list(stmt, out, top):
                continue
            loop_target = (stmt.target.id,) if isinstance(stmt, gast.For) else ()
            out.append(_map_blocks(stmt, functools.partial(
                self.pushes, given=loop_target, in_loop=in_loop or kind.loop, top=False)))
        return out

    def _pushed(self, stmts: list[gast.stmt], marker: int, given: tuple[str, ...]
                ) -> list[str]:
        # a loop lowered with a list of its own is read through the list, not its count
        renamed = {trips: steps for trips, (steps, _) in self.lists.items()}
        assigned = [renamed.get(n, n) for n in list(given) + _definitely_assigned(stmts)]
        reads = {renamed.get(n, n) for n in self.reads.get(marker, ())}
        names = [n for n in dict.fromkeys(assigned) if n in reads]
        self.needed[marker] = names
        return names

    def _push(self, stack: str, names: list[str]) -> gast.stmt:
        value = syntax.name(names[0]) if len(names) == 1 else syntax.tuple_(
            syntax.name(n) for n in names)
        return syntax.expr_stmt(syntax.call(syntax.attribute(syntax.name(stack), "append"),
                                            [value]))

    def _own_list(self, loop: gast.stmt, out: list[gast.stmt], top: bool) -> bool:
        """Lower ``loop`` (which ``out`` ends with the start of its trip counter) with a list
        of its own, if it pushes something: appended to ``out``, True. At the top level
        (``top``: what its reverse reads is then saved, not pushed by an enclosing block),
        with no list where the values can be made again (``_again``)."""
        body = loop.body
        marker = _marker(body[-1], PUSH) if body else None
        count = body[-2] if len(body) > 1 else None
        start = out[-1] if out else None
        if marker is None or not (_is_count(count) and isinstance(start, gast.Assign)
                                  and syntax.is_name(start.targets[0], count.targets[0].id)):
            return False
        given = (loop.target.id,) if isinstance(loop, gast.For) else ()
        names = self._pushed(body, marker, given)
        if not names:
            return False
        trips = count.targets[0].id
        again = self._again(loop, body[:-2], names, out[:-1], trips) if top else None
        if again is not None:  # nothing pushed: the reverse loop makes the values again
            self.again[trips] = again
            out.pop()  # the trip counter's start
            out.append(syntax.replace(loop, body=self.pushes(body[:-2], given=given,
                                                             in_loop=True, top=False)))
            return True
        steps = self.namer.fresh("_steps")
        self.lists[trips] = (steps, names)
        inner = self.pushes(body[:-2], given=given, in_loop=True, top=False)
        new = syntax.replace(loop, body=inner + [self._push(steps, names)])
        if isinstance(loop, gast.While):  # its else block
            new = syntax.replace(new, orelse=self.pushes(loop.orelse, in_loop=True, top=False))
        out[-1] = syntax.located(syntax.assign(steps, syntax.list_([])), start)
        out.append(new)
        return True

    def _again(self, loop: gast.stmt, body: list[gast.stmt], names: list[str],
               before: list[gast.stmt], trips: str) -> tuple | None:
        """(range, target, statements) when the values ``names`` that the reverse of
        ``loop`` reads can be made again there: the loop runs over a range made once, its
        body is straight-line, and the statements that make the values read only the
        index, each other and values nothing changes while the adjoint may still read
        them (no name assigned again, no element written later, no random draw)."""
        if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
                and isinstance(loop.iter, gast.Name) and not loop.orelse
                and self.rev.bindings.get("range", range) is range):
            return None
        index, seq = loop.target.id, loop.iter.id
        made = [s for s in before if isinstance(s, gast.Assign) and seq in _targets(s)]
        if len(made) != 1 or not (isinstance(made[0].value, gast.Call)
                                  and syntax.is_name(made[0].value.func, "range")):
            return None
        if any(_kind(s).blocks for s in body):
            return None
        assigned = Counter(n for s in body for n in _changed(s))
        if assigned[index]:
            return None  # the step rebinds the index: what it reads is not the range's
        wanted = set(names) - {index}
        chosen: list[gast.stmt] = []
        for stmt in reversed(body):  # the statements the values depend on, in the body
            targets = set(_targets(stmt))
            if targets & wanted:
                chosen.insert(0, stmt)
                wanted = (wanted - targets) | (syntax.names_read(stmt) & set(assigned))
        if wanted or self._read_elsewhere(trips) & {n for s in chosen for n in _targets(s)}:
            return None  # a value carried from the step before, or read after the loop
        everywhere = Counter(n for s in _in_order(self.rev.forward) for n in _targets(s))
        aliases, ops = self.rev.aliases, self.rev.analysis.ops
        made_here: set[str] = set()
        for stmt in chosen:
            op = ops.get(stmt)
            if op is None or not _pure(op) or any(assigned[n] != 1 for n in _targets(stmt)):
                return None
            if op.rule is not None and op.rule.shape in _COSTLY:
                return None  # a product of arrays is kept rather than computed twice
            for name in syntax.names_read(stmt) - {index} - made_here:
                if name in assigned or everywhere[name] > 1 or aliases is None or \
                        not aliases.known(stmt) or aliases.at_risk(name, stmt):
                    return None
            made_here |= set(_targets(stmt))
        return seq, index, chosen

    def _read_elsewhere(self, trips: str) -> set[str]:
        """Names the adjoint reads outside the reverse of the loop counted by ``trips``."""
        def reads(stmts: list[gast.stmt]) -> set[str]:
            found: set[str] = set()
            for stmt in stmts:
                if isinstance(stmt, gast.For) and isinstance(stmt.iter, gast.Call) and \
                        stmt.iter.args and syntax.is_name(stmt.iter.args[0], trips):
                    continue
                found |= _own_reads(stmt)
                for field in _kind(stmt).blocks:
                    found |= reads(getattr(stmt, field))
            return found
        return reads(self.adjoint)

    def is_pop(self, stmt: gast.stmt) -> bool:
        """``a, b = _stack.pop()``: primal values restored, not adjoint values made."""
        return (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Call)
                and isinstance(stmt.value.func, gast.Attribute)
                and syntax.is_name(stmt.value.func.value, self.name)
                and stmt.value.func.attr == "pop")

    def reads_outside_pops(self, stmts: list[gast.stmt], popped: frozenset = frozenset()
                           ) -> set[str]:
        """Names the adjoint reads that no enclosing pop (or walk of a loop's list)
        restores: the top-level saves."""
        names: set[str] = set()
        popped = set(popped)
        for stmt in stmts:
            if self.is_pop(stmt):
                popped |= syntax.names_written(stmt.targets[0])
                continue
            names |= _own_reads(stmt) - popped
            inner = frozenset(popped | (syntax.names_written(stmt.target)
                                        if isinstance(stmt, gast.For) else set()))
            for field in _kind(stmt).blocks:
                names |= self.reads_outside_pops(getattr(stmt, field), inner)
        return names

    def resolve_pops(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out = []
        for stmt in stmts:
            marker = _marker(stmt, POP)
            if marker is not None:
                names = self.needed.get(marker, [])
                if names:
                    pop = syntax.call(syntax.attribute(syntax.name(self.name), "pop"))
                    out.append(syntax.assign(names[0], pop) if len(names) == 1
                               else syntax.unpack(names, pop))
                continue
            walked = self._walk(stmt)
            stmt = _map_blocks(walked or stmt, self.resolve_pops)
            if isinstance(stmt, (gast.If, gast.For)) and _is_empty(stmt):
                continue  # nothing to do in reverse for this block
            out.append(stmt)
        return out

    def _walk_again(self, stmt: gast.stmt) -> gast.stmt | None:
        """``for _ in range(_trips): ...`` as ``for i in reversed(_t2): <the values made
        again> ...`` where the loop pushed nothing."""
        if not (isinstance(stmt, gast.For) and isinstance(stmt.iter, gast.Call)
                and stmt.iter.args and isinstance(stmt.iter.args[0], gast.Name)
                and stmt.iter.args[0].id in self.again):
            return None
        seq, index, chosen = self.again[stmt.iter.args[0].id]
        body = [s for s in stmt.body if _marker(s, POP) is None]
        again = [syntax.clone(s) for s in chosen]
        for s in again:
            s.made_again = True  # codegen labels it: "# computed again: ..."
        return syntax.replace(stmt, target=syntax.name(index, store=True), body=again + body,
                              iter=syntax.call(syntax.name("reversed"), [syntax.name(seq)]))

    def _walk(self, stmt: gast.stmt) -> gast.stmt | None:
        """``for _ in range(_trips): __pop__(k) ...`` as ``for a, b in reversed(_steps): ...``
        where the loop pushed onto a list of its own."""
        if not (isinstance(stmt, gast.For) and isinstance(stmt.iter, gast.Call)
                and syntax.is_name(stmt.iter.func, "range") and len(stmt.iter.args) == 1
                and isinstance(stmt.iter.args[0], gast.Name)
                and stmt.iter.args[0].id in self.lists):
            return self._walk_again(stmt)
        steps, names = self.lists[stmt.iter.args[0].id]
        target = syntax.name(names[0], store=True) if len(names) == 1 else syntax.tuple_(
            (syntax.name(n, store=True) for n in names), store=True)
        body = [s for s in stmt.body if _marker(s, POP) is None] or [syntax.pass_()]
        return syntax.replace(stmt, target=target, body=body, iter=syntax.call(
            syntax.name("reversed"), [syntax.name(steps)]))


def _changed(stmt: gast.stmt) -> list[str]:
    """Names a statement without blocks assigns or updates (``x += y``, ``x[i] = v``)."""
    if isinstance(stmt, (gast.Assign, gast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
        found = set()
        for target in targets:
            while isinstance(target, (gast.Subscript, gast.Attribute)):
                target = target.value
            found |= syntax.names_written(target) if not isinstance(target, gast.Name) \
                else {target.id}
        return sorted(found)
    return []


# The operations whose results a loop keeps even where they could be made again: each
# costs more than keeping its result
_COSTLY = ("matmul", "dot", "outer")

# Modules whose functions give the same result for the same arguments, every time
_PURE_MODULES = ("numpy", "math", "_operator", "operator", "builtins", "cmath")


def _pure(op: Any) -> bool:
    """An operation that can run again with the same result: a NumPy, math or operator
    function or an ndarray method (not numpy.random), a copy, an item read (of a container
    differentiated or not), an entry of a shape."""
    if op.kind in ("copy", "item"):
        return True
    if op.kind == "nondiff" and op.primitive is None:
        return op.what in ("an item", "shape")  # of a container, of a shape
    if op.kind not in ("rule", "nondiff") or op.primitive is None:
        return False
    fn = op.primitive
    if getattr(fn, "__objclass__", None) is np.ndarray or isinstance(fn, np.ufunc):
        return True
    if isinstance(fn, type):
        return fn in (range, float, int, bool, tuple, slice)
    module = getattr(fn, "__module__", None) or ""
    owner = getattr(fn, "__self__", None)  # a builtin's module, or a bound method's object
    return (owner is None or isinstance(owner, types.ModuleType)) and (
        module in _PURE_MODULES or (module.startswith("numpy.") and not module.startswith(
            ("numpy.random", "numpy.linalg", "numpy.fft"))))


def _is_count(stmt: gast.stmt | None) -> bool:
    """``_trips = _trips + 1``: a loop's trip counter counting."""
    return (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.Add)
            and syntax.is_name(stmt.value.left, stmt.targets[0].id))


def _is_empty(stmt: gast.stmt) -> bool:
    return all(isinstance(s, gast.Pass) for field in _kind(stmt).blocks
               for s in getattr(stmt, field))


def _marker(stmt: gast.stmt, kind: str) -> int | None:
    if (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)
            and syntax.is_name(stmt.value.func, kind)):
        return stmt.value.args[0].value
    return None
