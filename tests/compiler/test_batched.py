"""Batched forward mode: the tangent function for a leading axis of directions
(``batched_jvp``, and the Jacobian's columns in one call), checked row by row against
central finite differences for every catalogue function it covers; a function it does not
cover says why (``NotBatchable``), and ``jacobian`` then takes one column at a time."""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.compiler.batching import NotBatchable
from s2sgrad.testing import check_grads
from tests.compiler.test_forward_mode import _params as _every  # every function and wrt set
from tests.located import assert_names_no_place_inside_s2sgrad
from tests.tiers import sample


def _params() -> list:
    """The catalogue's functions and sets of parameters to differentiate: every family (a
    module of the catalogue) and a third of its entries outside ``S2SGRAD_TESTS=full``
    (tests/tiers.py); the reverse and forward tests run every one."""
    return sample(_every(), family=lambda p: p.values[0].fn.__module__, every=3)


@pytest.mark.parametrize("case, wrt", _params())
def test_batched_jvp_matches_finite_differences(case, wrt) -> None:
    args = case.draw(0)
    try:
        check_grads(case.fn, *args, wrt=list(wrt), modes=("batch",), directions=3, seed=0)
    except NotBatchable:
        # then the Jacobian is built a column at a time, and is still right
        check_grads(case.fn, *args, wrt=list(wrt), modes=("fwd",), seed=0)


# Why a catalogue function is not batched: each reason is a known gap (the Jacobian is then
# built a column at a time); a new one fails here, so that it is seen.
KNOWN_GAPS = (
    "is known only at run time",  # an axis held in a variable of unknown kind
    "has no rule for a batch of tangents",  # np.array of a list, np.linspace, builtin sum
    "a transpose of unknown rank",
    "np.roll without an axis",
    "an item of a value of unknown kind",
    "np.diag of a vector",
    "with order=",
    "calls itself",
)


@pytest.mark.parametrize("case, wrt", _params())
def test_a_function_not_batched_has_a_known_reason(case, wrt) -> None:
    args = case.draw(0)
    rows = [None] * len(args)
    for i in wrt:
        rows[i] = np.ones((2,) + np.shape(args[i]))
    try:
        s2sgrad.batched_jvp(case.fn, args, rows)
    except NotBatchable as exc:
        assert any(gap in str(exc) for gap in KNOWN_GAPS), str(exc)


# Why a batched pullback is not generated, besides the reasons its batched tangent function
# is not: the reverse pass refuses in that function a rule called row by row (max, prod, std,
# norm, det), and what a list that grows in a loop (an append) turns into. One pullback per
# row is then used, which is always right.
KNOWN_REVERSE_GAPS = KNOWN_GAPS + (
    "no derivative rule for s2sgrad.rules.",
    "this updates, in place,",
    "is not indexing of an array",
    "shares memory with an array updated in place before this use",
    "not an array",
)


@pytest.mark.parametrize("case, wrt", _params())
def test_batched_vjp_matches_finite_differences(case, wrt) -> None:
    args = case.draw(0)
    try:
        check_grads(case.fn, *args, wrt=list(wrt), modes=("batch-rev",), directions=3,
                    seed=0)
    except NotBatchable as exc:
        assert any(gap in str(exc) for gap in KNOWN_REVERSE_GAPS), str(exc)


# --- the Jacobian's columns in one call --------------------------------------------------


def numeric_jacobian(fn, args, i):
    x = np.asarray(args[i], dtype=float)
    out = np.asarray(fn(*args))
    J = np.zeros(out.shape + x.shape)
    for index in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[index] = 1e-6
        plus, minus = list(args), list(args)
        plus[i], minus[i] = x + e, x - e
        if not isinstance(args[i], np.ndarray):
            plus[i], minus[i] = float(plus[i]), float(minus[i])
        J[(...,) + index] = (np.asarray(fn(*plus)) - np.asarray(fn(*minus))) / 2e-6
    return J


def layer(W, x):
    return np.tanh(W @ x)


def net(W, x, V):
    return V @ layer(W, x) + np.sum(x ** 2)


