"""The sizes of spreads: which sites normalize writes out item by item, and the checks of
those it wrote out (see ``normalize/spreads.py``).

A spread site normalize left for any size is where the analysis, which knows the value
there, asks for it to be written out (``Respread``, which the pipeline answers by
normalizing again) or refuses, at the user's line:

    first, *rest = t      (site)  t a tuple or list of known length: written out; an array,
                                  or a list whose length only the run knows: left as it is
    g(*xs), g(**d)        a call that receives a differentiated value: written out where
                                  xs's length (d's keys) is known, else refused
    _t1 = xs[0]           (written out for n items)  xs holds exactly n: else refused
    for k in d            (site)  d a dict: its keys, where known (the loop is unrolled),
                                  else KEYS_AT_RUN_TIME (a loop over list(d.keys()))
    for k in d            (unrolled for keys a, b)  d holds exactly those where the loop
                                  starts: else the loop goes through list(d.keys())
    for fn in terms       (a loop's site)  a tuple whose items hold different functions:
                                  unrolled, so that each step calls one it knows
"""

from __future__ import annotations

import gast

from ... import syntax
from ..normalize import KEYS_AT_RUN_TIME, Respread
from .facts import Facts
from .values import (
    Abstract,
    ShapeTuple,
    described,
    element_of,
    holds_closure,
    identified,
    is_sequence,
)


def keys_of(value: Abstract) -> tuple | None:
    """A dict's keys, in order, where they are known here."""
    if value.type is dict and value.kind == "object" and value.items is not None:
        return tuple(k for k, _ in value.items)
    return None


def size_of(value: Abstract, keywords: bool = False) -> int | tuple | None:
    """How many items a value holds (for ``**``, its keys), where that is known here."""
    if keywords:
        if value.type is dict and value.items is not None and all(
                isinstance(k, str) for k, _ in value.items):
            return tuple(k for k, _ in value.items)
        return None
    if is_sequence(value) and value.items is not None:
        return len(value.items)
    if value.type is ShapeTuple and value.ndim is not None:
        return value.ndim
    return None


def loop_over_functions(facts: Facts, atom: gast.expr, site: tuple | None) -> None:
    """A loop over the items of a tuple whose items hold functions that differ (functions
    a caller passed, or nested functions made into values): asked to be unrolled (see
    normalize's ``Loops.unrolled``), so that the function each step calls is known."""
    value = facts.value(atom)
    if site is None or value.type is not tuple or value.items is None or value.closure:
        return
    if _functions(value) and not _functions(element_of(value) or Abstract("none")):
        raise Respread(site, len(value.items))


def _functions(value: Abstract) -> bool:
    """Whether a value is, or holds, a function known when compiling."""
    return (value.kind == "object" and callable(value.value) and identified(value.value)
            and not isinstance(value.value, (str, type))) or holds_closure(value) or any(
        _functions(v) for _, v in value.items or ())


