"""Ordinary Python forms over dicts, lists and assignments: loops over a dict (its keys, in
insertion order, with ``enumerate``, ``reversed``, ``zip``, comprehensions and generators),
``dict(...)`` in its forms, ``{**d, ...}``, ``d.copy()``, ``d.update(...)``, helpers that
recurse over a nested dict, chained assignment (``a = b[i] = v``), and the sequences Python
makes of an array or a list (``sorted``, ``list(x)``, ``x.tolist()``, ``reversed``,
``tuple(x)``).

Each form as users write it: on a dict built in the function, a global one and an argument
(differentiated, as a dict of arrays), nested, in a loop, inside a helper, decorated with
``@grad`` and called on Tensors, and at second order. Every function is checked against
central finite differences (reverse and forward mode), its compiled value against the plain
call, and its arguments left as they were; what stays refused is refused at the user's line.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads
from tests.arguments import checked
from tests.located import assert_points_at

rng = np.random.default_rng(11)
X = rng.uniform(0.2, 0.9, 4)
M = rng.uniform(0.2, 0.9, (3, 4))
PARAMS = {"w": rng.standard_normal((4, 3)), "b": rng.standard_normal(3),
          "scale": 0.7}
SAME = {"item_1": rng.standard_normal((3, 2)), "item_2": rng.standard_normal((2, 2)),
        "item_X": rng.standard_normal((2, 4))}
TREE = {"a": rng.standard_normal(3), "b": {"c": rng.standard_normal((2, 2)),
                                           "d": rng.standard_normal(2)}, "e": 0.4}

SHAPES = {"w": (4, 3), "b": (3,)}
OFFSETS = (0, 12, 15)
WEIGHTS = {"first": 1.0, "second": 2.0, "third": 0.5}


def refused_at(fn, token, words, *args):
    """``fn`` is refused, at its line marked ``# <- refused``, under ``token``."""
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(*(args or (X,)))
    assert words in info.value.reason, info.value.reason
    assert_points_at(info.value, fn, token, __file__)


# --- loops over a dict: its keys, in insertion order ---------------------------------------


def keys_of_a_built_dict(x):
    d = {"a": x, "b": x * 2.0, "c": np.cos(x)}
    total = 0.0
    for k in d:
        total = total + np.sum(d[k] ** 2) * (3.0 if k == "b" else 1.0)
    return total


def keys_of_an_argument(params, x):
    h = x
    for name in params:
        p = params[name]
        h = np.tanh(h @ p) if name == "w" else h * p if name == "scale" else h + p
    return np.sum(h ** 2)


def items_of_different_ranks(params, x):
    h = x
    for name, p in params.items():
        if name == "w":
            h = np.tanh(h @ p)
        else:
            h = h + p
    return np.sum(h * h)


def keys_enumerated(d):
    total = 0.0
    for i, k in enumerate(d):
        total = total + (i + 1.0) * np.sum(np.sin(d[k]))
    for i, k in enumerate(d, 2):
        total = total + i * np.sum(d[k] ** 2)
    return total


def keys_reversed(d):
    total = 1.0
    for k in reversed(d):
        total = total * 0.5 + np.sum(np.sin(d[k]))
    return total


def keys_zipped_with_values(d):
    total = 0.0
    for k, v in zip(d, d.values()):
        total = total + np.sum(np.cos(d[k]) * v)
    return total


def keys_of_a_global(x):
    total = 0.0
    for k in WEIGHTS:
        total = total + WEIGHTS[k] * np.sum(x ** 2) * len(k)
    return total


def nested_dict_loops(x):
    layers = {"one": {"w": x, "b": x * 2.0}, "two": {"w": np.sin(x)}}
    total = 0.0
    for name in layers:
        for part in layers[name]:
            total = total + np.sum(layers[name][part] * x) * len(part)
    return total


def keys_loop_inside_a_loop(d, x):
    h = x
    for step in range(2):
        for k in d:
            h = np.sin(h) * d[k][: h.shape[0]] + step
    return np.sum(h)


def keys_loop_in_a_helper(d):
    def norm(tree):
        s = 0.0
        for k in tree:
            s = s + np.sum(tree[k] ** 2)
        return s
    return norm(d) + norm({"x": d["item_1"] * 2.0})


def keys_loop_with_break(d):
    total = 0.0
    for k in d:
        if k == "item_2":
            break
        total = total + np.sum(np.sin(d[k]))
    else:
        total = total * 2.0
    return total


