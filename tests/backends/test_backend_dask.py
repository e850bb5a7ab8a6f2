"""Gradients of functions called with Dask arrays: the generated NumPy-style code runs on
them unchanged (Dask implements NumPy's dispatch protocols), the results stay lazy, and
``dask.compute`` gives what the NumPy path gives. What Dask cannot do is refused at the first
call, naming the backend and the user's line.

Each function is written once, as a user writes NumPy; its gradient with Dask inputs is
compared with its gradient with the same data as NumPy arrays, which the rest of the suite
checks against finite differences (and here too, on the NumPy path).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

RNG = np.random.default_rng(0)
N, D = 64, 5
X = RNG.standard_normal((N, D))
Y01 = (RNG.random(N) > 0.5).astype(float)
YR = RNG.standard_normal(N)
W = RNG.standard_normal(D) * 0.3


def chunked(a: np.ndarray, rows: int = 16):
    return da.from_array(a, chunks=(rows,) + a.shape[1:])


# -- the catalogue: functions a user fits to chunked data -----------------------------------

def logistic(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def least_squares(w, X, y):
    r = X @ w - y
    return np.sum(r * r) / len(y)


def softplus_regression(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def two_layer(W1, w2, X, y):
    h = np.tanh(X @ W1)
    out = h @ w2
    return np.mean((out - y) ** 2)


def reductions_over_axes(w, X):
    scaled = X * w  # broadcast over the rows
    per_column = np.sum(scaled, axis=0)
    centred = scaled - np.mean(scaled, axis=0, keepdims=True)
    return np.sum(per_column ** 2) + np.sum(np.max(centred, axis=1)) + np.mean(centred ** 4)


def fixed_steps(w, X, y):
    total = 0.0
    for k in range(3):  # a loop whose count does not depend on the data
        r = X @ (w * (k + 1.0)) - y
        total = total + np.mean(r * r)
    return total


def elementwise(X):
    a = np.exp(-X ** 2) * np.sin(3.0 * X)
    b = np.log1p(X ** 2)
    return np.sum(np.where(X > 0, a, b) + 0.5 * a * b)


CASES = {
    "logistic": (logistic, (W, 0.1, X, Y01), (0, 1)),
    "least_squares": (least_squares, (W, X, YR), (0,)),
    "softplus_regression": (softplus_regression, (W, X, Y01), (0,)),
    "two_layer": (two_layer, (RNG.standard_normal((D, 3)) * 0.3, RNG.standard_normal(3), X,
                              YR), (0, 1)),
    "reductions_over_axes": (reductions_over_axes, (W, X), (0,)),
    "fixed_steps": (fixed_steps, (W, X, YR), (0,)),
    "elementwise": (elementwise, (X,), (0,)),
}


def on_dask(args: tuple) -> tuple:
    """The arguments with every 2-d array and the data vectors chunked by rows."""
    return tuple(chunked(a) if isinstance(a, np.ndarray) and a.shape[0] == N else a
                 for a in args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_grad_on_dask_equals_numpy_and_stays_lazy(name):
    fn, args, wrt = CASES[name]
    check_grads(fn, *args, wrt=wrt)  # the NumPy path against finite differences
    value, grads = s2sgrad.value_and_grad(fn, wrt=wrt)(*args)
    lazy_value, lazy_grads = s2sgrad.value_and_grad(fn, wrt=wrt)(*on_dask(args))
    lazy = [lazy_value, *lazy_grads]
    # a result that depends on chunked data is a dask graph, not yet computed
    assert any(isinstance(v, da.Array) for v in lazy), [type(v) for v in lazy]
    computed = dask.compute(*lazy)
    for got, want in zip(computed, [value, *grads], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_a_differentiated_dask_array():
    """The gradient with respect to chunked data is chunked, and lazy."""
    fn, (w, x, y), _ = CASES["least_squares"]
    g = s2sgrad.gradient(least_squares, wrt=1)(w, chunked(x), chunked(y))
    assert isinstance(g, da.Array) and g.chunks[0] == (16,) * 4
    np.testing.assert_allclose(g.compute(), s2sgrad.gradient(least_squares, wrt=1)(w, x, y),
                               rtol=1e-12)


def means_and_sums(w, X, y):
    z = X @ w
    r = np.mean(np.logaddexp(0.0, z) - y * z)  # the seed broadcast back over z's rows
    return r + np.sum(X * w, axis=1).mean() + np.sum(np.tanh(X)) / X.shape[0]


def test_a_reductions_cotangent_is_broadcast_in_the_chunks_it_reduced():
    """The adjoint of np.mean(v) and np.sum(v) broadcasts g back over v: laid out in v's
    chunks, so that no task holds more than a chunk of it (one block of n entries
    otherwise)."""
    check_grads(means_and_sums, W, X, Y01, wrt=(0, 1))
    want = s2sgrad.gradient(means_and_sums, wrt=(0, 1))(W, X, Y01)
    got = s2sgrad.gradient(means_and_sums, wrt=(0, 1))(W, chunked(X), chunked(Y01))
    assert got[1].chunks == chunked(X).chunks, got[1].chunks
    # no array in the graph has a chunk of more rows than the data's chunks
    layouts = [getattr(layer, "collection_annotations", None) or {}
               for layer in got[1].__dask_graph__().layers.values()]
    row_chunks = [a["chunks"][0] for a in layouts if a.get("chunks")]
    assert len(row_chunks) > 10, layouts  # the graph's arrays, as Dask describes them
    assert max(max(c) for c in row_chunks) <= 16, row_chunks
    for a, b in zip(dask.compute(*got), want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    pair = s2sgrad.grad(means_and_sums).compiled_for((0, 1), (W, chunked(X), chunked(Y01)))
    assert "broadcast_like(" in pair.adjoint_source, pair.adjoint_source


def test_dask_and_numpy_arguments_compile_apart():
    fn, args, wrt = CASES["least_squares"]
    derivative = s2sgrad.gradient(least_squares)
    derivative(*args)
    lazy = derivative(*on_dask(args))
    derivative(*args)
    cache = s2sgrad.compiler.compiled.state_of(least_squares).spec.cache
    keys = [key for key in cache if key[0] == (0,)]
    assert len(keys) == 2, keys
    np.testing.assert_allclose(lazy.compute(), derivative(*args), rtol=1e-12)


def test_vjp_and_jvp_on_dask():
    fn, args, wrt = CASES["two_layer"]
    lazy = on_dask(args)
    out, pullback = s2sgrad.vjp(two_layer, *lazy)
    (g0, g1, *_rest) = pullback(1.0)
    want = s2sgrad.gradient(two_layer, wrt=(0, 1))(*args)
    got = dask.compute(g0, g1)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    t0 = np.ones_like(args[0])
    _, dot = s2sgrad.jvp(two_layer, lazy, (t0, np.zeros(3), np.zeros_like(X), np.zeros(N)))
    _, want_dot = s2sgrad.jvp(two_layer, args, (t0, np.zeros(3), np.zeros_like(X), np.zeros(N)))
    np.testing.assert_allclose(dask.compute(dot)[0], want_dot, rtol=1e-10)


# -- what Dask cannot do is refused, at the user's line -------------------------------------

def branch_on_data(w, X):
    s = np.sum(X @ w)
    if s > 0:  # needs the value now: a lazy array has none yet
        return s
    return -s


def while_on_data(w, X):
    z = X @ w
    while np.max(np.abs(z)) > 1.0:
        z = z * 0.5
    return np.sum(z)


def to_a_float(w, X):
    return float(np.sum(X @ w)) * np.sum(w)


def scatter_into(w, X, idx):
    out = np.zeros(X.shape[0])
    out[idx] += X @ w
    return np.sum(out * out)


@pytest.mark.parametrize("fn, args, words", [
    (branch_on_data, (W, X), "if s > 0"),
    (while_on_data, (W, X), "while np.max(np.abs(z)) > 1.0"),
    (to_a_float, (W, X), "float(np.sum(X @ w))"),
])
def test_what_needs_a_value_now_is_refused_naming_dask_and_the_line(fn, args, words):
    s2sgrad.gradient(fn)(*args)  # fine on NumPy arrays
    with pytest.raises(s2sgrad.TransformError) as caught:
        s2sgrad.gradient(fn)(*on_dask(args))
    message = str(caught.value)
    assert "dask" in message and __file__ in message, message
    assert caught.value.text is not None and words in caught.value.text, caught.value.text


def picks(w, X, idx):
    rows = X[idx]  # repeated rows: the adjoint adds each occurrence
    head = X[:8, 1:]  # a slice: the adjoint adds into a region
    return np.sum((rows @ w) ** 2) + np.sum(np.sin(head))


def test_indexed_reads_of_a_dask_array_have_lazy_gradients():
    """The adjoint of reading X[idx] accumulates into X's positions, with Dask's own
    operations: lazy, chunked like X, equal to NumPy's."""
    idx = np.array([0, 3, 3, 17, 40, 3, 63])
    check_grads(picks, W, X, idx, wrt=(0, 1))
    want = s2sgrad.gradient(picks, wrt=(0, 1))(W, X, idx)
    got = s2sgrad.gradient(picks, wrt=(0, 1))(W, chunked(X), idx)
    assert isinstance(got[1], da.Array) and got[1].chunks == chunked(X).chunks
    for a, b in zip(dask.compute(*got), want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_an_indexed_accumulation_is_refused_on_dask():
    idx = RNG.integers(0, N, N)
    s2sgrad.gradient(scatter_into)(W, X, idx)
    with pytest.raises(s2sgrad.TransformError) as caught:
        s2sgrad.gradient(scatter_into)(W, chunked(X), idx)
    assert "dask" in str(caught.value) and __file__ in str(caught.value)


def test_spread_counts_its_entries_from_shapes():
    """np.std's and np.var's adjoints count the entries from the arrays' shapes, which Dask
    knows without computing anything (np.size of a Dask array would compute it here)."""
    def spread(w, X):
        z = X @ w
        return np.std(z) + np.var(X * w, axis=0, ddof=1).sum() + np.std(X, axis=1).mean()

    want = s2sgrad.gradient(spread)(W, X)
    check_grads(spread, W, X, wrt=0)
    got = s2sgrad.gradient(spread)(W, chunked(X))
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(), want, rtol=1e-12)


