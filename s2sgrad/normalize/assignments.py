"""Assignments: names, unpacking, element writes, appends and augmented assignments.

Takes the targets and value of a user-level assignment; gives, through the walk, one
``name = <operation>`` per name it binds, each storing into a new version of the variable:

    a = b = f(x)            a = f(x); b = a                 later targets copy the first
    n, m = x.shape          _t1 = x.shape; n = _t1[0]; m = _t1[1]
    (p, q), y[0] = v        _t2 = v[0]; p = _t2[0]; q = _t2[1]; _t3 = v[1]; y[0] = _t3
    h += x                  h_1 = h + x                     recorded in ``augmented``
    y[i] += v               _t2 = y[i]; _t3 = _t2 + v; y_1 = __setitem__(y[i], _t3)
    xs.append(v)            xs_1 = __append__(xs, v)

An element write or an append makes a new version of the variable it updates (optimize
turns it back into an update in place where that is safe). The statements that came from
``h += x`` and ``y[i] = v`` are recorded with the variable and the version they update:
NumPy's ``+=`` and element writes change that version's memory, which ``aliasing`` checks.
"""

from __future__ import annotations

import gast

from .. import syntax
from .expressions import Expressions
from .walk import Walk

SETITEM = "__setitem__"  # y_1 = __setitem__(y[idx], v): the ANF form of y[idx] = v
APPEND = "__append__"  # xs_1 = __append__(xs, v): the ANF form of xs.append(v)


def is_append(call: gast.expr, local_names: frozenset[str]) -> bool:
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
            and call.func.value.id in local_names and len(call.args) == 1
            and not call.keywords)


class Assignments:
    def __init__(self, walk: Walk, expressions: Expressions):
        self.walk = walk
        self.parsed, self.namer, self.versions = walk.parsed, walk.namer, walk.versions
        self.emit = walk.emit
        self.expressions = expressions
        self.augmented: dict[gast.stmt, tuple[str, str]] = {}  # `h += x` statements
        self.writes: dict[gast.stmt, tuple[str, str]] = {}  # `y[i] = v` statements

    def assign(self, targets: list[gast.expr], value: gast.expr) -> None:
        first, *others = targets
        if isinstance(value, gast.Lambda) and isinstance(first, gast.Name) and not others:
            # f = lambda v: ...: inlined where called
            self.expressions.define_function(first.id, value, first)
            return
        if isinstance(value, gast.Call) and isinstance(first, gast.Name) and not others and \
                self.expressions.partial(first.id, value):
            return
        if isinstance(first, gast.Subscript):
            if others:
                raise self.parsed.error("chained assignment to an element is not supported",
                                        first, "Write one assignment per statement.")
            self.store(first, value, None, first)
            return
        if isinstance(first, gast.Name):
            self.expressions.partials.pop(first.id, None)  # rebound: no longer the partial
            result = self.expressions.operation(value, target=first).id
        else:
            result = None
            self.unpack(first, value)
        for target in others:  # a = b = value: later targets copy the first
            if result is None:
                raise self.parsed.error("chained assignment to a tuple is not supported",
                                        target, "Write one assignment per statement.")
            self.emit(syntax.assign(self.versions.define(target.id), syntax.name(result)),
                      target)

    def unpack(self, target: gast.Tuple | gast.List, value: gast.expr) -> None:
        """``a, (b, c), y[0] = value``: every value on the right first, then each target,
        from left to right, as Python does (``y[0], y[1] = y[1], y[0]`` swaps)."""
        atom = self.expressions.atom
        if isinstance(value, (gast.Tuple, gast.List)) and not any(
                isinstance(v, gast.Starred) for v in value.elts):
            if len(value.elts) != len(target.elts):
                raise self.parsed.error(
                    f"cannot unpack {len(value.elts)} values into {len(target.elts)} names",
                    value, "Give as many names as values.")
            items = [atom(v) for v in value.elts]  # every right-hand side before a store
        else:
            whole = atom(value)  # n, m = x.shape  ->  n = _t1[0]; m = _t1[1]
            items = [syntax.subscript(syntax.clone(whole), syntax.const(k))
                     for k in range(len(target.elts))]
        for t, item in zip(target.elts, items, strict=True):
            self.bind(t, item)

    def bind(self, target: gast.expr, value: gast.expr) -> None:
        """Store an atom, or an item ``whole[k]`` of one, into one unpacking target."""
        if isinstance(target, gast.Name):
            self.emit(syntax.assign(self.versions.define(target.id), value), target)
            return
        if not isinstance(value, gast.Name) and not syntax.is_const(value):
            value = self.expressions.operation(syntax.located(value, target), temp=True)
        if isinstance(target, (gast.Tuple, gast.List)):
            self.unpack(target, value)
        else:  # y[i]: an element write (fence lets nothing else through)
            self.store(target, value, None, target)

    def augmented_assign(self, stmt: gast.AugAssign) -> None:
        """``h += x`` -> ``h_1 = h + x``; ``y[idx] += v``, an element write."""
        if isinstance(stmt.target, gast.Subscript):
            self.store(stmt.target, stmt.value, stmt.op, stmt)
            return
        previous = self.versions.current.get(stmt.target.id)
        value = syntax.binop(syntax.name(stmt.target.id), stmt.op, stmt.value)
        self.assign([stmt.target], syntax.located(value, stmt))
        if previous is not None:
            self.augmented[self.walk.out[-1]] = (stmt.target.id, previous)

    def store(self, target: gast.Subscript, value: gast.expr, op: gast.operator | None,
              origin: gast.AST) -> None:
        """``y[idx] = v`` (or ``y[idx] op= v``) -> ``y_1 = __setitem__(y[idx], v)``: a new
        version of y, which optimize makes an in-place update where that is safe."""
        base = target.value
        if not (isinstance(base, gast.Name) and base.id in self.parsed.local_names):
            raise self.parsed.error("only a variable's elements can be assigned to", target,
                                    "Assign to a name first, e.g. `row = y[i]; ...`.")
        previous = self.expressions.load(base).id
        index = self.expressions.index(target.slice)
        if op is not None:  # y[idx] += v  is  y[idx] = y[idx] + v, evaluated once
            current = syntax.name(self.namer.temp())
            read = syntax.subscript(syntax.name(previous), syntax.clone(index))
            self.emit(syntax.assign(current.id, read), origin)
            value = syntax.located(syntax.binop(current, op, value), origin)
        atom = self.expressions.atom(value)
        region = syntax.subscript(syntax.name(previous), index)
        new = self.versions.define(base.id)
        self.emit(syntax.assign(new, syntax.call(syntax.name(SETITEM), [region, atom])), origin)
        self.writes[self.walk.out[-1]] = (base.id, previous)

    def append(self, base: gast.Name, value: gast.expr, origin: gast.AST) -> None:
        """``xs.append(v)`` -> ``xs_1 = __append__(xs, v)``: a new version of the list, which
        the forward makes by appending in place."""
        previous = self.expressions.load(base).id
        atom = self.expressions.atom(value)
        new = self.versions.define(base.id)
        self.emit(syntax.assign(new, syntax.call(syntax.name(APPEND), [
            syntax.name(previous), atom])), origin)