def unpack_by_shapes(theta):
    p = {k: theta[OFFSETS[i]:OFFSETS[i + 1]].reshape(SHAPES[k])
         for i, k in enumerate(SHAPES)}
    return np.sum(np.tanh(np.ones(4) @ p["w"] + p["b"]))


def comprehension_over_an_argument(d):
    squared = {k: np.sin(v) ** 2 for k, v in d.items()}
    doubled = {k: d[k] * 2.0 for k in d}
    listed = [np.sum(d[k]) for k in d]
    return sum(np.sum(squared[k] * doubled[k]) for k in squared) + sum(listed)


def sum_over_values(tree):
    return sum(np.sum(v ** 2) for v in tree.values()) + sum(
        np.sum(np.sin(tree[k])) for k in tree)


@pytest.mark.xfail(strict=True, raises=TransformError,
                   reason="sorted() of a dict or of its items has no rule yet")
def test_autograd_dicts_iterated_keys_items_values():
    """The loops of HIPS autograd's own dict tests, first and second order."""
    def iterated(input_dict):
        a = 0.0
        b = 0.0
        for i, k in enumerate(sorted(input_dict)):
            a = a + np.sum(np.sin(input_dict[k])) * (i + 1.0)
            b = b + np.sum(np.cos(input_dict[k]))
        return a + b

    def items_values_keys(input_dict):
        a = 0.0
        b = 0.0
        for i, (k, v) in enumerate(sorted(input_dict.items(), key=operator.itemgetter(0))):
            a = a + np.sum(np.sin(v)) * (i + 1.0)
            b = b + np.sum(np.cos(v))
        for v in input_dict.values():
            a = a + np.sum(np.sin(v))
        for k in sorted(input_dict.keys()):
            a = a + np.sum(np.cos(input_dict[k]))
        return a + b

    for fn in (iterated, items_values_keys):
        checked(fn, SAME)

        def d_fun(input_dict, fn=fn):
            g = s2sgrad.gradient(fn)(input_dict)
            return np.sum(g["item_1"]) + np.sum(np.sin(g["item_1"])) + np.sum(
                np.sin(g["item_2"]))
        check_grads(d_fun, SAME, modes=("rev",))


def test_autograd_make_dict():
    def pairs_and_keywords(x):
        return dict([("a", x)], b=x)

    def of_a_dict(x):
        return dict({"a": x})

    for fn in (pairs_and_keywords, of_a_dict):
        value, pullback = s2sgrad.vjp(fn, 1.5)
        assert value == fn(1.5)
        (g,) = pullback({k: 1.0 for k in value})
        assert g == pytest.approx(float(len(value)))
    assert s2sgrad.gradient(lambda x: dict([("a", x)], b=x)["b"] * x)(1.5) == \
        pytest.approx(3.0)


DICT_LOOPS = {
    "keys of a dict built inside": (keys_of_a_built_dict, (X,)),
    "keys of an argument, items of different kinds": (keys_of_an_argument, (PARAMS, X)),
    "items of different ranks": (items_of_different_ranks, (PARAMS, X)),
    "enumerate": (keys_enumerated, (SAME,)),
    "reversed": (keys_reversed, (SAME,)),
    "zip of keys and values": (keys_zipped_with_values, (SAME,)),
    "a global dict": (keys_of_a_global, (X,)),
    "nested dicts": (nested_dict_loops, (X,)),
    "inside a loop": (keys_loop_inside_a_loop, ({"p": X, "q": X[::-1]}, X)),
    "in a helper": (keys_loop_in_a_helper, (SAME,)),
    "with break and else": (keys_loop_with_break, (SAME,)),
    "dict comprehension over enumerate of a global": (unpack_by_shapes,
                                                      (rng.standard_normal(15),)),
    "comprehensions over an argument": (comprehension_over_an_argument, (SAME,)),
    "sum of a generator over values": (sum_over_values, (SAME,)),
}


@pytest.mark.parametrize("name", list(DICT_LOOPS))
def test_loops_over_a_dict(name):
    fn, args = DICT_LOOPS[name]
    checked(fn, *args)


def test_loops_over_a_dict_decorated_on_tensors():
    x = s2sgrad.tensor(X, requires_grad=True)
    out = s2sgrad.grad(keys_of_a_built_dict)(x)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(keys_of_a_built_dict)(X))
    theta = rng.standard_normal(15)
    t = s2sgrad.tensor(theta, requires_grad=True)
    s2sgrad.grad(unpack_by_shapes)(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), s2sgrad.gradient(unpack_by_shapes)(theta))


