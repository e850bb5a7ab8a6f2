"""Soundness: NumPy calls that write into an array they are given, calls whose value is
dropped, the methods of ufuncs, reductions with where= and initial=, and np.einsum's
interleaved form.

``np.add.at(y, idx, v)`` (and ``np.subtract.at``) changes y in place, each occurrence of a
repeated position adding its part; ``out=`` (and a ufunc's output passed by position) writes
the result into an array, which is also the call's value; a NumPy function with a rule whose
value is dropped changes nothing. Each variant users write is right (the compiled forward
equals the plain call, the caller's arguments are unchanged, and the derivatives match
central finite differences: reverse, forward, batched and second order), or refused at
transform time at the user's line.
"""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import TransformError
from s2sgrad.testing import check_grads
from tests.cases import outputs as cases
from tests.located import assert_points_at

rng = np.random.default_rng(28)
X = rng.standard_normal(5)


# indexes the batched tangent cannot take (a global array, known only at run time): their
# directions are taken one at a time
UNBATCHED = {"add_at_through_helper", "decorated_add_at",
             # a ufunc's outer of a moving second operand: its rows are not the batch's
             "ufunc_outers", "ufunc_method_in_loop",
             # np.cumprod's tangent is taken row by row, which has no second derivative
             "ufunc_accumulations",
             # a reduction's where= or initial= has no form for a batch of tangents
             "masked_reductions", "masked_matrix_reductions", "masked_in_loop"}


def check(fn, *args):
    """The value is the plain call's, the arguments are unchanged, and the derivatives of
    both orders match finite differences in every mode."""
    before = [np.copy(a) for a in args]
    expected = fn(*[np.copy(a) for a in args])
    value, grad = s2sgrad.value_and_grad(fn)(*args)
    assert np.allclose(value, expected, rtol=1e-12, atol=1e-12), (value, expected)
    for a, b in zip(args, before, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.shape(grad) == np.shape(args[0])
    modes = ("rev", "fwd") if fn.__name__ in UNBATCHED else ("rev", "fwd", "batch")
    check_grads(fn, *args, wrt=0, modes=modes, order=2)


def refused(fn, token, words, *args):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(*(args or (X,)))
    assert words in str(info.value), str(info.value)
    assert_points_at(info.value, fn, token, cases.__file__)


ADD_AT = [cases.add_at_zeros, cases.add_at_list_index, cases.add_at_into_computed,
          cases.add_at_scalar, cases.add_at_rows, cases.add_at_slice_rows, cases.subtract_at,
          cases.add_at_in_loop, cases.add_at_in_branch, cases.add_at_through_helper]


@pytest.mark.parametrize("fn", ADD_AT, ids=lambda f: f.__name__)
def test_add_at(fn):
    check(fn, X)
    check(fn, -X)  # (the other branch)


def test_add_at_adds_every_repeated_position():
    # y[0] receives x[0] + x[2] + x[4]: its gradient reaches all three
    g = s2sgrad.gradient(cases.add_at_zeros)(X)
    y0 = X[0] + X[2] + X[4]
    np.testing.assert_allclose(g[[0, 2, 4]], [2 * y0] * 3)
    np.testing.assert_allclose(g[[1, 3]], [2 * X[1], 2 * X[3]])


def forward_source(fn, *args):
    return s2sgrad.compiler.function.specialiser(fn).compiled((0,), args, {}).forward_source


def test_add_at_is_written_as_numpy_does_it():
    # the forward adds in place, as the user wrote it; nothing copies the array
    source = forward_source(cases.add_at_zeros, X)
    assert "np.add.at(y" in source, source
    assert "copy" not in source, source


def test_add_at_decorated_on_tensors():
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = cases.decorated_add_at(x)
    out.backward()
    expected = s2sgrad.gradient(cases.decorated_add_at.fn)(X)
    np.testing.assert_allclose(x.grad.numpy(), expected)
    check(cases.decorated_add_at.fn, X)


@pytest.mark.parametrize("fn,token,words", [
    (cases.add_at_on_argument, "np.add.at", "the caller's array"),
    (cases.add_at_of_view, "y ** 2", "shares memory"),
    (cases.add_at_into_container, "np.add.at", "put into a tuple, list or dict"),
    (cases.maximum_at, "np.maximum.at", "only np.add.at and np.subtract.at"),
    (cases.add_at_on_list, "np.add.at", "followed on NumPy arrays only"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_add_at_refused(fn, token, words):
    refused(fn, token, words)


OUT = [cases.out_keyword, cases.out_is_the_value, cases.out_into_operand,
       cases.out_by_position, cases.out_tuple, cases.out_of_reduction, cases.out_broadcast,
       cases.out_in_loop]


@pytest.mark.parametrize("fn", OUT, ids=lambda f: f.__name__)
def test_out_argument(fn):
    x = X[:4] if fn in (cases.out_tuple,) else X
    check(fn, x * 0.7 + 0.05)  # away from the integers np.floor jumps at


@pytest.mark.parametrize("fn,token,words", [
    (cases.out_into_argument, "x)", "the caller's array"),
    (cases.out_into_int_array, "y)", "an array of integers"),
    (cases.out_with_where, "y, where", "keeps its values where the condition is false"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_out_refused(fn, token, words):
    refused(fn, token, words)


@pytest.mark.parametrize("fn", [cases.dropped_sum, cases.dropped_calls,
                                cases.dropped_call_of_nested_value], ids=lambda f: f.__name__)
def test_dropped_calls(fn):
    check(fn, X)


def test_dropped_call_is_not_in_the_generated_code():
    source = forward_source(cases.dropped_calls, X)
    assert "np.tanh(" in source, source
    for name in ("np.dot(", "norm(", "np.exp("):
        assert name not in source, source


@pytest.mark.parametrize("fn,token,words", [
    (cases.dropped_sort_method, "y.sort()", "not used"),
    (cases.dropped_fill_diagonal, "np.fill_diagonal", "not used"),
    (cases.dropped_call_that_writes_into_its_input, "np.nan_to_num", "not used"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_dropped_calls_that_may_change_arrays_are_refused(fn, token, words):
    refused(fn, token, words)


UFUNC_METHODS = [cases.ufunc_reductions, cases.ufunc_accumulations, cases.ufunc_outers,
                 cases.ufunc_method_out, cases.ufunc_method_in_loop]


@pytest.mark.parametrize("fn", UFUNC_METHODS, ids=lambda f: f.__name__)
def test_ufunc_methods(fn):
    check(fn, X)


@pytest.mark.parametrize("fn", [cases.masked_reductions, cases.masked_matrix_reductions,
                                cases.masked_in_loop], ids=lambda f: f.__name__)
def test_reductions_with_where_and_initial(fn):
    check(fn, X)
    check(fn, X[::-1] * 1.3)


def test_einsum_interleaved():
    check(cases.einsum_interleaved, X[:5])


@pytest.mark.parametrize("fn", [cases.add_at_read_through_alias, cases.out_through_alias],
                         ids=lambda f: f.__name__)
def test_a_name_of_the_array_written_into_reads_the_written_values(fn):
    # k = y; np.add.at(y, ...); k * y: one array, so k reads what was added, as in NumPy
    x = X.copy()
    value, _ = s2sgrad.value_and_grad(fn)(x)
    assert value == fn(x.copy())
    check_grads(fn, x, modes=("rev", "fwd"))
