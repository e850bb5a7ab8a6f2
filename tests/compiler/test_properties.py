"""Property: random programs with control flow differentiate like finite differences say.

hypothesis builds small programs: straight-line arithmetic on arrays of shape (3,) and
floats, if/elif/else on data-dependent conditions, for loops over range(k) and over a
run-time range(n), while loops with a counter and a data-dependent stop, break/continue,
element writes (``Features.ufunc_writes``: also np.add.at, np.subtract.at and out=),
(``Features.values``) a decorated function, decorated helpers, functions
passed as values or read from a dict, tuple and list + and *, np.s_/np.index_exp
indices, lists and tuples where NumPy converts them to arrays (``np.var([s, t])``), and a
list of pairs grown by appends whose items are read (``ps[-1][0]``), (``Features.objects``)
objects of a user class built in the function, returned by a factory and held in a global
list, their methods and a property called and an attribute set, (``Features.callees``)
arguments passed by keyword, in any order, to a helper
and to nested functions and lambdas whose defaults read a variable the function then
rebinds (the default keeps the value it had at the def) and whose bodies read another
(a closure: its value at the call), and to helpers that take a nested function or a
lambda closing over a variable (called, or looped over in a tuple), (``Features.views``) views held under a name of
their own (einsum relabellings and diagonals, reshapes, transposes, np.diagonal) with
element writes through the view or its base, (``Features.storage``) a dict, a list
and an object holding arrays that names hold too (and names holding one array), updated in
place through each, and arrays made in each iteration of a loop, written into, then
rotated into the names (``a0, a1 = a1, r1``), and (``Features.blocks``) ``with
np.errstate(...)`` blocks around any statements and try/except around assignments, whose
body raises KeyError (a key of a dict missing) or not, and whose handler assigns what the
body does.
Every value stays tame by construction: each assignment is a tanh/sin/cos of
a small combination, or a short contraction, so no division, no log, no overflow. The
program is written to a .py file (the compiler reads source), imported, and compared with
central finite differences by ``check_grads`` with respect to every float input, and its
forward value with Python's. A program with views may instead be refused, with a
TransformError at a line of its own file (a read that would see a write made through
another name), never differentiated as if the write were not seen.

Branch boundaries are kinks: a probe twin of each program (the same source, each condition
``lhs > c`` wrapped as ``_probe(lhs, c)``) records how far every evaluated condition is
from its threshold, and points closer than ``MARGIN`` are rejected with ``assume``.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

import s2sgrad
from s2sgrad.testing import check_grads

MARGIN = 1e-3
ARRAYS = ("a0", "a1", "a2")
SCALARS = ("s0", "s1")
# S2SGRAD_PROPERTY_EXAMPLES=N runs N programs a test, drawn afresh each run (a long run,
# outside the suite); the suite's runs are the same 20 every time (70 with S2SGRAD_TESTS=full)
_LONG = int(os.environ.get("S2SGRAD_PROPERTY_EXAMPLES", "0"))
_FULL = os.environ.get("S2SGRAD_TESTS") == "full"
SETTINGS = settings(max_examples=_LONG or (70 if _FULL else 20), deadline=None, derandomize=not _LONG,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
# the families that run programs of a reverse-mode family again in another mode: fewer in the
# default tier (each program compiles a derivative per argument there)
OTHER_MODE = None if _LONG or _FULL else 8

# --- programs ------------------------------------------------------------------------------


@dataclass
class Features:
    """Which constructs a program may contain."""

    branches: bool = True
    loops: bool = True
    run_time_range: bool = True
    while_loops: bool = True
    jumps: bool = True  # break / continue (data-dependent)
    writes: bool = True  # a[k] = scalar at the top level and in plain loops
    writes_in_branches: bool = False  # and inside an if, or in a loop with break/continue
    # writes as NumPy's calls: np.add.at / np.subtract.at (repeated positions add) and out=
    ufunc_writes: bool = False
    # decorated functions, functions passed as values, tuple/list + and *, index objects
    values: bool = False
    # a dict, a list and an object holding arrays that names hold too, and augmented
    # updates through names, slots, attributes and a method's self (refusals allowed)
    storage: bool = False
    # keyword arguments to a helper; nested functions and lambdas with defaults, called
    callees: bool = False
    # m0 (3x3), v0 (a writable view of m0 or of an array, or an einsum that computes), d0
    # (np.diagonal(m0), a read-only view, or a multiple of it) and element writes into m0
    # and v0
    views: bool = False
    # for and while loops with an else; star-unpacking of tuples, lists and arrays
    # (``h, *hs = ...``); starred and ** arguments (``spread3(*args)``, ``spread3(**kw)``);
    # dicts built by dict(...), {**d, ...} and comprehensions, looped over by key
    # (``for k in d``, ``enumerate(d)``, ``d.items()``), and chained assignment
    spreads: bool = False
    # with np.errstate(...) blocks; try/except KeyError around assignments
    blocks: bool = False
    # objects of a user class: built here, returned by a factory, held in a global list
    # (their methods and a property read, their attributes set)
    objects: bool = False


@dataclass
class Scope:
    loop_vars: list[str] = field(default_factory=list)
    in_loop: bool = False
    jumps_here: bool = False  # this loop body has break/continue
    in_branch: bool = False
    values: bool = False  # Features.values
    storage: bool = False  # Features.storage
    callees: bool = False  # Features.callees
    views: bool = False  # Features.views
    blocks: bool = False  # Features.blocks
    objects: bool = False  # Features.objects


# What programs with Features.values call: a decorator that adds a penalty (wraps, passing
# *args and **kwargs on), a decorated helper, a function taking a function, a dict of
# activations read by a constant key.
PRELUDE = """import functools

