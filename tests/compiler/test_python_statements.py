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

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import numeric_gradient
from tests.arguments import checked
from tests.located import assert_points_at

rng = np.random.default_rng(7)
X = rng.uniform(0.2, 0.9, 4)
M = rng.uniform(0.2, 0.9, (3, 4))


def refused_at(fn, token, words, *args):
    """``fn`` is refused, at its line marked ``# <- refused``, under ``token``."""
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(*(args or (X,)))
    assert words in info.value.reason, info.value.reason
    assert_points_at(info.value, fn, token, __file__)


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


# --- del -----------------------------------------------------------------------------------


def del_a_name(x):
    h = np.tanh(x) * 2.0
    s = np.sum(h ** 2)
    del h
    return s * x[0]


def del_in_a_loop(x):
    s = 0.0
    for i in range(len(x)):
        t = np.sin(x[i]) * x[i]
        s = s + t * t
        del t
    return s


def del_then_assign_again(x, flag):
    h = x * 3.0
    total = np.sum(h)
    if flag > 0:
        del h
        h = np.exp(x)
    return total * np.sum(h)


def del_list_items(x):
    xs = [x[0], x[1] * 2.0, x[2] ** 2, np.sin(x[3])]
    del xs[1]
    del xs[-1]
    return xs[0] * xs[1] + len(xs)


def del_dict_items(x):
    d = {"a": x[0], "b": x[1] ** 2, "c": np.cos(x[2])}
    del d["b"]
    return d["a"] * d["c"] + len(d)


def del_several(x):
    xs = [x[0], x[1], x[2]]
    d = {"p": x[3], "q": x[0] * x[1]}
    h = x * 2.0
    del xs[0], d["p"], h
    return xs[0] * xs[1] * d["q"]


def sliding_window(x):
    window = []
    s = 0.0
    for v in x:
        window.append(v * 2.0)
        if len(window) > 2:
            del window[0]
        s = s + window[0] * window[-1]
    return s


def del_in_a_helper(x):
    def energy(v):
        w = v * 3.0
        r = np.sum(w * v)
        del w
        parts = [r, np.sum(v)]
        del parts[0]
        return r * parts[0]
    return energy(x) + energy(x * 2.0)


DELETES = {
    "a name": (del_a_name, (X,)),
    "in a loop": (del_in_a_loop, (X,)),
    "then assigned again": (del_then_assign_again, (X, 1.0)),
    "then assigned again, not taken": (del_then_assign_again, (X, -1.0)),
    "list items": (del_list_items, (X,)),
    "dict items": (del_dict_items, (X,)),
    "several targets": (del_several, (X,)),
    "a sliding window": (sliding_window, (X,)),
    "in a nested function": (del_in_a_helper, (X,)),
}


@pytest.mark.parametrize("name", list(DELETES))
def test_del(name):
    fn, args = DELETES[name]
    checked(fn, *args)


def test_del_decorated_on_tensors():
    x = s2sgrad.tensor(X, requires_grad=True)
    out = s2sgrad.grad(sliding_window)(x)
    out.backward()
    assert out.item() == pytest.approx(sliding_window(X), rel=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), numeric_gradient(sliding_window, [X], 0),
                               rtol=1e-6, atol=1e-8)


def read_after_del(x):
    h = x * 2.0
    del h
    return np.sum(h)  # noqa: F821  # <- refused


def read_after_del_in_a_branch(x):
    h = x * 2.0
    if x[0] > 0:
        del h
    return np.sum(h)  # <- refused


def read_after_del_in_a_loop(x):
    h = x * 2.0
    s = 0.0
    for _ in range(2):
        s = s + np.sum(h)  # <- refused
        del h
    return s


def del_before_assignment(x):
    if x[0] > 0:
        h = x * 2.0
    else:
        del h  # <- refused
    return np.sum(x)


def del_of_a_slice(x):
    xs = [x[0], x[1], x[2]]
    del xs[0:2]  # <- refused
    return xs[0]


def del_of_an_array_element(x):
    y = x * 1.0
    del y[0]  # <- refused
    return np.sum(y)


DEL_REFUSED = [
    (read_after_del, "h", "is read after `del h`"),
    (read_after_del_in_a_branch, "h", "is read after `del h`"),
    (read_after_del_in_a_loop, "h", "is read after `del h`"),
    (del_before_assignment, "h", "where 'h' is not assigned"),
    (del_of_a_slice, "xs[0:2]", "of a slice of 'xs'"),
    (del_of_an_array_element, "y[0]", "which is an array"),
]


@pytest.mark.parametrize("fn, token, words", DEL_REFUSED, ids=[c[0].__name__ for c in DEL_REFUSED])
def test_del_refused_at_the_line(fn, token, words):
    refused_at(fn, token, words)


# --- nonlocal ------------------------------------------------------------------------------


def nonlocal_accumulator(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    add(x[0])
    add(x[1] * x[2])
    return total


def nonlocal_in_a_loop(x):
    total = 0.0
    count = 0

    def add(v):
        nonlocal total, count
        total = total + v * v
        count += 1
    for i in range(len(x)):
        add(x[i])
        if total > 0.5:
            add(x[i] * 0.5)
    return total * count


def nonlocal_of_an_array(x):
    h = x * 1.0

    def step():
        nonlocal h
        h = np.tanh(h) + x
    k = 0
    while k < 3:
        step()
        k += 1
    return np.sum(h ** 2)


def nonlocal_two_levels(x):
    def product(v):
        acc = v[0]

        def times(w):
            nonlocal acc
            acc = acc * w
        for w in v[1:]:
            times(w)
        return acc
    return product(x) + product(x * 2.0)


def closure_called_later(x):
    scale = x[0]

    def scaled(v):
        return v * scale
    first = scaled(x[1])
    scale = scale ** 2  # a call reads the variable as it is when called, as Python does
    return first + scaled(x[2])


def nonlocal_reads_and_rebinds(x):
    state = x[0]

    def advance(v):
        nonlocal state
        old = state
        state = np.sin(state) + v
        return old
    a = advance(x[1])
    b = advance(x[2])
    return a * b + state


NONLOCAL = {
    "an accumulator": (nonlocal_accumulator, (X,)),
    "in a loop with a branch": (nonlocal_in_a_loop, (X,)),
    "an array in a while loop": (nonlocal_of_an_array, (X,)),
    "two levels of functions": (nonlocal_two_levels, (X,)),
    "a closure called later": (closure_called_later, (X,)),
    "reads and rebinds": (nonlocal_reads_and_rebinds, (X,)),
}


@pytest.mark.parametrize("name", list(NONLOCAL))
def test_nonlocal(name):
    fn, args = NONLOCAL[name]
    checked(fn, *args)


def test_nonlocal_decorated_on_tensors():
    x = s2sgrad.tensor(X, requires_grad=True)
    out = s2sgrad.grad(nonlocal_in_a_loop)(x)
    out.backward()
    assert out.item() == pytest.approx(nonlocal_in_a_loop(X), rel=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), numeric_gradient(nonlocal_in_a_loop, [X], 0),
                               rtol=1e-6, atol=1e-8)


def nonlocal_factory():
    total = 0.0

    def accumulate(x):
        nonlocal total  # <- refused
        total = total + np.sum(x)
        return total
    return accumulate


def test_nonlocal_of_the_differentiated_function_itself_is_refused():
    refused_at(nonlocal_factory(), "nonlocal", "'nonlocal' in the differentiated function")
