"""``s2sgrad.grad`` is PyTorch's: a decorator whose function, called with Tensors that require
grad, records the graph. A JAX or HIPS autograd user's first line, ``grad(f)(x)``, returns
the value there: the first such call says so once, naming ``gradient``; JAX's spelling
``grad(f, argnums=k)`` is JAX's grad, compared here with ``jax.grad``; ``has_aux=`` is
refused with what to write instead."""

import warnings

import numpy as np
import pytest

import s2sgrad
from s2sgrad.compiler import function as function_module


def loss(x):
    return np.sum(np.sin(x) ** 2)


def weighted(a, b):
    return np.sum(a * np.tanh(b) ** 2)


def jax_loss(x):
    jnp = pytest.importorskip("jax.numpy")
    return jnp.sum(jnp.sin(x) ** 2)


def jax_weighted(a, b):
    jnp = pytest.importorskip("jax.numpy")
    return jnp.sum(a * jnp.tanh(b) ** 2)


@pytest.fixture
def fresh(monkeypatch):
    """A process that has not yet said it (the notice is once a process)."""
    monkeypatch.setattr(function_module, "_said", [])


X = np.linspace(-0.8, 1.1, 5)


@pytest.mark.parametrize("argnums, fn, jfn, args", [
    (0, loss, jax_loss, (X,)),
    (1, weighted, jax_weighted, (X, X + 0.3)),
    ((0, 1), weighted, jax_weighted, (X, X + 0.3)),
])
def test_argnums_is_jaxs_grad(argnums, fn, jfn, args):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    ours = s2sgrad.grad(fn, argnums=argnums)(*args)
    theirs = jax.grad(jfn, argnums=argnums)(*args)
    if isinstance(argnums, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(argnums)
        for o, t in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(o, np.asarray(t), rtol=1e-12)
    else:
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12)
    s2sgrad.testing.check_grads(fn, *args, wrt=argnums)


def test_the_first_plain_call_returning_a_scalar_says_grad_is_pytorch_style(fresh):
    with pytest.warns(UserWarning, match=r"PyTorch-style.*s2sgrad\.gradient\(loss\)") as seen:
        value = s2sgrad.grad(loss)(X)
    assert value == loss(X)  # the value, as PyTorch's decorated function returns it
    assert seen[0].filename == __file__  # at the user's call
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2sgrad.grad(loss)(X)  # once a process
        s2sgrad.grad(weighted)(X, X)


def test_no_notice_where_no_gradient_was_wanted(fresh):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = s2sgrad.tensor(X, requires_grad=True)
        s2sgrad.grad(loss)(t).backward()  # PyTorch's way
        np.testing.assert_allclose(t.grad.numpy(), 2 * np.sin(X) * np.cos(X), rtol=1e-12)
        assert s2sgrad.grad(lambda n: n + 1)(3) == 4  # integers: no gradient to want
        s2sgrad.grad(lambda x: x * 2.0)(X)  # an array result: not a gradient's input
    assert not function_module._said


@s2sgrad.grad
def decorated_loss(x):
    return np.sum(np.tanh(x) ** 2)


def _noted(fn):
    return fn


class Model:
    @_noted
    @s2sgrad.grad
    def loss(self, x):
        return np.sum(x ** 2)


def test_no_notice_for_a_decorated_function_evaluated_on_arrays(fresh):
    """A PyTorch-style program evaluates its @grad loss on plain arrays too (a plain
    simulation, a metric): the decorator is the choice of PyTorch's style already."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert decorated_loss(X) == np.sum(np.tanh(X) ** 2)
        assert Model().loss(X) == np.sum(X ** 2)  # among other decorators, on a method
    assert not function_module._said


def test_has_aux_is_refused_with_what_to_write():
    with pytest.raises(TypeError, match="value_and_grad"):
        s2sgrad.grad(loss, has_aux=True)
