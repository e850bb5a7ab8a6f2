"""Part of pass 6, optimize: update in place the cotangent buffers the adjoint owns.

Before: the adjoint as optimize simplified it. A contribution to part of a cotangent is
written as an update of a copy, which is right whatever else refers to the cotangent:

    x_bar = add_at(x_bar, i, g)          g added to the entries at i (no position twice)
    x_bar = add_at_each(x_bar, idx, g)   the same for any index (a position may repeat)
    r = zeroed_at(g, i)                  g with its entries at i set to zero
    c_bar = add_leaf(c_bar, k, g)        g added to the item k of a list or dict

After: each of them whose buffer the adjoint owns at that point updated in place, which
costs what the indexed entries cost instead of what the whole array costs:

    x_bar[i] += g
    np.add.at(x_bar, idx, g)
    g[i] = 0.0; r = g                    (where nothing reads g afterwards)
    c_bar[k] = c_bar[k] + g              (the list's slot rebound, its items never changed)

and a contribution added to an array the adjoint owns added into it (``x_bar = x_bar + c``
becomes ``x_bar += c``: no new array per contribution). An element zeroed and then given
back the value read from it before (``g = a[i]; a[i] = 0.0; ...; a[i] += g``, the adjoint
of ``y[i] += e``) is left as it was. Before a loop whose iterations
would update a buffer that the adjoint does not own when the loop starts (the cotangent
arriving from after the loop), one copy of it (``x_bar = np.copy(x_bar)``), so that every
iteration updates in place.

Ownership, the data flow this pass computes forward through the adjoint, loops to a
fixpoint: a name owns its value where no other value that is still read refers to the
same memory and the value is not the caller's or the forward's. A name comes to own a
value that

- a constructor of new memory returned: ``np.zeros``, ``np.zeros_like``, ``.copy()``,
  ``zeros_tree``, ``[0.0] * n`` and the copying updates above (an array, or for
  ``zeros_tree``, ``[0.0] * n``, ``add_leaf`` and ``add_item`` a list or dict: the two
  kinds are told apart, an array is never updated as a list or the other way round);
- an owner gave it (``m = n`` where ``n`` is not read again: the name changes, the memory
  stays owned);
- arithmetic gives it, where it is the cotangent of an array of rank 1 or more (a new
  array of that array's shape).

A name loses ownership when it is assigned anything else, or when its value is read by an
expression whose result may refer to the same memory (a view ``n[1:]``, ``n.T``, a
reshape, a container holding it, a call the pass does not know to return new memory)
while the name is still read afterwards. The adjoint's parameters (``saved``, ``out_bar``)
and everything unpacked from them are never owned. A statement kind without a case here
is an internal error.
"""

from __future__ import annotations

import functools
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..runtime.containers import add_item, add_leaf, zeros_tree
from ..runtime.indexing import add_at, add_at_each, zeroed_at
from . import statements

_kind = functools.partial(statements.kind, pass_name="optimize", generated=True)

ARRAY, CONTAINER = "array", "container"

# functions that return new memory, with the kind of value it is (None: not a buffer the
# pass updates, but never one that refers to an argument's memory)
_FRESH: dict[Any, str | None] = {
    np.zeros: ARRAY, np.zeros_like: ARRAY, np.ones: None, np.ones_like: None,
    add_at: ARRAY, add_at_each: ARRAY, zeroed_at: ARRAY,
    zeros_tree: CONTAINER, add_leaf: CONTAINER, add_item: CONTAINER,
    np.sum: None, np.mean: None, np.dot: None, np.matmul: None, np.outer: None,
    np.where: None, np.concatenate: None, np.stack: None, np.full: None,
    np.full_like: None, np.einsum: None, np.tensordot: None, np.kron: None,
    np.cumsum: None, np.diff: None, np.prod: None, np.linalg.norm: None,
}
# methods that return new memory
_FRESH_METHODS = {"copy": ARRAY, "sum": None, "dot": None, "mean": None, "prod": None,
                  "cumsum": None}