def test_a_dict_argument_with_other_keys_compiles_again():
    grad = s2sgrad.gradient(keys_enumerated)
    first = grad(SAME)
    assert list(first) == list(SAME)
    other = {"z": X, "a": M}
    second = grad(other)
    assert list(second) == ["z", "a"]
    check_grads(keys_enumerated, other, modes=("rev", "fwd"))


def keys_of_a_dict_grown_in_a_loop(x, names):
    d = {}
    for n in names:
        d[n] = x * len(n)
    total = 0.0
    for k in d:  # the keys are known when the loop runs: it goes through them then
        total = total + np.sum(np.sin(d[k])) * len(k)
    return total


def keys_of_a_dict_growing_around_the_loop(x):
    d = {"a": x}
    total = 0.0
    for step in range(3):
        for k in d:  # ('a',), then ('a', 'b'): the keys of each pass, when it starts
            total = total + np.sum(d[k] ** 2) * (step + 1.0)
        d["b"] = np.sin(x) * step
    return total


def test_loops_over_a_dict_whose_keys_are_known_when_it_runs():
    checked(keys_of_a_dict_grown_in_a_loop, X, ["a", "bb", "a"])
    checked(keys_of_a_dict_growing_around_the_loop, X)


# --- building dicts --------------------------------------------------------------------------


def dict_with_extra_keys(x):
    layer = {"w": x, "b": np.sin(x)}
    wider = dict(layer, n=x * 2.0)
    return np.sum(wider["w"] * wider["n"] + wider["b"]) + len(layer)


def dict_of_zip(x):
    keys = ["a", "b"]
    d = dict(zip(keys, [x, x ** 2]))
    return np.sum(d["a"] * d["b"])


def dict_of_keywords(x):
    d = dict(a=x, b=x * 3.0)
    return np.sum(d["a"] * d["b"])


def dict_of_pairs(x):
    d = dict([("a", x), ("b", np.cos(x))])
    e = dict((("c", x * 2.0),), d=x)
    return np.sum(d["a"] * d["b"]) + np.sum(e["c"] * e["d"])


def dict_of_a_list_of_pairs(x):
    pairs = [("a", x), ("b", np.cos(x))]
    d = dict(pairs)  # <- refused
    return np.sum(d["a"] * d["b"])


def test_dict_of_pairs_held_in_a_name_is_refused_with_what_to_write():
    refused_at(dict_of_a_list_of_pairs, "pairs)", "copied by key")


def dict_spread_into_a_display(x):
    d = {"a": x, "k": x}
    e = {**d, "k": x * 2.0, **{"z": np.sin(x)}}
    return np.sum(e["a"] * e["k"] + e["z"]) + len(e)


def dict_copied(x):
    d = {"a": x}
    e = d.copy()
    e["b"] = x * 3.0
    return np.sum(e["a"] * e["b"]) + len(d)


def dict_get_with_default(x):
    d = {"a": x}
    return np.sum(d.get("a", x) * d.get("z", 2.0 * x))


def dict_updated(x):
    d = {"a": x}
    d.update({"b": x * 2.0})
    d.update(c=x * 3.0, a=np.sin(x))
    d.update([("e", x ** 2)])
    return np.sum(d["a"] * d["b"] * d["c"] + d["e"])


def dict_of_an_argument_copied(params, x):
    mine = dict(params)
    mine["w"] = mine["w"] * 2.0
    more = {**params, "extra": x}
    return np.sum(np.tanh(x @ mine["w"]) + more["b"]) + np.sum(more["extra"] * x)


def dicts_built_in_a_loop(x):
    total = 0.0
    state = {"h": x}
    for step in range(3):
        state = dict(state, h=np.sin(state["h"]) + step)
        total = total + np.sum(state["h"])
    return total


DICT_BUILDS = {
    "dict(layer, n=...)": (dict_with_extra_keys, (X,)),
    "dict(zip(keys, values))": (dict_of_zip, (X,)),
    "dict(a=..., b=...)": (dict_of_keywords, (X,)),
    "dict(pairs)": (dict_of_pairs, (X,)),
    "{**d, 'k': v}": (dict_spread_into_a_display, (X,)),
    "d.copy()": pytest.param(dict_copied, (X,), marks=pytest.mark.xfail(
        strict=True, raises=TransformError, reason="dict.copy() has no rule yet")),
    "d.get(k, default)": (dict_get_with_default, (X,)),
    "d.update(...)": pytest.param(dict_updated, (X,), marks=pytest.mark.xfail(
        strict=True, raises=TransformError,
        reason="d.update(...) of a dict built inside is not desugared into puts yet")),
    "copies of an argument": (dict_of_an_argument_copied, (PARAMS, X)),
    "in a loop": (dicts_built_in_a_loop, (X,)),
}


