"""Loops: ``for`` over a range with the items indexed, ``while True`` with its test first.

Takes a user-level ``for`` or ``while`` statement; gives, through the walk, the loop in the
two forms normalized code has: ``for <name> in <range>:`` and ``while True:`` whose body
starts with ``if <atom>: break``. A ``for`` loop over a sequence, ``enumerate`` (with its
start), ``zip`` (``strict=True`` checks the lengths first) or ``reversed`` becomes a loop
over a range with the items indexed, the sequences evaluated once, before the loop, as
Python does (``iterables`` makes the range and reads the items):

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

A loop over a fixed sequence of functions is unrolled, and so is one over a dict whose keys
are known when compiling (``for k in d``, ``enumerate(d)``, ``d.items()``, ``d.values()``,
``d.keys()``: in the order Python goes through them); over a dict whose keys are known only
when it runs, it is a loop over the list of its keys, made before the loop.

``break`` and ``continue`` become flags: the rest of the body runs under ``if not _skip``,
and ``if _break: break`` ends the loop before the next iteration. The ``else`` of a
``for`` or ``while`` loop runs after it where no ``break`` ended it: under ``if not
_break`` (the loop's own flag), or unguarded where the body has no ``break``:

    for v in xs:                      for v in xs:  (its break sets _break)
        if v > m: break       ->          ...
    else:                             if not _break:
        s = s * 2.0                       s = s * 2.0

The variables the body assigns get loop versions (see versions.py). Loops over iterators
(``map``, ``iter``) are refused.
"""

from __future__ import annotations

import gast

from ... import syntax
from .assignments import is_append
from .expressions import Expressions, is_pop
from .iterables import Iterables, Unrolled
from .walk import Walk

_VIEWS = ("items", "values", "keys")  # a dict's views, looped over by key
_UNROLLED = 16  # the most functions a loop over functions is unrolled for


