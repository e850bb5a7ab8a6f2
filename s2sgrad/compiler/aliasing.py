"""Pass 4b, aliasing: which values share memory, and which in-place updates are refused.

Before: an ``Analysis`` (the operation and abstract value of every ANF statement).
After:  ``Aliasing``: names grouped by the memory they may share, the in-place updates
        (``y[i] = v``, ``h += x`` on arrays, ``xs += [v]`` on lists) and, for reverse, which
        values a later update would overwrite (``at_risk``) and which parameters the
        result may share (``result_aliases``). The updates the gradient cannot follow are
        refused here, as TransformErrors at the user's line; reverse raises none of its own.

Memory is shared by copies (``k = h``), views (slices, reshapes, transposes, ``x.T``, and
any call not known to return new memory, ``returns_new_array``: np.fliplr, np.split,
np.einsum('ii->i', y), a function without a rule),
an array read from an object (``out = self.buf``) and the versions an update makes. So:

    y = x[0:2]; y[0] = v          refused: x is the caller's array
    y = x * 1.0; y[0] = v         fine: x * 1.0 is new memory
    h = h + x                     fine: a new array, the old h is unchanged
    h += x  (h a view of x)       refused: it changes x
    w = WORKSPACE; w[0] = v       refused: a global's memory
    k = h; h[0] = v; use(k)       refused: k would show the new value, its gradient not

Where each version's value comes from is decided here too (``origins``), from the ANF and
what normalize records of versions (``Normalized.variable_of``, which variable each version
stands for):

    x                        'param'   an argument
    y = x[0:2]               'alias'   an item, a copy of another variable, a call or an
                                       attribute that may return a view (``VIEWS``)
    z = y * 2.0              'fresh'   any other operation
    z_1 = __setitem__(...)   as z      an element write or an append: the version it updates
    x_2 = x_1 / x_2 = x      'param'   a copy between versions of one variable (a merge, a
                                       loop version), or of a temporary, keeps its origin;
                                       a name assigned on several paths has the worst
                                       (param, then alias)

``x += v`` on a version that is an argument is refused as an update of the argument, and an
element write into a value that is not an array where that value is fresh.

An augmented assignment through a slot or an attribute is Python's: ``d[k] += v`` reads the
item and calls its own ``+=``, which updates an array (or a list) in place, in every name,
slot and attribute that holds it, and rebinds a number or a tuple. So the item's update is
an in-place update of the item's memory, whose group is every value the container may hold
(put into it, or read out of it); the forward does it in place as NumPy does, and the checks
below refuse what another holder would show afterwards:

    b = {"k": y}; b["k"] += x; use(y)       refused: y is the updated array
    b = [y, y]; b[0] += x                   refused: another slot holds it too
    b = [x * 1.0] * 2; b[0] += x            refused: what b holds is not known here
    p = {"w": w * 2.0}; p["w"] -= g         fine: one slot holds the array
    layer.w += 1  (an object built here)    the attribute's variable updated in place
"""

from __future__ import annotations

import copy
from typing import Any

import gast

from .. import syntax
from . import statements
from .analyze import UPDATES, Analysis, described, is_container
from .normalize import APPEND, INSERT, POP_ITEM, SETITEM, Normalized
from .parse import MISSING
from .slots import ANY_KEY, Slots
from .views import VIEWS, returns_new_array


def aliasing(analysis: Analysis) -> Aliasing:
    return Aliasing(analysis)


