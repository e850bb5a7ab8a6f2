"""Equal contributions to one cotangent are added once, doubled: the adjoint of a value
times itself (``h * h``) is ``h_bar = 2.0 * (g * h)``, one pass over memory where adding
``g * h`` twice takes three. Doubling rounds nothing, so the gradient is the same to the
last bit. Checked on arrays, Python floats, in a loop, inside a callee, on Tensors, and to
second order; and the cases that must not be doubled (different contributions, a
contribution that reads the cotangent) are not.
"""

import math

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

rng = np.random.default_rng(11)
H = rng.standard_normal(6)
W = rng.standard_normal(6)


def squares(h, w):
    z = np.tanh(h * w)
    return np.sum(z * z) + np.sum(h * h)


def float_square(x, y):
    return x * x + math.sin(y) * y


def loop_square(h, w):
    for _ in range(3):
        h = np.tanh(h * w)
    return np.sum(h * h)


def callee(h):
    return h * h


def through_callee(h, w):
    return np.sum(callee(h * w))


def not_equal(h, w):
    return np.sum(h * w) + np.sum(h * np.cos(w))


CASES = [(squares, (H, W)), (float_square, (0.7, 1.3)), (loop_square, (H, W)),
         (through_callee, (H, W)), (not_equal, (H, W))]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_gradient(f, args):
    check_grads(f, *args, modes=("rev", "fwd"))
    check_grads(f, *args, order=2)


def adjoint(f, *args):
    return s2sgrad.grad(f).compiled_for((0, 1), args).adjoint_source


@pytest.mark.parametrize("f, args", CASES[:3], ids=[f.__name__ for f, _ in CASES[:3]])
def test_a_square_is_doubled(f, args):
    assert "2.0 * (" in adjoint(f, *args)


def test_different_contributions_are_not_doubled():
    assert "2.0 *" not in adjoint(not_equal, H, W)


def test_doubled_is_the_sum_to_the_last_bit():
    """sum(h * h): the gradient is exactly h + h, for any h (doubling rounds nothing)."""
    h = rng.standard_normal(1000) * 10.0 ** rng.integers(-150, 150, 1000)
    np.testing.assert_array_equal(s2sgrad.gradient(lambda v: np.sum(v * v))(h), h + h)


def test_doubled_through_a_chain():
    g = s2sgrad.gradient(squares, (0, 1))(H, W)
    z = np.tanh(H * W)
    zb = z + z
    expected_h = (H + H) + zb * (1.0 - z * z) * W
    np.testing.assert_allclose(g[0], expected_h, rtol=1e-15, atol=0)


def test_on_tensors():
    @s2sgrad.grad
    def loss(h, w):
        z = np.tanh(h * w)
        return np.sum(z * z) + np.sum(h * h)

    h = s2sgrad.tensor(H.copy(), requires_grad=True)
    w = s2sgrad.tensor(W.copy(), requires_grad=True)
    loss(h, w).backward()
    gh, gw = s2sgrad.gradient(squares, (0, 1))(H, W)
    np.testing.assert_array_equal(h.grad.numpy(), gh)
    np.testing.assert_array_equal(w.grad.numpy(), gw)
