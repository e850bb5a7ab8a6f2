"""The view table checked against NumPy: a call that aliasing says returns new memory never
shares memory with its arguments.

``views.returns_new_array(op)`` tells the aliasing pass whether a call's result is
memory of its own or may be a view of an argument (then a write through either name is
seen through the other). Here every registered function (each rule's primitive, each
function without a gradient) and every function the table names is called on sample
inputs: the cases of test_rules.py, the forms below (einsum's subscripts, ``copy=``,
``overwrite_b=``, ``n=0``, an empty iterable...) and, for a ufunc, arrays of each rank.
For each form the op the compiler would build is asked three ways: with every literal
argument a constant, with every argument a name (only the rule's defaults known), and with
no rule (a call on constants). Wherever one of them says new memory, the result must share
no memory with an argument (``np.shares_memory``, nor a common base), and a function this
module has no form for must be assumed to return a view. The functions known to return
views must return views here too, and the table must say so.
"""

from __future__ import annotations

import copy
import inspect
import warnings

import numpy as np
import pytest
import scipy.linalg
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from s2sgrad import syntax
from s2sgrad.compiler import views
from s2sgrad.compiler.analyze import Op
from s2sgrad.rules import registry
from s2sgrad.runtime.containers import zeros_tree
from tests.rules.test_rules import CASES, Case, call

rng = np.random.default_rng(7)


def case(*args, **kwargs):
    return Case(args, kwargs)


def m(*shape):
    """A new float array."""
    return np.asarray(rng.standard_normal(shape))


def spd(n):
    return m(n, n) * 0.3 + 2.0 * np.eye(n)


# einsum's subscript forms: one operand relabelled, transposed, or its diagonal taken (views),
# reductions of one operand, products of two or more (new memory)
EINSUM = [
    case("ii->i", m(3, 3)), case("ij->ji", m(3, 4)), case("ij", m(3, 4)), case("ji", m(3, 4)),
    case("...ii->...i", m(2, 3, 3)), case("i->i", m(3)), case("ijk->kji", m(2, 3, 4)),
    case("...", m(3)), case("...i->i", m(3)), case("ii->i", m(3, 3), optimize=True),
    case("ij->ji", m(3, 4), optimize="greedy"), case(" i j -> j i ", m(2, 3)),
    case("ii", m(3, 3)), case("ij->i", m(3, 4)), case("ij->", m(3, 4)), case("i...->...", m(3, 2)),
    case("iij->j", m(3, 3, 2)), case("->", np.array(2.0)), case("ii->", m(3, 3), optimize=True),
    case("ij,jk->ik", m(3, 4), m(4, 2)), case("i,i->i", m(3), m(3)), case("ij,->ij", m(2, 3),
                                                                         np.array(2.0)),
    case("i,j", m(3), m(2)), case("ii,i->i", m(3, 3), m(3)), case("ij,jk", m(2, 3), m(3, 2),
                                                                  optimize=True),
]

_factor = scipy.linalg.cho_factor(spd(3))