class _Ownership:
    def __init__(self, bindings: dict[str, Any], numpy: str, zero_dim: set[str],
                 arrays: set[str]):
        self.bindings = bindings
        self.np = numpy
        self.zero_dim = zero_dim  # adjoint names holding a 0-d value (an element)
        self.arrays = arrays  # cotangents of arrays of rank 1 or more

    # --- what an expression is -------------------------------------------------------------

    def resolve(self, func: gast.expr) -> Any:
        if isinstance(func, gast.Name):
            return self.bindings.get(func.id, _UNKNOWN)
        if isinstance(func, gast.Attribute):
            base = self.resolve(func.value)
            return _UNKNOWN if base is _UNKNOWN else getattr(base, func.attr, _UNKNOWN)
        return _UNKNOWN

    def fresh(self, value: gast.expr) -> str | None | bool:
        """ARRAY or CONTAINER: new memory the pass may update; None: new memory it does
        not update; False: may refer to the memory of a name it reads."""
        if isinstance(value, gast.Call):
            if value.keywords and any(k.arg == "out" for k in value.keywords):
                return False
            found = self.resolve(value.func)
            if found is not _UNKNOWN:
                try:
                    if found in _FRESH:
                        return _FRESH[found]
                except TypeError:  # unhashable
                    return False
                if isinstance(found, np.ufunc):
                    return None
            if isinstance(value.func, gast.Attribute) and value.func.attr in _FRESH_METHODS \
                    and found is _UNKNOWN:
                return _FRESH_METHODS[value.func.attr]
            return False
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult) and isinstance(
                value.left, gast.List):
            return CONTAINER  # [0.0] * n: a new list
        if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)):
            return None  # arithmetic on arrays makes a new array; numbers are immutable
        return False

    def aliases(self, value: gast.expr, target: str | None = None) -> set[str]:
        """Names whose memory the value of ``value`` may refer to (``target``: the name it
        is assigned to)."""
        if isinstance(value, gast.Name):
            return {value.id}
        if isinstance(value, gast.Subscript):
            if target in self.zero_dim and not any(
                    isinstance(n, gast.Slice) or (syntax.is_const(n) and n.value is Ellipsis)
                    for n in gast.walk(value.slice)):
                return set()  # one element: a number, not a view
            return self.aliases(value.value)
        if isinstance(value, gast.Attribute):
            return self.aliases(value.value)
        if self.fresh(value) is not False:
            return set()
        if isinstance(value, gast.Call):  # what the arguments (or the object) refer to
            parts = [*value.args, *(k.value for k in value.keywords)]
            if isinstance(value.func, gast.Attribute):
                parts.append(value.func.value)
            return set().union(*(self.aliases(p) for p in parts))
        return syntax.names_read(value)  # anything else: whatever it reads


_UNKNOWN = object()

# the most buffers a loop tries, one by one, to copy before it (each try runs the loop's
# data flow again, and a nested loop's within it)
_CANDIDATES = 6


def update_in_place(adjoint: list[gast.stmt], bindings: dict[str, Any], numpy: str,
                    zero_dim: set[str], arrays: set[str]) -> list[gast.stmt]:
    """The adjoint with the updates of buffers it owns done in place (see the module).
    ``zero_dim``: the cotangents of 0-d values; ``arrays``: of arrays of rank 1 or more
    (arithmetic gives them new arrays of that shape, as the reverse pass fits them)."""
    own = _Ownership(bindings, numpy, zero_dim, arrays)
    live = _Liveness()
    live.block(adjoint, set())
    out, _ = _Rewrite(own, live).block(adjoint, {})
    return out


def without_restores(stmts: list[gast.stmt]) -> list[gast.stmt]:
    """Each block without the pairs of element writes that give an element back the value
    it had: ``g = a[i]; a[i] = 0.0; ...; a[i] += g`` (the adjoint of ``y[i] += e``, which
    reads the element it writes) keeps ``g = a[i]`` and drops the other two, where nothing
    between reads or writes ``a``, and ``i`` and ``g`` keep their values. Run once the
    copies between are gone (coalesce), on statements of its own (changed in place)."""
    out = []
    for stmt in stmts:
        kind = _kind(stmt)
        for field in kind.blocks:
            setattr(stmt, field, without_restores(getattr(stmt, field)))
        out.append(stmt)
    k = 0
    while k < len(out):
        pair = _restore_of(out, k)
        if pair is not None:
            del out[pair[1]]
            del out[pair[0]]
            continue
        k += 1
    return out


