"""Pass 6, optimize: make the adjoint lean, then decide exactly what the forward saves.

Before: ``Reversed`` forward and adjoint bodies.
After:  ``Optimized``: the adjoint with constants folded and identities removed (``g * 1.0``,
        ``x ** 1``), copies propagated (``x_bar = out_bar`` disappears), dead statements
        removed, the cotangent buffers it owns updated in place (inplace.py); ``saved``, the primal names the adjoint still reads, in the order the forward
        defines them; the forward with the shape saves no one reads dropped and its return
        ``return out, (saved...)`` appended.

    adjoint:  _t1_bar = out_bar          ->   h_bar = out_bar * 2
              h_bar = _t1_bar * 2 ** 1
"""

from __future__ import annotations

import functools
import operator
import types
from collections import Counter
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from . import statements, syntax
from .aliasing import returns_new_array
from .coalesce import coalesce
from .inplace import update_in_place, without_restores
from .parse import MISSING
from .reverse import POP, PUSH, Reversed
from .runtime import chunks

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
         gast.Div: operator.truediv, gast.Pow: operator.pow}


@dataclass(frozen=True)
class Optimized:
    reversed: Reversed
    forward: list[gast.stmt]
    adjoint: list[gast.stmt]
    saved: tuple[str, ...]
    external: tuple = ()  # saved values that may share outside memory (see _external)


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


def optimize(rev: Reversed, in_place: bool = True, standard: bool = False,
             chunked: bool = False) -> Optimized:
    """The adjoint simplified and what the forward saves decided (see the module).
    ``in_place``: update the cotangent buffers the adjoint owns in place (inplace.py); not
    for another library's arrays, which NumPy's in-place operations do not write.
    ``standard``: for the arrays of a namespace of the array API standard, the adjoint's
    calls in the standard's names and forms (``standard_forms``); else NumPy's functions as
    the arrays' methods where a NumPy programmer would call them (``a.sum()``, ``a.T``).
    ``chunked``: for arrays that may be chunked (Dask's), a reduction's cotangent broadcast
    back over the array it reduced is laid out in that array's chunks (``broadcast_like``)."""
    # The adjoint is rewritten in place, so it is a copy: what reverse returned stays as it
    # was. The forward's statements are kept; a block that changes is rebuilt.
    adjoint = [_Simplify().visit(s) for s in syntax.clone(rev.adjoint)]
    adjoint = _propagate_copies(adjoint)
    adjoint, _ = _eliminate_dead(adjoint, set())
    adjoint = _map_blocks_all(adjoint, _doubled)
    if in_place:
        adjoint = update_in_place(adjoint, rev.bindings, _numpy_name(rev), *_ranks(rev))
    if chunked:
        adjoint = _chunked_broadcasts(adjoint, rev)
    adjoint, forward = _hoist_shapes(adjoint, rev.forward, rev)
    if standard:
        adjoint = standard_forms(adjoint, rev.bindings, _array_ranks(rev), _arrays(rev))
    else:
        forms = _MethodForms(_array_ranks(rev), rev.bindings)
        adjoint = [forms.visit(s) for s in adjoint]
    read = _reads(adjoint)
    while True:  # drop shape saves and snapshots nothing reads (a hoisted shape may read one)
        unread = rev.shape_saves - read - _reads_of_others(forward, rev.shape_saves)
        pruned = _without_assignments(forward, unread)
        if _count(pruned) == _count(forward):
            break
        forward = pruned
    stack = _Stack(rev)
    stack.pops(adjoint)
    forward = stack.pushes(forward)
    adjoint = stack.resolve_pops(adjoint)
    if stack.used:  # the backward pops from a copy, so it can run more than once
        forward.insert(0, syntax.assign(stack.name, syntax.list_([])))
        adjoint.insert(0, syntax.assign(stack.name, syntax.call(syntax.name("list"), [
            syntax.name(stack.name)])))
    lists = {steps for steps, _ in stack.lists.values()}
    forward, adjoint = coalesce(forward, lists), without_restores(coalesce(adjoint, set()))
    params = rev.analysis.normalized.parsed.params
    written = {n for s in _in_order(adjoint) if isinstance(s, gast.Assign)
               and not stack.is_pop(s) for n in _writes([s])} - {stack.name}
    needed = stack.reads_outside_pops(adjoint)
    assigned = _definitely_assigned(forward)
    saved = tuple(n for n in dict.fromkeys(list(params) + assigned)
                  if n in needed and n not in written)
    # Data read from outside the function (a global array, a closure's number) is saved as
    # the forward saw it: the backward may run later, after the name is rebound.
    parsed = rev.analysis.normalized.parsed
    saved += tuple(n for n in sorted(needed) if n not in saved and n not in written
                   and n not in assigned and n not in rev.bindings
                   and _is_data(parsed.lookup(n)))
    if standard:  # the saves of shapes included
        forward = standard_forms([syntax.clone(s) for s in forward], rev.bindings,
                                 _array_ranks(rev), _arrays(rev))
    out = syntax.tuple_([syntax.clone(rev.result), syntax.tuple_(syntax.name(n) for n in saved)])
    forward.append(syntax.ret(out))
    pushed = {steps: set(names) for steps, names in stack.lists.values()}
    if stack.used:
        pushed[stack.name] = {n for names in stack.needed.values() for n in names}
    return Optimized(rev, forward, adjoint, saved, _external(rev, saved, params, pushed))


