"""nn's layers, losses, ``nn.functional`` and ``nn.init`` against PyTorch (values and gradients,
float64) and against central differences (without PyTorch too); the Module API."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import s2sgrad
from s2sgrad import nn, optim
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.nn import functional as F
from s2sgrad.testing import central_difference

RTOL = 1e-10


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def labels(n: int, classes: int, seed: int = 0, shape: tuple | None = None) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, classes, shape or (n,))


def is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f"


class Case:
    """``ours`` (a Module or a function) on ``arrays``; ``theirs(torch)`` builds PyTorch's
    equivalent (a module gets our parameters' values, matched by name); arrays of floats
    are differentiated (unless listed in ``constant``). ``detached`` maps a parameter's name
    to a mask of the entries whose gradient is zero by definition (not a derivative)."""

    def __init__(self, ours: Any, theirs: Callable, *arrays: np.ndarray,
                 constant: tuple[int, ...] = (), detached: dict | None = None) -> None:
        self.ours, self.theirs, self.arrays, self.constant = ours, theirs, arrays, constant
        self.detached = detached or {}

    def differentiated(self, i: int) -> bool:
        return is_float(self.arrays[i]) and i not in self.constant

    def params(self) -> list[tuple[str, Tensor]]:
        return list(self.ours.named_parameters()) if isinstance(self.ours, nn.Module) else []

    def run(self) -> tuple[np.ndarray, np.ndarray, list, list]:
        """Our output, the weight of the output, and the gradients of the weighted sum with
        respect to the differentiated inputs and the parameters."""
        inputs = [tensor(a, requires_grad=self.differentiated(i))
                  for i, a in enumerate(self.arrays)]
        for _, p in self.params():
            p.grad = None
        out = self.ours(*inputs)
        weight = np.random.default_rng(99).standard_normal(out.shape)
        (out * weight).sum().backward()
        grads = [t.grad.data if t.requires_grad else None for t in inputs]
        return out.data, weight, grads, [p.grad.data for _, p in self.params()]


def layer_cases() -> dict[str, Case]:
    def module(make: Callable) -> Callable:
        return lambda torch: make(torch.nn)

    s2sgrad.manual_seed(0)
    emb_index = np.array([[0, 2, 2], [4, 0, 2]])
    return {
        "linear": Case(nn.Linear(4, 3), module(lambda tn: tn.Linear(4, 3)), rand(5, 4)),
        "linear_3d_no_bias": Case(nn.Linear(4, 2, bias=False),
                                  module(lambda tn: tn.Linear(4, 2, bias=False)), rand(2, 3, 4)),
        "sequential": Case(nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)),
                           module(lambda tn: tn.Sequential(tn.Linear(3, 5), tn.Tanh(),
                                                           tn.Linear(5, 2))), rand(4, 3)),
        "relu": Case(nn.ReLU(), module(lambda tn: tn.ReLU()), rand(3, 4)),
        "tanh": Case(nn.Tanh(), module(lambda tn: tn.Tanh()), rand(3, 4)),
        "sigmoid": Case(nn.Sigmoid(), module(lambda tn: tn.Sigmoid()), rand(3, 4)),
        "gelu": Case(nn.GELU(), module(lambda tn: tn.GELU()), 2 * rand(3, 4)),
        "gelu_tanh": Case(nn.GELU("tanh"), module(lambda tn: tn.GELU("tanh")), 2 * rand(3, 4)),
        "softmax": Case(nn.Softmax(dim=1), module(lambda tn: tn.Softmax(dim=1)), rand(3, 4)),
        "softmax_dim0": Case(nn.Softmax(0), module(lambda tn: tn.Softmax(0)), rand(3, 4)),
        "log_softmax": Case(nn.LogSoftmax(-1), module(lambda tn: tn.LogSoftmax(-1)),
                            rand(2, 3, 4)),
        "dropout_eval": Case(nn.Dropout(0.3).eval(), module(lambda tn: tn.Dropout(0.3).eval()),
                             rand(3, 4)),
        "layer_norm": Case(_perturbed(nn.LayerNorm((3, 4))),
                           module(lambda tn: tn.LayerNorm((3, 4))), rand(2, 3, 4)),
        "layer_norm_plain": Case(nn.LayerNorm(4, eps=1e-3, elementwise_affine=False),
                                 module(lambda tn: tn.LayerNorm(4, eps=1e-3,
                                                                elementwise_affine=False)),
                                 rand(5, 4)),
        "embedding": Case(nn.Embedding(5, 3), module(lambda tn: tn.Embedding(5, 3)), emb_index),
        "embedding_padding": Case(nn.Embedding(5, 3, padding_idx=2),
                                  module(lambda tn: tn.Embedding(5, 3, padding_idx=2)),
                                  emb_index, detached={"weight": np.arange(5) == 2}),
    }


def _perturbed(m: nn.Module) -> nn.Module:
    """Parameters moved away from their initial values (ones, zeros) to test them fully."""
    for p in m.parameters():
        nn.init.normal_(p, 1.0, 0.5)
    return m


def loss_cases() -> dict[str, Case]:
    def module(make: Callable) -> Callable:
        return lambda torch: make(torch.nn)

    x, y = rand(6, 4, seed=1), labels(6, 4, seed=2)
    x3, y3 = rand(3, 4, 5, seed=3), labels(3, 4, seed=4, shape=(3, 5))
    w = np.array([0.5, 2.0, 1.0, 1.5])
    y_ignored = y.copy()
    y_ignored[[1, 4]] = -100
    probs = np.random.default_rng(5).dirichlet(np.ones(4), size=6)
    bits = (rand(3, 4, seed=6) > 0).astype(np.float64)
    pos = np.array([1.0, 3.0, 0.5, 2.0])
    cases = {}
    for reduction in ("mean", "sum", "none"):
        r = reduction
        cases[f"mse_{r}"] = Case(nn.MSELoss(reduction=r),
                                 module(lambda tn, r=r: tn.MSELoss(reduction=r)),
                                 rand(3, 4, seed=7), rand(3, 4, seed=8))
        cases[f"cross_entropy_{r}"] = Case(nn.CrossEntropyLoss(reduction=r),
                                           module(lambda tn, r=r: tn.CrossEntropyLoss(
                                               reduction=r)), x, y)
        cases[f"nll_{r}"] = Case(nn.NLLLoss(reduction=r),
                                 module(lambda tn, r=r: tn.NLLLoss(reduction=r)), x, y)
        cases[f"bce_logits_{r}"] = Case(nn.BCEWithLogitsLoss(reduction=r),
                                        module(lambda tn, r=r: tn.BCEWithLogitsLoss(
                                            reduction=r)), 3 * rand(3, 4, seed=9), bits)
        cases[f"cross_entropy_weighted_ignored_{r}"] = Case(
            nn.CrossEntropyLoss(weight=w, reduction=r),
            lambda torch, r=r: torch.nn.CrossEntropyLoss(weight=torch.tensor(w), reduction=r),
            x, y_ignored)
        cases[f"cross_entropy_smoothing_{r}"] = Case(
            nn.CrossEntropyLoss(weight=w, reduction=r, label_smoothing=0.2),
            lambda torch, r=r: torch.nn.CrossEntropyLoss(weight=torch.tensor(w), reduction=r,
                                                         label_smoothing=0.2),
            x, y_ignored)
    cases["cross_entropy_smoothing_unweighted"] = Case(
        nn.CrossEntropyLoss(label_smoothing=0.1),
        module(lambda tn: tn.CrossEntropyLoss(label_smoothing=0.1)), x, y_ignored)
    cases["cross_entropy_spatial"] = Case(nn.CrossEntropyLoss(),
                                          module(lambda tn: tn.CrossEntropyLoss()), x3, y3)
    cases["cross_entropy_one_sample"] = Case(nn.CrossEntropyLoss(),
                                             module(lambda tn: tn.CrossEntropyLoss()),
                                             x[0], y[0])
    cases["cross_entropy_probabilities"] = Case(
        nn.CrossEntropyLoss(label_smoothing=0.1),
        module(lambda tn: tn.CrossEntropyLoss(label_smoothing=0.1)), x, probs, constant=(1,))
    cases["nll_weighted"] = Case(nn.NLLLoss(weight=w),
                                 lambda torch: torch.nn.NLLLoss(weight=torch.tensor(w)), x, y)
    cases["bce_logits_weights"] = Case(
        nn.BCEWithLogitsLoss(weight=np.array([1.0, 2.0, 0.5, 1.0]), pos_weight=pos),
        lambda torch: torch.nn.BCEWithLogitsLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0],
                                                                     dtype=torch.float64),
                                                 pos_weight=torch.tensor(pos)),
        3 * rand(3, 4, seed=9), bits)
    cases["bce_logits_soft_target"] = Case(
        nn.BCEWithLogitsLoss(), module(lambda tn: tn.BCEWithLogitsLoss()),
        rand(3, 4, seed=10), np.random.default_rng(11).random((3, 4)))
    return cases


def functional_cases() -> dict[str, Case]:
    x, y = rand(4, 3, seed=12), labels(4, 3, seed=13)
    wt, b = rand(2, 3, seed=14), rand(2, seed=15)
    ln_w, ln_b = rand(3, seed=16), rand(3, seed=17)
    table = rand(6, 2, seed=18)
    index = np.array([1, 5, 1, 0])
    fns: dict[str, tuple[Callable, Callable, tuple]] = {
        "relu": (F.relu, lambda t: t.nn.functional.relu, (x,)),
        "tanh": (F.tanh, lambda t: t.nn.functional.tanh, (x,)),
        "sigmoid": (F.sigmoid, lambda t: t.nn.functional.sigmoid, (x,)),
        "gelu": (F.gelu, lambda t: t.nn.functional.gelu, (x,)),
        "softmax": (lambda a: F.softmax(a, dim=0), lambda t: lambda a: t.softmax(a, dim=0),
                    (x,)),
        "log_softmax": (lambda a: F.log_softmax(a, 1),
                        lambda t: lambda a: t.nn.functional.log_softmax(a, 1), (x,)),
        "dropout_off": (lambda a: F.dropout(a, 0.4, training=False),
                        lambda t: lambda a: t.nn.functional.dropout(a, 0.4, training=False),
                        (x,)),
        "linear": (F.linear, lambda t: t.nn.functional.linear, (x, wt, b)),
        "mse_loss": (F.mse_loss, lambda t: t.nn.functional.mse_loss, (x, rand(4, 3, seed=19))),
        "cross_entropy": (F.cross_entropy, lambda t: t.nn.functional.cross_entropy, (x, y)),
        "nll_loss": (F.nll_loss, lambda t: t.nn.functional.nll_loss, (x, y)),
        "bce_with_logits": (F.binary_cross_entropy_with_logits,
                            lambda t: t.nn.functional.binary_cross_entropy_with_logits,
                            (x, (x > 0.3).astype(np.float64))),
        "layer_norm": (lambda a, w, c: F.layer_norm(a, (3,), w, c),
                       lambda t: lambda a, w, c: t.nn.functional.layer_norm(a, (3,), w, c),
                       (x, ln_w, ln_b)),
        "embedding": (lambda i, w: F.embedding(i, w),
                      lambda t: lambda i, w: t.nn.functional.embedding(i, w), (index, table)),
    }
    return {name: Case(ours, theirs, *arrays) for name, (ours, theirs, arrays) in fns.items()}


CASES = {**layer_cases(), **loss_cases(),
         **{f"F.{k}": v for k, v in functional_cases().items()}}


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    case = CASES[name]
    out, weight, grads, param_grads = case.run()
    theirs = case.theirs(torch)
    if isinstance(theirs, torch.nn.Module):
        theirs = theirs.double()
        if case.ours.training is False:
            theirs.eval()
        named = dict(theirs.named_parameters())
        assert sorted(named) == sorted(n for n, _ in case.params())
        with torch.no_grad():
            for n, p in case.params():
                named[n].copy_(torch.tensor(p.data))
    inputs = [torch.tensor(a, requires_grad=case.differentiated(i))
              for i, a in enumerate(case.arrays)]
    t_out = theirs(*inputs)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=RTOL, atol=1e-13)
    (t_out * torch.tensor(weight)).sum().backward()
    for i, g in enumerate(grads):
        if g is not None:
            np.testing.assert_allclose(g, inputs[i].grad.numpy(), rtol=RTOL, atol=1e-13)
    if isinstance(theirs, torch.nn.Module):
        named = dict(theirs.named_parameters())
        for (n, _), g in zip(case.params(), param_grads, strict=True):
            np.testing.assert_allclose(g, named[n].grad.numpy(), rtol=RTOL, atol=1e-13,
                                       err_msg=n)


def _agrees(numeric: float, analytic: float) -> bool:
    return abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic))


@pytest.mark.parametrize("name", list(CASES))
def test_against_finite_differences(name: str) -> None:
    case = CASES[name]
    _, weight, grads, param_grads = case.run()
    rng = np.random.default_rng(7)

    def value(*arrays: np.ndarray) -> np.ndarray:
        return case.ours(*[tensor(a) for a in arrays]).data

    checked = 0
    for i, g in enumerate(grads):
        if g is None:
            continue
        d = rng.standard_normal(g.shape)
        numeric = central_difference(value, case.arrays, i, d, weight=weight)
        assert _agrees(numeric, float(np.sum(g * d))), f"input {i}"
        checked += 1
    for (n, p), g in zip(case.params(), param_grads, strict=True):
        old = p.data

        def moved(array: np.ndarray, p: Tensor = p) -> np.ndarray:
            p.data = array
            return value(*case.arrays)

        d = rng.standard_normal(g.shape)
        if n in case.detached:
            d[case.detached[n]] = 0.0
        try:
            numeric = central_difference(moved, [old], 0, d, weight=weight)
        finally:
            p.data = old
        assert _agrees(numeric, float(np.sum(g * d))), n
        checked += 1
    assert checked


def test_gradients_that_must_vanish_or_add() -> None:
    emb = nn.Embedding(4, 2, padding_idx=1)
    assert np.all(emb.weight.data[1] == 0)
    emb(np.array([[1, 3, 3], [3, 1, 0]])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.data[:, 0], [1.0, 0.0, 0.0, 3.0])
    x = tensor(rand(3, 4), requires_grad=True)
    loss = F.cross_entropy(x, np.array([1, -100, 2]))
    loss.backward()
    assert np.all(x.grad.data[1] == 0) and np.any(x.grad.data[0] != 0)


def test_bce_with_logits_is_stable_for_large_logits() -> None:
    x = tensor(np.array([800.0, -800.0]), requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, np.array([0.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.data, [800.0, 800.0])
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.data, [1.0, -1.0])


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        nn.MSELoss(reduction="avg")(rand(2), rand(2))
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(rand(2, 3), np.array([0, 3]))
    with pytest.raises(IndexError):
        nn.Embedding(3, 2)(np.array([3]))
    with pytest.raises(ValueError, match="dropout probability"):
        nn.Dropout(1.5)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        nn.LayerNorm(3)(rand(2, 4))


# -- dropout ---------------------------------------------------------------------------------

def test_dropout_zeroes_a_fraction_p_and_scales_the_rest() -> None:
    s2sgrad.manual_seed(3)
    drop = nn.Dropout(0.3)
    x = tensor(np.ones((400, 500)) * 2.0, requires_grad=True)
    y = drop(x)
    zeroed = np.mean(y.data == 0)
    assert abs(zeroed - 0.3) < 0.005
    np.testing.assert_allclose(y.data[y.data != 0], 2.0 / 0.7)
    y.sum().backward()  # the gradient goes through the kept elements, scaled
    np.testing.assert_allclose(x.grad.data, np.where(y.data != 0, 1 / 0.7, 0.0))
    drop.eval()
    assert not drop.training
    np.testing.assert_array_equal(drop(x).data, x.data)
    assert np.all(nn.Dropout(1.0)(x).data == 0)
    np.testing.assert_array_equal(nn.Dropout(0.0)(x).data, x.data)


def test_train_and_eval_reach_the_dropout_inside_a_sequential() -> None:
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.9))
    x = np.ones((50, 3))
    model.eval()
    np.testing.assert_allclose(model(x).data, model[0](x).data)
    model.train()
    assert np.mean(model(x).data == 0) > 0.5


# -- init ------------------------------------------------------------------------------------

def test_fans_and_gains_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for shape in [(3, 5), (7, 2, 3), (4, 6, 2, 5)]:
        ours = nn.init._calculate_fan_in_and_fan_out(tensor(np.zeros(shape)))
        assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    for args in [("linear",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                 ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu",), ("conv2d",)]:
        assert nn.init.calculate_gain(*args) == pytest.approx(
            torch.nn.init.calculate_gain(*args), rel=1e-15)


def test_fans_and_gains_by_hand() -> None:
    assert nn.init._calculate_fan_in_and_fan_out(tensor(np.zeros((4, 6, 2, 5)))) == (60, 40)
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert nn.init.calculate_gain("leaky_relu", 0.0) == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError):
        nn.init._calculate_fan_in_and_fan_out(tensor(np.zeros(3)))
    with pytest.raises(ValueError):
        nn.init.calculate_gain("swish")


def _filled(fn: Callable, shape: tuple, *args: Any, **kwargs: Any) -> np.ndarray:
    p = nn.Parameter(np.full(shape, 7.0))
    before = p._version.value
    assert fn(p, *args, **kwargs) is p
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p._version.value > before
    return p.data


def test_uniform_initialisers_stay_in_bounds_and_fill_them() -> None:
    s2sgrad.manual_seed(0)
    shape = (200, 300)  # fan_in 300, fan_out 200
    bounds = {
        "uniform": (_filled(nn.init.uniform_, shape, -0.5, 2.0), -0.5, 2.0),
        "xavier": (_filled(nn.init.xavier_uniform_, shape, gain=2.0), None,
                   2.0 * math.sqrt(6 / 500)),
        "kaiming": (_filled(nn.init.kaiming_uniform_, shape, a=0.1), None,
                    math.sqrt(2 / 1.01) * math.sqrt(3 / 300)),
        "kaiming_fan_out_relu": (_filled(nn.init.kaiming_uniform_, shape, mode="fan_out",
                                         nonlinearity="relu"), None,
                                 math.sqrt(2) * math.sqrt(3 / 200)),
    }
    for name, (data, low, high) in bounds.items():
        low = -high if low is None else low
        assert data.min() >= low and data.max() <= high, name
        span = high - low
        assert data.min() < low + 0.01 * span and data.max() > high - 0.01 * span, name
        assert abs(data.mean() - (low + high) / 2) < 0.01 * span, name


def test_normal_initialisers_have_their_std() -> None:
    s2sgrad.manual_seed(1)
    shape = (300, 400)
    stds = {
        "normal": (_filled(nn.init.normal_, shape, 1.5, 0.2), 1.5, 0.2),
        "xavier": (_filled(nn.init.xavier_normal_, shape), 0.0, math.sqrt(2 / 700)),
        "kaiming": (_filled(nn.init.kaiming_normal_, shape, nonlinearity="relu"), 0.0,
                    math.sqrt(2 / 400)),
        "kaiming_tanh_fan_out": (_filled(nn.init.kaiming_normal_, shape, mode="fan_out",
                                         nonlinearity="tanh"), 0.0, 5 / 3 / math.sqrt(300)),
    }
    for name, (data, mean, std) in stds.items():
        assert abs(data.std() / std - 1) < 0.01, name
        assert abs(data.mean() - mean) < 0.01 * std, name


def test_constant_initialisers_and_generators() -> None:
    np.testing.assert_array_equal(_filled(nn.init.zeros_, (2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(_filled(nn.init.ones_, (2, 3)), np.ones((2, 3)))
    np.testing.assert_array_equal(_filled(nn.init.constant_, (4,), 0.25), np.full(4, 0.25))
    p32 = nn.Parameter(np.zeros((3, 3), dtype=np.float32))
    nn.init.normal_(p32)
    assert p32.dtype == np.float32
    a = _filled(nn.init.normal_, (3, 3), generator=np.random.default_rng(4))
    b = _filled(nn.init.normal_, (3, 3), generator=np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)


def test_default_initialisation_of_layers() -> None:
    s2sgrad.manual_seed(2)
    layer = nn.Linear(50, 400)
    bound = 1 / math.sqrt(50)
    for p in (layer.weight, layer.bias):
        assert p.data.min() >= -bound and p.data.max() <= bound
        assert p.data.max() > 0.9 * bound and p.data.min() < -0.9 * bound
    assert layer.weight.shape == (400, 50) and layer.bias.shape == (400,)
    assert nn.Linear(3, 2, bias=False).bias is None
    emb = nn.Embedding(300, 100)
    assert abs(emb.weight.data.std() - 1) < 0.02
    norm = nn.LayerNorm((2, 3))
    assert np.all(norm.weight.data == 1) and np.all(norm.bias.data == 0)


# -- Sequential, Module API ------------------------------------------------------------------

def test_sequential_is_a_list_of_modules() -> None:
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b)
    assert len(seq) == 2 and seq[0] is a and seq[-1] is b and list(seq) == [a, b]
    assert seq.append(c) is seq and len(seq) == 3 and seq[2] is c
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and list(head) == [a, b]
    with pytest.raises(IndexError):
        seq[3]
    x = rand(4, 2)
    np.testing.assert_allclose(seq(x).data, c(b(a(x))).data)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight",
                                                      "2.bias"]
    assert list(seq.children()) == [a, b, c]


class Block(nn.Module):
    def __init__(self) -> None:
        self.body = nn.Sequential(nn.Linear(3, 4), nn.GELU())
        self.heads = [nn.Linear(4, 2), nn.Linear(4, 1)]
        self.norm = nn.LayerNorm(4)
        self.shared = self.body

    def forward(self, x: Any) -> Tensor:
        h = self.norm(self.body(x))
        return self.heads[0](h).sum() + self.heads[1](h).sum()


def test_children_and_named_modules() -> None:
    block = Block()
    assert [n for n, _ in block.named_children()] == ["body", "heads.0", "heads.1", "norm"]
    assert [n for n, _ in block.named_modules()] == [
        "", "body", "body.0", "body.1", "heads.0", "heads.1", "norm"]
    assert [type(m).__name__ for m in block.modules()] == [
        "Block", "Sequential", "Linear", "GELU", "Linear", "Linear", "LayerNorm"]
    everything = [n for n, _ in block.named_modules(remove_duplicate=False)]
    assert "shared.0" in everything and len(everything) == 10


def test_named_modules_order_as_torch() -> None:
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), nn.Linear(2, 1))
    theirs = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()),
                                 torch.nn.Linear(2, 1))
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_apply_visits_children_first_and_requires_grad_freezes() -> None:
    block = Block()
    seen: list[str] = []
    assert block.apply(lambda m: seen.append(type(m).__name__)) is block
    assert seen == ["Linear", "GELU", "Sequential", "Linear", "Linear", "LayerNorm", "Block"]
    block.apply(lambda m: nn.init.zeros_(m.bias) if isinstance(m, nn.Linear) else None)
    assert np.all(block.heads[1].bias.data == 0)
    assert block.body.requires_grad_(False) is block.body
    params = list(block.parameters())
    assert len(params) == 8  # frozen ones included
    assert [p.requires_grad for p in params] == [False, False] + [True] * 6
    block(rand(2, 3)).backward()
    assert block.body[0].weight.grad is None and block.norm.weight.grad is not None
    block.requires_grad_()
    assert all(p.requires_grad for p in block.parameters())


def test_state_dict_copies_and_loads() -> None:
    src, dst = Block(), Block()
    state = src.state_dict()
    assert list(state) == ["body.0.weight", "body.0.bias", "heads.0.weight", "heads.0.bias",
                           "heads.1.weight", "heads.1.bias", "norm.weight", "norm.bias",
                           "shared.0.weight", "shared.0.bias"]
    value = state["body.0.weight"]
    assert isinstance(value, Tensor) and not value.requires_grad
    value.data[0, 0] = 123.0  # a copy: the model does not change
    assert src.body[0].weight.data[0, 0] != 123.0
    assert src.state_dict(keep_vars=True)["norm.bias"] is src.norm.bias
    state = src.state_dict()
    weight = dst.body[0].weight
    result = dst.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.body[0].weight is weight  # copied in place
    for (n, p), (_, q) in zip(src.named_parameters(), dst.named_parameters(), strict=True):
        np.testing.assert_array_equal(p.data, q.data, err_msg=n)
    x = rand(2, 3)
    np.testing.assert_allclose(dst(x).data, src(x).data)


def test_load_state_dict_reports_keys() -> None:
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    state = model.state_dict()
    del state["1.bias"]
    state["extra"] = tensor([1.0])
    with pytest.raises(RuntimeError) as info:
        nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1)).load_state_dict(state)
    assert str(info.value) == (
        'Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: '
        '"1.bias". \n\tUnexpected key(s) in state_dict: "extra". ')
    other = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    result = other.load_state_dict(state, strict=False)
    assert result == (["1.bias"], ["extra"])
    np.testing.assert_array_equal(other[1].weight.data, model[1].weight.data)
    state["0.weight"] = tensor(np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match=r"size mismatch for 0.weight: copying a param with "
                       r"shape torch.Size\(\[2, 2\]\) from checkpoint, the shape in current "
                       r"model is torch.Size\(\[3, 2\]\)."):
        other.load_state_dict(state, strict=False)


def test_load_state_dict_messages_as_torch() -> None:
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    state, t_state = ours.state_dict(), theirs.state_dict()
    for s in (state, t_state):
        del s["1.bias"]
        s["0.weight"] = s["0.weight"][:2]
    state["extra"] = tensor([1.0])
    t_state["extra"] = torch.tensor([1.0])
    with pytest.raises(RuntimeError) as mine:
        ours.load_state_dict(state)
    with pytest.raises(RuntimeError) as theirs_error:
        theirs.load_state_dict(t_state)
    assert str(mine.value) == str(theirs_error.value)


def test_functional_and_init_are_importable_as_submodules() -> None:
    from s2sgrad.nn.functional import relu
    from s2sgrad.nn.init import xavier_uniform_

    assert relu is F.relu and xavier_uniform_ is s2sgrad.nn.init.xavier_uniform_


# -- end to end ------------------------------------------------------------------------------

@pytest.mark.parametrize("optimizer", ["SGD", "AdamW"])
def test_a_small_classifier_learns(optimizer: str) -> None:
    s2sgrad.manual_seed(0)
    rng = np.random.default_rng(0)
    centres = np.array([[3.0, 0, 0, 0], [0, 3.0, 0, 0], [0, 0, 3.0, 0]])
    y = rng.integers(0, 3, 150)
    x = centres[y] + 0.5 * rng.standard_normal((150, 4))
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    loss_fn = nn.CrossEntropyLoss()
    opt = (optim.SGD(model.parameters(), lr=0.1) if optimizer == "SGD"
           else optim.AdamW(model.parameters(), lr=0.01))
    first = None
    for _ in range(100):
        opt.zero_grad()
        loss = loss_fn(model(tensor(x)), y)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    final = loss_fn(model(tensor(x)), y).item()
    assert final < first / 20
    assert np.mean(model(tensor(x)).data.argmax(1) == y) == 1.0
