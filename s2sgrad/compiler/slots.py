"""Part of pass 4b, aliasing: which slots of a tuple, list or dict may hold which values.

Takes, as the pass walks the body, each value put into a container (``hold``: a tuple,
list or dict literal, an append, an insert, ``d[k] = v``) and each value read out of one
(``item``), at the position of the statement doing it, under the key where it is a
constant. Gives the pass, for its checks, what an in-place update of an item reaches:

    b = {"k": y}          y is put into b's slot "k"
    z = b["k"]            z is read out of that slot
    b["k"] += x           the item's own += updates the array of both: y and z join its
                          group (``join_items``), as do the values of any version of b
                          and those of a slot whose key is not known when compiling

and which values an update of a group finds held by a container: put into one (or read out
of one) before it, or in a loop around it (``contained_before``), except those an item's
update changes in the one slot that holds them (``exempt``). Where what a container holds
is not known (made by a call, by list arithmetic, passed in), an update of its item is
refused here, at the user's line.
"""

from __future__ import annotations

from typing import Any

import gast

from .. import syntax
from .analyze import is_container
from .normalize import SETITEM
from .views import returns_new_array

ANY_KEY = object()  # a slot whose key is not known when compiling


class Slots:
    def __init__(self, aliases: Any):
        # the pass (Aliasing): its groups, and the positions and loops of its walk so far
        self.aliases = aliases
        # of the item updates (`_t3 = _t2 + v` of `c[k] += v`), those done in place (an
        # array's or a list's +=), by position -> (statement, c's version, the item _t2)
        self.item_updated: dict[int, tuple[gast.stmt, str, str]] = {}
        self.holds: dict[str, set[str]] = {}  # a container -> the names put into it
        self.put_at: dict[str, list[int]] = {}  # a name -> where it is put into a container
        # values put into a tuple, list or dict (or read out of one), with where that happens
        self.contained: dict[str, list[int]] = {}
        self.item_of: dict[str, set[str]] = {}  # a value -> the containers it may be an item of
        self.item_key: dict[str, Any] = {}  # of those, the key it was read under (or ANY_KEY)

    def hold(self, container: str, atoms: Any, keys: list | None = None) -> None:
        """``atoms`` are put into ``container`` (a new one, or a new version of one), under
        ``keys`` where those are known (a dict's constant keys; ANY_KEY otherwise)."""
        self.contain(atoms)
        here = len(self.aliases.position) - 1
        for a, key in zip(atoms, keys or [ANY_KEY] * len(atoms), strict=True):
            if isinstance(a, gast.Name):
                self.holds.setdefault(container, set()).add((key, a.id))
                self.put_at.setdefault(a.id, []).append(here)

    def contain(self, atoms: Any) -> None:
        here = len(self.aliases.position) - 1
        for a in atoms:
            if isinstance(a, gast.Name):
                self.contained.setdefault(a.id, []).append(here)

    def item(self, target: str, container: Any, key: Any = None) -> None:
        """``target`` may be an item of ``container`` (under ``key``, where known): not to
        be updated in place."""
        self.contain([syntax.name(target)])
        if isinstance(container, gast.Name):
            self.item_of.setdefault(target, set()).add(container.id)
            self.item_key[target] = ANY_KEY if key is None else key

    def join_items(self) -> None:
        """Each item a ``c[k] += v`` may update in place joins the memory of every value
        that may be that item: those put into c (any version of it) and those read out of
        it. A read of one of them after the update is then a read of updated memory, and an
        argument among them an update of the caller's array (both refused by the pass's
        checks). Where what c holds is not known (c made by a call, by list arithmetic,
        passed in), the update is refused."""
        for stmt, container, item in self.item_updated.values():
            for holder in self._holders(container, stmt, item):
                self.aliases.union(item, holder)

    def _holders(self, container: str, stmt: gast.stmt, item: str) -> set[str]:
        """The names whose values ``container`` (any version of it) may hold in the slot
        ``item`` was read from: those put into it or read out of it under that key, or
        under a key not known when compiling (any key, where the item's is not known; a
        list's positions are never told apart, since appends and pops move them)."""
        aliases = self.aliases
        key = self.item_key.get(item, ANY_KEY)
        if aliases.values[container].type is not dict:
            key = ANY_KEY

        def same_slot(other: Any) -> bool:  # (as a dict compares keys: 1 is True)
            return key is ANY_KEY or other is ANY_KEY or key == other

        group = aliases.find(container)
        names = set(aliases.group) | set(aliases.group.values()) | set(aliases.defs) | set(
            aliases.parsed.params) | set(self.item_of)
        versions = [n for n in names if aliases.find(n) == group and is_container(
            aliases.values.get(n))]
        holders: set[str] = set()
        for version in versions:
            made = aliases.assigned_by.get(version)
            op = aliases.ops.get(made) if made is not None else None
            known = op is not None and (
                isinstance(made.value, (gast.Tuple, gast.List, gast.Dict))
                or op.kind in ("put", "append", "insert", "pop", "copy"))
            if not known:
                raise aliases.parsed.error(
                    f"this updates, in place, an item of '{aliases.user(container)}', a "
                    f"{aliases.values[container].type.__name__} whose items may be held "
                    "elsewhere too (it is not made here from known values): NumPy would "
                    "change them there, which the gradient cannot follow", stmt,
                    f"Store a new value instead: `{aliases.user(container)}[k] = "
                    f"{aliases.user(container)}[k] + v`.")
            holders |= {n for k, n in self.holds.get(version, set()) if same_slot(k)}
        holders |= {n for n in self.item_of if any(
            aliases.find(c) == group for c in self.item_of[n]) and same_slot(
                self.item_key.get(n, ANY_KEY))}
        return holders

    def _single_homed(self, name: str) -> bool:
        """Is ``name``'s value held by one slot only: a new value (not a copy or a view of
        another), put into a container once (in a loop, made anew in each iteration
        before it)?"""
        puts = self.put_at.get(name, [])
        if len(puts) != 1 or self.aliases.origin.get(name, "fresh") != "fresh":
            return False
        loop = self.aliases.loop_of(puts[0])
        return loop is None or any(loop[0] <= d < puts[0]
                                   for d in self.aliases.defs.get(name, ()))

    def exempt(self, position: int) -> set[str]:
        """The names an in-place item update at ``position`` may find in a container:
        the item it read and updated, and each value put into the container that no
        other slot holds (the update then changes one slot's value, as Python does)."""
        if position not in self.item_updated:
            return set()
        stmt, container, item = self.item_updated[position]
        group = self.aliases.find(container)
        exempt = {item, stmt.targets[0].id}
        for name in self._holders(container, stmt, item):
            if name in self.item_of and all(self.aliases.find(c) == group for c in self.item_of[
                    name]) and name not in self.put_at:
                exempt.add(name)  # old = c[k]: read out of c only
            elif self._single_homed(name) and not self.item_of.get(name) or \
                    name in self.aliases.parsed.params:  # (refused by the pass: the caller's array)
                exempt.add(name)
        return exempt

    def contained_before(self, name: str, write: int, stmt: gast.stmt) -> bool:
        """Was ``name`` put into a container (or read out of one) before the update at
        ``write``, or in a loop around it (a later iteration updates what an earlier one
        put there, unless each iteration makes the array anew before updating it)? A
        container built after the update holds the new values, as NumPy's."""
        loop = self.aliases.loop_of(write)
        for at in self.contained.get(name, ()):
            if self.aliases.exclusive(at, write):
                continue
            if at < write:
                return True
            if loop is not None and loop[0] <= at <= loop[1] and \
                    not self._made_in_iteration(stmt, loop):
                return True
        return False

    def _made_in_iteration(self, stmt: gast.stmt, loop: tuple[int, int]) -> bool:
        """Is the array that ``stmt`` (an element write) updates made anew in each
        iteration of ``loop``, before ``stmt``: ``x = np.zeros(n)`` (or arithmetic) in
        the body, then element writes and copies of it only?"""
        aliases = self.aliases
        write = aliases.position[id(stmt)]
        value, seen, made = stmt.value, set(), stmt
        while isinstance(value, gast.Name) or isinstance(value, gast.Call) and \
                syntax.is_name(value.func, SETITEM):
            name = value.id if isinstance(value, gast.Name) else value.args[0].value.id
            if name in seen or len(aliases.defs.get(name, ())) != 1:
                return False  # a loop version (assigned twice): from the last iteration
            seen.add(name)
            at = aliases.defs[name][0]
            if not loop[0] <= at < write:
                return False
            made = aliases.assigned_by[name]
            value = made.value
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            return True  # arithmetic makes a new array
        op = aliases.ops.get(made) if seen else None
        return isinstance(value, gast.Call) and op is not None and op.kind in (
            "rule", "nondiff") and returns_new_array(op)
