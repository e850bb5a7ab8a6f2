"""Nested generator functions: a def that yields, as a def that builds the list of what it
yields, where every call of it is consumed at once.

Takes a nested def whose body holds ``yield v`` statements; gives the def that appends each
``v`` to a list and returns it (a bare ``return`` ends the list), which is then inlined where
it is called as any nested function is:

    def squares(n):                 def squares(n):
        for i in range(n):              _items = []
            yield x[i] ** 2   ->        for i in range(n):
                                            _items.append(x[i] ** 2)
                                        return _items

The list holds the values the generator would yield only where nothing runs between one
item and the next that the generator reads: every call must be consumed at once, by
``sum``, ``list``, ``tuple``, ``max``, ``min``, ``sorted``, ``any`` or ``all``, by a
comprehension, or by a for loop that assigns none of the generator's free variables and does
not break (a break would stop a generator early, where the list was built to its end).
Other uses (a generator held in a name, passed on, advanced with ``next``), ``x = yield v``,
``yield from`` and a ``return`` with a value are refused at their line.
"""

from __future__ import annotations

import builtins

import gast

from ... import syntax
from ..parse import Parsed

# builtins that consume an iterable to its end before they return
_CONSUMERS = tuple(getattr(builtins, n) for n in (
    "sum", "list", "tuple", "max", "min", "sorted", "any", "all"))


def is_generator(fn: gast.FunctionDef) -> bool:
    return any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in _own_nodes(fn.body))


def list_builder(parsed: Parsed, fn: gast.FunctionDef, items: str) -> gast.FunctionDef:
    """``fn`` with each ``yield v`` an append to the list ``items``, which it returns."""
    _check_consumers(parsed, fn)
    new = syntax.clone(fn)
    new.body = [syntax.located(syntax.assign(items, syntax.list_([])), fn)] + \
        _appending(parsed, new.body, items) + [syntax.located(syntax.ret(syntax.name(items)),
                                                              fn.body[-1])]
    return new


def _appending(parsed: Parsed, stmts: list[gast.stmt], items: str) -> list[gast.stmt]:
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Yield):
            value = stmt.value.value if stmt.value.value is not None else syntax.const(None)
            stmt = syntax.located(syntax.expr_stmt(syntax.call(syntax.attribute(
                syntax.name(items), "append"), [value])), stmt)
        elif isinstance(stmt, gast.Return):
            if stmt.value is not None:
                raise parsed.error("a generator's return value is not supported", stmt,
                                   "End the generator with a bare 'return'.")
            stmt = syntax.located(syntax.ret(syntax.name(items)), stmt)
        elif not isinstance(stmt, gast.FunctionDef):
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, _appending(parsed, getattr(stmt, field), items))
            for handler in getattr(stmt, "handlers", []):
                handler.body = _appending(parsed, handler.body, items)
        out.append(stmt)
    for node in _own_nodes(out):
        if isinstance(node, gast.YieldFrom):
            raise parsed.error("generators ('yield from') are not supported", node,
                               "Yield the items one by one: for v in it: yield v.")
        if isinstance(node, gast.Yield):  # not a statement of its own: its value is used
            raise parsed.error("a yield whose value is used (x = yield v) is not supported",
                               node, "Write the yield as a statement of its own.")
    return out


def _check_consumers(parsed: Parsed, fn: gast.FunctionDef) -> None:
    """Each use of the generator's name is a call consumed at once (see the module)."""
    parents = {id(c): p for p in gast.walk(parsed.node) for c in gast.iter_child_nodes(p)}
    local = {n.id for n in gast.walk(fn) if isinstance(n, gast.Name) and isinstance(
        n.ctx, (gast.Store, gast.Param))}
    free = {n.id for n in gast.walk(fn) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Load)} - local
    for use in gast.walk(parsed.node):
        if not (isinstance(use, gast.Name) and use.id == fn.name and isinstance(
                use.ctx, gast.Load)):
            continue
        call = parents.get(id(use))
        holder = parents.get(id(call)) if isinstance(call, gast.Call) and \
            call.func is use else None
        if isinstance(holder, gast.comprehension) and holder.iter is call:
            continue
        if isinstance(holder, gast.Call) and holder.args == [call] and not holder.keywords \
                and parsed.resolve(holder.func) in _CONSUMERS:
            continue
        if isinstance(holder, gast.For) and holder.iter is call:
            _check_loop(parsed, holder, fn.name, free)
            continue
        raise parsed.error(
            f"the generator {fn.name}() is followed only where a call of it is consumed at "
            "once (sum, list, tuple, max, min, a comprehension or a for loop)", use,
            f"Consume it where it is called: for v in {fn.name}(...), or "
            f"list({fn.name}(...)).")


def _check_loop(parsed: Parsed, loop: gast.For, name: str, free: set[str]) -> None:
    for node in _own_nodes([loop.target] + loop.body):
        if isinstance(node, gast.Break) and _breaks(loop.body, node):
            raise parsed.error(
                f"'break' in a loop over the generator {name}(): the generator would stop "
                "early, where its items are all made before the loop", node,
                "Collect the items first (items = list(gen(...))) and loop over them.")
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and \
                node.id in free:
            raise parsed.error(
                f"the loop over the generator {name}() assigns '{node.id}', which the "
                "generator reads: it would see the new value from the next item on, where "
                "its items are all made before the loop", node,
                "Give the loop's variable another name.")


def _breaks(body: list[gast.stmt], node: gast.Break) -> bool:
    """Is ``node`` a break of the loop whose body is ``body`` (not of a loop inside it)?"""
    for stmt in body:
        if stmt is node:
            return True
        if isinstance(stmt, (gast.For, gast.While, gast.FunctionDef)):
            continue
        blocks = [getattr(stmt, f, []) for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        if any(_breaks(b, node) for b in blocks if isinstance(b, list)):
            return True
    return False


def _own_nodes(stmts: list[gast.AST]):
    """The nodes of ``stmts``, not those of the functions and lambdas defined in them."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(node))
