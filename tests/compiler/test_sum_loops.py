"""A loop whose steps only add into a sum keeps nothing per step.

When what a loop's adjoint reads of a step depends only on the loop's index and on values
the loop does not change (``total = total + np.tanh(w * x[i])``), the forward pushes
nothing and the adjoint computes those values again, walking the same range backwards:
memory O(1) in the number of steps, not O(n). A loop whose steps depend on each other
(Horner, an RNN) keeps its list; so does one that draws random numbers, breaks, or reads a
value changed after the loop.

Each family is checked against central differences (and second order where it applies),
and the generated code is read: no list where nothing needs keeping, one where it does.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

rng = np.random.default_rng(5)
X = rng.standard_normal(7)
M = rng.standard_normal((5, 3))
XS = [float(v) for v in rng.standard_normal(6)]


def pair(f, *args, wrt=0):
    compiled = s2sgrad.grad(f).compiled_for((wrt,) if isinstance(wrt, int) else wrt, args)
    return compiled.forward_source, compiled.adjoint_source


def indexed_sum(w, x):
    total = 0.0
    for i in range(len(x)):
        total = total + np.tanh(w * x[i])
    return total


def augmented_sum(w, x):
    total = 0.0
    for i in range(x.shape[0]):
        total += np.sin(w * x[i]) ** 2
    return total


def list_sum(w, xs):
    total = 0.0
    for xi in xs:
        total += math.sin(w * xi) ** 2
    return total


def two_sums(w, x):
    a = 0.0
    b = 0.0
    for i in range(len(x)):
        t = np.exp(-w * x[i] * x[i])
        a = a + t
        b = b + x[i] * t
    return a * b


def row_sum(w, m):
    total = 0.0
    for i in range(m.shape[0]):
        total = total + np.sum(np.tanh(m[i] * w))
    return total * total


def array_sum(w, m):
    """An array accumulator: its shape is saved per step (the shapes of a sum that
    broadcasts may grow), so the list stays; the gradient is right either way."""
    total = np.zeros(m.shape[1])
    for i in range(m.shape[0]):
        total = total + np.tanh(m[i] * w)
    return np.sum(total * total)


def sum_of_a_callee(w, x):
    total = 0.0
    for i in range(len(x)):
        total = total + indexed_sum(w, x[i:i + 2])
    return total


def last_step_read_after(w, x):
    total = 0.0
    t = 0.0
    for i in range(len(x)):
        t = np.tanh(w * x[i])
        total = total + t
    return total * t


def changed_after(w, x):
    y = x * 1.0
    total = 0.0
    for i in range(len(y)):
        total = total + np.tanh(w * y[i])
    y[0] = 5.0
    return total + np.sum(y * w)


def seeded_draws(w, x):
    gen = np.random.default_rng(7)
    total = 0.0
    for i in range(len(x)):
        total = total + w * x[i] * float(gen.normal())
    return total


def global_draws(w, x):
    np.random.seed(11)
    total = 0.0
    for i in range(len(x)):
        total = total + w * x[i] * float(np.random.normal())
    return total


def horner(x, coeffs):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def with_break(w, x):
    total = 0.0
    for i in range(len(x)):
        total = total + np.tanh(w * x[i])
        if total > 1.5:
            break
    return total


SUMS = [
    (indexed_sum, (0.7, X)),
    (augmented_sum, (0.7, X)),
    (list_sum, (0.7, XS)),
    (two_sums, (0.4, X)),
    (row_sum, (np.array([0.3, -0.2, 0.5]), M)),
]

KEEPS = [
    (horner, (0.6, XS)),
    (with_break, (0.7, X)),
    (last_step_read_after, (0.7, X)),
    (changed_after, (0.7, X)),
    (seeded_draws, (0.7, X)),
    (global_draws, (0.7, X)),
    (sum_of_a_callee, (0.7, X)),
    (array_sum, (np.array([0.3, -0.2, 0.5]), M)),
]


@pytest.mark.parametrize("f, args", SUMS + KEEPS, ids=[f.__name__ for f, _ in SUMS + KEEPS])
def test_gradient(f, args):
    check_grads(f, *args, modes=("rev", "fwd"))


@pytest.mark.parametrize("f, args", SUMS[:2] + SUMS[3:], ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(f, args):
    check_grads(f, *args, wrt=0, order=2)


@pytest.mark.parametrize("f, args", SUMS, ids=[f.__name__ for f, _ in SUMS])
def test_a_sum_keeps_nothing_per_step(f, args):
    forward, adjoint = pair(f, *args, wrt=(0, 1))
    assert "append" not in forward and "_steps" not in forward, forward
    assert "reversed(" in adjoint, adjoint


@pytest.mark.parametrize("f, args", SUMS[:2], ids=[f.__name__ for f, _ in SUMS[:2]])
def test_what_is_saved_does_not_grow_with_the_steps(f, args):
    def saved_size(n):
        x = np.linspace(-1.0, 1.0, n)
        compiled = s2sgrad.grad(f).compiled_for((0, 1), (args[0], x))
        _, saved = compiled.forward(args[0], x)
        return sum(len(v) if isinstance(v, list) else 1 for v in saved)

    assert saved_size(10) == saved_size(1000)


def test_the_adjoint_computes_the_step_again():
    _, adjoint = pair(indexed_sum, 0.7, X, wrt=(0, 1))
    loop = adjoint[adjoint.index("for i in reversed("):]
    assert "np.tanh(" in loop and "x[i]" in loop


@pytest.mark.parametrize("f, args", KEEPS, ids=[f.__name__ for f, _ in KEEPS])
def test_a_loop_whose_steps_cannot_be_made_again_keeps_its_list(f, args):
    forward, _ = pair(f, *args, wrt=(0, 1))
    assert "append" in forward, forward


def test_draws_are_those_of_the_forward():
    """The gradient along w is the sum of x[i] times the numbers the forward drew."""
    draws = np.random.default_rng(7).normal(size=len(X))
    g = s2sgrad.gradient(seeded_draws)(0.7, X)
    assert g == pytest.approx(float(np.sum(X * draws)), rel=1e-12)
    np.random.seed(11)
    draws = np.array([np.random.normal() for _ in X])
    g = s2sgrad.gradient(global_draws)(0.7, X)
    assert g == pytest.approx(float(np.sum(X * draws)), rel=1e-12)


def test_on_tensors():
    @s2sgrad.grad
    def loss(w, x):
        total = 0.0
        for i in range(len(x)):
            total = total + np.tanh(w * x[i])
        return total

    w = s2sgrad.tensor(np.array(0.7), requires_grad=True)
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    loss(w, x).backward()
    gw, gx = s2sgrad.gradient(indexed_sum, (0, 1))(0.7, X)
    assert float(w.grad.numpy()) == pytest.approx(gw, rel=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-12)


def test_a_backward_run_twice():
    _, pullback = s2sgrad.vjp(indexed_sum, 0.7, X)
    first = pullback(1.0)
    second = pullback(1.0)
    assert first[0] == second[0]
    np.testing.assert_array_equal(first[1], second[1])


def products_sum(w, m):
    """A product of arrays per step: kept, not computed twice."""
    total = 0.0
    for i in range(m.shape[0]):
        total = total + np.tanh(m[i] @ w)
    return total


def test_a_step_with_a_product_of_arrays_keeps_it():
    w = np.array([0.3, -0.2, 0.5])
    check_grads(products_sum, w, M)
    forward, _ = pair(products_sum, w, M, wrt=(0, 1))
    assert "append" in forward, forward


def in_a_branch(w, x, flag):
    """A sum loop in a branch: what its reverse reads is pushed by the branch."""
    total = 0.0
    if flag > 0.0:
        y = x * 2.0
        for i in range(len(y)):
            total = total + np.tanh(w * y[i])
    else:
        for i in range(2):
            total = total + w * x[i]
    return total


def after_a_branch(w, x, flag):
    y = x * 2.0 if flag > 0.0 else x * 3.0
    total = 0.0
    for i in range(len(y)):
        total = total + np.tanh(w * y[i])
    return total


@pytest.mark.parametrize("f", [in_a_branch, after_a_branch])
@pytest.mark.parametrize("flag", [1.0, -1.0])
def test_in_and_after_a_branch(f, flag):
    check_grads(f, 0.7, X, flag, wrt=(0, 1))


def poisson_nll(theta, xs, counts):
    """Items of lists that are not differentiated (the data) read in the step."""
    total = 0.0
    for i in range(len(counts)):
        rate = math.exp(theta[0] + theta[1] * xs[i])
        total += rate - counts[i] * math.log(rate)
    return total


def test_items_of_data_lists_are_read_again():
    theta = np.array([0.3, -0.1])
    counts = [1.0, 0.0, 3.0, 2.0, 1.0, 4.0]
    check_grads(poisson_nll, theta, XS, counts, wrt=0)
    check_grads(poisson_nll, theta, XS, counts, wrt=0, order=2)
    forward, adjoint = pair(poisson_nll, theta, XS, counts, wrt=0)
    assert "append" not in forward and "counts[i]" in adjoint, forward


def list_changed_after(w, x):
    xs = [x[0] * 1.0, x[1] * 2.0, x[2] * 3.0]
    total = 0.0
    for i in range(len(xs)):
        total = total + math.sin(w * xs[i])
    xs.insert(0, 5.0)
    xs[1] = 7.0
    return total + xs[2] * w


def list_item_written_after(w, x):
    xs = [x[0] * 1.0, x[1] * 2.0, x[2] * 3.0]
    total = 0.0
    for i in range(len(xs)):
        total = total + math.sin(w * xs[i])
    xs[0] = 9.0
    return total + xs[1] * w


@pytest.mark.parametrize("f", [list_changed_after, list_item_written_after])
def test_a_list_changed_after_the_loop(f):
    check_grads(f, 0.7, X[:3])
    forward, _ = pair(f, 0.7, X[:3], wrt=(0, 1))
    assert "append" in forward


def index_changed_in_the_step(w, x):
    """The index is rebound inside the step: what the step reads after that is not what the
    range gives."""
    total = 0.0
    for i in range(len(x) - 1):
        a = np.tanh(w * x[i])
        i = i + 1
        total = total + a * x[i]
    return total


def test_an_index_changed_in_the_step():
    check_grads(index_changed_in_the_step, 0.7, X)
    check_grads(index_changed_in_the_step, 0.7, X, order=2)
