"""Reading rows or columns through a 1-d array of indices or a 1-d mask (``X[idx]``,
``X[:, keep]``) keeps the rank of the result known: the axis indexed becomes one axis of a
size not known when compiling. The rules downstream (a product, a reduction over an axis)
are then inlined for that rank, rather than called with a branch on ranks at run time.
Gradients are checked against finite differences; the adjoint is checked to inline them.
"""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

rng = np.random.default_rng(5)
X = rng.standard_normal((10, 4))
W = rng.standard_normal(4)
W2 = rng.standard_normal((4, 3))
IDX = np.array([0, 3, 3, 9, 2])
KEEP = np.array([True, False, True, True])


def rows_times_vector(w, X, idx):
    return np.sum((X[idx] @ w) ** 2)


def rows_times_matrix(W2, X, idx):
    return np.sum(np.tanh(X[idx, :] @ W2))


def masked_columns(w, X, keep):
    return np.sum(np.mean(X[:, keep], axis=1) * (X @ w))


def minibatches(w, X, idx):
    total = 0.0
    for k in range(2):  # the same rows, a step of a loop each
        total = total + np.mean((X[idx] @ (w * (k + 1.0))) ** 2)
    return total


def _layer(X, idx, W2):
    return X[idx] @ W2


def through_a_callee(W2, X, idx):
    return np.sum(np.sin(_layer(X, idx, W2)))


CASES = [
    (rows_times_vector, (W, X, IDX)),
    (rows_times_matrix, (W2, X, IDX)),
    (masked_columns, (W, X, KEEP)),
    (minibatches, (W, X, IDX)),
    (through_a_callee, (W2, X, IDX)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_gradient_and_inlined_adjoint(fn, args):
    check_grads(fn, *args, wrt=(0, 1))
    pair = s2sgrad.grad(fn).compiled_for((0, 1), args)
    # the product's rule is inlined for the known ranks: no call of a rule at run time
    assert "_vjp(" not in pair.adjoint_source, pair.adjoint_source