# Forms beyond test_rules.py's: those where NumPy returns an argument or a view of it, and
# calls of the functions without a rule.
FORMS: dict = {
    np.einsum: EINSUM,
    np.asarray: [case(m(3)), case(m(3), dtype=np.float64), case([1.0, 2.0])],
    np.asanyarray: [case(m(3))], np.ascontiguousarray: [case(m(3, 4)), case(m(3, 4).T)],
    np.asfortranarray: [case(m(3, 4).T)], np.require: [case(m(3))],
    np.real_if_close: [case(m(3))], np.real: [case(m(3))], np.imag: [case(m(3) + 0j)],
    np.ndarray.real: [case(m(3))], np.ndarray.imag: [case(m(3) + 0j)],
    np.nan_to_num: [case(m(3), copy=False), case(m(3))],
    np.reshape: [case(m(3, 4), (4, 3)), case(m(3, 4), -1), case(m(3, 4).T, (12,)),
                 case(m(3, 4), (12,), copy=False)],
    np.ndarray.reshape: [case(m(3, 4), (2, 6)), case(m(3, 4), 12)],
    np.ravel: [case(m(3, 4)), case(m(3, 4).T)], np.ndarray.ravel: [case(m(3, 4))],
    np.squeeze: [case(m(1, 3)), case(m(1, 3, 1), axis=0)], np.ndarray.squeeze: [case(m(3, 1))],
    np.transpose: [case(m(3, 4)), case(m(2, 3, 4), (1, 0, 2))],
    np.ndarray.transpose: [case(m(3, 4))],
    np.diagonal: [case(m(3, 3)), case(m(2, 3, 3), 0, 1, 2)],
    np.ndarray.diagonal: [case(m(3, 3), 1)],
    np.broadcast_to: [case(m(3), (2, 3)), case(m(3), (3,))],
    as_strided: [case(m(6), shape=(2, 3), strides=(24, 8))],
    sliding_window_view: [case(m(5), 3)],
    np.array: [case(m(3)), case(m(3), copy=False), case(m(3), copy=None), case(m(3), ndmin=2)],
    np.ndarray.astype: [case(m(3), np.float64), case(m(3), np.float64, copy=False),
                        case(m(3), np.float32)],
    np.diff: [case(m(4), n=0), case(m(4), 1), case(m(2, 3), axis=0)],
    sum: [case([], start=m(3)), case([m(3), m(3)]), case([m(3)], 0.0)],
    max: [case(m(), m()), case(np.array(1.0), np.array(2.0))],
    min: [case(m(), m()), case(np.array(1.0), np.array(2.0))],
    np.meshgrid: [case(m(3), m(2)), case(m(3), m(2), copy=False)],
    scipy.linalg.cho_solve: [case(_factor, m(3), overwrite_b=True),
                             case(_factor, np.asfortranarray(m(3, 2)), overwrite_b=True)],
    scipy.linalg.cho_factor: [case(spd(3), overwrite_a=True)],
    scipy.linalg.solve_triangular: [case(np.triu(spd(3)), m(3), overwrite_b=True),
                                    case(np.triu(spd(3)), np.asfortranarray(m(3, 2)),
                                         overwrite_b=True)],
    np.sum: [case(m(3, 4), axis=())], np.max: [case(m(3, 4), axis=())],
    np.where: [case(m(3) > 0), case(m(3) > 0, m(3), m(3)), case(True, m(3), m(3))],
    np.clip: [case(m(3), None, None)],
    np.concatenate: [case([m(3)])], np.stack: [case([m(3)])], np.tile: [case(m(3), 1)],
    np.repeat: [case(m(3), 1)], np.pad: [case(m(3), 0)], np.roll: [case(m(3), 0)],
    np.sort: [case(m(3))], np.cumsum: [case(m(1))], np.cumprod: [case(m(1))],
    np.tensordot: [case(m(3), np.array(1.0), 0)], np.kron: [case(m(3), np.ones(1))],
    np.outer: [case(m(3), np.ones(1))],
    np.ndarray.flatten: [case(m(3))], np.ndarray.tolist: [case(m(3))],
    # arrays made anew
    np.zeros: [case(3), case((2, 3))], np.ones: [case(3)], np.empty: [case(3)],
    np.full: [case(3, 2.0), case((2,), m())], np.zeros_like: [case(m(3))],
    np.ones_like: [case(m(3))], np.empty_like: [case(m(3))], np.full_like: [case(m(3), 1.0)],
    np.arange: [case(3), case(0.0, 1.0, 0.25)], np.linspace: [case(0.0, 1.0, 3)],
    np.logspace: [case(0.0, 1.0, 3)], np.geomspace: [case(1.0, 2.0, 3)], np.eye: [case(3)],
    np.identity: [case(3)], np.indices: [case((2, 3))],
    np.argsort: [case(m(3))], np.argmax: [case(m(3))], np.argmin: [case(m(3))],
    np.nonzero: [case(m(3))], np.flatnonzero: [case(m(3))], np.unique: [case(m(3))],
    np.bincount: [case(np.array([0, 1, 1]))], np.histogram: [case(m(5))],
    np.random.rand: [case(3)], np.random.randn: [case(3)], np.random.random: [case(3)],
    np.random.normal: [case(0.0, 1.0, 3)], np.random.uniform: [case(0.0, 1.0, 3)],
    np.random.randint: [case(0, 5, 3)], np.random.permutation: [case(m(5)), case(5)],
    np.random.choice: [case(m(5), 3), case(m(5))],
    len: [case(m(3))], float: [case(m())], int: [case(m())], abs: [case(m(3)), case(m())],
    round: [case(np.float64(2.5)), case(2.5, 1)], range: [case(3)],
    zeros_tree: [case(m(3)), case([m(3), m(2)])],
}


