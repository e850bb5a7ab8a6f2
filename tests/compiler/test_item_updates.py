"""Augmented assignments through a container slot or an attribute, as Python does them.

``d[k] += v``, ``xs[i] *= v``, ``obj.w -= v`` and ``self.w *= 2`` call the item's own
``+=``: for an array it updates the array in place, so every other name, slot or attribute
that holds the same array sees the new values; for a number or a tuple it rebinds the slot;
for a list it extends the list in place. Each program here either runs with exactly the
value and gradient of the plain call (checked against finite differences, the caller's
arguments unchanged after it), or is refused at its marked line where another holder of the
updated array is read afterwards, or the argument's own array would change.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.compiler.batching import NotBatchable
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(26)
X = rng.standard_normal(4)
W = rng.standard_normal((4, 4)) * 0.5


class Layer:
    def __init__(self, w):
        self.w = w

    def scale(self):
        self.w *= 2.0
        return self.w

    def shift(self, v):
        self.w += v


# --- accepted: no other holder of the updated array is read afterwards -----------------------


def dict_slot(x):
    params = {"w": x * 2.0, "b": np.sin(x)}
    params["w"] -= 0.1 * x
    return np.sum(params["w"] ** 2 * params["b"])


def dict_slot_times_itself(x):
    d = {"w": np.sin(x)}
    d["w"] *= d["w"]
    return np.sum(d["w"] * x)


def list_item(x):
    b = [x * 1.0, x * 2.0]
    b[0] += x
    b[-1] /= 3.0
    return np.sum(b[0] * b[1])


def dict_slot_in_loop(x):
    state = {"h": np.cos(x)}
    for _ in range(3):
        state["h"] *= x
    return np.sum(state["h"])


def appended_then_updated(x):
    xs = []
    for t in range(3):
        xs.append(np.sin(x * t))
        xs[-1] += x
    return np.sum(xs[0] * xs[2]) + np.sum(xs[1])


def list_of_tuples_item(x):
    pairs = [(x * 1.0, x * 2.0)]
    pairs[0] += (x * 3.0,)  # a tuple's += makes a new tuple
    return np.sum(pairs[0][0] * pairs[0][2])


def list_in_a_list(x):
    b = [[x * 1.0]]
    b[0] += [x * 2.0]  # extends the inner list in place
    return np.sum(b[0][0] * b[0][1])


def read_before_the_update(x):
    y = x * 1.0
    b = {"k": y}
    before = np.sum(y * y)
    b["k"] += x
    return before + np.sum(b["k"])


def numbers_in_a_dict(x):
    stats = {"sum": 0.0}
    for k in range(3):
        stats["sum"] += np.sum(x * k)
    return stats["sum"] ** 2


def attribute(x):
    layer = Layer(x * 1.0)
    layer.w += 1.0
    return np.sum(layer.w * x)


def method_on_self(x):
    layer = Layer(np.cos(x))
    out = np.sum(layer.scale() * x)
    layer.shift(x)
    return out + np.sum(layer.w)


def helper(x):
    d = {"w": np.tanh(x)}
    d["w"] += x
    return d["w"]


def through_a_callee(x):
    return np.sum(helper(x) * x)


def argument_under_another_key(x):
    d = {"w": x * 2.0, "x": x}  # the caller's array in another slot
    d["w"] -= 0.1 * d["x"]
    return np.sum(d["w"] * d["x"])


def name_held_under_another_key(x):
    y = np.sin(x)
    d = {"w": np.cos(x), "y": y}
    d["w"] *= 2.0
    return np.sum(d["w"] * y)


def keys_read_before(x):
    d = {"a": x * 1.0, "b": x * 3.0}
    b = d["b"]
    d["a"] += b
    return np.sum(d["a"] * b)


def attribute_alias(x):
    y = x * 1.0
    layer = Layer(y)
    layer.w += 1.0  # y is the attribute's array: updated too
    return np.sum(y * x)


def self_alias(x):
    y = x * 1.0
    layer = Layer(y)
    layer.scale()  # self.w is y's array: updated too
    return np.sum(y * x)


ACCEPTED = [argument_under_another_key, name_held_under_another_key, keys_read_before,
            dict_slot, dict_slot_times_itself, list_item, dict_slot_in_loop,
            appended_then_updated, list_of_tuples_item, list_in_a_list, read_before_the_update,
            numbers_in_a_dict, attribute, method_on_self, through_a_callee, attribute_alias,
            self_alias]


@pytest.mark.parametrize("f", ACCEPTED)
def test_an_update_through_a_slot_has_python_s_value_and_gradient(f):
    x = X.copy()
    check_grads(f, x, modes=("rev", "fwd"))
    np.testing.assert_array_equal(x, X)  # the caller's array as it was
    value, _ = s2sgrad.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(X.copy()), rtol=1e-13)
    np.testing.assert_array_equal(x, X)


@pytest.mark.parametrize("f", ACCEPTED)
@pytest.mark.parametrize("mode", ["batch", "batch-rev"])
def test_many_directions_or_cotangents_at_once(f, mode):
    try:
        check_grads(f, X.copy(), modes=(mode,))
    except NotBatchable as reason:  # one at a time instead, which the modes above check
        assert "element write" in str(reason), reason


@pytest.mark.parametrize("f", [dict_slot, dict_slot_in_loop, method_on_self, attribute_alias,
                               self_alias])
def test_second_order(f):
    check_grads(f, X, order=2, modes=("rev", "fwd"))


def test_decorated_on_a_tensor():
    loss = s2sgrad.grad(dict_slot_in_loop)
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = loss(x)
    out.backward()
    np.testing.assert_allclose(out.item(), dict_slot_in_loop(X.copy()), rtol=1e-13)
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(dict_slot_in_loop)(X),
                               rtol=1e-13)
    np.testing.assert_array_equal(x.detach().numpy(), X)


# --- refused: NumPy would show the update through another holder ------------------------------


def other_name_read(x):
    y = x * 1.0
    b = {"k": y}
    b["k"] += x
    return np.sum(y)  # <- refused


def held_before_the_update(x):
    params = {"w": x * 2.0}
    old = params["w"]
    params["w"] -= 0.1 * x
    return np.sum(old * x)  # <- refused


def two_slots_one_array(x):
    y = x * 1.0
    b = [y, y]
    b[0] += x  # <- refused
    return np.sum(b[1] * x)


def appended_twice(x):
    y = np.sin(x)
    xs = []
    xs.append(y)
    xs.append(y)
    xs[0] += 1.0  # <- refused
    return np.sum(xs[1] * x)


def list_repeated(x):
    b = [x * 1.0] * 2  # both slots hold one array
    b[0] += x  # <- refused
    return np.sum(b[1])


def argument_in_a_dict(x):
    d = {"w": x}
    d["w"] += 1.0  # <- refused
    return np.sum(d["w"])


def argument_in_an_attribute(x):
    layer = Layer(x)
    layer.w += 1.0  # <- refused
    return np.sum(layer.w)


def one_array_under_two_keys(x):
    y = x * 1.0
    d = {"w": y, "v": y}
    d["w"] += x  # <- refused
    return np.sum(d["v"] * x)


def one_and_true_are_one_key(x):
    y = x * 1.0
    d = {1: y}
    d[True] += x
    return np.sum(y * x)  # <- refused


def key_not_known(x, k):
    y = x * 1.0
    d = {"w": x * 2.0, "y": y}
    d[k] += x
    return np.sum(y * x)  # <- refused


REFUSED = [(one_array_under_two_keys, "d[", "put into a tuple, list or dict"),
           (one_and_true_are_one_key, "y", "shares memory"),
           (other_name_read, "np.sum", "shares memory"),
           (held_before_the_update, "old", "shares memory"),
           (two_slots_one_array, "b[", "put into a tuple, list or dict"),
           (appended_twice, "xs[", "put into a tuple, list or dict"),
           (list_repeated, "b[", "may be held elsewhere"),
           (argument_in_a_dict, "d[", "the caller's array"),
           (argument_in_an_attribute, "layer", "the caller's array")]


def test_an_update_under_a_key_not_known_when_compiling_may_be_any_slot():
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(key_not_known)(X, "y")
    assert "shares memory" in str(info.value)
    assert_points_at(info.value, key_not_known, "y")


@pytest.mark.parametrize("f, token, words", REFUSED)
def test_an_update_another_holder_would_see_is_refused_at_the_user_s_line(f, token, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(f)(X)
    assert words in str(info.value)
    assert_points_at(info.value, f, token)
