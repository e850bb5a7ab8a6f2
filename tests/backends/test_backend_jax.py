"""Gradients of functions written with jax.numpy, called with JAX arrays: the generated code
calls jax.numpy's functions (the templates' NumPy is bound to it), jax.numpy's functions take
the rules of NumPy's of the same name (``registry.MIRRORED``), and the compiled gradient runs
inside ``jax.jit``. Each function has a NumPy twin whose gradient is checked against finite
differences; the JAX gradient must equal it.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@pytest.fixture(scope="module", autouse=True)
def float64():
    """JAX in float64, as the NumPy twins are."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((12, 4))
W = RNG.standard_normal(4) * 0.5
W1 = RNG.standard_normal((4, 3)) * 0.5
Y01 = (RNG.random(12) > 0.5).astype(float)


def logistic_np(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logistic_jnp(w, b, X, y):
    z = X @ w + b
    return jnp.mean(jnp.logaddexp(0.0, z) - y * z)


def two_layer_np(W1, w2, X):
    h = np.tanh(X @ W1)
    return np.sum((h @ w2) ** 2) / X.shape[0]


def two_layer_jnp(W1, w2, X):
    h = jnp.tanh(X @ W1)
    return jnp.sum((h @ w2) ** 2) / X.shape[0]


def mixture_np(X):
    a = np.exp(-X ** 2) * np.sin(3.0 * X)
    b = np.log1p(X ** 2)
    return np.sum(np.where(X > 0, a, b) + 0.5 * a * b)


def mixture_jnp(X):
    a = jnp.exp(-X ** 2) * jnp.sin(3.0 * X)
    b = jnp.log1p(X ** 2)
    return jnp.sum(jnp.where(X > 0, a, b) + 0.5 * a * b)


def axes_np(w, X):
    s = X * w
    return np.sum(np.max(s, axis=1) ** 2) + np.sum(np.mean(s, axis=0) * np.sqrt(w ** 2 + 1.0))


def axes_jnp(w, X):
    s = X * w
    return jnp.sum(jnp.max(s, axis=1) ** 2) + jnp.sum(jnp.mean(s, axis=0) *
                                                      jnp.sqrt(w ** 2 + 1.0))


def steps_np(w, X, y):
    total = 0.0
    for k in range(3):  # a loop of a fixed count: unrolled by jax.jit's trace
        r = X @ (w * (k + 1.0)) - y
        total = total + np.mean(r * r)
    return total


def steps_jnp(w, X, y):
    total = 0.0
    for k in range(3):
        r = X @ (w * (k + 1.0)) - y
        total = total + jnp.mean(r * r)
    return total


def rnn_np(W, U, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):  # a state carried through the steps, saved for the adjoint
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h ** 2)


def rnn_jnp(W, U, xs):
    h = jnp.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = jnp.tanh(W @ h + U @ xs[t])
    return jnp.sum(h ** 2)


CASES = {
    "logistic": (logistic_np, logistic_jnp, (W, 0.1, X, Y01), (0, 1, 2)),
    "two_layer": (two_layer_np, two_layer_jnp, (W1, RNG.standard_normal(3), X), (0, 1, 2)),
    "mixture": (mixture_np, mixture_jnp, (X,), (0,)),
    "axes": (axes_np, axes_jnp, (W, X), (0, 1)),
    "steps": (steps_np, steps_jnp, (W, X, Y01), (0, 1)),
    "rnn": (rnn_np, rnn_jnp, (RNG.standard_normal((3, 3)) * 0.5, W1.T, X[:5]), (0, 1, 2)),
}


def on_jax(args):
    return tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_gradient_equals_numpys(name):
    fn_np, fn_jnp, args, wrt = CASES[name]
    check_grads(fn_np, *args, wrt=wrt)
    value, grads = s2sgrad.value_and_grad(fn_np, wrt=wrt)(*args)
    got_value, got_grads = s2sgrad.value_and_grad(fn_jnp, wrt=wrt)(*on_jax(args))
    assert all(isinstance(g, jax.Array) for g in got_grads if np.ndim(g))
    for got, want in zip([got_value, *got_grads], [value, *grads], strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_compiled_gradient_runs_inside_jit(name):
    fn_np, fn_jnp, args, wrt = CASES[name]
    value, grads = s2sgrad.value_and_grad(fn_np, wrt=wrt)(*args)
    jitted = jax.jit(s2sgrad.value_and_grad(fn_jnp, wrt=wrt))
    got_value, got_grads = jitted(*on_jax(args))
    for got, want in zip([got_value, *got_grads], [value, *grads], strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)


def test_the_adjoint_calls_jax_numpy_and_says_so():
    compiled = s2sgrad.grad(two_layer_jnp)
    pair = compiled.compiled_for((0,), on_jax(CASES["two_layer"][2]))
    # the cotangent of h and the broadcast seed, by jax.numpy's functions, under its name
    assert "h_bar = jnp.outer(" in pair.adjoint_source
    assert "jnp.broadcast_to(" in pair.adjoint_source
    assert "np." not in pair.adjoint_source.replace("jnp.", "")


def broadcast_np(w, b, X):
    return np.sum(np.tanh(X * w + b) ** 2)


def broadcast_jnp(w, b, X):
    return jnp.sum(jnp.tanh(X * w + b) ** 2)


def test_gradients_of_broadcast_operands_on_jax():
    """A row and a column broadcast against a matrix: their cotangents are summed back to
    their shapes by the standard's version of the helper, which calls jax.numpy."""
    args = (W, RNG.standard_normal((12, 1)), X)
    check_grads(broadcast_np, *args, wrt=(0, 1))
    want = s2sgrad.gradient(broadcast_np, wrt=(0, 1))(*args)
    eager = s2sgrad.gradient(broadcast_jnp, wrt=(0, 1))(*on_jax(args))
    jitted = jax.jit(s2sgrad.gradient(broadcast_jnp, wrt=(0, 1)))(*on_jax(args))
    for got in (eager, jitted):
        for a, b in zip(got, want, strict=True):
            assert isinstance(a, jax.Array) and a.shape == b.shape
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12)


