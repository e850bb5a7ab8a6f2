"""The code generated for loops reads like a hand-written reverse sweep: a loop that no
other loop holds pushes what its adjoint reads onto a list of its own, where the values it
pushes are made (``_steps.append((i, h))``), and its adjoint walks that list backwards
(``for i, h in reversed(_steps)``) with no trip counter and nothing popped; the copies that
carry a value from one iteration to the next are gone from both.

Each shape of loop is checked against finite differences (reverse and forward mode, and
second order), and its generated code is read for what should and should not be there.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

rng = np.random.default_rng(3)
X = rng.standard_normal(5)
W = 0.5 * rng.standard_normal((3, 3))
XS = rng.standard_normal((4, 3))
COEFFS = [float(c) for c in rng.standard_normal(6)]


def pair(f, *args, wrt=0):
    compiled = s2sgrad.grad(f).compiled_for((wrt,) if isinstance(wrt, int) else wrt, args)
    return compiled.forward_source, compiled.adjoint_source


def horner(x, coeffs):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def rnn(w, xs):
    h = np.zeros(w.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + xs[t])
    return np.sum(h * h)


def while_loop(x):
    k = 0
    s = x
    while k < 4:
        s = np.sin(s) + 0.5 * s
        k = k + 1
    return np.sum(s)


def with_break(x):
    s = x
    for k in range(10):
        s = s * 0.9 + np.cos(s)
        if k >= 3:
            break
    return np.sum(s * s)


def with_continue(x):
    s = 0.0
    for k in range(5):
        if k % 2 == 0:
            continue
        s = s + np.sum(np.tanh(x * k))
    return s


def nested(x):
    s = x
    for i in range(3):
        for j in range(2):
            s = np.sin(s) * (i + j + 1.0)
    return np.sum(s)


def loop_in_branch(x, flag):
    s = x
    if flag:
        for k in range(3):
            s = s * np.cos(s)
    return np.sum(s)


def two_loops(x):
    s = x
    for k in range(3):
        s = np.tanh(s) + k
    for k in range(2):
        s = s * s * 0.5
    return np.sum(s)


def break_before_carry(x):
    s = x
    for k in range(6):
        t = s * 0.8 + 0.1
        if k == 3:
            break  # leaves with s as it was, not t
        s = t
    return np.sum(s * s)


def continue_before_carry(x):
    s = x
    for k in range(5):
        t = np.sin(s) + 0.1
        if k % 2 == 1:
            continue  # the next iteration starts from s, not t
        s = t
    return np.sum(s)


def walrus_while(x):
    s = x
    while (y := np.sum(s) * 0.5) > 0.3:
        s = s * 0.5 + y * 0.01
    return np.sum(s)


def walrus_carried(x):
    s = x
    while np.sum(y := s * 0.7) > 1.0:  # y made before the test that leaves the loop
        s = y
    return np.sum(s * s)


@s2sgrad.grad
def decorated(x):
    y = 1.0
    for v in x:
        y = y * np.cos(v)
    return y


def step(h, w, x):
    return np.tanh(w @ h + x)


def through_a_helper(w, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = step(h, w, xs[t])
    return np.sum(h)


CASES = [
    (horner, (0.7, COEFFS)), (rnn, (W, XS)), (while_loop, (X,)), (with_break, (X,)),
    (with_continue, (X,)), (nested, (X,)), (loop_in_branch, (X, True)),
    (loop_in_branch, (X, False)), (two_loops, (X,)), (decorated, (X,)),
    (through_a_helper, (W, XS)), (break_before_carry, (X,)), (continue_before_carry, (X,)),
    (walrus_while, (np.abs(X) + 1.0,)), (walrus_carried, (np.abs(X) + 1.0,)),
]


@pytest.mark.parametrize("f, args", CASES, ids=lambda a: getattr(a, "__name__", ""))
def test_gradient(f, args):
    check_grads(f, *args, wrt=0, modes=("rev", "fwd"))
    check_grads(f, *args, wrt=0, modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("f, args", [
    (horner, (0.7, COEFFS)), (rnn, (W, XS)), (two_loops, (X,)), (decorated, (X,)),
    (through_a_helper, (W, XS)), (break_before_carry, (X,)), (continue_before_carry, (X,)),
    (walrus_while, (np.abs(X) + 1.0,)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_a_top_level_loop_walks_its_own_list_backwards(f, args):
    forward, adjoint = pair(f, *args)
    assert "reversed(_steps" in adjoint, adjoint
    for bookkeeping in ("_trips", ".pop()", "list(_stack)", "_stack"):
        assert bookkeeping not in forward + adjoint, (bookkeeping, forward, adjoint)


@pytest.mark.parametrize("f, args, sides", [
    (horner, (0.7, COEFFS), (0, 1)),
    # the forward pushes the state before and after the step, so one name cannot hold both
    (rnn, (W, XS), (1,)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_no_copies_carry_values_between_iterations(f, args, sides):
    pair_ = pair(f, *args)
    for source in (pair_[k] for k in sides):
        body = source.split("\n    for ", 1)[1]
        copies = re.findall(r"^        (\w+) = (\w+)$", body, re.MULTILINE)  # in the loop
        assert not copies, (copies, source)


def test_the_push_comes_where_its_values_are_made():
    forward, _ = pair(horner, 0.7, COEFFS, wrt=(0, 1))
    body = forward.split("\n    for ", 1)[1].splitlines()
    statements = [line.strip() for line in body if line.strip() and not
                  line.strip().startswith("#")]
    assert statements[0].startswith("_i in") and statements[1].startswith(
        "_steps.append(("), statements


def test_a_nested_loop_keeps_the_shared_stack():
    _, adjoint = pair(nested, X)
    assert "reversed(_steps" in adjoint  # the outer loop
    assert "_stack.pop()" in adjoint or "range(_trips" in adjoint  # the inner one


def test_a_backward_run_twice():
    _, pullback = s2sgrad.vjp(rnn, W, XS)
    first, second = pullback(1.0), pullback(1.0)
    np.testing.assert_array_equal(first[0], second[0])


def test_on_tensors():
    f = s2sgrad.grad(rnn)
    w = s2sgrad.tensor(W.copy(), requires_grad=True)
    f(w, XS).backward()
    expected = s2sgrad.gradient(rnn)(W, XS)
    np.testing.assert_allclose(np.asarray(w.grad.numpy() if hasattr(w.grad, "numpy")
                                          else w.grad), expected)


# --- a number that a loop turns into an element of an array: rank 0, not unknown --------------

def dot_loop(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * w[i]
    return s


def horner_of_arrays(x, coeffs):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


@pytest.mark.parametrize("f, args", [
    (dot_loop, (X, X[::-1].copy())), (horner_of_arrays, (np.array(0.7), np.array(COEFFS))),
    (horner_of_arrays, (0.7, np.array(COEFFS))),
], ids=lambda a: getattr(a, "__name__", ""))
def test_a_number_joined_with_an_element(f, args):
    check_grads(f, *args, modes=("rev", "fwd"))
    check_grads(f, *args, wrt=0, modes=("rev", "fwd"), order=2)
    _, adjoint = pair(f, *args, wrt=(0, 1))
    assert "unbroadcast" not in adjoint and "_shape" not in adjoint, adjoint


def test_a_number_joined_with_an_element_on_tensors():
    f = s2sgrad.grad(horner_of_arrays)
    x = s2sgrad.tensor(0.7, requires_grad=True)
    c = s2sgrad.tensor(np.array(COEFFS), requires_grad=True)
    f(x, c).backward()
    gx, gc = s2sgrad.gradient(horner_of_arrays, wrt=(0, 1))(np.array(0.7), np.array(COEFFS))
    np.testing.assert_allclose(float(np.asarray(x.grad.numpy() if hasattr(x.grad, "numpy")
                                                else x.grad)), gx)
    np.testing.assert_allclose(np.asarray(c.grad.numpy() if hasattr(c.grad, "numpy")
                                          else c.grad), gc)