@pytest.mark.parametrize("fn, args", list(DICT_BUILDS.values()), ids=list(DICT_BUILDS))
def test_building_dicts(fn, args):
    checked(fn, *args)


def test_building_dicts_decorated_on_tensors():
    x = s2sgrad.tensor(X, requires_grad=True)
    s2sgrad.grad(dict_spread_into_a_display)(x).backward()
    np.testing.assert_allclose(x.grad.numpy(),
                               s2sgrad.gradient(dict_spread_into_a_display)(X))


def update_of_an_argument(params, x):
    params.update(extra=x)  # <- refused
    return np.sum(params["extra"])


def test_an_update_of_the_callers_dict_stays_refused():
    refused_at(update_of_an_argument, "params.update", "in place", PARAMS, X)


# --- recursion over a static structure -------------------------------------------------------


def tree_sq_norm(t):
    return sum(tree_sq_norm(v) for v in t.values()) if isinstance(t, dict) else np.sum(t ** 2)


def tree_scaled(t, s):
    if isinstance(t, dict):
        return {k: tree_scaled(v, s * (i + 1.0)) for i, (k, v) in enumerate(t.items())}
    if isinstance(t, (list, tuple)):
        return [tree_scaled(v, s) for v in t]
    return t * s


def tree_norm(tree):
    return tree_sq_norm(tree)


def tree_through_lists(tree, x):
    scaled = tree_scaled({"p": tree, "q": [x, {"r": x * 2.0}]}, 0.5)
    return tree_sq_norm(scaled["p"]) + np.sum(scaled["q"][0]) + tree_sq_norm(scaled["q"][1])


@pytest.mark.xfail(strict=True, raises=TransformError,
                   reason="a branch on isinstance() is not decided when compiling: the branch "
                   "for dicts is compiled for the arrays too")
def test_recursion_over_a_nested_dict():
    checked(tree_norm, TREE)
    checked(tree_through_lists, TREE, X)
    t = s2sgrad.tensor(X, requires_grad=True)
    s2sgrad.grad(tree_through_lists)(TREE, t).backward()
    np.testing.assert_allclose(t.grad.numpy(),
                               s2sgrad.gradient(tree_through_lists, 1)(TREE, X))


def countdown(x, n):
    if n == 0:
        return x
    return countdown(np.sin(x), n - 1)


def test_recursion_by_a_number_still_runs():
    check_grads(lambda x: np.sum(countdown(x, 3)), X, modes=("rev", "fwd"))


# --- chained assignment ----------------------------------------------------------------------


def chained_elements(k):
    n = k.shape[0]
    stiffness = np.zeros((n, n))
    for i in range(n - 1):
        stiffness[i, i + 1] = stiffness[i + 1, i] = -k[i + 1]
        stiffness[i, i] = stiffness[i, i] + k[i] + k[i + 1]
    return np.sum(stiffness @ k)


def chained_names(x):
    a = b = np.sin(x)
    b = b * 2.0
    return np.sum(a * b)


def chained_name_and_element(x):
    y = np.zeros(3)
    a = y[0] = np.sum(x ** 2)
    y[1] = a * 2.0
    return a * y[0] + np.sum(y * y)


def chained_element_first(x):
    y = np.zeros(4)
    y[1] = a = np.sum(np.sin(x))
    return np.sum(y * x) * a


def chained_with_a_tuple(x):
    pair = (a, b) = (np.sin(x), np.cos(x))
    return np.sum(a * b * pair[0])


def chained_into_a_dict_and_list(x):
    d = {"a": x}
    xs = [x, x]
    d["b"] = xs[1] = h = np.tanh(x)
    return np.sum(d["b"] * xs[1] * h + d["a"])


class Spring:
    def __init__(self, k):
        self.k = k
        self.first = self.second = k * 2.0
        self.stretch = None

    def energy(self, x):
        self.stretch = s = x - 1.0
        return np.sum(self.first * s ** 2 + self.second * self.stretch)


def chained_attributes(x):
    spring = Spring(x)
    return spring.energy(x * 3.0)


