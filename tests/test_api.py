"""The functional API: gradient, value_and_grad, vjp, @grad, show; caching, live globals,
user rules, generated-code tracebacks and debug output."""

import functools
import linecache
import traceback

import numpy as np
import pytest

import s2sgrad
from s2sgrad.compiler import pipeline
from s2sgrad.testing import check_grads, numeric_gradient
from tests.cases import api_cases as cases

rng = np.random.default_rng(0)
W, X, Y = rng.standard_normal(3), rng.standard_normal((5, 3)), rng.standard_normal(5)


def test_gradient_single_and_tuple_wrt():
    g = s2sgrad.gradient(cases.tanh_regression)(W, X, Y)
    np.testing.assert_allclose(g, numeric_gradient(cases.tanh_regression, (W, X, Y), 0), rtol=1e-6)
    gw, gy = s2sgrad.gradient(cases.tanh_regression, wrt=(0, 2))(W, X, Y)
    np.testing.assert_allclose(gw, g, rtol=1e-12)
    np.testing.assert_allclose(gy, numeric_gradient(cases.tanh_regression, (W, X, Y), 2),
                               rtol=1e-6)


def test_negative_wrt_counts_from_the_end():
    g = s2sgrad.gradient(cases.tanh_regression, wrt=-1)(W, X, Y)
    np.testing.assert_allclose(g, numeric_gradient(cases.tanh_regression, (W, X, Y), 2), rtol=1e-6)


def test_value_and_grad_returns_the_value():
    value, g = s2sgrad.value_and_grad(cases.tanh_regression, wrt=1)(W, X, Y)
    assert value == pytest.approx(cases.tanh_regression(W, X, Y), rel=1e-15)
    assert g.shape == X.shape


def test_vjp_gives_a_cotangent_per_argument():
    out, pullback = s2sgrad.vjp(cases.mutating_free, X, 2.5)
    assert out == pytest.approx(cases.mutating_free(X, 2.5))
    gx, gy = pullback(1.0)
    np.testing.assert_allclose(gx, numeric_gradient(cases.mutating_free, (X, 2.5), 0), rtol=1e-6)
    assert gy == pytest.approx(numeric_gradient(cases.mutating_free, (X, 2.5), 1), rel=1e-6)


def test_vjp_marks_non_float_arguments_with_none():
    _, pullback = s2sgrad.vjp(cases.with_defaults, X, 2.0, 3)
    gx, gscale, gpower = pullback(1.0)
    assert gpower is None
    assert gscale == pytest.approx(np.sum(X ** 3))
    np.testing.assert_allclose(gx, 2.0 * 3 * X ** 2)


def test_python_floats_in_python_floats_out():
    ga, gb = s2sgrad.gradient(cases.scalar_chain, wrt=(0, 1))(1.3, 0.7)
    assert isinstance(ga, float) and isinstance(gb, float)
    assert ga == pytest.approx(numeric_gradient(cases.scalar_chain, (1.3, 0.7), 0), rel=1e-7)
    assert gb == pytest.approx(numeric_gradient(cases.scalar_chain, (1.3, 0.7), 1), rel=1e-7)


def test_float32_stays_float32():
    g = s2sgrad.gradient(cases.tanh_regression, wrt=(0, 1))(
        W.astype(np.float32), X.astype(np.float32), Y.astype(np.float32))
    assert g[0].dtype == np.float32 and g[1].dtype == np.float32


def test_inputs_are_not_modified():
    w, x, y = W.copy(), X.copy(), Y.copy()
    s2sgrad.gradient(cases.tanh_regression, wrt=(0, 1, 2))(w, x, y)
    assert np.array_equal(w, W) and np.array_equal(x, X) and np.array_equal(y, Y)


def test_defaults_and_keywords():
    check_grads(cases.with_defaults, X)
    g = s2sgrad.gradient(cases.with_defaults)(X, scale=0.5, power=3)
    np.testing.assert_allclose(g, 0.5 * 3 * X ** 2, rtol=1e-12)


def test_callees_are_differentiated_through_their_source():
    check_grads(cases.uses_helper, X, X * 0.5)


def test_transformed_once_per_signature(monkeypatch):
    calls = []
    real = pipeline._run_passes

    def counting(*args):
        calls.append(args[0].__name__)
        return real(*args)

    monkeypatch.setattr(pipeline, "_run_passes", counting)

    def cubic(x):
        return np.sum(x ** 3)

    f = s2sgrad.gradient(cubic)
    for _ in range(3):
        f(X)
    f(X + 1.0)  # same kinds and ranks: no new transform
    assert calls == ["cubic"]
    f(W)  # another rank: one more specialisation
    f(1.5)  # a Python float: one more
    assert calls == ["cubic"] * 3


