"""s2sgrad.testing, the one finite-difference checker the tests rely on: its differences are
right, and it fails on a wrong gradient."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import (
    assert_gradient_matches,
    central_difference,
    check_grads,
    numeric_gradient,
)

X = np.array([1.0, -2.0, 0.5])


def cube(x):
    return x * x * x


@s2sgrad.vjp_rule(cube, shape="elementwise")
def cube_rule_off_by_a_thousandth(g, ans, x):
    return g * 3.0 * x * x * 1.001


def summed_cube(x):
    return np.sum(cube(x))


def scaled(x, s):
    return np.sum(np.sin(x)) * s


def test_numeric_gradient_of_a_known_function():
    # d/dx sum(x**3) = 3 x**2, by hand
    np.testing.assert_allclose(numeric_gradient(lambda a: np.sum(a ** 3), [X], 0), 3 * X ** 2,
                               rtol=1e-7)
    assert numeric_gradient(lambda a, b: a * b, [1.5, 2.0], 1) == pytest.approx(1.5, rel=1e-9)


def test_central_difference_of_a_weighted_array_output():
    rng = np.random.default_rng(0)
    u, v = rng.standard_normal(3), rng.standard_normal(3)
    numeric = central_difference(np.sin, [X], 0, v, weight=u)
    assert numeric == pytest.approx(np.sum(u * np.cos(X) * v), rel=1e-8)
    with pytest.raises(ValueError, match="weight="):
        central_difference(np.sin, [X], 0, v)


def test_a_float32_input_is_moved_in_float64():
    # in float32 a step of 1e-6 next to 1.0 is mostly rounding: the quotient would be off by 5%
    x = X.astype(np.float32)
    np.testing.assert_allclose(numeric_gradient(lambda a: np.sum(a * a), [x], 0), 2.0 * X,
                               rtol=1e-8)


def test_check_grads_passes_a_right_gradient_and_fails_a_wrong_one():
    check_grads(scaled, X, 0.7)
    with pytest.raises(AssertionError, match="disagrees with finite differences"):
        check_grads(summed_cube, X)


def test_assert_gradient_matches_fails_a_wrong_gradient():
    assert_gradient_matches(summed_cube, [X], 0, 3.0 * X ** 2)  # called as Python: no rule
    for wrong in (3.0 * X ** 2 * 1.001, -3.0 * X ** 2, 3.0 * X[:2] ** 2):
        with pytest.raises(AssertionError, match="gradient of summed_cube wrt argument 0"):
            assert_gradient_matches(summed_cube, [X], 0, wrong)