def _chunked_broadcasts(adjoint: list[gast.stmt], rev: Reversed) -> list[gast.stmt]:
    """``np.broadcast_to(g, np.shape(a))`` -> ``broadcast_like(g, a)``, which keeps ``a``'s
    chunks (``a`` is then saved for the adjoint: for a chunked array, its graph, not its
    values). The adjoint is rewritten in place."""
    numpy_names = {name for name, obj in rev.bindings.items() if obj is np}
    name = None

    class Rewrite(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> gast.expr:
            nonlocal name
            self.generic_visit(node)
            func = syntax.dotted_name(node.func) or ""
            head, _, attr = func.rpartition(".")
            if head not in numpy_names or attr != "broadcast_to" or len(node.args) != 2 \
                    or node.keywords:
                return node
            query = _shape_query(node.args[1], numpy_names)
            if query is None or query[1] != "shape":
                return node
            if name is None:
                name = rev.namer.fresh("broadcast_like")
                rev.bindings[name] = chunks.broadcast_like
            return syntax.located(syntax.call(syntax.name(name), [
                node.args[0], syntax.name(query[0])]), node)

    rewrite = Rewrite()
    return [rewrite.visit(stmt) for stmt in adjoint]


def _numpy_name(rev: Reversed) -> str:
    return next(name for name, value in rev.bindings.items() if value is np)


def _ranks(rev: Reversed) -> tuple[set[str], set[str]]:
    """The cotangents of values known to be 0-d (an element of an array, a number), and of
    arrays known to have one axis or more."""
    values = rev.analysis.values
    known = {bar: values[primal] for primal, bar in rev.bar_of.items() if primal in values}
    return ({bar for bar, v in known.items() if v.dims == ()},
            {bar for bar, v in known.items() if v.kind == "array" and v.dims})


def _is_data(value: Any) -> bool:
    """A value (an array, a number, a container), not a module, a class or a function."""
    return value is not MISSING and not callable(value) and not isinstance(
        value, types.ModuleType)


def _external(rev: Reversed, saved: tuple[str, ...], params: tuple[str, ...],
              pushed: dict[str, set[str]]) -> tuple:
    """The saved values that may share memory with the caller's or the module's arrays,
    as (index in saved, the parameter's name or None): a backward that runs later
    (a Tensor's, a vjp pullback) must not see them changed in place since. Results of
    operations that return new arrays are the forward's own, and so are numbers; a stack
    (``pushed``: its name -> the names pushed onto it) is the forward's own where
    everything pushed onto it is."""
    made = {op.target: op for op in rev.analysis.ops.values() if op.target is not None}
    values = rev.analysis.values

    def own(name: str) -> bool:
        op = made.get(name)
        value = values.get(name)
        return name not in params and (
            (value is not None and value.kind == "scalar") or (
                op is not None and op.kind == "rule" and returns_new_array(op)))

    out = []
    for i, name in enumerate(saved):
        if name in params:
            out.append((i, name))
        elif name in pushed:
            if not all(own(n) for n in pushed[name]):
                out.append((i, None))
        elif not own(name):
            out.append((i, None))
    return tuple(out)


class _Stack:
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


def _reads(stmts: list[gast.stmt]) -> set[str]:
    return set().union(*(syntax.names_read(s) for s in stmts)) if stmts else set()


def _writes(stmts: list[gast.stmt]) -> set[str]:
    """Names assigned, or updated in place through an element store."""
    names = set()
    for s in _in_order(stmts):
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                names.add(target.value.id)
            names |= syntax.names_written(target)
    return names


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


def _reads_of_others(stmts: list[gast.stmt], prunable: frozenset[str]) -> set[str]:
    """Names read by forward statements other than the prunable saves themselves."""
    return {n for s in _in_order(stmts) if not (
        isinstance(s, gast.Assign) and set(_targets(s)) & prunable) for n in _own_reads(s)}


def _count(stmts: list[gast.stmt]) -> int:
    return sum(1 for _ in _in_order(stmts))


def _without_assignments(stmts: list[gast.stmt], names: set[str]) -> list[gast.stmt]:
    return [_map_blocks(stmt, lambda block: _without_assignments(block, names))
            for stmt in stmts
            if not (isinstance(stmt, gast.Assign) and set(_targets(stmt)) & names)]


_SHAPE_QUERIES = {"shape": "shape", "size": "size", "ndim": "ndim", "len": "len"}


def _shape_query(node: gast.AST, numpy_names: set[str]) -> tuple[str, str] | None:
    """``np.shape(x)``, ``x.shape``, ``np.size(x)``, ``len(x)``... -> (x, 'shape'|...)."""
    if isinstance(node, gast.Attribute) and node.attr in ("shape", "size", "ndim") and \
            isinstance(node.value, gast.Name):
        return node.value.id, node.attr
    if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords and \
            isinstance(node.args[0], gast.Name):
        func = syntax.dotted_name(node.func) or ""
        head, _, attr = func.rpartition(".")
        if (head in numpy_names and attr in ("shape", "size", "ndim")) or func == "len":
            return node.args[0].id, _SHAPE_QUERIES[attr or func]
    return None


def _hoist_shapes(adjoint: list[gast.stmt], forward: list[gast.stmt], rev: Reversed
                  ) -> tuple[list[gast.stmt], list[gast.stmt]]:
    """Where the adjoint reads a primal array only for its shape (size, rank, length), the
    forward computes that right after the array is made, and the array itself is not saved.
    Returns the adjoint and the forward.
    """
    numpy_names = {name for name, obj in rev.bindings.items() if obj is np}
    primal = set(rev.analysis.normalized.parsed.params) | _writes(forward) | {
        s.target.id for s in _in_order(forward) if isinstance(s, gast.For)}
    queries: dict[str, set[str]] = {}
    other_reads: set[str] = set()

    def scan(node: gast.AST) -> None:
        query = _shape_query(node, numpy_names)
        if query is not None and query[0] in primal:
            queries.setdefault(query[0], set()).add(query[1])
            return
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            other_reads.add(node.id)
        for child in gast.iter_child_nodes(node):
            scan(child)

    for stmt in adjoint:
        scan(stmt)
    hoisted: dict[tuple[str, str], str] = {}
    arrays = _array_ranks(rev)
    assigned_once = _assigned_once(forward)
    for name, kinds in sorted(queries.items()):
        if name in other_reads:
            continue  # the values are needed anyway: read the shape from them
        if name not in assigned_once and name not in rev.analysis.normalized.parsed.params:
            continue  # a merge or loop version: its last value is saved as it is
        for kind in sorted(kinds):
            source = rev.snapshot_of.get(name, name)  # a copy has its original's shape
            new = rev.namer.fresh(f"{source}_{kind}")
            hoisted[(name, kind)] = new
            if kind == "len":
                query = syntax.call(syntax.name("len"), [syntax.name(source)])
            elif source in arrays:
                query = syntax.attribute(syntax.name(source), kind)
            else:
                query = syntax.call(f"{next(iter(numpy_names), 'np')}.{kind}",
                                    [syntax.name(source)])
            forward = _after_definition(forward, name, syntax.assign(new, query),
                                        rev.analysis.normalized.parsed.params) or forward
    if hoisted:
        replace = _ReplaceQueries(hoisted, numpy_names)
        adjoint = [replace.visit(stmt) for stmt in adjoint]
    return adjoint, forward


class _ReplaceQueries(gast.NodeTransformer):
    def __init__(self, hoisted: dict, numpy_names: set[str]):
        self.hoisted = hoisted
        self.numpy_names = numpy_names

    def generic_visit(self, node: gast.AST) -> gast.AST:
        query = _shape_query(node, self.numpy_names)
        if query is not None and query in self.hoisted:
            return syntax.name(self.hoisted[query])
        return super().generic_visit(node)


def _assigned_once(stmts: list[gast.stmt]) -> set[str]:
    counts: dict[str, int] = {}
    for s in _in_order(stmts):
        if isinstance(s, gast.Assign):
            for t in syntax.names_written(s.targets[0]):
                counts[t] = counts.get(t, 0) + 1
        elif isinstance(s, gast.For):
            counts[s.target.id] = counts.get(s.target.id, 0) + 2
    return {n for n, c in counts.items() if c == 1}


def _after_definition(stmts: list[gast.stmt], name: str, new: gast.stmt,
                      params: tuple[str, ...]) -> list[gast.stmt] | None:
    """``stmts`` with ``new`` right after the statement that assigns ``name`` (first, for a
    parameter); None if none of them does."""
    if name in params:
        return [new] + stmts
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, gast.Assign) and name in syntax.names_written(stmt.targets[0]):
            return stmts[:k + 1] + [syntax.located(new, stmt)] + stmts[k + 1:]
        if isinstance(stmt, gast.For) and stmt.target.id == name:
            changed = syntax.replace(stmt, body=[new] + stmt.body)
            return stmts[:k] + [changed] + stmts[k + 1:]
        for field in _kind(stmt).blocks:
            inner = _after_definition(getattr(stmt, field), name, new, ())
            if inner is not None:
                return stmts[:k] + [syntax.replace(stmt, **{field: inner})] + stmts[k + 1:]
    return None


