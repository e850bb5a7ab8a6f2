"""Batched tangents: forward mode along many directions in one pass.

The tangent pass (tangent.py) run with ``batched=True`` gives every tangent a leading axis:
the tangent of a value of shape ``s`` has shape ``(batch,) + s``, one direction per row, and
``batch`` is a keyword-only parameter of the generated function. A Jacobian's columns are
then one call with the identity as the tangent of the input, not one call per column.

Most of forward mode carries over unchanged: an elementwise rule's term ``g * cos(x)``
broadcasts ``cos(x)`` against the rows of ``g`` once ``g`` has the output's rank
(``expand``: ``x_dot[:, None]`` for a row that an ``(n, m)`` output broadcasts), tuples,
lists and dicts hold batched tangents, and zeros are batched (``np.zeros((batch,) +
np.shape(h))``). What names axes of its operand does not carry over, and each such
primitive has one entry in ``LINEAR`` (linear primitives: the same call on the tangent,
its axes moved one place right) or ``PRODUCTS`` (its forward-mode rule for rows):

    np.sum(x, axis=0)          np.sum(x_dot, axis=1)
    np.sum(x)                  np.sum(x_dot, axis=(1, 2))
    x[i, 1:]                   x_dot[:, i, 1:]
    x[idx] (fancy, masks)      np.moveaxis(np.moveaxis(x_dot, 0, -1)[idx], -1, 0)
    np.reshape(x, s)           np.reshape(x_dot, (batch,) + np.shape(y))
    W @ x (x a vector)         x_dot @ W.T
    np.split(x, 3, axis=0)     np.split(x_dot, 3, axis=1): a list of rows per piece
    np.einsum('ij,jk', a, b)   np.einsum('Zij,jk->Zik', a_dot, b) + ...

A primitive with neither entry, or an axis known only at run time, raises ``NotBatchable``
with the reason: the caller then takes one direction at a time, which is always right.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..rules.products import einsum_rows
from ..rules.shapes import matrix_transposes
from ..runtime.containers import concat, repeat
from ..runtime.indexing import batch_last_index, item_rows
from .analyze import Op, is_container


class NotBatchable(Exception):
    """The tangent function cannot be generated for a batch of directions (the reason is
    the message, with the user's line once the tangent pass has placed it); one direction
    at a time is used instead."""

    def __init__(self, message: str, located: bool = False):
        super().__init__(message)
        self.located = located


@dataclass
class Site:
    """What a batching entry sees of one statement ``target = primitive(...)``."""

    op: Op
    np: str  # the name numpy is bound to in the generated code
    batch: str  # the name of the batch size
    dot: Callable[[Any], gast.expr]  # the batched tangent of an atom (a zero if it is fixed)
    value: Callable[[Any], Any]  # what the analysis knows of an atom (an Abstract), or None
    is_active: Callable[[Any], bool]
    fresh: Callable[[str], str]  # a new name for generated code
    claim: Callable[[str, Any], str]  # the name generated code reads an object by

    def ndim(self, atom: Any) -> int | None:
        """An atom's rank, if known at transform time (0 for a number)."""
        if syntax.is_const(atom):
            return 0 if isinstance(atom.value, (int, float)) else None
        value = self.value(atom)
        return None if value is None or value.kind not in ("array", "scalar") else value.ndim

    def is_container(self, atom: Any) -> bool:
        return is_container(self.value(atom))

    @property
    def target(self) -> gast.Name:
        return syntax.name(self.op.target)

    def arg(self, param: str) -> Any:
        return self.op.bindings.get(param)

    def constant(self, param: str) -> Any:
        """The value of a parameter that must be a constant here (an axis, an offset)."""
        atom = self.arg(param)
        if atom is None:
            return None
        if syntax.is_const(atom) or syntax.is_static_tuple(atom):
            return syntax.const_value(atom)
        raise NotBatchable(f"the {param}= of {self.op.what}() is known only at run time")

    def axis(self, param: str = "axis") -> gast.expr | None:
        """An axis parameter as an axis of the rows: a constant moved one place right, an int
        known at run time as ``axis + 1 if axis >= 0 else axis``; None for ``axis=None``."""
        atom = self.arg(param)
        value = self.value(atom) if isinstance(atom, gast.Name) else None
        if value is not None and value.kind == "scalar" and not value.float and not value.none:
            return syntax.if_exp(
                syntax.compare(syntax.clone(atom), ["GtE"], [syntax.const(0)]),
                syntax.binop(syntax.clone(atom), "Add", syntax.const(1)), syntax.clone(atom))
        axis = self.constant(param)
        return None if axis is None else syntax.const(shifted(axis))

    def call(self, fname: str, args: list[gast.expr], **keywords: Any) -> gast.Call:
        return syntax.call(f"{self.np}.{fname}", args, [
            (k, v if isinstance(v, gast.AST) else syntax.const(v)) for k, v in keywords.items()])

    def like_target(self, value: gast.expr) -> gast.expr:
        """``value`` reshaped to the rows of the target: ``(batch,) + np.shape(y)``."""
        return self.call("reshape", [value, self.rows_shape()])

    def rows_shape(self) -> gast.expr:
        return syntax.binop(syntax.tuple_([syntax.name(self.batch)]), "Add",
                            self.call("shape", [self.target]))

    def flat(self, atom: Any) -> gast.expr:
        """``atom``'s rows flattened: ``np.reshape(x_dot, (batch, np.size(x)))`` (sized, so
        that an empty value has empty rows)."""
        return self.call("reshape", [self.dot(atom), syntax.tuple_([
            syntax.name(self.batch), self.call("size", [syntax.clone(atom)])])])

    def every_axis(self, atom: Any) -> gast.expr:
        """The axes of ``atom``'s rows past the batch axis: ``(1, 2)``."""
        rank = self.ndim(atom)
        if rank is not None:
            return syntax.const(tuple(range(1, rank + 1)))
        return syntax.call("tuple", [syntax.call("range", [
            syntax.const(1), syntax.binop(self.call("ndim", [syntax.clone(atom)]), "Add",
                                          syntax.const(1))])])


def shifted(axis: Any) -> Any:
    """An axis of a value, as an axis of its rows (negative axes count from the end)."""
    if isinstance(axis, (tuple, list)):
        return tuple(shifted(a) for a in axis)
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise NotBatchable(f"an axis {axis!r} that is not an int")
    return int(axis) + 1 if axis >= 0 else int(axis)


def expand(site: Site, tangent: gast.expr, atom: Any, rank: int | None,
           rank_of: gast.expr | None = None) -> gast.expr:
    """The batched tangent of ``atom`` with the rank ``rank`` (the output's, or the rank of
    ``rank_of`` at run time) that an elementwise operation broadcasts it to: new axes after
    the batch axis."""
    mine = site.ndim(atom) if not syntax.is_const(atom) else 0
    if mine is None or rank is None:  # known at run time: np.expand_dims(t, (1, ..., k))
        to = syntax.const(rank) if rank is not None else site.call(
            "ndim", [rank_of if rank_of is not None else site.target])
        last = syntax.binop(syntax.binop(syntax.const(1), "Add", to), "Sub",
                            site.call("ndim", [syntax.clone(atom)]))
        axes = syntax.call("tuple", [syntax.call("range", [syntax.const(1), last])])
        return site.call("expand_dims", [tangent, axes])
    if mine == rank:
        return tangent
    if mine > rank:
        raise NotBatchable("an operand has more axes than the result")
    index = syntax.tuple_([syntax.slice_()] + [syntax.const(None)] * (rank - mine))
    return syntax.subscript(tangent, index)


# --- linear primitives: the same call on the rows --------------------------------------


def _check_defaults(site: Site, *params: str) -> None:
    for p in params:
        atom = site.arg(p)
        if atom is not None and not (syntax.is_const(atom) and atom.value in (None, "C")):
            raise NotBatchable(f"{site.op.what}() with {p}=")


def _reduction(fname: str) -> Callable[[Site], gast.expr]:
    def batched(site: Site) -> gast.expr:
        _check_defaults(site, "out", "initial", "where")
        a = site.arg("a")
        axis = site.axis()
        keepdims = site.constant("keepdims")
        rows = site.dot(a)
        keywords: dict[str, Any] = {}
        if axis is None and not keepdims:  # over every entry of each row: one axis of rows
            rows = site.flat(a)
            keywords["axis"] = syntax.const(1)
        else:
            keywords["axis"] = site.every_axis(a) if axis is None else axis
        if keepdims:
            keywords["keepdims"] = True
        if not syntax.is_const(site.arg("dtype")) or site.arg("dtype").value is not None:
            keywords["dtype"] = syntax.clone(site.arg("dtype"))
        return site.call(fname, [rows], **keywords)

    return batched


def _cumsum(site: Site) -> gast.expr:
    _check_defaults(site, "dtype", "out")
    a, axis = site.arg("a"), site.constant("axis")
    if axis is None:  # over the flattened array
        return site.call("cumsum", [site.flat(a)], axis=1)
    return site.call("cumsum", [site.dot(a)], axis=shifted(axis))


def _reshaped(site: Site) -> gast.expr:
    """reshape, ravel, flatten, squeeze, expand_dims: the rows take the target's shape."""
    _check_defaults(site, "order")
    return site.like_target(site.dot(site.arg("a")))


def _transpose(site: Site) -> gast.expr:
    a = site.arg("a")
    axes = site.constant("axes") if site.arg("axes") is not None else None
    if axes is None or axes == ():
        rank = site.ndim(a)
        if rank is None:
            raise NotBatchable("a transpose of unknown rank")
        axes = tuple(range(rank - 1, -1, -1))
    return site.call("transpose", [site.dot(a), syntax.const((0,) + shifted(tuple(axes)))])


def _swap_last(site: Site) -> gast.expr:
    return site.call("swapaxes", [site.dot(site.arg("x") or site.arg("a"))],
                     axis1=-1, axis2=-2)


def _swapaxes(site: Site) -> gast.expr:
    return site.call("swapaxes", [site.dot(site.arg("a")),
                                  syntax.const(shifted(site.constant("axis1"))),
                                  syntax.const(shifted(site.constant("axis2")))])


def _moveaxis(site: Site) -> gast.expr:
    return site.call("moveaxis", [site.dot(site.arg("a")),
                                  syntax.const(shifted(site.constant("source"))),
                                  syntax.const(shifted(site.constant("destination")))])


def _flip(site: Site) -> gast.expr:
    a = site.arg("m") if site.arg("m") is not None else site.arg("a")
    axis = site.constant("axis")
    return site.call("flip", [site.dot(a)], axis=site.every_axis(a) if axis is None
                     else syntax.const(shifted(axis)))


def _roll(site: Site) -> gast.expr:
    axis = site.constant("axis")
    if axis is None:
        raise NotBatchable("np.roll without an axis (it rolls the flattened array)")
    return site.call("roll", [site.dot(site.arg("a")), syntax.clone(site.arg("shift"))],
                     axis=shifted(axis))


def _same_call(site: Site) -> gast.expr:
    """copy, astype, asarray...: entry by entry, whatever the axes (of an array; a list
    made an array stacks its rows)."""
    a = site.arg("a")
    if site.ndim(a) is None and _flat_sequence(site.value(a)):
        return site.call("stack", [site.dot(a)], axis=1)  # its items' rows, side by side
    if site.ndim(a) is None:
        raise NotBatchable(f"{site.op.what}() of a nested list, or of a value of unknown "
                           "kind")
    dot = site.dot(a)
    if site.op.primitive is np.ndarray.astype:
        return syntax.call(syntax.attribute(dot, "astype"), [syntax.clone(site.arg("dtype"))])
    return site.call("array", [dot])


def _flat_sequence(value: Any) -> bool:
    """A list or tuple of arrays and numbers (made an array, it stacks them)."""
    return value is not None and value.kind == "object" and value.type in (list, tuple) and \
        value.items is not None and all(v.kind in ("array", "scalar") for _, v in value.items)


def _broadcast_to(site: Site) -> gast.expr:
    a = site.arg("array")
    if a is None:
        a = site.arg("a")
    return site.call("broadcast_to", [expand(site, site.dot(a), a, site.ndim(site.target)),
                                      site.rows_shape()])


def _stacking(fname: str) -> Callable[[Site], gast.expr]:
    def batched(site: Site) -> gast.expr:
        _check_defaults(site, "out", "dtype")
        axis = site.constant("axis")
        if axis is None:
            raise NotBatchable(f"{site.op.what}(axis=None)")
        return site.call(fname, [site.dot(site.arg("arrays"))], axis=shifted(axis))

    return batched


def _filled(site: Site) -> gast.expr:
    fill = site.arg("fill_value")
    return site.call("broadcast_to", [expand(site, site.dot(fill), fill,
                                             site.ndim(site.target)), site.rows_shape()])


def _trace(site: Site) -> gast.expr:
    _check_defaults(site, "dtype", "out")
    offset = site.constant("offset") or 0
    axis1 = site.constant("axis1")
    axis2 = site.constant("axis2")
    return site.call("trace", [site.dot(site.arg("a"))], offset=offset,
                     axis1=shifted(0 if axis1 is None else axis1),
                     axis2=shifted(1 if axis2 is None else axis2))


def _diag(site: Site) -> gast.expr:
    v = site.arg("v")
    if site.ndim(v) != 2:
        raise NotBatchable("np.diag of a vector (it builds a matrix)")
    return site.call("diagonal", [site.dot(v)], offset=site.constant("k") or 0, axis1=1, axis2=2)


def _getitem(site: Site) -> gast.expr:
    """``x[index]``: ``x_dot[:, *index]`` (the batch axis first, then the index as the user
    wrote it) wherever that selects the same entries of each row: unless several advanced
    entries (arrays, and ints among them) are apart, which NumPy moves to the front, or the
    index is an object known only at run time. Those apply to the rows with the batch axis
    moved last, where the index cannot see it."""
    a, index = site.arg("a"), site.arg("index")
    value = site.value(a)
    if value is None or value.kind not in ("array", "scalar"):
        raise NotBatchable("an item of a value of unknown kind")
    prefixed = _prefixed(site, index)
    if prefixed is not None:
        return syntax.subscript(site.dot(a), prefixed)
    if isinstance(index, gast.Tuple) and not any(_unknown(site, e) for e in index.elts):
        last = index  # a literal `...` is followed by the batch axis' own slice
        if any(syntax.is_const(e) and e.value is Ellipsis for e in index.elts):
            last = syntax.tuple_([syntax.clone(e) for e in index.elts] + [syntax.slice_()])
    else:  # known at run time: it may hold `...`
        last = syntax.call(site.claim("batch_last_index", batch_last_index),
                           [syntax.index_value(syntax.clone(index),
                                               site.claim("slice", slice))])
    batch_last = site.call("moveaxis", [site.dot(a), syntax.const(0), syntax.const(-1)])
    return site.call("moveaxis", [syntax.subscript(batch_last, syntax.clone(last)),
                                  syntax.const(-1), syntax.const(0)])


def write_rows(site: Site, base: gast.expr, index: gast.expr, value_dot: gast.expr,
               value: Any) -> gast.stmt:
    """``y[index] = v`` on the rows: ``y_dot[:, index...] = v_dot``, with ``v_dot``'s rows
    given the region's rank (counted here, or read from ``y[index]`` at run time where
    arrays pick the entries)."""
    target = site.arg("a") if site.op.kind == "setitem" else site.arg("c")  # (a put's)
    if site.is_container(target):  # a list's item: its tangent is the item's rows
        return syntax.assign(syntax.subscript(base, syntax.clone(index), store=True),
                             value_dot)
    prefixed = _prefixed(site, index)
    if prefixed is None:
        raise NotBatchable("an element write through arrays apart in the index, or through "
                           "an index known only at run time")
    ints = _ints(site, index)
    if ints is not None and site.ndim(target) is not None:  # the region's rank is known
        value_dot = expand(site, value_dot, value, site.ndim(target) - ints)
    else:
        region = syntax.subscript(syntax.clone(target), syntax.clone(index))
        value_dot = expand(site, value_dot, value, None, rank_of=region)
    return syntax.assign(syntax.subscript(base, prefixed, store=True), value_dot)


def _prefixed(site: Site, index: gast.expr) -> gast.expr | None:
    """``(:, index...)``, where it picks the same entries of each row as ``index`` of the
    value; None where it may not."""
    if isinstance(index, gast.Tuple):
        kinds = [_entry_kind(site, e) for e in index.elts]
        rest = [syntax.clone(e) for e in index.elts]
    else:
        value = site.value(index) if isinstance(index, gast.Name) else None
        if is_container(value) and value.type is tuple:  # a tuple held in a name
            if value.items is None:
                return None
            kinds = [_value_kind(v) for _, v in value.items]
            # its entries one by one (at[0], at[1]): code reverse mode reads again
            rest = [syntax.subscript(syntax.clone(index), syntax.const(k))
                    for k in range(len(value.items))]
        else:
            kinds = [_entry_kind(site, index)]
            rest = [syntax.clone(index)]
    if "array" in kinds or "unknown" in kinds:
        # advanced indexing: the axes it makes stay in place (after the batch axis) only
        # where the advanced entries (arrays, and then ints) are adjacent; an entry that
        # may be None, or anything, could separate them at run time
        if "unknown" in kinds or "maybe" in kinds:
            return None
        advanced = [i for i, k in enumerate(kinds) if k in ("array", "int")]
        if advanced[-1] - advanced[0] + 1 != len(advanced):
            return None  # apart: NumPy puts their axes first, before the batch axis
    return syntax.tuple_([syntax.slice_()] + rest)


def _entry_kind(site: Site, entry: gast.expr) -> str:
    """'int', 'basic' (a slice, None, ``...``), 'maybe' (an int or None), 'array' (arrays,
    lists, masks) or 'unknown' (known only at run time)."""
    if isinstance(entry, gast.Slice):
        return "basic"
    if syntax.is_const(entry):
        if isinstance(entry.value, int) and not isinstance(entry.value, bool):
            return "int"
        return "basic" if entry.value is None or entry.value is Ellipsis else "unknown"
    if not isinstance(entry, gast.Name):
        return "unknown"
    return _value_kind(site.value(entry))


def _unknown(site: Site, entry: gast.expr) -> bool:
    return _entry_kind(site, entry) == "unknown"


def _value_kind(value: Any) -> str:
    if value is None:
        return "unknown"
    if value.kind == "none":
        return "basic"
    if value.kind == "object":
        if value.type is slice:
            return "basic"
        return "array" if value.type in (list, tuple) else "unknown"
    if value.kind in ("scalar", "array") and value.ndim == 0 and value.float is False:
        return "maybe" if value.none else "int"  # maybe None: a new axis or an int
    return "array" if value.kind == "array" else "unknown"


def _ints(site: Site, index: gast.expr) -> int | None:
    """How many axes an index of ints and slices takes away; None where an entry may be
    None (a new axis) or an array, or is not known."""
    if isinstance(index, gast.Tuple):
        kinds = [_entry_kind(site, e) for e in index.elts]
        nones = [syntax.is_const(e) and e.value is None or _maybe_none(site, e)
                 for e in index.elts]
    else:
        value = site.value(index) if isinstance(index, gast.Name) else None
        if is_container(value) and value.type is tuple and value.items is not None:
            kinds = [_value_kind(v) for _, v in value.items]
            nones = [v.kind == "none" or v.none for _, v in value.items]
        else:
            kinds = [_entry_kind(site, index)]
            nones = [syntax.is_const(index) and index.value is None or _maybe_none(site, index)]
    if any(nones) or any(k not in ("int", "basic") for k in kinds):  # 'maybe' included
        return None
    if isinstance(index, gast.Tuple) and any(
            syntax.is_const(e) and e.value is Ellipsis for e in index.elts):
        return None
    return kinds.count("int")


def _maybe_none(site: Site, entry: gast.expr) -> bool:
    value = site.value(entry) if isinstance(entry, gast.Name) else None
    return value is not None and (value.none or value.kind == "none")


def _split(axis: int | None) -> Callable[[Site], gast.expr]:
    """np.split and its family: the rows cut along the same axis, one place right (hsplit:
    the second axis, the first of a 1-d array). A list of the pieces' rows."""
    def batched(site: Site) -> gast.expr:
        ary = site.arg("ary")
        if axis is None and site.op.primitive is np.hsplit:
            rank = site.ndim(ary)
            if rank is None:
                raise NotBatchable("np.hsplit of an array of unknown rank")
            along = syntax.const(1 if rank == 1 else 2)
        else:
            along = site.axis() if axis is None else syntax.const(shifted(axis))
        fname = "array_split" if site.op.primitive is np.array_split else "split"
        return site.call(fname, [site.dot(ary), syntax.clone(site.arg("indices_or_sections"))],
                         axis=along)

    return batched


def _at_least(site: Site) -> gast.expr:
    """atleast_1d/2d/3d: each array's rows take its item's shape (the array itself for one)."""
    arys = site.arg("arys")
    if len(arys) == 1:
        return site.like_target(site.dot(arys[0]))
    return syntax.tuple_([site.call("reshape", [site.dot(a), syntax.binop(
        syntax.tuple_([syntax.name(site.batch)]), "Add", site.call("shape", [
            syntax.subscript(site.target, syntax.const(k))]))]) for k, a in enumerate(arys)])


def _as_is(site: Site) -> None:
    """A container's own operation (``xs + ys``, ``xs * 2``, ``d.get(k, v)``): the same
    operation on the lists and dicts of rows (None: the caller substitutes the tangents)."""
    return


def _getitem_of(site: Site) -> gast.expr:
    a = site.arg("a")
    if site.is_container(a):  # a list's tangent is a list of batched tangents
        return syntax.subscript(site.dot(a), syntax.clone(site.arg("index")))
    value = site.value(a)
    if value is not None and value.kind == "array" and value.dims is None:
        # of unknown rank: it may be a tuple held in a list that appends built, told apart
        # when it runs
        return syntax.call(syntax.name(site.claim("item_rows", item_rows)), [
            site.dot(a), syntax.index_value(syntax.clone(site.arg("index")),
                                            site.claim("slice", slice))])
    return _getitem(site)


LINEAR: dict[Any, Callable[[Site], gast.expr | None]] = {
    np.sum: _reduction("sum"), np.ndarray.sum: _reduction("sum"),
    np.mean: _reduction("mean"), np.ndarray.mean: _reduction("mean"),
    np.cumsum: _cumsum, np.ndarray.cumsum: _cumsum,
    operator.getitem: _getitem_of,
    np.reshape: _reshaped, np.ndarray.reshape: _reshaped, np.ravel: _reshaped,
    np.ndarray.ravel: _reshaped, np.ndarray.flatten: _reshaped, np.squeeze: _reshaped,
    np.ndarray.squeeze: _reshaped, np.expand_dims: _reshaped,
    np.transpose: _transpose, np.ndarray.transpose: _transpose, np.ndarray.T: _transpose,
    np.swapaxes: _swapaxes, np.ndarray.swapaxes: _swapaxes, np.moveaxis: _moveaxis,
    np.flip: _flip, np.roll: _roll, np.broadcast_to: _broadcast_to,
    np.copy: _same_call, np.ndarray.copy: _same_call, np.ndarray.astype: _same_call,
    np.asarray: _same_call, np.asanyarray: _same_call, np.ascontiguousarray: _same_call,
    np.stack: _stacking("stack"), np.concatenate: _stacking("concatenate"),
    np.full: _filled, np.full_like: _filled,
    np.trace: _trace, np.ndarray.trace: _trace, np.diag: _diag,
    concat: _as_is, repeat: _as_is, dict.get: _as_is,
    np.split: _split(None), np.array_split: _split(None), np.hsplit: _split(None),
    np.vsplit: _split(0), np.dsplit: _split(2),
    np.atleast_1d: _at_least, np.atleast_2d: _at_least, np.atleast_3d: _at_least,
}
for _f in matrix_transposes:
    LINEAR[_f] = _swap_last


# --- products: the forward-mode rule for rows ------------------------------------------


def _matmul(site: Site) -> gast.expr:
    """``a @ b``: ``a_dot @ b + a @ b_dot``, each term with its rows first: a tangent that
    is a stack of matrices gets the output's rank (its rows are one more stacking axis), a
    vector's rows on the right are ``b_dot @ a.T``."""
    a, b = site.arg("a"), site.arg("b")
    ra, rb = site.ndim(a), site.ndim(b)
    if ra is None or rb is None or ra == 0 or rb == 0:
        return _row_by_row(site, lambda x, y: syntax.binop(x, "MatMult", y))
    stacked = max(ra, rb)
    terms = []
    if site.is_active(a):
        if ra == 1 and rb > 2:  # a vector times a stack of matrices
            return _row_by_row(site, lambda x, y: syntax.binop(x, "MatMult", y))
        dot = site.dot(a) if ra == 1 else expand(site, site.dot(a), a, stacked)
        terms.append(syntax.binop(dot, "MatMult", syntax.clone(b)))
    if site.is_active(b):
        if rb >= 2:
            dot = expand(site, site.dot(b), b, stacked) if ra >= 2 else site.dot(b)
            terms.append(syntax.binop(syntax.clone(a), "MatMult", dot))
        elif ra <= 2:  # the rows of b_dot are vectors: b_dot @ a.T
            other = syntax.clone(a) if ra == 1 else syntax.attribute(syntax.clone(a), "T")
            terms.append(syntax.binop(site.dot(b), "MatMult", other))
        else:  # a stack of matrices times a vector
            return _row_by_row(site, lambda x, y: syntax.binop(x, "MatMult", y))
    return _summed(terms)


def _dot(site: Site) -> gast.expr:
    a, b = site.arg("a"), site.arg("b")
    ra, rb = site.ndim(a), site.ndim(b)
    if ra is None or rb is None or ra > 2 or rb > 2:
        return _row_by_row(site, lambda x, y: site.call("dot", [x, y]))
    if ra == 0 or rb == 0:  # a product of a number and an array
        terms = []
        if site.is_active(a):
            terms.append(syntax.binop(expand(site, site.dot(a), a, site.ndim(site.target)),
                                      "Mult", syntax.clone(b)))
        if site.is_active(b):
            terms.append(syntax.binop(syntax.clone(a), "Mult",
                                      expand(site, site.dot(b), b, site.ndim(site.target))))
        return _summed(terms)
    return _matmul(site)


def _row_by_row(site: Site, product: Callable[[gast.expr, gast.expr], gast.expr]
                ) -> gast.expr:
    """A bilinear product's tangent one row at a time, for operands whose ranks are known
    only at run time: ``np.stack([row @ b for row in a_dot]) + ...``."""
    a, b = site.arg("a"), site.arg("b")
    terms = []
    for atom, other, left in ((a, b, True), (b, a, False)):
        if not site.is_active(atom):
            continue
        row = site.fresh("row")
        pair = (syntax.name(row), syntax.clone(other)) if left else (
            syntax.clone(other), syntax.name(row))
        rows = syntax.list_comp(product(*pair), row, site.dot(atom))
        terms.append(site.call("stack", [rows]))
    return _summed(terms)


def _outer(site: Site) -> gast.expr:
    a, b = site.arg("a"), site.arg("b")
    terms = []
    if site.is_active(a):
        col = syntax.subscript(site.flat(a), syntax.tuple_(
            [syntax.slice_(), syntax.slice_(), syntax.const(None)]))
        terms.append(syntax.binop(col, "Mult", site.call("ravel", [syntax.clone(b)])))
    if site.is_active(b):
        row = syntax.subscript(site.flat(b), syntax.tuple_(
            [syntax.slice_(), syntax.const(None), syntax.slice_()]))
        column = syntax.subscript(site.call("ravel", [syntax.clone(a)]), syntax.tuple_(
            [syntax.slice_(), syntax.const(None)]))
        terms.append(syntax.binop(column, "Mult", row))
    return _summed(terms)


def _summed(terms: list[gast.expr]) -> gast.expr:
    total = terms[0]
    for term in terms[1:]:
        total = syntax.binop(total, "Add", term)
    return total


def _einsum(site: Site) -> gast.expr:
    """One product per moving operand, its rows in place of it: the subscripts get one more
    index, first on those rows and first in the output (``einsum_rows``)."""
    operands = site.arg("operands")
    subscripts = site.arg("subscripts")
    keywords = [(k, syntax.clone(site.arg(k))) for k in ("optimize",)
                if site.arg(k) is not None]
    spec = site.claim("einsum_rows", einsum_rows)
    terms = []
    for k, atom in enumerate(operands):
        if not site.is_active(atom):
            continue
        rows = syntax.call(syntax.name(spec), [syntax.clone(subscripts), syntax.const(k),
                                               syntax.tuple_(syntax.clone(list(operands)))])
        args = [syntax.clone(a) for a in operands]
        args[k] = site.dot(atom)
        terms.append(syntax.call(f"{site.np}.einsum", [rows, *args], keywords))
    return _summed(terms)


PRODUCTS: dict[Any, Callable[[Site], gast.expr]] = {
    operator.matmul: _matmul, np.matmul: _matmul, np.dot: _dot, np.ndarray.dot: _dot,
    np.outer: _outer, np.einsum: _einsum,
}
