"""The refusals of the forward walk: code whose derivative the analysis cannot pick.

Each check raises a TransformError at the user's file:line:col, saying what is not
supported and what to write instead; each returns quietly otherwise.

    x.sort()                 check_effect: a call whose result is dropped, on an array
    np.add.at(y, i, v)       check_scatter: y is a NumPy array
    np.exp(x, out=y)         check_output: NumPy casts the result into y
    for v in s: ...          check_iterable: loops read items by position (not a set's)
    for a, b in zip(*xs)     check_spread: xs holds as many sequences as the loop unpacks
    a, b = t                 check_unpack: t holds two values, where its length is known
    np.clip(y, 0, 1, y)      refuse_out: an output array passed by position
    xs.extend(ys)            refuse_container_method: a list changed in place
    gradient(f)(x) inside    refuse_transform: derivatives of derivatives
    np.sin([x, y])           check_array_operands: NumPy converts the list, the rule does not
                             (NeedsArray: normalize writes the conversion, and the walk runs again)
    y[True]                  refuse_boolean_index
    len(rhs), print(rhs)     check_function_values: a nested function made into a value is
                             only called, passed to a function of the user's, or held

A refusal that depends on whether the result is used (a call without a rule) is decided by
``activity``; ``unsupported_call`` words it.
"""

from __future__ import annotations

import inspect
import operator
import sys
from typing import Any

import gast
import numpy as np

from ... import syntax
from ...rules import registry
from ...rules.registry import Rule
from ...runtime import containers
from ..parse import made_by_transform, unwrap
from .facts import Facts
from .values import (
    Abstract,
    ShapeTuple,
    described,
    holds_closure,
    installed_package,
    is_sequence,
)

# The calls a nested function made into a value (a tuple of what it closes over, see
# normalize's ``Functions.value``) may be given: a function of the user's, compiled for it,
# and the writes of normalize that put it into a list or dict or take it out.
_HOLDS_FUNCTIONS = frozenset({"call", "put", "append", "insert", "pop"})


def check_function_values(facts: Facts, stmt: gast.stmt, op: Any) -> None:
    """A nested function or lambda made into a value is called, passed to a function of
    the user's (compiled for it), held in a tuple, list or dict and read out of one: what
    else would see the tuple that stands for it (len, print, a library's function that
    calls it) is refused. Inside the function that stands for its closures, the tuple is
    read into the variables it closes over (the first statements ``parse`` writes)."""
    read = [n for n in gast.walk(stmt.value) if isinstance(n, gast.Name) and
            holds_closure(facts.values.get(n.id))]
    if not read:
        return
    value = stmt.value
    if isinstance(value, (gast.Name, gast.Tuple, gast.List, gast.Dict)) or (
            isinstance(value, gast.Call) and op.kind in _HOLDS_FUNCTIONS):
        return  # a copy, a container that holds it, a call that is given it
    if isinstance(value, gast.Call) and facts.parsed.resolve(value.func) is len and all(
            facts.values[n.id].closure is None for n in read):
        return  # how many functions a container holds
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        own = facts.values[value.value.id].closure if value.value.id in facts.values \
            else None
        if own is None or own is facts.parsed.fn:
            return  # an item of a container (of the function's own tuple: what it reads)
    refuse_function_value(facts, read[0], op.what)


def refuse_reaching_functions(facts: Facts, atoms: list, what: str, prim: Any) -> None:
    """A function of a library (a rule's primitive, or one without a rule) given a nested
    function made into a value, or a container that holds one: it would see the tuple
    that stands for the function (``len`` of a container of them counts them)."""
    for atom in atoms:
        value = facts.values.get(atom.id) if isinstance(atom, gast.Name) else None
        if holds_closure(value) and not (prim is len and value.closure is None):
            refuse_function_value(facts, atom, what)


def refuse_function_value(facts: Facts, atom: gast.Name, what: str) -> None:
    held = facts.values[atom.id]
    name = held.closure._s2sgrad_captures[0] if held.closure is not None else None
    function = f"the nested function '{name}'" if name not in (None, "closure") else \
        "a lambda" if name else "a function made here"
    raise facts.parsed.error(
        f"{function} is used other than by calling it, passing it to a function of yours or "
        f"holding it in a tuple, list or dict ({what or 'an operation'} would not see the "
        "function)", atom,
        "Call it, or define it at module level and pass it the values it reads from here "
        "as arguments (`odeint(rhs, y0, t, args=(k,))` for `def rhs(y, t, k): ...`).")


