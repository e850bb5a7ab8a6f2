"""A library s2sgrad has never heard of, added from outside the compiler: one ``Backend``
object registered with the arrays it stands for, and nothing else. ``Boxed`` is a tiny array
library that runs NumPy's functions through NumPy's dispatch protocols (as Dask and CuPy
do); its gradients are its own arrays, equal to NumPy's, and what it cannot do where its
arrays are is refused at the user's line, naming it."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad import backends
from s2sgrad.testing import check_grads


def _unbox(value):
    if isinstance(value, Boxed):
        return value.data
    if isinstance(value, (list, tuple)):
        return type(value)(_unbox(v) for v in value)
    if isinstance(value, dict):
        return {k: _unbox(v) for k, v in value.items()}
    return value


def _box(value):
    if isinstance(value, np.ndarray):
        return Boxed(value)
    if isinstance(value, tuple):
        return tuple(_box(v) for v in value)
    return value


class Boxed(np.lib.mixins.NDArrayOperatorsMixin):
    """An array that holds a NumPy array and answers NumPy's functions with Boxed arrays."""

    def __init__(self, data):
        self.data = np.asarray(data)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _box(getattr(ufunc, method)(*_unbox(inputs), **_unbox(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        return _box(func(*_unbox(args), **_unbox(kwargs)))

    def __getattr__(self, name):  # shape, T, sum(), reshape() ... of the data, boxed
        attribute = getattr(self.data, name)
        if callable(attribute):
            return lambda *args, **kwargs: _box(attribute(*_unbox(args), **_unbox(kwargs)))
        return _box(attribute)

    def __getitem__(self, index):
        return _box(self.data[_unbox(index)])

    def __len__(self):
        return len(self.data)


BOXED = backends.register(backends.Dispatching("boxed"), array_types=((__name__, "Boxed"),),
                          namespace="numpy")


def layer(W, b, x):
    h = np.tanh(W @ x + b)
    return np.sum(h ** 2) / h.shape[0] + np.mean(np.exp(-x))


def test_its_arrays_name_their_backend():
    assert backends.of({"x": s2sgrad.compiler.analyze.abstract_of(Boxed(np.ones(3)))}) is BOXED
    assert backends.of({"x": s2sgrad.compiler.analyze.abstract_of(np.ones(3))}) is backends.NUMPY


def test_gradients_on_its_arrays_are_its_arrays_and_equal_numpys():
    rng = np.random.default_rng(0)
    W, b, x = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=3)
    check_grads(layer, W, b, x, wrt=(0, 1, 2))
    value, grads = s2sgrad.value_and_grad(layer, (0, 1, 2))(Boxed(W), Boxed(b), Boxed(x))
    expected_value, expected = s2sgrad.value_and_grad(layer, (0, 1, 2))(W, b, x)
    assert all(type(g) is Boxed for g in grads)
    np.testing.assert_allclose(_unbox(value), expected_value, rtol=1e-12)
    for g, e in zip(grads, expected, strict=True):
        np.testing.assert_allclose(g.data, e, rtol=1e-12)


def test_forward_mode_on_its_arrays():
    rng = np.random.default_rng(1)
    W, b, x = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=3)
    dW = rng.normal(size=(4, 3))
    _, tangent = s2sgrad.jvp(lambda W_: layer(W_, b, x), (Boxed(W),), (Boxed(dW),))
    _, expected = s2sgrad.jvp(lambda W_: layer(W_, b, x), (W,), (dW,))
    np.testing.assert_allclose(_unbox(tangent), expected, rtol=1e-12)


def test_what_it_cannot_do_is_refused_at_the_users_line_naming_it():
    def branching(x):
        if np.sum(x) > 0:
            return np.sum(x ** 2)
        return np.sum(x)

    with pytest.raises(s2sgrad.TransformError, match="on boxed arrays") as caught:
        s2sgrad.gradient(branching)(Boxed(np.ones(3)))
    assert "if np.sum(x) > 0" in caught.value.text
