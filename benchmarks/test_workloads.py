"""Checks of the benchmark workloads and harness (no timing is asserted).

The hand-written gradients are the baseline every library is compared against, so they are
checked here against central finite differences; the per-library factories are checked to
compute the same function as the literal one s2sgrad reads. Run with ``pytest benchmarks``.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import types

import numpy as np
import pytest

from s2sgrad.testing import EPS, central_difference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads as W

# --- scalar -----------------------------------------------------------------------------------


def scalar_points():
    rng = np.random.default_rng(1234)
    points = [W.scalar_inputs(), (0.0, 0.0, 0.0, 0.0), (1.0, 1.0, 1.0, 1.0)]
    points += [tuple(float(v) for v in rng.uniform(-2.0, 2.0, 4)) for _ in range(25)]
    return points


@pytest.mark.parametrize("point", scalar_points())
def test_scalar_gradient_matches_finite_differences(point):
    value, grads = W.scalar_value_and_grad(*point)
    assert value == pytest.approx(W.scalar_fn(*point), rel=1e-13, abs=1e-13)
    assert len(grads) == 4
    for i, g in enumerate(grads):
        fd = central_difference(W.scalar_fn, point, i, 1.0)
        assert g == pytest.approx(fd, rel=1e-6, abs=1e-7), f"d/d arg {i} at {point}"


def test_scalar_factory_is_the_same_function():
    fn = W.make_scalar_fn(math)
    for point in scalar_points():
        assert fn(*point) == W.scalar_fn(*point)


def test_scalar_fn_has_about_a_hundred_operations_and_no_loops():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(W.scalar_fn))
    ops = [n for n in ast.walk(tree) if isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Call))
           and not (isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Constant))]
    assert len(ops) == 114
    assert not any(isinstance(n, (ast.For, ast.While, ast.comprehension)) for n in ast.walk(tree))


# --- logistic and mlp -------------------------------------------------------------------------


def check_array_gradient(fn, hand, args, wrt, seed, eps=EPS):
    value, grads = hand(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert len(grads) == len(wrt)
    rng = np.random.default_rng(seed)
    for i, g in zip(wrt, grads):
        assert np.shape(g) == np.shape(args[i])
        for _ in range(3):  # random directions cover every entry at once
            direction = rng.standard_normal(np.shape(args[i]))
            fd = central_difference(fn, args, i, direction, eps=eps)
            assert np.sum(g * direction) == pytest.approx(fd, rel=1e-6, abs=1e-9)
        flat = np.ravel(g)
        for k in rng.choice(flat.size, size=min(3, flat.size), replace=False):
            unit = np.zeros(flat.size)
            unit[k] = 1.0
            fd = central_difference(fn, args, i, unit.reshape(np.shape(g)), eps=eps)
            assert flat[k] == pytest.approx(fd, rel=1e-5, abs=1e-9)


def test_logistic_gradient_matches_finite_differences():
    args = W.logistic_inputs()
    check_array_gradient(W.logistic_loss, W.logistic_value_and_grad, args, W.WRT["logistic"], 0)


def test_logistic_gradient_with_large_margins():
    # |z| from 2 to ~150: exp(|z|) would overflow a naive form.
    w, _, X, y = W.logistic_inputs(seed=3, n=50, d=5)
    args = (300.0 * w, -2.0, X, y)
    value, (gw, gb) = W.logistic_value_and_grad(*args)
    assert np.isfinite(value) and np.all(np.isfinite(gw)) and np.isfinite(gb)
    # The loss is ~25 here and nearly linear in w: a larger step keeps rounding out of the
    # difference quotient.
    check_array_gradient(W.logistic_loss, W.logistic_value_and_grad, args, W.WRT["logistic"], 1,
                         eps=1e-3)


def test_mlp_gradient_matches_finite_differences():
    args = W.mlp_inputs(batch=16, d_in=12, d_hidden=7, d_out=5)
    check_array_gradient(W.mlp_loss, W.mlp_value_and_grad, args, W.WRT["mlp"], 2)


def test_mlp_hand_gradient_does_not_modify_inputs():
    args = W.mlp_inputs(batch=8, d_in=6, d_hidden=4, d_out=3)
    copies = [np.copy(a) for a in args]
    W.mlp_value_and_grad(*args)
    W.logistic_value_and_grad(*W.logistic_inputs(n=20, d=4))
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mixture_gradient_matches_finite_differences(seed):
    args = W.mixture_inputs(seed=seed, n=40)
    # where(x > 0, a, b) jumps at x = 0: no x within reach of the differences' steps
    assert np.min(np.abs(args[0])) > 1e-3
    check_array_gradient(W.mixture_loss, W.mixture_value_and_grad, args, W.WRT["mixture"], seed)


def test_mixture_gradient_on_both_sides_of_the_switch():
    # x spans both branches and y the sign changes of sin(3y) and cos(3y)
    x = np.linspace(-2.0, 2.0, 9) + 0.05
    y = np.linspace(-1.5, 1.5, 9)
    check_array_gradient(W.mixture_loss, W.mixture_value_and_grad, (x, y), W.WRT["mixture"], 3)


def test_mixture_hand_gradient_does_not_modify_inputs():
    args = W.mixture_inputs(n=50)
    copies = [np.copy(a) for a in args]
    _, (gx, gy) = W.mixture_value_and_grad(*args)
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)
    assert not np.shares_memory(gx, gy)


@pytest.mark.parametrize("name", ["logistic", "mlp", "mixture"])
def test_array_factories_are_the_same_function(name):
    fn = getattr(W, f"{name}_loss")
    made = getattr(W, f"make_{name}_loss")(np)
    args = getattr(W, f"{name}_inputs")()
    assert made(*args) == fn(*args)


def test_compile_probe_runs_on_its_inputs():
    value = W.compile_probe(*W.compile_probe_inputs())
    assert np.ndim(value) == 0 and np.isfinite(value)


def test_rnn_gradient_matches_finite_differences():
    args = W.rnn_inputs(steps=7, d_hidden=5, d_in=3)
    check_array_gradient(W.rnn_loss, W.rnn_value_and_grad, args, W.WRT["rnn"], 5)


def test_rnn_factory_is_the_same_function():
    args = W.rnn_inputs(steps=9, d_hidden=6, d_in=4)
    assert W.make_rnn_loss(np)(*args) == W.rnn_loss(*args)


# --- forward mode and second order: hand-written jvp and hvp ----------------------------------

SMALL = {
    "mlp": lambda seed=0: W.mlp_inputs(seed=seed, batch=16, d_in=12, d_hidden=7, d_out=5),
    "rnn": lambda seed=0: W.rnn_inputs(seed=seed, steps=8, d_hidden=6, d_in=4),
}


def _parts(name):
    return (getattr(W, f"{name}_loss"), getattr(W, f"{name}_value_and_grad"),
            getattr(W, f"{name}_jvp"), getattr(W, f"{name}_hvp"))


def _moved(args, tangents, step):
    """args with every moving input shifted by step * its tangent."""
    return tuple(a if t is None else a + step * t for a, t in zip(args, tangents))


def _along(fn, args, tangents, eps=EPS):
    """Central difference of fn (a scalar or a tuple of arrays) along all tangents at once."""
    plus, minus = fn(*_moved(args, tangents, eps)), fn(*_moved(args, tangents, -eps))
    if isinstance(plus, tuple):
        return tuple((p - m) / (2 * eps) for p, m in zip(plus, minus))
    return (plus - minus) / (2 * eps)


@pytest.mark.parametrize("name", ["mlp", "rnn"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hand_jvp_matches_finite_differences(name, seed):
    fn, _, jvp, _ = _parts(name)
    args = SMALL[name](seed)
    tangents = W.tangents_for(args, W.WRT[name], seed=10 + seed)
    value, value_dot = jvp(*args, *[t for t in tangents if t is not None])
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert value_dot == pytest.approx(_along(fn, args, tangents), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("name", ["mlp", "rnn"])
def test_hand_jvp_moves_one_parameter_at_a_time(name):
    # a tangent that is zero except in one parameter: d value = <gradient of it, tangent>
    fn, vg, jvp, _ = _parts(name)
    args = SMALL[name]()
    full = W.tangents_for(args, W.WRT[name], seed=3)
    _, grads = vg(*args)
    for k, i in enumerate(W.WRT[name]):
        tangents = [None if t is None else np.zeros_like(t) for t in full]
        tangents[i] = full[i]
        _, value_dot = jvp(*args, *[t for t in tangents if t is not None])
        assert value_dot == pytest.approx(np.vdot(grads[k], full[i]), rel=1e-10, abs=1e-13)
        assert value_dot == pytest.approx(_along(fn, args, tangents), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("name", ["mlp", "rnn"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hand_hvp_matches_finite_differences_of_the_gradient(name, seed):
    _, vg, _, hvp = _parts(name)
    args = SMALL[name](seed)
    tangents = W.tangents_for(args, W.WRT[name], seed=20 + seed)
    hv = hvp(*args, *[t for t in tangents if t is not None])
    fd = _along(lambda *a: vg(*a)[1], args, tangents)
    assert len(hv) == len(fd) == len(W.WRT[name])
    for k, (h, f) in enumerate(zip(hv, fd)):
        assert np.shape(h) == np.shape(args[W.WRT[name][k]])
        scale = max(1.0, float(np.max(np.abs(f))))
        np.testing.assert_allclose(h, f, rtol=1e-5, atol=1e-7 * scale, err_msg=f"block {k}")


@pytest.mark.parametrize("name", ["mlp", "rnn"])
def test_hand_hvp_is_symmetric(name):
    # <u, H v> = <v, H u>: the Hessian is symmetric
    _, _, _, hvp = _parts(name)
    args = SMALL[name]()
    u = [t for t in W.tangents_for(args, W.WRT[name], seed=4) if t is not None]
    v = [t for t in W.tangents_for(args, W.WRT[name], seed=5) if t is not None]
    uhv = sum(np.vdot(a, b) for a, b in zip(u, hvp(*args, *v)))
    vhu = sum(np.vdot(a, b) for a, b in zip(v, hvp(*args, *u)))
    assert uhv == pytest.approx(vhu, rel=1e-10)


@pytest.mark.parametrize("name", ["mlp", "rnn"])
def test_hand_derivatives_do_not_modify_inputs(name):
    _, vg, jvp, hvp = _parts(name)
    args = SMALL[name]()
    tangents = [t for t in W.tangents_for(args, W.WRT[name]) if t is not None]
    everything = (*args, *tangents)
    copies = [np.copy(a) for a in everything]
    vg(*args)
    jvp(*everything)
    hvp(*everything)
    for a, c in zip(everything, copies):
        np.testing.assert_array_equal(a, c)


def test_tangents_for_leaves_the_data_fixed():
    args = W.mlp_inputs(batch=4, d_in=3, d_hidden=2, d_out=2)
    tangents = W.tangents_for(args, W.WRT["mlp"])
    assert [t is None for t in tangents] == [False, False, False, False, True, True]
    assert all(np.shape(t) == np.shape(a) for a, t in zip(args, tangents) if t is not None)


@pytest.mark.parametrize("name", ["mlp", "rnn"])
def test_s2sgrad_jvp_and_hvp_agree_with_hand_written(name):
    sg = pytest.importorskip("s2sgrad")
    if not (hasattr(sg, "jvp") and hasattr(sg, "hvp")):
        pytest.skip("this s2sgrad has no jvp/hvp")
    fn, _, jvp, hvp = _parts(name)
    args = SMALL[name]()
    tangents = W.tangents_for(args, W.WRT[name], seed=7)
    moving = [t for t in tangents if t is not None]
    value, value_dot = sg.jvp(fn, args, tangents)
    ref_value, ref_dot = jvp(*args, *moving)
    assert value == pytest.approx(ref_value, rel=1e-12)
    assert value_dot == pytest.approx(ref_dot, rel=1e-9, abs=1e-12)
    got = sg.hvp(fn, args, tangents)
    assert isinstance(got, tuple) and len(got) == len(moving)
    for g, r in zip(got, hvp(*args, *moving)):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12)


# --- peers, when installed: the factories give each library the same function ---------------


def test_autograd_versions_agree_with_hand_written():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    cases = [
        (W.make_scalar_fn, W.scalar_value_and_grad, W.scalar_inputs(), W.WRT["scalar"]),
        (W.make_logistic_loss, W.logistic_value_and_grad, W.logistic_inputs(n=50, d=5),
         W.WRT["logistic"]),
        (W.make_mlp_loss, W.mlp_value_and_grad, W.mlp_inputs(batch=8, d_in=6, d_hidden=4,
                                                            d_out=3), W.WRT["mlp"]),
        (W.make_mixture_loss, W.mixture_value_and_grad, W.mixture_inputs(n=30),
         W.WRT["mixture"]),
    ]
    for make, hand, args, wrt in cases:
        value, grads = autograd.value_and_grad(make(anp), argnum=wrt)(*args)
        ref_value, ref_grads = hand(*args)
        assert value == pytest.approx(ref_value, rel=1e-12)
        for g, r in zip(grads, ref_grads):
            np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12)


def test_torch_and_jax_mixtures_agree_with_hand_written():
    # the factory serves PyTorch and JAX as it is (no make_torch_ version)
    args = W.mixture_inputs(n=30)
    ref_value, ref_grads = W.mixture_value_and_grad(*args)
    torch = pytest.importorskip("torch")
    leaves = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]
    out = W.make_mixture_loss(torch)(*leaves)
    assert out.item() == pytest.approx(ref_value, rel=1e-12)
    for g, r in zip(torch.autograd.grad(out, leaves), ref_grads):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-9, atol=1e-12)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    value, grads = jax.value_and_grad(W.make_mixture_loss(jax.numpy), argnums=(0, 1))(*args)
    assert float(value) == pytest.approx(ref_value, rel=1e-12)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(np.asarray(g), r, rtol=1e-9, atol=1e-12)


# --- the harness --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def harness():
    """benchmarks/run.py as a module; its thread settings are undone afterwards."""
    saved = dict(os.environ)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py")
    spec = importlib.util.spec_from_file_location("benchmarks_run", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]
    os.environ.clear()
    os.environ.update(saved)


def fake_s2sgrad(harness, scale=1.0, fail=False):
    """A stand-in s2sgrad whose value_and_grad is the hand-written gradient (times scale)."""
    hands = {W.scalar_fn: W.scalar_value_and_grad, W.logistic_loss: W.logistic_value_and_grad,
             W.mlp_loss: W.mlp_value_and_grad, W.horner: W.horner_value_and_grad,
             W.index_loop: W.index_loop_value_and_grad, W.ode_loop: W.ode_loop_value_and_grad,
             W.mixture_loss: W.mixture_value_and_grad, W.nn_mlp_loss: W.nn_mlp_value_and_grad}

    def value_and_grad(fn, wrt=0):
        def run(*args):
            if fail:
                raise RuntimeError("cannot differentiate")
            value, grads = hands[fn](*args)
            return value, tuple(np.multiply(g, scale) for g in grads)

        return run

    module = types.SimpleNamespace(value_and_grad=value_and_grad, __version__="test")
    return harness.Library("s2sgrad", "s2sgrad test", module)


def run_scalar(harness, lib, capsys):
    status = {}
    wl = next(w for w in harness.build_workloads() if w.name == "scalar")
    harness.run_workload(wl, [lib], min_time=0.002, batches=2, status=status)
    return status, capsys.readouterr().out


def test_harness_accepts_a_matching_gradient(harness, capsys):
    status, out = run_scalar(harness, fake_s2sgrad(harness), capsys)
    assert status == {}
    assert "verdict scalar: s2sgrad value+grad =" in out


def test_harness_flags_a_wrong_gradient(harness, capsys):
    status, out = run_scalar(harness, fake_s2sgrad(harness, scale=1.001), capsys)
    assert status.get("s2sgrad_mismatch")
    assert "GRADIENT MISMATCH" in out and "disagrees with the hand-written one" in out


def test_harness_reports_an_error_in_the_table(harness, capsys):
    status, out = run_scalar(harness, fake_s2sgrad(harness, fail=True), capsys)
    assert status.get("s2sgrad_error")
    assert "error: RuntimeError: cannot differentiate" in out


def test_harness_shows_unavailable_libraries(harness, capsys):
    lib = harness.Library("s2sgrad", "s2sgrad", None, "unavailable: no value_and_grad yet")
    status, out = run_scalar(harness, lib, capsys)
    assert status == {}
    assert "unavailable: no value_and_grad yet" in out


def small_mixture(harness, n=1000):
    wl = next(w for w in harness.build_workloads() if w.name == "mixture")
    wl.inputs = W.mixture_inputs(n=n)
    return wl


def test_harness_mixture_table_with_a_stand_in(harness, capsys):
    torch = harness.Library("torch", "PyTorch", None, "not installed")
    status = {}
    rows = harness.run_workload(small_mixture(harness), [fake_s2sgrad(harness), torch],
                                min_time=0.002, batches=2, status=status)
    out = capsys.readouterr().out
    assert status == {}, out
    assert [r.label for r in rows] == ["NumPy, hand-written gradient", "s2sgrad test", "PyTorch",
                                       "PyTorch (compile)"]
    assert rows[1].vg is not None and rows[3].note == "not installed"
    assert "verdict mixture: s2sgrad value+grad =" in out and "(target <= 1.1x)" in out


def test_harness_flags_a_wrong_mixture_gradient(harness, capsys):
    status = {}
    harness.run_workload(small_mixture(harness), [fake_s2sgrad(harness, scale=1.001)],
                         min_time=0.002, batches=2, status=status)
    assert status.get("s2sgrad_mismatch")
    assert "GRADIENT MISMATCH" in capsys.readouterr().out


def test_torch_compile_row_is_left_out_of_quick_runs(harness):
    torch = pytest.importorskip("torch")
    lib = harness.Library("torch", "PyTorch (eager)", torch)
    wl = small_mixture(harness)
    compiled = harness.table_libraries(wl, [lib], compile_torch=False)[1]
    assert compiled.name == "torch-compile" and compiled.module is None
    assert compiled.reason == harness.TORCH_COMPILE_QUICK
    with pytest.raises(harness.Unavailable, match="not run with --quick"):
        harness.make_impl(compiled, wl)
    others = next(w for w in harness.build_workloads() if w.name == "logistic")
    assert harness.table_libraries(others, [lib]) == [lib]


def test_torch_compile_without_a_compiler_is_unavailable(harness):
    pytest.importorskip("torch")
    from torch._inductor import config
    from torch._inductor.cpp_builder import cpp_compiler_search

    lib = harness.Library("torch-compile", "PyTorch (compile)", sys.modules["torch"])
    cpp_compiler_search.cache_clear()
    try:
        with (config.patch({"cpp.cxx": ("no-such-c++-compiler",)}),
              pytest.raises(harness.Unavailable) as caught):
            harness.make_impl(lib, small_mixture(harness, n=10))
    finally:
        cpp_compiler_search.cache_clear()
    message = str(caught.value)
    assert message.startswith("not available: inductor finds no C++ compiler")
    assert "\n" not in message


def test_torch_compile_row_gives_the_hand_written_gradient(harness):
    # compiles two small graphs with inductor: seconds, more on a cold cache
    torch = pytest.importorskip("torch")
    wl = small_mixture(harness, n=200)
    try:
        impl = harness.torch_compile_impl(torch, wl)
    except harness.Unavailable as exc:
        pytest.skip(str(exc))
    ref = harness._plain(wl.hand(*wl.inputs))
    assert harness.compare(ref, impl.to_numpy(impl.value_and_grad())) == ""
    assert float(impl.forward()) == pytest.approx(ref[0], rel=1e-12)
    assert impl.note.startswith("(compile: ")


@pytest.fixture
def jax_x64():
    """JAX in float64 (as ``load_libraries`` sets it), restored afterwards."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", before)