def check_effect(facts: Facts, call: gast.expr) -> None:
    """A call whose result is dropped is kept for its effect. Printing is fine; a call
    that may change an array in place (x.sort(), np.copyto(h, y)) would change values
    the gradient depends on without the gradient knowing."""
    if not isinstance(call, gast.Call):
        return
    if facts.parsed.resolve(call.func) in (print,) or any(
            k.arg == "out" for k in call.keywords):  # (out=: refused where the call is)
        return
    arrays = [a for a in call.args + [k.value for k in call.keywords]
              if facts.value(a).kind == "array"]
    receiver = call.func.value if isinstance(call.func, gast.Attribute) and isinstance(
        call.func.value, gast.Name) and call.func.value.id in facts.values else None
    if receiver is not None and facts.value(receiver).kind == "array":
        arrays.append(receiver)
    if arrays and isinstance(call.func, gast.Attribute) and call.func.attr == "at" and \
            isinstance(facts.parsed.resolve(call.func.value), np.ufunc):
        ufunc = facts.parsed.resolve(call.func.value).__name__
        raise facts.parsed.error(
            f"np.{ufunc}.at(a, indices, b) changes a in place, and its derivative depends on "
            "the values it combines: only np.add.at and np.subtract.at are differentiated",
            call, f"Write the update with np.{ufunc} on the region and an element write "
            f"(`y[idx] = np.{ufunc}(y[idx], v)`, where no position repeats), or a loop over "
            "the positions.")
    if arrays:
        raise facts.parsed.error(
            "a call whose result is not used, on an array: it may change the array in "
            "place, which the gradient cannot follow", call,
            "Assign the result to a name (e.g. `x = np.sort(x)`), or move the call "
            "outside the differentiated function.")


def check_scatter(facts: Facts, base: gast.Name, value: gast.expr, what: str,
                  node: gast.AST) -> None:
    """``np.add.at(y, idx, v)`` is followed on a NumPy array of floats (or integers, which
    carry no gradient)."""
    found = facts.value(base)
    if found.kind != "array" or found.backend is not None:
        raise facts.parsed.error(
            f"{what}(a, ...) of {described(found)}: followed on NumPy arrays only", node,
            "Make the array with NumPy first (`y = np.zeros(n)`).")
    if found.complex or facts.value(value).complex:
        raise facts.parsed.error(
            f"{what}() of complex values: complex numbers are not differentiated", node,
            "Work with the real and imaginary parts as separate real arrays.")


def check_output(facts: Facts, region: gast.Subscript, value: gast.expr,
                 stmt: gast.stmt) -> None:
    """``np.multiply(a, b, out=y)`` is followed as ``y[...] = np.multiply(a, b)``: right where
    NumPy casts the result into y as an element write does, so not for a result of floats
    into an array of integers (a ufunc raises, a reduction truncates)."""
    base = region.value
    if facts.is_int_array(base.id) and facts.value(value).float:
        raise facts.parsed.error(
            "out= names an array of integers for a result of floats: NumPy refuses the "
            "cast (a ufunc raises) or truncates the values, which carry no gradient", stmt,
            "Make the out array of floats (`y = np.zeros(n)`), or assign the result to a "
            "name: `y = np.multiply(a, b)`.")


def check_iterable(facts: Facts, atom: gast.expr, stmt: gast.stmt) -> None:
    """A loop over the items of ``atom`` is compiled as reads of atom[0], atom[1], ...:
    right for arrays, lists and tuples, not for what iterates otherwise (a set, an object
    with its own __iter__). A dict's loop goes through its keys (``spreads.site`` asked
    for them before this check)."""
    value = facts.value(atom)
    if value.kind in ("array", "scalar") or is_sequence(value) or value.type in (
            ShapeTuple, str, range):
        return
    if value.kind == "object" and value.type is object:
        return  # nothing is known: an array from a call without a rule, most often
    what = described(value)
    hint = "Loop over a list or an array of the items."
    raise facts.parsed.error(
        f"a loop over {what}: loops are compiled as reads of its items by position, "
        "which is what Python does for arrays, lists and tuples only", stmt, hint)