def ufunc_forms(f: np.ufunc) -> list[Case]:
    """A ufunc's arguments of each rank, broadcast against each other."""
    if f.nin == 1:
        return [case(m(3, 4)), case(m()), case(0.5)]
    return [case(*[m(3, 4)] * f.nin), case(m(3, 1), *[m(4)] * (f.nin - 1)),
            case(m(), *[m()] * (f.nin - 1))]


def forms_of(f) -> list[Case]:
    forms = list(CASES.get(f, [])) + FORMS.get(f, [])
    elementwise = isinstance(f, np.ufunc) and f.signature is None  # not np.matmul
    return forms + ufunc_forms(f) if elementwise else forms


# --- the ops the compiler builds --------------------------------------------------------------


def _literal(value) -> bool:
    if isinstance(value, tuple):
        return all(map(_literal, value))
    return value is None or type(value) in (bool, int, float, complex, str)


def _atom(name: str, value, known: bool):
    """The atom of an argument: a constant where the compiler may know it, else a name."""
    if known and _literal(value):
        return syntax.tuple_(map(syntax.const, value)) if isinstance(value, tuple) else \
            syntax.const(value)
    return syntax.name(name)


def ops_for(f, c: Case | None) -> list[tuple[str, Op]]:
    """The ops a call of ``f`` with the arguments of ``c`` (None: arguments unknown) may
    become: a rule's, with every literal known and with none known (its defaults only), and
    a call without bindings."""
    plain = ("a call without bindings", Op("nondiff", "r", primitive=f))
    rule = registry.lookup(f)
    if rule is None:
        return [plain]
    sig = inspect.signature(rule.template)
    params = [p for p in list(sig.parameters.values())[2:] if p.name != rule.each]
    if c is None:
        return [("the rule's, nothing known", Op(
            "rule", "r", rule=rule, primitive=f,
            bindings={p.name: syntax.name(p.name) for p in params})), plain]
    given = inspect.Signature(params).bind(*c.args, **c.kwargs)
    passed = set(given.arguments)
    given.apply_defaults()
    found = []
    for how, known in (("the rule's, literals known", True), ("the rule's, nothing known", False)):
        bindings = {}
        for name, value in given.arguments.items():
            if sig.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
                atoms = tuple(_atom(f"{name}{k}", v, known) for k, v in enumerate(value))
                bindings[name] = atoms if rule.each else syntax.tuple_(atoms)
            else:
                bindings[name] = _atom(name, value, known or name not in passed)
        found.append((how, Op("rule", "r", rule=rule, bindings=bindings, primitive=f)))
    return found + [plain]


# --- what NumPy does --------------------------------------------------------------------------