def jax_jit_library(harness, jax):
    return harness.Library("jax", "JAX (jit)", jax, extra={"jit": True, "np": jax.numpy})


def scaled_s2sgrad(harness, scale):
    """s2sgrad whose value_and_grad scales the gradients it returns (a wrong result)."""
    import s2sgrad

    def value_and_grad(fn, wrt=0):
        vg = s2sgrad.value_and_grad(fn, wrt=wrt)

        def run(*args):
            value, grads = vg(*args)
            return value, tuple(g * scale for g in grads)

        return run

    module = types.SimpleNamespace(value_and_grad=value_and_grad, __version__="test")
    return harness.Library("s2sgrad", "s2sgrad test", module)


def test_s2sgrad_jax_row_gives_the_hand_written_gradient(harness, jax_x64, capsys):
    wl = small_mixture(harness, n=300)
    libs = [scaled_s2sgrad(harness, 1.0), harness.Library("torch", "PyTorch", None,
                                                          "not installed"),
            jax_jit_library(harness, jax_x64)]
    row_lib = harness.table_libraries(wl, libs)[-1]
    assert row_lib.name == "s2sgrad-jax" and row_lib.label == "s2sgrad test in jax.jit (XLA)"
    impl = harness.make_impl(row_lib, wl)
    out = impl.value_and_grad()
    assert all(isinstance(g, jax_x64.Array) for g in out[1])
    ref = harness._plain(wl.hand(*wl.inputs))
    assert harness.compare(ref, impl.to_numpy(out)) == ""
    assert float(impl.forward()) == pytest.approx(ref[0], rel=1e-12)

    status = {}
    rows = harness.run_workload(wl, libs, min_time=0.002, batches=2, status=status)
    printed = capsys.readouterr().out
    assert status == {}, printed
    row = next(r for r in rows if r.label == row_lib.label)
    assert row.vg is not None and row.paired is not None
    line = next(ln for ln in printed.splitlines() if ln.startswith("s2sgrad in jax.jit"))
    assert "x hand-written" in line and "x s2sgrad on NumPy" in line
    assert "PyTorch (compile) not measured (not installed)" in line


