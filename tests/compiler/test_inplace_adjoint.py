"""The adjoint updates the cotangent buffers it owns in place (inplace.py): an element read
``x[i]`` adds its cotangent at ``i`` (``x_bar[i] += g``), an element write zeroes the
region of the cotangent it overwrote (``g[i] = 0.0``), an item of a list adds into the
list's slot, and a contribution to an array the adjoint made is added into it. Where a
buffer is shared (two operands given one cotangent, a view, a value a callee may hand
back) the update copies it.

Each family is checked against finite differences as users write it (straight-line, in a
loop, through a helper, decorated, at second order, on a Tensor), and the generated
adjoint is read to check that a loop's accesses cost what an element costs: no copy of a
whole cotangent per iteration.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import central_difference, check_grads

rng = np.random.default_rng(5)
X = rng.standard_normal(6)
Y = rng.standard_normal(6)
M = rng.standard_normal((4, 3))


def check(f, *args, order=1):
    check_grads(f, *args, modes=("rev", "fwd"), order=order)


def adjoint_of(f, *args, wrt=0):
    return s2sgrad.grad(f).compiled_for((wrt,) if isinstance(wrt, int) else wrt,
                                        args).adjoint_source


def loop_body(source: str) -> str:
    """The adjoint's loop body (the lines after its first ``for``)."""
    return source.split("\n    for ", 1)[1]


# --- element reads: the cotangent added at the index ------------------------------------------

def element_sum(x):
    return x[0] * x[1] + x[-1] * 3.0


def element_loop(x, v):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] += v * x[i]
    return np.sum(y * y)


def element_loop_nested(m):
    total = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            total = total + m[i, j] * m[i, j] * (i + 1)
    return total


def rows_in_loop(m):
    total = 0.0
    for i in range(m.shape[0]):
        total = total + np.sum(np.tanh(m[i]) * m[i])
    return total


def repeated_positions(x):
    idx = np.array([0, 2, 2, 5, 0])
    return np.sum(x[idx] ** 2)


def masked(x):
    return np.sum(x[x > 0.0] ** 3)


def slices_overlapping(x):
    return np.sum(x[1:4] * x[2:5]) + np.sum(x[::2])


def pick(v, i):
    return v[i]


