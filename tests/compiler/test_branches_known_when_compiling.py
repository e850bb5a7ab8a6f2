"""Ifs whose test has one value on every call of a compile: ``if ax:`` where ``ax`` is
None, ``if bias is None:`` where the call passes None or an array, ``if callback:`` where
a function is passed. The compile is specialised on those values, so only the block that
runs is written: the other one (a plot, a print, a check of an argument left at None) is
neither analysed nor compiled, and what it would need (a call on None, a library without
a rule) does not stop the function. Where the value may differ from one visit to the next
(a loop that assigns it, a nested function called with both), both blocks stay, as Python
runs them.

Each program is checked against central finite differences in both modes, its value
against the plain call, its arguments unchanged, and the generated code for the block
that does not run.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads
from tests.arguments import checked

rng = np.random.default_rng(5)
X = rng.uniform(-0.8, 0.9, 4)
B = rng.uniform(0.1, 0.5, 4)


def plot(ax, values, step):
    ax.plot(values)  # never runs in these calls: ax is None
    ax.set_title(f"step {step}")


def simulate(x, steps=3, ax=None):
    for t in range(steps):
        if ax:
            plot(ax, x, t)
        x = np.tanh(x) * 1.1 + 0.1 * x ** 2
    if ax:
        plot(ax, x, steps)
    return np.sum(x ** 2)


def affine(x, bias=None, scale=None):
    y = 2.0 * x
    if bias is not None:
        y = y + bias
    if scale is None:
        scale = 1.5
    else:
        y = y * np.sum(scale)
    return np.sum(np.sin(y)) * np.sum(scale)


def with_a_callback(x, callback=None):
    total = np.sum(x ** 3)
    if callback:
        total = total + callback(x)
    return total


def _quadratic(v):
    return np.sum(v ** 2) * 0.5


def early_return_on_none(x, weights=None):
    if weights is None:
        return np.sum(np.exp(x))
    return np.sum(weights * np.exp(x))


def debug_check(x, log=None):
    y = np.cumsum(x)
    if log is not None:
        log.append(np.linalg.eigvalsh(np.outer(y, y)))  # no gradient: never runs here
    return np.sum(y * x)


CASES = {
    "a plot in a loop, ax None": (simulate, (X,)),
    "bias and scale None": (affine, (X,)),
    "bias given, scale None": (affine, (X, B)),
    "both given": (affine, (X, B, B[:2])),
    "no callback": (with_a_callback, (X,)),
    "a callback": (with_a_callback, (X, _quadratic)),
    "an early return on None": (early_return_on_none, (X,)),
    "past the early return": (early_return_on_none, (X, B)),
    "a debug check left at None": (debug_check, (X,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_only_the_block_that_runs_is_compiled(name):
    fn, args = CASES[name]
    checked(fn, *args)


def test_the_block_that_does_not_run_is_not_in_the_generated_code():
    f = s2sgrad.grad(simulate)
    s2sgrad.gradient(f)(X)
    assert "plot" not in f.forward_source + f.adjoint_source
    g = s2sgrad.grad(affine)
    s2sgrad.gradient(g)(X)
    assert "bias" not in g.forward_source.split(":", 1)[1]  # (after the parameters)
    s2sgrad.gradient(g)(X, B)
    assert "y = y + bias" in g.forward_source and "is None" not in g.forward_source


def test_each_call_compiles_for_its_own_values():
    g = s2sgrad.gradient(affine)
    for args in CASES["bias and scale None"][1], CASES["bias given, scale None"][1]:
        np.testing.assert_allclose(g(*args), s2sgrad.gradient(affine)(*args))
    check_grads(affine, X, B, modes=("rev", "fwd"))
    check_grads(affine, X, modes=("rev", "fwd"))


def test_decorated_on_a_tensor():
    f = s2sgrad.grad(simulate)
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = f(x)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(simulate)(X), rtol=1e-12)
    np.testing.assert_allclose(float(out.detach().numpy()), simulate(X), rtol=1e-12)


# --- both blocks stay where the test's value may change between visits --------------------


def previous_in_a_loop(x):
    prev = None
    total = 0.0
    for i in range(len(x)):
        if prev is not None:
            total = total + prev * x[i]
        prev = x[i] ** 2
    return total


def a_helper_called_with_both(x, b):
    def shift(v, by=None):
        if by is None:
            return v * 2.0
        return v + by
    return np.sum(shift(x) * shift(x, b))


def set_in_one_branch(x, flag):
    w = None
    if flag > 0:
        w = x * 3.0
    if w is None:
        return np.sum(x ** 2)
    return np.sum(w * x)


@pytest.mark.parametrize("fn, args", [
    (previous_in_a_loop, (X,)), (a_helper_called_with_both, (X, B)),
    (set_in_one_branch, (X, 1.0)), (set_in_one_branch, (X, -1.0))],
    ids=["assigned in the loop", "a helper called with both", "set in one branch, taken",
         "set in one branch, not taken"])
def test_a_test_whose_value_may_change_keeps_both_blocks(fn, args):
    checked(fn, *args)
