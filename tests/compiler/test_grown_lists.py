"""Lists whose length is not known when compiling (grown by appends in a loop, built by a
comprehension or ``list(zip(...))``, sliced, concatenated): what their items are.

The analysis keeps, for such a list, what every item may be (the join of what was put in),
so an item read from it is a tuple where tuples were appended (``W, b = layers[0]``, whose
arrays have different shapes), a number where numbers were, an array where arrays were:
each read means what Python makes it mean. ``max(xs)`` and ``min(xs)`` of one iterable are
computed as Python does (the first largest item). Each program is checked as users write it: its
compiled forward equals the plain call, gradients agree with central differences in both
modes and at second order, on arrays and on Tensors.
"""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(3)
X = rng.uniform(-0.8, 0.8, 10)
INPUT = rng.uniform(-1.0, 1.0, (4, 2))


def _unflatten(x):
    return [x[:4].reshape(2, 2), x[4:6], x[6:8].reshape(2, 1), x[8:9]]


def pairs_by_zip(x):
    flat = _unflatten(x)
    layers = list(zip(flat[::2], flat[1::2]))
    h = INPUT
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def pairs_by_appends(x):
    flat = _unflatten(x)
    layers = []
    for k in range(0, len(flat), 2):
        layers.append((flat[k], flat[k + 1]))
    W, b = layers[0]
    V, c = layers[-1]
    return np.sum(np.tanh(INPUT @ W + b) @ V + c)


def pairs_by_comprehension(x):
    flat = _unflatten(x)
    layers = [(flat[k], flat[k + 1]) for k in range(0, len(flat), 2)]
    total = 0.0
    for W, b in layers[1:]:
        total = total + np.sum(W ** 2) + np.sum(np.sin(b))
    first = layers[0]
    return total + np.sum(first[0] * 0.5) + np.sum(first[1] ** 3)


def tuple_item_repeated(x):
    # an item that is a tuple: `* 2` repeats it, as Python does (not arithmetic)
    pieces = []
    for k in range(2):
        pieces.append((x[k] * 2.0, np.sin(x[k + 2])))
    doubled = pieces[1] * 2
    return doubled[0] * doubled[3] + sum(doubled)


def numbers_grown_then_summed(x):
    values = []
    for k in range(4):
        values.append(float(k) * x[k] ** 2)
    head, tail = values[0], values[1:]
    return head * 2.0 + sum(tail) + max(values[2], values[3])


def concatenated_then_read(x):
    flat = _unflatten(x)
    extra = []
    for k in range(2):
        extra.append((flat[2 * k], flat[2 * k + 1]))
    layers = extra + [(flat[0] * 2.0, flat[1])]
    W, b = layers[2]
    return np.sum(W @ b) + np.sum(layers[1][1])


PROGRAMS = [pairs_by_zip, pairs_by_appends, pairs_by_comprehension, tuple_item_repeated,
            numbers_grown_then_summed, concatenated_then_read]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_items_are_what_was_put_in(fn):
    kept = X.copy()
    value, _ = s2sgrad.value_and_grad(fn)(X)
    assert np.array_equal(value, fn(X)), (value, fn(X))
    check_grads(fn, X, modes=("rev", "fwd"), order=2)
    assert np.array_equal(X, kept)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_on_tensors(fn):
    t = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = s2sgrad.grad(fn)(t)
    assert np.array_equal(np.asarray(out.data), fn(X))
    out.backward()
    np.testing.assert_allclose(t.grad.data, s2sgrad.gradient(fn)(X), rtol=1e-12)


# --- max() and min() of one iterable, as Python computes them: the first largest item -----


def worst_group(x):
    losses = []
    for k in range(3):
        losses.append(np.mean((x[3 * k:3 * k + 3] - 0.1 * k) ** 2))
    return max(losses) + 0.1 * min(losses)


def largest_of_a_tuple(x):
    pair = (np.sum(x ** 2), np.sum(np.sin(x)))
    return max(pair) - min(pair) * 0.5


def largest_of_a_generator(x):
    return max(v * v for v in x[:4]) + min(np.cos(v) for v in x[4:8])


def largest_entry_of_an_array(x):
    return max(x[2:6] * 3.0) + min(np.tanh(x))


def best_in_a_loop(x):
    total = 0.0
    for k in range(3):
        candidates = [x[k] * 2.0, x[k + 1] ** 2, np.sin(x[k + 2])]
        total = total + max(candidates) * (k + 1.0)
    return total


EXTREMA = [worst_group, largest_of_a_tuple, largest_of_a_generator, largest_entry_of_an_array,
           best_in_a_loop]


@pytest.mark.parametrize("fn", EXTREMA, ids=lambda f: f.__name__)
def test_max_and_min_of_one_iterable(fn):
    value, _ = s2sgrad.value_and_grad(fn)(X)
    assert value == fn(X), (value, fn(X))
    check_grads(fn, X, modes=("rev", "fwd"), order=2)
    t = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = s2sgrad.grad(fn)(t)
    out.backward()
    np.testing.assert_allclose(t.grad.data, s2sgrad.gradient(fn)(X), rtol=1e-12)


def largest_of_nothing(x):
    return max(x[:0] * 1.0)


def test_max_of_an_empty_sequence_raises_python_s_error():
    with pytest.raises(ValueError) as plain:
        largest_of_nothing(X)
    with pytest.raises(ValueError) as compiled:
        s2sgrad.gradient(largest_of_nothing)(X)
    assert str(compiled.value) == str(plain.value)


# --- items of kinds that have no join (a list and numbers in one list) ----------------------


def mixed_items_read_in_a_loop(x):
    xs = [[x[0]], x[1], x[2]]
    ys = []
    for v in xs:
        ys.append(v)  # noqa: PERF402 (a loop, as users write it)
    return ys[1] * 3.0 + ys[2]


def mixed_item_indexed(x):
    xs = [[x[0]], x[1], x[2]]
    ys = []
    for v in xs:
        ys.append(v)  # noqa: PERF402 (a loop, as users write it)
    return ys[0][0] ** 2  # <- refused


def test_indexing_an_item_of_no_known_kind_is_refused_at_the_user_s_line():
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(mixed_item_indexed)(X)
    assert "whose kind is not known here" in str(info.value)
    assert "_t" not in str(info.value).splitlines()[0]
    assert_points_at(info.value, mixed_item_indexed, "ys[0][0]", __file__)


def slice_of_a_nested_list(x):
    rows = [[x[0], x[1]], x[2], x[3] * 2.0]
    rest = rows[1:]
    return rest[0] * rest[1] + rows[0][1]


def item_at_a_run_time_index(x):
    parts = [[x[0] * 2.0], x[1] ** 2, np.sin(x[2])]
    total = 0.0
    for k in range(1, 3):
        total = total + parts[k] * (k + 1.0)
    return total + parts[0][0]


MIXED = [mixed_items_read_in_a_loop, slice_of_a_nested_list, item_at_a_run_time_index]


@pytest.mark.parametrize("fn", MIXED, ids=lambda f: f.__name__)
def test_items_of_kinds_with_no_join_carry_their_gradient(fn):
    value, _ = s2sgrad.value_and_grad(fn)(X)
    assert value == fn(X), (value, fn(X))
    check_grads(fn, X, modes=("rev", "fwd"))


def test_a_slice_of_a_list_passed_in_keeps_its_items():
    def first_of_rest(xs):
        return xs[1:][0]

    np.testing.assert_equal(s2sgrad.gradient(first_of_rest)([[1.0], 2.0, 1.5]),
                            [[0.0], 1.0, 0.0])