class Loops:
    def __init__(self, walk: Walk, expressions: Expressions):
        self.walk = walk
        self.parsed, self.namer, self.versions = walk.parsed, walk.namer, walk.versions
        self.emit = walk.emit
        self.atom, self.operation = expressions.atom, expressions.operation
        self.is_static = expressions.is_static
        self.default_variables = expressions.functions.default_variables
        self.nonlocal_variables = expressions.functions.nonlocal_variables
        self.objects = expressions.objects
        self.expressions = expressions
        self.iterables = Iterables(walk, expressions)  # the range and items of a for loop
        # the break flag of a loop split from its else (see split_else), by the loop
        self.break_flags: dict[gast.stmt, str] = {}
        # `n = len(xs)` of a loop over xs's items -> the loop's site (``unrolled``)
        self.sites: dict[gast.stmt, tuple] = {}

    def for_loop(self, stmt: gast.For) -> None:
        if stmt.orelse:
            for s in self.split_else(stmt):
                self.walk.statement(s)
            return
        if self.over_functions(stmt) or self.unrolled(stmt):
            return
        loop, stmt = stmt, self.over_dict_views(stmt)
        before = set(self.iterables.iterations)
        indexed = self.iterables.indexed(stmt, not _jumps(stmt.body, (gast.Break,
                                                                      gast.Continue)))
        if isinstance(indexed, Unrolled):
            self.unroll(stmt, indexed)
            return
        sequence_range, index_target, prelude = indexed
        if not isinstance(loop.iter, gast.Call) and not _jumps(loop.body, (
                gast.Break, gast.Continue)) and hasattr(loop, "lineno"):  # (a user's loop)
            for start in self.iterables.iterations - before:  # the analysis may ask to
                self.sites[start] = loop_site(loop)              # unroll it (unrolled)
        if not isinstance(index_target, gast.Name):
            raise self.parsed.error("only a name, or (index, item) with enumerate, or a tuple "
                                    "with zip, can be the target of a for loop", stmt.target,
                                    "Unpack the item inside the loop body.")
        carried = self.loop_carried(stmt.body + prelude, index_target.id)
        loop_var = index_target.id
        before = self.versions.current.get(loop_var)
        # (the loop variable of an inlined function's loop: a local of the function, renamed)
        local = loop_var in self.parsed.local_names or loop_var in self.versions.synthetic
        version = self.versions.define(loop_var) if local else loop_var
        if local:  # after a loop that ran zero times, the variable keeps its old value
            kept = syntax.name(before) if before else syntax.const(None)
            binding = syntax.assign(version, kept)
            if before is None:
                self.versions.placeholders.add(binding)
            self.walk.out.append(binding)
        body = self.loop_body(prelude, stmt.body, carried, loop)
        self.emit(syntax.for_(syntax.name(version, store=True), sequence_range, body), stmt)

    def over_functions(self, stmt: gast.For) -> bool:
        """A loop over a fixed sequence that holds functions (a module-level tuple, or a
        tuple or list written out of names from outside, nested functions and lambdas),
        with or without enumerate, is unrolled, so that each call knows the function it
        calls (a nested function's or a lambda's is inlined):

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
        functions = self.expressions.functions
        made = [e for e in getattr(iterable, "elts", ()) if isinstance(e, gast.Lambda) or (
            isinstance(e, gast.Name) and e.id in functions.local_functions)]
        if isinstance(iterable, (gast.Tuple, gast.List)) and iterable.elts and all(
                self.is_static(e) or e in made for e in iterable.elts) and (
                not made or isinstance(target, gast.Name)):
            items = list(iterable.elts)
            values = [len if e in made else self.parsed.resolve(e) for e in items]
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
            if isinstance(item, gast.Name) and item.id in functions.local_functions:
                # a nested function: calls of the loop's name are calls of it, inlined
                functions.local_functions[target.id] = functions.local_functions[item.id]
                functions.defaults[target.id] = functions.defaults[item.id]
            else:
                if isinstance(target, gast.Name) and not isinstance(item, gast.Lambda):
                    functions.local_functions.pop(target.id, None)  # (an earlier item's)
                self.walk.statement(syntax.located(syntax.assign(target, item), target))
            for s in stmt.body:
                self.walk.statement(syntax.clone(s))
        return True

    def unrolled(self, stmt: gast.For) -> bool:
        """A loop over a tuple whose items hold different functions (``for name, fn in
        terms:`` of ``*terms`` given ``("h", harmonic), ("r", repulsion)``): the analysis,
        which knows the tuple, asks for it to be unrolled (``Respread`` with the loop's
        site, ``loop_site``, and the tuple's length), so that each step calls a function
        it knows. The tuple is evaluated once; each step reads its item::

            for name, fn in terms:        name, fn = terms[0]
                e = e + fn(x)       ->    e = e + fn(x)
                                          name, fn = terms[1]
                                          e = e + fn(x)"""
        size = self.walk.lengths.get(loop_site(stmt)) if hasattr(stmt, "lineno") else None
        if size is None:  # (a loop the desugaring writes is not one the analysis names)
            return False
        sequence = self.atom(stmt.iter)
        for k in range(size):
            item = syntax.located(syntax.subscript(syntax.clone(sequence), syntax.const(k)),
                                  stmt.iter)
            self.walk.statement(syntax.located(syntax.assign(
                syntax.clone(stmt.target), item), stmt.target))
            for s in stmt.body:
                self.walk.statement(syntax.clone(s))
        return True

    def unroll(self, stmt: gast.For, unrolled: Unrolled) -> None:
        """A loop over a dict's keys known when compiling, unrolled: each iteration binds
        the loop's target to the key (a name of the desugaring, as a comprehension's, is
        replaced by the key), then runs a copy of the body, whose own names of the
        desugaring are new in each copy:

            for k in d:                    k = 'a'
                s = s + d[k] * w     ->    s = s + d[k] * w
                                           k = 'b'
                                           s = s + d[k] * w"""
        local = self.parsed.local_names | self.versions.synthetic
        for n, bindings in enumerate(unrolled.iterations):
            keys: dict[str, gast.expr] = {}  # a desugaring's name -> the key it stands for
            stmts = []
            for target, value in bindings:
                value = syntax.rename(syntax.clone(value), keys)
                if isinstance(target, gast.Name) and target.id not in local and \
                        syntax.is_const(value):
                    keys[target.id] = value
                else:
                    stmts.append(syntax.located(syntax.assign(syntax.clone(target), value),
                                                target))
            stmts += [syntax.rename(syntax.clone(s), keys) for s in stmt.body]
            if n:
                stmts = _renamed_temporaries(stmts, local, self.namer)
            for s in stmts:
                self.walk.statement(s)

    def over_dict_views(self, stmt: gast.For) -> gast.For:
        """``d.items()``, ``d.values()`` and ``d.keys()`` (alone, or inside enumerate or
        zip): a loop over the keys, with each item read by key; unrolled where the keys are
        known when compiling, else over the list of the keys, made before the loop
        (``Iterables.keys``):

            for k, v in d.items():          for _k in d:    _t1 = d.keys()
                s = s + v * w[k]     ->         k, v = _k, d[_k]    _t2 = list(_t1)
                                                s = s + v * w[k]    for _k in _t2: ..."""
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
            # the dict, evaluated once, before the loop, which goes through its keys
            owner = syntax.located(self.atom(found.func.value), call)
            self.iterables.views.add(owner)
            key = syntax.name(self.namer.fresh("_k"))
            new_args.append(owner)
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
            for s in self.split_else(stmt):
                self.walk.statement(s)
            return
        stop = syntax.located(syntax.if_(syntax.not_(stmt.test), [syntax.break_()], []),
                              stmt.test)
        carried = self.loop_carried([stop] + stmt.body, None)  # (k := k + 1) in the test
        body = self.loop_body([stop], stmt.body, carried, stmt)
        self.emit(syntax.while_(syntax.const(True), body), stmt)

    def split_else(self, loop: gast.For | gast.While) -> list[gast.stmt]:
        """A loop with an ``else`` as the loop without it, then the ``else`` block, which
        runs where no ``break`` of the loop's own ended it: under ``if not _break``, the
        flag its breaks set (``guard_jumps`` makes it under the name given here)."""
        bare = syntax.replace(loop, orelse=[])
        if not _jumps(loop.body, (gast.Break,)):
            return [bare] + loop.orelse
        flag = self.namer.fresh("_break")
        self.break_flags[bare] = flag
        return [bare, syntax.if_(syntax.not_(syntax.name(flag)), loop.orelse, [])]

    def split_elses(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        """``split_else`` of each loop with an ``else`` in ``stmts`` and in the ifs there,
        before the enclosing loop's jumps are guarded: a ``break`` or ``continue`` in that
        ``else`` is the enclosing loop's."""
        out = []
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)) and s.orelse:
                out.extend(self.split_else(s))
            elif isinstance(s, gast.If):
                out.append(syntax.replace(s, body=self.split_elses(s.body),
                                          orelse=self.split_elses(s.orelse)))
            else:
                out.append(s)
        return out

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
        written |= self.expressions.outputs.written(body)  # out=y, np.add.at(y, ...)
        written |= self.objects.variables(body)  # attributes set there, or by a method
        written |= self.default_variables(body)  # defaults of the defs there
        written |= self.nonlocal_variables(body) & names  # what calls there rebind
        written.discard(loop_var)
        return sorted(written)

    def loop_body(self, head: list[gast.stmt], body: list[gast.stmt], carried: list[str],
                  loop: gast.stmt) -> list[gast.stmt]:
        """A loop body in ANF: loop versions copied in at the start and out at the end,
        ``break`` and ``continue`` turned into flags; ``head`` (the item of a for loop, the
        test of a while loop) runs first in each iteration."""
        prefix, body = self.guard_jumps(self.split_elses(body), loop)
        loop_versions, before = self.versions.enter_loop(carried)
        self.walk.out.extend(before)
        start = self.versions.start_iteration(loop_versions)
        # a variable the body deletes may be unbound when an iteration starts, and after
        # the loop: reading it there is refused (it is assigned again first, or not read)
        deleted = _deleted(body)
        self.versions.delete(deleted)
        self.objects.loop_depth += 1
        try:
            walked = self.walk.block(prefix + head + body)
        finally:
            self.objects.loop_depth -= 1
        end = self.versions.end_iteration(loop_versions)
        self.versions.delete(deleted)
        return start + walked + end

    def guard_jumps(self, body: list[gast.stmt], loop: gast.stmt
                    ) -> tuple[list[gast.stmt], list[gast.stmt]]:
        """``break``/``continue`` -> flags: the rest of the body runs under ``if not _skip``
        and ``if _break: break`` stops the loop before the next iteration. Flags and guards
        are not the user's code: they have no source position."""
        has_break = _jumps(body, (gast.Break,))
        if not has_break and not _jumps(body, (gast.Continue,)):
            return [], body
        skip = self.namer.fresh("_skip")
        stop = (self.break_flags.get(loop) or self.namer.fresh("_break")) if has_break \
            else None
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



