"""A function with a registered derivative rule, used on Tensors.

Called through ``s2sgrad.grad(f)`` or inside a ``@grad`` function, its rule gives the
gradient (checked against finite differences). Called directly on a Tensor that requires
grad, its own body runs: where the body works on Tensors (ufuncs), the graph follows the
body; where it asks for the Tensor's values (``np.asarray``, ``float``, an element write
into an array), the result would silently have no graph, so the call is refused, naming
the function and how to call it with its rule.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

X = np.array([0.3, 1.2, 2.0])


def squares_by_loop(x):
    out = np.empty(np.shape(x))
    for i in range(len(out)):
        out[i] = x[i] ** 2
    return out


@s2sgrad.vjp_rule(squares_by_loop)
def squares_by_loop_vjp(g, ans, x):
    return g * 2.0 * x


def softplus_of_array(x):
    return np.log1p(np.exp(np.asarray(x, dtype=float)))


@s2sgrad.vjp_rule(softplus_of_array)
def softplus_of_array_vjp(g, ans, x):
    return g / (1.0 + np.exp(-x))


def cube_by_ufuncs(x):
    return np.power(x, 3.0)


@s2sgrad.vjp_rule(cube_by_ufuncs)
def cube_by_ufuncs_vjp(g, ans, x):
    return g * 3.0 * x * x


@s2sgrad.grad
def loss_calling(x):
    return np.sum(squares_by_loop(x) * softplus_of_array(x))


RULED = [squares_by_loop, softplus_of_array, cube_by_ufuncs]


@pytest.mark.parametrize("f", RULED)
def test_through_grad_the_rule_gives_the_gradient(f):
    check_grads(lambda x: np.sum(f(x) * X), X)
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = s2sgrad.grad(f)(x)
    (out * s2sgrad.tensor(X)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), f(X), rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(
        lambda v: np.sum(f(v) * X))(X), rtol=1e-13)


def test_inside_a_grad_function_on_tensors():
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    loss_calling(x).backward()
    expected = s2sgrad.gradient(loss_calling.fn)(X)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-13)
    check_grads(loss_calling.fn, X)


@pytest.mark.parametrize("f", [squares_by_loop, softplus_of_array])
def test_called_directly_on_a_tensor_its_body_is_refused_not_detached(f):
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    with pytest.raises((RuntimeError, ValueError)) as info:
        f(x)
    error = info.value if isinstance(info.value, RuntimeError) else info.value.__cause__
    assert isinstance(error, RuntimeError), info.value
    assert f"{f.__name__}() has a derivative rule" in str(error)
    assert f"s2sgrad.grad({f.__name__})" in str(error)


def test_called_directly_a_body_of_tensor_operations_keeps_its_graph():
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    cube_by_ufuncs(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * X * X, rtol=1e-13)


def test_a_tensor_that_requires_no_grad_gives_its_values_anywhere():
    np.testing.assert_allclose(squares_by_loop(s2sgrad.tensor(X.copy())), X * X)
    assert s2sgrad.tensor(X.copy(), requires_grad=True)[0].item() == X[0]
