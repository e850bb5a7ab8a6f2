"""Spreads: starred targets and starred arguments, written out item by item where the
number of items (or a dict's keys) is known when compiling.

Takes ``first, *rest = xs`` (as an assignment or a for loop's target), ``g(*xs)`` and
``g(**d)``; gives, through the walk, the items read one by one. What ``xs`` holds is the
analysis's to know, not normalize's: each place a value is spread is a *site*, numbered
in the order the walk meets it. A site the pipeline has no size for is written for any
size, and the analysis, which knows the value there, asks for the site to be written out
(``Respread``: the pipeline then normalizes again with the size, ``lengths``):

    first, *rest = xs       _n = len(xs)                    (the site: the analysis asks
                            if _n < 1: raise ValueError      for a tuple's or a list's
                            first = xs[0]                    length; an array's is known
                            rest = [xs[_k] for _k in         at run time only, and stays
                                    range(1, _n)]            so, as Python runs it)
        with 3 items:       first = xs[0]; _t1 = xs[1]; _t2 = xs[2]; rest = [_t1, _t2]

    g(*xs)                  g(*xs)                          (the site: a call that gives
        with 2 items:       _t1 = xs[0]; _t2 = xs[1]; g(_t1, _t2)    a differentiated value)
    g(**d)  with keys a, b: _t1 = d['a']; _t2 = d['b']; g(a=_t1, b=_t2)

A loop's sequence is a site too (``iterables``): where the analysis finds a dict there,
it asks for the dict's keys (``KEYS_AT_RUN_TIME`` where they are not known), and the loop
is unrolled over them, or goes through the list of its keys made when it starts.

A nested function is inlined here, so its starred arguments need their size at once: its
site is ``_n = len(xs)``, where the analysis asks for it (or refuses). A site written out
is checked by the analysis (``written``: the statement that reads the first item, the
spread value and its size): the value holds exactly that many items, or those keys.
"""

from __future__ import annotations

from typing import Any

import gast

from ... import syntax
from .walk import Walk

Size = int | tuple | str  # a number of items, a dict's keys, or KEYS_AT_RUN_TIME

# a loop's site: the dict it goes through has keys known only when the loop runs (or too
# many to unroll the loop for), which it lists then
KEYS_AT_RUN_TIME = "keys at run time"


class Respread(Exception):
    """The analysis asks for site ``site`` to be written out for ``size`` items (or keys)."""

    def __init__(self, site: int, size: Size):
        super().__init__(site, size)
        self.site, self.size = site, size


