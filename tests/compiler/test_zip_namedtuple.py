"""zip inside zip and zip of a starred sequence in loops and comprehensions, and named
tuples passed in as arguments (a user's collections.namedtuple or typing.NamedTuple,
NumPy's QRResult): what users write, in a loop, through a helper, decorated with
``@s2sgrad.grad`` and on Tensors, checked against finite differences; what stays refused is
refused at the user's line with what to write instead."""

from __future__ import annotations

import collections
import typing

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads, numeric_gradient
from tests.located import assert_points_at

rng = np.random.default_rng(11)
X, Y, Z = rng.standard_normal((3, 4))
M = rng.standard_normal((3, 3))
S = M + M.T + np.diag([0.0, 2.0, 4.0])  # symmetric, distinct eigenvalues
A = rng.standard_normal((4, 3))
WEIGHTS = np.arange(1.0, 4.0)


# --- zip inside zip ------------------------------------------------------------------------


def nested_zip(xs, ys, zs):
    s = 0.0
    for (a, b), c in zip(zip(xs, ys), zs):
        s = s + np.sin(a) * b * c
    return s


def zip_inside_enumerate_inside(xs, ys, zs):
    s = 0.0
    for i, (a, (b, c)) in enumerate(zip(xs, zip(ys, zs, strict=True)), 1):
        s = s + i * a * np.cos(b) * c
    for i, (a, (b, c)) in enumerate(zip(xs, zip(reversed(ys), zs[1:]))):
        s = s + i * a * b * c ** 2
    return s


def enumerate_inside_zip(xs, ys):
    s = 0.0
    for (i, a), b in zip(enumerate(xs, 2), ys):
        s = s + i * a * b
    return s


def nested_zip_comprehension(xs, ys, zs):
    return sum(a * np.exp(b) * c for (a, b), c in zip(zip(xs, ys), zs)) + np.sum(
        np.stack([a - b for a, (b, c) in zip(xs, zip(ys, zs))]) ** 2)


# --- zip of a starred sequence ---------------------------------------------------------------


def eigh_pairs(m):
    s = 0.0
    for w, v in zip(*np.linalg.eigh(m)):  # each value with a row of the vector matrix
        s = s + w * np.sum(v * WEIGHTS) ** 2
    return s


def eigh_rows_by_name(m):
    vals, vecs = np.linalg.eigh(m)
    s = 0.0
    for w, v in zip(vals, vecs):
        s = s + w * np.sum(v * WEIGHTS) ** 2
    return s


def eigh_columns_by_name(m):
    vals, vecs = np.linalg.eigh(m)
    s = 0.0
    for w, v in zip(vals, vecs.T):
        s = s + w * np.sum(v * WEIGHTS) ** 2
    return s


def starred_name_of_a_rule(m):
    pair = np.linalg.eigh(m)
    return sum(w * v[0] for w, v in zip(*pair))


def starred_qr(a):
    s = 0.0
    for i, (q, r) in enumerate(zip(*np.linalg.qr(a))):
        s = s + (i + 1.0) * np.sum(q[:3] * r)
    return s


def starred_display(xs, ys):
    s = 0.0
    for a, b in zip(*(xs, ys)):
        s = s + a * b
    return s + sum(a * np.sin(b) for a, b in zip(*[ys, xs]))


def starred_argument(xs, pair):
    s = 0.0
    for a, (b, c) in zip(xs, zip(*pair)):
        s = s + a * b * np.tanh(c)
    for a, b, c in zip(xs, *pair):
        s = s + a * b * c
    return s


def helper_over_starred(pair):
    return sum(np.sum(u * v) for u, v in zip(*pair))


def through_a_helper(m):
    return helper_over_starred(np.linalg.qr(m)) + helper_over_starred((m[0], m[1]))


