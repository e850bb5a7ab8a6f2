"""Calls written as what they stand for: builtins that build containers, ``np.r_``, ``np.c_``,
``np.einsum`` in its interleaved form, the matrix norms of the singular values.

Takes a call of user-level Python (or an index of ``np.r_``/``np.c_``); gives the
expression it stands for, itself user-level, which ``Expressions.operation`` then
normalizes in its place, or None (``builtin_form``) for a call that stands for itself.
Nothing is emitted here:

    dict(a=x, b=y)       {'a': x, 'b': y}
    dict(m, n=v)         {**m, 'n': v}          (expressions.py copies m's items)
    list(zip(xs, ys))    [(_a0, _a1) for _a0, _a1 in zip(xs, ys)]
    max([a, b, c])       max(max(a, b), c)
    np.r_[a, 0:3]        np.concatenate((np.atleast_1d(a), np.arange(0, 3, 1)))
    np.einsum(a, [0, 1], b, [1, 2])       np.einsum('ab,bc->ac', a, b)
    np.linalg.norm(a, 'nuc')              np.sum(np.linalg.svd(a, compute_uv=False), axis=-1)

A directive (``np.r_['0,2', ...]``) or a complex step (``0:1:5j``) is refused.
"""

from __future__ import annotations

from typing import Any

import gast
import numpy as np

from ... import syntax
from .walk import Walk