def check_spread(facts: Facts, atom: gast.expr, count: int, stmt: gast.stmt) -> None:
    """``zip(*xs)`` in a loop is compiled for as many sequences as its target unpacks,
    read as xs[0], xs[1], ...: right only where xs is known here to hold that many (a
    tuple a rule returned, a tuple or list argument, a display)."""
    value = facts.value(atom)
    if is_sequence(value) and value.items is not None:
        if len(value.items) == count:
            return
        raise facts.parsed.error(
            f"zip(*...) passes {len(value.items)} sequences here, and the loop unpacks "
            f"{count} names (Python raises a ValueError)", stmt,
            "Unpack one name per sequence.")
    raise facts.parsed.error(
        f"zip(*...) of {described(value)}: how many sequences it passes is not known when "
        "compiling, and the loop is compiled for a fixed number of them", stmt,
        "Pass the sequences by name, e.g. `for w, v in zip(vals, vecs.T):`.")

def check_unpack(facts: Facts, atom: gast.expr, count: int, stmt: gast.stmt) -> None:
    """``a, b = t`` is compiled as ``a = t[0]; b = t[1]``: where t's length is known here
    and is not the number of names, Python raises a ValueError, so it is refused."""
    value = facts.value(atom)
    size = None
    if is_sequence(value) and value.items is not None:
        size = len(value.items)
    elif value.type is ShapeTuple and value.ndim is not None:
        size = value.ndim
    if size is not None and size != count:
        raise facts.parsed.error(
            f"{count} names unpack {size} values here (Python raises a ValueError)", stmt,
            "Give as many names as values.")


def refuse_boolean_index(facts: Facts, index: Any, node: gast.AST) -> None:
    """``y[True]`` adds an axis of length 1 (or 0), unlike an int: not followed."""
    if any(syntax.is_const(a) and isinstance(a.value, bool) for a in index_atoms(index)):
        raise facts.parsed.error(
            "a scalar True/False as an index (it adds an axis, as None does, and selects "
            "all or nothing): not differentiated", node,
            "Index with y[None] or y[np.newaxis], or with a boolean array mask.")

def refuse_out(facts: Facts, prim: Any, args: list, keywords: dict, node: gast.AST) -> None:
    """An output array passed by position (np.clip(y, 0, 1, y), np.floor(y, y)) is
    written in place, as ``out=`` is: refused the same way."""
    out = None
    if isinstance(prim, np.ufunc):
        out = args[prim.nin] if len(args) > prim.nin else None
    else:
        rule = registry.lookup(prim)
        try:
            signature = inspect.signature(rule.template if rule is not None else prim)
            params = list(signature.parameters)[2:] if rule is not None else None
            bound = (inspect.Signature([signature.parameters[p] for p in params])
                     if params is not None else signature).bind_partial(*args, **keywords)
            out = bound.arguments.get("out")
        except (TypeError, ValueError):
            return
    if out is not None and not (syntax.is_const(out) and out.value is None):
        raise facts.parsed.error(
            "an output array passed by position: it is written in place, which the "
            "gradient cannot follow", out, "Assign the result instead: "
            "`y = np.clip(y, lo, hi)`.")

def check_array_operands(facts: Facts, rule: Rule, bindings: dict, diff_params: tuple,
                         what: str, node: gast.AST) -> None:
    """The library's rules take arrays and numbers where they differentiate; NumPy
    converts a list or tuple there, the rules do not: such a call is refused unless
    the rule is one of those that take a sequence (np.stack, np.array, sum, ...) or reads
    an item of a container (its operands are containers and items: d.get)."""
    module = getattr(rule.template, "__module__", "") or ""
    if not module.startswith("s2sgrad.") or _takes_sequences(rule.primitive) or \
            rule.shape == "item":
        return
    every = [a for value in bindings.values()
             for a in (value if isinstance(value, tuple) else (value,))]
    if not any(facts.is_varied(a) for a in every):
        return  # a constant call (np.diag([1.0, 2.0])): no rule is used, NumPy converts
    atoms = [a for p in diff_params for a in (
        bindings[p] if isinstance(bindings.get(p), tuple) else (bindings.get(p),))]
    for atom in atoms:  # the atoms of a *args parameter one by one
        if isinstance(atom, gast.expr) and is_sequence(facts.value(atom)):
            symbol = SYMBOLS.get(rule.primitive)
            where = f"'{symbol}'" if symbol else f"{what}()"
            error = facts.parsed.error(
                f"{where} of {described(facts.value(atom))}: NumPy converts it to an "
                "array, the derivative rule does not", node,
                "Make the array explicitly: np.array([...]) (or np.stack([...]) of "
                "arrays).")
            site = conversion_site(facts, node, atom)
            if site is None:
                raise error
            raise NeedsArray(site, error)