import numpy as np


def penalised(lam):
    def deco(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            return f(*args, **kwargs) + lam * np.sum(args[0] ** 2)
        return wrapper
    return deco


def scaled(c):
    def deco(f):
        def wrapper(u, v):
            return c * f(u, v)
        return wrapper
    return deco


@scaled(0.5)
def helper(u, v):
    return np.tanh(u * v)


def apply(fn, v):
    return fn(v)


ACTS = {"t": np.tanh, "s": np.sin, "c": np.cos}
"""

# What programs with Features.storage build: an object holding an array, whose method
# updates it in place through self.
STORAGE_PRELUDE = """

class Box:
    def __init__(self, w):
        self.w = w

    def damp(self, c):
        self.w *= c
"""


# What programs with Features.blocks look keys up in: a missing one raises KeyError.
BLOCKS_PRELUDE = """

SCALES = {"p": 0.5, "q": -0.3}
"""


# What programs with Features.callees call by keyword: a helper with defaults.
CALLEES = """

def mix(u, v, w=0.5, shift=0.0):
    return np.tanh(u * w + v * (1.0 - w)) + shift


def through(fn, v):
    return fn(v) * 0.5 + fn(0.5 * v)


def each(fns, v):
    total = 0.0
    for fn in fns:
        total = total + fn(v)
    return total
"""


# What programs with Features.objects use: a class, a factory that builds one, a global list
# of them (data the compiled code is specialised on).
OBJECTS = """

class Layer:
    def __init__(self, w, c):
        self.w, self.c = w, c

    def apply(self, v):
        return np.tanh(v * self.w + self.c)

    @property
    def half(self):
        return self.c * 0.5


def make_layer(w, c):
    return Layer(w, c)


LAYERS = [Layer(np.array([0.5, -0.3, 0.2]), 0.1), Layer(np.array([0.2, 0.4, -0.1]), -0.2)]
"""


# What programs with Features.spreads call with starred and ** arguments.
SPREADS = """

def spread3(u, v, w):
    return np.tanh(u * v) + 0.1 * w
"""


CONSTANTS = st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.7, -0.2, -0.4, -0.6])
THRESHOLDS = st.sampled_from([-0.6, -0.3, -0.1, 0.0, 0.2, 0.4, 0.7])
SLOTS = ('d["k"]', 'd["j"]', "xs[0]", "xs[1]", "box.w")  # Features.storage


@st.composite
def array_expr(draw, scope: Scope) -> str:
    a, b = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS))
    s = draw(st.sampled_from(SCALARS))
    c1, c2 = draw(CONSTANTS), draw(CONSTANTS)
    options = [
        f"np.tanh({c1} * {a} + {c2} * {b})",
        f"np.sin({a} * {b})",
        f"np.cos({a}) * {b}",
        f"{c1} * {a} + {c2} * np.tanh({b})",
        f"np.tanh({a} * {s} + {c1})",
        f"{a}[::-1] * {c1} + {s}",
        f"np.tanh({a} - np.mean({b}))",
    ]
    if scope.loop_vars:
        i = draw(st.sampled_from(scope.loop_vars))
        options.append(f"np.sin({a} + {c1} * {i})")
    if scope.values:
        key = draw(st.sampled_from(["t", "s", "c"]))
        fn = draw(st.sampled_from(["np.tanh", "np.sin", "helper_one"]))
        options += [
            f"np.sum(np.stack(({a}, {b}) + ({a},)), axis=0) * {c1}",
            f"np.mean(np.stack([{a}] * 2 + [{b} * {c1}]), axis=0)",
            f"np.stack(({a},) * 3)[1] * {c1} + {s}",
            f"ACTS['{key}']({a} * {c1})",
            f"apply({fn}, {a} * {c1})",
            f"helper({a}, {b}) + {c1}",
            f"{a}[np.s_[::-1]] * {c1} + {b}[np.index_exp[:]] * {c2}",
            f"ps[-1][0] * {c1} + {b}",  # an item of the grown list of pairs
            f"np.mean([{a}, {b} * {c1}], axis=0)",  # lists NumPy converts to arrays
            f"{a} * [{c1}, {c2}, 0.5] + {s}",
        ]
    if scope.callees:
        options += [
            f"mix({a}, {b}, shift={c1})",
            f"mix(v={b}, u={a}, w={s})",
            f"mix({a}, w={c1}, v={b}) * {s}",
        ]
    if scope.objects:
        k = draw(st.sampled_from([0, 1, -1]))
        options += [
            f"lay.apply({a}) * {c1} + {b}",
            f"made.apply({a} * {s}) + lay.half",
            f"LAYERS[{k}].apply({a}) * {c1}",
            f"np.tanh({a} * lay.w + made.c)",
        ]
    if scope.views:
        options += [
            f"np.tanh(v0 * {c1} + {a})",
            f"np.sin(d0 * {b}) * {c1}",
            f"np.einsum('ij,j->i', m0, {a}) * {c1}",
            f"np.tanh(np.einsum('ij->j', m0) * {c1})",
        ]
    return draw(st.sampled_from(options))


@st.composite
def scalar_expr(draw, scope: Scope) -> str:
    a, b = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS))
    s, t = draw(st.sampled_from(SCALARS)), draw(st.sampled_from(SCALARS))
    c1 = draw(CONSTANTS)
    options = [
        f"np.tanh(np.sum({a}) * {c1})",
        f"np.mean({a} * {b})",
        f"np.sin({s} * {c1} + {t})",
        f"{s} * {t} * {c1}",
        f"{c1} * {s} + np.sum(np.sin({a})) * 0.2",
        f"{a}[{draw(st.integers(0, 2))}] * {c1} + {s}",
    ]
    if scope.loop_vars:
        i = draw(st.sampled_from(scope.loop_vars))
        options.append(f"np.tanh({s} + {c1} * {i})")
    if scope.values:  # lists and tuples NumPy converts to arrays
        options += [f"ps[0][1] * {c1} + np.sum(ps[-1][0]) * 0.2",
                    f"np.var([{s}, {t} * {c1}, np.sum({a})])",
                    f"np.tanh(np.mean(({s}, np.sum({a} * {b}))))",
                    f"np.dot({a}, [0.2, -0.3, 0.5]) * {c1}"]
    if scope.views:
        k, j = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        options += [f"np.tanh(np.sum(v0) * {c1})", f"m0[{k}, {j}] * {c1} + {s}",
                    f"np.sin(np.sum(d0 * {a}) * {c1})"]
    return draw(st.sampled_from(options))


@st.composite
def condition(draw) -> tuple[str, str]:
    """(source, probe source) of a data-dependent condition."""
    a = draw(st.sampled_from(ARRAYS))
    s = draw(st.sampled_from(SCALARS))
    c1, c2 = draw(THRESHOLDS), draw(THRESHOLDS)
    lhs = draw(st.sampled_from([f"np.sum({a})", s, f"np.max({a})", f"np.mean({a} * {a})"]))
    kind = draw(st.sampled_from(["gt", "lt", "and", "or", "chain", "not"]))
    lo, hi = min(c1, c2), max(c1, c2) + 0.3
    if kind == "gt":
        return f"{lhs} > {c1}", f"_probe({lhs}, {c1})"
    if kind == "lt":
        return f"{lhs} < {c1}", f"not _probe({lhs}, {c1})"
    if kind == "and":
        return (f"{lhs} > {c1} and {s} < {c2}",
                f"_probe({lhs}, {c1}) and not _probe({s}, {c2})")
    if kind == "or":
        return (f"{lhs} > {c1} or {s} > {c2}", f"_probe({lhs}, {c1}) or _probe({s}, {c2})")
    if kind == "chain":
        return (f"{lo} < {lhs} < {hi}",
                f"_probe({lhs}, {lo}) and not _probe({lhs}, {hi})")
    return f"not {lhs} > {c1}", f"not _probe({lhs}, {c1})"


# A statement is a list of (indent, source, probe source) lines.
Lines = list[tuple[int, str, str]]


def _same(indent: int, text: str) -> Lines:
    return [(indent, text, text)]


@st.composite
def statement(draw, features: Features, scope: Scope, depth: int, counter: list[int]) -> Lines:
    kinds = ["assign_array", "assign_scalar", "accumulate"]
    writes_ok = features.writes and (features.writes_in_branches or not (
        scope.in_branch or scope.jumps_here))
    if writes_ok:
        kinds.append("write")
    if features.callees:
        kinds += ["nested", "closure"]
    if depth < 2:
        if features.branches:
            kinds += ["if", "if_elif"]
        if features.loops:
            kinds.append("for")
        if features.while_loops:
            kinds.append("while")
    if features.values:
        kinds.append("grow")
    if features.objects:
        kinds.append("set_attribute")
    if features.storage and depth == 0:  # (loops carrying containers: an increment)
        kinds += ["hold", "update", "update", "update"]
    if features.storage and scope.in_loop and writes_ok:
        kinds.append("rotate")
    if features.views:
        kinds += ["view", "matrix"] + (["write_view"] if writes_ok else [])
    if features.spreads:
        kinds += ["star", "spread", "mapping"]
    if features.blocks:
        kinds += ["try", "try"] + (["with"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "try":
        return draw(tried(scope))
    if kind == "with":
        setting = draw(st.sampled_from(['all="ignore"', 'divide="ignore", invalid="ignore"',
                                        'over="warn"']))
        inner_scope = dataclasses.replace(scope, loop_vars=list(scope.loop_vars))
        return [(0, f"with np.errstate({setting}):", f"with np.errstate({setting}):")] + \
            _indent(draw(block(features, inner_scope, depth + 1, counter)))
    if kind == "hold":  # a name and a slot, an attribute or another name hold one array
        a, b = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS))
        slot = draw(st.sampled_from(SLOTS))
        return _same(0, draw(st.sampled_from([f"{a} = {slot}", f"{slot} = {a}", f"{a} = {b}"])))
    if kind == "rotate":  # an array made in each iteration, written, then rotated in
        a, b = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS))
        counter[0] += 1
        made = f"r{counter[0]}"
        return (_same(0, f"{made} = np.tanh({b} * {draw(CONSTANTS)})")
                + _same(0, f"{made}[{draw(st.integers(0, 2))}] = {draw(scalar_expr(scope))}")
                + _same(0, draw(st.sampled_from([f"{a}, {b} = {b}, {made}",
                                                 f"{a} = {made}"]))))
    if kind == "update":  # an augmented update, in place on an array
        target = draw(st.sampled_from(SLOTS + ARRAYS))
        c1 = draw(CONSTANTS)
        return _same(0, draw(st.sampled_from([
            f"{target} += {c1} * np.tanh({draw(array_expr(scope))})",
            f"{target} -= {c1} * {draw(st.sampled_from(ARRAYS))}",
            f"{target} *= {c1}",
            f"{target} /= 1.5",
            f"box.damp({c1})"])))
    if kind == "grow":  # a pair appended: ps's length differs by path and iteration
        a, s = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(SCALARS))
        return _same(0, f"ps.append((np.tanh({a} * {draw(CONSTANTS)}), {s}))")
    if kind == "assign_array":
        return _same(0, f"{draw(st.sampled_from(ARRAYS))} = {draw(array_expr(scope))}")
    if kind == "assign_scalar":
        return _same(0, f"{draw(st.sampled_from(SCALARS))} = {draw(scalar_expr(scope))}")
    if kind == "accumulate":  # a contraction, so that loops stay tame
        s = draw(st.sampled_from(SCALARS))
        return _same(0, f"{s} = 0.5 * {s} + 0.3 * {draw(scalar_expr(scope))}")
    if kind == "write":
        a, b = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS))
        k, j, c1 = draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(CONSTANTS)
        forms = [f"{a}[{k}] = {draw(scalar_expr(scope))}"]
        if features.ufunc_writes:
            forms += [f"np.add.at({a}, [{k}, {j}, {k}], {draw(scalar_expr(scope))})",
                      f"np.subtract.at({a}, [{j}, {k}], {c1} * {b}[1:])",
                      f"np.tanh({draw(array_expr(scope))}, out={a})",
                      f"np.multiply({b}, {c1}, out={a})",
                      f"np.add({a}, {c1} * np.sin({b}), out={a})"]
        return _same(0, draw(st.sampled_from(forms)))
    if kind == "nested":
        return draw(nested_call(features, scope, counter))
    if kind == "set_attribute":  # an attribute of the object built here, set again
        return _same(0, f"lay.c = np.tanh(lay.c + {draw(scalar_expr(scope))})")
    if kind == "closure":
        return draw(closure_passed(scope, counter))
    if kind == "view":  # v0 made again, or d0 = np.diagonal(m0), a read-only view
        return _same(0, draw(st.sampled_from([f"v0 = {draw(made_view())}",
                                              "d0 = np.diagonal(m0)"])))
    if kind == "matrix":  # m0 made anew: the views made before still show the old one
        a, b = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS))
        return _same(0, draw(st.sampled_from([  # (np.diag of a vector: a new matrix)
            f"m0 = np.tanh(np.outer({a}, {b}) * {draw(CONSTANTS)})", f"m0 = np.diag({a})"])))
    if kind == "write_view":
        return _same(0, draw(write_view(scope)))
    if kind in ("star", "spread"):
        return draw(spread(kind, counter))
    if kind == "mapping":
        return draw(mapping(counter))
    inner = Scope(list(scope.loop_vars), scope.in_loop, scope.jumps_here, scope.in_branch,
                  scope.values, scope.storage, scope.callees, scope.views,
                  objects=scope.objects)
    if kind in ("if", "if_elif"):
        inner.in_branch = True
        test, probe = draw(condition())
        lines: Lines = [(0, f"if {test}:", f"if {probe}:")]
        lines += _indent(draw(block(features, inner, depth + 1, counter)))
        if kind == "if_elif":
            test, probe = draw(condition())
            lines.append((0, f"elif {test}:", f"elif {probe}:"))
            lines += _indent(draw(block(features, inner, depth + 1, counter)))
        if draw(st.booleans()):
            lines += _same(0, "else:")
            lines += _indent(draw(block(features, inner, depth + 1, counter)))
        return lines
    counter[0] += 1
    var = f"i{counter[0]}"
    inner.loop_vars.append(var)
    inner.in_loop = True
    inner.jumps_here = features.jumps and draw(st.booleans())
    body = draw(block(features, inner, depth + 1, counter))
    if inner.jumps_here:
        test, probe = draw(condition())
        jump = draw(st.sampled_from(["break", "continue"]))
        at = draw(st.integers(0, len(body)))
        guard = [(0, f"if {test}:", f"if {probe}:"), (1, jump, jump)]
        body = body[:at] + guard + body[at:] if _top_level(body, at) else body + guard
    if kind == "for":
        limit = draw(st.sampled_from(["n", "0", "1", "2", "3"] if features.run_time_range
                                     else ["0", "1", "2", "3"]))
        start = draw(st.sampled_from(["", "1, "]))
        lines = [(0, f"for {var} in range({start}{limit}):",
                  f"for {var} in range({start}{limit}):")] + _indent(body)
    else:
        limit = draw(st.sampled_from(["n", "2", "3"] if features.run_time_range else ["2", "3"]))
        test, probe = draw(condition())
        lines = _same(0, f"{var} = 0")
        lines.append((0, f"while {var} < {limit} and ({test}):",
                      f"while {var} < {limit} and ({probe}):"))
        lines += _indent(_same(0, f"{var} = {var} + 1") + body)
    if features.spreads and draw(st.booleans()):  # runs where no break ended the loop
        otherwise = Scope(list(scope.loop_vars), scope.in_loop, scope.jumps_here, True,
                          scope.values, scope.storage, scope.callees, scope.views,
                          objects=scope.objects)
        lines += _same(0, "else:") + _indent(draw(block(features, otherwise, depth + 1,
                                                        counter)))
    return lines


@st.composite
def spread(draw, kind: str, counter: list[int]) -> Lines:
    """Star-unpacking of a tuple, a list or an array (the starred name a list), or a call
    with starred or ** arguments, its result mixed into an array or a number."""
    counter[0] += 1
    k = counter[0]
    a, b, c = (draw(st.sampled_from(ARRAYS)) for _ in range(3))
    target, s = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(SCALARS))
    c1 = draw(CONSTANTS)
    if kind == "star":
        return draw(st.sampled_from([
            _same(0, f"h{k}, *hs{k} = ({a}, {b} * {c1}, {c})")
            + _same(0, f"{target} = 0.5 * h{k} + 0.3 * hs{k}[-1] * len(hs{k})"),
            _same(0, f"*hs{k}, h{k} = [{a}, np.sin({b})]")
            + _same(0, f"{target} = 0.5 * {target} + 0.3 * np.sum(np.array(hs{k} + [h{k}]), "
                       "axis=0)"),
            _same(0, f"e{k}, *es{k}, z{k} = {a}")
            + _same(0, f"{s} = 0.5 * {s} + 0.3 * (e{k} * {c1} + sum(es{k}) - z{k})"),
            _same(0, f"e{k}, *es{k} = {a} * {s}")
            + _same(0, f"{target} = 0.5 * {target} + 0.3 * e{k} * np.array(es{k} + [{c1}])"),
        ]))
    call = draw(st.sampled_from([
        f"spread3(*({a}, {b}, {c1}))", f"spread3({a}, *[{b}, {s}])",
        f"spread3(*args{k})", f"spread3({a}, **kw{k})", f"np.hypot(*({a}, 1.0 + {b} ** 2))"]))
    lines = _same(0, f"args{k} = ({a}, {c}, {s})") if f"args{k}" in call else []
    if f"kw{k}" in call:
        lines = _same(0, f'kw{k} = {{"w": {s}, "v": {b}}}')
    return lines + _same(0, f"{target} = 0.5 * {target} + 0.3 * {call}")


@st.composite
def mapping(draw, counter: list[int]) -> Lines:
    """A dict of arrays and numbers built in one of Python's forms, then looped over by key
    (the loop unrolled over its keys, in their order), or its items bound by a chained
    assignment."""
    counter[0] += 1
    k = counter[0]
    a, b, c = (draw(st.sampled_from(ARRAYS)) for _ in range(3))
    target, s = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(SCALARS))
    c1, c2 = draw(CONSTANTS), draw(CONSTANTS)
    built = draw(st.sampled_from([
        f'd{k} = {{"p": {a}, "q": {b} * {c1}, "r": {s}}}',
        f'd{k} = dict(p={a}, q=np.sin({b}), r={s})',
        f'd{k} = dict({{"p": {a}}}, q={b} * {c1}, r={s})',
        f'd{k} = {{**{{"p": {a}, "r": {s}}}, "q": {b} + {c1}}}',
        f'd{k} = dict(zip(("p", "q", "r"), ({a}, {b}, {s} * {c1})))',
        f'd{k} = {{key: v * {c1} for key, v in {{"p": {a}, "q": {b}, "r": {s}}}.items()}}',
    ]))
    loop = draw(st.sampled_from([
        [f"for key{k} in d{k}:",
         f"    {target} = 0.5 * {target} + {c2} * np.tanh(d{k}[key{k}])"],
        [f"for i{k}, key{k} in enumerate(d{k}):",
         f"    {target} = 0.5 * {target} + {c2} * (i{k} + 1.0) * d{k}[key{k}]"],
        [f"for key{k}, v{k} in d{k}.items():",
         f'    {target} = {target} * 0.5 + (np.sin(v{k}) if key{k} != "r" else {c2} * v{k})'],
        [f"{s} = t{k} = {c2} * np.sum(d{k}['q']) + d{k}['r']",
         f"{target} = {target} * 0.5 + t{k} * d{k}['p']"],
    ]))
    return [(1 if line.startswith("    ") else 0, line.strip(), line.strip())
            for line in [built] + loop]


@st.composite
def tried(draw, scope: Scope) -> Lines:
    """try/except KeyError around assignments, one of them reading SCALES[key] (a missing
    key raises, before or after the others); the handler assigns each name the body does,
    from the parameters only (it reads nothing the body may have assigned)."""
    targets = draw(st.lists(st.sampled_from(ARRAYS + SCALARS), min_size=1, max_size=3,
                            unique=True))
    key = draw(st.sampled_from(["p", "q", "r"]))  # "r" is missing: the handler runs
    body = []
    for t in targets:
        value = draw(array_expr(scope) if t in ARRAYS else scalar_expr(scope))
        body.append(f"{t} = {value}")
    at = draw(st.integers(0, len(body) - 1))
    body[at] += f' * SCALES["{key}"]'
    handler = []
    for t in targets:
        c = draw(CONSTANTS)
        handler.append(f"{t} = np.tanh(x * {c})" if t in ARRAYS else f"{t} = {c} * s")
    lines: Lines = _same(0, "try:") + _indent([(0, b, b) for b in body])
    lines += _same(0, "except KeyError:") + _indent([(0, h, h) for h in handler])
    return lines


@st.composite
def nested_call(draw, features: Features, scope: Scope, counter: list[int]) -> Lines:
    """A nested def (or a lambda) whose default reads a variable, that variable rebound
    after the def, and calls of the function, by position and by keyword: Python's default
    is the value at the def; its body's other variable is read at the call. (A default
    reads a number where element writes may follow: an array would be written through.)"""
    counter[0] += 1
    name = f"g{counter[0]}"
    captured = draw(st.sampled_from(SCALARS if features.writes else SCALARS + ARRAYS))
    free = draw(st.sampled_from(ARRAYS))
    c1, c2 = draw(CONSTANTS), draw(CONSTANTS)
    body = f"np.tanh(v * k + {c1} * {free})"
    form = draw(st.sampled_from(["lambda", "def", "None"]))
    if form == "lambda":
        lines = _same(0, f"{name} = lambda v, k={captured}: {body}")
    elif form == "def":
        lines = _same(0, f"def {name}(v, k={captured}):") + _same(1, f"return {body}")
    else:  # k=None, set in the body (an if that one call may take and the other not)
        lines = (_same(0, f"def {name}(v, k=None):") + _same(1, "if k is None:")
                 + _same(2, f"k = {captured}") + _same(1, f"return {body}"))
    lines += _same(0, f"{captured} = np.sin({captured}) * 0.5 + {c2}")
    a, target = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS))
    s = draw(st.sampled_from(SCALARS))
    call = draw(st.sampled_from([f"{name}({a})", f"{name}(v={a})", f"{name}(k={s}, v={a})",
                                 f"{name}({a}, k={c1})"]))
    if form == "None" and draw(st.booleans()):  # called both ways
        call += f" - 0.2 * {name}({draw(st.sampled_from(ARRAYS))}, {s})"
    return lines + _same(0, f"{target} = 0.5 * {call} + 0.3 * {target}")


@st.composite
def closure_passed(draw, scope: Scope, counter: list[int]) -> Lines:
    """A nested def or a lambda closing over a variable assigned once (in a loop or a
    branch too), passed to a helper that calls it (``through``), or with another function
    in a tuple the helper loops over (``each``, unrolled for the two): the helper is
    compiled for it, and the gradient reaches what it closes over."""
    counter[0] += 1
    name, captured = f"g{counter[0]}", f"k{counter[0]}"
    c1 = draw(CONSTANTS)
    lines = _same(0, f"{captured} = {draw(array_expr(scope))}")
    body = f"np.tanh(v * {captured} + {c1})"
    if draw(st.booleans()):
        lines += _same(0, f"def {name}(v):") + _same(1, f"return {body}")
        fn = name
    else:
        fn = f"lambda v: {body}"
    a, target = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS))
    call = draw(st.sampled_from([f"through({fn}, {a})", f"each(({fn}, np.sin), {a})"]))
    return lines + _same(0, f"{target} = 0.5 * {call} + 0.3 * {target}")


@st.composite
def write_view(draw, scope: Scope) -> str:
    """An element write through v0, or into m0, the matrix views are made of."""
    k, j = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    target = draw(st.sampled_from([f"v0[{k}]", f"m0[{k}, {j}]"]))
    return f"{target} = {draw(scalar_expr(scope))}"


@st.composite
def made_view(draw) -> str:
    """A writable view of m0 or of an array, of shape (3,), or an einsum that computes."""
    a, k = draw(st.sampled_from(ARRAYS)), draw(st.integers(0, 2))
    return draw(st.sampled_from([
        "np.einsum('ii->i', m0)", f"np.einsum('ij->ji', m0)[{k}]", f"np.einsum('ji', m0)[{k}]",
        f"m0.T[{k}]", f"np.reshape(m0, 9)[{3 * k}:{3 * k + 3}]", f"np.transpose({a})",
        f"{a}.reshape(3)", f"np.einsum('i->i', {a})", f"{a}.reshape(1, 3)[0]",
        "np.einsum('ij->i', m0)", f"np.einsum('ij,j->i', m0, {a})"]))


def _top_level(body: Lines, at: int) -> bool:
    """Does a statement of the block start at line ``at`` (not an elif, else or except of
    the statement before it)?"""
    return at == len(body) or body[at][0] == 0 and not body[at][1].startswith(
        ("elif ", "else:", "except"))


def _indent(lines: Lines) -> Lines:
    return [(k + 1, text, probe) for k, text, probe in lines]


@st.composite
def block(draw, features: Features, scope: Scope, depth: int, counter: list[int]) -> Lines:
    count = draw(st.integers(1, 3 if depth else 5))
    lines: Lines = []
    for _ in range(count):
        lines += draw(statement(features, scope, depth, counter))
    return lines


@st.composite
def program(draw, features: Features) -> tuple[str, str]:
    """(source, probe source) of ``f(x, y, s, n)`` and ``f_probe(x, y, s, n)``."""
    scope = Scope(values=features.values, storage=features.storage, callees=features.callees,
                  views=features.views, blocks=features.blocks, objects=features.objects)
    counter = [0]
    body = draw(block(features, scope, 0, counter))
    if features.views:  # a write through either name, then more statements
        body += _same(0, draw(write_view(scope))) + draw(block(features, scope, 0, counter))
    a, b, c = draw(st.sampled_from(ARRAYS)), draw(st.sampled_from(ARRAYS)), draw(
        st.sampled_from(ARRAYS))
    result = f"np.sum({a} * {b}) + np.sum({c}) * s0 + s1"
    head = ["a0 = np.tanh(x)", "a1 = np.sin(y)", "a2 = x * y * 0.5", "s0 = np.tanh(s)",
            "s1 = 0.5 * s"]
    if features.values:  # a list of pairs, grown by appends (its length known at run time)
        head += ["ps = [(a0, s0)]"]
    if features.storage:
        head += ['d = {"k": a0 * 1.0, "j": np.cos(x)}', "xs = [a1 * 1.0, np.sin(x * y)]",
                 "box = Box(np.tanh(y) * 0.5)"]
        slot = draw(st.sampled_from(SLOTS))
        result += f" + np.sum({slot} * {draw(st.sampled_from(ARRAYS))})"
    if features.objects:  # one built here, one a factory returns
        head += ["lay = Layer(np.tanh(x) * 0.5, s0)", "made = make_layer(a1 * 0.3, 0.2)"]
    if features.views:
        head += ["m0 = np.outer(a0, a1) * 0.5", f"v0 = {draw(made_view())}",
                 draw(st.sampled_from(["d0 = np.diagonal(m0)", "d0 = np.diagonal(m0) * 0.5"]))]
        result += draw(st.sampled_from(["", " + 0.1 * np.sum(m0)", f" + np.sum(v0 * {a})",
                                        " + np.sum(d0) * s1"]))

    decorated = features.values and draw(st.booleans())

    def render(name: str, probe: bool) -> str:
        out = ["@penalised(0.1)"] if decorated and not probe else []
        out += [f"def {name}(x, y, s, n):"]
        out += [f"    {line}" for line in head]
        out += ["    " * (k + 1) + (p if probe else t) for k, t, p in body]
        out.append(f"    return {result}")
        return "\n".join(out)

    source = render("f", False)
    prelude = [PRELUDE, "", "def helper_one(v):", "    return np.tanh(v) * 0.5 + 0.1"] \
        if features.values else ["import numpy as np"]
    if features.storage:
        prelude.append(STORAGE_PRELUDE)
    prelude += [CALLEES] if features.callees else []
    prelude += [SPREADS] if features.spreads else []
    prelude += [OBJECTS] if features.objects else []
    prelude += [BLOCKS_PRELUDE] if features.blocks else []
    return source, "\n".join(prelude + ["", "", source, "", "", render("f_probe", True), ""])


# --- running them ----------------------------------------------------------------------------

_DIR = Path(tempfile.mkdtemp(prefix="s2sgrad_properties_"))


def _load(text: str):
    """Write the module to its own file (the compiler reads source) and import it."""
    name = "prop_" + hashlib.sha1(text.encode()).hexdigest()[:16]
    path = _DIR / f"{name}.py"
    if not path.exists():
        path.write_text(text)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def _margins(module, args) -> list[float]:
    seen: list[float] = []

    def probe(lhs, c):
        seen.append(abs(float(lhs) - c))
        return lhs > c

    module._probe = probe
    module.f_probe(*args)
    return seen


@st.composite
def inputs(draw) -> tuple:
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(0, 3))
    return (rng.standard_normal(3), rng.standard_normal(3), float(rng.standard_normal()), n)


def _check(text: str, args: tuple, modes: tuple = ("rev",), order: int = 1,
           outcomes: list[str] | None = None) -> None:
    """The program's value and derivatives are Python's and finite differences'; with
    ``outcomes``, it may instead be refused at a line of its own file (each program's
    outcome is appended there)."""
    module = _load(text)
    margins = _margins(module, args)
    assume(not margins or min(margins) > MARGIN)
    x, y, s, n = args
    before = [x.copy(), y.copy()]
    try:
        value, grads = s2sgrad.value_and_grad(module.f, wrt=(0, 1, 2))(x, y, s, n)
    except s2sgrad.TransformError as error:
        if outcomes is None:
            raise
        assert error.filename == module.__file__, (error.filename, str(error))
        assert np.array_equal(x, before[0]) and np.array_equal(y, before[1])
        outcomes.append("refused: " + str(error).splitlines()[0])
        return
    assert np.array_equal(x, before[0]) and np.array_equal(y, before[1]), "inputs modified"
    expected = module.f(x.copy(), y.copy(), s, n)
    assert np.isclose(value, expected, rtol=1e-12, atol=1e-12), (value, expected)
    assert [np.shape(g) for g in grads] == [(3,), (3,), ()]
    check_grads(module.f, x, y, s, n, wrt=[0, 1, 2], modes=modes, order=order)
    if outcomes is not None:
        outcomes.append("differentiated")


def _run(features: Features, shrink: bool = True, modes: tuple = ("rev",), order: int = 1,
         examples: int | None = None, outcomes: list[str] | None = None):
    chosen = SETTINGS if examples is None else settings(SETTINGS, max_examples=examples)

    @settings(chosen, phases=tuple(Phase) if shrink else (Phase.explicit, Phase.generate))
    @given(source=program(features), args=inputs())
    def run(source: tuple[str, str], args: tuple) -> None:
        _check(source[1], args, modes, order, outcomes)
    return run


def test_straight_line_and_branches():
    _run(Features(loops=False, while_loops=False, jumps=False, writes=False))()


def test_loops_branches_and_jumps():
    _run(Features(writes=False))()


def test_with_element_writes():
    _run(Features())()


def test_with_element_writes_add_at_and_out():
    _run(Features(ufunc_writes=True))()


def test_writes_in_branches_and_jumping_loops():
    _run(Features(writes_in_branches=True, ufunc_writes=True))()


def test_views_with_writes_through_the_view_or_its_base():
    # refused where a read would see a write made through the other name; the rest
    # differentiated, in both modes
    outcomes: list[str] = []
    _run(Features(views=True), modes=("rev", "fwd"), outcomes=outcomes)()
    assert outcomes.count("differentiated") >= 8, outcomes


def test_decorators_function_values_containers_and_index_objects():
    _run(Features(writes=False, values=True))()


def test_arrays_held_by_names_slots_and_attributes_updated_in_place():
    """Either Python's value and gradient or a refusal at the program's line; most run."""
    outcomes: list[str] = []
    _run(Features(storage=True), outcomes=outcomes)()
    refused = [o for o in outcomes if o != "differentiated"]
    assert len(refused) < len(outcomes) / 2, refused[:5]
    if _LONG:
        print(f"\n{len(outcomes) - len(refused)} ran as Python does, {len(refused)} refused:")
        for message, count in collections.Counter(refused).most_common():
            print(f"{count:6d}  {message}")


def test_keyword_arguments_and_nested_functions_with_defaults():
    _run(Features(callees=True))()


def test_loops_with_else_star_unpacking_and_starred_calls():
    _run(Features(writes=False, spreads=True))()


def test_forward_mode_with_star_unpacking_and_starred_calls():
    _run(Features(writes=False, spreads=True), modes=("fwd",), examples=OTHER_MODE)()


def test_errstate_blocks_and_try_blocks():
    _run(Features(blocks=True))()


def test_objects_built_here_returned_by_a_factory_and_held_in_a_global():
    _run(Features(objects=True), examples=OTHER_MODE)()


# forward mode (the tangent function) and second order (derivatives of the gradient, from
# the tangent function's own derivatives) on the same random programs
def test_forward_mode_on_loops_branches_and_writes():
    _run(Features(writes_in_branches=True, ufunc_writes=True), modes=("fwd",), examples=OTHER_MODE)()


def test_forward_mode_with_decorators_function_values_and_containers():
    _run(Features(writes=False, values=True), modes=("fwd",), examples=OTHER_MODE)()


def test_forward_mode_with_errstate_and_try_blocks():
    _run(Features(writes=False, blocks=True), modes=("fwd",), examples=OTHER_MODE)()


def test_forward_mode_with_keyword_arguments_and_defaults_of_arrays():
    _run(Features(writes=False, callees=True), modes=("fwd",), examples=OTHER_MODE)()


# batched forward mode (many directions in one pass, as a Jacobian's columns are built)
def test_batched_forward_mode_on_loops_branches_and_writes():
    _run(Features(writes_in_branches=True, ufunc_writes=True), modes=("batch",), examples=OTHER_MODE)()


def test_batched_forward_mode_with_decorators_function_values_and_containers():
    _run(Features(writes=False, values=True), modes=("batch",), examples=OTHER_MODE)()


def test_second_order_on_loops_branches_and_jumps():
    # (element writes can still be refused at order 2: the tangent function's aliases, read
    # again after a branch, are not all followed)
    # (each program compiles a derivative per argument and mode, ~10 s: a few programs)
    _run(Features(writes=False), shrink=False, modes=("rev",), order=2,
         examples=_LONG or (6 if _FULL else 4))()
