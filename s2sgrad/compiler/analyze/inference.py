"""What a result is: the kind, rank and shape class of what a call returns.

``infer(facts, rule, bindings, target)`` records what a rule's result holds, from the
rule's shape class (``elementwise``, ``reduce``, ``matmul``, ...) and its operands:

    y = np.sum(x, axis=0)      x: array[nn]  ->  y: array[n]
    z = a * b                  a, b in one shape class  ->  z in that class too

A rule of shape ``tuple`` or ``list`` makes a container, whose items its ``items=`` gives
from the static arguments and the operands' ranks (``rule_view``):

    t = np.linalg.qr(a)        a: array[nn]  ->  t: <tuple> of array[??], array[??]
    ps = np.split(x, n)        n computed    ->  ps: <list>, items unknown

``infer_nondiff`` does the same for calls without a gradient (``np.zeros(n)``, ``x.shape``,
comparisons), and ``makes_integers`` says whether one certainly makes integers (writes into
such arrays carry no gradient). ``dtype_named`` is the dtype a ``dtype=`` argument names,
when it is known at transform time.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import operator
from typing import Any

import gast
import numpy as np

from ... import shapes, syntax
from ...rules.registry import One, Rule
from ...runtime.containers import zeros_tree
from ..parse import MISSING
from ..templates import template_of
from .facts import Facts
from .values import Abstract, ShapeTuple, abstract_of, is_complex, item_of, join


def rule_view(facts: Facts, bindings: dict, static_of: Any = None,
              sequences: bool = False) -> tuple[dict, Any]:
    """What ``requires=`` and ``items=`` see of a call: the static arguments (a literal's
    value, else MISSING), and the rank of an argument (for a ``*args`` parameter, the tuple
    of its arguments' ranks). With ``sequences`` (for ``items=``), a tuple or list of known
    length built in the function is a tuple of its items' values (MISSING each): how many
    there are is what tells how many pieces ``np.split(x, [i, j])`` makes."""
    static_of = static_of or static

    def value(atom: Any) -> Any:
        if isinstance(atom, tuple):
            return tuple(value(e) for e in atom)
        found = static_of(atom)
        held = facts.value(atom) if isinstance(atom, gast.Name) else None
        if found is MISSING and sequences and held is not None and held.kind == "object" \
                and held.type in (tuple, list) and held.items is not None:
            return tuple(MISSING for _ in held.items)
        return found

    values = {p: value(a) for p, a in bindings.items()}

    def ndim(p: str) -> Any:
        atom = bindings[p]
        if isinstance(atom, tuple):
            return tuple(facts.value(e).ndim for e in atom)
        return facts.value(atom).ndim

    return values, ndim


def value_of(facts: Facts, atom: Any) -> Abstract:
    """The abstract value of an operand (a tuple for the atoms of a ``*args`` parameter)."""
    if isinstance(atom, tuple):
        items = tuple((k, facts.value(a)) for k, a in enumerate(atom))
        return Abstract("object", (None,) * len(atom), any(v.float for _, v in items), tuple,
                        items)
    return facts.value(atom)


def container_result(facts: Facts, rule: Rule, bindings: dict, static_of: Any) -> Abstract:
    """The result of a rule of shape ``tuple`` or ``list``: its items as ``items=`` gives
    them (an array where it says this call returns one)."""
    ranks = None
    if rule.items is not None:
        ranks = rule.items(*rule_view(facts, bindings, static_of, sequences=True))
    if isinstance(ranks, One):
        return Abstract("array", None if ranks.rank is None else (None,) * ranks.rank, True)
    if ranks is None:
        return Abstract("object", None, True, rule.container, None)
    items = tuple((k, Abstract("scalar", (), False) if r in (bool, int) else Abstract(
        "array", None if r is None else (None,) * r, True)) for k, r in enumerate(ranks))
    return Abstract("object", (None,) * len(items), True, rule.container, items)


def infer(facts: Facts, rule: Rule, bindings: dict, target: str | None,
          static_of: Any = None) -> None:
    if target is None:
        return
    if rule.container is not None:
        result = container_result(facts, rule, bindings, static_of)
        if any(is_complex(value_of(facts, a)) for a in bindings.values()
               if not isinstance(a, gast.Slice)):  # np.split of a complex array
            result = dataclasses.replace(result, complex=True, items=None if (
                result.items is None) else tuple((k, dataclasses.replace(v, complex=v.float))
                                                  for k, v in result.items))
        facts.set_value(target, result)
        return
    operands = [bindings[p] for p in rule.params[:max(1, len(template_of(rule).outputs))]]
    values = [value_of(facts, a) for a in operands]
    first = values[0]
    shape = rule.shape
    if shape == "elementwise":
        elementwise(facts, operands, values, target)
        return
    if shape == "item":
        facts.set_value(target, _item(facts, rule, bindings, first))
        return
    dims: tuple | None = None
    if rule.primitive is operator.getitem:
        if first.kind != "array":  # an item of a tuple or list
            container = operands[0]
            if syntax.is_static_tuple(container):
                items = [abstract_of(v) for v in syntax.const_value(container)]
                item = items[0]
                for other in items[1:]:
                    item = join(item, other)
                facts.set_value(target, item)
            else:
                facts.set_value(target, Abstract("object", None, False, object))
            return
        facts.set_value(target, Abstract("array", index_dims(facts, first.dims, bindings[
            rule.params[1]]), first.float, complex=first.complex))
        return
    if rule.primitive in RESHAPES:
        new_shape = bindings.get("shape") or bindings.get("newshape")
        if rule.primitive is np.ndarray.reshape and isinstance(new_shape, gast.Tuple) \
                and len(new_shape.elts) == 1:
            new_shape = new_shape.elts[0]  # x.reshape((3, 4)) rather than x.reshape(3, 4)
        facts.set_value(target, Abstract("array", shape_dims(facts, new_shape), True,
                                         complex=first.complex))
        return
    if shape == "reduce":
        axis = static(bindings.get("axis"))
        keepdims = static(bindings.get("keepdims", syntax.const(False)))
        if axis is not MISSING and isinstance(keepdims, bool):
            dims = shapes.reduce(first.dims, axis, keepdims)
    elif shape == "matmul" and len(values) > 1:
        dims = shapes.matmul(first.dims, values[1].dims)
    elif shape == "dot" and len(values) > 1:
        dims = shapes.dot(first.dims, values[1].dims)
    elif shape == "outer" and rule.primitive is np.outer:  # of the flattened operands
        dims = (None, None)
    elif shape == "outer" and first.dims is not None and values[1].dims is not None:
        dims = first.dims + values[1].dims  # a ufunc's outer: the axes of both
    elif shape == "transpose":
        axes = static(bindings.get("axes"))
        if isinstance(axes, tuple) and len(axes) <= 1 and rule.params[-1:] == ("axes",) \
                and inspect.signature(rule.template).parameters["axes"].kind == \
                inspect.Parameter.VAR_POSITIONAL:
            axes = axes[0] if axes else None  # x.transpose(), x.transpose((1, 0))
        if axes is MISSING:
            dims = None if first.ndim is None else (None,) * first.ndim
        else:
            dims = shapes.transpose(first.dims, axes)
    elif shape == "permute":
        dims = None if first.ndim is None else (None,) * first.ndim
    elif shape == "same":
        dims = first.dims
    elif shape == "scalar":
        dims = ()
    if first.kind == "object":  # np.asarray(a list): its rank is not the list's length
        dims = None
    module = getattr(rule.primitive, "__module__", "") or ""
    python_scalar = shape == "scalar" and (  # math.* and float() return Python floats
        module == "math" or rule.primitive is float)
    kind = "scalar" if python_scalar or (
        shape == "scalar" and all(v.kind == "scalar" for v in values)) else "array"
    cls = facts.shape_class.get(operands[0].id) if shape == "same" and isinstance(
        operands[0], gast.Name) else None
    facts.set_value(target, Abstract(kind, dims, True, complex=any(
        is_complex(v) for v in values)), cls)

def complex_result(facts: Facts, rule: Rule, target: str | None,
                   before: Abstract | None) -> None:
    """The result's dtype where the rule says what it is (``complex="real"``: ``np.abs``;
    ``"complex"``: ``np.fft.fft``); elsewhere ``infer`` made it complex where an operand
    is. ``before`` is what the name held before this assignment (joined with it)."""
    if target is None or rule.complex not in ("real", "complex") or \
            facts.values.get(target) is None or facts.values[target].kind not in (
                "array", "scalar"):
        return
    joined = before is not None and before.complex and target not in facts.parsed.params
    facts.values[target] = dataclasses.replace(
        facts.values[target], complex=rule.complex == "complex" or joined)

def _item(facts: Facts, rule: Rule, bindings: dict, container: Abstract) -> Abstract:
    """An item of ``container`` at the key bound to the rule's second parameter, or its
    ``default`` where the key may be missing (``d.get(k, default)``)."""
    key = facts.key_of(bindings[rule.params[1]])
    keys = None if key is None or container.items is None else [k for k, _ in container.items]
    if keys is not None and key in keys:
        return item_of(container, key)
    default = facts.value(bindings["default"]) if "default" in bindings else None
    if default is None:
        return item_of(container, None)
    return default if keys is not None else join(item_of(container, None), default)


def index_dims(facts: Facts, dims: tuple | None, index: Any) -> tuple | None:
    """Dims of ``a[index]`` for ints, slices, None and ..., and one 1-d array of integers or
    booleans among slices (``X[idx]``, ``X[:, mask]``: either way the axis it indexes becomes
    one axis of a size not known here); None for other array indices."""
    if dims is None:
        return None
    parts = index.elts if isinstance(index, gast.Tuple) else [index]

    def const(part, value):
        return syntax.is_const(part) and part.value is value

    def vector(part):
        value = facts.value(part) if isinstance(part, gast.Name) else None
        return value is not None and value.kind == "array" and value.ndim == 1 and \
            not value.float and not value.complex

    vectors = [p for p in parts if vector(p)]
    if len(vectors) > 1 or vectors and any(not (isinstance(p, gast.Slice) or vector(p) or const(
            p, None) or const(p, Ellipsis)) for p in parts):
        return None  # several advanced indexes: NumPy may move their axes to the front

    consumed = sum(1 for p in parts if not (const(p, None) or const(p, Ellipsis)))
    if consumed > len(dims):
        return None
    out, axis = [], 0
    for part in parts:
        if const(part, None):
            out.append(True)
        elif const(part, Ellipsis):
            count = len(dims) - consumed
            out.extend(dims[axis:axis + count])
            axis += count
        elif isinstance(part, gast.Slice):
            whole = part.lower is None and part.upper is None and part.step is None
            out.append(dims[axis] if whole else None)
            axis += 1
        elif vector(part):
            out.append(None)
            axis += 1
        elif (syntax.is_const(part) and isinstance(part.value, int)
              and not isinstance(part.value, bool)) or (
                facts.value(part).kind == "scalar" and not facts.value(part).float):
            axis += 1  # an integer index drops the axis
        else:
            return None
    return tuple(out) + tuple(dims[axis:])

def shape_dims(facts: Facts, shape: Any) -> tuple | None:
    """Dims of an array made with ``shape`` (an atom: a literal, or a tuple of atoms)."""
    if shape is None:
        return None
    if syntax.is_const(shape) or syntax.is_static_tuple(shape):
        return shapes.of_literal(syntax.const_value(shape))
    if isinstance(shape, gast.Tuple):
        return tuple(shapes.of_literal(syntax.const_value(e))[0]
                     if syntax.is_const(e) and isinstance(e.value, int) else None
                     for e in shape.elts)
    value = facts.value(shape)
    if value.kind == "object" and value.type in (tuple, list):
        return value.dims  # a tuple built in the function: its length is known
    if value.kind == "scalar" and not value.float:
        return (None,)
    return None

def elementwise(facts: Facts, operands: list, values: list[Abstract], target: str) -> None:
    arrays = [(a, v) for a, v in zip(operands, values, strict=True)
              if v.kind in ("scalar", "array")]
    # A Python number only if every operand is one: an operand of any other kind (an
    # array, or a value of unknown kind) makes the result an array as far as is known.
    kind = "scalar" if all(v.kind == "scalar" for v in values) else "array"
    known = len(arrays) == len(values)
    dims = shapes.broadcast(*(v.dims for _, v in arrays)) if known else None
    classes = {facts.shape_class.get(a.id) if isinstance(a, gast.Name) else None
               for a, v in arrays if v.ndim != 0}
    cls = classes.pop() if known and len(classes) == 1 and None not in classes else None
    is_float = any(v.float for v in values)
    facts.set_value(target, Abstract(kind, dims, is_float, complex=any(
        is_complex(v) for v in values)), cls)

def infer_nondiff(facts: Facts, prim: Any, args: list, target: str | None,
                  keywords: dict | None = None) -> None:
    if target is None:
        return
    facts.int_result = makes_integers(facts, prim, args, keywords or {})
    if isinstance(prim, np.ufunc) or prim in COMPARISONS:
        elementwise(facts, args, [facts.value(a) for a in args], target)
        value = facts.values[target]  # np.sign and np.round of complex values are complex
        facts.values[target] = Abstract(value.kind, value.dims, value.float and not
                                        facts.int_result, complex=value.complex
                                        and not facts.int_result)
    elif prim is zeros_tree and args:  # zeros with the structure of a container (tangents)
        facts.set_value(target, dataclasses.replace(facts.value(args[0]), float=True))
    elif prim in (len, int, math.floor, math.ceil, np.ndarray.size, np.ndarray.ndim):
        facts.set_value(target, Abstract("scalar", (), False))
    elif prim in (np.ndarray.shape, np.shape):
        rank = facts.value(args[0]).ndim if args else None
        facts.set_value(target, Abstract("object", None if rank is None else (None,) * rank,
                                        False, ShapeTuple))
    elif prim in _LIKE and args:
        cls = facts.shape_class.get(args[0].id) if isinstance(args[0], gast.Name) else None
        facts.set_value(target, Abstract("array", facts.value(args[0]).dims, True, complex=(
            _complex_dtype(facts, prim, args, keywords, facts.value(args[0]).complex))), cls)
    elif prim in _FROM_SHAPE and args:
        facts.set_value(target, Abstract("array", shape_dims(facts, args[0]), True,
                                         complex=_complex_dtype(facts, prim, args, keywords)))
    elif prim in (np.arange, np.linspace):
        facts.set_value(target, Abstract("array", (None,), True, complex=_complex_dtype(
            facts, prim, args, keywords, any(facts.value(a).complex for a in args))))
    elif prim in (np.eye, np.identity):
        facts.set_value(target, Abstract("array", (None, None), True,
                                         complex=_complex_dtype(facts, prim, args, keywords)))
    elif (getattr(prim, "__module__", "") or "").startswith("numpy"):
        facts.set_value(target, Abstract("array", None, False))
    else:
        facts.set_value(target, Abstract("object", None, False, object))

def _complex_dtype(facts: Facts, prim: Any, args: list, keywords: dict,
                   otherwise: bool = False) -> bool:
    """Whether a creator's ``dtype`` (by keyword, or np.zeros(n, complex)'s positional
    one) is complex; ``otherwise`` where it names none."""
    dtype = keywords.get("dtype")
    if dtype is None and prim in _FROM_SHAPE + _LIKE and len(args) > 1:
        dtype = args[1]
    if dtype is None or (syntax.is_const(dtype) and dtype.value is None):
        return otherwise
    cast = dtype_named(facts, dtype)
    return otherwise if cast is None else cast.kind == "c"

def makes_integers(facts: Facts, prim: Any, args: list, keywords: dict) -> bool:
    """Does this call, without a gradient, certainly make integers or booleans?"""
    if prim in COMPARISONS or prim in _BOOLEAN_UFUNCS:
        return True
    if prim in _LIKE + _FROM_SHAPE + (np.full, np.full_like):
        dtype = keywords.get("dtype")
        if dtype is None and len(args) > (2 if prim in (np.full, np.full_like) else 1):
            dtype = args[-1]
        cast = dtype_named(facts, dtype) if dtype is not None else None
        if cast is None and dtype is None and prim in _LIKE:
            return isinstance(args[0], gast.Name) and facts.is_int_array(args[0].id)
        return cast is not None and cast.kind in "biu"
    if prim is np.arange and "dtype" not in keywords:
        return all((syntax.is_const(a) and type(a.value) is int) or (
            facts.value(a).kind == "scalar" and not facts.value(a).float) for a in args)
    return False

def dtype_named(facts: Facts, atom: Any) -> np.dtype | None:
    """The dtype (or, for ``x.dtype``, its kind) a ``dtype=`` argument names, or None if
    it is not known when the function is compiled."""
    if isinstance(atom, gast.Name) and atom.id in facts.values:
        value = facts.values[atom.id]
        if value.value is not None:  # a dtype passed in as an argument
            facts.by_string_value |= isinstance(value.value, str)
            try:
                return np.dtype(value.value)
            except TypeError:
                return None
        if atom.id in facts.dtype_kinds:  # x.dtype of a known array, read into a name
            return np.dtype({"c": complex, "f": float, "i": int}[facts.dtype_kinds[atom.id]])
    if isinstance(atom, gast.Attribute) and atom.attr == "dtype" and isinstance(
            atom.value, gast.Name) and atom.value.id in facts.values:
        owner = facts.values[atom.value.id]  # x.dtype: its kind is known, not its size
        if owner.kind in ("array", "scalar"):
            return np.dtype(complex if owner.complex else float if owner.float else int)
        return None
    return static_dtype(facts, atom)

def static_dtype(facts: Facts, atom: Any) -> np.dtype | None:
    """The dtype a ``dtype=`` argument names, when it is known at transform time."""
    if atom is None or (syntax.is_const(atom) and atom.value is None):
        return None
    value = syntax.const_value(atom) if syntax.is_const(atom) else facts.parsed.resolve(atom)
    if value is MISSING:
        return None
    try:
        return np.dtype(value)
    except TypeError:
        return None


COMPARISONS = frozenset(op for op in (getattr(operator, name, None)
                                      for name in syntax.CMPOPS.values()) if op is not None)
RESHAPES = (np.reshape, np.ndarray.reshape)
_LIKE = (np.zeros_like, np.ones_like, np.empty_like)
_FROM_SHAPE = (np.zeros, np.ones, np.empty)
_BOOLEAN_UFUNCS = frozenset({np.greater, np.greater_equal, np.less, np.less_equal, np.equal,
                             np.not_equal, np.logical_and, np.logical_or, np.logical_not,
                             np.logical_xor, np.isnan, np.isinf, np.isfinite, np.signbit})


def static(atom: Any) -> Any:
    """The value of a literal atom (a constant or a tuple of constants), or MISSING."""
    if atom is None:
        return None
    if syntax.is_const(atom) or syntax.is_static_tuple(atom):
        return syntax.const_value(atom)
    return MISSING