class Spreads:
    def __init__(self, walk: Walk, expressions: Any, lengths: dict[int, Size]):
        self.walk = walk
        self.parsed, self.namer = walk.parsed, walk.namer
        self.expressions = expressions
        self.lengths = lengths
        self.count = 0
        # a starred argument's node (or a ** argument's value) not written out -> its site
        self.arguments: dict[gast.AST, int] = {}
        # a site statement `_n = len(xs)` -> (site, what it spreads: "target", "arguments"
        # or "keywords", how many items a starred target needs at least)
        self.statements: dict[gast.stmt, tuple[int, str, int]] = {}
        # the first statement of a site written out -> (the spread atom, its size)
        self.written: dict[gast.stmt, tuple[str, Size]] = {}
        # the loops unrolled over a dict's keys: (the dict's name, the keys, the site)
        self.unrolled: list[tuple[str, tuple, int]] = []

    def site(self) -> int:
        self.count += 1
        return self.count - 1

    # --- starred arguments -----------------------------------------------------------------

    def call_arguments(self, args: list[gast.expr]) -> list[gast.expr]:
        """The atoms of a call's positional arguments, a starred one written out item by
        item where its site has a size, else left starred (``arguments``)."""
        out = []
        for a in args:
            if not isinstance(a, gast.Starred):
                self.expressions.arguments.update(id(n) for n in _given(a))
                out.append(self.expressions.atom(a))
                continue
            atom = self.expressions.atom(a.value)
            site = self.site()
            size = self.lengths.get(site)
            if size is None:
                starred = syntax.located(syntax.starred(atom), a)
                self.arguments[starred] = site
                out.append(starred)
            else:
                out.extend(self.items(atom, list(range(size)), a, size))
        return out

    def call_keywords(self, keywords: list[gast.keyword]) -> list[tuple[str | None, Any]]:
        """The atoms of a call's keyword arguments, ``**d`` written out key by key where its
        site has the keys, else left as it is (``arguments``, by its value's node)."""
        out = []
        for k in keywords:
            self.expressions.arguments.update(id(n) for n in _given(k.value))
            atom = self.expressions.atom(k.value)
            if k.arg is not None:
                out.append((k.arg, atom))
                continue
            site = self.site()
            keys = self.lengths.get(site)
            if keys is None:
                self.arguments[atom] = site
                out.append((None, atom))
            else:
                out.extend(zip(keys, self.items(atom, list(keys), k.value, keys),
                               strict=True))
        return out

    def items(self, atom: gast.expr, keys: list, origin: gast.AST, size: Size
              ) -> list[gast.expr]:
        """``atom[k]`` for each key, as atoms; the first read is where the analysis checks
        that the value holds exactly ``size`` items, or those keys (``written``)."""
        mark = len(self.walk.out)
        found = [self.read(atom, k, origin) for k in keys]
        if isinstance(atom, gast.Name) and len(self.walk.out) > mark:
            self.written[self.walk.out[mark]] = (atom.id, size)
        return found

    def inlined_arguments(self, call: gast.Call) -> gast.Call | None:
        """A call of a nested function with its starred and ** arguments written out, or
        None where one's size is not known yet (its site statement is emitted: the
        analysis asks for it, or refuses)."""
        args, keywords = [], []
        for a in call.args:
            if not isinstance(a, gast.Starred):
                args.append(a)
                continue
            atom = self.expressions.atom(a.value)
            size, _ = self.size_at(atom, "arguments", a)
            if size is None:
                return None
            args.extend(self.items(atom, list(range(size)), a, size))
        for k in call.keywords:
            if k.arg is not None:
                keywords.append(k)
                continue
            atom = self.expressions.atom(k.value)
            keys, _ = self.size_at(atom, "keywords", k.value)
            if keys is None:
                return None
            items = self.items(atom, list(keys), k.value, keys)
            keywords.extend(syntax.located(syntax.keyword(key, item), k.value)
                            for key, item in zip(keys, items, strict=True))
        return syntax.replace(call, args=args, keywords=keywords)

    def size_at(self, atom: gast.expr, what: str, origin: gast.AST, needed: int = 0
                ) -> tuple[Size | None, gast.Name | None]:
        """The size of a new site; or None, and the name its site statement (emitted here)
        binds to the length."""
        site = self.site()
        size = self.lengths.get(site)
        if size is not None:
            return size, None
        length = self.namer.temp()
        self.walk.emit(syntax.assign(length, syntax.call(syntax.name("len"), [
            syntax.clone(atom)])), origin)
        self.statements[self.walk.out[-1]] = (site, what, needed)
        return None, syntax.name(length)

    def check_keys(self, atom: gast.expr, keys: tuple, site: int) -> None:
        """A loop unrolled for a dict's ``keys`` at ``site``: the analysis checks, once it
        knows what every name holds, that the dict there holds exactly those keys
        (``unrolled``), and asks for the loop over the keys listed when it runs otherwise
        (a dict that grows in a loop)."""
        self.unrolled.append((atom.id, keys, site))

    # --- starred targets -------------------------------------------------------------------

    def unpack(self, target: gast.Tuple | gast.List, value: gast.expr, bind: Any) -> None:
        """``a, *rest, b = value``: a and b bound to the first and last items, rest to a
        list of those between, as Python binds them; ``bind(target, value)`` stores each."""
        star = next(k for k, t in enumerate(target.elts) if isinstance(t, gast.Starred))
        before, after = target.elts[:star], target.elts[star + 1:]
        needed = len(before) + len(after)
        if isinstance(value, (gast.Tuple, gast.List)) and not any(
                isinstance(v, gast.Starred) for v in value.elts):
            self.check_count(len(value.elts), needed, value)
            atoms = [self.expressions.atom(v) for v in value.elts]  # all, then the stores
            middle = atoms[len(before):len(atoms) - len(after)]
            self.bind_all(before, atoms[:len(before)], target.elts[star], middle, after,
                          atoms[len(atoms) - len(after):], bind)
            return
        whole = self.expressions.atom(value)
        size, count = self.size_at(whole, "target", target, needed)
        if size is not None:
            mark = len(self.walk.out)
            atoms = [self.read(whole, k, target) for k in range(size)]
            if isinstance(whole, gast.Name) and len(self.walk.out) > mark:
                self.written[self.walk.out[mark]] = (whole.id, size)
            middle = atoms[len(before):size - len(after)]
            self.bind_all(before, atoms[:len(before)], target.elts[star], middle, after,
                          atoms[size - len(after):], bind)
            return
        if needed:  # fewer items than names: Python raises
            short = self.expressions.operation(syntax.compare(count, ["Lt"], [
                syntax.const(needed)]), temp=True)
            self.walk.branch(target, short, [syntax.located(syntax.raise_(
                "ValueError", f"not enough values to unpack (expected at least {needed})"),
                target)], [])
        firsts = [self.read(whole, k, target) for k in range(len(before))]
        end = self.expressions.operation(syntax.binop(count, "Sub", syntax.const(
            len(after))), temp=True) if after else count
        index = self.namer.fresh("k")  # the comprehension names it _k
        rest = self.expressions.atom(syntax.located(syntax.list_comp(
            syntax.subscript(syntax.clone(whole), syntax.name(index)),
            syntax.name(index, store=True),
            syntax.call(syntax.name("range"), [syntax.const(len(before)), end])), target))
        lasts = []
        for j in range(len(after)):
            at = self.expressions.operation(syntax.binop(count, "Sub", syntax.const(
                len(after) - j)), temp=True)
            lasts.append(self.read(whole, at, target))
        for t, item in zip(before, firsts, strict=True):
            bind(t, item)
        bind(target.elts[star].value, rest)
        for t, item in zip(after, lasts, strict=True):
            bind(t, item)

    def read(self, whole: gast.expr, k: Any, origin: gast.AST) -> gast.expr:
        """``whole[k]`` (k a key, or an atom), as a new temporary."""
        key = k if isinstance(k, gast.AST) else syntax.const(k)
        return self.expressions.operation(syntax.located(syntax.subscript(
            syntax.clone(whole), key), origin), temp=True)

    def bind_all(self, before: list, firsts: list, star: gast.Starred, middle: list,
                 after: list, lasts: list, bind: Any) -> None:
        for t, item in zip(before, firsts, strict=True):
            bind(t, item)
        bind(star.value, syntax.located(syntax.list_(middle), star))  # a list, as Python's
        for t, item in zip(after, lasts, strict=True):
            bind(t, item)

    def check_count(self, size: int, needed: int, origin: gast.AST) -> None:
        if size < needed:
            raise self.parsed.error(
                f"not enough values to unpack (expected at least {needed}, got {size}): "
                "Python raises a ValueError", origin, "Give at most as many names as values.")


def _given(argument: gast.expr) -> list[gast.expr]:
    """What a call is given for itself alone: the argument, and the items of a tuple or
    list written out in it (``each((g, np.sin), x)``)."""
    items = argument.elts if isinstance(argument, (gast.Tuple, gast.List)) else []
    return [argument, *items]
