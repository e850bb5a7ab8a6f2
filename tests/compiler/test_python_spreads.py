"""Python's forms that build or spread containers inside a differentiated function: dict
comprehensions, star-unpacking (``first, *rest = xs``), starred arguments (``g(*xs)``) and
``**`` of a dict in a call.

Each form as users write it: over tuples, lists and arrays, with conditions, ``zip``,
``enumerate`` and ``d.items()``, into nested functions, user functions and library rules,
in loops and branches, decorated with ``@grad`` and called on Tensors, and at second order.
Every function is checked against central finite differences (reverse and forward mode),
its compiled value against the plain call (the result's type too: a starred name is a
list, as in Python), and its arguments left as they were; what stays refused is refused at
the user's line.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import numeric_gradient
from tests.arguments import checked
from tests.located import assert_points_at

rng = np.random.default_rng(11)
X = rng.uniform(0.2, 0.9, 4)
M = rng.uniform(0.2, 0.9, (3, 4))


# --- dict comprehensions -------------------------------------------------------------------


def dict_of_squares(x):
    d = {k: x[i] ** 2 for i, k in enumerate("abc")}
    return d["a"] + d["c"] * d["b"]


def dict_from_items(x, m):
    params = {"w": m, "b": x[:3]}
    squashed = {name: np.tanh(v) for name, v in params.items()}
    return np.sum(squashed["w"] @ x) + np.sum(squashed["b"])


def dict_with_a_condition(x):
    d = {i: v * (i + 1) for i, v in zip(range(4), x) if v > 0.5}
    total = 0.0
    for k, v in d.items():
        total = total + v * k
    return total + len(d)


def dict_with_computed_keys(x):
    d = {f"w{i}{j}": x[i] * x[j] for i in range(2) for j in range(2)}
    return d["w01"] * d["w10"] + d["w11"]


def dict_in_a_loop(x):
    total = 0.0
    for step in range(3):
        scaled = {k: v * (step + 1) for k, v in zip(("p", "q"), (x[0], x[1]))}
        total = total + scaled["p"] * scaled["q"]
    return total


def dict_in_a_helper(x):
    def table(v):
        return {str(i): np.sin(v[i]) for i in range(len(v))}
    t = table(x)
    return t["0"] * t["3"] + sum(v for v in t.values())


def dict_in_a_branch(x, flag):
    if flag > 0:
        d = {k: x[k] ** 3 for k in range(2)}
    else:
        d = {0: x[0], 1: x[1]}
    return d[0] * d[1]


DICTS = {
    "of squares": (dict_of_squares, (X,)),
    "from items": (dict_from_items, (X, M)),
    "with a condition": (dict_with_a_condition, (X,)),
    "with computed keys": (dict_with_computed_keys, (X,)),
    "in a loop": (dict_in_a_loop, (X,)),
    "in a nested function": (dict_in_a_helper, (X,)),
    "in a branch": (dict_in_a_branch, (X, 1.0)),
    "in the other branch": (dict_in_a_branch, (X, -1.0)),
}


@pytest.mark.parametrize("name", list(DICTS))
def test_dict_comprehension(name):
    fn, args = DICTS[name]
    checked(fn, *args)


def test_dict_comprehension_decorated_on_tensors():
    x = s2sgrad.tensor(X, requires_grad=True)
    out = s2sgrad.grad(dict_with_a_condition)(x)
    out.backward()
    assert out.item() == pytest.approx(dict_with_a_condition(X), rel=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), numeric_gradient(dict_with_a_condition, [X], 0),
                               rtol=1e-6, atol=1e-8)


def test_dict_comprehension_evaluates_the_key_first():
    order = []

    def key(k):
        order.append(("key", k))
        return k

    def value(v, k):
        order.append(("value", k))
        return v * 2.0

    def build(x):
        d = {key(k): value(x[k], k) for k in range(2)}
        return d[0] + d[1]

    expected = build(X)
    python_order, order[:] = list(order), []
    assert s2sgrad.value_and_grad(build)(X)[0] == pytest.approx(expected)
    assert order[:len(python_order)] == python_order


# --- star-unpacking --------------------------------------------------------------------------


def star_of_a_tuple(x):
    t = (x[0], x[1] * 2.0, np.sin(x[2]))
    first, *rest = t
    assert isinstance(rest, list)  # a list, as Python makes it
    return first * rest[0] + sum(rest) + np.sum(np.array(rest + [x[3]]))


def star_in_the_middle(x):
    a, *mid, b = [x[0], x[1], x[2], x[3] ** 2]
    return a * b + len(mid) * mid[0] * mid[1]


def star_first(x):
    *init, last = (x[0], x[1], np.exp(x[2]))
    return last * (init[0] + init[1])


def star_takes_nothing(x):
    a, *rest, b = (x[0], x[1])
    return a * b + len(rest) + sum(rest)


def star_of_an_array(x):
    first, *rest = x
    return first * np.sum(np.array(rest)) + sum(rest)


def star_of_rows(m):
    top, *mid, bottom = m
    return np.sum(top * bottom) + sum(np.sum(r ** 2) for r in mid)


def star_of_a_display(x):
    head, *tail = x[0] * 2.0, x[1], x[2]
    return head * np.prod(np.array(tail))


def star_in_a_for_target(m):
    s = 0.0
    for head, *tail in [(m[0], m[1], m[2]), (m[2], m[1], m[0])]:
        s = s + np.sum(head * tail[0]) + np.sum(tail[1])
    return s


def star_over_rows_in_a_loop(m):
    s = 0.0
    for first, *others in m:
        s = s + first * sum(others)
    return s


def star_nested(x):
    (a, *b), c = (x[0], x[1], x[2]), x[3]
    return a * c + b[-1] * b[0]


def star_in_a_helper(x):
    def split(v):
        first, *rest = v
        return first, rest
    f, r = split(x)
    g, s = split((x[0], x[1]))
    return f * sum(r) + g * s[0]


def star_in_a_branch(x, flag):
    if flag > 0:
        *init, last = x
    else:
        last, *init = x
    return last * np.sum(np.array(init) ** 2)


STARS = {
    "of a tuple": (star_of_a_tuple, (X,)),
    "in the middle": (star_in_the_middle, (X,)),
    "first": (star_first, (X,)),
    "takes nothing": (star_takes_nothing, (X,)),
    "of an array": (star_of_an_array, (X,)),
    "of rows": (star_of_rows, (M,)),
    "of a display": (star_of_a_display, (X,)),
    "in a for target": (star_in_a_for_target, (M,)),
    "over rows in a loop": (star_over_rows_in_a_loop, (M,)),
    "nested": (star_nested, (X,)),
    "in a nested function": (star_in_a_helper, (X,)),
    "in a branch": (star_in_a_branch, (X, 1.0)),
    "in the other branch": (star_in_a_branch, (X, -1.0)),
}


@pytest.mark.parametrize("name", list(STARS))
def test_star_unpacking(name):
    fn, args = STARS[name]
    checked(fn, *args)


def test_star_unpacking_decorated_on_tensors():
    x = s2sgrad.tensor(X, requires_grad=True)
    out = s2sgrad.grad(star_of_an_array)(x)
    out.backward()
    assert out.item() == pytest.approx(star_of_an_array(X), rel=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), numeric_gradient(star_of_an_array, [X], 0),
                               rtol=1e-6, atol=1e-8)


def test_star_unpacking_of_too_few_items_raises_as_python_does():
    def ends(x):
        a, *mid, b = x
        return a * b
    with pytest.raises(ValueError, match="not enough values to unpack"):
        ends(X[:1])
    with pytest.raises(ValueError, match="not enough values to unpack"):
        s2sgrad.gradient(ends)(X[:1])
    np.testing.assert_allclose(s2sgrad.gradient(ends)(X[:2]), [X[1], X[0]])


# --- starred arguments and ** of a dict --------------------------------------------------------


def weighted(a, b, c):
    return a * b + np.sin(c)


def into_a_user_function(x):
    xs = [x[0], x[1], x[2]]
    return weighted(*xs) + weighted(x[3], *xs[1:])


def into_a_nested_function(x):
    def g(a, b, c=1.0):
        return a * b - c
    xs = (x[0], x[1], x[2])
    return g(*xs) + g(x[3], *xs[:1]) + g(*xs[1:], c=x[0])


def into_rules(x, m):
    pair = (x[0] * 2.0, x[1])
    return np.maximum(*pair) + np.hypot(*[x[2], x[3]]) + np.sum(m.reshape(*(4, 3)) ** 2)


def a_shape_spread(m):
    return np.sum(np.ones(m.shape) * m) + np.sum(m.reshape(*m.shape) ** 2)


def spread_in_a_loop(x):
    s = 0.0
    for i in range(3):
        args = (x[i], x[i + 1], 1.0)
        s = s + weighted(*args)
    return s


def keywords_spread(x):
    def g(a, b=1.0, c=2.0):
        return a * b + c
    params = {"b": x[1], "c": x[2] ** 2}
    every = {"a": x[3], "b": x[0], "c": x[1]}
    return g(x[0], **params) + weighted(**every)


def spread_from_star_unpacking(x):
    first, *rest = (x[0], x[1], x[2], x[3])
    return first * weighted(*rest)


def spreads_of_nothing(x):
    def g(a, b=2.0, c=3.0):
        return a * b - c
    rest = (x[0], x[1])[2:]
    none = {}
    return weighted(x[0], x[1], x[2], *rest) + g(x[3], **none) + np.sin(*(x[1],), *())


def symmetric_sum(*args):
    return np.sum(np.tanh(args[0] + args[0].T), *args[1:])


def a_wrapper_passing_the_rest_on(m, x):
    return symmetric_sum(m @ m.T) * x[0] + symmetric_sum(m[:, :3], 0)[1]


SPREADS = {
    "of nothing": (spreads_of_nothing, (X,)),
    "the rest of a wrapper's arguments": (a_wrapper_passing_the_rest_on, (M, X)),
    "into a user function": (into_a_user_function, (X,)),
    "into a nested function": (into_a_nested_function, (X,)),
    "into rules": (into_rules, (X, M)),
    "a shape": (a_shape_spread, (M,)),
    "in a loop": (spread_in_a_loop, (X,)),
    "** of a dict": (keywords_spread, (X,)),
    "from star-unpacking": (spread_from_star_unpacking, (X,)),
}


@pytest.mark.parametrize("name", list(SPREADS))
def test_starred_arguments(name):
    fn, args = SPREADS[name]
    checked(fn, *args)


# a function of its *args as a whole (a test's wrapper, lambda *args: f(g(args[0]),
# *args[1:])): the rest it passes on may be empty (first order: a derivative of a
# derivative is taken with respect to named parameters only)
rest_into_a_function = lambda *args: weighted(args[0][0], args[0][1], *args[1:])
rest_into_a_rule = lambda *args: np.sum(np.sin(args[0]), *args[1:])


@pytest.mark.parametrize("fn, args", [(rest_into_a_rule, (M,)), (rest_into_a_rule, (M[0], 0)),
                                      (rest_into_a_function, (X, X[2])),
                                      (symmetric_sum, (M[:3, :3],))],
                         ids=["empty", "one static item", "one item", "a def's, empty"])
def test_the_rest_of_a_functions_own_arguments_passed_on(fn, args):
    checked(fn, *args, order=1)


def test_starred_arguments_decorated_on_tensors():
    @s2sgrad.grad
    def reshaped(x):
        shape = (2, 2)
        return np.sum(x.reshape(*shape) ** 2)
    x = s2sgrad.tensor(X, requires_grad=True)
    out = reshaped(x)
    out.backward()
    assert out.item() == pytest.approx(np.sum(X ** 2), rel=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2 * X, rtol=1e-12)


# --- what stays refused, at the user's line -----------------------------------------------


def star_of_a_dict(x):
    d = {"a": x[0], "b": x[1]}
    first, *rest = d  # <- refused
    return x[0]


def star_of_too_few(x):
    a, *mid, b = (x[0],)  # <- refused
    return a


def spread_of_an_array_into_a_rule(x):
    return np.hypot(*x[:2])  # <- refused


def spread_of_an_array_into_a_nested_function(x):
    def g(a, b):
        return a * b
    return g(*x[:2])  # <- refused


def spread_that_grows(x):
    t = (x[0], x[1])
    s = 0.0
    for i in range(2):
        s = s + weighted(x[2], *t)  # <- refused
        t = t + (x[i],)
    return s


REFUSED = [
    (star_of_a_dict, "first", "unpacking a dict"),
    (star_of_too_few, "(x[0],)", "expected at least 2, got 1"),
    (spread_of_an_array_into_a_rule, "*x[:2]", "not known when compiling"),
    (spread_of_an_array_into_a_nested_function, "*x[:2]", "not known when compiling"),
    (spread_that_grows, "*t", "may hold another number"),
]


@pytest.mark.parametrize("fn, token, words", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_spreads_refused_at_the_line(fn, token, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(X)
    assert words in info.value.reason, info.value.reason
    assert_points_at(info.value, fn, token, __file__)