def chained_in_a_loop(x):
    y = np.zeros(len(x) + 1)
    for i, v in enumerate(x):
        y[i] = y[i + 1] = v * (i + 1.0)
    return np.sum(y ** 2)


def chained_evaluates_once(x):
    y = np.zeros((2, 4))
    y[0] = y[1] = np.tanh(x)
    y[0, 0] = 5.0  # a copy each: y[1] keeps its value
    return np.sum(y * y)


CHAINED = {
    "elements": (chained_elements, (X,)),
    "names": (chained_names, (X,)),
    "a name, then an element": (chained_name_and_element, (X,)),
    "an element, then a name": (chained_element_first, (X,)),
    "a tuple": (chained_with_a_tuple, (X,)),
    "a dict item, a list item and a name": (chained_into_a_dict_and_list, (X,)),
    "attributes": (chained_attributes, (X,)),
    "in a loop": (chained_in_a_loop, (X,)),
    "one evaluation": (chained_evaluates_once, (X,)),
}


@pytest.mark.parametrize("name", list(CHAINED))
def test_chained_assignment(name):
    fn, args = CHAINED[name]
    checked(fn, *args)


def test_chained_assignment_decorated_on_tensors():
    k = s2sgrad.tensor(X, requires_grad=True)
    s2sgrad.grad(chained_elements)(k).backward()
    np.testing.assert_allclose(k.grad.numpy(), s2sgrad.gradient(chained_elements)(X))


# --- sequences made of a list or an array ----------------------------------------------------


def sorted_floats(x):
    xs = [x[0], x[1] * 2.0, x[2] * 3.0, x[3] - 1.0]
    ys = sorted(xs)
    zs = sorted(xs, reverse=True)
    return ys[0] * 1.0 + ys[1] * 2.0 + ys[2] * 3.0 + zs[0] * ys[3]


def sorted_rows_by_key(m):
    rows = [m[0], m[1] * 2.0, -m[2]]
    ordered = sorted(rows, key=lambda r: r[0])
    by_sum = sorted(rows, key=np.sum, reverse=True)
    return np.sum(ordered[0] * 1.0 + ordered[1] * 2.0 + ordered[2] * 3.0) + np.sum(
        by_sum[0] ** 2)


def sorted_in_a_loop(x):
    total = 0.0
    for step in range(2):
        vals = [x[0] * (step + 1.0), x[1], np.sin(x[2])]
        for i, v in enumerate(sorted(vals)):
            total = total + v * (i + 1.0)
    return total


def rows_of_an_array(m):
    rows = list(m)
    pair = tuple(m[0])
    return np.sum(rows[0] * rows[1]) + pair[0] * pair[2] + sum(np.sum(r ** 2) for r in rows)


def nested_lists_of_an_array(m):
    values = m.tolist()
    flat = (m[0] * 2.0).tolist()
    return values[0][1] * values[1][2] + sum(flat) + values[2][0] ** 2


def reversed_lists(x):
    xs = [x, x * 2.0, np.sin(x)]
    r = list(reversed(xs))
    t = tuple(reversed(xs))
    return np.sum(r[0] * 3.0 + r[1]) + np.sum(t[0] * t[2])


SEQUENCES = {
    "sorted floats": (sorted_floats, (X,)),
    "sorted rows by key": (sorted_rows_by_key, (M,)),
    "sorted in a loop": (sorted_in_a_loop, (X,)),
    "list(x) and tuple(x) of an array": (rows_of_an_array, (M,)),
    "x.tolist()": (nested_lists_of_an_array, (M,)),
    "reversed lists": (reversed_lists, (X,)),
}


@pytest.mark.xfail(strict=True, raises=TransformError,
                   reason="sorted(), list(x), tuple(x), x.tolist() and list(reversed(xs)) of "
                   "differentiated values have no rules yet")
@pytest.mark.parametrize("name", list(SEQUENCES))
def test_sequences_of_lists_and_arrays(name):
    fn, args = SEQUENCES[name]
    checked(fn, *args)


@pytest.mark.xfail(strict=True, raises=TransformError,
                   reason="x.tolist() has no rule yet")
def test_sequences_decorated_on_tensors():
    m = s2sgrad.tensor(M, requires_grad=True)
    s2sgrad.grad(nested_lists_of_an_array)(m).backward()
    np.testing.assert_allclose(m.grad.numpy(), s2sgrad.gradient(nested_lists_of_an_array)(M))