def _root(node: gast.expr) -> str | None:
    """``y`` of ``y``, ``y.T`` and ``y[i]``: the variable a write through them makes a new
    version of (see ``Assignments.through_view``)."""
    if isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None



def _changed_by_method(body: list[gast.stmt], names: frozenset[str]) -> set[str]:
    """Local names that ``xs.append(v)``, ``xs.insert(i, v)`` or ``xs.pop(...)`` in
    ``body`` give a new version (see ``Assignments.append``, ``Expressions.pop``)."""
    return {n.func.value.id for n in gast.walk(syntax.module(body))
            if isinstance(n, gast.Call) and (
                is_append(n, names) or is_append(n, names, "insert") or is_pop(n, names))}


def _deleted(body: list[gast.stmt]) -> set[str]:
    """The names ``del`` statements in ``body`` unbind (not those of nested functions)."""
    found, todo = set(), list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            continue
        if isinstance(node, gast.Delete):
            found |= {n.id for t in node.targets for n in gast.walk(t)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Del)}
        todo.extend(gast.iter_child_nodes(node))
    return found


def _renamed_temporaries(stmts: list[gast.stmt], local: frozenset[str] | set[str],
                         namer) -> list[gast.stmt]:
    """``stmts`` (copies) with the names of the desugaring they assign (a comprehension's
    names, a dict view's key) renamed anew: each is assigned once."""
    stored = {n.id for s in stmts for n in gast.walk(s)
              if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
              and n.id not in local}
    renames = {name: namer.fresh(name) for name in sorted(stored)}
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id in renames:
                n.id = renames[n.id]
    return stmts


def loop_site(loop: gast.For) -> tuple:
    """How the analysis names a loop it asks to be unrolled: by its place in the source."""
    return ("loop", loop.lineno, loop.col_offset)


def _jumps(body: list[gast.stmt], kinds: tuple) -> bool:
    """Does ``body`` break or continue its own loop (not a nested one)?"""
    for stmt in body:
        if isinstance(stmt, kinds):
            return True
        if isinstance(stmt, gast.If) and (_jumps(stmt.body, kinds) or _jumps(stmt.orelse, kinds)):
            return True
    return False
