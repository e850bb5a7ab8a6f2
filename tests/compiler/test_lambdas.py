"""Lambdas wherever a function may be: differentiated directly, several on one line (each
found by the column positions of its code), nested, assigned to a name, held in containers,
given as defaults, closing over variables, on the Tensor path, at second order and in
forward mode. Each gradient is checked against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads

rng = np.random.default_rng(5)
X = rng.standard_normal(5)
W = rng.standard_normal((5, 3))

square = lambda v: v * v
ACTIVATIONS = {"tanh": lambda v: np.tanh(v), "soft": lambda v: np.log1p(np.exp(v))}
PAIR = (lambda v: np.sin(v) * 2.0, lambda v: np.cos(v) ** 2)  # two on one line
SCALE = 1.5
scaled = lambda v, s=SCALE: s * np.sum(v ** 3)


def make_closure(c):
    return lambda v: np.sum(np.exp(c * v))


def uses_global_lambda(x):
    return np.sum(square(x) + ACTIVATIONS["tanh"](x))


def loops_over_lambdas(x):
    total = 0.0
    for act in PAIR:
        total = total + np.sum(act(x))
    return total


def takes_function(x, nonlinearity=lambda v: np.maximum(v, 0.1 * v)):
    return np.sum(nonlinearity(x) ** 2)


CASES = {
    "direct": (lambda x: np.sum(np.sin(x) * x), (X,)),
    "two params": (lambda x, w: np.sum(np.tanh(x @ w)), (X, W)),
    "first of a pair": (PAIR[0], (X,)),
    "second of a pair": (PAIR[1], (X,)),
    "nested": (lambda x: (lambda y: np.sum(y * y))(np.sin(x)), (X,)),  # noqa: PLC3002
    "default": (scaled, (X,)),
    "closure": (make_closure(0.7), (X,)),
    "assigned": (lambda x: np.sum(square(x)), (X,)),
    "calls a global lambda": (uses_global_lambda, (X,)),
    "a loop over lambdas": (loops_over_lambdas, (X,)),
    "a lambda as a default": (takes_function, (X,)),
    "from a dict": (ACTIVATIONS["soft"], (X,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_lambda_gradients_match_finite_differences(name):
    fn, args = CASES[name]
    out = fn(*args)
    f = fn if np.ndim(out) == 0 else (lambda *a: np.sum(fn(*a) * np.arange(1.0, 6.0)))
    check_grads(f, *args, modes=("rev", "fwd"))


def test_each_lambda_on_a_line_is_its_own():
    a, b = PAIR
    ga = s2sgrad.gradient(lambda x: np.sum(a(x)))(X)
    gb = s2sgrad.gradient(lambda x: np.sum(b(x)))(X)
    np.testing.assert_allclose(ga, 2.0 * np.cos(X))
    np.testing.assert_allclose(gb, -2.0 * np.cos(X) * np.sin(X))
    f, g = (lambda x: np.sum(x ** 2), lambda x: np.sum(x ** 3))
    np.testing.assert_allclose(s2sgrad.gradient(f)(X), 2 * X)
    np.testing.assert_allclose(s2sgrad.gradient(g)(X), 3 * X ** 2)


def test_generated_source_is_named_for_the_variable(capsys):
    s2sgrad.show(square, X)
    text = capsys.readouterr().out
    assert "def square_forward(v):" in text and "def square_backward(" in text
    s2sgrad.show(lambda x: np.sum(x), X)
    line = test_generated_source_is_named_for_the_variable.__code__.co_firstlineno + 4
    assert f"def lambda_{line}_forward(x):" in capsys.readouterr().out


def test_second_order_and_hessian_of_a_lambda():
    f = lambda x: np.sum(np.sin(x) * x ** 2)
    check_grads(f, X, order=2, modes=("rev", "fwd"))
    h = s2sgrad.hessian(f)(X)
    expected = np.diag(-np.sin(X) * X ** 2 + 4 * X * np.cos(X) + 2 * np.sin(X))
    np.testing.assert_allclose(h, expected, atol=1e-10)


def test_a_lambda_on_the_tensor_path():
    w = s2sgrad.tensor(W, requires_grad=True)
    x = s2sgrad.tensor(X)
    loss = s2sgrad.grad(lambda w, x: np.sum(np.tanh(x @ w) ** 2))(w, x)
    loss.backward()
    expected = s2sgrad.gradient(lambda w, x: np.sum(np.tanh(x @ w) ** 2))(W, X)
    np.testing.assert_allclose(w.grad.numpy(), expected)
    check_grads(lambda w, x: np.sum(np.tanh(x @ w) ** 2), W, X)


def test_a_refusal_inside_a_lambda_points_at_it():
    f = lambda x: np.sum(x) * 2.0  # another lambda before it, on its own line
    g = lambda x: np.sum(np.abs(np.fft.hfft(x)))  # no rule for np.fft.hfft
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(g)(X)
    err = info.value
    assert err.filename == __file__ and "numpy.fft.hfft" in str(err)
    assert err.lineno == test_a_refusal_inside_a_lambda_points_at_it.__code__.co_firstlineno + 2
    assert err.col > 10  # inside the lambda, not at the start of the line
    check_grads(f, X)


def test_a_lambda_without_source_is_refused_clearly():
    f = eval("lambda x: x * 2")
    with pytest.raises(TransformError, match="source"):
        s2sgrad.gradient(f)(1.0)


# --- loops over fixed sequences of functions are unrolled ------------------------------------


def softplus(v):
    return np.log1p(np.exp(v))


LAYERS = (np.tanh, softplus, lambda v: v * np.sin(v))
LAYER_LIST = [np.tanh, softplus]


def literal_sequence(x):
    h = x
    for act in (np.tanh, softplus, np.sin):
        h = act(h) * 1.1
    return np.sum(h)


def enumerated(x):
    total = 0.0
    for i, act in enumerate(LAYERS):
        total = total + (i + 1.0) * np.sum(act(x))
    return total


def nested_in_a_loop(x, w):
    h = x
    for _ in range(3):
        for act in LAYERS:
            h = act(h @ w) * 0.5
    return np.sum(h)


def test_loops_over_functions_are_unrolled_and_right():
    check_grads(literal_sequence, X, modes=("rev", "fwd"))
    check_grads(enumerated, X, modes=("rev", "fwd"), order=2)
    check_grads(nested_in_a_loop, X[:3], W[:3], modes=("rev", "fwd"))
    x = s2sgrad.tensor(X, requires_grad=True)
    s2sgrad.grad(enumerated)(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(enumerated)(X))


def over_a_list(x):
    total = 0.0
    for act in LAYER_LIST:  # a list may grow after the compile: not unrolled
        total = total + np.sum(act(x))
    return total


def with_a_break(x):
    total = 0.0
    for act in LAYERS:
        total = total + np.sum(act(x))
        if total > 100.0:
            break
    return total


@pytest.mark.parametrize("fn", [over_a_list, with_a_break])
def test_loops_over_functions_that_cannot_be_unrolled_are_refused(fn):
    with pytest.raises(TransformError, match="not known when the code is compiled") as info:
        s2sgrad.gradient(fn)(X)
    assert info.value.filename == __file__


def unrolled_over_a_module_tuple(x):
    total = 0.0
    for act in HOOKS:
        total = total + np.sum(act(x))
    return total


HOOKS = (np.sin,)


def test_rebinding_an_unrolled_tuple_recompiles():
    global HOOKS
    f = s2sgrad.gradient(unrolled_over_a_module_tuple)
    np.testing.assert_allclose(f(X), np.cos(X))
    HOOKS = (np.sin, np.tanh)  # another tuple, of another length, bound to the same name
    try:
        np.testing.assert_allclose(f(X), np.cos(X) + 1.0 - np.tanh(X) ** 2)
        HOOKS = (lambda v: v * v, np.sin)  # the same length, other functions
        np.testing.assert_allclose(f(X), 2 * X + np.cos(X))
    finally:
        HOOKS = (np.sin,)


def test_without_column_positions_an_ambiguous_line_is_refused(monkeypatch):
    a = PAIR[0]  # PAIR holds two lambdas of one parameter on one line

    class NoPositions:  # a code object as Python 3.10 has it: no co_positions
        def __init__(self, code):
            self._code = code

        def __getattr__(self, name):
            if name == "co_positions":
                raise AttributeError(name)
            return getattr(self._code, name)

    from s2sgrad.compiler import parse as parse_module
    with pytest.raises(TransformError, match="2 lambdas with its parameters are on line"):
        parse_module._lambda_def(NoPositions(a.__code__), "<lambda>")
    node = parse_module._lambda_def(NoPositions(square.__code__), "<lambda>")
    assert node.name == "square"
