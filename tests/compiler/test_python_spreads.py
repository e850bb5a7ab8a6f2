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

import copy

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads, numeric_gradient
from tests.arguments import assert_unchanged

rng = np.random.default_rng(11)
X = rng.uniform(0.2, 0.9, 4)
M = rng.uniform(0.2, 0.9, (3, 4))


def checked(fn, *args, order=2):
    """The gradients of ``fn`` against finite differences, first order in both modes and
    second order where asked; its value as the plain call's; its arguments unchanged."""
    before = copy.deepcopy(args)
    expected = fn(*copy.deepcopy(args))
    value, _ = s2sgrad.value_and_grad(fn)(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    assert_unchanged(args, before, fn.__name__)
    check_grads(fn, *args, modes=("rev", "fwd"))
    if order == 2:
        check_grads(fn, *args, order=2, modes=("rev",))
    assert_unchanged(args, before, fn.__name__)


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
