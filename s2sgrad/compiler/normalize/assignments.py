"""Assignments: names, unpacking, element writes, appends and augmented assignments.

Takes the targets and value of a user-level assignment; gives, through the walk, one
``name = <operation>`` per name it binds, each storing into a new version of the variable:

    a = b = f(x)            a = f(x); b = a                 later targets copy the first
    y[i] = a = f(x)         _t1 = f(x); y_1 = __setitem__(y[i], _t1); a = _t1
                                                            (each target in turn, as Python)
    n, m = x.shape          _t1 = x.shape; n = _t1[0]; m = _t1[1]
    (p, q), y[0] = v        _t2 = v[0]; p = _t2[0]; q = _t2[1]; _t3 = v[1]; y[0] = _t3
    h += x                  h_1 = h + x                     recorded in ``augmented``
    y[i] += v               _t2 = y[i]; _t3 = _t2 + v; y_1 = __setitem__(y[i], _t3)
                                                            _t3's statement recorded in
                                                            ``item_updates``
    obj.w += v              obj_w_1 = obj_w + v             recorded in ``augmented``
    y.T[i] = v              y_1 = __setitem__(y[..., i], v)     recorded in ``views``
    np.add.at(y, i, v)      y_1 = __setitem__(y[i], v, 'add')   (outputs.py)
    xs.append(v)            xs_1 = __append__(xs, v)
    xs.insert(i, v)         xs_1 = __insert__(xs, i, v)
    v = xs.pop(i)           _t4 = xs[i]; xs_1 = __pop_item__(xs, i, _t4); v = _t4
    first, *rest = xs       first = xs[0]; _t6 = xs[1]; _t7 = xs[2]; rest = [_t6, _t7]
                            (for a size the analysis knows: see spreads)
    del xs[i]               _t5 = xs[i]; xs_1 = __pop_item__(xs, i, _t5)   (d[k] alike)
    del h                   (nothing: h is unbound after it, reading it is refused)

An element write, an append, an insert or a pop (or a del of an item) makes a new version of the variable it
updates (the forward does it in place, as Python does). The statements that came from
``h += x`` and ``y[i] = v`` are recorded with the variable and the version they update:
NumPy's ``+=`` and element writes change that version's memory, which ``aliasing`` checks.
So does the ``+=`` of an item (``d[k] += v``) or of an attribute (``obj.w += v``): Python
calls the item's own ``__iadd__``, in place for an array or a list, whichever other name,
slot or attribute holds it; aliasing decides from the item's kind.
An attribute of an object the function builds is a variable of its own (``objects``).
"""

from __future__ import annotations

import ast

import gast

from ... import syntax
from .expressions import Expressions
from .walk import Walk

SETITEM = "__setitem__"  # y_1 = __setitem__(y[idx], v): the ANF form of y[idx] = v
APPEND = "__append__"  # xs_1 = __append__(xs, v): the ANF form of xs.append(v)


INSERT = "__insert__"  # xs_1 = __insert__(xs, i, v): the ANF form of xs.insert(i, v)


def is_append(call: gast.expr, local_names: frozenset[str], method: str = "append") -> bool:
    """``xs.append(v)`` (or with ``method``, ``xs.insert(i, v)``) on a local name."""
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == method and isinstance(call.func.value, gast.Name)
            and call.func.value.id in local_names
            and len(call.args) == (2 if method == "insert" else 1) and not call.keywords
            and not any(isinstance(a, gast.Starred) for a in call.args))


