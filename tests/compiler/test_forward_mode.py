"""Forward mode: the tangent function (``s2sgrad.jvp``) of every catalogue function, checked
against central finite differences along random directions (``check_grads(modes=("fwd",))``),
at one random point per (function, wrt set) of the catalogues' tables."""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads
from tests.compiler import test_catalogue, test_control_flow


def _params() -> list:
    params = []
    for table in (test_catalogue, test_control_flow):
        for p in table._params():
            case, wrt = p.values
            params.append(pytest.param(case, wrt, id=p.id, marks=p.marks))
    return params


@pytest.mark.parametrize("case, wrt", _params())
def test_jvp_matches_finite_differences(case, wrt) -> None:
    args = case.draw(0)
    check_grads(case.fn, *args, wrt=list(wrt), modes=("fwd",), seed=0)


# --- constants from outside the function among the operands ---------------------------------

_CONST = np.array([10.0, 20.0])
_TABLE = {"w": np.array([0.5, -1.5])}


def _concat_with_global(x):
    return np.sum(np.concatenate((x, _CONST)) ** 2)


def _stack_global_first(x):
    return np.sum(np.stack([_CONST, x]) ** 2)


def _hstack_and_list(x):
    return np.sum(np.hstack([x, _CONST, x * 2.0]) ** 3) + sum([x[0], _CONST[1]])


def _global_in_a_dict(x):
    d = {"a": x, "b": _TABLE["w"]}
    return np.sum(np.concatenate([d["a"], d["b"]]) ** 2)


@pytest.mark.parametrize("fn", [_concat_with_global, _stack_global_first, _hstack_and_list,
                                _global_in_a_dict], ids=lambda f: f.__name__)
def test_a_global_array_beside_a_moving_one_has_a_zero_tangent(fn):
    x = np.array([0.3, -0.7])
    check_grads(fn, x, modes=("fwd",), order=2)
    if fn is not _hstack_and_list:  # (np.hstack has no form for a batch of tangents)
        check_grads(fn, x, modes=("batch",))
    _, t = s2sgrad.jvp(fn, (x,), (np.array([1.0, 0.0]),))
    eps = 1e-6
    fd = (fn(x + [eps, 0.0]) - fn(x - [eps, 0.0])) / (2 * eps)
    np.testing.assert_allclose(t, fd, rtol=1e-6)
    np.testing.assert_allclose(s2sgrad.hessian(fn)(x), s2sgrad.jacobian(s2sgrad.gradient(fn))(x),
                               rtol=1e-9, atol=1e-9)


_SCALE = 0.7


def _product_with_a_global_number(x):
    return np.sum(2 * x * _SCALE) * np.sum(x ** 2)


def test_the_hessian_of_a_product_with_a_global_number():
    # the global's tangent is its zero, not a name of the tangent function's own
    x = np.array([0.3, -0.4, 0.9])
    check_grads(_product_with_a_global_number, x, modes=("rev", "fwd", "batch"), order=2)
    g = s2sgrad.gradient(_product_with_a_global_number)
    eps = 1e-5
    expected = np.array([(g(x + eps * u) - g(x - eps * u)) / (2 * eps) for u in np.eye(3)])
    np.testing.assert_allclose(s2sgrad.hessian(_product_with_a_global_number)(x), expected,
                               atol=1e-6)


# piecewise-constant functions: the tangent is a zero of the value's type (a float for a
# float, as NumPy's floor of a float is a float), so that a derivative of the jvp is taken
def _floor_of_a_number(x):
    return np.floor(x) + np.ceil(2.0 * x)


def _rounded_then_scaled(x):
    return np.round(x, 1) * x + np.sign(x) + np.trunc(x)


def _through_a_helper(x):
    def step(v):
        return np.rint(v) * 0.5
    return step(x) + x ** 2


@pytest.mark.parametrize("fn", [_floor_of_a_number, _rounded_then_scaled, _through_a_helper])
@pytest.mark.parametrize("x", [0.37, np.array([0.37, -1.24, 2.61])], ids=["float", "array"])
def test_the_tangent_of_a_piecewise_constant_function_is_a_float_zero(fn, x):
    value, tangent = s2sgrad.jvp(fn, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(value, fn(x), rtol=1e-15)
    assert np.asarray(tangent).dtype == np.float64 and np.shape(tangent) == np.shape(x)
    check_grads(fn, x, modes=("rev", "fwd"), order=2)  # (a derivative of the jvp in "fwd")