def _restore_of(block: list[gast.stmt], k: int) -> tuple[int, int] | None:
    """(k, m) where ``block[k]`` zeroes ``a[i]`` and ``block[m]`` adds back what was read
    from it before (see ``without_restores``), or None."""
    zero = block[k]
    if not (isinstance(zero, gast.Assign) and len(zero.targets) == 1
            and isinstance(zero.targets[0], gast.Subscript)
            and isinstance(zero.targets[0].value, gast.Name)
            and syntax.is_const(zero.value) and zero.value.value == 0.0):
        return None
    a, index = zero.targets[0].value.id, gast.dump(zero.targets[0].slice)
    kept = syntax.names_read(zero.targets[0].slice)
    read = None  # g = a[i], the last statement before k that touches a
    for j in range(k - 1, -1, -1):
        s = block[j]
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and isinstance(s.value, gast.Subscript) \
                and syntax.is_name(s.value.value, a) and gast.dump(s.value.slice) == index:
            read = s.targets[0].id
            break
        if a in _touched([s]) or kept & _touched([s]):
            return None
    if read is None:
        return None
    for m in range(k + 1, len(block)):
        s = block[m]
        if (isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add)
                and isinstance(s.target, gast.Subscript) and syntax.is_name(s.target.value, a)
                and gast.dump(s.target.slice) == index and syntax.is_name(s.value, read)):
            return k, m
        if (a in _touched([s]) | syntax.names_read(s)) or (kept | {read}) & _touched([s]):
            return None
    return None


def _touched(stmts: list[gast.stmt]) -> set[str]:
    """Names assigned or updated in place, in ``stmts`` and their blocks."""
    names = set()
    for s in statements.in_order(stmts, "optimize", generated=True):
        targets = s.targets if isinstance(s, gast.Assign) else [s.target] if isinstance(
            s, (gast.AugAssign, gast.For)) else []
        for t in targets:
            names |= syntax.names_written(t)
            while isinstance(t, (gast.Subscript, gast.Attribute)):
                t = t.value
            if isinstance(t, gast.Name):
                names.add(t.id)
    return names


class _Liveness:
    """The names read after each statement (by ``id``) before they are assigned again."""

    def __init__(self):
        self.after: dict[int, set[str]] = {}
        self.before: dict[int, set[str]] = {}

    def block(self, stmts: list[gast.stmt], live: set[str]) -> set[str]:
        live = set(live)
        for stmt in reversed(stmts):
            self.after[id(stmt)] = set(live)
            kind = _kind(stmt)
            if kind.loop:
                loop_live = set(live)
                while True:  # an iteration reads what the iteration after it may provide
                    inside = self.block(stmt.body, loop_live) | _head_reads(stmt, kind)
                    if inside <= loop_live:
                        break
                    loop_live |= inside
                self.after[id(stmt)] = set(live)
                live = loop_live | _head_reads(stmt, kind)
            elif kind.blocks:
                before: set[str] = set()
                for field in kind.blocks:
                    before |= self.block(getattr(stmt, field), live)
                live = before | _head_reads(stmt, kind)
            elif isinstance(stmt, gast.Assign) and all(
                    isinstance(t, gast.Name) for t in _flat_targets(stmt.targets)):
                live -= {t.id for t in _flat_targets(stmt.targets)}
                live |= syntax.names_read(stmt.value)
            else:  # element stores read the container; expressions and returns what they name
                live |= syntax.names_read(stmt)
            self.before[id(stmt)] = set(live)
        return live


def _flat_targets(targets: list[gast.expr]) -> list[gast.expr]:
    out = []
    for t in targets:
        out += _flat_targets(t.elts) if isinstance(t, (gast.Tuple, gast.List)) else [t]
    return out


def _head_reads(stmt: gast.stmt, kind: statements.Kind) -> set[str]:
    return syntax.names_read(getattr(stmt, kind.head)) if kind.head else set()