@s2sgrad.grad
def decorated(W, x):
    return np.sin(W) @ x


def in_a_loop(x, w):
    out = np.zeros(4)
    for k in range(4):
        out[k] = np.sum(np.tanh(x * w[k])) + x[k % 3] ** 2
    return out


def through_a_list(x, y):
    parts = [x * y, np.exp(x)]
    parts.append(np.cos(y) * x[0])
    return np.concatenate(parts)[::2] * parts[1][1]


def fancy_indices(x):
    rows = np.array([0, 2, 2])
    return x[rows, 1:] * x[..., 0][:, None][rows] + x[x[:, 0] > 0.1].sum()


def reductions(x):
    return np.max(x, axis=1) + np.prod(x, axis=0)[:2].sum() + np.std(x) + np.linalg.norm(x)


def stacks(x):
    return np.stack([x, x.T @ x, np.swapaxes(x, 0, 1)], axis=1).reshape(-1)[::5]


def writes_through_indices(x):
    y = np.zeros((3, 4, 2))
    at = (1, 2)
    y[at] = x[:2] * 2.0  # a tuple held in a name: two axes taken
    y[0, 1:3] = np.tanh(x[:2])  # an int and a slice
    y[2, 0] = x[1]  # a number broadcast
    y[..., 0] += y[np.s_[...], 1] * x[2]  # an ellipsis, and one read at run time
    y[..., 1] += x[0] ** 2  # an ellipsis
    y[np.array([0, 2]), 3] = np.sin(x[1:3])  # an array index
    return y[None, :, 1] * x[2]


def indices_apart(x, flag):
    m = np.outer(x, x)[:, :, None] * np.ones(2)
    rows = np.array([0, 2])
    k = None
    if flag:
        k = 1
    last = np.array([1, 0])
    return m[rows, :, 1] * np.sum(m[0, :, last]) + np.sum(m[rows, k]) + m[rows, 1:, k].sum()


def scaled(x, s):
    return np.sin(s * x) * s


RNG = np.random.default_rng(3)
W, X, V = RNG.standard_normal((4, 3)), RNG.standard_normal(3), RNG.standard_normal((2, 4))
M = RNG.uniform(0.5, 1.5, (3, 3))
FAMILY = [
    pytest.param(net, (W, X, V), (0, 1, 2), id="calls a function"),
    pytest.param(decorated, (W, X), (0, 1), id="decorated"),
    pytest.param(in_a_loop, (X, RNG.standard_normal(4)), (0, 1), id="a loop with writes"),
    pytest.param(through_a_list, (X, RNG.standard_normal(3)), (0, 1), id="a list"),
    pytest.param(fancy_indices, (M,), (0,), id="fancy indices and masks"),
    pytest.param(reductions, (M,), (0,), id="rules called row by row"),
    pytest.param(stacks, (M,), (0,), id="stacks and axes"),
    pytest.param(scaled, (X, 0.7), (0, 1), id="a float argument"),
    pytest.param(writes_through_indices, (X,), (0,), id="element writes of every index"),
    pytest.param(indices_apart, (X, True), (0,), id="arrays apart in an index"),
]


# rows need reverse mode over the batched code, which refuses a rule called row by row
ROWS_FAMILY = [p for p in FAMILY if p.id != "rules called row by row"]
# (transform, the one-at-a-time path it must not take)
MODES = [pytest.param(s2sgrad.jacfwd, "jvp", *p.values, id=f"columns, {p.id}")
         for p in FAMILY] + [
    pytest.param(s2sgrad.jacrev, "_rows_one_by_one", *p.values, id=f"rows, {p.id}")
    for p in ROWS_FAMILY]


