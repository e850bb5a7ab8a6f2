"""Saved state: the forward keeps what the adjoint reads, per loop step a constant number of
arrays, never a tape of every operation.

``specialiser(fn).compiled(wrt, args, {}).forward(*args)`` returns ``(out, saved)``; these
tests count the distinct arrays reachable from ``saved`` (through tuples and lists) and the
distinct buffers they own, for loops of T steps at several T. Run with ``pytest -s`` to see
the numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from s2sgrad.compiler.function import specialiser

# --- functions measured ---------------------------------------------------------------------


def rnn_steps(w, u, xs, h0):
    h = h0
    for x in xs:
        a = w @ h
        b = u @ x
        z = a + b + 0.1
        h = np.tanh(z)
    return np.sum(h * h)


TEMPORARIES_PER_STEP = 4  # a, b, a + b, z: none of them is read by the adjoint


def rnn_indexed(w, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + xs[t])
    return np.sum(h)


def linear_recurrence(h0, xs):
    # the adjoint of h = 0.9 h + x reads no value: nothing per step
    h = h0
    for x in xs:
        h = 0.9 * h + x * 0.5
    return np.sum(h)


def gated_steps(w, xs, h0):
    # a branch per step: the saved condition is a boolean, not an array
    h = h0
    for x in xs:
        z = w @ h + x
        if np.sum(z) > 0:
            h = np.tanh(z)
        else:
            h = 0.5 * z
    return np.sum(h * h)


def euler_steps(x0, v0, k, n):
    x = x0
    v = v0
    for _ in range(n):
        x, v = x + 0.01 * v, v - 0.01 * k * x * x * x
    return np.sum(x * v)


def elementwise_chain(x):
    a = np.sin(x)
    b = a * 2.0
    c = b + 1.0
    d = np.exp(c)
    e = d * 3.0
    return np.sum(e)


# --- counting -------------------------------------------------------------------------------


def _arrays(saved: Any) -> list[np.ndarray]:
    found: dict[int, np.ndarray] = {}

    def walk(obj: Any) -> None:
        if isinstance(obj, np.ndarray):
            found[id(obj)] = obj
        elif isinstance(obj, (tuple, list)):
            for item in obj:
                walk(item)

    walk(saved)
    return list(found.values())


def _owners(arrays: list[np.ndarray]) -> list[np.ndarray]:
    owners: dict[int, np.ndarray] = {}
    for a in arrays:
        while isinstance(a.base, np.ndarray):
            a = a.base
        owners[id(a)] = a
    return list(owners.values())


def _saved(fn: Callable, wrt: tuple[int, ...], args: tuple) -> tuple[int, int, int]:
    """(distinct arrays, distinct buffers, bytes of those buffers) in the saved state."""
    compiled = specialiser(fn).compiled(wrt, args, {})
    out, saved = compiled.forward(*args)
    assert np.isclose(out, fn(*args))
    arrays = _arrays(saved)
    owners = _owners(arrays)
    return len(arrays), len(owners), sum(a.nbytes for a in owners)


def _growth(fn: Callable, wrt: tuple[int, ...], make: Callable[[int], tuple],
            steps: tuple[int, ...] = (10, 20, 40)) -> list[float]:
    """Per-step growth of (arrays, buffers) between consecutive T; prints the counts."""
    counts = {t: _saved(fn, wrt, make(t)) for t in steps}
    for t, (arrays, buffers, nbytes) in counts.items():
        print(f"{fn.__name__} wrt={wrt} T={t}: {arrays} arrays, {buffers} buffers, "
              f"{nbytes} bytes saved")
    rates = []
    for t0, t1 in pairwise(steps):
        rates.append(((counts[t1][0] - counts[t0][0]) / (t1 - t0),
                      (counts[t1][1] - counts[t0][1]) / (t1 - t0)))
    print(f"{fn.__name__} wrt={wrt}: per step (arrays, buffers) = {rates}")
    return rates


RNG = np.random.default_rng(0)
W = 0.5 * RNG.standard_normal((4, 4))
U = RNG.standard_normal((4, 3))
H0 = RNG.standard_normal(4)


def _rnn_args(t: int) -> tuple:
    return W, U, np.random.default_rng(t).standard_normal((t, 3)), H0


# --- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("wrt, arrays_per_step, buffers_per_step", [
    ((0,), 1, 1),          # h of each step (h_prev of the next step is the same array)
    ((0, 1), 2, 1),        # and the row x, a view into xs: no buffer of its own
    ((0, 1, 2, 3), 2, 1),
])
def test_rnn_saved_state_is_linear_in_steps(wrt, arrays_per_step, buffers_per_step):
    rates = _growth(rnn_steps, wrt, _rnn_args)
    first = rates[0]
    assert all(r == first for r in rates), f"not linear in T: {rates}"
    arrays, buffers = first
    assert arrays <= arrays_per_step, f"{arrays} arrays per step"
    assert buffers <= buffers_per_step, f"{buffers} buffers per step"
    assert arrays < TEMPORARIES_PER_STEP


def test_rnn_indexed_saves_one_array_per_step():
    rates = _growth(rnn_indexed, (0,), lambda t: (W, np.random.default_rng(t).standard_normal(
        (t, 4)), H0))
    assert all(r == rates[0] for r in rates), rates
    arrays, buffers = rates[0]
    # the adjoint needs h before and after each step; they are the same arrays shifted by
    # one, so one new array per step is the minimum (W @ h is not needed: only its shape)
    assert arrays <= 1 and buffers <= 1, rates


def test_linear_recurrence_saves_nothing_per_step():
    rates = _growth(linear_recurrence, (0, 1),
                    lambda t: (H0, np.random.default_rng(t).standard_normal((t, 4))))
    assert rates[0] == (0.0, 0.0) and all(r == rates[0] for r in rates), rates


def test_branch_per_step_saves_a_condition_not_arrays():
    rates = _growth(gated_steps, (0,),
                    lambda t: (W, np.random.default_rng(t).standard_normal((t, 4)), H0))
    assert all(r == rates[0] for r in rates), rates
    arrays, buffers = rates[0]
    assert arrays <= 2 and buffers <= 2, rates


def test_euler_saves_the_state_per_step():
    x0 = RNG.standard_normal(5)
    v0 = RNG.standard_normal(5)

    def make(n: int) -> tuple:
        return x0, v0, 1.5, n

    rates = _growth(euler_steps, (0, 1, 2), make)
    assert all(r == rates[0] for r in rates), rates
    arrays, _ = rates[0]
    # x, v and the value x * x * x the adjoint of k * x**3 reads: at most 3 per step
    assert arrays <= 3, rates


def test_straight_line_saves_what_its_adjoint_reads():
    x = RNG.standard_normal(5)
    compiled = specialiser(elementwise_chain).compiled((0,), (x,), {})
    _, saved = compiled.forward(x)
    arrays = _arrays(saved)
    print(f"elementwise_chain: {len(arrays)} arrays saved: {compiled.saved}")
    # the adjoint reads x (for cos x) and d = exp(c) (for the derivative of exp); a, b, c, e
    # are not needed
    assert len(arrays) <= 2
    expected = [x, np.exp(2.0 * np.sin(x) + 1.0)]
    for a in arrays:
        assert any(np.shape(a) == np.shape(e) and np.allclose(a, e) for e in expected), a