class NeedsArray(Exception):
    """A differentiated list or tuple passed where NumPy converts it to an array (``np.mean
    (losses)``): normalize writes the conversion, ``np.asarray(losses)``, at ``site``, and
    the analysis runs again; ``error`` is the refusal where it cannot (see
    ``pipeline.front_passes``)."""

    def __init__(self, site: tuple, error: Exception):
        super().__init__(str(error))
        self.site = site
        self.error = error


def conversion_site(facts: Facts, call: gast.AST, atom: gast.expr) -> tuple | None:
    """Where ``atom`` is passed in the user's call: the call's source span and the argument's
    position or keyword (``normalize`` finds the call there); None for an atom a ``*xs``
    spreads, or a call the compiler made. An operator converts a list only where its other
    operand is an array (``x * [1.0, 2.0]``; ``2.0 * [a, b]`` is Python's TypeError)."""
    span = tuple(getattr(call, a, None) for a in (
        "lineno", "col_offset", "end_lineno", "end_col_offset"))
    if span[0] is None:
        return None
    if isinstance(call, gast.BinOp):
        other = call.right if atom is call.left else call.left
        if (atom is call.left or atom is call.right) and facts.value(other).kind == "array":
            return span + ("left" if atom is call.left else "right",)
        return None
    if not isinstance(call, gast.Call):
        return None
    for i, arg in enumerate(call.args):
        if arg is atom:
            return span + (i,)
    for k in call.keywords:
        if k.value is atom and k.arg is not None:
            return span + (k.arg,)
    return None

def refuse_container_method(facts: Facts, owner: Abstract, attr: str, node: gast.AST) -> None:
    kind = owner.type.__name__
    if attr not in _MUTATING.get(owner.type, ()):
        return
    hint = {"extend": "Write `xs = xs + ys`.", "insert": "Build a new list: "
            "`xs = xs[:i] + [v] + xs[i:]`.", "update": "Build a new dict."}.get(
        attr, "Build a new list or dict instead of changing this one.")
    raise facts.parsed.error(
        f"{kind}.{attr}() changes the {kind} in place, which the gradient cannot follow",
        node, hint)

def refuse_transform(facts: Facts, resolved: Any, node: gast.AST) -> None:
    """A vjp, its pullback or ``grad`` called inside the function being differentiated:
    higher order through them is not followed (``gradient`` and ``value_and_grad`` are)."""
    made = made_by_transform(resolved)
    module = getattr(resolved, "__module__", "") or ""
    name = getattr(resolved, "__name__", "")
    if made is None and module == "s2sgrad.api" and name in ("vjp", "grad"):
        made = f"s2sgrad.{name}"
    if made is not None:
        raise facts.parsed.error(
            f"this calls {made} inside the function being differentiated: a derivative "
            "through a vjp, its pullback, a jacobian or a hessian (higher order) is not "
            "followed", node,
            "Compute the inner derivative with s2sgrad.gradient or s2sgrad.value_and_grad "
            "(whose derivatives are), or outside the differentiated function.")


def member(what: str) -> str:
    """'the method .step()' or 'the attribute .theta', for a message."""
    return f"the method {what}" if what.endswith(")") else f"the attribute {what}"


