"""The view table: which calls return memory of their own and which may return a view of an
argument (``returns_new_array``, ``NEW_MEMORY``, ``VIEWS``), read by the aliasing pass to
group names by the memory they may share, and by optimize to know which saved values the
forward owns. tests/compiler/test_view_table.py confirms every answer of new memory with
NumPy itself (``np.shares_memory``, ``base``); a function it cannot confirm is a view.

Part of the compiler layer.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import syntax
from ..runtime.containers import zeros_tree
from .analyze import Op
from .parse import MISSING

# Calls and attributes whose result may share memory with their first argument or owner.
VIEWS = frozenset({"reshape", "transpose", "ravel", "squeeze", "swapaxes", "moveaxis", "view",
                   "expand_dims", "broadcast_to", "asarray", "asanyarray", "atleast_1d",
                   "atleast_2d", "flip", "diagonal", "real", "imag", "conj", "conjugate",
                   "T", "mT"})



def returns_new_array(op: Op, ndim: Callable[[Any], int | None] | None = None) -> bool:
    """Does this call return memory of its own (never a view of an argument)? Decided from
    the function and the arguments known when compiling (the constants among the rule's
    bindings; a call without them knows none): ``NEW_MEMORY`` answers for the functions it
    names, ufuncs and the library's arithmetic-shaped rules make new arrays, and anything
    else is assumed to return a view (np.fliplr, np.split, a function without a rule or with
    a user's). An argument that lets
    a function hand back its input (``copy=``, ``overwrite_b=``) must be known to forbid it.
    tests/compiler/test_view_table.py calls every registered function to confirm each answer of new
    memory with NumPy. With ``ndim`` (the rank of an argument, where the analysis knows
    it), the functions of ``BY_RANK`` answer from their arguments' ranks too."""
    prim = op.primitive
    if prim is None:
        return False
    static = {p: syntax.const_value(a) if syntax.is_const(a) or syntax.is_static_tuple(a)
              else MISSING for p, a in op.bindings.items()}
    if _may_reuse(prim, static):
        return False
    try:
        ranked = BY_RANK.get(prim) if ndim is not None else None
    except TypeError:  # unhashable
        ranked = None
    if ranked is not None:
        return ranked({p: ndim(a) for p, a in op.bindings.items()})
    try:
        fresh = NEW_MEMORY.get(prim)
    except TypeError:  # unhashable
        return False
    if fresh is not None:
        return fresh(static)
    if isinstance(prim, np.ufunc):
        return True
    return op.rule is not None and _library_rule(op.rule) and op.rule.shape in (
        "elementwise", "reduce", "matmul", "dot", "outer", "scalar")


def _library_rule(rule: Any) -> bool:
    """Is this one of the library's rules, whose primitives are called to confirm what
    their shape says of their memory? A user's rule tells the rank of its function's
    result, not whether the function returns an argument."""
    return (getattr(rule.template, "__module__", None) or "").startswith(_LIBRARY_RULES)


_LIBRARY_RULES = f"{__package__.rpartition('.')[0]}.rules."  # s2sgrad.rules.


# Arguments that let a function return (or compute in) an argument's memory, and the value
# that forbids it: np.array(x, copy=False), x.astype(t, copy=None), cho_solve(c, b,
# overwrite_b=True).
_REUSE = {"copy": True, "overwrite_a": False, "overwrite_b": False}


def _may_reuse(prim: Any, static: dict[str, Any]) -> bool:
    """Does the function take an argument of ``_REUSE`` that this call is not known to set
    to the value that forbids reusing memory?"""
    try:
        params = set(inspect.signature(prim).parameters) | set(static)
    except (TypeError, ValueError):  # no signature (a ufunc, a builtin): the bindings' only
        params = set(static)
    return any(static.get(p, MISSING) is not forbids for p, forbids in _REUSE.items()
               if p in params)


def _always(static: dict[str, Any]) -> bool:
    return True


def _never(static: dict[str, Any]) -> bool:
    return False


def _einsum_computes(static: dict[str, Any]) -> bool:
    """np.einsum of one operand that sums over no index only relabels its axes or takes a
    diagonal (``'ii->i'``, ``'ij->ji'``, ``'ij'``, ``'...ii->...i'``): NumPy returns a view.
    Every other product is computed into new memory; subscripts not known when compiling
    may be either."""
    subscripts = static.get("subscripts")
    if not isinstance(subscripts, str):
        return False
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    if "," in inputs:
        return True
    letters = set(inputs) - {"."}
    if not arrow:  # implicit output: the indices that appear once
        return any(inputs.count(c) > 1 for c in letters)
    return bool(letters - set(output))


def _sum_from_a_number(static: dict[str, Any]) -> bool:
    """Python's sum adds the items to ``start``: a number makes a new array, an array
    given as ``start`` is returned as it is when there are no items."""
    return type(static.get("start")) in (int, float)


def _differences(static: dict[str, Any]) -> bool:
    """np.diff(a, n=0) returns ``a`` itself."""
    n = static.get("n")
    return type(n) is int and n > 0


# Functions whose result is new memory (or not) whatever the shape of their rule says, each
# with the test of the call's known arguments (their names in the rule, the default where
# not given; MISSING where not known when compiling) that tells.
def _diagonal_matrix(ndims: dict[str, int | None]) -> bool:
    """np.diag(v) of a vector builds a matrix; of a matrix, it is a view of its diagonal."""
    return ndims.get("v") == 1


# Functions whose result is new memory for arguments of some ranks, a view for others
BY_RANK: dict[Any, Callable[[dict[str, int | None]], bool]] = {np.diag: _diagonal_matrix}


NEW_MEMORY: dict[Any, Callable[[dict[str, Any]], bool]] = {
    # the result may be the argument itself (np.real or x.conj() of a real array, max(a, b)
    # of 0-d arrays), or a view of it
    **dict.fromkeys((np.real, np.imag, np.ndarray.real, np.ndarray.imag, np.ndarray.conj,
                     np.ndarray.conjugate, np.asarray,
                     np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.require,
                     np.nan_to_num, np.real_if_close, max, min), _never),
    np.einsum: _einsum_computes,
    sum: _sum_from_a_number,
    np.diff: _differences,
    # arrays made anew, copies, products and index arrays
    **dict.fromkeys((
        np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
        np.full_like, np.arange, np.linspace, np.logspace, np.geomspace, np.eye, np.identity,
        np.array, np.copy, np.ndarray.copy, np.ndarray.astype, np.concatenate, np.stack,
        np.hstack, np.vstack, np.dstack, np.column_stack, np.where, np.clip, np.ndarray.clip,
        np.cumsum, np.ndarray.cumsum, np.cumprod, np.sort, np.tile, np.repeat, np.pad,
        np.outer, np.kron, np.tensordot, np.roll, np.tril, np.triu, np.meshgrid, np.indices,
        np.argsort, np.argmax, np.argmin, np.nonzero, np.flatnonzero, np.unique, np.bincount,
        np.histogram, np.random.rand, np.random.randn, np.random.random, np.random.normal,
        np.random.uniform, np.random.randint, np.random.permutation, np.random.choice,
        np.ndarray.flatten, np.ndarray.tolist, len, float, int, abs, round, range,
        zeros_tree), _always),
}