def test_harness_flags_a_wrong_gradient_in_the_s2sgrad_jax_row(harness, jax_x64, capsys):
    status = {}
    rows = harness.run_workload(small_mixture(harness),
                                [scaled_s2sgrad(harness, 1.001), jax_jit_library(harness, jax_x64)],
                                min_time=0.002, batches=2, status=status)
    out = capsys.readouterr().out
    assert status.get("s2sgrad_mismatch")
    assert "s2sgrad test in jax.jit (XLA) on mixture: gradient disagrees" in out
    assert rows[-1].note == "GRADIENT MISMATCH, not timed" and rows[-1].vg is None


def test_s2sgrad_jax_row_without_jax_reads_unavailable(harness, capsys):
    jax = harness.Library("jax", "JAX (jit)", None, "not installed", {"jit": True})
    libs = [fake_s2sgrad(harness), jax]
    wl = small_mixture(harness)
    row_lib = harness.table_libraries(wl, libs)[-1]
    assert row_lib.name == "s2sgrad-jax" and row_lib.module is None
    with pytest.raises(harness.Unavailable, match="unavailable: JAX not installed"):
        harness.make_impl(row_lib, wl)
    status = {}
    rows = harness.run_workload(wl, libs, min_time=0.002, batches=2, status=status)
    assert status == {}
    assert rows[-1].note == "unavailable: JAX not installed"
    assert "s2sgrad in jax.jit on mixture: not measured" in capsys.readouterr().out
    # only the workloads that ask for it get the row
    logistic = next(w for w in harness.build_workloads() if w.name == "logistic")
    assert harness.table_libraries(logistic, libs) == libs