class _Rewrite:
    """Forward over the adjoint with the names that own their value (name -> ARRAY or
    CONTAINER), rewriting the updates of owned buffers."""

    def __init__(self, own: _Ownership, live: _Liveness):
        self.own, self.live = own, live
        self.count = 0  # updates written in place

    def block(self, stmts: list[gast.stmt], owned: dict[str, str]
              ) -> tuple[list[gast.stmt], dict[str, str]]:
        out: list[gast.stmt] = []
        owned = dict(owned)
        for stmt in stmts:
            kind = _kind(stmt)
            if kind.loop:
                out += self.loop(stmt, kind, owned)
                owned = self.after_loop
            elif kind.blocks:
                new = syntax.clone(stmt)
                states = []
                for field in kind.blocks:
                    block, state = self.block(getattr(stmt, field), owned)
                    setattr(new, field, block)
                    states.append(state)
                if kind.name == "if" and not stmt.orelse:
                    states.append(owned)
                owned = _meet(states)
                out.append(new)
            elif isinstance(stmt, gast.Assign):
                out += self.assign(stmt, owned)
            elif isinstance(stmt, gast.AugAssign):  # adds into its target: no new reference
                out.append(stmt)
            elif isinstance(stmt, (gast.Expr, gast.Return, gast.Raise, gast.Assert)):
                self.escape(syntax.names_read(stmt), stmt, owned)
                out.append(stmt)
            elif isinstance(stmt, (gast.Pass, gast.Break, gast.Continue)):
                out.append(stmt)
            else:
                raise syntax.unexpected("optimize", stmt)
        return out, owned

    def loop(self, stmt: gast.stmt, kind: statements.Kind, owned: dict[str, str]
             ) -> list[gast.stmt]:
        if any(isinstance(s, (gast.Break, gast.Continue)) for s in _own_level(stmt.body)):
            # the state at a break or continue is not followed: nothing owned inside, and
            # nothing the body assigns or reads (it may hold it elsewhere) owned after
            body, _ = self.block(stmt.body, {})
            touched = _written(stmt.body) | {n for s in stmt.body for n in syntax.names_read(s)}
            self.after_loop = {n: k for n, k in owned.items() if n not in touched}
            new = syntax.clone(stmt)
            new.body = body
            return [new]
        targets = _target_names(stmt)
        live_in = self.live.before.get(id(stmt.body[0]), set())
        # names the body updates, or renames (m = n) towards an update, that arrive unowned:
        # copied once before the loop where that makes the iterations update in place
        candidates = {n for n in _updated_or_moved(stmt.body, self.own)
                      if n in live_in and n not in owned and n not in targets}
        if len(candidates) > _CANDIDATES:  # too many to try one by one: none copied
            candidates = set()
        state, count = self.fixpoint(stmt, owned, candidates)
        if candidates:
            _, fewest = self.fixpoint(stmt, owned, set())
            if count > fewest:
                candidates = {n for n in candidates if n in state and self.fixpoint(
                    stmt, owned, candidates - {n})[1] < count}
                state, _ = self.fixpoint(stmt, owned, candidates)
            else:
                candidates = set()
                state, _ = self.fixpoint(stmt, owned, candidates)
        copied = sorted(n for n in candidates if n in state)
        body, end = self.block(stmt.body, state)
        new = syntax.clone(stmt)
        new.body = body
        self.after_loop = _meet([{**owned, **{n: ARRAY for n in copied}}, end])
        copies = [syntax.located(syntax.assign(n, syntax.call(f"{self.own.np}.copy", [
            syntax.name(n)])), stmt) for n in copied]
        return copies + [new]

    def fixpoint(self, stmt: gast.stmt, owned: dict[str, str], extra: set[str]
                 ) -> tuple[dict[str, str], int]:
        """What the loop's body owns where it starts, when it is entered owning ``owned``
        and the arrays ``extra``; and how many updates it then does in place."""
        targets = _target_names(stmt)
        entry = {n: k for n, k in {**owned, **{n: ARRAY for n in extra}}.items()
                 if n not in targets}
        state = dict(entry)
        while True:  # the state an iteration starts with is what every path into it gives
            trial = _Rewrite(self.own, self.live)
            _, end = trial.block(stmt.body, state)
            start = _meet([entry, end])
            if start == state:
                return state, trial.count
            state = start

    def escape(self, names: set[str], stmt: gast.stmt, owned: dict[str, str]) -> None:
        """``names`` were read where the result may refer to them: those still read later
        are owned no more."""
        after = self.live.after.get(id(stmt), set())
        for n in names:
            if n in owned and n in after:
                del owned[n]

    def assign(self, stmt: gast.Assign, owned: dict[str, str]) -> list[gast.stmt]:
        target = stmt.targets[0]
        value = stmt.value
        after = self.live.after.get(id(stmt), set())
        if not isinstance(target, gast.Name) or len(stmt.targets) != 1:
            # an element store or an unpacking: what it reads may now be held elsewhere
            self.escape(self.own.aliases(value), stmt, owned)
            for t in _flat_targets(stmt.targets):
                if isinstance(t, gast.Name):
                    owned.pop(t.id, None)
            return [stmt]
        name = target.id
        rewritten = self.in_place(stmt, name, value, owned, after)
        if rewritten is not None:
            self.count += 1
            return rewritten
        if isinstance(value, gast.Name):  # m = n: the memory moves if n is read no more
            source = value.id
            kind = owned.get(source)
            if kind is not None and source not in after:
                del owned[source]
                owned[name] = kind
                return [stmt]
            if source in after:
                owned.pop(source, None)
            owned.pop(name, None)
            return [stmt]
        if (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)
                and syntax.is_name(value.left, name) and owned.get(name) == ARRAY
                and name not in syntax.names_read(value.right)):
            self.count += 1  # added into the array it owns
            return [syntax.located(syntax.aug_assign(name, "Add", value.right), stmt)]
        fresh = self.own.fresh(value)
        self.escape(self.own.aliases(value, name), stmt, owned)
        owned.pop(name, None)
        if fresh in (ARRAY, CONTAINER):
            owned[name] = fresh
        elif isinstance(value, (gast.BinOp, gast.UnaryOp)) and name in self.own.arrays:
            owned[name] = ARRAY  # arithmetic giving the cotangent of an array: a new array
        return [stmt]

    def in_place(self, stmt: gast.Assign, name: str, value: gast.expr,
                 owned: dict[str, str], after: set[str]) -> list[gast.stmt] | None:
        """The update written in place where the buffer is owned, or None."""
        if not isinstance(value, gast.Call) or value.keywords or len(value.args) not in (2, 3):
            return None
        helper = self.own.resolve(value.func)
        if helper not in (add_at, add_at_each, add_leaf, zeroed_at):
            return None
        base, index = value.args[0], value.args[1]
        if not isinstance(base, gast.Name):
            return None
        other = set().union(*(syntax.names_read(a) for a in value.args[1:]))
        if helper is zeroed_at:
            if owned.get(base.id) != ARRAY or base.id in other or (
                    base.id != name and base.id in after):
                return None
            store = syntax.subscript(syntax.name(base.id), syntax.clone(index), store=True)
            out = [syntax.located(syntax.assign(store, syntax.const(0.0)), stmt)]
            del owned[base.id]
            owned[name] = ARRAY
            if name != base.id:
                out.append(syntax.located(syntax.assign(name, syntax.name(base.id)), stmt))
            return out
        g = value.args[2]
        kind = CONTAINER if helper is add_leaf else ARRAY
        if base.id != name or owned.get(name) != kind or name in other:
            return None
        self.escape(self.own.aliases(g), stmt, owned)
        if helper is add_at:
            store = syntax.subscript(syntax.name(name), syntax.clone(index), store=True)
            return [syntax.located(syntax.aug_assign(store, "Add", syntax.clone(g)), stmt)]
        if helper is add_at_each:
            call = syntax.call(f"{self.own.np}.add.at", [syntax.name(name), syntax.clone(index),
                                                         syntax.clone(g)])
            return [syntax.located(syntax.expr_stmt(call), stmt)]
        item = syntax.subscript(syntax.name(name), syntax.clone(index))
        store = syntax.subscript(syntax.name(name), syntax.clone(index), store=True)
        return [syntax.located(syntax.assign(store, syntax.binop(item, "Add", syntax.clone(g))),
                               stmt)]