def test_globals_are_read_live(monkeypatch):
    g1 = s2sgrad.gradient(cases.scaled)(X)
    monkeypatch.setattr(cases, "SCALE", 5.0)
    g2 = s2sgrad.gradient(cases.scaled)(X)
    np.testing.assert_allclose(g1, 2.0 * 2 * X)
    np.testing.assert_allclose(g2, 5.0 * 2 * X)


def test_closures():
    f = cases.make_scaled_by(3.0)
    np.testing.assert_allclose(s2sgrad.gradient(f)(X), 3.0 * 2 * X)
    check_grads(f, X)


def test_user_rule_takes_precedence_over_the_source():
    @s2sgrad.vjp_rule(cases.straight_through, shape="elementwise")
    def straight_through_vjp(g, ans, x):
        return g

    x = np.array([0.1, 0.4, 0.9])
    g = s2sgrad.gradient(cases.uses_straight_through)(x)
    np.testing.assert_allclose(g, cases.straight_through(x) + x)


def test_nondifferentiable_user_function_stops_the_gradient():
    s2sgrad.nondifferentiable(cases.stopped)
    g = s2sgrad.gradient(cases.uses_stopped)(X)
    np.testing.assert_allclose(g, X)  # only the direct use of x contributes


def test_grad_decorator_calls_like_the_original():
    f = s2sgrad.grad(cases.tanh_regression)
    assert f(W, X, Y) == cases.tanh_regression(W, X, Y)
    assert isinstance(f, s2sgrad.Function)
    assert f.__name__ == "tanh_regression"
    assert "def tanh_regression_backward(" in f.adjoint_source
    assert "def tanh_regression_forward(" in f.forward_source
    assert s2sgrad.gradient(f)(W, X, Y).shape == W.shape


def test_methods():
    model = cases.Model(3.0)
    f = s2sgrad.grad(cases.Model.loss)
    np.testing.assert_allclose(s2sgrad.gradient(f, wrt=1)(model, X), 3.0 * np.cos(X))
    check_grads(model.loss, X)


def test_adjoint_source_shows_the_last_specialisation():
    f = s2sgrad.grad(cases.tanh_regression)
    s2sgrad.gradient(f, wrt=0)(W, X, Y)
    source = f.adjoint_source
    assert "# adjoint of: h = np.tanh(x @ w)" in source
    assert "w_bar" in source and "x_bar" not in source


def test_show_prints_both_functions(capsys):
    s2sgrad.gradient(cases.scalar_chain)(1.0, 2.0)
    s2sgrad.show(cases.scalar_chain)
    printed = capsys.readouterr().out
    assert "def scalar_chain_forward(a, b):" in printed
    assert "def scalar_chain_backward(saved, out_bar):" in printed


def test_traceback_inside_the_adjoint_shows_generated_code():
    _, pullback = s2sgrad.vjp(cases.fails_in_backward, X ** 2 + 1.0)
    with pytest.raises(TypeError) as info:
        pullback("not a number")
    frames = traceback.extract_tb(info.tb)
    generated = [f for f in frames if f.filename.startswith("<s2sgrad fails_in_backward")]
    assert generated, [f.filename for f in frames]
    assert generated[-1].line  # linecache knows the generated source
    assert linecache.getline(generated[-1].filename, generated[-1].lineno).strip() \
        == generated[-1].line


def test_debug_prints_generated_source(monkeypatch, capsys):
    monkeypatch.setenv("S2SGRAD_DEBUG", "1")

    def quartic(x):
        return np.sum(x ** 4)

    s2sgrad.gradient(quartic)(X)
    err = capsys.readouterr().err
    assert "def quartic_backward(saved, out_bar):" in err


def test_debug_level_two_prints_every_pass(monkeypatch, capsys):
    monkeypatch.setenv("S2SGRAD_DEBUG", "2")

    def quintic(x):
        return np.sum(x ** 5)

    s2sgrad.gradient(quintic)(X)
    err = capsys.readouterr().err
    for stage in ("after normalize", "after analyze", "after reverse"):
        assert stage in err


def test_gradient_of_unused_input_is_zero():
    def first(x, y):
        return np.sum(x ** 2)

    gx, gy = s2sgrad.gradient(first, wrt=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, 2 * X)
    assert gy.shape == Y.shape and not gy.any()
    assert s2sgrad.gradient(first, wrt=1)(X, 2.0) == 0.0


def test_callee_with_varargs_and_keywords():
    x, y = np.array([0.3, -0.5]), np.array([1.2, 0.4])
    check_grads(cases.uses_varargs, x, y)
    gx, gy = s2sgrad.gradient(cases.uses_varargs, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 0.5 * 2 * x + 2 * x, rtol=1e-12)
    np.testing.assert_allclose(gy, 0.5 * 2 * (2.0 * y) * 2.0, rtol=1e-12)