@pytest.mark.parametrize("fn, args", [
    (nested_zip, (X, Y, Z)),
    (zip_inside_enumerate_inside, (X, Y, Z)),
    (enumerate_inside_zip, (X, Y)),
    (nested_zip_comprehension, (X, Y, Z)),
    (eigh_pairs, (S,)),
    (starred_name_of_a_rule, (S,)),
    (starred_qr, (A,)),
    (starred_display, (X, Y)),
    (starred_argument, (X, (Y, Z))),
    (through_a_helper, (M,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_zips_are_index_loops(fn, args):
    check_grads(fn, *args, modes=("rev", "fwd"))
    if all(isinstance(a, np.ndarray) for a in args):
        check_grads(fn, *args, order=2)


def test_zip_of_eigh_pairs_values_with_rows():
    """zip(*eigh(m)) pairs each eigenvalue with a row of the vector matrix, as Python does:
    its gradient is that of zip(vals, vecs), not that of zip(vals, vecs.T)."""
    g = s2sgrad.gradient(eigh_pairs)(S)
    np.testing.assert_allclose(g, s2sgrad.gradient(eigh_rows_by_name)(S), rtol=1e-10)
    assert not np.allclose(g, s2sgrad.gradient(eigh_columns_by_name)(S))
    np.testing.assert_allclose(g, numeric_gradient(eigh_pairs, [S], 0), rtol=1e-5, atol=1e-7)


def test_zips_decorated_and_on_tensors():
    loss = s2sgrad.grad(nested_zip)
    xs = s2sgrad.tensor(X, requires_grad=True)
    zs = s2sgrad.tensor(Z, requires_grad=True)
    loss(xs, Y, zs).backward()
    np.testing.assert_allclose(xs.grad.numpy(), s2sgrad.gradient(nested_zip, 0)(X, Y, Z))
    np.testing.assert_allclose(zs.grad.numpy(), s2sgrad.gradient(nested_zip, 2)(X, Y, Z))
    m = s2sgrad.tensor(S, requires_grad=True)
    s2sgrad.grad(eigh_pairs)(m).backward()
    np.testing.assert_allclose(m.grad.numpy(), s2sgrad.gradient(eigh_pairs)(S))


def test_a_different_count_compiles_again():
    """The count of zip(*pair) comes from the argument: a pair of three sequences is
    another compile, and Python's own error where the loop unpacks too few."""
    def three(pair):
        s = 0.0
        for a, b, c in zip(*pair):
            s = s + a * b * c
        return s
    check_grads(three, (X, Y, Z), modes=("rev", "fwd"))
    with pytest.raises(TransformError, match="passes 2 sequences here, and the loop unpacks 3"):
        s2sgrad.gradient(three)((X, Y))


def refuses_unknown_count(m):
    rows = []
    for k in range(2):
        rows.append(m[k])
    s = 0.0
    for a, b in zip(*rows):  # <- refused
        s = s + a * b
    return s


def refuses_array_spread(m):
    s = 0.0
    for a, b, c in zip(*m):  # <- refused
        s = s + a * b * c
    return s


def refuses_item_not_unpacked(m):
    s = 0.0
    for pair in zip(*np.linalg.eigh(m)):  # <- refused
        s = s + pair[0]
    return s


def refuses_two_spreads(pair):
    s = 0.0
    for a, b, c, d in zip(*pair, *pair):  # <- refused
        s = s + a * b * c * d
    return s


def refuses_too_many_names(m):
    s = 0.0
    for w, v, u in zip(*np.linalg.eigh(m)):  # <- refused
        s = s + w
    return s


def refuses_reversed_zip(xs, ys):
    s = 0.0
    for a, b in reversed(zip(xs, ys)):  # <- refused
        s = s + a * b
    return s


def refuses_inner_zip_not_unpacked(xs, ys, zs):
    s = 0.0
    for a, bc in zip(xs, zip(ys, zs)):  # <- refused
        s = s + a * bc[0]
    return s


@pytest.mark.parametrize("fn, args, token, words", [
    (refuses_unknown_count, (M,), "*rows", "not known when compiling"),
    (refuses_array_spread, (M,), "*m", "not known when compiling"),
    (refuses_item_not_unpacked, (S,), "*np", "does not unpack its items"),
    (refuses_two_spreads, ((X, Y),), "*pair, *pair", "two starred arguments"),
    (refuses_too_many_names, (S,), "*np", "passes 2 sequences here, and the loop unpacks 3"),
    (refuses_reversed_zip, (X, Y), "zip(", "reversed() of zip()"),
    (refuses_inner_zip_not_unpacked, (X, Y, Z), "zip(ys", "zip() inside zip() must unpack"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_zip_refusals_point_at_the_line(fn, args, token, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(*args)
    assert words in info.value.reason, info.value.reason
    assert_points_at(info.value, fn, token if token != "*pair, *pair" else "*pair)")
    if "not known" in words:
        assert "zip(vals, vecs.T)" in info.value.hint


# --- named tuples as arguments ---------------------------------------------------------------


Params = collections.namedtuple("Params", "w b")
Swapped = collections.namedtuple("Swapped", "b w")  # the same fields, the other order
Same = collections.namedtuple("Same", "w b")  # the same fields, another class


class Typed(typing.NamedTuple):
    w: np.ndarray
    b: np.ndarray


class Layer(typing.NamedTuple):
    W: np.ndarray
    b: np.ndarray


def _params(cls=Params, d_in=3, d_out=2):
    w, b = 0.5 * rng.standard_normal((d_in, d_out)), 0.1 * rng.standard_normal(d_out)
    return cls(w=w, b=b)


def reads_fields(p, x):
    return np.sum(np.tanh(x @ p.w + p.b) ** 2)


def reads_items(p, x):
    return np.sum(np.tanh(x @ p[0] + p[-1]) ** 2)


def unpacks(p, x):
    w, b = p
    return np.sum(np.tanh(x @ w + b) ** 2)


def iterates(p, x):
    s = np.sum(x)
    for v in p:
        s = s + np.sum(np.sin(v) * v)
    for name, v in zip(("w", "b"), p):
        s = s + np.sum(v ** 2) * len(name)
    return s


def fields_after_a_copy(p, x):
    q = p
    if np.sum(x) > 0:
        q = p
    return np.sum(q.w * np.mean(x)) + np.sum(q.b ** 3)


def helper_reads_fields(p, x):
    return reads_fields(p, x) + unpacks(p, 2.0 * x)


def mlp(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer.W + layer.b)
    return np.sum(h ** 2)


def mlp_by_position(layers, x):
    h = x
    for i, (W, b) in enumerate(layers):
        h = np.tanh(h @ W + b) * (i + 1.0)
    return np.sum(h ** 2)


def qr_fields(res):
    return np.sum(res.Q * res.Q) + np.sum(np.sin(res.R))


def qr_to_a_helper(a):
    res = np.linalg.qr(a)
    return qr_fields(res) + qr_fields(np.linalg.qr(2.0 * a))


X_IN = rng.standard_normal((5, 3))


@pytest.mark.parametrize("fn", [reads_fields, reads_items, unpacks, iterates,
                                fields_after_a_copy, helper_reads_fields],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("cls", [Params, Typed, Same], ids=lambda c: c.__name__)
def test_named_tuple_argument(fn, cls):
    p = _params(cls)
    check_grads(fn, p, X_IN, modes=("rev", "fwd"))
    check_grads(lambda x: fn(p, x), X_IN, order=2)
    g = s2sgrad.gradient(fn)(p, X_IN)
    assert type(g) is cls
    for k in range(2):
        def moved(v, k=k):
            return fn(cls._make(v if j == k else p[j] for j in range(2)), X_IN)
        np.testing.assert_allclose(g[k], numeric_gradient(moved, [p[k]], 0), rtol=1e-5,
                                   atol=1e-7)


def test_named_tuple_specialised_on_its_class():
    """Field reads become reads by position: a class with the same fields in another order
    (or another class with the same fields) is another compile."""
    gradient = s2sgrad.gradient(reads_fields)
    p = _params()
    g = gradient(p, X_IN)
    swapped = gradient(Swapped(b=p.b, w=p.w), X_IN)
    same = gradient(Same(*p), X_IN)
    assert (type(g), type(swapped), type(same)) == (Params, Swapped, Same)
    for got in (swapped, same):
        np.testing.assert_allclose(got.w, g.w)
        np.testing.assert_allclose(got.b, g.b)
    np.testing.assert_allclose(swapped.b, numeric_gradient(
        lambda b: reads_fields(Swapped(b=b, w=p.w), X_IN), [p.b], 0), rtol=1e-5, atol=1e-7)


def test_list_of_named_tuples():
    layers = [Layer(*_params(d_in=3, d_out=4)), Layer(*_params(d_in=4, d_out=2))]
    for fn in (mlp, mlp_by_position):
        check_grads(fn, layers, X_IN, modes=("rev", "fwd"))
        g = s2sgrad.gradient(fn)(layers, X_IN)
        assert isinstance(g, list) and all(type(layer) is Layer for layer in g)
        moved = numeric_gradient(lambda W, fn=fn: fn([layers[0], Layer(W, layers[1].b)], X_IN),
                                 [layers[1].W], 0)
        np.testing.assert_allclose(g[1].W, moved, rtol=1e-5, atol=1e-7)
    check_grads(lambda x: mlp(layers, x), X_IN, order=2)


def test_named_tuple_numpy_returns():
    check_grads(qr_to_a_helper, A, modes=("rev", "fwd"), order=2)
    res = np.linalg.qr(A)
    check_grads(qr_fields, res, modes=("rev", "fwd"))
    assert type(s2sgrad.gradient(qr_fields)(res)) is type(res)


def test_named_tuples_decorated_and_on_tensors():
    p = _params()
    x = s2sgrad.tensor(X_IN, requires_grad=True)
    s2sgrad.grad(reads_fields)(p, x).backward()
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(reads_fields, 1)(p, X_IN))
    w = s2sgrad.tensor(p.w, requires_grad=True)
    b = s2sgrad.tensor(p.b, requires_grad=True)
    s2sgrad.grad(reads_fields)(Params(w, b), X_IN).backward()
    g = s2sgrad.gradient(reads_fields)(p, X_IN)
    np.testing.assert_allclose(w.grad.numpy(), g.w)
    np.testing.assert_allclose(b.grad.numpy(), g.b)


def test_named_tuple_jvp_and_vjp():
    p = _params()
    tangent = Params(np.ones_like(p.w), np.zeros_like(p.b))
    _, dot = s2sgrad.jvp(reads_fields, (p, X_IN), (tangent, None))
    g = s2sgrad.gradient(reads_fields)(p, X_IN)
    np.testing.assert_allclose(dot, np.sum(g.w), rtol=1e-10)
    _, pullback = s2sgrad.vjp(reads_fields, p, X_IN)
    assert type(pullback(1.0)[0]) is Params
    hvp = s2sgrad.hvp(lambda q: reads_fields(q, X_IN), (p,), (tangent,))
    assert type(hvp) is Params


class WithProperty(typing.NamedTuple):
    w: np.ndarray
    b: np.ndarray

    @property
    def total(self):
        return np.sum(self.w)


def refuses_property(p):
    return p.total * 2.0  # <- refused


class ShadowsField(Params):
    @property
    def w(self):
        return self[1]


def test_named_tuple_refusals():
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(refuses_property)(WithProperty(X, Y))
    assert "not a field of the named tuple WithProperty" in info.value.reason
    assert_points_at(info.value, refuses_property, "p.total")
    # a subclass whose field reads differ from its items is not read by position
    shadowed = ShadowsField(*_params())
    with pytest.raises(TransformError):
        s2sgrad.gradient(reads_fields)(shadowed, X_IN)
