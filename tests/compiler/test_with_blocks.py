"""``with`` blocks inside differentiated functions.

Managers that leave values unchanged (``np.errstate``, ``warnings.catch_warnings``,
``contextlib.nullcontext``) run around the body in the forward and around the body's adjoint
(and tangent): NumPy's error state holds for the derivative's arithmetic too. ``no_grad()``
(and ``set_grad_enabled(False)``, ``inference_mode()``) make the values its block computes
carry no gradient, a stop-gradient, with ``enable_grad()`` inside it letting them carry one
again, as PyTorch does. Checked as users write them (decorated and on Tensors, through
gradient and value_and_grad, in nested functions, loops and branches, with a return inside,
forward mode and second order) against finite differences; a stopped value against the
same function given that value as a constant. Other managers, ``as`` names, settings that
are not constants, and a break or early return out of the block are refused at the line.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads, numeric_gradient
from tests.located import assert_points_at

rng = np.random.default_rng(17)
X = rng.uniform(0.3, 1.6, 4)
W = rng.standard_normal((4, 3))


# --- managers that leave values unchanged -------------------------------------------------


def errstate_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x) * x
    return np.sum(y ** 2)


def errstate_return(x):
    h = np.tanh(x)
    with np.errstate(all="ignore"):
        return np.sum(np.sqrt(h + 1.0) / x)


def two_managers(x, w):
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = np.exp(x) @ w
    return np.sum(np.sin(h))


def nested_blocks(x):
    with contextlib.nullcontext(), np.errstate(divide="ignore"):
        s = 0.0
        for i in range(3):
            if i % 2 == 0:
                s = s + np.sum(np.log(x) * i)
            else:
                s = s + np.sum(x ** 2)
    return s


def in_loop_and_branch(x):
    s = 0.0
    for i in range(3):
        if i > 0:
            with np.errstate(invalid="ignore"):
                s = s + np.sum(np.sqrt(x) * i)
        else:
            s = s + np.sum(x)
    return s


def in_nested_function(x, w):
    def layer(v):
        with np.errstate(all="ignore"):
            return np.tanh(v @ w)
    return np.sum(layer(x) ** 2)


def under_branch_return(x):
    if np.sum(x) > 0:
        with np.errstate(divide="ignore"):
            return np.sum(1.0 / x)
    return np.sum(x)


PLAIN = {
    "errstate": (errstate_log, (X,)),
    "return inside": (errstate_return, (X,)),
    "two managers": (two_managers, (X, W)),
    "nested blocks": (nested_blocks, (X,)),
    "in loop and branch": (in_loop_and_branch, (X,)),
    "nested function": (in_nested_function, (X, W)),
    "return in a branch": (under_branch_return, (X,)),
}


@pytest.mark.parametrize("name", list(PLAIN))
def test_managers_that_leave_values_differentiate(name):
    fn, args = PLAIN[name]
    before = [a.copy() for a in args]
    check_grads(fn, *args, modes=("rev", "fwd"))
    for a, b in zip(args, before, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["errstate", "two managers", "nested blocks",
                                  "nested function"])
def test_managers_at_second_order(name):
    fn, args = PLAIN[name]
    check_grads(fn, *args, order=2)


def test_the_adjoint_runs_under_the_error_state():
    def log_sum(x):
        with np.errstate(divide="ignore"):
            return np.sum(np.log(x))

    x = np.array([0.0, 1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would raise
        value, g = s2sgrad.value_and_grad(log_sum)(x)
        tangent = s2sgrad.jvp(log_sum, (x,), (np.ones(3),))[1]
    assert value == -np.inf and g[0] == np.inf and tangent == np.inf
    np.testing.assert_allclose(g[1:], [1.0, 0.5])
    assert "with np.errstate(divide='ignore'):" in s2sgrad.grad(log_sum).adjoint_source


def test_managers_on_the_tensor_path():
    @s2sgrad.grad
    def loss(x, w):
        with np.errstate(all="ignore"):
            h = np.tanh(x @ w)
        return np.sum(h ** 2)

    x = s2sgrad.tensor(X, requires_grad=True)
    w = s2sgrad.tensor(W, requires_grad=True)
    loss(x, w).backward()
    gx, gw = s2sgrad.gradient(loss.fn, wrt=(0, 1))(X, W)
    np.testing.assert_allclose(x.grad.numpy(), gx)
    np.testing.assert_allclose(w.grad.numpy(), gw)
    np.testing.assert_allclose(gx, numeric_gradient(loss.fn, [X, W], 0), rtol=1e-6)


# --- contextlib.suppress: the try/except it stands for -----------------------------------


def suppressed(x, table):
    y = np.sin(x)
    with contextlib.suppress(KeyError, TypeError):
        y = x * table["scale"]
    return np.sum(y ** 2)


def suppressed_partway(x, table):
    with contextlib.suppress(KeyError):
        a = x * 2.0
        y = a * table["scale"]
    return np.sum(y)  # <- refused


@pytest.mark.parametrize("table", [{"scale": 1.5}, {}], ids=["body", "suppressed"])
def test_suppress_is_a_try_on_both_paths(table):
    check_grads(suppressed, X, table, wrt=0, modes=("rev", "fwd"))
    check_grads(suppressed, X, table, wrt=0, order=2)


def test_suppress_refuses_a_partial_block():
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(suppressed_partway)(X, {})
    assert "'y' is changed in the try block" in info.value.reason
    assert_points_at(info.value, suppressed_partway, "np.sum")


# --- no_grad: a stop-gradient -------------------------------------------------------------


def stopped_scale(x):
    a = x * 2.0
    with s2sgrad.no_grad():
        scale = np.sum(a ** 2)
    return np.sum(np.sin(a) * scale)


def stopped_scale_given(x, scale):  # the same function, the stopped value a constant
    a = x * 2.0
    return np.sum(np.sin(a) * scale)


def regrad_inside(x):
    a = x * 2.0
    with s2sgrad.no_grad():
        scale = np.sum(a ** 2)
        with s2sgrad.enable_grad():
            b = np.cos(a)
    return np.sum(np.sin(a) * scale) + np.sum(b * x)


def regrad_inside_given(x, scale):
    a = x * 2.0
    return np.sum(np.sin(a) * scale) + np.sum(np.cos(a) * x)


def stopped_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x ** 2) * (i + 1)
        with s2sgrad.set_grad_enabled(False):
            norm = np.sqrt(s)
        s = s / norm
    return s


def stopped_in_loop_given(x, norms):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x ** 2) * (i + 1)
        s = s / norms[i]
    return s


def loop_norms(x):
    s, norms = 0.0, []
    for i in range(3):
        s = s + np.sum(x ** 2) * (i + 1)
        norms.append(np.sqrt(s))
        s = s / norms[-1]
    return norms


def inference_block(x):
    with s2sgrad.inference_mode():
        scale = np.max(np.abs(x))
    return np.sum(x ** 3) / scale


def inference_block_given(x, scale):
    return np.sum(x ** 3) / scale


STOPPED = {
    "no_grad": (stopped_scale, stopped_scale_given, lambda x: np.sum((2 * x) ** 2)),
    "enable_grad inside": (regrad_inside, regrad_inside_given,
                           lambda x: np.sum((2 * x) ** 2)),
    "set_grad_enabled in a loop": (stopped_in_loop, stopped_in_loop_given, loop_norms),
    "inference_mode": (inference_block, inference_block_given,
                       lambda x: np.max(np.abs(x))),
}


@pytest.mark.parametrize("name", list(STOPPED))
def test_no_grad_values_carry_no_gradient(name):
    fn, given, stopped = STOPPED[name]
    constant = stopped(X)
    before = X.copy()
    value, g = s2sgrad.value_and_grad(fn)(X)
    np.testing.assert_array_equal(X, before)
    assert value == fn(X) == given(X, constant)
    np.testing.assert_allclose(g, numeric_gradient(given, [X, constant], 0), rtol=1e-6)
    v = rng.standard_normal(X.shape)
    _, tangent = s2sgrad.jvp(fn, (X,), (v,))
    np.testing.assert_allclose(tangent, g @ v, rtol=1e-10)


@pytest.mark.parametrize("name", ["no_grad", "enable_grad inside", "inference_mode"])
def test_no_grad_at_second_order(name):
    """The gradient's own derivative holds the stopped value constant too."""
    fn, given, stopped = STOPPED[name]
    constant = stopped(X)
    hessian = s2sgrad.hessian(fn)(X)
    expected = np.array([numeric_gradient(
        lambda x, i=i: s2sgrad.gradient(given)(x, constant)[i], [X], 0)
        for i in range(len(X))])
    np.testing.assert_allclose(hessian, expected, rtol=1e-6, atol=1e-8)