def test_compare_reports_shape_and_value_differences(harness):
    ref = (1.0, (np.zeros(3),))
    assert harness.compare(ref, (1.0, (np.zeros(3),))) == ""
    assert "shape" in harness.compare(ref, (1.0, (np.zeros(4),)))
    assert "value" in harness.compare(ref, (1.5, (np.zeros(3),)))
    assert "grad[0]" in harness.compare(ref, (1.0, (np.ones(3),)))


# --- the harness: forward mode and second order ------------------------------------------------


def small_second_order(harness, name):
    """The harness's ``name`` table (mlp-jvp, rnn-hvp, ...) on small inputs."""
    so = next(w for w in harness.build_second_order() if w.name == name)
    model = name.split("-")[0]
    so.inputs = SMALL[model]()
    so.tangents = W.tangents_for(so.inputs, W.WRT[model])
    return so


def fake_s2sgrad_second(harness, scale=1.0, fail=False, missing=False):
    """A stand-in s2sgrad whose jvp and hvp are the hand-written ones (times scale)."""
    hands = {W.mlp_loss: (W.mlp_jvp, W.mlp_hvp), W.rnn_loss: (W.rnn_jvp, W.rnn_hvp)}

    def jvp(fn, primals, tangents):
        if fail:
            raise RuntimeError("cannot differentiate")
        value, dot = hands[fn][0](*primals, *[t for t in tangents if t is not None])
        return value, dot * scale

    def hvp(fn, primals, tangents):
        if fail:
            raise RuntimeError("cannot differentiate")
        return tuple(h * scale for h in
                     hands[fn][1](*primals, *[t for t in tangents if t is not None]))

    module = types.SimpleNamespace(value_and_grad=None, __version__="test")
    if not missing:
        module.jvp, module.hvp = jvp, hvp
    return harness.Library("s2sgrad", "s2sgrad test", module)


def run_small(harness, name, libs, capsys):
    status = {}
    harness.run_second_order(small_second_order(harness, name), libs, min_time=0.002,
                             batches=2, status=status, forwards={})
    return status, capsys.readouterr().out


@pytest.mark.parametrize("name", ["mlp-jvp", "mlp-hvp", "rnn-jvp", "rnn-hvp"])
def test_harness_second_order_accepts_matching_results(harness, capsys, name):
    status, out = run_small(harness, name, [fake_s2sgrad_second(harness)], capsys)
    assert status == {}
    assert f"s2sgrad {name}: {name[-3:]} = " in out


@pytest.mark.parametrize("name", ["mlp-jvp", "rnn-hvp"])
def test_harness_second_order_flags_a_wrong_result(harness, capsys, name):
    status, out = run_small(harness, name, [fake_s2sgrad_second(harness, scale=1.001)], capsys)
    assert status.get("s2sgrad_mismatch")
    assert f"{name[-3:].upper()} MISMATCH" in out and "disagrees with the hand-written" in out


def test_harness_second_order_reports_an_error(harness, capsys):
    status, out = run_small(harness, "mlp-hvp", [fake_s2sgrad_second(harness, fail=True)],
                            capsys)
    assert status.get("s2sgrad_error")
    assert "error: RuntimeError: cannot differentiate" in out


def test_harness_second_order_without_jvp(harness, capsys):
    status, out = run_small(harness, "rnn-jvp", [fake_s2sgrad_second(harness, missing=True)],
                            capsys)
    assert status == {}
    assert "has no jvp" in out


def test_harness_second_order_shows_missing_peers(harness, capsys):
    libs = [harness.Library("torch", "PyTorch", None, "not installed"),
            harness.Library("jax", "JAX (jit)", None, "not installed", {"jit": True})]
    status, out = run_small(harness, "mlp-hvp", libs, capsys)
    assert status == {}
    assert out.count("not installed") == 2