def _array_ranks(rev: Reversed) -> dict[str, int]:
    """Names certain to hold NumPy arrays, with their ranks: primal arrays and their
    cotangents, of rank >= 1 (a value of rank 0 may be a Python float on some path)."""
    values = rev.analysis.values
    ranks = {n: v.ndim for n, v in values.items() if v.kind == "array" and v.ndim}
    ranks.update({bar: ranks[p] for p, bar in rev.bar_of.items()
                  if ranks.get(p, 0) >= 1 and bar != rev.seed})
    return ranks


def _arrays(rev: Reversed) -> set[str]:
    """Names certain to hold arrays, of any rank: primal arrays, their cotangents, and the
    seed when the result is an array."""
    values = rev.analysis.values
    arrays = {n for n, v in values.items() if v.kind == "array"}
    return arrays | {bar for p, bar in rev.bar_of.items() if p in arrays}


class _MethodForms(gast.NodeTransformer):
    """``np.sum(a)`` -> ``a.sum()``, ``np.transpose(a)`` -> ``a.T``, ``np.expand_dims(a, 1)``
    -> ``a[:, None]``, ``np.shape(a)`` -> ``a.shape``: on names known to be arrays, the forms
    a NumPy programmer writes, which also skip the function wrappers' overhead."""

    def __init__(self, ranks: dict[str, int], bindings: dict):
        self.ranks = ranks
        self.numpy_names = {name for name, obj in bindings.items() if obj is np}

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        func = syntax.dotted_name(node.func) or ""
        head, _, attr = func.rpartition(".")
        if head not in self.numpy_names or not node.args or not isinstance(node.args[0],
                                                                           gast.Name):
            return node
        array, rest = node.args[0], node.args[1:]
        rank = self.ranks.get(array.id)
        if rank is None:
            return node
        keywords = {k.arg: k.value for k in node.keywords}
        if attr in ("sum", "mean") and not rest:
            return syntax.located(syntax.call(syntax.attribute(array, attr), [], keywords), node)
        if attr in ("shape", "size", "ndim") and not rest and not keywords:
            return syntax.located(syntax.attribute(array, attr), node)
        if attr == "transpose" and not rest and not keywords:
            return syntax.located(syntax.attribute(array, "T"), node)
        if attr == "reshape" and len(rest) == 1 and _only_default_order(keywords):
            return syntax.located(syntax.call(syntax.attribute(array, "reshape"), rest), node)
        if attr == "expand_dims" and len(rest) == 1 and not keywords and syntax.is_const(
                rest[0]) and isinstance(rest[0].value, int) and -rank - 1 <= rest[0].value <= rank:
            axis = rest[0].value % (rank + 1)
            index = [syntax.slice_() for _ in range(axis)] + [syntax.const(None)]
            if axis == rank and rank > 1:
                index = [syntax.const(Ellipsis), syntax.const(None)]
            return syntax.located(syntax.subscript(array, syntax.tuple_(index)
                                                   if len(index) > 1 else index[0]), node)
        return node


