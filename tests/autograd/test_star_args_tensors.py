"""Functions that take ``*args`` (a ``functools.wraps`` decorator's wrapper, a helper of
several arrays), called with Tensors: the compiled backward gives one cotangent for the
whole ``*args`` tuple, and each Tensor receives its own item of it, whichever of the
arguments require grad, with Tensors read through attributes beside them. (At second order
a value received through ``*args`` is refused, at that parameter.) Every gradient is compared with the functional path's, which finite differences
check.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(7)
W = rng.standard_normal(3) * 0.7
V = rng.standard_normal(3) * 0.7
X = rng.standard_normal(3)


def doubled(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):  # <- refused
        return f(*args, **kwargs) * 2.0
    return wrapper


@doubled
def stacked(w, v, x):
    return np.sum(np.array([w[0] * x[0], v[1], np.sum(w * v)]) ** 2)


def all_star(*arrays):  # <- refused
    total = 0.0
    for a in arrays:
        total = total + np.sum(np.tanh(a) ** 2)
    return total


def head_and_star(w, *rest):  # <- refused
    return np.sum(w * rest[0]) + np.sum(np.sin(rest[1]) * w)


class Scaled(s2sgrad.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = s2sgrad.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)

    @s2sgrad.grad
    def forward(self, *xs):
        return np.sum(self.c * xs[0] * xs[1])


CASES = [(stacked, (W, V, X)), (all_star, (W, V, X)), (head_and_star, (W, V, X))]


@pytest.mark.parametrize("fn, args", CASES)
@pytest.mark.parametrize("requires", [(True, True, False), (False, True, True),
                                      (True, False, True)])
def test_each_tensor_gets_its_own_cotangent(fn, args, requires):
    check_grads(fn, *args, modes=("rev",))
    tensors = [s2sgrad.tensor(a.copy(), requires_grad=r) for a, r in zip(args, requires)]
    out = s2sgrad.grad(fn)(*tensors)
    out.backward()
    expected = s2sgrad.gradient(fn, wrt=(0, 1, 2))(*args)
    for t, g, r in zip(tensors, expected, requires):
        if r:
            np.testing.assert_allclose(t.grad.numpy(), g, rtol=1e-12, atol=1e-14)
        else:
            assert t.grad is None
    np.testing.assert_allclose(out.item(), fn(*args), rtol=1e-13)


@pytest.mark.parametrize("fn, args", CASES)
def test_second_order_through_star_args_is_refused_not_wrong(fn, args):
    # (derivatives of a derivative are generated for named parameters only)
    tensors = [s2sgrad.tensor(a.copy(), requires_grad=True) for a in args]
    out = s2sgrad.grad(fn)(*tensors)
    with pytest.raises(s2sgrad.TransformError, match="named parameters only") as caught:
        s2sgrad.autograd.grad(out, [tensors[-1]], create_graph=True)
    # at the user's *args parameter (of the decorator's wrapper, for a decorated function)
    where = doubled if fn is stacked else fn
    star = "*" + fn.__code__.co_varnames[fn.__code__.co_argcount]  # the wrapper's, decorated
    assert_points_at(caught.value, where, star)
    assert "_seeded" not in str(caught.value)


def test_a_method_taking_star_args_with_a_parameter_read_through_self():
    model = Scaled()
    a = s2sgrad.tensor(W.copy(), requires_grad=True)
    b = s2sgrad.tensor(V.copy(), requires_grad=True)
    model(a, b).backward()
    c = model.c.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), c * V, rtol=1e-13)
    np.testing.assert_allclose(b.grad.numpy(), c * W, rtol=1e-13)
    np.testing.assert_allclose(model.c.grad.numpy(), W * V, rtol=1e-13)



@pytest.mark.parametrize("fn, args", CASES)
def test_second_order_through_star_args_in_the_functional_transforms(fn, args):
    """The same refusal, at the same place, from the functional transforms (hessian)."""
    with pytest.raises(s2sgrad.TransformError, match="named parameters only") as caught:
        s2sgrad.hessian(fn, wrt=len(args) - 1)(*args)
    where = doubled if fn is stacked else fn
    assert_points_at(caught.value, where, "*" + fn.__code__.co_varnames[fn.__code__.co_argcount])