@pytest.mark.parametrize("name", ["mlp-jvp", "mlp-hvp", "rnn-jvp", "rnn-hvp"])
def test_torch_rows_agree_with_hand_written(harness, name):
    pytest.importorskip("torch")
    lib = next(lib for lib in harness.load_libraries() if lib.name == "torch")
    so = small_second_order(harness, name)
    ref = harness._arrays(so.hand(*so.inputs, *[t for t in so.tangents if t is not None]))
    rows = harness.second_order_calls(lib, so)
    assert len(rows) == 2
    for label, build in rows:
        impl = build()
        got = impl.to_numpy(impl.call())
        assert harness.compare_outputs(ref, got, so.outputs) == "", label


def test_only_lists_the_second_order_names(harness, capsys):
    with pytest.raises(SystemExit):
        harness.main(["--only", "no-such-table"])
    err = capsys.readouterr().err
    for name in ("mlp-jvp", "mlp-hvp", "rnn-jvp", "rnn-hvp", "second-order-first-call", "horner",
                 "scalar-tensor", "index-loop", "ode-loop", "closure-per-step", "mixture"):
        assert name in err


def test_second_order_first_call_runs_in_a_fresh_process(harness, capsys):
    lib = next(lib for lib in harness.load_libraries() if lib.name == "s2sgrad")
    if lib.module is None or not hasattr(lib.module, "hvp"):
        pytest.skip("this s2sgrad has no jvp/hvp")
    status = {}
    harness.run_second_order_first_call(lib, 1, status)
    out = capsys.readouterr().out
    assert status == {}, out
    assert "first jvp:" in out and "first hvp:" in out


# --- Jacobians ------------------------------------------------------------------------------


