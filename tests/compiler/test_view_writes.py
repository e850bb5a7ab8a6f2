"""Writes through a view, and reads of a view after its base is written: Python's value and
gradient, or a refusal at the user's line, never a gradient that misses the write.

A view shares memory with its base: np.einsum of one operand that sums over nothing
(``'ii->i'``, ``'ij->ji'``, ``'ji'``, ``'...ii->...i'``), np.diagonal, transposes and
reshapes. Where a write through one name would show through the other at a later read, the
program is refused at that read (at the write, where the base is the caller's array), as
for the other views. Where nothing reads a value a write changed (an einsum that sums or
multiplies makes new memory, a copy, a write after the last read, a view made anew in each
iteration), the program compiles: its value is Python's, its gradient in both modes is
finite differences', the caller's arguments are unchanged. Each program also runs as a
``@s2sgrad.grad`` function on a Tensor, with the same refusal or the same gradient.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

X = np.array([0.7, -1.3, 2.1])
M = np.array([[1.0, 2.0, 0.5], [0.3, 1.5, -1.0], [2.0, 0.1, 0.7]])


# --- refused: a read that would see a write made through another name ------------------------


def einsum_diagonal_written(x):
    Y = np.outer(x, x)
    d = np.einsum('ii->i', Y)
    d[0] = 5.0
    return np.sum(Y * Y)  # <- refused


def einsum_diagonal_read(x):
    Y = np.outer(x, x)
    d = np.einsum('ii->i', Y)
    Y[1, 1] = 3.0
    return np.sum(d * x)  # <- refused


def einsum_transpose_written(x):
    Y = np.outer(x, x + 1.0)
    t = np.einsum('ij->ji', Y)
    t[0, 1] = 5.0
    return np.sum(Y * Y)  # <- refused


def einsum_implicit_transpose_written(x):
    Y = np.outer(x, x + 1.0)
    t = np.einsum('ji', Y)
    t[0, 1] = x[0]
    return np.sum(Y * Y)  # <- refused


def einsum_batched_diagonal_written(x):
    Y = np.outer(x, x).reshape(1, 3, 3) * np.ones((2, 1, 1))
    d = np.einsum('...ii->...i', Y)
    d[1, 0] = 2.0
    return np.sum(Y * Y)  # <- refused


def einsum_written_in_a_loop(x):
    Y = np.outer(x, x)
    d = np.einsum('ii->i', Y)
    for i in range(3):
        d[i] = x[i] * 2.0
    return np.sum(Y * Y)  # <- refused


def einsum_read_in_a_loop(x):
    Y = np.outer(x, x)
    d = np.einsum('ii->i', Y)
    s = 0.0
    for i in range(3):
        Y[i, i] = x[i] * 2.0
        s = s + np.sum(d)  # <- refused
    return s


def diagonal_of(Y):
    return np.einsum('ii->i', Y)


def einsum_from_a_helper_written(x):
    Y = np.outer(x, x)
    d = diagonal_of(Y)
    d[0] = 5.0
    return np.sum(Y * Y)  # <- refused


def einsum_from_a_helper_read(x):
    Y = np.outer(x, x)
    d = diagonal_of(Y)
    Y[1, 1] = 3.0
    return np.sum(d * x)  # <- refused


def einsum_of_the_argument_written(x):
    d = np.einsum('ii->i', x)
    d[0] = 5.0  # <- refused
    return np.sum(x)


def np_diagonal_read(x):
    Y = np.outer(x, x)
    d = np.diagonal(Y)
    Y[1, 1] = 3.0
    return np.sum(d * x)  # <- refused


def transpose_written(x):
    Y = np.outer(x, x + 1.0)
    t = np.transpose(Y)
    t[0, 1] = 5.0
    return np.sum(Y * Y)  # <- refused


def transpose_read(x):
    Y = np.outer(x, x + 1.0)
    Yt = Y.T
    Y[0, 1] = 5.0
    return np.sum(Yt * Yt)  # <- refused


def reshape_written(x):
    Y = np.outer(x, x)
    r = Y.reshape(9)
    r[4] = 5.0
    return np.sum(Y * Y)  # <- refused


def reshape_read(x):
    Y = np.outer(x, x)
    flat = Y.reshape(9)
    Y[1, 1] = 3.0
    return np.sum(flat * flat)  # <- refused


# (program, its argument, the token the refusal points at on the marked line)
REFUSED = [
    (einsum_diagonal_written, X, "Y"), (einsum_diagonal_read, X, "d"),
    (einsum_transpose_written, X, "Y"), (einsum_implicit_transpose_written, X, "Y"),
    (einsum_batched_diagonal_written, X, "Y"), (einsum_written_in_a_loop, X, "Y"),
    (einsum_read_in_a_loop, X, "np.sum"), (einsum_from_a_helper_written, X, "Y"),
    (einsum_from_a_helper_read, X, "d"), (einsum_of_the_argument_written, M, "d"),
    (np_diagonal_read, X, "d"), (transpose_written, X, "Y"), (transpose_read, X, "Yt"),
    (reshape_written, X, "Y"), (reshape_read, X, "flat"),
]


# --- compiled: no read sees a write through another name -------------------------------------


def einsum_row_sums_written(x):
    Y = np.outer(x, x)
    d = np.einsum('ij->i', Y)
    d[0] = 5.0
    return np.sum(Y * Y) + np.sum(d * x)


def einsum_product_written(x):
    Y = np.outer(x, x)
    d = np.einsum('ij,j->i', Y, x)
    d[0] = 5.0
    return np.sum(Y * Y) + np.sum(d * x)


def einsum_product_of_the_argument_written(x):
    d = np.einsum('ij,jk->ik', x, x)
    d[0, 0] = 1.0
    return np.sum(d * x)


def einsum_trace_then_base_written(x):
    Y = np.outer(x, x)
    t = np.einsum('ii', Y)
    Y[0, 0] = 2.0
    return t * np.sum(Y)


def einsum_written_after_its_last_read(x):
    Y = np.outer(x, x)
    d = np.einsum('ii->i', Y)
    s = np.sum(d * x)
    Y[1, 1] = 3.0
    return s + np.sum(Y)


def einsum_view_alone_read_after_its_write(x):
    Y = np.outer(x, x)
    d = np.einsum('ii->i', Y)
    d[0] = x[1]
    return np.sum(d * x)


def einsum_copied_then_written(x):
    Y = np.outer(x, x)
    d = np.einsum('ii->i', Y).copy()
    d[0] = 5.0
    return np.sum(Y * Y) + np.sum(d * x)


def einsum_made_in_each_iteration(x):
    s = 0.0
    for i in range(3):
        Y = np.outer(x, x) * (i + 1.0)
        d = np.einsum('ii->i', Y)
        d[i] = x[i]
        s = s + np.sum(d * d)
    return s


def column_sums_of(Y):
    return np.einsum('ij->j', Y)


def einsum_sum_from_a_helper_written(x):
    Y = np.outer(x, x)
    d = column_sums_of(Y)
    d[0] = 5.0
    return np.sum(Y * Y) + np.sum(d * x)


def einsum_of_the_argument_read(x):
    d = np.einsum('ii->i', x)
    return np.sum(d * d)


def np_diagonal_read_before_the_write(x):
    Y = np.outer(x, x)
    s = np.sum(np.diagonal(Y) * x)
    Y[1, 1] = 3.0
    return s + np.sum(Y * Y)


def transpose_alone_read_after_its_write(x):
    Y = np.outer(x, x + 1.0)
    t = Y.T
    t[0, 1] = x[2]
    return np.sum(t * t)


def reshape_written_after_its_last_read(x):
    Y = np.outer(x, x)
    r = Y.reshape(9)
    s = np.sum(r * r)
    r[4] = 5.0
    return s + np.sum(r)


# np.diag of a vector builds a new matrix (of a matrix, it is a view of the diagonal): its
# entries may be written while the vector is read again
def diag_of_the_argument_written(x):
    H = np.diag(x)
    idx = np.arange(len(x) - 1)
    H[idx, idx + 1] = -x[1:]
    H[idx + 1, idx] = 0.5
    return (x @ H @ x) / (x @ x) + np.sum(x ** 2)


def diag_written_in_a_loop(x):
    total = 0.0
    for k in range(2):
        D = np.diag(x * (k + 1.0), 1)
        D[0, 0] = x[0] ** 2
        D[-1, 1:] += x
        total = total + np.sum(D * D) + x[k]
    return total


def diag_built_by_a_helper_written(x):
    def tridiagonal(v):
        T = np.diag(v)
        T[0, 1] = v[1]
        return T
    T = tridiagonal(x)
    T[2, 1] += x[0]
    return np.sum(np.tanh(T @ x)) + np.sum(x)


ACCEPTED = [
    (diag_of_the_argument_written, X), (diag_written_in_a_loop, X),
    (diag_built_by_a_helper_written, X),
    (einsum_row_sums_written, X), (einsum_product_written, X),
    (einsum_product_of_the_argument_written, M), (einsum_trace_then_base_written, X),
    (einsum_written_after_its_last_read, X), (einsum_view_alone_read_after_its_write, X),
    (einsum_copied_then_written, X), (einsum_made_in_each_iteration, X),
    (einsum_sum_from_a_helper_written, X), (einsum_of_the_argument_read, M),
    (np_diagonal_read_before_the_write, X), (transpose_alone_read_after_its_write, X),
    (reshape_written_after_its_last_read, X),
]


# --- the checks -------------------------------------------------------------------------------


def _ids(cases):
    return [case[0].__name__ for case in cases]


@pytest.mark.parametrize("fn, arg, token", REFUSED, ids=_ids(REFUSED))
def test_a_read_that_would_see_a_write_through_another_name_is_refused(fn, arg, token):
    with pytest.raises(s2sgrad.TransformError) as error:
        s2sgrad.value_and_grad(fn)(arg.copy())
    assert_points_at(error.value, fn, token)


@pytest.mark.parametrize("fn, arg, token", REFUSED, ids=_ids(REFUSED))
def test_the_same_is_refused_on_a_tensor(fn, arg, token):
    x = s2sgrad.tensor(arg.copy(), requires_grad=True)
    with pytest.raises(s2sgrad.TransformError) as error:
        s2sgrad.grad(fn)(x)
    assert_points_at(error.value, fn, token)


@pytest.mark.parametrize("fn, arg", ACCEPTED, ids=_ids(ACCEPTED))
def test_a_program_no_read_of_which_sees_another_names_write_is_differentiated(fn, arg):
    x = arg.copy()
    value, grad = s2sgrad.value_and_grad(fn)(x)
    assert np.array_equal(x, arg), "the caller's argument changed"
    assert value == fn(arg.copy())
    check_grads(fn, arg.copy(), modes=("rev", "fwd"))


@pytest.mark.parametrize("fn, arg", ACCEPTED, ids=_ids(ACCEPTED))
def test_the_same_on_a_tensor_gives_the_same_gradient(fn, arg):
    x = s2sgrad.tensor(arg.copy(), requires_grad=True)
    out = s2sgrad.grad(fn)(x)
    out.backward()
    value, grad = s2sgrad.value_and_grad(fn)(arg.copy())
    assert float(out.detach().numpy()) == value
    assert np.allclose(x.grad.numpy(), grad, rtol=1e-12, atol=1e-12)
    assert np.array_equal(x.detach().numpy(), arg), "the tensor's values changed"
