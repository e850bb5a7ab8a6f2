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

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
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
