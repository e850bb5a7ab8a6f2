"""Nested generator functions and generator expressions inside differentiated functions.

A nested def that yields is the function that builds the list of what it yields, inlined
where it is called; that is Python's meaning where each call is consumed at once (sum,
list, a comprehension, a for loop that changes nothing the generator reads and does not
break). Checked as users write them (over an array, over a range, with a branch, a bare
return, consumed by sum, list, np.array(list(...)), a comprehension and a for loop, read by
a nested function, decorated and on Tensors, forward mode and second order) against finite
differences. A generator used any other way is refused at its line, as are ``x = yield v``,
``yield from`` and a return value. A nested function with a for loop in it, called, is
checked here too (its loop variable is a local of the function, renamed).
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(29)
X = rng.uniform(0.2, 1.3, 4)


def summed(x):
    def squares():
        for v in x:
            yield v ** 2
    return sum(squares())


def looped_over(x):
    def scaled(n):
        for i in range(n):
            if i % 2 == 0:
                yield x[i] * (i + 1.0)
            else:
                yield np.sin(x[i])
    s = 0.0
    for v in scaled(len(x)):
        s = s + np.tanh(v)
    return s


def listed(x):
    def pieces(k):
        if k == 0:
            return  # ends the generator
        for i in range(k):
            yield np.exp(-x[i])
    return np.sum(np.array(list(pieces(3)))) + np.sum(np.stack(list(pieces(2)))) + \
        sum(pieces(0))


def in_comprehension(x):
    def halves():
        for v in x:
            yield v * 0.5
    return np.sum(np.array([np.cos(h) for h in halves()]))


def called_twice_with_state(x):
    total = np.sum(x)

    def steps(n):
        h = x
        for _ in range(n):
            h = np.tanh(h * total)
            yield h
    return sum(np.sum(h) for h in steps(3)) + sum(np.sum(h) for h in steps(1))


def nested_function_with_a_loop(x):
    def build(n):
        out = []
        for i in range(n):
            out.append(x[i] * i)
        return out
    return sum(np.sin(v) for v in build(3))


def generator_expressions(x):
    return np.sum(np.array(list(v ** 2 for v in x))) + sum(  # noqa: C400
        np.tanh(v) for v in x if v > 0.5)


CASES = [summed, looped_over, listed, in_comprehension, called_twice_with_state,
         nested_function_with_a_loop, generator_expressions]


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_generators_differentiate(fn):
    before = X.copy()
    check_grads(fn, X, modes=("rev", "fwd"))
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("fn", [summed, looped_over, called_twice_with_state],
                         ids=lambda f: f.__name__)
def test_generators_at_second_order(fn):
    check_grads(fn, X, order=2)


def test_generators_on_the_tensor_path():
    @s2sgrad.grad
    def loss(x):
        def terms():
            for i in range(len(x)):
                yield x[i] ** 3
        return sum(terms())

    x = s2sgrad.tensor(X, requires_grad=True)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * X ** 2)


# --- what stays refused -------------------------------------------------------------------


def held_in_a_name(x):
    def squares():
        for v in x:
            yield v ** 2
    g = squares()  # <- refused
    return sum(g)


def loop_changes_what_it_reads(x):
    scale = 1.0

    def scaled():
        for v in x:
            yield v * scale
    s = 0.0
    for v in scaled():
        scale = scale * 2.0  # <- refused
        s = s + v
    return s


def loop_breaks(x):
    def items():
        for v in x:  # noqa: UP028
            yield v
    s = 0.0
    for v in items():
        s = s + v
        if s > 1.0:
            break  # <- refused
    return s


def sends(x):
    def echo():
        got = yield x  # <- refused
        yield got
    return sum(echo())


def yields_from(x):
    def inner():
        yield from x  # <- refused
    return sum(inner())


def returns_a_value(x):
    def items():
        yield x[0]
        return x[1]  # <- refused
    return sum(items())


def differentiated_generator(x):
    yield x * 2.0  # <- refused


@pytest.mark.parametrize("fn,token,words", [
    (held_in_a_name, "squares", "is followed only where a call of it is consumed at once"),
    (loop_changes_what_it_reads, "scale =", "assigns 'scale', which the generator reads"),
    (loop_breaks, "break", "'break' in a loop over the generator"),
    (sends, "yield", "generators ('yield') are not supported here"),
    (yields_from, "yield", "generators ('yield from')"),
    (returns_a_value, "return", "a generator's return value"),
    (differentiated_generator, "yield", "generators ('yield') are not supported here"),
], ids=lambda v: getattr(v, "__name__", None))
def test_generators_refused_at_their_line(fn, token, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(X)
    assert words in info.value.reason, info.value.reason
    assert_points_at(info.value, fn, token)