def standard_forms(stmts: list[gast.stmt], bindings: dict, ranks: dict[str, int],
                   arrays: set[str]) -> list[gast.stmt]:
    """``stmts`` (rewritten in place) with NumPy's calls in the names and forms of the array
    API standard, which NumPy 2 also has: ``np.concatenate`` -> ``np.concat``,
    ``np.transpose(a)`` -> ``np.permute_dims(a, (1, 0))`` (a's rank known),
    ``np.outer(a, b)`` -> a column times a row, ``np.shape(a)`` -> ``a.shape`` (``arrays``:
    the names known to hold arrays, of any rank), and a
    comparison used as a number (``u - (u != 0)``) cast to the compared value's dtype (the
    standard does no arithmetic on booleans). The code then runs unchanged on the standard's
    namespace bound to NumPy's name (backends.namespaced); a call the standard lacks is left
    as it is, for the backends pass to refuse at the user's line."""
    forms = _StandardForms(ranks, arrays, bindings, *_comparisons(stmts))
    return [forms.visit(s) for s in stmts]


def _comparisons(stmts: list[gast.stmt]) -> tuple[dict[str, str], set[str]]:
    """The names assigned a comparison of a named value (``hits = a == m``), each with that
    value's name; and those of them the code uses only as numbers (never as a condition:
    ``where``'s first argument, a test)."""
    assigned, conditions = {}, set()
    for stmt in stmts:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], gast.Name) and isinstance(node.value, gast.Compare) \
                    and isinstance(node.value.left, gast.Name):
                assigned[node.targets[0].id] = node.value.left.id
            tests = []
            if isinstance(node, (gast.If, gast.While, gast.IfExp, gast.Assert)):
                tests.append(node.test)
            elif isinstance(node, gast.BoolOp):
                tests.extend(node.values)
            elif isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
                tests.append(node.operand)
            elif isinstance(node, gast.Call) and (syntax.dotted_name(node.func) or "").endswith(
                    ".where") and node.args:
                tests.append(node.args[0])
            conditions.update(n.id for t in tests for n in gast.walk(t)
                              if isinstance(n, gast.Name))
    return assigned, set(assigned) - conditions


