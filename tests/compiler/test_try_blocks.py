"""``try``/``except``/``else``/``finally`` inside differentiated functions.

The forward runs the user's try (it catches what Python catches) and each block sets a flag
saying whether the body or the handler ran to its end; the adjoint differentiates that
block. Checked as users write them (a Cholesky factor retried with jitter, a dict item with
a default, an else block, finally bookkeeping, a return from the try, in a loop and a
nested function, decorated and on Tensors, forward mode and second order) against finite
differences, on both paths. Where a body that raised partway would leave something the
rest of the function sees (a variable the handler reads or does not assign again, an
update in place, a branch or loop whose saves would outlive it), the try is refused at the
line, and so are two except clauses, ``as`` names and exits out of the blocks.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(23)
X = rng.uniform(0.3, 1.2, 3)
DEFINITE = np.eye(3) * 4.0


def jittered_cholesky(x, shift):
    K = np.outer(x, x) + shift * np.eye(3)
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(K + 3.5 * np.eye(3))
    return np.sum(L ** 2) + np.sum(np.log(np.diag(L)))


def returned_from_try(x, shift):
    K = np.outer(x, x) + shift * np.eye(3)
    try:
        return np.sum(np.linalg.cholesky(K) @ x)
    except np.linalg.LinAlgError:
        pass
    return np.sum(np.tanh(x) ** 2)


def item_or_default(x, table):
    try:
        v = table["scale"] * x
    except KeyError:
        v = np.sin(x)
    return np.sum(v ** 2)


def with_else_and_finally(x, table):
    calls = 0
    try:
        v = table["scale"] * x
    except KeyError:
        v = x * 2.0
    else:
        v = v + np.cos(x)
    finally:
        calls = calls + 1
    return np.sum(v ** 2) * calls


def try_finally(x):
    try:
        y = np.tanh(x)
    finally:
        z = y * 2.0
    return np.sum(z ** 2)


def in_loop(x, shift):
    s = 0.0
    for k in range(3):
        K = np.outer(x, x) * (k + 1) + shift * np.eye(3)
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            L = np.eye(3) * np.sum(x ** 2)
        s = s + np.sum(L @ x)
    return s


def doubled_unless_raised(x, table):
    for _ in range(3):
        try:
            x = x * table["scale"]  # its last statement: where it raised, x is unchanged
        except KeyError:
            pass
    return np.sum(np.sin(x))


def in_nested_function(x, table):
    def scaled(v):
        try:
            w = v * table["scale"]
        except (KeyError, TypeError):
            w = v ** 2
        return w
    return np.sum(scaled(x)) + np.sum(scaled(x ** 2))


def raised_by_division(x, d):
    with np.errstate(divide="raise"):
        try:
            y = x / d
        except FloatingPointError:
            y = x * 10.0
    return np.sum(y ** 2)


# (function, arguments, which block runs: the handler or the body)
CASES = {
    "cholesky, body": (jittered_cholesky, (X, 1.0)),
    "cholesky, handler": (jittered_cholesky, (X, -2.0)),
    "return from try, body": (returned_from_try, (X, 1.0)),
    "return from try, handler": (returned_from_try, (X, -2.0)),
    "dict item, body": (item_or_default, (X, {"scale": 1.5})),
    "dict item, handler": (item_or_default, (X, {})),
    "else and finally, body": (with_else_and_finally, (X, {"scale": 1.5})),
    "else and finally, handler": (with_else_and_finally, (X, {})),
    "try/finally": (try_finally, (X,)),
    "in a loop": (in_loop, (X, -0.5)),
    "handler that passes, body": (doubled_unless_raised, (X, {"scale": 1.5})),
    "handler that passes, handler": (doubled_unless_raised, (X, {})),
    "nested function, body": (in_nested_function, (X, {"scale": 2.0})),
    "nested function, handler": (in_nested_function, (X, {})),
    "errstate raise, body": (raised_by_division, (X, 2.0)),
    "errstate raise, handler": (raised_by_division, (X, 0.0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_try_blocks_differentiate_on_both_paths(name):
    fn, args = CASES[name]
    before = copy.deepcopy(args)
    check_grads(fn, *args, wrt=0, modes=("rev", "fwd"))
    check_grads(fn, *args, wrt=0, order=2)
    for a, b in zip(args, before, strict=True):
        np.testing.assert_equal(a, b)


def test_the_handler_ran_where_python_runs_it():
    """The paths differ in value: each compiled value is the plain call's."""
    for shift in (1.0, -2.0):
        value, g = s2sgrad.value_and_grad(jittered_cholesky)(X, shift)
        assert value == jittered_cholesky(X, shift)
    assert s2sgrad.value_and_grad(jittered_cholesky)(X, 1.0)[0] != \
        s2sgrad.value_and_grad(jittered_cholesky)(X, -2.0)[0]
    source = s2sgrad.grad(jittered_cholesky).adjoint_source
    assert "if _ok:" in source and "except" not in source


