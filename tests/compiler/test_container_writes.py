"""Writes into lists and dicts inside differentiated functions: ``d[k] = v``, ``xs[i] = v``,
``xs.pop()``, ``xs.insert(i, v)`` and ``xs.append(v)``, as Python does them (in place, on the
one object every name of it shares).

A container's cotangent has the structure of the version it belongs to: a read of an item
before an append, a pop or a new key takes its zeros from the container as it was then,
not as it ends. Each write is checked as users combine it (read before and after, in a
loop, through a helper, decorated, at second order, on a Tensor) against finite
differences; writes the gradient cannot follow (into the caller's list, through another
name that is read afterwards, into a tuple) are refused at the user's line.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.compiler.batching import NotBatchable
from s2sgrad.testing import check_grads

rng = np.random.default_rng(11)
A = rng.standard_normal(4)
B = rng.standard_normal(4)
W = rng.standard_normal((4, 4)) * 0.5


def check(f, *args, order=1):
    check_grads(f, *args, modes=("rev", "fwd"), order=order)


def refused(f, args, words):
    """Refused at transform time, at a line of this file, saying ``words``."""
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(f)(*args)
    assert words in str(info.value)
    assert "test_container_writes.py" in str(info.value)


# --- the structure of a container's cotangent is that of its version -------------------------


def read_last_then_append(a, b):
    xs = [a * 1.0]
    t = xs[-1]  # the last item now; after the append it is another one
    xs.append(b * 2.0)
    return np.sum(t * 3.0)


def read_then_append_in_loop(a, b):
    xs = [a]
    total = 0.0
    for k in range(3):
        total = total + np.sum(xs[-1] * (k + 1.0))
        xs.append(np.tanh(xs[-1] + b))
    return total


def read_then_new_key(a, b):
    d = {"a": a * 2.0}
    t = d["a"]
    d["b"] = b * 3.0
    return np.sum(t * t)


def test_an_item_read_before_the_container_grows_gets_its_gradient():
    g_a, g_b = s2sgrad.gradient(read_last_then_append, wrt=(0, 1))(A, B)
    np.testing.assert_allclose(g_a, np.full(4, 3.0))
    np.testing.assert_allclose(g_b, np.zeros(4))
    check(read_last_then_append, A, B)
    check(read_then_append_in_loop, A, B, order=2)
    check(read_then_new_key, A, B)


# --- d[k] = v and xs[i] = v ------------------------------------------------------------------


def dict_of_layers(x, w):
    out = {}
    out["h"] = np.tanh(w @ x)
    out["y"] = out["h"] * 2.0 + x
    out["h"] = out["h"] ** 2  # replaced: the first value reaches the result through y only
    return np.sum(out["y"] * out["h"])


def list_slots(a, b):
    xs = [a, b, a * b]
    xs[0] = np.sin(xs[2])
    xs[-1] = xs[0] + xs[1]
    return np.sum(xs[0] * xs[2]) + np.sum(xs[1])


def rnn_states(x, w):
    hs = {}
    hs[-1] = np.zeros(4)
    for t in range(3):
        hs[t] = np.tanh(w @ hs[t - 1] + x * (t + 1.0))
    return np.sum(hs[2]) + 0.5 * np.sum(hs[0] * hs[1])


def accumulate_in_dict(x, w):
    stats = {"sum": 0.0, "sq": 0.0}
    for k in range(3):
        v = np.tanh(w[k] * x)
        stats["sum"] += np.sum(v)
        stats["sq"] += np.sum(v * v)
    return stats["sq"] - stats["sum"] ** 2 / 12.0


def list_in_loop(a, b):
    xs = [a, b]
    for k in range(4):
        xs[k % 2] = np.cos(xs[0] * xs[1])
    return np.sum(xs[0] + 2.0 * xs[1])


def unknown_key_slot(a, b, i):
    xs = [a, b, a + b]
    xs[i] = xs[i] * 3.0
    return np.sum(xs[0] * xs[1] * xs[2])


def slot_written_in_branch(a, b):
    d = {"v": a}
    if np.sum(a) > 0:
        d["v"] = d["v"] * b
    else:
        d["w"] = b
    return np.sum(d["v"])


@pytest.mark.parametrize("f", [dict_of_layers, rnn_states, accumulate_in_dict])
def test_writes_into_a_dict(f):
    check(f, A, W, order=2)


@pytest.mark.parametrize("f", [list_slots, list_in_loop])
def test_writes_into_a_list(f):
    check(f, A, B, order=2)


@pytest.mark.parametrize("f, args", [(dict_of_layers, (A, W)), (rnn_states, (A, W)),
                                     (accumulate_in_dict, (A, W)), (list_slots, (A, B)),
                                     (list_in_loop, (A, B)), (read_then_new_key, (A, B)),
                                     (read_then_append_in_loop, (A, B))])
@pytest.mark.parametrize("mode", ["batch", "batch-rev"])
def test_writes_into_containers_for_many_directions_or_cotangents_at_once(f, args, mode):
    try:
        check_grads(f, *args, modes=(mode,))
    except NotBatchable as reason:  # one at a time instead, which check() covers
        assert "element write" in str(reason), reason


def test_a_slot_chosen_at_run_time():
    for i in (0, 1, -1):
        check(unknown_key_slot, A, B, i)


def test_a_slot_written_on_one_branch():
    check(slot_written_in_branch, A, B)
    check(slot_written_in_branch, -np.abs(A), B)


# --- pop and insert --------------------------------------------------------------------------


def stack_machine(a, b):
    stack = [a, b]
    stack.append(stack.pop() * stack.pop())
    stack.insert(0, np.sin(a))
    top = stack.pop(0)
    return np.sum(top * stack[-1]) + np.sum(stack[0])


def queue(a, b):
    q = [a, b, a * b]
    total = 0.0
    while q:
        v = q.pop(0)
        total = total + np.sum(v * v)
    return total


def insert_everywhere(a, b):
    xs = [a]
    xs.insert(0, b * 2.0)
    xs.insert(-1, a * b)
    xs.insert(10, np.tanh(b))  # past the end: appended
    return sum(np.sum(v * (k + 1.0)) for k, v in enumerate(xs))


def popped_key(a, b):
    d = {"a": a, "b": b * 2.0}
    v = d.pop("a")
    d["c"] = v * d["b"]
    return np.sum(d["c"]) + np.sum(d["b"])


def unused_pop(a, b):
    xs = [a, b * 3.0]
    xs.pop()
    return np.sum(xs[-1])


@pytest.mark.parametrize("f", [stack_machine, queue, insert_everywhere, popped_key,
                               unused_pop])
def test_pop_and_insert(f):
    check(f, A, B, order=2)


# --- as users combine them -------------------------------------------------------------------


def collect(a, b):
    xs = [a, b]
    xs[0] = a * b * 2.0
    xs.insert(1, np.tanh(xs.pop()))
    return xs


def through_a_helper(a, b):
    xs = collect(a, b)
    return np.sum(xs[0] * xs[1])


@s2sgrad.grad
def decorated(a, b):
    d = {}
    d["p"] = a * b
    d["q"] = d["p"] + 1.0
    return np.sum(d["q"] ** 2)


def test_through_a_helper_and_decorated():
    check(through_a_helper, A, B, order=2)
    a = s2sgrad.tensor(A, requires_grad=True)
    decorated(a, s2sgrad.tensor(B)).backward()
    np.testing.assert_allclose(a.grad.numpy(), 2.0 * (A * B + 1.0) * B, rtol=1e-12)


def test_on_a_tensor():
    a = s2sgrad.tensor(A, requires_grad=True)
    b = s2sgrad.tensor(B, requires_grad=True)
    s2sgrad.grad(stack_machine)(a, b).backward()
    g_a, g_b = s2sgrad.gradient(stack_machine, wrt=(0, 1))(A, B)
    np.testing.assert_allclose(a.grad.numpy(), g_a, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), g_b, rtol=1e-12)


# --- what stays refused ----------------------------------------------------------------------


def into_the_callers_list(xs):
    xs[0] = xs[0] * 2.0
    return np.sum(xs[0])


def into_the_callers_dict(d):
    d["a"] = d["a"] * 2.0
    return np.sum(d["a"])


def write_first(xs, v):
    xs[0] = v
    return xs


def through_a_helper_into_the_callers_list(a):
    xs = write_first([a, a], a * 2.0)
    return np.sum(xs[0])


def through_another_name(a):
    xs = [a, a * 2.0]
    ys = xs
    xs[0] = a * 3.0
    return np.sum(ys[0])  # Python shows the new item here


def into_a_tuple(a):
    t = (a, a)
    t[0] = a * 2.0
    return np.sum(t[0])


def slice_of_a_list(a):
    xs = [a, a, a]
    xs[0:2] = [a * 2.0]
    return np.sum(xs[0])


@pytest.mark.parametrize("f, args, words", [
    (into_the_callers_list, ([A, B],), "the caller's list"),
    (into_the_callers_dict, ({"a": A},), "the caller's dict"),
    (through_a_helper_into_the_callers_list, (A,), "the caller's list"),
    (through_another_name, (A,), "'ys'"),
    (into_a_tuple, (A,), "tuple"),
    (slice_of_a_list, (A,), "slice"),
])
def test_refused(f, args, words):
    refused(f, args, words)


# --- writes through a view of an array -------------------------------------------------------


def through_transpose(x, w):
    y = np.zeros((4, 3))
    y.T[0] = x * 2.0  # the first column
    y.T[1:, 2] = np.tanh(x[:2])
    return np.sum((w[:, :3] * y) ** 2)


def through_a_row(x, w):
    b = w * 1.0
    for i in range(3):
        b[i][i + 1] = np.sin(x[i])
        b[i + 1][:2] = b[i][:2] * x[i]
    return np.sum(b ** 2)


def nested_rows(x, w):
    b = np.zeros((2, 4))
    b[0][0] = x[1]
    return np.sum(b * 3.0) + np.sum(x)


@pytest.mark.parametrize("f", [through_transpose, through_a_row, nested_rows])
def test_writes_through_a_view(f):
    check(f, A, W, order=2)


def through_a_row_of_a_list(x):
    rows = [x * 1.0, x * 2.0]
    rows[0][1] = x[0] * 3.0
    return np.sum(rows[0])


def through_a_slice_then_an_index(x):
    b = np.zeros((4, 4))
    b[1:3][0] = x
    return np.sum(b)


def through_a_float_index(x, i):
    b = np.zeros((4, 4))
    b[i][0] = x[0]
    return np.sum(b)


@pytest.mark.parametrize("f, args, words", [
    (through_a_row_of_a_list, (A,), "followed for NumPy arrays only"),
    (through_a_slice_then_an_index, (A,), "the first index is a slice"),
    (through_a_float_index, (A, 1.0), "not an integer"),
])
def test_writes_through_a_view_refused(f, args, words):
    refused(f, args, words)


# --- an array made in each iteration, written, then stored (min-char-rnn's one-hot xs[t]) -----


def one_hot_inputs(w, h0):
    xs, hs = {}, {}
    hs[-1] = h0
    loss = 0.0
    for t in range(3):
        x = np.zeros(4)
        x[(t + 1) % 4] = 1.0
        x[t] += 0.5
        xs[t] = x
        hs[t] = np.tanh(w @ xs[t] + hs[t - 1])
        loss += np.sum(hs[t] ** 2)
    return loss


def one_array_stored_every_iteration(w, h0):
    x = np.zeros(4)
    xs = []
    for t in range(3):
        x[t] = w[t, t]  # the same array each time: the list holds it three times
        xs.append(x)
    return np.sum(xs[0] * h0)


def made_by_a_helper(w, h0):
    xs = []
    for t in range(3):
        x = passthrough(h0)  # may be h0 itself
        x[t] = w[t, t]
        xs.append(x)
    return np.sum(xs[0])


def passthrough(v):
    return v


def test_an_array_made_in_each_iteration_may_be_written_then_stored():
    check(one_hot_inputs, W, A, order=2)


@pytest.mark.parametrize("f", [one_array_stored_every_iteration, made_by_a_helper])
def test_an_array_stored_in_an_earlier_iteration_is_not_written(f):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(f)(W, A)
    assert "test_container_writes.py" in str(info.value)


# --- pops and appends on branches in a loop (a stack machine), at second order ----------------


def reverse_polish(tokens, x):
    stack = []
    for tok in tokens:
        if tok == "+":
            b, a = stack.pop(), stack.pop()
            stack.append(a + b)
        elif tok == "*":
            b, a = stack.pop(), stack.pop()
            stack.append(a * b)
        elif tok == "sin":
            stack.append(np.sin(stack.pop()))
        else:
            stack.append(x[int(tok)])
    return np.sum(stack.pop())


def evaluated(x):
    return reverse_polish(("0", "1", "*", "sin", "2", "+"), x)


def test_a_stack_machine():
    check(evaluated, W[:3], order=2)


# --- a list read out of another container is the same list -----------------------------------


def append_to_an_inner_list(x):
    rows = [[x]]
    row = rows[0]
    row.append(x * 3.0)  # rows[0] has two items now
    return np.sum(rows[0][1])


def append_to_a_list_held_in_a_dict(x):
    hs = []
    state = {"hs": hs}
    hs.append(x * 2.0)
    return np.sum(state["hs"][0])


def copied_inner_list(x):
    rows = [[x]]
    row = [v for v in rows[0]]  # a new list of the same items
    row.append(x * 3.0)
    return np.sum(row[1]) + np.sum(rows[0][0])


@pytest.mark.parametrize("f", [append_to_an_inner_list, append_to_a_list_held_in_a_dict])
def test_an_append_to_a_list_another_container_holds_is_refused(f):
    with pytest.raises(TransformError, match="a list or dict that was put into"):
        s2sgrad.gradient(f)(A)


def test_an_append_to_a_copy_of_an_inner_list_is_followed():
    check(copied_inner_list, A)