def unsupported_call(what: str, prim: Any) -> tuple[str, str] | None:
    """Why a call without a rule that receives a differentiated value is refused, and what
    to write instead; None for functions known not to change their arguments (print,
    np.isfinite), which are refused only where their result is used."""
    if what.startswith(".") and not what.endswith(")"):  # an attribute of an unknown value
        return ((f"the attribute {what} of a value whose class is not known when compiling "
                 "(an object a called function made and returned, or read from another "
                 "object) holds a differentiated value, which the gradient cannot follow "
                 "into the object"),
                ("Return the values themselves (a tuple or a dict) from the function that "
                 "makes the object, or make the object in the differentiated function."))
    if what.startswith("."):  # a method of a value of unknown class
        return ((f"{member(what)} of a value whose class is not known when compiling "
                "receives a differentiated value: it has no derivative rule, and it may "
                "change its arguments in place"),
                "Call a function with a derivative rule, or a method of an argument's class.")
    if _is_pure(prim):
        return None
    short = short_name(what)
    if what.startswith(("numpy.fft.", "scipy.fft.", "scipy.fftpack.")):
        return ((f"no derivative rule for {what}, which receives a differentiated value: "
                 "of the Fourier transforms, np.fft's fft, ifft, rfft, irfft, their 2-d and "
                 "n-d forms and fftshift/ifftshift have one"),
                ("Call one of those (np.fft.fft for scipy.fft.fft), or register a rule with "
                 f"@s2sgrad.vjp_rule({short}, complex='complex')."))
    package = installed_package(unwrap(prim)) if prim is not None else None
    if package is not None:  # a package's function with source, not entered
        top = package.split(".")[0]
        return ((f"no derivative rule for {what}, which receives a differentiated value: "
                 f"it belongs to '{top}' (an installed package, or Python's standard "
                 "library), whose source is not differentiated"),
                (f"Register a rule with @s2sgrad.vjp_rule({short}), or, to differentiate "
                 f"through its source, call s2sgrad.differentiate_through('{top}') first."))
    return ((f"no derivative rule for {what}, which receives a differentiated value: it has "
            "no gradient, and it may change its arguments in place, which the gradient "
            "cannot follow"),
            (f"Register a rule with @s2sgrad.vjp_rule({short}) (or declare "
            f"s2sgrad.nondifferentiable({short}) if it changes nothing), use a function with "
            "a rule (np.sort(x) rather than x.sort()), or move the call outside the "
            "differentiated function."))


def short_name(what: str) -> str:
    return what.replace("numpy.", "np.")


def index_atoms(index: Any) -> list:
    """The atoms an index reads: its items, and a slice's bounds."""
    if isinstance(index, gast.Tuple):
        return [a for e in index.elts for a in index_atoms(e)]
    if isinstance(index, gast.Slice):
        return [getattr(index, k) for k in ("lower", "upper", "step")
                if getattr(index, k) is not None]
    return [index]


SYMBOLS = {getattr(operator, op): symbol for op, symbol in (
    ("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"),
    ("mod", "%"), ("pow", "**"), ("matmul", "@"), ("lshift", "<<"), ("rshift", ">>"),
    ("and_", "&"), ("or_", "|"), ("xor", "^"))}

# Methods that change a list or dict in place (append is followed: see normalize).
_MUTATING = {list: ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                    "__setitem__", "__delitem__", "__iadd__", "__imul__"),
             dict: ("update", "pop", "popitem", "setdefault", "clear", "__setitem__",
                    "__delitem__")}

# Primitives whose rules take a tuple or list of values (one contribution per item).
_TAKES_SEQUENCES = frozenset({np.stack, np.concatenate, sum, containers.concat,
                              containers.repeat, np.array, np.asarray, np.asanyarray,
                              np.ascontiguousarray, np.hstack, np.vstack, np.dstack,
                              np.column_stack, np.select,
                              *filter(None, [getattr(np, "row_stack", None)])})
# The same among scipy's, by module and name, read once the module is imported (a program
# holds one only then): cho_solve((c, lower), b), the factor and its flag as cho_factor
# returns them; odeint(func, y0, t, args=(k, w)), the parameters of func.
_SCIPY_TAKES_SEQUENCES = (("scipy.linalg", "cho_solve"), ("scipy.integrate", "odeint"))


def _takes_sequences(prim: Any) -> bool:
    if prim in _TAKES_SEQUENCES:
        return True
    for module, name in _SCIPY_TAKES_SEQUENCES:
        found = sys.modules.get(module)
        if found is not None and getattr(found, name, None) is prim:
            return True
    return False


# Functions without a rule known not to change their arguments: a call of one on a
# differentiated value is refused only where its result is used.
_PURE = frozenset({
    print, isinstance, type, id, str, repr, format, hash, bool, hasattr, callable, len,
    np.shape, np.ndim, np.size, np.allclose, np.isclose, np.array_equal, np.array_equiv,
    np.any, np.all, np.isfinite, np.isnan, np.isinf, np.iscomplexobj, np.isrealobj,
    np.may_share_memory, np.shares_memory, np.ndarray.any, np.ndarray.all, np.ndarray.item,
    np.ndarray.tolist, np.array2string, np.array_repr, np.array_str, np.result_type})


def _is_pure(prim: Any) -> bool:
    try:
        return prim in _PURE or isinstance(prim, np.ufunc)
    except TypeError:
        return False