def spread_np(X):
    return np.sum(np.std(X, axis=0, ddof=1)) + np.sum(np.var(X, axis=1))


def spread_jnp(X):
    return jnp.sum(jnp.std(X, axis=0, correction=1)) + jnp.sum(jnp.var(X, axis=1))


def test_std_and_var_with_the_standards_correction():
    check_grads(spread_np, X)
    want = s2sgrad.gradient(spread_np)(X)
    got = jax.jit(s2sgrad.gradient(spread_jnp))(jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def standard_names_np(u, p):
    h = np.transpose(np.concatenate([np.arccos(u), np.power(p, u)], axis=0))
    return np.sum(np.arctan2(h, 2.0) * np.arcsinh(h))


def standard_names_jnp(u, p):
    # the array API standard's names, which jax.numpy has too
    h = jnp.permute_dims(jnp.concat([jnp.acos(u), jnp.pow(p, u)], axis=0), (1, 0))
    return jnp.sum(jnp.atan2(h, 2.0) * jnp.asinh(h))


def test_the_standards_names_in_jax_numpy():
    u, p = RNG.uniform(-0.9, 0.9, (3, 4)), RNG.uniform(0.5, 2.0, (3, 4))
    check_grads(standard_names_np, u, p, wrt=(0, 1))
    want = s2sgrad.gradient(standard_names_np, wrt=(0, 1))(u, p)
    got = jax.jit(s2sgrad.gradient(standard_names_jnp, wrt=(0, 1)))(*on_jax((u, p)))
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12)


def minibatch_np(params, X, y, idx):
    W1, w2 = params
    h = np.maximum(X[idx] @ W1, 0.0)
    return np.mean((h @ w2 - y[idx]) ** 2)


def minibatch_jnp(params, X, y, idx):
    W1, w2 = params  # a tuple of parameters: the cotangent starts as zeros of each
    h = jnp.maximum(X[idx] @ W1, 0.0)
    return jnp.mean((h @ w2 - y[idx]) ** 2)


def test_a_tuple_of_parameters_in_jit():
    params, idx = (W1, RNG.standard_normal(3)), np.array([1, 4, 4, 9, 11])
    check_grads(minibatch_np, params, X, Y01, idx, wrt=0)
    want = s2sgrad.gradient(minibatch_np)(params, X, Y01, idx)
    got = jax.jit(s2sgrad.gradient(minibatch_jnp))(tuple(on_jax(params)), *on_jax((X, Y01, idx)))
    for a, b in zip(got, want, strict=True):
        assert isinstance(a, jax.Array)
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12)


def test_jvp_on_jax():
    fn_np, fn_jnp, args, _ = CASES["two_layer"]
    tangents = (np.ones_like(W1), np.zeros(3), np.zeros_like(X))
    _, want = s2sgrad.jvp(fn_np, args, tangents)
    _, got = s2sgrad.jvp(fn_jnp, on_jax(args), on_jax(tangents))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


# -- refused, at the user's line ------------------------------------------------------------

def numpy_inside(w, X):
    return jnp.sum(np.tanh(X @ w))  # NumPy's tanh converts a JAX array


def branch_inside(w, X):
    s = jnp.sum(X @ w)
    if s > 0:
        return s
    return -s


def picks_rows_np(w, X, idx):
    return np.sum((X[idx] @ w) ** 2) + np.sum(np.sin(X[:4, 1:]))


def picks_rows(w, X, idx):
    # the adjoint adds into the rows idx names (repeats add each time) and into a region:
    # jax.numpy's .at[].add, which returns the updated array
    return jnp.sum((X[idx] @ w) ** 2) + jnp.sum(jnp.sin(X[:4, 1:]))


def test_indexed_reads_on_jax_accumulate_with_at():
    idx = np.array([0, 2, 2, 7])
    check_grads(picks_rows_np, W, X, idx, wrt=(0, 1))
    want = s2sgrad.gradient(picks_rows_np, wrt=(0, 1))(W, X, idx)
    eager = s2sgrad.gradient(picks_rows, wrt=(0, 1))(*on_jax((W, X, idx)))
    jitted = jax.jit(s2sgrad.gradient(picks_rows, wrt=(0, 1)))(*on_jax((W, X, idx)))
    for got in (eager, jitted):
        for a, b in zip(got, want, strict=True):
            assert isinstance(a, jax.Array)
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12)


def sorts(w, X):
    return jnp.sum(jnp.sort(X @ w) ** 2)  # no rule mirrored for jax.numpy.sort


@pytest.mark.parametrize("fn, args, words", [
    (numpy_inside, (W, X), "numpy.tanh"),
    (branch_inside, (W, X), "a test on the value of an array"),
    (sorts, (W, X), "jax.numpy.sort"),
])
def test_what_jax_cannot_do_here_is_refused(fn, args, words):
    with pytest.raises(s2sgrad.TransformError) as caught:
        s2sgrad.gradient(fn)(*on_jax(args[:2]), *args[2:])
    assert words in str(caught.value) and __file__ in str(caught.value), str(caught.value)