@pytest.mark.parametrize("transform, one_at_a_time, fn, args, wrt", MODES)
def test_a_jacobian_is_built_in_one_batched_call(transform, one_at_a_time, fn, args, wrt,
                                                  monkeypatch):
    expected = [numeric_jacobian(fn, args, i) for i in wrt]

    def refuse(*_):
        raise AssertionError("one direction at a time")

    monkeypatch.setattr(s2sgrad.api, one_at_a_time, refuse)
    found = transform(fn, wrt)(*args)
    for J, E in zip(found, expected, strict=True):
        np.testing.assert_allclose(J, E, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn, args, wrt", FAMILY)
def test_batched_rows_are_the_jvps_along_each_direction(fn, args, wrt):
    rng = np.random.default_rng(0)
    rows = [None] * len(args)
    for i in wrt:
        rows[i] = rng.standard_normal((5,) + np.shape(args[i]))
    batched = s2sgrad.batched_jvp(fn, args, rows)
    for j in range(5):
        tangents = [None if r is None else (r[j] if np.ndim(args[i]) else float(r[j]))
                    for i, r in enumerate(rows)]
        np.testing.assert_allclose(batched[j], s2sgrad.jvp(fn, args, tangents)[1],
                                   rtol=1e-12, atol=1e-12)




@pytest.mark.parametrize("fn, args, wrt", ROWS_FAMILY)
def test_batched_pullbacks_are_the_pullbacks_of_each_row(fn, args, wrt):
    rng = np.random.default_rng(0)
    out = fn(*args)
    cotangents = rng.standard_normal((4,) + np.shape(out))
    batched = s2sgrad.batched_vjp(fn, args, cotangents, wrt=wrt)
    _, pullback = s2sgrad.vjp(fn, *args)
    for j in range(4):
        each = pullback(cotangents[j])
        for i in range(len(args)):
            if i not in wrt:
                assert batched[i] is None
                continue
            np.testing.assert_allclose(batched[i][j], each[i], rtol=1e-12, atol=1e-12)


def test_jacrev_of_rows_the_reverse_pass_refuses_takes_a_row_at_a_time():
    with pytest.raises(NotBatchable, match="norm_jvp"):
        s2sgrad.batched_vjp(reductions, (M,), np.ones((2, 3)))
    np.testing.assert_allclose(s2sgrad.jacrev(reductions)(M),
                               numeric_jacobian(reductions, (M,), 0), rtol=1e-6, atol=1e-7)


def test_batched_vjp_checks_the_cotangents_shape():
    with pytest.raises(ValueError, match=r"expected \(2, 4\)"):
        s2sgrad.batched_vjp(layer, (W, X), np.ones((2, 3)))
    with pytest.raises(ValueError, match="no floating-point argument"):
        s2sgrad.batched_vjp(layer, (W.astype(int), X.astype(int)), np.ones((2, 4)))


def rolled(x):
    return np.roll(x, 1) * x  # no axis: not batched


def test_jacfwd_of_a_function_not_batched_takes_a_column_at_a_time():
    x = RNG.standard_normal(4)
    with pytest.raises(NotBatchable, match="np.roll without an axis"):
        s2sgrad.batched_jvp(rolled, (x,), (np.eye(4),))
    np.testing.assert_allclose(s2sgrad.jacfwd(rolled)(x), numeric_jacobian(rolled, (x,), 0),
                               rtol=1e-6, atol=1e-7)


def sin_reversed(x):
    return np.sum(np.sin(x) * x[::-1]) ** 2 + np.sum(np.tanh(np.outer(x, x)))


def energy(x, W):
    return np.sum(layer(W, x) ** 2) + x @ x * np.mean(x)


def chain(x):
    h = x
    for k in range(3):
        h = np.tanh(h * (k + 1.0)) + h[::-1] * 0.1
    return np.sum(h ** 3)


def written(x):
    y = np.zeros(4)
    for k in range(3):
        y[k] = x[k] * x[k + 1]
    y[3] = x[0] * x[3]
    return np.sum(y ** 2)


def rolled_energy(x):
    return np.sum(rolled(x) ** 2)  # np.roll without an axis: not batched


def peaked(x):
    return np.max(x) * np.sum(x ** 2)  # max's forward-mode rule is called row by row


def scaled_sum(s, x):
    return np.sum(np.sin(s * x)) * s ** 2


HESSIANS = [
    pytest.param(sin_reversed, (X,), id="straight line"),
    pytest.param(energy, (X, W), id="calls a function"),
    pytest.param(chain, (X,), id="a loop"),
    pytest.param(written, (RNG.standard_normal(4),), id="element writes"),
    pytest.param(scaled_sum, (0.7, X), id="a float argument"),
    pytest.param(peaked, (X,), id="max"),
]


@pytest.mark.parametrize("fn, args", HESSIANS)
def test_hessian_builds_every_column_in_one_call(fn, args, monkeypatch):
    gradient = s2sgrad.gradient(fn)
    expected = numeric_jacobian(gradient, args, 0)  # differences of the checked gradient
    s2sgrad.testing.check_grads(fn, *args, wrt=0)
    looped = np.stack([np.reshape(s2sgrad.hvp(fn, args, [np.reshape(e, np.shape(args[0]))]
                                              + [None] * (len(args) - 1)), -1)
                       for e in np.eye(np.size(args[0]))], axis=-1)

    def one_column(*_):
        raise AssertionError("a column at a time")

    monkeypatch.setattr(s2sgrad.api, "_jvp", one_column)
    H = s2sgrad.hessian(fn)(*args)
    np.testing.assert_allclose(H, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.reshape(H, looped.shape), looped, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, args", HESSIANS)
def test_second_derivatives_in_rows_match_finite_differences(fn, args):
    s2sgrad.testing.check_grads(fn, *args, wrt=0, order=2, modes=("batch",), directions=3)
    try:
        s2sgrad.testing.check_grads(fn, *args, wrt=0, order=2, modes=("batch-rev",),
                                    directions=3)
    except NotBatchable as exc:  # max: reverse mode over the rule called row by row
        assert any(gap in str(exc) for gap in KNOWN_REVERSE_GAPS), str(exc)


def branchy(x):
    if np.sum(x) > 0:  # forward mode does not read the adjoint's stack of the branch
        y = np.tanh(x) * 2.0
    else:
        y = np.sin(x) - x
    return np.sum(y * y) + np.sum(x[::-1] * x) ** 2


def _no_hvp(*_):
    raise AssertionError("a Hessian-vector product per column")


@pytest.mark.parametrize("fn", [energy, peaked], ids=lambda f: f.__name__)
def test_a_large_hessian_is_batched_forward_over_reverse(fn, monkeypatch):
    x = RNG.standard_normal(40)
    args = (x, RNG.standard_normal((4, 40))) if fn is energy else (x,)
    expected = numeric_jacobian(s2sgrad.gradient(fn), args, 0)
    monkeypatch.setattr(s2sgrad.api, "_jvp", _no_hvp)
    np.testing.assert_allclose(s2sgrad.hessian(fn)(*args), expected, rtol=1e-5, atol=1e-6)


def test_forward_over_forward_batches_few_directions_only(monkeypatch):
    """Where forward mode cannot read f's adjoint, the columns come from forward mode over
    f's batched tangent function, whose cost grows with the square of the directions: up to
    32 of them, and beyond that one Hessian-vector product per column."""
    small, large = np.abs(RNG.standard_normal(4)), np.abs(RNG.standard_normal(40))
    expected = [numeric_jacobian(s2sgrad.gradient(branchy), (x,), 0) for x in (small, large)]
    np.testing.assert_allclose(s2sgrad.hessian(branchy)(large), expected[1], rtol=1e-5,
                               atol=1e-6)
    monkeypatch.setattr(s2sgrad.api, "_jvp", _no_hvp)
    np.testing.assert_allclose(s2sgrad.hessian(branchy)(small), expected[0], rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(AssertionError, match="per column"):
        s2sgrad.hessian(branchy)(large)


@pytest.mark.parametrize("fn, why", [(rolled_energy, "np.roll without an axis")])
def test_hessian_of_a_function_not_batched_takes_a_column_at_a_time(fn, why):
    x = RNG.standard_normal(4)
    with pytest.raises(NotBatchable, match=why):
        s2sgrad.batched_jvp(s2sgrad.gradient(fn), (x,), (np.eye(4),))
    np.testing.assert_allclose(s2sgrad.hessian(fn)(x),
                               numeric_jacobian(s2sgrad.gradient(fn), (x,), 0),
                               rtol=1e-5, atol=1e-6)


def test_batched_jvp_checks_the_rows_shape():
    with pytest.raises(ValueError, match=r"expected \(2, 4, 3\)"):
        s2sgrad.batched_jvp(layer, (W, X), (np.ones((2, 3)), None))
    with pytest.raises(ValueError, match="at least one"):
        s2sgrad.batched_jvp(layer, (W, X), (None, None))


def calls_rolled(x):
    return rolled(x) + 1.0


def test_a_function_not_batched_is_named_at_the_user_s_line():
    x = RNG.standard_normal(4)
    with pytest.raises(NotBatchable) as info:
        s2sgrad.batched_jvp(calls_rolled, (x,), (np.eye(4),))
    message = str(info.value)
    line = rolled.__code__.co_firstlineno + 1
    assert f"test_batched.py:{line}:" in message  # where np.roll is
    assert f"test_batched.py:{calls_rolled.__code__.co_firstlineno + 1}:" in message
    assert_names_no_place_inside_s2sgrad(message)


def test_jacfwd_of_an_empty_input():
    def f(x, y):
        return np.sum(x) * y

    J = s2sgrad.jacfwd(f)(np.zeros(0), np.ones(2))
    assert J.shape == (2, 0)


# --- Hessians over the catalogues ----------------------------------------------------------

# Why a gradient's batched tangent function cannot be generated, besides the first-order
# reasons: forward mode reads f's batched tangent function again, and refuses in it a rule
# called row by row (max, prod, std, norm, det), and two in-place updates it cannot follow.
# One Hessian-vector product per direction is then used (tests/compiler/test_second_order_catalogue.py
# checks those).
KNOWN_SECOND_ORDER_GAPS = KNOWN_GAPS + (
    "no derivative rule for s2sgrad.rules.",
    "this updates, in place,",
    "is not indexing of an array",
)


def _hessian_params() -> list:
    """One wrt set per catalogue entry, every third entry (about 15 s)."""
    params, seen = [], []
    for p in _params():
        case, wrt = p.values
        if p.marks or case.name in seen:
            continue
        seen.append(case.name)
        if len(seen) % 3 == 0:
            marks = [pytest.mark.xfail(strict=True, reason=(
                "not a compiler defect: the loop stops after a number of trips that the "
                "finite difference's points change (see test_second_order_catalogue.py)"))] \
                if case.name == "power_iteration_until" else []
            params.append(pytest.param(case, wrt, id=p.id, marks=marks))
    return params


@pytest.mark.parametrize("case, wrt", _hessian_params())
def test_second_derivatives_in_rows_over_the_catalogue(case, wrt) -> None:
    args = case.draw(0)
    try:
        check_grads(case.fn, *args, wrt=list(wrt), order=2, modes=("batch",), seed=0)
    except NotBatchable as exc:
        assert any(gap in str(exc) for gap in KNOWN_SECOND_ORDER_GAPS), str(exc)


def _products_with_a_zero(x):
    return np.prod(x) + np.sum(np.prod(x, axis=0) ** 2) + np.sum(x.prod(axis=1, keepdims=True))


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "the Hessian's columns in one batched call of np.prod's gradient over an array holding "
    "an exact zero disagree with the jvp of the gradient (one column at a time), which is "
    "right: the batched path is wrong there"))
def test_the_hessian_of_products_with_a_zero_entry_in_one_call():
    x = np.random.default_rng(0).standard_normal((3, 4))
    x[1, 2] = 0.0
    g = s2sgrad.gradient(_products_with_a_zero)
    columns = np.stack([s2sgrad.jvp(g, (x,), (e.reshape(3, 4),))[1].ravel()
                        for e in np.eye(12)], axis=1)
    np.testing.assert_allclose(s2sgrad.hessian(_products_with_a_zero)(x).reshape(12, 12),
                               columns, rtol=1e-8, atol=1e-8)