def test_try_on_the_tensor_path():
    @s2sgrad.grad
    def loss(x):
        try:
            L = np.linalg.cholesky(np.outer(x, x) - np.eye(3))
        except np.linalg.LinAlgError:
            L = np.linalg.cholesky(np.outer(x, x) + np.eye(3))
        return np.sum(L ** 2)

    x = s2sgrad.tensor(X, requires_grad=True)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(loss.fn)(X))
    # the sum of squares of L is the trace of L L^T = x x^T + I
    np.testing.assert_allclose(x.grad.numpy(), 2 * X)


# --- what stays refused -------------------------------------------------------------------


def handler_reads_body_value(x, d):
    y = x
    try:
        y = np.linalg.cholesky(np.outer(x, x))
        z = y * 2.0
    except np.linalg.LinAlgError:
        z = y + 1.0  # <- refused
    return np.sum(z)


def body_only_value_read_after(x, d):
    try:
        a = x * d["k"]
        b = a * 2.0
    except KeyError:
        b = x
    return np.sum(a + b)  # <- refused


def update_in_place(x, d):
    y = x * 1.0
    try:
        y[0] = x[1] * 2.0  # <- refused
        z = y * d["k"]
    except KeyError:
        z = x
    return np.sum(z)


def handler_reads_through_a_closure(x, d):
    y = x

    def doubled():
        return y * 2.0  # <- refused
    try:
        y = x * 3.0
        z = d["k"] * y
    except KeyError:
        z = doubled()
        y = x
    return np.sum(z * y)


class Shift:
    def __init__(self, b):
        self.b = b

    def __call__(self, x):
        return np.tanh(x + self.b)


def attribute_changed_in_body(x, d):
    layer = Shift(0.0)
    try:  # <- refused
        layer.b = x * 2.0
        z = d["k"]
    except KeyError:
        z = 1.0
    return np.sum(layer(x)) * z


def branch_in_body(x, d):
    try:
        y = x if d["k"] > 0 else x * 2.0  # <- refused
    except KeyError:
        y = x
    return np.sum(y)


def two_handlers(x, d):
    try:
        y = x * d["k"]
    except KeyError:
        y = x
    except TypeError:  # <- refused
        y = x * 2.0
    return np.sum(y)


def named_exception(x, d):
    try:
        y = x * d["k"]
    except KeyError as e:  # <- refused
        y = x * len(str(e))
    return np.sum(y)


def caught_from_a_variable(x, d):
    kind = KeyError
    try:
        y = x * d["k"]
    except kind:  # <- refused
        y = x
    return np.sum(y)


def return_in_handler_only(x, d):
    try:
        y = x * d["k"]
    except KeyError:
        return np.sum(x)  # <- refused
    return np.sum(y)


def break_in_try(x, d):
    s = 0.0
    for i in range(3):
        try:
            s = s + np.sum(x) * d["k"]
        except KeyError:
            break  # <- refused
    return s


@pytest.mark.parametrize("fn,token,words", [
    (handler_reads_body_value, "y + 1", "the except block reads 'y'"),
    (body_only_value_read_after, "a + b", "'a' is changed in the try block at line"),
    (update_in_place, "y[0]", "update in place, inside a try block"),
    (handler_reads_through_a_closure, "y * 2", "the except block reads 'y'"),
    (attribute_changed_in_body, "try", "'layer.b' is changed in the try block"),
    (branch_in_body, "x if", "a branch or a loop inside a try block"),
    (two_handlers, "except", "more than one except clause"),
    (named_exception, "except", "'except ... as name'"),
    (caught_from_a_variable, "kind", "must name exception classes"),
    (return_in_handler_only, "return", "only where the try block ends in a return"),
    (break_in_try, "break", "'break' inside an except block"),
], ids=lambda v: getattr(v, "__name__", None))
def test_try_blocks_refused_at_their_line(fn, token, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(X, {"k": 1.0})
    assert words in info.value.reason, info.value.reason
    assert_points_at(info.value, fn, token)
