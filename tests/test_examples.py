"""The examples run, on small sizes, and learn: each check fails if a gradient is wrong.

A zero or random gradient leaves the digit classifiers near 10% accuracy, the regression far
from its true parameters and the ball far from its target, so the thresholds below separate
working gradients from broken ones with a wide margin.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
NAMES = ("dask_regression", "datasets", "linear_regression", "logistic_regression", "mlp",
         "newton", "physics", "pytorch_style")


@pytest.fixture(scope="module")
def examples():
    """The example modules, imported as ``python examples/<name>.py`` would see them."""
    sys.path.insert(0, str(EXAMPLES))
    saved = {name: sys.modules.pop(name) for name in NAMES if name in sys.modules}
    try:
        yield {name: importlib.import_module(name) for name in NAMES}
    finally:
        sys.path.remove(str(EXAMPLES))
        for name in NAMES:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


# -- data -------------------------------------------------------------------------------------

def test_digits_are_bundled_and_scaled(examples):
    X, y = examples["datasets"].load_digits()
    assert X.shape == (1797, 64) and X.dtype == np.float64
    assert X.min() == 0.0 and X.max() == 1.0
    assert y.shape == (1797,) and y.dtype.kind == "i"
    assert np.array_equal(np.bincount(y), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])
    assert examples["datasets"].DIGITS.stat().st_size < 200_000


def test_split_is_deterministic_and_disjoint(examples):
    datasets = examples["datasets"]
    X, y = datasets.load_digits()
    X_train, X_test, y_train, y_test = datasets.train_test_split(X, y, 0.25, seed=3)
    again = datasets.train_test_split(X, y, 0.25, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip((X_train, X_test, y_train, y_test), again,
                                                     strict=True))
    assert len(X_test) == 449 and len(X_train) + len(X_test) == len(X)
    rows = {row.tobytes() for row in X_train}
    assert sum(row.tobytes() in rows for row in X_test) < 5  # only the rare duplicate digits
    other = datasets.train_test_split(X, y, 0.25, seed=4)[3]
    assert not np.array_equal(other, y_test)


def test_minibatches_cover_an_epoch_once(examples):
    X, y = np.arange(10.0)[:, None], np.arange(10)
    batches = list(examples["datasets"].minibatches(X, y, 4, np.random.default_rng(0)))
    assert [len(b) for b, _ in batches] == [4, 4, 2]
    assert sorted(np.concatenate([yb for _, yb in batches])) == list(range(10))


# -- linear regression ------------------------------------------------------------------------

def test_linear_regression_recovers_the_true_parameters(examples, capsys):
    result = examples["linear_regression"].main(["--samples", "200", "--steps", "60"])
    assert np.allclose(result["w"], result["true_w"], atol=0.02)
    assert abs(result["b"] - result["true_b"]) < 0.02
    assert "learned" in capsys.readouterr().out


# -- logistic regression ----------------------------------------------------------------------

def test_logistic_regression_classifies_digits(examples, capsys):
    result = examples["logistic_regression"].main(["--steps", "40"])
    assert result["test_accuracy"] > 0.90
    assert "test accuracy" in capsys.readouterr().out


# -- the MLP ----------------------------------------------------------------------------------

def test_mlp_gradient_matches_finite_differences(examples):
    import s2sgrad

    mlp = examples["mlp"]
    rng = np.random.default_rng(1)
    model = mlp.MLP(64, 8, 10, rng)
    params = [p.detach().numpy() for p in model.parameters()]
    x, y = rng.random((5, 64)), rng.integers(0, 10, 5)
    s2sgrad.testing.check_grads(mlp.cross_entropy.fn, *params, x, y, wrt=(0, 1, 2, 3))


def test_mlp_prints_its_backward_then_learns(examples, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the plain progress lines, tqdm or not
    result = examples["mlp"].main(["--epochs", "3", "--hidden", "32"])
    out = capsys.readouterr().out
    source = result["backward_source"]
    assert source.lstrip().startswith("def ") and "# adjoint of:" in source
    assert "W1_bar" in source and "return W1_bar, b1_bar, W2_bar, b2_bar" in source
    # the backward source comes first, then training, then the result
    assert out.index("# adjoint of:") < out.index("epoch") < out.index("test accuracy:")
    assert result["test_accuracy"] >= 0.90  # a broken gradient stays near 0.10
    history = result["history"]
    assert len(history["step_loss"]) == 3 * 43 and len(history["test_loss"]) == 3
    assert np.mean(history["step_loss"][-20:]) < 0.25 * np.mean(history["step_loss"][:5])
    assert history["test_loss"][-1] < 0.5


def test_mlp_progress_bar_uses_tqdm_when_installed(examples, monkeypatch):
    bars = []

    class FakeTqdm:  # records what the example asks of tqdm
        def __init__(self, total, **kwargs):
            self.total, self.n, self.closed = total, 0, False
            bars.append(self)

        def update(self, n):
            self.n += n

        def set_postfix(self, **values):
            self.postfix = values

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    examples["mlp"].main(["--epochs", "1", "--hidden", "8", "--batch-size", "128"])
    (bar,) = bars
    assert bar.n == bar.total == 11 and bar.closed and bar.postfix["epoch"] == 1


HISTORY = {"step_loss": [2.0, 1.5, 1.0, 0.8, 0.5, 0.4], "train_loss": [1.5, 0.6],
           "test_loss": [1.6, 0.7], "test_accuracy": [0.5, 0.8]}


def test_mlp_plot_is_optional(examples, capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if matplotlib were not installed
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    path = tmp_path / "loss.png"
    assert not examples["mlp"].save_plot(str(path), HISTORY)
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert not path.exists()


def test_mlp_plot_is_a_png(examples, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "loss.png"
    assert examples["mlp"].save_plot(str(path), HISTORY)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_mlp_runs_as_a_script(tmp_path):
    """The README's command: ``python examples/mlp.py`` (here with one epoch)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, str(EXAMPLES / "mlp.py"), "--epochs", "1"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "def cross_entropy_backward(saved, out_bar):" in done.stdout
    assert "test accuracy:" in done.stdout