def test_no_grad_on_the_tensor_path():
    @s2sgrad.grad
    def loss(x):
        with s2sgrad.no_grad():
            scale = np.sum(x ** 2)
        return np.sum(x * scale)

    x = s2sgrad.tensor(X, requires_grad=True)
    out = loss(x)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(X.shape, np.sum(X ** 2)))
    assert s2sgrad.is_grad_enabled()  # the block's mode does not outlive it


# --- what stays refused -------------------------------------------------------------------


def unknown_manager(x):
    with open(__file__):  # <- refused
        y = x * 2.0
    return np.sum(y)


def suppressed_return(x, d):
    with contextlib.suppress(KeyError):
        return np.sum(x * d["k"])  # <- refused
    return np.sum(x)


def bound_as(x):
    with np.errstate(all="ignore") as state:  # <- refused
        y = x * len(str(state))
    return np.sum(y)


def setting_from_a_variable(x):
    mode = "ignore"
    with np.errstate(all=mode):  # <- refused
        y = np.log(x)
    return np.sum(y)


def manager_in_a_variable(x):
    state = np.errstate(all="ignore")
    with state:  # <- refused
        y = np.log(x)
    return np.sum(y)


def break_inside(x):
    s = 0.0
    for i in range(3):
        with np.errstate(all="ignore"):
            s = s + np.sum(x * i)
            if s > 1.0:
                break  # <- refused
    return s