@pytest.mark.parametrize("fn, hand, inputs", [
    (W.field, W.field_jacobian, W.field_inputs(n=6)),
    (W.logits, W.logits_jacobian, W.logits_inputs(d_in=7, d_hidden=5, d_out=3)),
])
def test_hand_written_jacobians_match_finite_differences(fn, hand, inputs):
    J = hand(*inputs)
    x = inputs[0]
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1.0
        for j in range(J.shape[0]):
            u = np.zeros(J.shape[0])
            u[j] = 1.0
            numeric = central_difference(fn, inputs, 0, e, weight=u, eps=EPS)
            assert J[j, k] == pytest.approx(numeric, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("make, fn, inputs", [
    (W.make_field, W.field, W.field_inputs(n=6)),
    (W.make_logits, W.logits, W.logits_inputs(d_in=7, d_hidden=5, d_out=3)),
])
def test_jacobian_factories_compute_the_literal_function(make, fn, inputs):
    np.testing.assert_allclose(make(np)(*inputs), fn(*inputs), rtol=1e-13, atol=1e-13)


def test_hand_written_hessian_matches_finite_differences():
    x, A = W.field_inputs(n=5)
    H = W.potential_hessian(x, A)
    for j in range(5):
        for k in range(5):
            e, u = np.eye(5)[k], np.eye(5)[j]

            def partial(x, A, u=u):
                t = np.tanh(A @ x)
                return np.array([(A.T @ t + x ** 3) @ u])  # the gradient's entry j

            numeric = central_difference(partial, (x, A), 0, e, weight=np.ones(1), eps=EPS)
            assert H[j, k] == pytest.approx(numeric, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(W.make_potential(np)(x, A), W.potential(x, A), rtol=1e-13)


# --- loops: horner, index_loop, ode_loop, closure_step --------------------------------------


@pytest.mark.parametrize("x", [0.95, -1.3, 0.0, 2.0])
def test_horner_gradient_matches_finite_differences(x):
    _, coeffs = W.horner_inputs(seed=3, n=12)
    value, (g_x, g_coeffs) = W.horner_value_and_grad(x, coeffs)
    assert value == W.horner(x, coeffs)
    assert isinstance(g_coeffs, list) and len(g_coeffs) == len(coeffs)
    assert g_x == pytest.approx(central_difference(W.horner, (x, coeffs), 0, 1.0),
                                rel=1e-6, abs=1e-8)
    for k in range(len(coeffs)):
        unit = [0.0] * len(coeffs)
        unit[k] = 1.0
        fd = central_difference(W.horner, (x, coeffs), 1, unit)
        assert g_coeffs[k] == pytest.approx(fd, rel=1e-6, abs=1e-8), f"coefficient {k}"


def test_tiny_gradient_matches_finite_differences():
    for x in (0.7, -2.5):
        value, (g,) = W.tiny_value_and_grad(x)
        assert value == W.tiny(x)
        assert g == pytest.approx(central_difference(W.tiny, (x,), 0, 1.0), rel=1e-7)


@pytest.mark.parametrize("seed", [0, 1])
def test_index_loop_gradient_matches_finite_differences(seed):
    args = W.index_loop_inputs(seed=seed, n=9)
    check_array_gradient(W.index_loop, W.index_loop_value_and_grad, args, W.WRT["index_loop"],
                         seed)
    _, (_, g_v) = W.index_loop_value_and_grad(*args)
    assert type(g_v) is float
    assert g_v == pytest.approx(central_difference(W.index_loop, args, 1, 1.0), rel=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_ode_loop_gradient_matches_finite_differences(seed):
    # few, long steps: the gradient then depends visibly on every parameter
    args = W.ode_inputs(seed=seed, steps=30, dt=0.05)
    check_array_gradient(W.ode_loop, W.ode_loop_value_and_grad, args, W.WRT["ode_loop"], seed)


def test_ode_loop_in_chunks_is_ode_loop_with_and_without_checkpoint():
    import s2sgrad

    args = W.ode_inputs(steps=40, dt=0.05)
    value, grads = W.ode_loop_value_and_grad(*args)
    for chunk_fn in (W.ode_chunk, s2sgrad.checkpoint(W.ode_chunk)):
        assert W.ode_loop_chunked(*args, chunk_fn, 10) == pytest.approx(value, rel=1e-13)
        got_value, got = s2sgrad.value_and_grad(W.ode_loop_chunked, W.WRT["ode_loop"])(
            *args, chunk_fn, 10)
        assert got_value == pytest.approx(value, rel=1e-13)
        for g, r in zip(got, grads, strict=True):
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-13)


def test_ode_sweeps_leave_their_inputs_and_saved_values_alone():
    args = W.ode_inputs(steps=20, dt=0.05)
    copies = [np.copy(a) for a in args]
    value, saved = W.ode_forward(*args)
    kept = [np.copy(a) for a in saved]
    first = W.ode_backward(saved)
    second = W.ode_backward(saved)  # the saved values can be used again
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)
    for a, c in zip(saved, kept):
        np.testing.assert_array_equal(a, c)
    assert saved[2].shape == (21, 4) and saved[3].shape == (20, 4)
    assert value == W.ode_loop(*args)


def test_lsq_gradient_matches_finite_differences():
    X, y = W.lsq_batches(seed=2, count=1, batch=6, d=3)[0]
    w = np.array([0.3, -0.2, 1.1])
    value = W.lsq_loss(w, X, y)
    check_array_gradient(W.lsq_loss, lambda *a: (value, (W.lsq_grad(*a),)), (w, X, y), (0,), 4)
    np.testing.assert_allclose(W.hand_step(w, X, y, 0.1), w - 0.1 * W.lsq_grad(w, X, y),
                               rtol=1e-15)


def test_loop_factories_are_the_same_function():
    x, coeffs = W.horner_inputs(n=20)
    assert W.make_horner(np)(x, coeffs) == W.horner(x, coeffs)
    args = W.index_loop_inputs(n=15)
    assert W.make_index_loop(np)(*args) == W.index_loop(*args)
    args = W.ode_inputs(steps=25)
    assert W.make_ode_loop(np)(*args) == W.ode_loop(*args)


def test_torch_loop_factories_are_the_same_function():
    torch = pytest.importorskip("torch")

    def t(a):
        return torch.tensor(a, dtype=torch.float64)

    x, coeffs = W.horner_inputs(n=20)
    assert W.make_horner(torch)(t(x), t(coeffs)).item() == pytest.approx(W.horner(x, coeffs),
                                                                         rel=1e-13)
    x, v = W.index_loop_inputs(n=15)
    assert W.make_torch_index_loop(torch)(t(x), t(v)).item() == pytest.approx(
        W.index_loop(x, v), rel=1e-13)
    A, b, h0, dt, steps = W.ode_inputs(steps=25, dt=0.05)
    assert W.make_ode_loop(torch)(t(A), t(b), t(h0), dt, steps).item() == pytest.approx(
        W.ode_loop(A, b, h0, dt, steps), rel=1e-12)


def test_jax_loop_factories_are_the_same_function():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x, v = W.index_loop_inputs(n=15)
    got = jax.jit(W.make_jax_index_loop(jax))(jnp.asarray(x), jnp.asarray(v))
    assert float(got) == pytest.approx(W.index_loop(x, v), rel=1e-12)
    A, b, h0, dt, steps = W.ode_inputs(steps=25, dt=0.05)
    f = jax.jit(W.make_jax_ode_loop(jax), static_argnums=(4,))
    got = f(jnp.asarray(A), jnp.asarray(b), jnp.asarray(h0), dt, steps)
    assert float(got) == pytest.approx(W.ode_loop(A, b, h0, dt, steps), rel=1e-12)
    x, coeffs = W.horner_inputs(n=20)
    got = jax.jit(W.make_horner(jnp))(x, jnp.asarray(coeffs))
    assert float(got) == pytest.approx(W.horner(x, coeffs), rel=1e-12)


def test_autograd_agrees_with_the_hand_written_loops():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    cases = [(W.make_horner(anp), W.horner_value_and_grad, W.horner_inputs(n=10), "horner"),
             (W.make_index_loop(anp), W.index_loop_value_and_grad, W.index_loop_inputs(n=8),
              "index_loop"),
             (W.make_ode_loop(anp), W.ode_loop_value_and_grad, W.ode_inputs(steps=15, dt=0.05),
              "ode_loop")]
    for f, hand, args, name in cases:
        value, grads = autograd.value_and_grad(f, argnum=W.WRT[name])(*args)
        ref_value, ref_grads = hand(*args)
        assert value == pytest.approx(ref_value, rel=1e-12), name
        for g, r in zip(grads, ref_grads):
            np.testing.assert_allclose(np.asarray(g, dtype=float), np.asarray(r), rtol=1e-9,
                                       atol=1e-12, err_msg=name)


def test_s2sgrad_steps_agree_with_the_hand_written_step():
    sg = pytest.importorskip("s2sgrad")
    X, y = W.lsq_batches(count=1)[0]
    w = np.linspace(-1.0, 1.0, X.shape[1])
    ref = W.hand_step(w, X, y, 0.05)
    np.testing.assert_allclose(W.closure_step(w, X, y, 0.05, sg.gradient), ref, rtol=1e-10)
    np.testing.assert_allclose(W.argument_step(w, X, y, 0.05, sg.gradient), ref, rtol=1e-10)


# --- the harness: loops, the Tensor path, memory, first calls ---------------------------------


def test_harness_loop_workloads_with_a_stand_in(harness, capsys):
    # horner and ode-loop tables with the hand-written gradient standing in for s2sgrad
    status = {}
    for wl in (next(w for w in harness.build_workloads() if w.name == "horner"),
               harness.build_ode_loop(steps=50)):
        rows = harness.run_workload(wl, [fake_s2sgrad(harness)], min_time=0.002, batches=2,
                                    status=status)
        assert [r.label for r in rows] == ["NumPy, hand-written gradient", "s2sgrad test"]
        assert rows[1].vg is not None
    out = capsys.readouterr().out
    assert status == {}, out
    # horner has a target (a verdict line); ode-loop has none
    assert "verdict horner: s2sgrad value+grad =" in out and "(target <= 1.5x)" in out
    assert "s2sgrad ode-loop: value+grad =" in out


def test_harness_flags_a_wrong_loop_gradient(harness, capsys):
    status = {}
    harness.run_workload(harness.build_index_loop(30), [fake_s2sgrad(harness, scale=1.001)],
                         min_time=0.002, batches=2, status=status)
    assert status.get("s2sgrad_mismatch")
    assert "GRADIENT MISMATCH" in capsys.readouterr().out


def test_slow_calls_are_timed_with_single_calls(harness, monkeypatch):
    calls = []

    def call():
        calls.append(1)

    monkeypatch.setattr(harness, "SLOW_CALL", 0.0)  # every call counts as slow
    timing, paired, note = harness.measure_any(call, 0.01, 7, budget=1e9)
    assert note == "(3 calls)" and len(timing.batches) == 3 and paired is None
    assert len(calls) == 4  # a warm-up, then three timed
    timing, _, note = harness.measure_any(call, 0.01, 7, budget=0.0, first=1.0)
    assert note == "(1 call)" and len(timing.batches) == 1
    assert len(calls) == 5  # the warm call only
    # a first call that did not compile counts as one of the timed calls
    timing, _, note = harness.measure_any(call, 0.01, 7, budget=1e9, first=1.0, compiles=False)
    assert note == "(3 calls)" and 1.0 in timing.batches and len(calls) == 7
    monkeypatch.setattr(harness, "SLOW_CALL", 1e9)
    timing, _, note = harness.measure_any(call, 0.002, 2)
    assert note == "" and len(timing.batches) == 2


def test_index_loop_leaves_out_what_would_exceed_the_budget(harness, capsys):
    # a budget of 0 s: every library is left out of the larger sizes
    status = {}
    per_element = harness.run_index_loop([fake_s2sgrad(harness)], 0.002, 2, status,
                                         sizes=(20, 40), budget=0.0)
    out = capsys.readouterr().out
    assert status == {}, out
    assert set(per_element["s2sgrad test"]) == {20}
    assert set(per_element["NumPy, hand-written gradient"]) == {20, 40}
    assert "not run: " in out and "next size (over the 0 s budget)" in out
    assert "time per element" in out


def test_index_loop_runs_every_size_within_the_budget(harness, capsys):
    status = {}
    per_element = harness.run_index_loop([fake_s2sgrad(harness)], 0.002, 2, status,
                                         sizes=(20, 40), budget=1e9)
    capsys.readouterr()
    assert set(per_element["s2sgrad test"]) == {20, 40}
    assert all(t > 0 for t in per_element["s2sgrad test"].values())


def test_retained_bytes_counts_what_the_result_holds(harness):
    steps = 200
    args = W.ode_inputs(steps=steps)
    held, (_, saved) = harness.retained_bytes(lambda: W.ode_forward(*args))
    data = saved[2].nbytes + saved[3].nbytes  # the two arrays of states and tanh values
    assert data == 64 * steps + 32
    assert data <= held < data + 4096
    dropped, _ = harness.retained_bytes(lambda: len(W.ode_forward(*args)))
    assert dropped < 1024  # the saved arrays were freed


def test_s2sgrad_vjp_holds_memory_per_step(harness):
    lib = next(lib for lib in harness.load_libraries() if lib.name == "s2sgrad")
    if lib.module is None:
        pytest.skip(lib.reason)
    wl = harness.build_ode_loop(steps=300)
    status = {}
    lines = harness.saved_per_step(wl, [lib], status)
    assert status == {}, lines
    per_step = {label.split(":")[0]: b for label, b, _ in lines}
    assert per_step["NumPy, hand-written"] == pytest.approx(64.0, abs=4096 / 300)
    s2s = next(b for label, b, _ in lines if label.startswith(lib.label))
    assert s2s is not None and s2s >= 64.0  # at least the states and the tanh values


def test_torch_saved_bytes_sees_the_saved_tensors(harness):
    torch = pytest.importorskip("torch")
    A, b, h0, dt, steps = W.ode_inputs(steps=40)
    args = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (A, b, h0)]
    nbytes, count, out = harness.torch_saved_bytes(torch, W.make_ode_loop(torch),
                                                   (*args, dt, steps))
    assert count >= 2 * steps
    assert nbytes >= steps * 32  # one 4-vector a step at least
    assert out.requires_grad
    nbytes, count, _ = harness.torch_saved_bytes(torch, lambda a: a + 1.0, (args[0],))
    assert (nbytes, count) == (0, 0)  # an addition saves nothing


