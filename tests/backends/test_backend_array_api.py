"""Gradients of functions written against the Python array API standard (``xp =
array_namespace(x)``, then ``xp.tanh``, ``xp.permute_dims``, ...), called with the arrays of a
strict namespace (``array_api_strict``: one that rejects anything outside the standard) and
with NumPy's arrays.

The same function serves both: with NumPy arrays its namespace is NumPy's and its gradient is
checked against finite differences; with strict arrays the generated forward and adjoint call
the strict namespace's functions (the templates' NumPy is bound to it), nothing is converted to
NumPy, and the gradient must equal the NumPy one. What the standard cannot express is refused
at the user's line, naming the library.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

xps = pytest.importorskip("array_api_strict")
compat = pytest.importorskip("array_api_compat")
array_namespace = compat.array_namespace
ARRAY = type(xps.asarray(0.0))  # the strict namespace's array class

RNG = np.random.default_rng(0)
X = RNG.standard_normal((12, 4))
W = RNG.standard_normal(4) * 0.5
W1 = RNG.standard_normal((4, 3)) * 0.5
W2 = RNG.standard_normal(3)
Y01 = (RNG.random(12) > 0.5).astype(float)
U = RNG.uniform(-0.9, 0.9, (3, 4))
P = RNG.uniform(0.5, 2.0, (3, 4))


# -- the catalogue, in the standard's names -----------------------------------------------

def logistic(w, b, X, y):
    xp = array_namespace(X, w)
    z = X @ w + b
    return xp.mean(xp.logaddexp(0.0, z) - y * z)


def two_layer(W1, w2, X):
    xp = array_namespace(X)
    h = xp.tanh(X @ W1)
    return xp.sum((h @ w2) ** 2) / X.shape[0]


def mixture(X):
    xp = array_namespace(X)
    a = xp.exp(-X ** 2) * xp.sin(3.0 * X)
    b = xp.log1p(X ** 2)
    return xp.sum(xp.where(X > 0, a, b) + 0.5 * a * b)


def reductions_over_axes(w, X):
    xp = array_namespace(X)
    s = X * w
    centred = s - xp.mean(s, axis=0, keepdims=True)
    return (xp.sum(xp.max(s, axis=1) ** 2) + xp.sum(xp.mean(s, axis=0) * xp.sqrt(w ** 2 + 1.0))
            + xp.sum(xp.min(centred, axis=0)) + xp.mean(centred ** 4))


def renamed_elementwise(u, p):
    # the standard's names where NumPy's differ: acos, asin, atan, atan2, pow, ...
    xp = array_namespace(u, p)
    return xp.sum(xp.acos(u) * xp.asin(u) + xp.atan(p) + xp.atan2(u, p) + xp.pow(p, u)
                  + xp.asinh(u) + xp.acosh(p + 1.0) + xp.atanh(u * 0.5) + xp.abs(u) * p)


def shapes(W1, X):
    xp = array_namespace(X)
    h = xp.permute_dims(X @ W1, (1, 0))  # (3, 12)
    stacked = xp.stack([h, h * h], axis=0)  # (2, 3, 12)
    joined = xp.concat([h, xp.matrix_transpose(X[:, :3])], axis=1)  # (3, 24)
    flat = xp.reshape(joined, (-1,))
    grown = xp.expand_dims(xp.sum(stacked, axis=0), axis=0)
    return xp.sum(xp.sin(flat)) + xp.sum(xp.squeeze(grown, axis=0) ** 2)


def statistics(X):
    xp = array_namespace(X)
    return xp.sum(xp.std(X, axis=0, correction=1)) + xp.sum(xp.var(X, axis=1)) + xp.prod(
        xp.tanh(X[0, :]))


def clipped(w, X):
    xp = array_namespace(X)
    return xp.sum(xp.clip(X @ w, -0.5, 0.5) ** 2) + xp.sum(xp.maximum(X, 0.1) * xp.minimum(X, w))


# every name of registry.STANDARD that has a gradient, at least once

def every_elementwise(u, p):
    xp = array_namespace(u, p)
    one = (xp.sin(u) + xp.cos(u) + xp.tan(u) + xp.sinh(u) + xp.cosh(u) + xp.tanh(u)
           + xp.exp(u) + xp.expm1(u) + xp.log(p) + xp.log1p(p) + xp.log2(p) + xp.log10(p)
           + xp.sqrt(p) + xp.square(u) + xp.negative(u) + xp.positive(u) + xp.abs(u))
    two = (xp.add(u, p) + xp.subtract(u, p) + xp.multiply(u, p) + xp.divide(u, p)
           + xp.pow(p, u) + xp.atan2(u, p) + xp.hypot(u, p) + xp.logaddexp(u, p)
           + xp.maximum(u, p - 1.0) + xp.minimum(u, p - 1.0))
    return xp.sum(one * two)


def every_shape(u, p):
    xp = array_namespace(u, p)
    a = xp.matmul(u, xp.permute_dims(p, (1, 0)))  # (3, 3)
    b = xp.flip(u, axis=1) * xp.roll(p, 1, axis=0) + xp.moveaxis(xp.stack([u, p]), 0, 2)[..., 0]
    c = xp.concat([u[0, :], u[1, :]]) + xp.broadcast_to(p[0:1, 0:1], (1, 8))[0, :]
    return xp.sum(a * a) + xp.sum(b ** 2) + xp.sum(xp.sin(c))


def every_linalg(u, p):
    xp = array_namespace(u, p)
    m = u[:, 0:3] + 3.0 * xp.eye(3)  # well away from singular
    return xp.sum(xp.linalg.inv(m) * p[:, 0:3]) + xp.linalg.det(m)


# control flow: Python's if, for and while on the values of 0-d arrays (an eager namespace)

def branches(w, X):
    xp = array_namespace(X)
    z = X @ w
    if xp.sum(z) > 0:
        y = xp.tanh(z) * 2.0
    else:
        y = xp.sin(z) - z
    return xp.sum(y * y)


def fixed_steps(w, X, y):
    xp = array_namespace(X)
    total = 0.0
    for k in range(3):
        r = X @ (w * (k + 1.0)) - y
        total = total + xp.mean(r * r)
    return total


def shrinks_while_large(x):
    xp = array_namespace(x)
    while xp.max(xp.abs(x)) > 0.25:
        x = 0.5 * x + 0.1 * xp.sin(x)
    return xp.sum(x ** 3)


def _layer(xp, W, h):
    return xp.tanh(h @ W)


def calls_a_helper(W1, X):
    xp = array_namespace(X)
    return xp.sum(_layer(xp, W1, X) ** 2)


def method_namespace(w, X):
    xp = X.__array_namespace__()  # the array's own method
    return xp.sum(xp.exp(-(X @ w) ** 2))


def namespace_argument(w, X, xp):
    return xp.sum(xp.cos(X @ w))


CASES = {
    "logistic": (logistic, (W, 0.1, X, Y01), (0, 1, 2)),
    "two_layer": (two_layer, (W1, W2, X), (0, 1, 2)),
    "mixture": (mixture, (X,), (0,)),
    "reductions_over_axes": (reductions_over_axes, (W, X), (0, 1)),
    "renamed_elementwise": (renamed_elementwise, (U, P), (0, 1)),
    "shapes": (shapes, (W1, X), (0, 1)),
    "statistics": (statistics, (X,), (0,)),
    "clipped": (clipped, (W, X), (0, 1)),
    "every_elementwise": (every_elementwise, (U, P), (0, 1)),
    "every_shape": (every_shape, (U, P), (0, 1)),
    "every_linalg": (every_linalg, (U, P), (0, 1)),
    "branches": (branches, (W, X), (0, 1)),
    "branches_other_side": (branches, (-W, X), (0, 1)),
    "fixed_steps": (fixed_steps, (W, X, Y01), (0, 1)),
    "shrinks_while_large": (shrinks_while_large, (X[:3],), (0,)),
    "calls_a_helper": (calls_a_helper, (W1, X), (0, 1)),
    "method_namespace": (method_namespace, (W, X), (0, 1)),
}


def strict(args):
    return tuple(xps.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


def as_numpy(value):
    return np.from_dlpack(value) if isinstance(value, ARRAY) else np.asarray(value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_strict_gradient_equals_numpys(name):
    fn, args, wrt = CASES[name]
    check_grads(fn, *args, wrt=wrt)  # the NumPy path against finite differences
    value, grads = s2sgrad.value_and_grad(fn, wrt=wrt)(*args)
    got_value, got_grads = s2sgrad.value_and_grad(fn, wrt=wrt)(*strict(args))
    # nothing was converted to NumPy: each result is the strict namespace's array
    assert all(isinstance(g, ARRAY) for g in [got_value, *got_grads]), [
        type(g) for g in [got_value, *got_grads]]
    for got, want in zip([got_value, *got_grads], [value, *grads], strict=True):
        np.testing.assert_allclose(as_numpy(got), want, rtol=1e-12, atol=1e-14)


def test_a_namespace_passed_as_an_argument():
    args = (W, X)
    check_grads(namespace_argument, *args, np, wrt=(0, 1))
    want = s2sgrad.gradient(namespace_argument, wrt=(0, 1))(*args, np)
    got = s2sgrad.gradient(namespace_argument, wrt=(0, 1))(*strict(args), xps)
    for a, b in zip(got, want, strict=True):
        assert isinstance(a, ARRAY)
        np.testing.assert_allclose(as_numpy(a), b, rtol=1e-12)


def tuple_of_parameters(params, X):
    xp = array_namespace(X)
    W1, w2 = params  # a tuple of parameters: its gradient is a list of their gradients
    h = xp.maximum(X[2:9, :] @ W1, 0.0)
    return xp.mean((h @ w2) ** 2)


def test_a_tuple_of_parameters():
    params = (W1, W2)
    check_grads(tuple_of_parameters, params, X, wrt=0)
    want = s2sgrad.gradient(tuple_of_parameters)(params, X)
    got = s2sgrad.gradient(tuple_of_parameters)(strict(params), *strict((X,)))
    for a, b in zip(got, want, strict=True):
        assert isinstance(a, ARRAY)
        np.testing.assert_allclose(as_numpy(a), b, rtol=1e-12)


def test_strict_and_numpy_arguments_compile_apart():
    fn, args, wrt = CASES["two_layer"]
    derivative = s2sgrad.gradient(fn, wrt=wrt)
    want = derivative(*args)
    got = derivative(*strict(args))
    derivative(*args)
    cache = s2sgrad.compiler.compiled.state_of(fn).spec.cache
    assert len([key for key in cache if key[0] == wrt]) == 2
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(as_numpy(a), b, rtol=1e-12)


def test_the_adjoint_calls_the_namespace_and_says_so():
    fn, args, wrt = CASES["shapes"]
    pair = s2sgrad.grad(fn).compiled_for(wrt, strict(args))
    source = pair.adjoint_source
    assert "xp.permute_dims(" in source or "xp.matrix_transpose(" in source, source
    assert "np." not in source, source
    # no NumPy methods: every call is the namespace's function
    assert not re.search(r"\w(?<!xp)\.(sum|mean|reshape|T|transpose)\b", source), source
    assert "xp.reshape(" in source and "add_at(" in source, source


def test_vjp_and_jvp_on_strict_arrays():
    fn, args, _ = CASES["two_layer"]
    tangents = (np.ones_like(W1), np.zeros(3), np.zeros_like(X))
    _, want = s2sgrad.jvp(fn, args, tangents)
    _, got = s2sgrad.jvp(fn, strict(args), strict(tangents))
    assert isinstance(got, ARRAY)
    np.testing.assert_allclose(as_numpy(got), want, rtol=1e-12)
    out, pullback = s2sgrad.vjp(fn, *strict(args))
    got_grads = pullback(xps.asarray(1.0))
    want_grads = s2sgrad.gradient(fn, wrt=(0, 1, 2))(*args)
    for a, b in zip(got_grads, want_grads, strict=True):
        np.testing.assert_allclose(as_numpy(a), b, rtol=1e-12)


# -- refused, at the user's line, naming the library ----------------------------------------

def numpy_inside(w, X):
    xp = array_namespace(X)
    return xp.sum(np.tanh(X @ w))  # NumPy's tanh converts the strict array


def picks_entries(w, X, idx):
    xp = array_namespace(X)
    # X's cotangent adds into the entries idx names, repeats included: the standard has no
    # such accumulation
    return xp.sum((X[idx, 0] * w[0]) ** 2)


def sorts(w, X):
    xp = array_namespace(X)
    return xp.sum(xp.sort(X @ w) ** 2)


def tiles(w, X):
    xp = array_namespace(X)
    return xp.sum(xp.tile(X @ w, (2,)) ** 2)  # its adjoint pads: the standard has no pad


def contracts(w, X):
    xp = array_namespace(X)
    # its adjoint counts the axes with np.size, which the standard does not have
    return xp.sum(xp.tensordot(X, w, axes=1) ** 2)


@pytest.mark.parametrize("fn, args, words", [
    (numpy_inside, (W, X), "numpy.tanh"),
    (tiles, (W, X), "array_api_strict.pad()"),
    (contracts, (W, X), "array_api_strict.size()"),
    (picks_entries, (W, X, np.array([0, 2, 2])), "accumulation into indexed positions"),
    (sorts, (W, X), "array_api_strict.sort"),
])
def test_what_the_standard_cannot_do_is_refused(fn, args, words):
    if fn is not sorts:
        s2sgrad.gradient(fn, wrt=(0, 1))(*args)  # fine on NumPy arrays
    with pytest.raises(s2sgrad.TransformError) as caught:
        s2sgrad.gradient(fn, wrt=(0, 1))(*strict(args))
    message = str(caught.value)
    assert words in message and "array_api_strict" in message, message
    assert __file__ in message, message


def numpy_style(w, X):
    return np.sum(np.tanh(X @ w))


def test_numpy_code_on_strict_arrays_is_refused_naming_the_function_to_call():
    for args in ((xps.asarray(W), xps.asarray(X)), (W, xps.asarray(X))):
        with pytest.raises(s2sgrad.TransformError) as caught:
            s2sgrad.gradient(numpy_style)(*args)
        assert "numpy.tanh on array_api_strict arrays" in str(caught.value), str(caught.value)
        assert "Call xp.tanh instead, with xp = array_namespace(x)" in str(caught.value)
