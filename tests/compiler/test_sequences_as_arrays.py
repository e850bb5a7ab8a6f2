"""Lists and tuples where NumPy takes an array: ``np.mean(losses)``, ``np.std([a, b])``,
``np.dot(x, [1.0, 2.0])``, ``x * [1.0, 2.0]``.

NumPy converts such an argument to an array before it computes; the compiled code writes that
conversion (``np.asarray(losses)``) and differentiates through it, so the gradient reaches
every item of the list. Each program is checked as users write it: its compiled forward equals
the plain call, its gradients agree with central differences in reverse and forward mode
(batched where its items are known) and at second order, on arrays and through ``@grad`` on Tensors, and the caller's arrays are
unchanged. An operator converts a list only where its other operand is an array (Python
raises a TypeError for ``2.0 * [a, b]``, and so does the compiled code), and a module that
reads NumPy by no name has no name to write the conversion with: that stays refused at the
user's line.
"""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import TransformError
from s2sgrad.testing import check_grads
from tests.cases import no_numpy_name
from tests.located import assert_points_at

rng = np.random.default_rng(11)
X = rng.uniform(0.5, 1.5, 4)
M = rng.uniform(0.5, 1.5, (3, 4))


def mean_of_appended_losses(x):
    losses = []
    for i in range(3):
        losses.append(np.sum(x * (i + 1)) ** 2)
    return np.mean(losses)


def statistics_of_a_display(x):
    a = x[0] * 2.0
    b = x[1] ** 2
    return np.mean([a, b]) + np.std([a, b]) + np.var((a, x[2]))


def sum_and_max_of_a_named_list(x):
    vals = [x[0] * x[1], np.sin(x[2]), x[3] ** 2]
    return np.sum(vals) + np.max(vals) * np.min(vals)


def mean_of_rows(x):
    rows = [x * 2.0, x ** 2, np.cos(x)]
    return np.sum(np.mean(rows, axis=0) ** 2)


def norm_of_a_displacement(x):
    dx = x[0] - x[1]
    dy = x[2] - x[3]
    return np.linalg.norm([dx, dy]) + np.hypot(dx, dy)


def append_a_list(x):
    return np.sum(np.append(x, [x[0] * 3.0, 2.0]) ** 2)


def squares_of_pairs(x):
    pts = [(x[0], x[1]), (x[1], x[2]), (x[2], x[3])]
    return np.sum(np.square(pts)) + np.sum(np.asarray(pts)[:, 0])


def dot_with_a_constant_list(x):
    return np.dot(x, [1.0, 2.0, 3.0, 4.0]) + np.sum(x * [1.0, -1.0, 2.0, 0.5])


def list_on_the_left(x):
    return np.sum([0.5, 1.5, 2.5, 3.5] * x ** 2) + np.sum([x[0], x[1]] @ M[:2])


def keyword_argument(x):
    return np.mean(a=[x[0], x[1] * x[2]]) + np.sum(np.maximum(x, [1.0, 1.0, 0.0, 2.0]))


def per_step_statistics(x):
    total = 0.0
    h = x
    for _ in range(3):
        h = np.tanh(h) * 1.5
        total = total + np.std([h[0], h[1], h[2]]) + np.mean((h[3], total))
    return total


def _spread(values):
    return np.max(values) - np.min(values)


def through_a_helper(x):
    # the same helper called with a list and with an array: converted at both, a no-op
    # on the array
    return _spread([x[0], x[1] ** 2, x[2]]) + _spread(x ** 3)


def nested_function(x):
    def energy(parts):
        return np.sum(np.square(parts))

    return energy([x[0] - x[1], x[2] * x[3]]) + energy((x[1], x[3]))


def tuple_of_arrays(x, m):
    return np.sum(np.mean((x, m[0], m[1] * x), axis=0) ** 2) + np.sum(np.var((m[2], x), axis=1))


PROGRAMS = [mean_of_appended_losses, statistics_of_a_display, sum_and_max_of_a_named_list,
            mean_of_rows, norm_of_a_displacement, append_a_list, squares_of_pairs,
            dot_with_a_constant_list, list_on_the_left, keyword_argument,
            per_step_statistics, through_a_helper, nested_function]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_gradients_through_the_conversion(fn):
    kept = X.copy()
    value, _ = s2sgrad.value_and_grad(fn)(X)
    assert np.array_equal(value, fn(X)), (value, fn(X))
    check_grads(fn, X, modes=("rev", "fwd"), order=2)
    assert np.array_equal(X, kept)


# Batched tangents stack the rows of a list's items where the list's items are known; a
# list grown in a loop, a nested list, and jvps that batching does not cover (np.append,
# np.std's at second order) take one jvp per direction instead.
BATCHED = [statistics_of_a_display, mean_of_rows, norm_of_a_displacement,
           dot_with_a_constant_list, list_on_the_left, keyword_argument, through_a_helper,
           nested_function]


@pytest.mark.parametrize("fn", BATCHED, ids=lambda f: f.__name__)
def test_batched_tangents_through_the_conversion(fn):
    check_grads(fn, X, modes=("batch",))


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_on_tensors(fn):
    decorated = s2sgrad.grad(fn)
    t = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = decorated(t)
    assert np.array_equal(np.asarray(out.data), fn(X))
    out.backward()
    np.testing.assert_allclose(t.grad.data, s2sgrad.gradient(fn)(X), rtol=1e-12)


def test_tuple_of_arrays_and_rows_of_a_matrix():
    check_grads(tuple_of_arrays, X, M, modes=("rev", "fwd", "batch"), order=2)
    value, _ = s2sgrad.value_and_grad(tuple_of_arrays, (0, 1))(X, M)
    assert value == tuple_of_arrays(X, M)


def test_the_conversion_is_written_in_the_generated_code():
    decorated = s2sgrad.grad(mean_of_appended_losses)
    decorated(s2sgrad.tensor(X, requires_grad=True))
    assert "np.asarray(losses" in decorated.forward_source, decorated.forward_source


def scalar_times_a_list(x):
    return np.sum(2.0 * [x[0], x[1]])


def test_an_operator_without_an_array_operand_is_not_converted():
    # a list times a float is Python's TypeError, not NumPy's to convert: so it is compiled
    with pytest.raises(TypeError, match="can't multiply sequence"):
        scalar_times_a_list(X)
    with pytest.raises(TypeError, match="can't multiply sequence"):
        s2sgrad.gradient(scalar_times_a_list)(X)


def test_a_module_without_a_name_for_numpy_is_refused_at_the_call():
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(no_numpy_name.spread)(X)
    assert "NumPy converts it to an array" in str(info.value)
    assert_points_at(info.value, no_numpy_name.spread, "average([", no_numpy_name.__file__)
    # the same function with the list made an array by hand is differentiated
    check_grads(no_numpy_name.spread_of_array, X)