# -- the PyTorch way ----------------------------------------------------------------------------

def test_pytorch_style_learns_and_reloads_its_checkpoint(examples, capsys):
    result = examples["pytorch_style"].main(["--epochs", "5"])
    out = capsys.readouterr().out
    assert result["val_accuracy"] >= 0.85  # a broken gradient stays near 0.10
    history = result["history"]
    assert len(history["train_loss"]) == len(history["val_accuracy"]) == 5
    assert history["train_loss"][-1] < 0.5 * history["train_loss"][0]
    # the checkpoint, reloaded into a fresh model, predicts what the trained model predicts
    assert result["reloaded_logits_equal"] and result["checkpoint_epoch"] == 5
    assert out.index("epoch") < out.index("validation accuracy:") < out.index("checkpoint")


def test_pytorch_style_sequential_and_numpy_function_agree(examples, capsys):
    result = examples["pytorch_style"].main(["--epochs", "1", "--hidden", "16"])
    out = capsys.readouterr().out
    two = result["two_ways"]
    assert two["loss_difference"] <= 1e-10 and two["grad_difference"] <= 1e-10
    assert two["loss"] > 1.0  # untrained: near log 10, not a trivially zero loss
    assert min(two["grad_norms"]) > 1e-3  # every parameter gets a gradient to compare
    source = result["backward_source"]
    assert "# adjoint of:" in source and "W1_bar" in source
    assert "def mlp_loss_backward(saved, out_bar):" in out
    assert out.index("# adjoint of:") < out.index("epoch")


def test_pytorch_style_numpy_function_matches_finite_differences(examples):
    import s2sgrad

    example = examples["pytorch_style"]
    s2sgrad.manual_seed(3)
    model = example.build_model(8)
    params = [p.detach().numpy().copy() for p in model.parameters()]
    rng = np.random.default_rng(3)
    x, y = rng.random((6, 64)), rng.integers(0, 10, 6)
    s2sgrad.testing.check_grads(example.mlp_loss.fn, *params, x, y, wrt=tuple(range(6)))


def test_pytorch_style_seed_makes_runs_repeatable(examples, capsys):
    example = examples["pytorch_style"]
    runs = [example.main(["--epochs", "1", "--hidden", "16", "--seed", str(s)])
            for s in (5, 5, 6)]
    capsys.readouterr()
    same = [r["history"]["train_loss"] for r in runs]
    assert same[0] == same[1] and same[0] != same[2]