def arrays_in(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from arrays_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from arrays_in(item)


def _root(a: np.ndarray):
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def shared(result, args) -> bool:
    """Does any array of ``result`` share memory (or a base) with an array of ``args``?"""
    inputs = list(arrays_in(args))
    return any(np.shares_memory(r, a) or _root(r) is _root(a)
               for r in arrays_in(result) for a in inputs)


def run(f, c: Case):
    """The result of ``f`` on (copies of) the arguments of ``c``, and those arguments."""
    args, kwargs = copy.deepcopy((c.args, c.kwargs))
    state = np.random.get_state()
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return call(f, args, kwargs), (args, kwargs)
    finally:
        np.random.set_state(state)


def functions():
    """Every function the library registers a rule for, every nondifferentiable one, and
    every function the table or FORMS names (the library's only: which test modules were
    imported before this one, with rules of their own, does not change the list)."""
    found = {id(r.primitive): r.primitive for r in registry.library_rules()}
    for f in registry.all_nondifferentiable():
        found.setdefault(id(f), f)
    for f in list(views.NEW_MEMORY) + list(FORMS):
        found.setdefault(id(f), f)
    return list(found.values())


def _id(f) -> str:
    return registry.primitive_name(f) if not isinstance(f, int) else str(f)


# --- the checks -------------------------------------------------------------------------------


@pytest.mark.parametrize("f", functions(), ids=_id)
def test_new_memory_is_confirmed_by_numpy(f):
    forms = forms_of(f)
    if not forms:  # nothing to confirm it with: a view, however it is called
        claims = [how for how, op in ops_for(f, None) if views.returns_new_array(op)]
        assert not claims, f"{_id(f)} has no form here, yet {claims[0]} claims new memory"
        return
    for c in forms:
        claims = [how for how, op in ops_for(f, c) if views.returns_new_array(op)]
        if not claims:
            continue
        result, args = run(f, c)
        assert not shared(result, args), (
            f"{_id(f)}{c.args, c.kwargs} shares memory with its arguments, yet {claims[0]} "
            "claims new memory")


# (function, arguments) where NumPy returns a view of an argument, or the argument itself
VIEWS = [(np.einsum, c) for c in EINSUM[:12]] + [
    (np.asarray, case(m(3))), (np.reshape, case(m(3, 4), (4, 3))), (np.ravel, case(m(3, 4))),
    (np.squeeze, case(m(1, 3))), (np.transpose, case(m(3, 4))), (np.diagonal, case(m(3, 3))),
    (np.broadcast_to, case(m(3), (2, 3))),
    (as_strided, case(m(6), shape=(2, 3), strides=(24, 8))),
    (sliding_window_view, case(m(5), 3)), (max, case(np.array(1.0), np.array(2.0))),
    (min, case(np.array(1.0), np.array(2.0))), (sum, case([], start=m(3))),
    (np.diff, case(m(4), n=0)), (np.real, case(m(3))), (np.nan_to_num, case(m(3), copy=False)),
    (np.array, case(m(3), copy=False)), (np.ndarray.astype, case(m(3), np.float64, copy=False)),
    (np.meshgrid, case(m(3), m(2), copy=False)),
    (scipy.linalg.cho_solve, case(_factor, m(3), overwrite_b=True)),
    (scipy.linalg.solve_triangular, case(np.triu(spd(3)), m(3), overwrite_b=True)),
]


@pytest.mark.parametrize("f, c", VIEWS, ids=[f"{_id(f)}{i}" for i, (f, _) in enumerate(VIEWS)])
def test_views_are_seen_and_assumed(f, c):
    result, args = run(f, c)
    assert shared(result, args), "the harness does not see this view"
    claims = [how for how, op in ops_for(f, c) if views.returns_new_array(op)]
    assert not claims, claims


@pytest.mark.parametrize("c", EINSUM, ids=lambda c: c.args[0])
def test_einsum_is_a_view_exactly_where_it_sums_nothing_over_one_operand(c):
    """With its subscripts known, einsum is decided per call: new memory wherever NumPy
    makes it, except '->' of a 0-d operand (a number, where the table assumes a view)."""
    result, args = run(np.einsum, c)
    literal = dict(ops_for(np.einsum, c))["the rule's, literals known"]
    unknown = dict(ops_for(np.einsum, c))["the rule's, nothing known"]
    assert not views.returns_new_array(unknown)
    if c.args[0] == "->":
        assert not views.returns_new_array(literal)
    else:
        assert views.returns_new_array(literal) == (not shared(result, args))



def test_a_users_rule_says_nothing_of_the_memory_its_function_returns():
    def passthrough(x):
        return x

    def template(g, ans, x):
        return g

    rule = registry.Rule(passthrough, template, ("x",), {}, "elementwise")
    op = Op("rule", "r", rule=rule, bindings={"x": syntax.name("x")}, primitive=passthrough)
    a = m(3)
    assert passthrough(a) is a
    assert not views.returns_new_array(op)


# (function, arguments) whose memory the table decides from the ranks of the arguments
RANKED = [(np.diag, case(m(3))), (np.diag, case(m(3), 1)), (np.diag, case(m(3), -2)),
          (np.diag, case(m(3, 3))), (np.diag, case(m(3, 4), 1))]


@pytest.mark.parametrize("f, c", RANKED, ids=[f"{_id(f)}{i}" for i, (f, _) in enumerate(RANKED)])
def test_new_memory_by_rank_is_confirmed_by_numpy(f, c):
    assert f in views.BY_RANK
    result, args = run(f, c)
    ranks = {p: np.ndim(c.args[i]) for i, p in enumerate(registry.lookup(f).params)
             if i < len(c.args)}
    for how, op in ops_for(f, c):
        if op.kind != "rule":
            continue
        by_name = {a.id: ranks.get(p) for p, a in op.bindings.items()
                   if isinstance(a, syntax.gast.Name)}
        claim = views.returns_new_array(op, lambda a, by_name=by_name: by_name.get(
            getattr(a, "id", None)))
        assert claim == (not shared(result, args)), (how, ranks)
        assert not views.returns_new_array(op, lambda a: None)  # rank unknown: a view