def origins(normalized: Normalized) -> dict[str, str]:
    """Where the value of each name assigned in ``normalized`` may come from (see the module
    docstring); a name that is not here is 'fresh'."""
    variable_of = normalized.variable_of
    assignments: dict[str, list[gast.expr | None]] = {}  # name -> values (None: a loop index)
    for stmt in statements.in_order(normalized.node.body, "aliasing"):
        if isinstance(stmt, gast.Assign):
            assignments.setdefault(stmt.targets[0].id, []).append(stmt.value)
        elif isinstance(stmt, gast.For):
            assignments.setdefault(stmt.target.id, []).append(None)
    origin = {p: "param" for p in normalized.parsed.params}

    def same_value(target: str, source: str) -> bool:
        """Is ``target = source`` the same value under another name: a version of the same
        variable, or a temporary's value given its name (``a, b = [u], v``)?"""
        if source in variable_of:
            return variable_of[source] == variable_of.get(target)
        return source in assignments

    def of(target: str, value: gast.expr | None) -> str:
        updated = _updated(value)
        if updated is not None:  # an element write, an append: the memory it updates
            return origin.get(updated, "fresh")
        if isinstance(value, gast.Name):
            return origin.get(value.id, "fresh") if same_value(target, value.id) else "alias"
        return _origin_of(value)

    changed = True
    while changed:  # to a fixpoint: copies around a loop read versions assigned later
        changed = False
        for name, values in assignments.items():
            worst = _worst(origin.get(name, "fresh"), *(of(name, v) for v in values))
            if worst != origin.get(name, "fresh"):
                origin[name], changed = worst, True
    return origin


def _updated(value: gast.expr | None) -> str | None:
    """The version that ``y_1 = __setitem__(y[i], v)`` or ``xs_1 = __append__(xs, v)``
    updates."""
    if isinstance(value, gast.Call) and syntax.is_name(value.func, SETITEM):
        return value.args[0].value.id
    if isinstance(value, gast.Call) and any(syntax.is_name(value.func, form) for form in (
            APPEND, INSERT, POP_ITEM)):
        return value.args[0].id
    return None


def _origin_of(op: gast.expr | None) -> str:
    """'alias' if the value of one operation may share memory with another value, else
    'fresh'."""
    if isinstance(op, gast.Subscript):
        return "alias"
    if isinstance(op, gast.Attribute):
        return "alias" if op.attr in VIEWS else "fresh"
    if isinstance(op, gast.Call):
        attr = op.func.attr if isinstance(op.func, gast.Attribute) else getattr(
            op.func, "id", "")
        return "alias" if attr in VIEWS else "fresh"
    return "fresh"


def _worst(*origins: str) -> str:
    """Where a value may come from, of several: an argument, else an alias, else fresh."""
    for origin in ("param", "alias"):
        if origin in origins:
            return origin
    return "fresh"


def _symbol(stmt: gast.Assign) -> str:
    """The operator of an augmented assignment's ANF form, for a message."""
    ops = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
           gast.MatMult: "@"}
    return ops.get(type(getattr(stmt.value, "op", None)), "+")


def _names_read_here(stmt: gast.stmt, kind: statements.Kind) -> set[str]:
    """Names a statement reads itself (for an if or a loop: its test or range only)."""
    if kind.head is not None:
        return syntax.names_read(getattr(stmt, kind.head))
    return set() if kind.blocks else syntax.names_read(stmt)


def _key(node: Any) -> Any:
    """A container's key as a constant (``d["w"]``, ``{"w": v}``), else ANY_KEY."""
    if node is not None and syntax.is_const(node) and type(node.value) in (str, int, bool):
        return node.value
    return ANY_KEY


def _may_hold_array(value: Any) -> bool:
    """An array, or a value that may be one or hold one (unknown, a container)."""
    return value is None or value.kind in ("array", "object")