# NumPy's names that the array API standard spells differently (NumPy 2 has both)
_STANDARD_NAMES = {
    "concatenate": "concat", "power": "pow", "absolute": "abs", "true_divide": "divide",
    "amax": "max", "amin": "min", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
    "arctan2": "atan2", "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh",
}


# The standard's functions that take as keywords only what NumPy's take by position too:
# how many NumPy's take first by position, then the names of the rest, in NumPy's order (a
# call passing more positionally gets them as keywords)
_KEYWORD_ONLY = {
    "sum": (1, ("axis", "dtype", "out", "keepdims")), "prod": (1, ("axis", "dtype", "out",
                                                                    "keepdims")),
    "mean": (1, ("axis", "dtype", "out", "keepdims")), "max": (1, ("axis", "out", "keepdims")),
    "min": (1, ("axis", "out", "keepdims")), "std": (1, ("axis", "dtype", "out", "ddof",
                                                          "keepdims")),
    "var": (1, ("axis", "dtype", "out", "ddof", "keepdims")), "flip": (1, ("axis",)),
    "roll": (2, ("axis",)), "concat": (1, ("axis",)), "stack": (1, ("axis",)),
    "unstack": (1, ("axis",)), "tensordot": (2, ("axes",)), "argsort": (1, ("axis",)),
}
# and NumPy's keywords that the standard names otherwise
_KEYWORD_NAMES = {("std", "ddof"): "correction", ("var", "ddof"): "correction"}