def return_before_the_end(x):
    with np.errstate(all="ignore"):
        if np.sum(x) > 0:
            return np.sum(x)  # <- refused
        y = x * 2.0
    return np.sum(y)


def update_in_place_under_no_grad(x):
    y = x * 1.0
    with s2sgrad.no_grad():
        y += 1.0  # <- refused
    return np.sum(y * x)


def write_under_no_grad(x):
    y = x * 1.0
    with s2sgrad.no_grad():
        y[0] = 1.0  # <- refused
    return np.sum(y * x)


@pytest.mark.parametrize("fn,token,words", [
    (unknown_manager, "open(", "the context manager open(...) is not known"),
    (suppressed_return, "return", "'return' inside a 'with contextlib.suppress(...)'"),
    (bound_as, "state:", "'with ... as name' is not supported"),
    (setting_from_a_variable, "np.errstate", "must be constants"),
    (manager_in_a_variable, "state", "only on a call of a known context manager"),
    (break_inside, "break", "'break' inside a 'with' block"),
    (return_before_the_end, "return", "supported only as its last statement"),
    (update_in_place_under_no_grad, "y +=", "update in place, inside no_grad()"),
    (write_under_no_grad, "y[0]", "update in place, inside no_grad()"),
], ids=lambda v: getattr(v, "__name__", None))
def test_with_blocks_refused_at_their_line(fn, token, words):
    args = (X, {}) if fn is suppressed_return else (X,)
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(*args)
    assert words in info.value.reason, info.value.reason
    assert_points_at(info.value, fn, token)