class Aliasing:
    """Which values may be changed by an in-place update that runs after a statement.

    In-place updates are element assignments (``y[i] = v``) and augmented assignments to
    arrays (``h += x``), which NumPy performs in the array's memory. Names are grouped by
    the memory they may share: copies, views (indexing, reshapes, transposes, a user
    function's result and its arguments) and the versions an update makes are one group.
    A name is at risk after statement S when its group is updated after S in program order,
    or anywhere in a loop that contains S (a later iteration). Updates of a group that
    holds an argument, and reads through another name of a group after an update (NumPy
    would show the new values, the gradient would not), are refused here. Which values
    each tuple, list or dict may hold, and so what an update of an item reaches, is
    followed by ``slots`` (slots.py).
    """

    def __init__(self, analysis: Analysis):
        self.group: dict[str, str] = {}
        self.position: dict[int, int] = {}
        self.at: dict[int, gast.stmt] = {}  # position -> statement
        self.loops: list[tuple[int, int]] = []  # (first, last) positions of each loop body
        self.writes: dict[str, list[tuple[int, gast.stmt]]] = {}  # new version -> update
        self.in_place: set[int] = set()  # augmented assignments done in place
        self.defs: dict[str, list[int]] = {}
        self.assigned_by: dict[str, gast.stmt] = {}  # a name -> (the last) assignment of it
        self.ops = analysis.ops
        self.reads: dict[str, list[tuple[int, gast.stmt]]] = {}
        self.values = analysis.values
        self.parsed = analysis.normalized.parsed
        self.augmented = analysis.normalized.augmented
        self.outputs = analysis.normalized.outputs  # the element writes of out=
        # `_t3 = _t2 + v` of `c[k] += v` -> (c's version, the item _t2 read from it)
        self.item_updates = dict(analysis.normalized.item_updates)
        self.origin = origins(analysis.normalized)
        self.branch_path: dict[int, tuple] = {}  # position -> ((if position, branch), ...)
        self.slots = Slots(self)  # which values each tuple, list or dict may hold
        for stmt in statements.in_order(analysis.body, "aliasing"):  # updates of arguments
            if stmt in self.augmented:
                self._check_augmented(stmt, *self.augmented[stmt])
            if stmt in analysis.normalized.writes:
                self._check_element_write(stmt, *analysis.normalized.writes[stmt])
            if stmt in analysis.normalized.views:
                self._check_view_write(stmt, *analysis.normalized.views[stmt])
        self._walk(analysis.body[:-1], analysis)
        self.slots.join_items()
        # reads of another name of an array after its update in place, which read the
        # updated version instead (see ``forwardable``): (read, name read, version)
        self.forwards: list[tuple[gast.stmt, str, str]] = []
        self._check()
        if self.forwards:
            raise Forwards(self.forwards)

    def _check_augmented(self, stmt: gast.stmt, name: str, previous: str) -> None:
        """``x += y`` on an array (or a list) updates it in place: refused on an argument
        (other names that share it are checked with the groups, in _check)."""
        value = self.values.get(previous)
        if self.origin.get(previous) != "param" or value is None or (
                value.kind != "array" and value.type is not list):
            return
        what, who = ("list", "Python") if value.type is list else ("array", "NumPy")
        raise self.parsed.error(
            f"in-place update of the argument '{name}': {who} would change the caller's "
            f"{what}", stmt, f"Write `{name} = {name} {_symbol(stmt)} ...` to make a new {what}.")

    def _check_element_write(self, stmt: gast.stmt, name: str, previous: str) -> None:
        """``y[i] = v``: into an array or a list or dict (``put``), not into an argument."""
        value = self.values.get(previous)
        origin = self.origin.get(previous, "fresh")
        if value is None:
            return
        if is_container(value):
            if origin == "param":
                what = value.type.__name__
                raise self.parsed.error(
                    f"assignment to an item of '{name}', the caller's {what}: Python would "
                    "change it there too", stmt,
                    f"Copy it first: `{name} = {what}({name})`, or build a new {what}.")
            return
        if value.kind != "array" and origin == "fresh":
            raise self.parsed.error(
                f"assignment to an element of '{name}', which is not a NumPy array here "
                f"({value!r})", stmt, "Lists and dicts of values are not supported yet; "
                "build the values with np.zeros(...) and assign into the array.")
        if origin == "param":
            write = f"assignment to an element of '{name}'"
            if stmt in self.outputs:
                write = f"out={name} writes into '{name}'"
            elif len(stmt.value.args) == 3:  # np.add.at(y, idx, v)
                write = f"np.{stmt.value.args[2].value}.at adds into '{name}'"
            raise self.parsed.error(
                f"{write}, the caller's array: NumPy would change both", stmt,
                f"Copy it first: `{name} = {name}.copy()`.")

    def _check_view_write(self, stmt: gast.Assign, text: str, inner: int) -> None:
        """``y.T[i] = v`` and ``b[i][j] = v``, written as one element write into ``y`` or
        ``b``: what they mean only where that is an array and ``i`` an integer (``b[i]`` a
        view of b, not a copy or an item of a list)."""
        region = stmt.value.args[0]
        base = self.values.get(region.value.id)
        if base is None or base.kind != "array":
            raise self.parsed.error(
                f"assignment through '{text}', where '{self.user(region.value.id)}' is "
                f"{described(base) if base is not None else 'not known here'}: followed "
                "for NumPy arrays only (an array held in a list or dict may be seen through "
                "other names too)", stmt,
                "Change the array under a name of its own before storing it: "
                "`x = np.zeros(n); x[j] = v; d[k] = x`.")
        for part in region.slice.elts[:inner]:
            value = self.values.get(part.id) if isinstance(part, gast.Name) else None
            integer = (syntax.is_const(part) and type(part.value) is int) or (
                value is not None and value.kind == "scalar" and not value.float)
            if not integer:
                raise self.parsed.error(
                    f"assignment through '{text}', where the first index is not an integer "
                    "here: NumPy would write into a copy", stmt,
                    "Write one index: `b[i, j] = v`.")

    def _ndim(self, atom: Any) -> int | None:
        """The rank of an argument, where the analysis knows it."""
        value = self.values.get(atom.id) if isinstance(atom, gast.Name) else None
        return None if value is None or value.kind != "array" else value.ndim

    def find(self, name: str) -> str:
        while self.group.get(name, name) != name:
            name = self.group[name]
        return name

    def union(self, a: str, b: str) -> None:
        self.group[self.find(a)] = self.find(b)

    def _walk(self, stmts: list[gast.stmt], analysis: Analysis, path: tuple = ()) -> None:
        for stmt in stmts:
            here = self.position[id(stmt)] = len(self.position)
            self.at[here] = stmt
            self.branch_path[here] = path
            kind = statements.kind(stmt, "aliasing")
            for name in _names_read_here(stmt, kind):
                self.reads.setdefault(name, []).append((here, stmt))
            if kind.loop:
                if isinstance(stmt, gast.For):  # the loop's index
                    self.defs.setdefault(stmt.target.id, []).append(here)
                first = len(self.position)
                for field in kind.blocks:
                    self._walk(getattr(stmt, field), analysis, path)
                self.loops.append((first, len(self.position) - 1))
            elif kind.blocks:  # a branch: one of its blocks runs
                for field in kind.blocks:
                    self._walk(getattr(stmt, field), analysis, path + ((here, field),))
            elif isinstance(stmt, gast.Assign):
                op = analysis.ops.get(stmt)
                target = op.target if op is not None else None
                if target is None:
                    continue
                self.defs.setdefault(target, []).append(here)
                self.assigned_by[target] = stmt
                for name in self._shares_memory_with(stmt, op):
                    self.union(target, name)
                if op.kind in UPDATES or id(stmt) in self.in_place or \
                        here in self.slots.item_updated:
                    self.writes.setdefault(target, []).append((here, stmt))

    def _shares_memory_with(self, stmt: gast.Assign, op: Any) -> list[str]:
        value = stmt.value
        if isinstance(value, (gast.Tuple, gast.List, gast.Dict)):  # differentiated or not,
            self.slots.hold(op.target,
                            value.values if isinstance(value, gast.Dict) else value.elts,
                            [_key(k) for k in value.keys] if isinstance(value, gast.Dict) else None)
            return []
        if op.kind == "setitem":
            return [op.bindings["a"].id]
        if op.kind in ("append", "insert"):  # the same list; its new item is contained
            self.slots.hold(op.target, [op.bindings["v"]])
            return [op.bindings["xs"].id]
        if op.kind == "put":  # the same list or dict, with a new item
            self.slots.hold(op.target, [op.bindings["v"]], [_key(op.bindings["key"])])
            return [op.bindings["c"].id]
        if op.kind == "pop":
            return [op.bindings["xs"].id]
        if op.kind == "pack":
            self.slots.contain(op.bindings.values())
            return []
        if op.kind == "item":  # an array inside a container: not to be updated in place
            self.slots.item(op.target, op.bindings["c"], _key(op.bindings["key"]))
            return []
        augmented = self.augmented.get(stmt)
        target_value = self.values.get(op.target)
        item_update = self.item_updates.get(stmt)
        if item_update is not None and is_container(self.values.get(item_update[0])) and (
                _may_hold_array(target_value) or target_value.type is list):
            # c[k] += v: the item's own += (an array's, a list's) updates it in place, in
            # every slot and name that holds it (Slots.join_items adds those to its group).
            # The forward does it in place for an array; a list's slot is given the longer
            # list (its cotangent keeps the structure of each version), which is the same
            # where no other holder of the list is read afterwards, as _check makes sure
            if target_value is None or target_value.type is not list:
                self.in_place.add(id(stmt))
            self.slots.item_updated[self.position[id(stmt)]] = (stmt, *item_update)
            return [item_update[1]]
        if augmented is not None and target_value is not None and (
                target_value.kind == "array" or target_value.type is list):  # xs += [v] too
            self.in_place.add(id(stmt))
            return [augmented[1]]  # x += y updates x's memory
        if isinstance(value, gast.Name):
            return [value.id]
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            if is_container(self.values.get(value.value.id)):  # an item, never a view
                self.slots.item(op.target, value.value)
                return []
            return [] if target_value is not None and target_value.ndim == 0 else [
                value.value.id]
        if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
            owner = self.values.get(value.value.id)
            if owner is None or owner.kind == "object":  # an array held by an object (or a
                return [value.value.id]                   # module): the object's memory
            return [value.value.id] if value.attr in VIEWS else []
        if isinstance(value, gast.Call):
            func = value.func
            if op.kind == "call":  # the callee knows which arguments its result may share
                aliased = getattr(op.callee, "result_aliases", None)
                shared = [a for p, atom in op.bindings.items()
                          for a in (atom if isinstance(atom, tuple) else (atom,))
                          if isinstance(a, gast.Name) and (aliased is None or p in aliased)]
                for a in shared:  # an item of a container passed in (def first(xs): ...)
                    if is_container(self.values.get(a.id)):
                        self.slots.item(op.target, a)
                return [a.id for a in shared]
            if op.kind == "rule" and op.rule.shape == "item":  # d.get(k): an item of d
                self.slots.item(op.target, op.bindings[op.rule.params[0]])
            if op.kind in ("rule", "nondiff", "unknown") and returns_new_array(op, self._ndim):
                return []
            # Anything else may return a view of its array arguments (np.fliplr, np.split,
            # np.asarray, a function without a rule): assume it shares their memory.
            receiver = func.value if isinstance(func, gast.Attribute) and isinstance(
                func.value, gast.Name) and func.value.id in self.values else None
            atoms = ([receiver] if receiver is not None else []) + list(value.args) + [
                k.value for k in value.keywords]
            return [a.id for a in atoms if isinstance(a, gast.Name) and _may_hold_array(
                self.values.get(a.id))]
        return []

    def loop_of(self, position: int) -> tuple[int, int] | None:
        inner = [(f, last) for f, last in self.loops if f <= position <= last]
        return min(inner, key=lambda r: r[1] - r[0]) if inner else None

    def _check(self) -> None:
        params = set(self.parsed.params)
        for target, updates in self.writes.items():
            group = self.find(target)
            names = set(self.group) | set(self.group.values()) | set(self.defs) | params
            members = [n for n in names if self.find(n) == group]
            for position, stmt in updates:
                exempt = self.slots.exempt(position)
                inside = [m for m in members if m not in exempt and self.slots.contained_before(
                    m, position, stmt)]
                if inside:
                    what = "a list or dict" if is_container(self.values.get(target)) else \
                        "an array"
                    raise self.parsed.error(
                        f"this updates, in place, {what} that was put into a tuple, list or "
                        f"dict ('{self.user(inside[0])}') or read out of one: it would change "
                        "there too, which the gradient cannot follow", stmt,
                        "Copy it before the update (`row = [v for v in rows[0]]`, "
                        "`h = h.copy()`), or update a new name (`h = h + x`).")
                shared = [m for m in members if m in params]
                if shared and is_container(self.values.get(target)):
                    what = self.values[target].type.__name__
                    raise self.parsed.error(
                        f"this changes, in place, the {what} the argument '{shared[0]}' "
                        f"holds: Python would change the caller's {what}", stmt,
                        f"Copy it first, e.g. `xs = {what}(xs)`.")
                if shared:
                    raise self.parsed.error(
                        f"this updates, in place, memory that the argument '{shared[0]}' "
                        "shares: NumPy would change the caller's array", stmt,
                        "Copy the array first, e.g. `y = x.copy()`.")
                outside = [m for m in members if m not in self.defs and m not in params
                           and self.parsed.lookup(m) is not MISSING]
                if outside:
                    raise self.parsed.error(
                        f"this updates, in place, memory of '{outside[0]}', a variable from "
                        "outside the function: NumPy would change it there, which the "
                        "gradient cannot follow", stmt,
                        "Copy the array first (`w = WORK.copy()`), or return the new values.")
                for member in members:
                    if member != target and self._stale_read(member, position):
                        reads = forwardable(self, member, target, position, stmt)
                        if reads is not None:
                            self.forwards += [(read, member, target) for read in reads]
                            continue
                        read = self._stale_read(member, position)
                        raise self.parsed.error(
                            f"'{self.user(member)}' shares memory with an array updated in place "
                            "before this use: NumPy shows the new values here, which the "
                            "gradient cannot follow", read,
                            "Copy the array before the update (`k = h.copy()`), or use a new "
                            "name for the result (`h = h + x`).")

    def user(self, name: str) -> str:
        """The name the user wrote for a version of it (``h_2`` -> ``h``)."""
        base, _, suffix = name.rpartition("_")
        if name not in self.parsed.local_names and suffix.isdigit() and \
                base in self.parsed.local_names:
            return base
        return name if name in self.parsed.local_names else "a value computed here"

    def _stale_read(self, name: str, write: int) -> gast.stmt | None:
        """A read of ``name`` that runs after the update at ``write`` with no new assignment
        to ``name`` in between (counting the way around a loop that holds both)."""
        defs = self.defs.get(name, [])
        loop = self.loop_of(write)
        made = made_each_iteration(self, write)
        for read, stmt in self.reads.get(name, []):
            if read == write or self.exclusive(read, write):
                continue
            if made is not None and made[1][0] <= read <= made[1][1] and (
                    read < made[0] or not any(made[0] < d < read for d in defs)):
                continue  # the name holds an array of an earlier iteration here
            if read > write:
                if not any(write < d < read for d in defs):
                    return stmt
            elif loop is not None and loop[0] <= read <= loop[1] and not any(
                    write < d <= loop[1] or loop[0] <= d < read for d in defs):
                return stmt  # read in a later iteration, with no assignment between
        return None

    def exclusive(self, a: int, b: int) -> bool:
        """Are two positions in different branches of one if (never both in one run)?"""
        branches = dict(self.branch_path.get(a, ()))
        return any(branches.get(at, side) != side for at, side in self.branch_path.get(b, ()))

    def result_aliases(self, result: gast.expr) -> frozenset[str]:
        """The parameters whose memory the returned value may share, or that may hold it
        as an item (a caller then treats the result as an item of what it passed)."""
        if not isinstance(result, gast.Name):
            return frozenset()
        names = set(self.group) | set(self.group.values()) | set(self.defs) | set(
            self.parsed.params) | set(self.slots.item_of)
        groups = {self.find(result.id)}
        while True:  # the groups of the containers holding it, of those holding them, ...
            holders = {self.find(c) for n in names if self.find(n) in groups
                       for c in self.slots.item_of.get(n, ())}
            if holders <= groups:
                break
            groups |= holders
        return frozenset(p for p in self.parsed.params if self.find(p) in groups)

    def is_in_place(self, stmt: gast.stmt) -> bool:
        return id(stmt) in self.in_place

    def overwrites(self, stmt: gast.stmt, name: str) -> bool:
        """Does ``stmt`` itself update the memory ``name`` refers to?"""
        if id(stmt) not in self.in_place:
            return False
        target = stmt.targets[0].id
        return self.find(name) == self.find(target) and name != target

    def changed_after(self, name: str, stmt: gast.stmt) -> bool:
        """Is the memory ``name`` refers to updated in place once ``stmt`` (a loop, with
        everything in it) has run: further on, or in a later iteration of a loop around
        it?"""
        group = self.find(name)
        first = self.position.get(id(stmt))
        if first is None:
            return True
        last = max(self.position.get(id(s), first) for s in statements.in_order(
            [stmt], "aliasing"))
        for target, updates in self.writes.items():
            if self.find(target) != group:
                continue
            for write, _ in updates:
                if write > last or any(f <= first and last <= e and f <= write <= e
                                       for f, e in self.loops):
                    return True
        return False

    def known(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` is a statement of the analysed body (``at_risk`` answers for
        those only)."""
        return not self.writes or id(stmt) in self.position

    def at_risk(self, name: str, stmt: gast.stmt) -> bool:
        if not self.writes:
            return False
        group = self.find(name)
        where = self.position.get(id(stmt))
        if where is None:
            return False
        if self.overwrites(stmt, name):
            return True
        for target, updates in self.writes.items():
            if self.find(target) != group:
                continue
            for write, _ in updates:
                if write > where:
                    return True
                if any(first <= where <= last and first <= write <= last
                       for first, last in self.loops):
                    return True
        return False


# --- reads after an update through another name --------------------------------------------
#
# ``k = h; h += x; use(k)``: NumPy updates the one array both names hold, so ``use`` sees the
# new values. Where ``k`` is certainly that array (a chain of copies of the version the
# update changed: ``same_array``), and the update runs before the read in every run (the
# read is further on in the update's block, or in a block nested there, within the same
# iterations of its loops), the read is the updated version's: ``use(h_1)``. The forward
# computes the same (one array), and the gradient follows the update. Reads that cannot be
# written so (in a later iteration of a loop, in another branch, through a view or a slot
# of a container) stay refused.


class Forwards(Exception):
    """The reads ``aliasing`` found that read the updated version instead: the pipeline
    rewrites them (``forward_reads``) and runs the analysis again."""

    def __init__(self, reads: list[tuple[gast.stmt, str, str]]):
        super().__init__(f"{len(reads)} reads after an update in place")
        self.reads = reads


def forwardable(aliases: Aliasing, member: str, target: str, position: int,
                stmt: gast.stmt) -> list[gast.stmt] | None:
    """The statements that read ``member`` after the update at ``position`` (which makes
    ``target``), where each can read ``target`` instead; None where one cannot."""
    updated = _updated_in_place(aliases, stmt)
    if updated is None or len(aliases.defs.get(target, ())) != 1 or \
            same_array(aliases, member) != same_array(aliases, updated):
        return None
    path = aliases.branch_path.get(position, ())
    loops = {loop for loop in aliases.loops if loop[0] <= position <= loop[1]}
    defs = aliases.defs.get(member, [])
    found = []
    for read, here in aliases.reads.get(member, []):
        if read == position or aliases.exclusive(read, position):
            continue
        if read < position:  # a later iteration's read: the version is not known there
            if any(first <= read <= last for first, last in loops):
                return None
            continue
        if any(position < d < read for d in defs):
            continue  # the name was assigned again in between
        if aliases.branch_path.get(read, ())[:len(path)] != path or not all(
                first <= read <= last for first, last in loops):
            return None  # not certainly after the update, in the same iterations
        found.append(here)
    return found


def _updated_in_place(aliases: Aliasing, stmt: gast.stmt) -> str | None:
    """The version an update in place of a whole array changes: ``h`` of ``h_1 = h + x``
    (an augmented assignment done in place) or of ``h_1 = __setitem__(h[i], v)``; None for
    the item updates of containers (their holders are the slots')."""
    op = aliases.ops.get(stmt)
    if op is not None and op.kind == "setitem":
        return op.bindings["a"].id
    if stmt in aliases.augmented and aliases.is_in_place(stmt) and \
            stmt not in aliases.item_updates and getattr(
                aliases.values.get(stmt.targets[0].id), "kind", None) == "array":
        return aliases.augmented[stmt][1]  # (a list's += is followed by its holders' checks)
    return None


def made_each_iteration(aliases: Aliasing, write: int) -> tuple[int, tuple[int, int]] | None:
    """Where the array the update at ``write`` changes is made anew in every iteration of
    the loop around the update (``u_next = np.zeros(n)`` at the top of the body, ``u_next[1:]
    = ...`` below): that position, and the loop. Another name read in that loop holds the
    array of an earlier iteration, which the update does not change, unless it was
    assigned after the array was made, in the same iteration. None otherwise."""
    loop = aliases.loop_of(write)
    updated = _updated_in_place(aliases, aliases.at[write])
    if loop is None or updated is None:
        return None
    root = same_array(aliases, updated)
    made = aliases.defs.get(root, [])
    if len(made) != 1 or not loop[0] <= made[0] < write or \
            aliases.origin.get(root, "fresh") != "fresh" or root in aliases.parsed.params:
        return None
    return made[0], loop


def same_array(aliases: Aliasing, name: str) -> str:
    """The first of the chain of copies and updates in place ``name`` comes from (``k = h``,
    ``h_1`` of ``h += x``; each name assigned once): names with the same first hold the
    same array."""
    seen = set()
    while name not in seen:
        seen.add(name)
        stmt = aliases.assigned_by.get(name)
        op = aliases.ops.get(stmt) if stmt is not None else None
        if op is None or len(aliases.defs.get(name, ())) != 1:
            return name
        updated = _updated_in_place(aliases, stmt)
        if updated is not None:
            name = updated
        elif op.kind == "copy" and isinstance(stmt.value, gast.Name):
            name = stmt.value.id
        else:
            return name
    return name


def forward_reads(normalized: Normalized, reads: list[tuple[gast.stmt, str, str]]
                  ) -> Normalized:
    """A copy of ``normalized`` whose statements in ``reads`` read the updated version
    instead of the other name (a statement with blocks: in its test or range only)."""
    memo = {id(normalized.parsed): normalized.parsed}
    copied = copy.deepcopy(normalized, memo)
    for stmt, name, version in reads:
        here = memo[id(stmt)]
        kind = statements.kind(here, "aliasing")
        part = getattr(here, kind.head) if kind.head is not None else here
        if kind.blocks and kind.head is None:
            raise syntax.unexpected("aliasing", here, "a read in a statement with no head")
        for n in gast.walk(part):
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load):
                n.id = version
        for table in (copied.augmented, copied.writes):  # an update of the name read
            if here in table and table[here][1] == name:
                table[here] = (table[here][0], version)
    return copied