class _StandardForms(gast.NodeTransformer):
    def __init__(self, ranks: dict[str, int], arrays: set[str], bindings: dict,
                 comparisons: dict[str, str], masks: set[str]):
        self.ranks = ranks
        self.arrays = arrays
        self.numpy = min((name for name, obj in bindings.items() if obj is np), default=None)
        self.comparisons = comparisons  # name -> the name of the value compared
        self.masks = masks  # those used only as numbers: cast where they are assigned

    def visit_Assign(self, node: gast.Assign) -> gast.stmt:
        self.generic_visit(node)
        target = node.targets[0]
        if isinstance(target, gast.Name) and target.id in self.masks:
            node.value = self.number(node.value)  # a mask used as numbers: 0.0 and 1.0
        return node

    def rank(self, node: gast.expr) -> int | None:
        return self.ranks.get(node.id) if isinstance(node, gast.Name) else None

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        func = syntax.dotted_name(node.func) or ""
        head, _, attr = func.rpartition(".")
        if head != self.numpy:
            return node
        args = node.args
        if attr in ("sum", "prod", "cumsum") and args:  # of booleans: of 0.0 and 1.0
            node.args = args = [self.number(args[0]), *args[1:]]
        if attr == "reshape":  # NumPy's default order is the standard's only one
            node.keywords = [k for k in node.keywords if not (
                k.arg == "order" and syntax.is_const(k.value) and k.value.value == "C")]
        if attr in _STANDARD_NAMES:
            attr = _STANDARD_NAMES[attr]
            node.func = syntax.attribute(syntax.name(head), attr)
        if attr in _KEYWORD_ONLY:
            first, rest = _KEYWORD_ONLY[attr]
            moved = [syntax.keyword(key, value)
                     for key, value in zip(rest, args[first:], strict=False)]
            node.args, args = args[:first], args[:first]
            node.keywords = moved + node.keywords
            for k in node.keywords:
                k.arg = _KEYWORD_NAMES.get((attr, k.arg), k.arg)
            return node
        if node.keywords:
            return node
        if attr in ("shape", "ndim", "size") and len(args) == 1 and isinstance(
                args[0], gast.Name) and args[0].id in self.arrays:
            return syntax.located(syntax.attribute(args[0], attr), node)
        if attr == "result_type" and len(args) == 1:
            return syntax.located(syntax.attribute(args[0], "dtype"), node)
        if attr == "swapaxes" and len(args) == 3 and all(syntax.is_const(a) for a in args[1:]):
            first, second = sorted(a.value for a in args[1:])
            if (first, second) == (-2, -1):
                return syntax.located(syntax.call(f"{head}.matrix_transpose", [args[0]]), node)
            rank = self.rank(args[0])
            if rank is not None:
                axes = list(range(rank))
                axes[first], axes[second] = axes[second], axes[first]
                return syntax.located(syntax.call(f"{head}.permute_dims", [args[0], syntax.tuple_(
                    syntax.const(i) for i in axes)]), node)
        if attr == "transpose" and len(args) == 1 and self.rank(args[0]) is not None:
            axes = syntax.tuple_(syntax.const(i) for i in reversed(range(self.rank(args[0]))))
            return syntax.located(syntax.call(f"{head}.permute_dims", [args[0], axes]), node)
        if attr == "transpose" and len(args) == 2:
            return syntax.located(syntax.call(f"{head}.permute_dims", args), node)
        if attr == "outer" and len(args) == 2:  # np.outer flattens both
            column = syntax.call(f"{head}.reshape", [args[0], syntax.tuple_(
                [syntax.const(-1), syntax.const(1)])])
            row = args[1] if self.rank(args[1]) == 1 else syntax.call(
                f"{head}.reshape", [args[1], syntax.tuple_([syntax.const(-1)])])
            return syntax.located(syntax.binop(column, "Mult", row), node)
        return node

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.op, (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)):
            node.left, node.right = self.number(node.left), self.number(node.right)
        return node

    def number(self, operand: gast.expr) -> gast.expr:
        """A comparison of a named value, or a name holding one that is also used as a
        condition, cast to the compared value's dtype."""
        if isinstance(operand, gast.Compare) and isinstance(operand.left, gast.Name):
            compared = operand.left.id
        elif isinstance(operand, gast.Name) and operand.id in self.comparisons and \
                operand.id not in self.masks:
            compared = self.comparisons[operand.id]
        else:
            return operand
        return syntax.call(f"{self.numpy}.astype", [operand, syntax.attribute(
            syntax.name(compared), "dtype")])


def _only_default_order(keywords: dict) -> bool:
    order = keywords.get("order")
    return set(keywords) <= {"order"} and (order is None or (
        syntax.is_const(order) and order.value == "C"))


def _targets(stmt: gast.stmt) -> list[str]:
    if isinstance(stmt, gast.Assign):
        return sorted(syntax.names_written(stmt.targets[0]))
    return []


def simplify(stmt: gast.stmt) -> gast.stmt:
    """A copy of ``stmt`` with constants folded and identities removed (``g * 1``,
    ``x ** (2 - True)`` -> ``x``)."""
    return _Simplify().visit(syntax.clone(stmt))