def test_a_function_dask_lacks_is_refused():
    def median_loss(w, X):
        return np.sum(np.sort(X @ w) ** 2)

    assert not hasattr(da, "sort")
    s2sgrad.gradient(median_loss)(W, X)
    with pytest.raises(s2sgrad.TransformError) as caught:
        s2sgrad.gradient(median_loss)(W, chunked(X))
    assert "dask" in str(caught.value) and "sort" in str(caught.value)


def test_computed_on_a_local_cluster_of_worker_processes():
    """The lazy gradient is a graph of chunk operations that worker processes compute."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        args = (W, 0.1, X, Y01)
        value, grads = s2sgrad.value_and_grad(logistic, wrt=(0, 1))(*on_dask(args))
        futures = client.compute([value, *grads])
        computed = client.gather(futures)
        workers = {w for key in client.who_has(futures).values() for w in key}
    want_value, want_grads = s2sgrad.value_and_grad(logistic, wrt=(0, 1))(*args)
    for got, want in zip(computed, [want_value, *want_grads], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    assert workers  # the results were held by the cluster's workers


def _affine(w, X):
    return X @ w + 0.5


def _branching_helper(z):
    if np.sum(z) > 0:  # a test in a function the loss calls
        return z
    return -z


def calls_a_helper(w, X, y):
    r = _affine(w, X) - y
    return np.mean(r * r)


def calls_a_branching_helper(w, X):
    return np.sum(_branching_helper(X @ w) ** 2)


def test_a_called_function_is_compiled_for_dask_too():
    args = (W, X, YR)
    want = s2sgrad.gradient(calls_a_helper)(*args)
    got = s2sgrad.gradient(calls_a_helper)(*on_dask(args))
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(), want, rtol=1e-12)
    s2sgrad.gradient(calls_a_branching_helper)(W, X)
    with pytest.raises(s2sgrad.TransformError) as caught:
        s2sgrad.gradient(calls_a_branching_helper)(W, chunked(X))
    assert "dask" in str(caught.value) and "if np.sum(z) > 0" in caught.value.text


def test_the_check_tells_counts_from_arrays_in_generated_code():
    """A name the generated code assigns a count computed from shapes may be tested (``count
    - ddof or nan``); one assigned an array read through an attribute (``X.T``) may not."""
    import linecache

    from s2sgrad import backends

    def check(source):
        name = f"<generated check {abs(hash(source))}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        backends.named("dask").check(name, lambda: {"math": math}, {})

    check("def f_backward(saved, g):\n"
          "    _count = math.prod(saved.shape) // (g.size or 1) or 1\n"
          "    return g * (1.0 / (_count - 1 or 2.0))\n")
    with pytest.raises(s2sgrad.TransformError, match="a test on the value of an array"):
        check("def f_backward(saved, g):\n"
              "    _t = saved.T\n"
              "    return g if _t > 0 else -g\n")