def test_pytorch_style_runs_as_a_script(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, str(EXAMPLES / "pytorch_style.py"), "--epochs", "1"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "validation accuracy:" in done.stdout and "same predictions" in done.stdout
    assert list(tmp_path.iterdir()) == []  # the checkpoint went to a temporary directory


# -- physics ----------------------------------------------------------------------------------

def test_physics_gradient_matches_finite_differences(examples):
    from s2sgrad.testing import numeric_gradient

    physics = examples["physics"]
    v0, target, flight_time, dt = np.array([6.0, 7.0]), np.array([12.0, 0.0]), 1.0, 0.02

    def squared_miss(v):  # the same simulation on plain arrays: nothing recorded
        return physics.miss_distance(v, target, flight_time, dt) ** 2

    analytic = physics.gradient(v0, target, flight_time, dt)
    numeric = numeric_gradient(squared_miss, [v0], 0)
    assert np.allclose(analytic, numeric, rtol=1e-6, atol=1e-8)
    assert np.all(np.abs(analytic) > 1.0)  # a real gradient, not a vanishing one


def test_physics_fit_hits_the_target(examples, capsys):
    result = examples["physics"].main(["--iters", "20", "--dt", "0.05"])
    assert result["initial_miss"] > 5.0
    assert result["final_miss"] < result["initial_miss"] / 100
    assert "fitted v0" in capsys.readouterr().out


# -- second order: Newton and Hessian-free --------------------------------------------------

def test_newton_hessian_matches_finite_differences_of_the_gradient(examples):
    import s2sgrad
    from s2sgrad.testing import numeric_gradient

    newton = examples["newton"]
    X, _, y, _ = newton.threes_and_eights()
    X, y = X[:40], y[:40]
    w = np.random.default_rng(2).standard_normal(X.shape[1] + 1) * 0.1
    H = s2sgrad.hessian(newton.loss)(w, X, y, 1e-2)
    for k in (0, 17, 64):
        column = numeric_gradient(lambda w_, k=k: s2sgrad.gradient(newton.loss)(
            w_, X, y, 1e-2)[k], [w], 0)
        assert np.allclose(H[k], column, rtol=1e-5, atol=1e-7)
    v = np.random.default_rng(3).standard_normal(w.shape)
    assert np.allclose(s2sgrad.hvp(newton.loss, (w, X, y, 1e-2), (v, None, None, None)),
                       H @ v, rtol=1e-10, atol=1e-12)


def test_newton_converges_where_gradient_descent_has_barely_started(examples, capsys):
    results = examples["newton"].main(["--steps", "5", "--show"])
    out = capsys.readouterr().out
    assert results["Newton"][0] < 0.6 * results["gradient descent"][0]
    assert abs(results["Newton"][0] - results["Hessian-free"][0]) < 1e-6
    assert results["Newton"][1] > 0.9 and results["Hessian-free"][1] > 0.9
    assert "def loss_jvp(" in out and "def loss_jvp_backward(" in out


# -- Dask: chunked data on a cluster of worker processes --------------------------------------

def test_dask_regression_learns_on_a_cluster_and_reports_memory_per_worker(examples, capsys):
    pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    result = examples["dask_regression"].main(["--rows", "20000", "--chunk-rows", "5000",
                                               "--steps", "12"])
    out = capsys.readouterr().out
    # the gradient of the chunked data equals NumPy's of the same data, loss included
    check = result["check"]
    assert check["relative_difference"] < 1e-12
    assert check["dask"][0] == pytest.approx(check["numpy"][0], rel=1e-12)
    # the code each step runs is the NumPy code, printed before training
    assert "def loss_backward(saved, out_bar):" in out and "w_bar = z_bar @ X" in out
    assert out.index("def loss_backward") < out.index("step   1")
    history = result["history"]
    losses = history["loss"]
    assert len(losses) == 12 and np.all(np.diff(losses) < 0)
    assert losses[0] == pytest.approx(np.log(2.0))  # w = 0, b = 0: every probability 1/2
    assert losses[-1] < 0.6 * losses[0]
    # from |w - w_true| = |w_true| at w = 0, to within the data's own noise of w_true
    assert history["error"][0] == 1.0 and result["error"] < 0.1
    assert abs(result["b"] - result["true_b"]) < 0.1
    # each worker's peak memory during each step, measured in the workers
    assert all(len(peak) == 2 for peak in history["peak"])
    for before, peak in zip(history["before"], history["peak"], strict=True):
        assert before.keys() == peak.keys()
        assert all(0 < before[w] <= peak[w] for w in peak)
    assert result["peak_per_worker"] > 0 and "peak memory per worker:" in out
    assert result["chunk_bytes"] == 5000 * 100 * 8 and result["dataset_bytes"] == 20000 * 800