class _Simplify(gast.NodeTransformer):
    """Fold constants and drop multiplications by one, powers of one, additions of zero."""

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        left, right, op = node.left, node.right, type(node.op)
        if syntax.is_const(left) and syntax.is_const(right) and op in _FOLD:
            try:
                value = _FOLD[op](left.value, right.value)
            except (ArithmeticError, TypeError, ValueError):
                return node
            if isinstance(value, complex) and not any(
                    isinstance(v, complex) for v in (left.value, right.value)):
                return node  # (-8.0) ** (1 / 3): Python makes a complex, NumPy a nan
            return syntax.located(syntax.const(value), node)
        if op in (gast.Mult, gast.Div, gast.Pow) and _is(right, 1):
            return left
        if op is gast.Mult and _is(left, 1):
            return right
        if op in (gast.Add, gast.Sub) and _is(right, 0):
            return left
        if op in (gast.Add, gast.Sub) and isinstance(right, gast.UnaryOp) and isinstance(
                right.op, gast.USub):  # a + -b -> a - b
            flipped = syntax.binop(left, "Sub" if op is gast.Add else "Add", right.operand)
            return syntax.located(flipped, node)
        return node

    def visit_Compare(self, node: gast.Compare) -> gast.expr:
        """``None is None``, ``0 == 1``: a template's test of a constant argument."""
        self.generic_visit(node)
        if len(node.ops) == 1 and syntax.is_const(node.left) and syntax.is_const(
                node.comparators[0]) and type(node.ops[0]) in _COMPARE and (
                not isinstance(node.ops[0], (gast.Is, gast.IsNot))
                or None in (node.left.value, node.comparators[0].value)):
            value = _COMPARE[type(node.ops[0])](node.left.value, node.comparators[0].value)
            return syntax.located(syntax.const(value), node)
        return node

    def visit_IfExp(self, node: gast.IfExp) -> gast.expr:
        self.generic_visit(node)
        if syntax.is_const(node.test) and isinstance(node.test.value, (bool, type(None))):
            return node.body if node.test.value else node.orelse
        return node

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp) \
                and isinstance(node.operand.op, gast.USub):
            return node.operand.operand
        if isinstance(node.op, gast.USub) and syntax.is_const(node.operand) \
                and isinstance(node.operand.value, (int, float)):
            return syntax.located(syntax.const(-node.operand.value), node)
        return node


_COMPARE = {gast.Is: operator.is_, gast.IsNot: operator.is_not, gast.Eq: operator.eq,
            gast.NotEq: operator.ne}


def _is(node: gast.expr, number: int) -> bool:
    return (syntax.is_const(node) and type(node.value) in (int, float)
            and node.value == number)


def _propagate_copies(adjoint: list[gast.stmt]) -> list[gast.stmt]:
    """Remove copies ``a = b`` of cotangents, block by block.

    - A temporary read only by the copy takes the copy's name (``w_bar = _g1`` turns
      ``_g1 = ...`` into ``w_bar = ...``).
    - A copy whose target is next updated by accumulation is fused with it
      (``a = b; a = a + e`` becomes ``a = b + e``).
    - Otherwise, when ``a`` is assigned once, read only after the copy in the same block, and
      ``b`` is not assigned there, those reads read ``b``.
    """
    everything = list(adjoint)

    def block(out: list[gast.stmt]) -> list[gast.stmt]:
        changed = True
        counts = None  # reads and writes of each name in everything, kept up to date below
        while changed:
            changed = False
            for k, stmt in enumerate(out):
                if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                        and isinstance(stmt.value, gast.Name)):
                    continue
                a, b = stmt.targets[0].id, stmt.value.id
                before, after = out[:k], out[k + 1:]
                if counts is None:
                    counts = _name_counts(everything)
                reads, writes = counts
                first = next((j for j, s in enumerate(after) if a in _writes([s])), None)
                if _is_temp_read_once(b, before, reads, writes):
                    for s in before:  # b's one write becomes a's; the copy's read of b goes
                        _rename_all(s, {b: a})
                    reads[b] -= 1
                    writes[b] -= 1
                elif first is not None and _is_accumulation(after[first], a) and not any(
                        a in syntax.names_read(s) for s in after[:first]):
                    after[first].value.left = syntax.name(b)  # a = a + e -> a = b + e
                    reads[a] -= 1
                    writes[a] -= 1
                elif (writes[a] == 1 and b not in _writes(after)
                      and reads[a] == _count_reads(after, a)):
                    for s in after:
                        syntax.rename(s, {a: b})
                    reads[b] += reads[a] - 1
                    reads[a] = writes[a] = 0
                else:
                    continue
                del out[k]
                changed = True
                break
        for stmt in out:  # in place: ``everything`` sees the blocks as they change
            for field in _kind(stmt).blocks:
                if getattr(stmt, field):
                    setattr(stmt, field, block(getattr(stmt, field)))
        return out

    return block(list(adjoint))


