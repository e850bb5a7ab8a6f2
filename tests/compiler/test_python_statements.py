"""Statements of Python's own that a differentiated function may hold: the ``else`` of a
``for`` or ``while`` loop, ``del``, and ``nonlocal`` in nested functions.

Each construct as users write it: with ``break`` in branches, in nested loops, over ranges,
arrays and lists, in a loop whose trip count depends on the values, inside a nested
function, decorated with ``@grad`` and called on Tensors, and at second order. Every
function is checked against central finite differences (reverse and forward mode), its
compiled value against the plain call, and its arguments left as they were; what stays
refused is refused at the user's line.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads, numeric_gradient
from tests.arguments import assert_unchanged

rng = np.random.default_rng(7)
X = rng.uniform(0.2, 0.9, 4)
M = rng.uniform(0.2, 0.9, (3, 4))


def checked(fn, *args, order=2):
    """The gradients of ``fn`` against finite differences, first order in both modes and
    second order where asked; its value as the plain call's; its arguments unchanged."""
    before = copy.deepcopy(args)
    expected = fn(*copy.deepcopy(args))
    value, _ = s2sgrad.value_and_grad(fn)(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    assert_unchanged(args, before, fn.__name__)
    check_grads(fn, *args, modes=("rev", "fwd"))
    if order == 2:
        check_grads(fn, *args, order=2, modes=("rev",))
    assert_unchanged(args, before, fn.__name__)


# --- for ... else and while ... else -------------------------------------------------------


def for_else_breaks(x, limit):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] ** 2
        if s > limit:
            break
    else:
        s = s * 3.0
    return s


def for_else_without_break(x):
    s = x[0]
    for v in x[1:]:
        s = s * v
    else:  # noqa: PLW0120
        s = np.sin(s)
    return s


def for_else_over_rows(m, limit):
    total = 0.0
    for row in m:
        if np.sum(row) > limit:
            total = total + np.sum(np.tanh(row))
            break
        total = total + np.sum(row ** 2)
    else:
        total = -total
    return total


def for_else_over_a_list(x, limit):
    parts = [x[0] * 2.0, np.sin(x[1]), x[2] ** 2]
    found = 0.0
    for k, p in enumerate(parts):
        if p > limit:
            found = p * (k + 1)
            break
    else:
        found = parts[-1] - parts[0]
    return found + x[3]


def for_else_over_zip(x, m):
    acc = 0.0
    for a, row in zip(x, m):
        acc = acc + a * np.sum(row)
        if acc > 50.0:
            break
    else:
        acc = acc + np.sum(m[-1] ** 2)
    return acc


def while_else_by_value(x):
    s = 0.0
    k = 0
    while s < 1.2:  # the trip count depends on the values
        s = s + x[k % len(x)] ** 2
        k += 1
        if k > 8:
            break
    else:
        s = s * x[0]
    return s


def while_else_without_break(x):
    h = x * 1.0
    n = 0
    while n < 3:
        h = np.tanh(h) + x
        n += 1
    else:  # noqa: PLW0120
        h = h * 2.0
    return np.sum(h)


def search(x, target):
    """The classic search loop: the inner else runs where nothing matched."""
    total = 0.0
    for i in range(len(x)):
        for j in range(len(x)):
            if x[i] * x[j] > target:
                total = total + x[i] * x[j]
                break
        else:
            total = total - x[i]
            continue
        total = total * 1.5
    return total


def inner_else_breaks_outer(x, target):
    s = 1.0
    for i in range(3):
        for v in x:
            s = s * (1.0 + 0.1 * v)
            if s > target:
                break
        else:
            s = s + x[i]
            break
        s = np.sqrt(s)
    return s


def else_in_a_helper(x, limit):
    def first_over(v, limit):
        for i in range(len(v)):
            if v[i] > limit:
                found = v[i]
                break
        else:
            found = np.sum(v)
        return found
    s = 0.0
    for k in range(2):
        s = s + first_over(x * (k + 1), limit)
    return s


def else_in_a_branch(x, flag):
    s = 0.0
    if flag > 0:
        for v in x:
            s = s + np.exp(v)
            if s > 100.0:
                break
        else:
            s = np.log(s)
    else:
        s = np.sum(x)
    return s


ELSE = {
    "for else, break taken": (for_else_breaks, (X, 0.3)),
    "for else, break not taken": (for_else_breaks, (X, 50.0)),
    "for else without break": (for_else_without_break, (X,)),
    "over rows, break taken": (for_else_over_rows, (M, 1.0)),
    "over rows, no break": (for_else_over_rows, (M, 9.0)),
    "over a list, break taken": (for_else_over_a_list, (X, 0.1)),
    "over a list, no break": (for_else_over_a_list, (X, 9.0)),
    "over zip": (for_else_over_zip, (X[:3], M)),
    "while else by value": (while_else_by_value, (X,)),
    "while else, break taken": (while_else_by_value, (X * 0.01,)),
    "while else without break": (while_else_without_break, (X,)),
    "nested, search": (search, (X, 0.35)),
    "nested, inner else breaks the outer loop": (inner_else_breaks_outer, (X, 9.0)),
    "nested, inner loop breaks": (inner_else_breaks_outer, (X, 1.05)),
    "in a nested function": (else_in_a_helper, (X, 0.5)),
    "in a nested function, no break": (else_in_a_helper, (X, 9.0)),
    "in a branch": (else_in_a_branch, (X, 1.0)),
}


@pytest.mark.parametrize("name", list(ELSE))
def test_loop_else(name):
    fn, args = ELSE[name]
    checked(fn, *args)


def test_loop_else_paths_are_the_ones_python_takes():
    # the cases above take the path their names say: each value differs between the paths
    assert for_else_breaks(X, 0.3) != pytest.approx(3.0 * np.sum(X ** 2))
    assert for_else_breaks(X, 50.0) == pytest.approx(3.0 * np.sum(X ** 2))
    assert while_else_by_value(X * 0.01) == pytest.approx(np.sum((X * 0.01) ** 2) * 2
                                                           + (X[0] * 0.01) ** 2)


def test_loop_else_decorated_on_tensors():
    loss = s2sgrad.grad(for_else_breaks)
    for limit in (0.3, 50.0):
        x = s2sgrad.tensor(X, requires_grad=True)
        out = loss(x, limit)
        out.backward()
        assert out.item() == pytest.approx(for_else_breaks(X, limit), rel=1e-12)
        np.testing.assert_allclose(x.grad.numpy(),
                                   numeric_gradient(for_else_breaks, [X, limit], 0),
                                   rtol=1e-6, atol=1e-8)