def site(facts: Facts, stmt: gast.Assign, site: int, what: str, needed: int) -> None:
    """The site statement ``_n = len(xs)`` of a starred target (``what`` is "target") or
    of the starred or ``**`` arguments of a nested function's call: written out where
    the size is known; a starred target of an array (or of a list whose length only the
    run knows) is left to run; anything else is refused."""
    atom = stmt.value.args[0]
    value = facts.value(atom)
    if what in ("loop", "view", "mapping"):  # a loop: by position, but a dict by key
        keys = keys_of(value)
        if keys is not None:
            raise Respread(site, keys)
        if what == "view" or value.type is dict and value.kind == "object":
            raise Respread(site, KEYS_AT_RUN_TIME)  # (d.items() of whatever d is)
        if what == "mapping":
            raise facts.parsed.error(
                f"dict(m) or {{**m}} of {described(value)}: its items are copied by key, "
                "from a dict", stmt, "Pass a dict; for pairs, write "
                "`{k: v for k, v in pairs}` or `dict(zip(keys, values))`.")
        return
    size = size_of(value, what == "keywords")
    if size is not None and what == "target" and size < needed:
        raise facts.parsed.error(
            f"not enough values to unpack (expected at least {needed}, got {size}): Python "
            "raises a ValueError", stmt, "Give at most as many names as values.")
    if size is not None:
        raise Respread(site, size)
    if what == "target":
        if (value.kind == "array" and value.ndim != 0) or is_sequence(value):
            return  # its length is known when it runs: unpacked for any length
        raise facts.parsed.error(
            f"unpacking {described(value)} into a starred name: only tuples, lists and "
            "arrays are unpacked here", stmt,
            "Unpack a tuple, a list or an array, or index the items: "
            "`a, rest = xs[0], xs[1:]`.")
    if what == "keywords":
        raise facts.parsed.error(
            f"** of {described(value)} in a call of a nested function: its keys are not "
            "known when compiling", stmt,
            "Pass the arguments by name: `fn(x, scale=s)`, or a dict with string keys "
            "written out.")
    raise facts.parsed.error(
        f"a starred argument of {described(value)} to a nested function: how many "
        "arguments it passes is not known when compiling", stmt,
        "Pass the arguments one by one (`g(xs[0], xs[1])`), or spread a tuple or list of "
        "known length.")


def arguments(facts: Facts, spread: list[gast.expr], keywords: gast.expr | None) -> None:
    """A call's starred arguments (and ``**`` value) that pass a differentiated value:
    the first whose size is known here is written out (``Respread``); the caller refuses
    the call if none is."""
    for node in spread:
        number = facts.spread_arguments.get(node)
        size = size_of(facts.value(node.value))
        if number is not None and size is not None and not _own_spread(facts, node.value):
            raise Respread(number, size)
    if keywords is not None:
        number = facts.spread_arguments.get(keywords)
        keys = size_of(facts.value(keywords), keywords=True)
        if number is not None and keys is not None and not _own_spread(facts, keywords):
            raise Respread(number, keys)


def _own_spread(facts: Facts, atom: gast.expr) -> bool:
    """Is ``atom`` the function's own ``*args`` or ``**kwargs`` (or a version of it)? They
    are passed on item by item where unchanged (``parse``), and refused where changed."""
    args = facts.parsed.node.args
    own = {p.id for p in (args.vararg, args.kwarg) if p is not None}
    if not isinstance(atom, gast.Name) or not own:
        return False
    stem, _, number = atom.id.rpartition("_")
    return atom.id in own or (number.isdigit() and stem in own)


def written(facts: Facts, stmt: gast.stmt, name: str, size: int | tuple) -> None:
    """A spread written out for ``size`` items (or keys) reads them from ``name``: right
    only where ``name`` holds exactly those here (a loop may change how many it holds)."""
    value = facts.values.get(name)
    now = None if value is None else keys_of(value) if isinstance(size, tuple) else \
        size_of(value)
    if now == size:
        return
    shown = f"{len(size)} keys" if isinstance(size, tuple) else f"{size} items"
    raise facts.parsed.error(
        f"a spread (*xs, **d, or a starred name) of {shown} where the value may hold "
        f"{'other keys' if isinstance(size, tuple) else 'another number'} (it changes as a "
        "loop runs, or is not known when compiling)", stmt,
        "Spread a tuple, list or dict whose size stays the same, or pass the items one by "
        "one.")


def unrolled(facts: Facts, name: str, keys: tuple, site: int) -> None:
    """A loop unrolled over ``keys`` of the dict ``name``: right where the dict holds
    exactly those keys, on every path and iteration (``facts`` knows what every name
    holds, joined); else it goes through the list of the keys, made when it starts."""
    value = facts.values.get(name)
    if value is None:  # a global dict: what it holds now
        value = facts.value(syntax.name(name))
    if keys_of(value) != keys:
        raise Respread(site, KEYS_AT_RUN_TIME)
