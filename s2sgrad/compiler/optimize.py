"""Pass 6, optimize: make the adjoint lean, then decide exactly what the forward saves.

Before: ``Reversed`` forward and adjoint bodies.
After:  ``Optimized``: the adjoint with constants folded and identities removed (``g * 1.0``,
        ``x ** 1``), copies propagated (``x_bar = out_bar`` disappears), dead statements
        removed (simplify.py), the cotangent buffers it owns updated in place (inplace.py);
        ``saved``, the primal names the adjoint still reads, in the order the forward
        defines them, pushed per block where a block needs them (stacks.py); the forward
        with the shape saves no one reads dropped and its return ``return out, (saved...)``
        appended. What differs for another library's arrays is asked of the compile's
        ``Backend`` (backends/): this pass names no library.

    adjoint:  _t1_bar = out_bar          ->   h_bar = out_bar * 2
              h_bar = _t1_bar * 2 ** 1
"""

from __future__ import annotations

import types
from collections import Counter
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..backends import NUMPY, Backend
from . import statements
from .coalesce import coalesce
from .inplace import update_in_place, without_restores
from .parse import MISSING
from .reverse import POP, PUSH, Reversed
from .simplify import Simplify
from .stacks import (
    Stack,
    _definitely_assigned,
    _in_order,
    _kind,
    _map_blocks,
    _marker,
    _own_reads,
    _reads,
    _targets,
)
from .views import returns_new_array


@dataclass(frozen=True)
class Optimized:
    reversed: Reversed
    forward: list[gast.stmt]
    adjoint: list[gast.stmt]
    saved: tuple[str, ...]
    external: tuple = ()  # saved values that may share outside memory (see _external)


def optimize(rev: Reversed, backend: Backend = NUMPY) -> Optimized:
    """The adjoint simplified and what the forward saves decided (see the module), through
    ``backend``, the library of the arrays (backends/): whether the adjoint updates the
    cotangent buffers it owns in place, its rewrites before the shapes it reads are hoisted,
    and the forms its code is written in."""
    # The adjoint is rewritten in place, so it is a copy: what reverse returned stays as it
    # was. The forward's statements are kept; a block that changes is rebuilt.
    adjoint = [Simplify().visit(s) for s in syntax.clone(rev.adjoint)]
    adjoint = _propagate_copies(adjoint)
    adjoint, _ = _eliminate_dead(adjoint, set())
    adjoint = _map_blocks_all(adjoint, _doubled)
    if backend.updates_in_place:
        adjoint = update_in_place(adjoint, rev.bindings, _numpy_name(rev), *_ranks(rev))
    adjoint = backend.lower(adjoint, rev)
    adjoint, forward = _hoist_shapes(adjoint, rev.forward, rev)
    adjoint = backend.adjoint_forms(adjoint, rev.bindings, _array_ranks(rev), _arrays(rev))
    read = _reads(adjoint)
    while True:  # drop shape saves and snapshots nothing reads (a hoisted shape may read one)
        unread = rev.shape_saves - read - _reads_of_others(forward, rev.shape_saves)
        pruned = _without_assignments(forward, unread)
        if _count(pruned) == _count(forward):
            break
        forward = pruned
    stack = Stack(rev)
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
    forward = backend.primal_forms(forward, rev.bindings, _array_ranks(rev), _arrays(rev))
    out = syntax.tuple_([syntax.clone(rev.result), syntax.tuple_(syntax.name(n) for n in saved)])
    forward.append(syntax.ret(out))
    pushed = {steps: set(names) for steps, names in stack.lists.values()}
    if stack.used:
        pushed[stack.name] = {n for names in stack.needed.values() for n in names}
    return Optimized(rev, forward, adjoint, saved, _external(rev, saved, params, pushed))


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
        query = syntax.shape_query(node, numpy_names)
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
        query = syntax.shape_query(node, self.numpy_names)
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
    # The reads and writes of each name in everything, kept up to date as copies go. A
    # nested block changes everything in place (the top level is rewritten in a copy), so
    # the counts the nested blocks read are counted once and handed on from block to block.
    nested: list[tuple[Counter, Counter]] = []

    def block(out: list[gast.stmt], top: bool = False) -> list[gast.stmt]:
        changed = True
        counts = None if top or not nested else nested[0]
        written: list[set[str]] = []  # of each statement of the block, kept up to date too
        loads: list[Counter] = []

        def again(js: Any) -> None:  # the statements at js changed
            for j in js:
                written[j], loads[j] = _writes([out[j]]), _loads(out[j])

        while changed:
            changed = False
            for k, stmt in enumerate(out):
                if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                        and isinstance(stmt.value, gast.Name)):
                    continue
                a, b = stmt.targets[0].id, stmt.value.id
                before, later = out[:k], range(k + 1, len(out))
                if counts is None:
                    counts = _name_counts(everything)
                    if not top:
                        nested.append(counts)
                if not written:
                    written = [_writes([s]) for s in out]
                    loads = [_loads(s) for s in out]
                reads, writes = counts
                first = next((j for j in later if a in written[j]), None)
                if _is_temp_read_once(b, before, reads, writes):
                    touched = [j for j in range(k) if b in written[j] or loads[j][b]]
                    for s in before:  # b's one write becomes a's; the copy's read of b goes
                        _rename_all(s, {b: a})
                    again(touched)
                    reads[b] -= 1
                    writes[b] -= 1
                elif first is not None and _is_accumulation(out[first], a) and not any(
                        loads[j][a] for j in range(k + 1, first)):
                    out[first].value.left = syntax.name(b)  # a = a + e -> a = b + e
                    again([first])
                    reads[a] -= 1
                    writes[a] -= 1
                elif (writes[a] == 1 and not any(b in written[j] for j in later)
                      and reads[a] == sum(loads[j][a] for j in later)):
                    touched = [j for j in later if loads[j][a]]
                    for j in touched:
                        syntax.rename(out[j], {a: b})
                    again(touched)
                    reads[b] += reads[a] - 1
                    reads[a] = writes[a] = 0
                else:
                    continue
                del out[k], written[k], loads[k]
                changed = True
                break
        for stmt in out:  # in place: ``everything`` sees the blocks as they change
            for field in _kind(stmt).blocks:
                if getattr(stmt, field):
                    setattr(stmt, field, block(getattr(stmt, field)))
        return out

    return block(list(adjoint), top=True)


def _name_counts(stmts: list[gast.stmt]) -> tuple[Counter, Counter]:
    """How many times each name is read, and how many statements (not blocks) write it."""
    reads = Counter(n.id for s in stmts for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    writes = Counter(n for s in _in_order(stmts) if not _kind(s).blocks for n in _writes([s]))
    return reads, writes


def _loads(stmt: gast.stmt) -> Counter:
    """How many times a statement reads each name."""
    return Counter(n.id for n in gast.walk(stmt)
                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))


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
            # a try's body keeps every statement: one that may raise decides which block
            # runs, whether or not its value is read
            kept_in_try = _writes(stmt.body) if isinstance(stmt, syntax.Try) else set()
            live = _eliminate_dead_in_blocks(stmt, kind, live | kept_in_try) | \
                _own_reads(stmt)
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