def test_memory_growth_tells_growing_from_flat(harness):
    kept = []
    grown = harness.memory_growth(lambda k: kept.append(bytearray(10_000)), (5, 10))
    assert [k for k, _, _ in grown] == [5, 10]
    assert grown[0][1] >= 5 * 10_000 and grown[1][1] - grown[0][1] >= 5 * 10_000
    flat = harness.memory_growth(lambda k: bytearray(10_000), (5, 10),
                                 tables=lambda: {"t": 3})
    assert flat[1][1] < 10_000 and flat[1][2] == {"t": 3}


def test_specialiser_tables_reads_the_tables_that_exist(harness, monkeypatch):
    monkeypatch.setitem(sys.modules, "s2sgrad.compiler.function",
                        types.SimpleNamespace(_specialisers={1: 1, 2: 2}))
    monkeypatch.setitem(sys.modules, "s2sgrad.api", types.SimpleNamespace())
    monkeypatch.setitem(sys.modules, "s2sgrad.compiler.compiled",
                        types.SimpleNamespace(cache_sizes=lambda: {"elsewhere": 7}))
    assert harness.specialiser_tables() == {"function._specialisers": 2, "compiled.elsewhere": 7}
    monkeypatch.setitem(sys.modules, "s2sgrad.compiler.compiled", types.SimpleNamespace())
    monkeypatch.setitem(sys.modules, "s2sgrad.compiler.function", types.SimpleNamespace())
    assert harness.specialiser_tables() == {}


def test_first_call_in_a_fresh_process(harness):
    pytest.importorskip("s2sgrad")
    setup = harness.vg_first_call("horner", "W.horner_inputs(n=10)", W.WRT["horner"],
                                  "horner_value_and_grad")
    (result,) = harness.fresh_first_call(setup, 1, 2)
    assert result["problem"] == ""
    assert result["first_call"] > 0 and result["warm"] > 0 and result["plain"] > 0
    status = {}
    line = harness.first_call_line(setup, 1, 2, status, what="horner")
    assert status == {} and line.startswith("s2sgrad first call, horner: ")


def test_first_call_reports_a_wrong_result(harness):
    pytest.importorskip("s2sgrad")
    # the check compares with the gradient at another point
    setup = harness.vg_first_call("horner", "W.horner_inputs(n=10)", W.WRT["horner"],
                                  "horner_value_and_grad").replace(
        "differ(W.horner_value_and_grad(*args), result)",
        "differ(W.horner_value_and_grad(0.5, args[1]), result)")
    assert "0.5, args[1]" in setup
    status = {}
    line = harness.first_call_line(setup, 1, 2, status, what="horner")
    assert status.get("s2sgrad_mismatch") and "is wrong: value" in line


def test_first_call_reports_an_error(harness):
    status = {}
    line = harness.first_call_line("raise RuntimeError('no such thing')", 1, 1, status,
                                   what="nothing")
    assert status.get("s2sgrad_error") and "RuntimeError: no such thing" in line


def test_scalar_tensor_tables(harness, capsys):
    libs = [lib for lib in harness.load_libraries() if lib.name in ("s2sgrad", "torch")]
    if libs[0].module is None:
        pytest.skip(libs[0].reason)
    status = {}
    harness.run_scalar_tensor(libs, 0.002, 2, status)
    out = capsys.readouterr().out
    assert status == {}, out
    assert out.count("s2sgrad Tensor path") == 2  # horner and tiny
    assert "f(...).backward(), f = grad(horner)" in out and "MISMATCH" not in out


def test_tensor_path_gives_the_hand_written_gradient(harness):
    sg = pytest.importorskip("s2sgrad")
    x, coeffs = W.horner_inputs(n=12)
    call, read = harness.tensor_path(sg, W.horner, (x, np.asarray(coeffs)), (0, 1))
    ref = harness._plain(W.horner_value_and_grad(x, coeffs))
    for _ in range(2):  # the gradients are cleared between calls, not accumulated
        assert harness.compare(ref, read(call())) == ""


def test_closure_per_step_reports_time_and_memory(harness, capsys):
    lib = next(lib for lib in harness.load_libraries() if lib.name == "s2sgrad")
    if lib.module is None:
        pytest.skip(lib.reason)
    status = {}
    harness.run_closure_per_step([lib], 0.002, 2, status, marks=(3, 6), steps_timed=4)
    out = capsys.readouterr().out
    assert status == {}, out
    assert "the first" in out and "growth per step between 3 and 6 steps" in out
    assert "MISMATCH" not in out


# --- nn-mlp: the PyTorch way, the @grad function, by hand and PyTorch ---------------------------

SMALL_NN = {"batch": 9, "widths": (7, 6, 5, 4)}