def _meet(states: list[dict[str, str]]) -> dict[str, str]:
    first, *rest = states
    return {n: k for n, k in first.items() if all(s.get(n) == k for s in rest)}


def _own_level(stmts: list[gast.stmt]):
    """The statements of a block and of its branches, not of the loops nested in it."""
    for stmt in stmts:
        yield stmt
        kind = _kind(stmt)
        if kind.blocks and not kind.loop:
            for field in kind.blocks:
                yield from _own_level(getattr(stmt, field))


def _written(stmts: list[gast.stmt]) -> set[str]:
    return {n for s in statements.in_order(stmts, "optimize", generated=True)
            if isinstance(s, gast.Assign) for t in s.targets for n in syntax.names_written(t)}


def _updated_or_moved(stmts: list[gast.stmt], own: _Ownership) -> set[str]:
    """Names a block updates with a copying update of an array, or renames (``m = n``)."""
    found = set()
    for s in statements.in_order(stmts, "optimize", generated=True):
        if isinstance(s, gast.Assign) and isinstance(s.value, gast.Name):
            found.add(s.value.id)
        elif isinstance(s, gast.Assign) and isinstance(s.value, gast.Call) and s.value.args \
                and isinstance(s.value.args[0], gast.Name) \
                and own.resolve(s.value.func) in (add_at, add_at_each, zeroed_at):
            found.add(s.value.args[0].id)
    return found


def _target_names(stmt: gast.stmt) -> set[str]:
    """The names a loop's head assigns (a for loop's target)."""
    return syntax.names_written(stmt.target) if isinstance(stmt, gast.For) else set()