def test_plain_call_needs_no_source():
    namespace = {"np": np}
    exec("def f(x):\n    return np.sum(x * 2.0)\n", namespace)
    f = s2sgrad.grad(namespace["f"])
    assert f(np.ones(3)) == 6.0  # runs the original: nothing to differentiate


def _total(p):
    return 0.0


@pytest.mark.parametrize("value,words", [
    (np.arange(3), "argument 0 ('p') is an integer or boolean value (int64)"),
    (np.array([True, False]), "is an integer or boolean value (bool)"),
    ("label", "argument 0 ('p') is a str; only floats"),
    ({"w": np.ones(2), "act": np.sin}, "argument 0 ('p') holds at p['act'] a ufunc"),
    ({"w": np.ones(2), "steps": np.arange(2)}, "holds at p['steps'] an integer or boolean"),
    ([np.ones(2), (np.ones(2), "tag")], "holds at p[1][1] a str"),
    ({1: np.ones(2)}, "is a dict with keys that are not strings"),
], ids=["int", "bool", "str", "function_leaf", "int_leaf", "nested_str",
        "int_keys"])
def test_what_cannot_be_differentiated_is_named_where_it_is(value, words):
    with pytest.raises(TypeError) as info:
        s2sgrad.gradient(_total)(value)
    assert words in str(info.value), str(info.value)


def test_the_sources_shown_are_the_last_pairs_after_a_jvp():
    f = s2sgrad.grad(cases.tanh_regression)
    s2sgrad.gradient(f, wrt=0)(W, X, Y)
    s2sgrad.jvp(f, (W, X, Y), (np.ones_like(W), np.zeros_like(X), np.zeros_like(Y)))
    assert "# adjoint of: h = np.tanh(x @ w)" in f.adjoint_source
    assert "def " in f.forward_source


# --- library functions and partials, differentiated directly ---------------------------------


def _scaled_norm(x, k=1.0, *, power=2.0):
    return k * np.sum(np.abs(x) ** power)


SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.8]])


@pytest.mark.parametrize("fn,arg", [
    (np.linalg.det, SPD), (np.sin, np.array(0.3)), (np.tanh, 0.4),
    (np.sum, np.array([[0.3, 1.2], [-0.5, 2.0]])), (np.linalg.slogdet, SPD),
    (functools.partial(np.sum, axis=(0, 1)), np.array([[0.3, 1.2], [-0.5, 2.0]])),
    (functools.partial(_scaled_norm, k=2.0), np.array([0.3, -1.2, 0.7])),
    (functools.partial(_scaled_norm, power=3.0), np.array([0.3, -1.2, 0.7])),
    (functools.partial(_scaled_norm, np.array([0.5, 1.0, 2.0])), 1.5),
    (functools.partial(functools.partial(_scaled_norm, k=0.5), power=3.0),
     np.array([0.3, -1.2, 0.7])),
], ids=["det", "sin", "tanh-float", "sum", "slogdet-value", "partial-np.sum",
        "partial-keyword", "partial-keyword-only", "partial-positional", "partial-of-partial"])
def test_library_functions_and_partials_are_differentiated(fn, arg):
    if fn is np.linalg.slogdet:  # its value is a pair: the gradient of the log |det|
        def fn(a):
            return np.linalg.slogdet(a)[1]
    expected = fn(arg)
    value, g = s2sgrad.value_and_grad(fn)(arg)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(g, s2sgrad.gradient(fn)(arg), rtol=1e-12)
    np.testing.assert_allclose(g, numeric_gradient(fn, (arg,), 0), rtol=1e-6, atol=1e-8)
    check_grads(fn, arg, modes=("rev", "fwd"), order=2)


def test_gradient_of_det_is_the_cofactor_matrix():
    g = s2sgrad.gradient(np.linalg.det)(SPD)
    np.testing.assert_allclose(g, np.linalg.det(SPD) * np.linalg.inv(SPD).T, rtol=1e-12)


def test_gradient_of_a_partial_leaves_its_held_arguments_as_they_are():
    held = np.array([0.5, 1.0, 2.0])
    fn = functools.partial(_scaled_norm, held)  # k moves; the held array does not
    np.testing.assert_allclose(s2sgrad.gradient(fn)(1.5), np.sum(held ** 2))
    np.testing.assert_array_equal(held, [0.5, 1.0, 2.0])
    hess = s2sgrad.hessian(functools.partial(_scaled_norm, k=3.0))(np.array([0.3, -1.2]))
    np.testing.assert_allclose(hess, np.diag([6.0, 6.0]), rtol=1e-12)