@pytest.mark.parametrize("seed", [0, 1])
def test_nn_mlp_gradient_matches_finite_differences(seed):
    args = W.nn_mlp_inputs(seed=seed, **SMALL_NN)
    # ReLU bends at 0: no pre-activation within reach of the differences' steps
    W1, b1, W2, b2, _, _, X, _ = args
    a1 = X @ W1.T + b1
    assert np.min(np.abs(a1)) > 1e-4
    assert np.min(np.abs(np.maximum(a1, 0.0) @ W2.T + b2)) > 1e-4
    check_array_gradient(W.nn_mlp_loss, W.nn_mlp_value_and_grad, args, W.WRT["nn_mlp"], seed)


def test_nn_mlp_hand_gradient_does_not_modify_inputs():
    args = W.nn_mlp_inputs(**SMALL_NN)
    copies = [np.copy(a) for a in args]
    W.nn_mlp_value_and_grad(*args)
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)


def _sequential_loss(nn, tensor, args, dtype=None):
    model = W.make_nn_mlp(nn, SMALL_NN["widths"], dtype)
    model.load_state_dict(W.nn_mlp_state_dict(args[:6], tensor))
    return model, nn.CrossEntropyLoss()(model(tensor(args[6])), tensor(args[7]))


def test_nn_mlp_sequential_is_the_same_function():
    sg = pytest.importorskip("s2sgrad")
    args = W.nn_mlp_inputs(**SMALL_NN)
    model, loss = _sequential_loss(sg.nn, sg.tensor, args)
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight",
                                        "4.bias"]
    assert loss.item() == pytest.approx(W.nn_mlp_loss(*args), rel=1e-13)
    torch = pytest.importorskip("torch")
    _, loss = _sequential_loss(torch.nn, torch.tensor, args, torch.float64)
    assert loss.item() == pytest.approx(W.nn_mlp_loss(*args), rel=1e-13)


def test_adamw_step_is_the_optimizers_step():
    sg = pytest.importorskip("s2sgrad")
    args = W.nn_mlp_inputs(**SMALL_NN)
    params, X, y = [np.array(p) for p in args[:6]], args[6], args[7]
    state = {}
    leaves = [sg.nn.Parameter(np.array(p)) for p in params]
    opt = sg.optim.AdamW(leaves, **W.ADAMW)
    before = [np.array(p) for p in params]
    for _ in range(3):  # the bias corrections change from step to step
        value = W.hand_training_step(params, X, y, state)
        opt.zero_grad()
        out = sg.grad(W.nn_mlp_loss)(*leaves, X, y)
        out.backward()
        opt.step()
        assert out.item() == pytest.approx(value, rel=1e-12)
        for p, t in zip(params, leaves):
            np.testing.assert_allclose(t.detach().numpy(), p, rtol=1e-12, atol=1e-15)
    assert all(np.max(np.abs(p - b)) > 1e-3 for p, b in zip(params, before))  # they moved
    torch = pytest.importorskip("torch")
    tleaves = [torch.tensor(b, requires_grad=True) for b in before]
    topt = torch.optim.AdamW(tleaves, **W.ADAMW)
    for _ in range(3):
        topt.zero_grad()
        out = W.make_torch_nn_mlp_loss(torch)(*tleaves, torch.tensor(X), torch.tensor(y))
        out.backward()
        topt.step()
    for p, t in zip(params, tleaves):
        np.testing.assert_allclose(t.detach().numpy(), p, rtol=1e-12, atol=1e-15)


def test_nn_mlp_variants_agree_with_hand_written(harness):
    """Every row's loss and gradients, and its parameters after one training step, are the
    hand-written ones: what the table checks before it times a row."""
    libs = [lib for lib in harness.load_libraries() if lib.name in ("s2sgrad", "torch")]
    if libs[0].module is None:
        pytest.skip(libs[0].reason)
    args = W.nn_mlp_inputs(**SMALL_NN)
    hand = harness._numpy_variant(args, W.nn_mlp_value_and_grad)
    ref = harness._plain(hand.grad())
    step, params = hand.make_step()
    step()
    ref_step = params()
    rows = harness.nn_mlp_rows(libs, args, SMALL_NN["widths"])
    labels = [label for label, _, _ in rows]
    assert len(labels) == (4 if libs[-1].module is not None else 3)
    for label, _, build in rows:
        variant = build()
        for _ in range(2):  # the gradients are cleared between calls, not accumulated
            assert harness.compare(ref, variant.read(variant.grad())) == "", label
        step, params = variant.make_step()
        step()
        assert harness.compare_outputs(ref_step, params(), harness.NN_PARAM_NAMES) == "", label


def _s2sgrad_stand_in(harness, scale=1.0, optim=None):
    """s2sgrad whose value_and_grad is the hand-written gradient (times ``scale``) and whose
    optim is ``optim`` if given: its other rows are s2sgrad's own."""
    sg = pytest.importorskip("s2sgrad")
    lib = fake_s2sgrad(harness, scale=scale)
    vars(lib.module).update(grad=sg.grad, nn=sg.nn, tensor=sg.tensor, optim=optim or sg.optim)
    return lib


def run_small_nn(harness, lib, capsys):
    status = {}
    tables = harness.run_nn_mlp([lib], 0.002, 2, status, sizes={"small": (9, (7, 6, 5, 4))})
    return status, tables["small"], capsys.readouterr().out


def test_harness_nn_mlp_table(harness, capsys):
    status, rows, out = run_small_nn(harness, _s2sgrad_stand_in(harness), capsys)
    assert status == {}, out
    assert [r.label.split(": ")[-1] for r in rows[2:]] == [
        "value_and_grad(nn_mlp_loss)", harness.NN_GRAD_FN, harness.NN_SEQUENTIAL]
    assert all(r.grad is not None and r.step is not None for r in rows if r is not rows[1])
    assert "== nn-mlp at small: batch 9, 7 -> 6 ReLU -> 5 ReLU -> 4," in out
    assert "s2sgrad nn-mlp at small: nn.Sequential loss+grad =" in out
    assert "MISMATCH" not in out


def test_harness_flags_a_wrong_nn_mlp_gradient(harness, capsys):
    status, rows, out = run_small_nn(harness, _s2sgrad_stand_in(harness, scale=1.001), capsys)
    assert status.get("s2sgrad_mismatch")
    assert rows[2].note == "GRADIENT MISMATCH, not timed" and rows[2].grad is None
    assert rows[4].grad is not None  # the other rows are timed
    assert "gradient disagree with the hand-written ones" in out


def test_harness_flags_a_wrong_nn_mlp_step(harness, capsys):
    sg = pytest.importorskip("s2sgrad")
    optim = types.SimpleNamespace(AdamW=lambda ps, **kw: sg.optim.AdamW(ps, **{**kw, "lr": 2e-3}))
    status, rows, out = run_small_nn(harness, _s2sgrad_stand_in(harness, optim=optim), capsys)
    assert status.get("s2sgrad_mismatch")
    assert rows[2].grad is not None  # value_and_grad's step is the hand-written AdamW
    assert [r.note for r in rows[3:]] == ["STEP MISMATCH, not timed"] * 2
    assert "parameters after one AdamW step disagree" in out