class Assignments:
    def __init__(self, walk: Walk, expressions: Expressions):
        self.walk = walk
        self.parsed, self.namer, self.versions = walk.parsed, walk.namer, walk.versions
        self.emit = walk.emit
        self.expressions = expressions
        self.augmented: dict[gast.stmt, tuple[str, str]] = {}  # `h += x` statements
        self.writes: dict[gast.stmt, tuple[str, str]] = {}  # `y[i] = v` statements
        self.views: dict[gast.stmt, tuple[str, int]] = {}  # of those, `y.T[i] = v` ones
        # `_t3 = _t2 + v` of `c[k] += v` (`_t2 = c[k]`) -> (the version of c, _t2)
        self.item_updates: dict[gast.stmt, tuple[str, str]] = {}
        self.unpacks: dict[gast.stmt, int] = {}  # `a = t[0]` of `a, b = t` -> how many

    def assign(self, targets: list[gast.expr], value: gast.expr) -> None:
        first, *others = targets
        if isinstance(value, gast.Lambda) and isinstance(first, gast.Name) and not others \
                and first.id not in self.expressions.functions.results:
            # f = lambda v: ...: inlined where called
            self.expressions.functions.define_function(first.id, value, first)
            return
        if isinstance(value, gast.Call) and isinstance(first, gast.Name) and not others and \
                self.expressions.functions.partial(first.id, value):
            return
        objects = self.expressions.objects
        if isinstance(first, gast.Name) and not others:
            cls = objects.builds(value)
            if cls is not None:  # layer = Lin(w): an object built here
                objects.construct(first.id, value, cls)
                return
            if objects.factory(value) is not None:  # model = build(params): built here too
                objects.make(first.id, value)
                return
            if objects.is_object(value):  # other = layer: one object, under two names
                objects.alias(first.id, value, value)
                return
            if objects.freezes(value):  # d = st.norm(m, s): a frozen distribution
                objects.freeze(first.id, value)
                return
        if others and not isinstance(first, gast.Name):
            # t[i] = a = value: value once, then each target from left to right
            atom = self.expressions.atom(value)
            for target in targets:
                self.bind(target, atom)
            return
        if isinstance(first, gast.Attribute):
            self.set_attribute(first, value, first)
            return
        if isinstance(first, gast.Subscript):
            self.store(first, value, None, first)
            return
        if isinstance(first, gast.Name):
            # rebound: no longer the partial
            self.expressions.functions.partials.pop(first.id, None)
            result = self.expressions.operation(value, target=first).id
        else:
            self.unpack(first, value)
            return
        for target in others:  # a = b = value: later targets copy the first
            self.bind(target, syntax.name(result))

    def set_attribute(self, target: gast.Attribute, value: gast.expr,
                      origin: gast.AST) -> None:
        """``obj.attr = value`` on an object the function builds (see ``objects``)."""
        objects = self.expressions.objects
        if not objects.is_object(target.value):
            raise self.parsed.error(
                "assigning to an attribute is not supported: it would change an object outside "
                "the function", target, "Return the new value instead and assign it outside.")
        objects.write(target, value, origin)

    def unpack(self, target: gast.Tuple | gast.List, value: gast.expr) -> None:
        """``a, (b, c), y[0] = value``: every value on the right first, then each target,
        from left to right, as Python does (``y[0], y[1] = y[1], y[0]`` swaps)."""
        if any(isinstance(t, gast.Starred) for t in target.elts):  # a, *rest = value
            self.expressions.spreads.unpack(target, value, self.bind)
            return
        atom = self.expressions.atom
        if isinstance(value, (gast.Tuple, gast.List)) and not any(
                isinstance(v, gast.Starred) for v in value.elts):
            if len(value.elts) != len(target.elts):
                raise self.parsed.error(
                    f"cannot unpack {len(value.elts)} values into {len(target.elts)} names",
                    value, "Give as many names as values.")
            objects = self.expressions.objects
            items = []  # every right-hand side before a store; an object built: its name
            for t, v in zip(target.elts, value.elts, strict=True):
                cls = objects.builds(v) if isinstance(t, gast.Name) else None
                if cls is not None:
                    objects.construct(t.id, v, cls)
                items.append(None if cls is not None else atom(v))
        else:
            whole = atom(value)  # n, m = x.shape  ->  n = _t1[0]; m = _t1[1]
            items = [syntax.subscript(syntax.clone(whole), syntax.const(k))
                     for k in range(len(target.elts))]
        mark = len(self.walk.out)
        for t, item in zip(target.elts, items, strict=True):
            if item is not None:
                self.bind(t, item)
        if not isinstance(value, (gast.Tuple, gast.List)) and len(self.walk.out) > mark:
            self.unpacks[self.walk.out[mark]] = len(target.elts)  # _t2 = _t1[0]: checked

    def bind(self, target: gast.expr, value: gast.expr) -> None:
        """Store an atom, or an item ``whole[k]`` of one, into one unpacking target."""
        if isinstance(target, gast.Name):
            self.emit(syntax.assign(self.versions.define(target.id), value), target)
            return
        if not isinstance(value, gast.Name) and not syntax.is_const(value):
            value = self.expressions.operation(syntax.located(value, target), temp=True)
        if isinstance(target, (gast.Tuple, gast.List)):
            self.unpack(target, value)
        elif isinstance(target, gast.Attribute):  # self.w, self.b = params
            self.set_attribute(target, value, target)
        else:  # y[i]: an element write (fence lets nothing else through)
            self.store(target, value, None, target)

    def augmented_assign(self, stmt: gast.AugAssign) -> None:
        """``h += x`` -> ``h_1 = h + x`` (in place where NumPy updates h in place: see
        ``augmented``); ``obj.h += x`` the same on the attribute's variable; ``y[idx] += v``,
        an element write."""
        if isinstance(stmt.target, gast.Subscript):
            self.store(stmt.target, stmt.value, stmt.op, stmt)
            return
        target = stmt.target
        if isinstance(target, gast.Attribute):
            # obj.h += x of an object built here: its attribute's variable's, as h += x is
            target = self.expressions.objects.variable(target)
            if not isinstance(target, gast.Name):  # not set yet: refused as obj.h = ...
                load = syntax.located(syntax.attribute(syntax.clone(stmt.target.value),
                                                       stmt.target.attr), stmt.target)
                self.set_attribute(stmt.target, syntax.located(syntax.binop(
                    load, stmt.op, stmt.value), stmt), stmt)
                return
        previous = self.versions.current.get(target.id)
        value = syntax.binop(syntax.name(target.id), stmt.op, stmt.value)
        self.assign([target], syntax.located(value, stmt))
        if previous is not None:  # NumPy's += updates that version in place
            self.augmented[self.walk.out[-1]] = (target.id, previous)

    def store(self, target: gast.Subscript, value: gast.expr, op: gast.operator | None,
              origin: gast.AST) -> None:
        """``y[idx] = v`` (or ``y[idx] op= v``) -> ``y_1 = __setitem__(y[idx], v)``: a new
        version of y, which optimize makes an in-place update where that is safe."""
        target, view = self.through_view(target)
        target = syntax.replace(target, value=self.expressions.objects.variable(target.value))
        base = target.value  # (obj.buf[i] = v: the attribute's variable)
        if not (isinstance(base, gast.Name) and (base.id in self.parsed.local_names
                                                 or base.id in self.versions.synthetic)):
            raise self.parsed.error("only a variable's elements can be assigned to", target,
                                    "Assign to a name first, e.g. `row = y[i]; ...`.")
        if op is None:  # y[idx] = v: v first, then y and idx, as Python evaluates them
            atom = self.expressions.atom(value)
            previous = self.expressions.load(base).id
            index = self.expressions.index(target.slice)
        else:  # y[idx] += v  is  y[idx] = y[idx] + v, y and idx evaluated once, first
            previous = self.expressions.load(base).id
            index = self.expressions.index(target.slice)
            current = syntax.name(self.namer.temp())
            read = syntax.subscript(syntax.name(previous), syntax.clone(index))
            self.emit(syntax.assign(current.id, read), origin)
            mark = len(self.walk.out)
            atom = self.expressions.atom(syntax.located(syntax.binop(current, op, value),
                                                        origin))
            update = self._update_of(mark, current.id)
            if update is not None:  # what Python's += does to the item it read
                self.item_updates[update] = (previous, current.id)
        region = syntax.subscript(syntax.name(previous), index)
        new = self.versions.define(base.id)
        self.emit(syntax.assign(new, syntax.call(syntax.name(SETITEM), [region, atom])), origin)
        self.writes[self.walk.out[-1]] = (base.id, previous)
        if view is not None:
            self.views[self.walk.out[-1]] = view

    def scatter(self, ufunc: str, base: gast.Name, index: gast.expr, value: gast.expr,
                origin: gast.AST) -> None:
        """``np.add.at(y, idx, v)`` -> ``y_1 = __setitem__(y[idx], v, 'add')``: an element
        write in which each occurrence of a repeated position adds its part (y, idx and v
        evaluated in this order, as Python evaluates the arguments)."""
        previous = self.expressions.load(base).id
        index = self.expressions.index(index) if isinstance(index, gast.Tuple) else \
            self.expressions.atom(index)
        atom = self.expressions.atom(value)
        region = syntax.subscript(syntax.name(previous), index)
        new = self.versions.define(base.id)
        self.emit(syntax.assign(new, syntax.located(syntax.call(syntax.name(SETITEM), [
            region, atom, syntax.const(ufunc)]), origin)), origin)
        self.writes[self.walk.out[-1]] = (base.id, previous)

    def _update_of(self, mark: int, previous: str) -> gast.stmt | None:
        """The statement emitted since ``mark`` that computes ``previous op value`` (the
        operation of an augmented assignment), if there is one."""
        for stmt in self.walk.out[mark:]:
            value = getattr(stmt, "value", None)
            if isinstance(stmt, gast.Assign) and isinstance(value, gast.BinOp) and \
                    syntax.is_name(value.left, previous):
                return stmt
        return None

    def through_view(self, target: gast.Subscript) -> tuple[gast.Subscript, tuple | None]:
        """A write through a view of a local array, as one element write into the array:

            y.T[i, j] = v       y[..., j, i] = v      (.T reverses the axes)
            b[i][j] = v         b[i, j] = v           (b[i] is a view where i is an int)

        with what it was (the text, and how many leading index parts came from the inner
        view): aliasing checks that ``y`` and ``b`` are arrays and ``i`` an integer."""
        base = target.value
        parts = list(target.slice.elts) if isinstance(target.slice, gast.Tuple) else [
            target.slice]
        if not (isinstance(base, (gast.Attribute, gast.Subscript))
                and isinstance(base.value, gast.Name)
                and base.value.id in self.parsed.local_names):
            return target, None
        text = ast.unparse(syntax.to_python_ast(syntax.clone(target)))
        if isinstance(base, gast.Attribute) and base.attr == "T":
            if any(isinstance(p, gast.Starred) or (syntax.is_const(p) and p.value in (
                    Ellipsis, None)) for p in parts):
                raise self.parsed.error(
                    f"assignment through '{text}' with ... or None in its index", target,
                    "Index the array itself: `y[:, i] = v` for `y.T[i] = v`.")
            index = [syntax.const(Ellipsis)] + parts[::-1]
            return syntax.located(syntax.subscript(base.value, syntax.tuple_(index)),
                                  target), (text, 0)
        if isinstance(base, gast.Subscript):
            inner = list(base.slice.elts) if isinstance(base.slice, gast.Tuple) else [
                base.slice]
            if any(isinstance(p, (gast.Slice, gast.Starred)) for p in inner):
                raise self.parsed.error(
                    f"assignment through '{text}', where the first index is a slice", target,
                    "Write one index: `b[i:j][k] = v` is `b[i + k] = v`.")
            return syntax.located(syntax.subscript(base.value, syntax.tuple_(inner + parts)),
                                  target), (text, len(inner))
        return target, None

    def append(self, base: gast.Name, value: gast.expr, origin: gast.AST) -> None:
        """``xs.append(v)`` -> ``xs_1 = __append__(xs, v)``: a new version of the list, which
        the forward makes by appending in place."""
        atom = self.expressions.atom(value)  # which may change the list (xs.pop())
        previous = self.expressions.load(base).id
        new = self.versions.define(base.id)
        self.emit(syntax.assign(new, syntax.call(syntax.name(APPEND), [
            syntax.name(previous), atom])), origin)

    def insert(self, base: gast.Name, index: gast.expr, value: gast.expr,
               origin: gast.AST) -> None:
        """``xs.insert(i, v)`` -> ``xs_1 = __insert__(xs, i, v)``: a new version of the list,
        which the forward makes by inserting in place."""
        at = self.expressions.atom(index)
        atom = self.expressions.atom(value)  # which may change the list (xs.pop())
        previous = self.expressions.load(base).id
        new = self.versions.define(base.id)
        self.emit(syntax.assign(new, syntax.call(syntax.name(INSERT), [
            syntax.name(previous), at, atom])), origin)

    def delete(self, target: gast.expr) -> None:
        """``del h``: h is unbound from here on (its value stays where the adjoint reads
        it); ``del xs[i]`` and ``del d[k]``: the item taken out, as ``xs.pop(i)`` takes it
        (an error for anything else than a list or a dict, as in Python)."""
        if isinstance(target, (gast.Tuple, gast.List)):
            for t in target.elts:
                self.delete(t)
            return
        versions = self.versions
        if isinstance(target, gast.Name):
            name = target.id
            if name not in versions.current:
                shown = self.expressions.user_name(name)
                raise self.parsed.error(
                    f"`del {shown}` where '{shown}' is not assigned (on this path, or on one "
                    "that leads here): Python raises an UnboundLocalError", target,
                    "Delete a name only after assigning it.")
            versions.delete([name])
            return
        base = getattr(target, "value", None)
        local = self.parsed.local_names | versions.synthetic
        if not (isinstance(target, gast.Subscript) and isinstance(base, gast.Name)
                and base.id in local):
            raise self.parsed.error(
                "`del` of an attribute, or of an item of something other than a variable "
                "of the function, is not supported", target,
                "Delete an item of a list or dict the function builds (`del xs[i]`), or "
                "build a new value without it.")
        if isinstance(target.slice, gast.Slice):
            shown = self.expressions.user_name(base.id)
            raise self.parsed.error(
                f"`del` of a slice of '{shown}' is not supported", target,
                f"Build the list without the items: `{shown} = {shown}[:i] + {shown}[j:]`.")
        pop = syntax.located(syntax.call(syntax.attribute(syntax.clone(base), "pop"),
                                         [target.slice]), target)
        self.expressions.pop(pop)