def _name_counts(stmts: list[gast.stmt]) -> tuple[Counter, Counter]:
    """How many times each name is read, and how many statements (not blocks) write it."""
    reads = Counter(n.id for s in stmts for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    writes = Counter(n for s in _in_order(stmts) if not _kind(s).blocks for n in _writes([s]))
    return reads, writes


def _count_reads(stmts: list[gast.stmt], name: str) -> int:
    return sum(1 for s in stmts for n in gast.walk(s)
               if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id == name)


def _is_temp_read_once(name: str, before: list[gast.stmt], reads: Counter, writes: Counter
                       ) -> bool:
    """A temporary assigned by one statement earlier in this block and read only once."""
    if not name.startswith("_"):
        return False
    defs = [s for s in before if isinstance(s, gast.Assign) and isinstance(
        s.targets[0], gast.Name) and s.targets[0].id == name]
    return len(defs) == 1 and writes[name] == 1 and reads[name] == 1


def _map_blocks_all(stmts: list[gast.stmt], rewrite: Any) -> list[gast.stmt]:
    """``rewrite`` applied to ``stmts`` and to every block nested in them."""
    return rewrite([_map_blocks(s, lambda b: _map_blocks_all(b, rewrite)) for s in stmts])


def _doubled(stmts: list[gast.stmt]) -> list[gast.stmt]:
    """``a = e; a = a + e`` as ``a = 2.0 * e``: the two equal contributions of a product of
    a value with itself (``h * h``), one pass over memory instead of three. Exact: doubling
    rounds nothing. ``e`` is arithmetic on names and constants (no call), not reading ``a``."""
    out: list[gast.stmt] = []
    for stmt in stmts:
        last = out[-1] if out else None
        if (last is not None and isinstance(last, gast.Assign)
                and isinstance(last.targets[0], gast.Name)
                and _is_accumulation(stmt, last.targets[0].id)
                and _is_arithmetic(last.value)
                and last.targets[0].id not in syntax.names_read(last.value)
                and gast.dump(last.value) == gast.dump(stmt.value.right)):
            out[-1] = syntax.located(syntax.assign(last.targets[0].id, syntax.binop(
                syntax.const(2.0), "Mult", last.value)), last)
            continue
        out.append(stmt)
    return out


def _is_arithmetic(node: gast.expr) -> bool:
    return all(isinstance(n, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp,
                              gast.operator, gast.unaryop, gast.expr_context))
               for n in gast.walk(node))


def _is_accumulation(stmt: gast.stmt, name: str) -> bool:
    return (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.BinOp)
            and isinstance(stmt.value.op, gast.Add) and syntax.is_name(stmt.value.left, name))


def _rename_all(stmt: gast.stmt, mapping: dict[str, str]) -> None:
    for node in gast.walk(stmt):
        if isinstance(node, gast.Name) and node.id in mapping:
            node.id = mapping[node.id]


def _eliminate_dead(stmts: list[gast.stmt], live: set[str]) -> tuple[list[gast.stmt], set]:
    """Drop assignments nothing reads; returns the block and the names live before it."""
    live = set(live)
    kept = []
    for stmt in reversed(stmts):
        kind = _kind(stmt)
        if kind.loop:
            loop_live = set(live)
            while True:  # what one iteration reads, the iteration after it may provide
                pruned = syntax.clone(stmt)
                live_in = _eliminate_dead_in_blocks(pruned, kind, loop_live)
                if live_in <= loop_live:
                    break
                loop_live |= live_in
            stmt = pruned
            live = loop_live | _own_reads(stmt)
        elif kind.blocks:
            live = _eliminate_dead_in_blocks(stmt, kind, live) | _own_reads(stmt)
        elif isinstance(stmt, gast.Expr):
            first = stmt.value.args[0] if getattr(stmt.value, "args", None) else None
            is_marker = _marker(stmt, POP) is not None or _marker(stmt, PUSH) is not None
            if not is_marker and isinstance(first, gast.Name) and first.id not in live:
                continue  # an in-place update of something nobody reads
            live |= syntax.names_read(stmt)
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
            base = stmt.targets[0].value  # an element store updates a live array in place
            if not (isinstance(base, gast.Name) and base.id in live):
                continue
            live |= syntax.names_read(stmt)
        elif isinstance(stmt, gast.Assign):
            targets = set(_targets(stmt))
            if not targets & live:
                continue
            live -= targets
            live |= syntax.names_read(stmt.value)
        else:  # kept for what it does (x += y updates x; a return, a raise): reads all it names
            live |= syntax.names_read(stmt)
        kept.append(stmt)
    return kept[::-1], live


def _eliminate_dead_in_blocks(stmt: gast.stmt, kind: statements.Kind, live: set[str]
                              ) -> set[str]:
    """Drop the dead assignments of ``stmt``'s blocks, in place; returns the names live
    before them: a loop's blocks run one after another, a branch's one of them."""
    before: set[str] = set()
    for field in reversed(kind.blocks):
        block, live_in = _eliminate_dead(getattr(stmt, field), live)
        setattr(stmt, field, syntax.block(block) if field == kind.blocks[0] else block)
        if kind.loop:
            live = live_in
        else:
            before |= live_in
    return live if kind.loop else before