def through_a_helper(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + pick(x, i) ** 2
    return total


@s2sgrad.grad
def decorated_loop(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        total = total + x[i] * x[i + 1]
    return total


@pytest.mark.parametrize("f, args", [
    (element_sum, (X,)), (element_loop, (X, 0.7)), (element_loop_nested, (M,)),
    (rows_in_loop, (M,)), (repeated_positions, (X,)), (masked, (X,)),
    (slices_overlapping, (X,)), (through_a_helper, (X,)), (decorated_loop, (X,)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_element_reads(f, args):
    check(f, *args)
    check(f, *args, order=2)


def test_a_loop_of_element_reads_updates_in_place():
    body = loop_body(adjoint_of(element_loop, X, 0.7, wrt=(0, 1)))
    assert "x_bar[i] +=" in body
    for whole_array in ("add_at(", "zeroed_at(", "bincount", ".copy()", "np.arange"):
        assert whole_array not in body, body
    # y[i] += e reads the element it writes: its cotangent is left as it was, not zeroed
    # and given back
    assert "] = 0.0" not in body and "y_1_bar[i] +=" not in body, body


# --- an element read and written: y[i] += e and its neighbours --------------------------------

def add_into(x, v):
    y = np.sin(x)  # the values written over carry a gradient too
    for i in range(x.shape[0]):
        y[i] += v * x[i]
    return np.sum(y ** 3)


def scale_and_add(x, v):
    y = np.sin(x)  # the values written over carry a gradient too
    for i in range(x.shape[0]):
        y[i] = 2.0 * y[i] + v * x[i]
    return np.sum(y ** 3)


def add_the_previous(x, v):
    y = np.sin(x)  # the values written over carry a gradient too
    for i in range(1, x.shape[0]):
        y[i] += y[i - 1] * v * x[i]
    return np.sum(y ** 3)


def subtract_from(x, v):
    y = np.sin(x)  # the values written over carry a gradient too
    for i in range(x.shape[0]):
        y[i] -= v * x[i]
    return np.sum(y ** 3)


def add_twice(x, v):
    y = np.sin(x)  # the values written over carry a gradient too
    for i in range(x.shape[0]):
        y[i] += v * x[i]
        y[i] += x[i] * x[i]
    return np.sum(y ** 3)


def write_then_add(x, v):
    y = np.sin(x)
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]
        y[i] += v * y[i - 1]
    return np.sum(y ** 3)


def add_then_scale(x, v):
    y = np.sin(x)
    for i in range(x.shape[0]):
        y[i] += v * x[i]
        y[i] = y[i] * y[(i + 1) % x.shape[0]]
    return np.sum(y ** 3)


def add_into_a_matrix(m, v):
    y = np.sin(m)  # the values written over carry a gradient too
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            y[i, j] += v * m[i, j] * m[i, 0]
    return np.sum(y ** 3)


def add_into_a_row(m, v):
    y = np.sin(m)  # the values written over carry a gradient too
    for i in range(m.shape[0]):
        y[i] += v * np.tanh(m[i])
    return np.sum(y ** 3)


@pytest.mark.parametrize("f, args", [
    (add_into, (X, 0.7)), (scale_and_add, (X, 0.7)), (add_the_previous, (X, 0.7)),
    (subtract_from, (X, 0.7)), (add_twice, (X, 0.7)), (write_then_add, (X, 0.7)),
    (add_then_scale, (X, 0.7)), (add_into_a_matrix, (M, 0.7)),
    (add_into_a_row, (M, 0.7)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_an_element_read_and_written(f, args):
    check(f, *args)
    check(f, *args, order=2)


def test_repeated_positions_add_each_occurrence():
    source = adjoint_of(repeated_positions, X)
    assert "add.at" in source or "add_at_each" in source
    g = s2sgrad.gradient(repeated_positions)(X)
    expected = np.zeros(6)
    for k in (0, 2, 2, 5, 0):
        expected[k] += 2 * X[k]
    np.testing.assert_allclose(g, expected)


# --- element writes: the overwritten region's cotangent zeroed ---------------------------------

def write_rows(m):
    out = np.zeros((m.shape[0], m.shape[1]))
    for i in range(m.shape[0]):
        out[i] = np.tanh(m[i]) * 2.0
    return np.sum(out * out)


def overwrite_twice(x):
    y = np.zeros(3)
    y[0] = x[0] * 2.0
    y[0] = x[1] * y[0]
    y[1] = x[2]
    return np.sum(y * y)


def write_row_then_read_it(m):
    out = np.ones((3, 3))
    for i in range(3):
        out[i] = m[i] * out[i]
        out[(i + 1) % 3] = out[(i + 1) % 3] + m[i]
    return np.sum(out ** 2)


def running_states(w, x):
    states = np.zeros((x.shape[0], w.shape[0]))
    h = np.zeros(w.shape[0])
    for t in range(x.shape[0]):
        h = np.tanh(w @ h + x[t])
        states[t] = h
    return np.sum(states[1:] * states[:-1])


@pytest.mark.parametrize("f, args", [
    (write_rows, (M,)), (overwrite_twice, (X,)), (write_row_then_read_it, (M[:3],)),
    (running_states, (0.5 * rng.standard_normal((3, 3)), M)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_element_writes(f, args):
    check(f, *args)
    check(f, *args, order=2)


def test_a_loop_of_row_writes_zeroes_in_place():
    body = loop_body(adjoint_of(write_rows, M))
    assert "zeroed_at(" not in body and "] = 0.0" in body, body


# --- shared buffers: a cotangent two names hold is copied before an update --------------------

def one_cotangent_for_two_operands(x, w):
    z = x + w  # x and w receive the same cotangent object
    return np.sum(z * z) + x[0] * 3.0 + w[1] * 5.0


def ident(a):
    return a


def through_an_identity(x):
    y = ident(x)  # y's cotangent is what the identity's backward hands back
    return np.sum(y * y) + y[0] * x[2] + x[1]


def view_then_update(x):
    y = x * 1.0
    head = y[:3]  # a view of y
    return np.sum(head * head) + y[1] * 4.0 + np.sum(y)


def copy_then_both(x):
    y = x
    return y[0] * x[0] + np.sum(x * y)


def seed_is_the_callers(x):
    return x * 2.0 + x[0]  # the seed handed to the adjoint is the caller's array


@pytest.mark.parametrize("f, args", [
    (one_cotangent_for_two_operands, (X, Y)), (through_an_identity, (X,)),
    (view_then_update, (X,)), (copy_then_both, (X,)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_shared_buffers(f, args):
    check(f, *args)
    check(f, *args, order=2)


def test_the_callers_seed_is_not_written():
    seed = np.ones(6)
    before = seed.copy()
    _, pullback = s2sgrad.vjp(seed_is_the_callers, X)
    (g,) = pullback(seed)
    np.testing.assert_array_equal(seed, before)
    expected = 2.0 * seed
    expected[0] += seed.sum()
    np.testing.assert_allclose(g, expected)


def test_a_backward_run_twice_gives_the_same_gradient():
    _, pullback = s2sgrad.vjp(element_loop, X, 0.7)
    first = pullback(1.0)
    second = pullback(1.0)
    np.testing.assert_array_equal(first[0], second[0])
    assert first[1] == second[1]


# --- list and dict items: the slot rebound ----------------------------------------------------

def horner(x, coeffs):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def weighted_items(ws):
    total = 0.0
    for k in range(len(ws)):
        total = total + ws[k] * ws[k] * (k + 1.0)
    return total


def dict_items(p):
    total = 0.0
    for name in ("a", "b", "a"):
        total = total + p[name] ** 2
    return total


def test_list_items_in_a_loop():
    coeffs = [float(c) for c in rng.standard_normal(7)]
    check(horner, 0.6, coeffs)
    check_grads(horner, 0.6, coeffs, wrt=0, modes=("rev", "fwd"), order=2)
    check(weighted_items, coeffs)
    body = loop_body(adjoint_of(horner, 0.6, coeffs, wrt=(0, 1)))
    assert "add_leaf(" not in body and "add_item(" not in body, body


def test_dict_items_in_a_loop():
    p = {"a": 0.3, "b": -1.2}
    g = s2sgrad.gradient(dict_items)(p)
    for _ in range(2):  # along random directions, against central differences
        d = {k: float(v) for k, v in zip(p, rng.standard_normal(2))}
        assert sum(g[k] * d[k] for k in p) == pytest.approx(
            central_difference(dict_items, [p], 0, d), rel=1e-6)


def pairs_built_by_appends(x):
    pairs = []
    for k in range(x.shape[0]):
        pairs.append((x[k], x[k] * 2.0))
    total = 0.0
    for a, b in reversed(pairs):  # items of unknown rank: tuples, added item by item
        total = total * 0.5 + a * b
    return total


def test_tuples_held_in_a_list_built_by_appends():
    check(pairs_built_by_appends, X)
    check(pairs_built_by_appends, X, order=2)


# --- the Tensor path --------------------------------------------------------------------------

def test_on_tensors():
    f = s2sgrad.grad(element_loop)
    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    f(x, 0.7).backward()
    expected = s2sgrad.gradient(element_loop)(X, 0.7)
    np.testing.assert_allclose(x.grad.numpy() if hasattr(x.grad, "numpy") else x.grad,
                               expected)
    x.grad = None
    f(x, 0.7).backward()  # a second backward through a new graph: the same gradient
    np.testing.assert_allclose(np.asarray(x.grad.numpy() if hasattr(x.grad, "numpy")
                                          else x.grad), expected)