class Forms:
    def __init__(self, walk: Walk, expressions: Any):
        self.parsed = walk.parsed
        self.is_static = expressions.is_static
        self.expressions = expressions
        self.calls: set[gast.Dict] = set()  # displays that stand for dict(...) calls

    def is_concatenation(self, node: gast.expr) -> bool:
        """``np.r_[...]`` or ``np.c_[...]``."""
        return isinstance(node, gast.Subscript) and self.is_static(node.value) and \
            _one_of(self.parsed.resolve(node.value), np.r_, np.c_)

    def concatenation(self, node: gast.Subscript) -> gast.Call:
        """``np.r_[a, 0:3, b]`` and ``np.c_[a, b]`` as the concatenations they make:

            np.r_[a, 0:3, b]   np.concatenate((np.atleast_1d(a), np.arange(0, 3, 1),
                                               np.atleast_1d(b)))
            np.c_[a, b]        np.concatenate((np.column_stack((a,)),
                                               np.column_stack((b,))), axis=-1)

        (``column_stack`` of one array makes a 1-d array a column and leaves others as
        they are, as ``np.c_`` does). Directives (``np.r_['0,2', ...]``) and complex steps
        (``0:1:5j``, a linspace) are refused."""
        rows = self.parsed.resolve(node.value) is np.r_
        path = syntax.dotted_name(node.value)
        module = path.rpartition(".")[0]  # np.r_ -> np, numpy.r_ -> numpy
        if not module or self.parsed.resolve(syntax.dotted_expr(module)) is not np:
            module = next((k for k, v in self.parsed.globals.items() if v is np), None)
        if module is None:
            raise self.parsed.error(f"{path}[...] in a module that does not import numpy "
                                    "as a name", node, "Write np.concatenate directly.")
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        parts = []
        for item in items:
            if syntax.is_const(item) and isinstance(item.value, str) or isinstance(
                    item, gast.Slice) and item.step is not None and syntax.is_const(
                    item.step) and isinstance(item.step.value, complex):
                raise self.parsed.error(
                    f"{'np.r_' if rows else 'np.c_'}[...] with a directive or a complex "
                    "step is not supported", item, "Write np.concatenate, np.stack or "
                    "np.linspace directly.")
            if isinstance(item, gast.Slice):
                parts.append(syntax.located(syntax.call(f"{module}.arange", [
                    item.lower or syntax.const(0), item.upper,
                    item.step or syntax.const(1)]), item))
            elif rows:
                parts.append(syntax.located(syntax.call(f"{module}.atleast_1d", [item]), item))
            else:
                parts.append(syntax.located(syntax.call(f"{module}.column_stack", [
                    syntax.tuple_([item])]), item))
        keywords = [] if rows else [("axis", syntax.const(-1))]
        return syntax.located(syntax.call(f"{module}.concatenate", [syntax.tuple_(parts)],
                                          keywords), node)

    def builtin_form(self, call: gast.Call) -> gast.expr | None:
        """Calls of builtins that build containers, as the displays and comprehensions they
        stand for (None for any other call):

            dict(a=x, b=y)       {'a': x, 'b': y}
            dict(m, n=v)         {**m, 'n': v}           dict(zip(ks, vs))  {k: v for ...}
            tuple([a, b])        (a, b)                  list((a, b))      [a, b]
            list(v for v in xs)  [v for v in xs]         max([a, b, c])    max(max(a, b), c)
            list(gen(n))         gen(n)  (a nested generator function: it makes a list)
            map(f, xs, ys)       [f(_a0, _a1) for _a0, _a1 in zip(xs, ys)]
            list(zip(xs, ys))    [(_a0, _a1) for _a0, _a1 in zip(xs, ys)]"""
        if not self.is_static(call.func) or any(isinstance(a, gast.Starred)
                                                for a in call.args):
            return None
        kind = self.parsed.resolve(call.func)
        args, keywords = call.args, call.keywords
        new = None
        if kind is np.einsum:
            new = self.einsum(call)
        elif kind is np.linalg.norm:
            new = self.singular_norm(call)
        elif kind is dict and len(args) <= 1:
            new = self.dict_of(args[0] if args else None, keywords)
        elif _one_of(kind, tuple, list) and len(args) == 1 and not keywords:
            (arg,) = args
            if isinstance(arg, gast.Call) and self.is_static(arg.func) and \
                    _one_of(self.parsed.resolve(arg.func), map, zip) and not arg.keywords:
                arg = self.mapped(arg)
            if isinstance(arg, (gast.Tuple, gast.List, gast.ListComp)):
                elts = getattr(arg, "elts", None)
                if kind is tuple and elts is not None:
                    new = syntax.tuple_(elts)
                elif kind is list:
                    new = syntax.list_(elts) if elts is not None else arg
            elif isinstance(arg, gast.GeneratorExp) and kind is list:
                new = syntax.list_comp(arg.elt, None, generators=arg.generators)
            elif kind is list and isinstance(arg, gast.Call) and isinstance(
                    arg.func, gast.Name) and arg.func.id in self.expressions.functions.generators:
                new = arg  # a nested generator's call: a new list of what it yields
        elif kind is map and len(args) >= 2 and not keywords:
            new = self.mapped(call)
        elif _one_of(kind, max, min) and not keywords and (len(args) > 2 or len(args) == 1 and (
                isinstance(args[0], (gast.Tuple, gast.List)) and len(args[0].elts) >= 2)):
            items = args[0].elts if len(args) == 1 else args
            new = items[0]  # max(a, b, c) is max(max(a, b), c): the first largest wins
            for item in items[1:]:
                new = syntax.located(syntax.call(syntax.clone(call.func), [new, item]), item)
        return None if new is None else syntax.located(new, call)

    def dict_of(self, source: gast.expr | None, keywords: list[gast.keyword]) -> gast.expr:
        """``dict(source, **keywords)`` as the display it stands for: the items of a
        mapping (or of a display of pairs, or of a zip of keys and values), then the
        keywords (a ``**`` among them spread too)."""
        keys: list[gast.expr | None] = []
        values: list[gast.expr] = []
        if source is None:
            pass
        elif isinstance(source, (gast.Tuple, gast.List)) and all(
                isinstance(e, gast.Tuple) and len(e.elts) == 2 for e in source.elts):
            keys += [e.elts[0] for e in source.elts]  # dict([('a', x), ('b', y)])
            values += [e.elts[1] for e in source.elts]
        elif isinstance(source, gast.Call) and self.is_static(source.func) and \
                self.parsed.resolve(source.func) is zip and len(source.args) == 2 and \
                not source.keywords and not any(isinstance(a, gast.Starred)
                                                for a in source.args):
            key, value = syntax.name("_key"), syntax.name("_value")  # dict(zip(ks, vs))
            keys.append(None)
            values.append(syntax.located(syntax.dict_comp(
                key, value, syntax.tuple_([syntax.name(key.id, store=True),
                                           syntax.name(value.id, store=True)], store=True),
                source), source))
        else:  # a mapping: its items, in its order
            keys.append(None)
            values.append(source)
        for k in keywords:
            keys.append(None if k.arg is None else syntax.const(k.arg))
            values.append(k.value)
        display = syntax.dict_(keys, values)
        self.calls.add(display)
        return display

    def einsum(self, call: gast.Call) -> gast.Call | None:
        """``np.einsum(a, [0, 1], b, [1, 2], [0, 2])``, the interleaved form, with its
        subscripts written as a string: ``np.einsum('ab,bc->ac', a, b)`` (letters in the
        order of the integers; without an output sublist, the output is the labels found
        once, in increasing order, after ``...`` if any). None for the string form, or
        sublists that are not literals."""
        args = call.args
        if not args or syntax.is_const(args[0]) and isinstance(args[0].value, str):
            return None
        sublists = [self.sublist(a) for a in args[1::2]]
        out = self.sublist(args[-1]) if len(args) % 2 else None
        if len(args) < 2 or any(s is None for s in sublists) or (len(args) % 2 and out is None):
            return None
        if any(k is not Ellipsis and not 0 <= k < len(_LETTERS) for s in sublists for k in s):
            return None
        if out is None:
            labels = [k for s in sublists for k in s if k is not Ellipsis]
            once = sorted(k for k in set(labels) if labels.count(k) == 1)
            out = ([Ellipsis] if any(Ellipsis in s for s in sublists) else []) + once
        spelled = ",".join(_spelled(s) for s in sublists) + "->" + _spelled(out)
        operands = args[0:len(sublists) * 2:2]
        return syntax.located(syntax.call(syntax.clone(call.func), [
            syntax.located(syntax.const(spelled), call), *operands], [
            (k.arg, k.value) for k in call.keywords]), call)

    def singular_norm(self, call: gast.Call) -> gast.Call | None:
        """A matrix norm of the singular values, as NumPy computes it:

            np.linalg.norm(a, 'nuc')               np.sum(np.linalg.svd(a, compute_uv=False),
                                                          axis=-1)
            np.linalg.norm(a, 2, axis=(0, 1))      np.max(np.linalg.svd(np.moveaxis(a, (0, 1),
                                                   (-2, -1)), compute_uv=False), axis=-1)

        (ord=-2: np.min). ord=2 and -2 only with a literal pair of axes, which makes the norm
        a matrix's; None for any other call."""
        named = {k.arg: k.value for k in call.keywords}
        if any(k not in ("ord", "axis") for k in named) or len(call.args) > 3 or (
                len(call.args) > 1 and "ord" in named) or (len(call.args) > 2 and "axis" in named):
            return None
        order = call.args[1] if len(call.args) > 1 else named.get("ord")
        axis = call.args[2] if len(call.args) > 2 else named.get("axis")
        if isinstance(order, gast.UnaryOp) and isinstance(order.op, gast.USub) and \
                syntax.is_const(order.operand) and type(order.operand.value) is int:
            order = syntax.const(-order.operand.value)  # ord=-2
        if not call.args or order is None or not syntax.is_const(order):
            return None
        pair = syntax.const_value(axis) if axis is not None and syntax.is_static_tuple(
            axis) else None
        if axis is not None and not (isinstance(pair, tuple) and len(pair) == 2):
            return None
        reduce = {"nuc": "sum", 2: "max", -2: "min"}.get(order.value) if type(
            order.value) in (str, int) else None
        if reduce is None or reduce != "sum" and pair is None:
            return None
        module = syntax.dotted_name(call.func).rpartition(".")[0].rpartition(".")[0]
        if not module or self.parsed.resolve(syntax.dotted_expr(module)) is not np:
            return None  # (np.linalg.norm written another way: left as it is)
        matrix = call.args[0]
        if pair is not None:
            matrix = syntax.call(f"{module}.moveaxis", [matrix, syntax.clone(axis),
                                                        syntax.const((-2, -1))])
        values = syntax.call(f"{module}.linalg.svd", [matrix],
                             [("compute_uv", syntax.const(False))])
        return syntax.located(syntax.call(f"{module}.{reduce}", [values],
                                          [("axis", syntax.const(-1))]), call)

    def sublist(self, node: gast.expr) -> list | None:
        """The labels of an einsum sublist written as a literal list or tuple of ints and
        ``...`` (or ``Ellipsis``); None for anything else."""
        if not isinstance(node, (gast.List, gast.Tuple)):
            return None
        labels = []
        for e in node.elts:
            if syntax.is_const(e) and (e.value is Ellipsis or type(e.value) is int):
                labels.append(e.value)
            elif self.is_static(e) and self.parsed.resolve(e) is Ellipsis:
                labels.append(Ellipsis)
            else:
                return None
        return labels

    def mapped(self, call: gast.Call) -> gast.ListComp | gast.Call:
        """``map(f, xs, ...)`` or ``zip(xs, ...)`` as a list comprehension."""
        is_map = self.parsed.resolve(call.func) is map
        sequences = call.args[1:] if is_map else call.args
        if not sequences or any(isinstance(s, gast.Starred) for s in sequences):
            return call  # zip(*xs): as many sequences as xs holds, not known here
        names = [f"_a{k}" for k in range(len(sequences))]
        items = [syntax.name(n) for n in names]
        elt = syntax.call(syntax.clone(call.args[0]), items) if is_map else syntax.tuple_(items)
        target = syntax.name(names[0], store=True) if len(names) == 1 else syntax.tuple_(
            [syntax.name(n, store=True) for n in names], store=True)
        source = sequences[0] if len(sequences) == 1 else syntax.call(
            syntax.name("zip"), sequences)
        return syntax.located(syntax.list_comp(syntax.located(elt, call), target, source),
                              call)


def _one_of(value: object, *options: object) -> bool:
    """Is ``value`` one of ``options`` (by identity: ``==`` of an array with a function or
    with ``np.r_`` compares, or iterates, element by element)?"""
    return any(value is option for option in options)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # NumPy's labels 0..51


def _spelled(labels: list) -> str:
    return "".join("..." if k is Ellipsis else _LETTERS[k] for k in labels)
