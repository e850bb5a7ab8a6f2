"""More of ``nn``: the activations ``LeakyReLU``, ``ELU``, ``Softplus``, ``SiLU``, the losses
``L1Loss``, ``SmoothL1Loss``, ``HuberLoss``, ``BCELoss`` and their ``nn.functional``
counterparts, ``Flatten``, ``Unflatten``, ``Identity``, the containers ``ModuleList`` and
``ModuleDict``, buffers, ``Module.to`` and the other Module methods PyTorch has, and
``load``'s ``map_location`` and ``weights_only``.

Values and gradients are compared with PyTorch (float64) when it is installed, and gradients
with central finite differences always; module texts (``print(model)``), names and errors
with PyTorch's."""

from __future__ import annotations

import io
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import s2sgrad
from s2sgrad import nn, optim
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.nn import functional as F
from s2sgrad.testing import central_difference


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def probabilities(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.05, 0.95, shape)


X = 2.0 * rand(3, 4, seed=1)  # away from 0 (the kinks) by chance: checked below
Y = rand(3, 4, seed=2)
P = probabilities(3, 4, seed=3)
BITS = (rand(3, 4, seed=4) > 0).astype(np.float64)
SOFT = probabilities(3, 4, seed=5)
W = probabilities(3, 4, seed=6) + 0.5


def test_the_inputs_keep_away_from_the_kinks() -> None:
    assert np.abs(X).min() > 1e-3 and np.abs(np.abs(X - Y) - 1.0).min() > 1e-3
    assert np.abs(np.abs(X - Y) - 0.5).min() > 1e-3 and np.abs(np.abs(X - Y) - 2.0).min() > 1e-3


# name -> (ours, theirs(torch), arrays, differentiated positions). ``ours`` and ``theirs``
# are functions of Tensors of their library.
CASES: dict[str, tuple[Callable, Callable, tuple, tuple]] = {
    "LeakyReLU": (nn.LeakyReLU(), lambda t: t.nn.LeakyReLU(), (X,), (0,)),
    "LeakyReLU_slope": (nn.LeakyReLU(0.2, inplace=True), lambda t: t.nn.LeakyReLU(0.2),
                        (X,), (0,)),
    "ELU": (nn.ELU(), lambda t: t.nn.ELU(), (X,), (0,)),
    "ELU_alpha": (nn.ELU(alpha=0.5), lambda t: t.nn.ELU(alpha=0.5), (X,), (0,)),
    "Softplus": (nn.Softplus(), lambda t: t.nn.Softplus(), (X,), (0,)),
    "Softplus_threshold": (nn.Softplus(beta=2.0, threshold=1.5),
                           lambda t: t.nn.Softplus(beta=2.0, threshold=1.5), (X,), (0,)),
    "SiLU": (nn.SiLU(), lambda t: t.nn.SiLU(), (X,), (0,)),
    "F.leaky_relu": (lambda a: F.leaky_relu(a, 0.1),
                     lambda t: lambda a: t.nn.functional.leaky_relu(a, 0.1), (X,), (0,)),
    "F.elu": (lambda a: F.elu(a, 2.0), lambda t: lambda a: t.nn.functional.elu(a, 2.0),
              (X,), (0,)),
    "F.softplus": (lambda a: F.softplus(a, beta=0.5),
                   lambda t: lambda a: t.nn.functional.softplus(a, beta=0.5), (X,), (0,)),
    "F.silu": (F.silu, lambda t: t.nn.functional.silu, (X,), (0,)),
    "Flatten": (nn.Flatten(), lambda t: t.nn.Flatten(), (rand(2, 3, 2),), (0,)),
    "Flatten_dims": (nn.Flatten(0, 1), lambda t: t.nn.Flatten(0, 1), (rand(2, 3, 2),), (0,)),
    "Unflatten": (nn.Unflatten(1, (2, 2)), lambda t: t.nn.Unflatten(1, (2, 2)), (X,), (0,)),
    "Identity": (nn.Identity(54, unused=1), lambda t: t.nn.Identity(54, unused=1), (X,),
                 (0,)),
    "F.binary_cross_entropy_weight": (
        lambda a, b, w: F.binary_cross_entropy(a, b, w),
        lambda t: lambda a, b, w: t.nn.functional.binary_cross_entropy(a, b, w),
        (P, SOFT, W), (0,)),
    "F.l1_loss_weight": (lambda a, b, w: F.l1_loss(a, b, weight=w),
                         lambda t: lambda a, b, w: t.nn.functional.l1_loss(a, b, weight=w),
                         (X, Y, W), (0, 1, 2)),
    "F.huber_loss_weight": (
        lambda a, b, w: F.huber_loss(a, b, delta=0.5, weight=w),
        lambda t: lambda a, b, w: t.nn.functional.huber_loss(a, b, delta=0.5, weight=w),
        (X, Y, W), (0, 1, 2)),
    "F.smooth_l1_loss_beta": (
        lambda a, b: F.smooth_l1_loss(a, b, beta=2.0),
        lambda t: lambda a, b: t.nn.functional.smooth_l1_loss(a, b, beta=2.0), (X, Y), (0, 1)),
    "F.smooth_l1_loss_beta_0": (
        lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=0.0),
        lambda t: lambda a, b: t.nn.functional.smooth_l1_loss(a, b, reduction="sum", beta=0.0),
        (X, Y), (0, 1)),
}
for _r in ("mean", "sum", "none"):
    CASES[f"L1Loss_{_r}"] = (nn.L1Loss(reduction=_r),
                             lambda t, r=_r: t.nn.L1Loss(reduction=r), (X, Y), (0, 1))
    CASES[f"SmoothL1Loss_{_r}"] = (nn.SmoothL1Loss(reduction=_r),
                                   lambda t, r=_r: t.nn.SmoothL1Loss(reduction=r), (X, Y), (0, 1))
    CASES[f"HuberLoss_{_r}"] = (nn.HuberLoss(reduction=_r, delta=2.0),
                                lambda t, r=_r: t.nn.HuberLoss(reduction=r, delta=2.0), (X, Y),
                                (0, 1))
    CASES[f"BCELoss_{_r}"] = (nn.BCELoss(reduction=_r),
                              lambda t, r=_r: t.nn.BCELoss(reduction=r), (P, BITS), (0,))
    CASES[f"BCELoss_soft_weighted_{_r}"] = (
        nn.BCELoss(weight=tensor(W[0]), reduction=_r),
        lambda t, r=_r: t.nn.BCELoss(weight=t.tensor(W[0]), reduction=r), (P, SOFT), (0,))


def run(fn: Callable, make: Callable, arrays: tuple, wrt: tuple) -> tuple[Any, list, Any]:
    """``fn`` on Tensors made by ``make``; the output, the gradients of a weighted sum of it,
    and the weight."""
    inputs = [make(a, requires_grad=i in wrt) for i, a in enumerate(arrays)]
    out = fn(*inputs)
    weight = np.random.default_rng(9).standard_normal(tuple(out.shape))
    (out * make(weight)).sum().backward()
    return out, [inputs[i].grad.numpy() for i in wrt], weight


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs, arrays, wrt = CASES[name]
    out, grads, _ = run(ours, tensor, arrays, wrt)
    t_out, t_grads, _ = run(theirs(torch), torch.tensor, arrays, wrt)
    assert tuple(out.shape) == tuple(t_out.shape) and str(out.dtype) == str(t_out.dtype)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12,
                               atol=1e-14)
    for g, tg in zip(grads, t_grads, strict=True):
        np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_finite_differences(name: str) -> None:
    ours, _, arrays, wrt = CASES[name]
    _, grads, weight = run(ours, tensor, arrays, wrt)

    def value(*values: np.ndarray) -> np.ndarray:
        return ours(*[tensor(a) for a in values]).numpy()

    rng = np.random.default_rng(3)
    for i, g in zip(wrt, grads, strict=True):
        d = rng.standard_normal(g.shape)
        numeric = central_difference(value, arrays, i, d, weight=weight)
        assert abs(numeric - np.sum(g * d)) <= 1e-6 * max(1.0, abs(numeric)), f"input {i}"


def test_float32_inputs_keep_their_dtype() -> None:
    x = tensor(X, dtype=np.float32, requires_grad=True)
    p = tensor(P, dtype=np.float32, requires_grad=True)
    y, bits = Y.astype(np.float32), BITS.astype(np.float32)
    for out in (F.leaky_relu(x), F.elu(x), F.softplus(x), F.silu(x), F.l1_loss(x, y),
                F.smooth_l1_loss(x, y), F.huber_loss(x, y), F.binary_cross_entropy(p, bits)):
        assert out.dtype is s2sgrad.float32
        out.sum().backward()
    assert x.grad.dtype is s2sgrad.float32 and p.grad.dtype is s2sgrad.float32


def test_activations_at_zero_as_torch() -> None:
    torch = pytest.importorskip("torch")
    data = np.array([0.0, -0.0, 1e-300, 50.0, -50.0, 800.0])
    for ours, theirs in ((F.leaky_relu, torch.nn.functional.leaky_relu),
                         (F.elu, torch.nn.functional.elu), (F.silu, torch.nn.functional.silu),
                         (F.softplus, torch.nn.functional.softplus)):
        x, tx = tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow on the branch not taken
            y = ours(x)
            y.sum().backward()
        theirs(tx).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), theirs(tx).detach().numpy(), rtol=1e-15,
                                   atol=1e-15)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-15, atol=1e-15)


def test_binary_cross_entropy_at_the_ends_is_finite() -> None:
    torch = pytest.importorskip("torch")
    p, y = np.array([0.0, 1.0, 0.0, 1.0, 1e-50]), np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    loss = F.binary_cross_entropy(tensor(p, requires_grad=True), y, reduction="none")
    expected = torch.nn.functional.binary_cross_entropy(torch.tensor(p), torch.tensor(y),
                                                        reduction="none")
    np.testing.assert_array_equal(loss.detach().numpy(), expected.numpy())
    x = tensor(p, requires_grad=True)
    F.binary_cross_entropy(x, y).backward()
    assert np.all(np.isfinite(x.grad.numpy()))


def test_loss_errors_and_warnings_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for lib, functional in ((tensor, F), (torch.tensor, torch.nn.functional)):
        with pytest.raises(RuntimeError, match="between 0 and 1"):
            functional.binary_cross_entropy(lib(np.array([1.5])), lib(np.array([1.0])))
        with pytest.raises(ValueError, match="Please ensure they have the same size"):
            functional.binary_cross_entropy(lib(P), lib(BITS[0]))
        with pytest.raises(ValueError, match="Weights and input must have the same size"):
            functional.l1_loss(lib(X), lib(Y), weight=lib(W[0]))
        with pytest.raises(RuntimeError, match="negative values for beta"):
            functional.smooth_l1_loss(lib(X), lib(Y), beta=-1.0)
        with pytest.warns(UserWarning, match="different to the input size"):
            functional.l1_loss(lib(X), lib(Y[0]))
        with pytest.warns(UserWarning, match="reduction='sum'"):
            summed = functional.l1_loss(lib(X), lib(Y), size_average=False)
        np.testing.assert_allclose(np.asarray(summed), np.abs(X - Y).sum())
        with pytest.warns(UserWarning, match="reduction='none'"):
            assert tuple(functional.l1_loss(lib(X), lib(Y), reduce=False).shape) == X.shape
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert nn.L1Loss(size_average=False).reduction == "sum"
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.huber_loss(tensor(X), Y, reduction="avg")


# -- print(model) ---------------------------------------------------------------------------

def stack(m: Any) -> Any:
    """A model with a ModuleList (of repeated and different layers) and a ModuleDict."""

    class Net(m.Module):
        def __init__(self) -> None:
            m.Module.__init__(self)
            self.layers = m.ModuleList([m.Linear(2, 2) for _ in range(3)] + [m.SiLU()])
            self.heads = m.ModuleDict({"a": m.Linear(2, 1),
                                       "b": m.Sequential(m.ELU(), m.Identity())})
            self.flat = m.Flatten()

    return Net()


STRUCTURES: dict[str, Callable[[Any], Any]] = {
    "activations": lambda m: m.Sequential(m.LeakyReLU(), m.LeakyReLU(0.2, True), m.ELU(),
                                          m.ELU(0.5, inplace=True), m.Softplus(),
                                          m.Softplus(2, 10), m.SiLU(), m.SiLU(inplace=True)),
    "shapes": lambda m: m.Sequential(m.Flatten(), m.Flatten(0, 2), m.Unflatten(1, (2, 3)),
                                     m.Unflatten(-1, [4, -1]), m.Identity(),
                                     m.Identity(3, a=2)),
    "losses": lambda m: m.Sequential(m.L1Loss(), m.SmoothL1Loss(beta=0.5), m.HuberLoss(),
                                     m.HuberLoss(delta=2.0), m.BCELoss()),
    "module_list": lambda m: m.ModuleList([m.Linear(2, 2), m.Linear(2, 2), m.ReLU(),
                                           m.Linear(2, 2), m.ReLU(), m.ReLU()]),
    "module_list_nested": lambda m: m.ModuleList([m.ModuleList([m.Tanh()] * 2)] * 2),
    "empty_containers": lambda m: m.Sequential(m.ModuleList(), m.ModuleDict()),
    "module_dict": lambda m: m.ModuleDict(OrderedDict([("z", m.ReLU()), ("a", m.Linear(1, 2))])),
    "stack": stack,
}


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_repr_as_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = STRUCTURES[name](nn), STRUCTURES[name](torch.nn)
    assert repr(ours) == repr(theirs)


def test_a_module_list_reached_again_inside_itself_prints_as_an_ellipsis() -> None:
    layers = nn.ModuleList([nn.ReLU()])
    layers.append(layers)
    assert repr(layers) == "ModuleList(\n  (0): ReLU()\n  (1): ...\n)"


# -- containers -----------------------------------------------------------------------------

def test_module_list_as_torch() -> None:
    torch = pytest.importorskip("torch")
    states = []
    for m in (nn, torch.nn):
        layers = m.ModuleList([m.Linear(2, 3), m.ReLU()])
        layers.append(m.Linear(3, 1))
        layers.extend([m.Tanh(), m.Sigmoid()])
        layers.insert(1, m.Identity())
        del layers[2]
        layers += [m.ELU()]
        popped = layers.pop(4)
        layers[-1] = m.SiLU()
        state = [len(layers), [type(x).__name__ for x in layers], type(popped).__name__,
                 [n for n, _ in layers.named_parameters()],
                 [n for n, _ in layers.named_children()], type(layers[1:3]).__name__,
                 [type(x).__name__ for x in layers[::2]], type(layers[-2]).__name__,
                 len(layers + m.ModuleList([m.ReLU()]))]
        with pytest.raises(IndexError):
            layers[len(layers)]
        states.append(state)
    assert states[0] == states[1]


def test_module_dict_as_torch() -> None:
    torch = pytest.importorskip("torch")
    states = []
    for m in (nn, torch.nn):
        heads = m.ModuleDict({"b": m.Linear(2, 2), "a": m.ReLU()})
        heads["c"] = m.Linear(2, 1)
        heads.update([("d", m.Tanh())])
        heads.update(OrderedDict(b=m.Linear(2, 4)))  # replaced, in its place
        del heads["a"]
        popped = heads.pop("d")
        state = [len(heads), list(heads), list(heads.keys()),
                 [type(v).__name__ for v in heads.values()],
                 [(k, type(v).__name__) for k, v in heads.items()], "c" in heads,
                 "a" in heads, type(popped).__name__, heads["b"].out_features,
                 [n for n, _ in heads.named_parameters()]]
        with pytest.raises(KeyError):
            heads["a"]
        with pytest.raises(KeyError, match="attribute 'train' already exists"):
            heads["train"] = m.ReLU()
        heads.clear()
        state.append(len(heads))
        states.append(state)
    assert states[0] == states[1]


class Tower(nn.Module):
    """A model whose layers are in a ModuleList and whose heads in a ModuleDict."""

    def __init__(self) -> None:
        self.blocks = nn.ModuleList([nn.Linear(3, 8), nn.Linear(8, 8)])
        self.heads = nn.ModuleDict({"mean": nn.Linear(8, 1), "scale": nn.Linear(8, 1)})
        self.act = nn.SiLU()

    def forward(self, x: Any) -> Tensor:
        for block in self.blocks:
            x = self.act(block(x))
        return self.heads["mean"](x) + F.softplus(self.heads["scale"](x))


def test_a_model_with_containers_trains() -> None:
    s2sgrad.manual_seed(0)
    model = Tower()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["blocks.0.weight", "blocks.0.bias", "blocks.1.weight", "blocks.1.bias",
                     "heads.mean.weight", "heads.mean.bias", "heads.scale.weight",
                     "heads.scale.bias"]
    assert len(list(model.parameters())) == 8
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3))
    y = np.sin(x.sum(1, keepdims=True))
    opt = optim.Adam(model.parameters(), lr=0.02)
    loss_fn = nn.HuberLoss()
    losses = []
    for _ in range(100):
        opt.zero_grad()
        loss = loss_fn(model(tensor(x)), y)
        loss.backward()
        assert all(p.grad is not None for p in model.parameters())
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 10


# -- buffers and the Module methods ---------------------------------------------------------

def with_buffers(m: Any, t: Any) -> Any:
    class Norm(m.Module):
        def __init__(self) -> None:
            m.Module.__init__(self)
            self.weight = m.Parameter(t.ones(2))
            self.register_buffer("running_mean", t.zeros(2))
            self.register_buffer("steps", t.tensor(0))
            self.register_buffer("cache", t.ones(3), persistent=False)
            self.register_buffer("unset", None)
            self.inner = m.Linear(2, 2)
            self.inner.register_buffer("scale", t.full((2,), 0.5))

    return Norm()


def test_buffers_as_torch() -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = with_buffers(nn, s2sgrad), with_buffers(torch.nn, torch)
    for get in (lambda x: [n for n, _ in x.named_parameters()],
                lambda x: [n for n, _ in x.named_buffers()],
                lambda x: [tuple(b.shape) for b in x.buffers()],
                lambda x: sorted(x.state_dict()),
                lambda x: [n for n, _ in x.named_children()],
                lambda x: [type(c).__name__ for c in x.modules()]):
        assert get(ours) == get(theirs)
    assert not any(b.requires_grad for b in ours.buffers())
    # assigning the attribute again keeps it a buffer, as torch does
    ours.running_mean = tensor([1.0, 2.0])
    assert ours.state_dict()["running_mean"].tolist() == [1.0, 2.0]
    state = ours.state_dict()
    state["running_mean"] = tensor([3.0, 4.0])
    state["steps"] = tensor(7)
    fresh = with_buffers(nn, s2sgrad)
    assert fresh.load_state_dict(state).missing_keys == []
    assert fresh.running_mean.tolist() == [3.0, 4.0] and fresh.steps.item() == 7
    del state["inner.scale"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "inner.scale"'):
        fresh.load_state_dict(state)


def test_registration_errors_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for m, t in ((nn, s2sgrad), (torch.nn, torch)):
        model = m.Linear(2, 2)
        with pytest.raises(KeyError, match="attribute 'weight' already exists"):
            model.register_buffer("weight", t.zeros(2))
        with pytest.raises(KeyError, match='buffer name can.+t contain "\\."'):
            model.register_buffer("a.b", t.zeros(2))
        with pytest.raises(KeyError, match='module name can.+t contain "\\.", got: a\\.b'):
            model.add_module("a.b", m.ReLU())
        with pytest.raises(KeyError, match="empty string"):
            model.register_parameter("", None)
        with pytest.raises(TypeError, match="buffer name should be a string"):
            model.register_buffer(1, t.zeros(2))
        with pytest.raises(TypeError, match="to buffer 'x'"):
            model.register_buffer("x", [1.0])
        with pytest.raises(TypeError, match="torch.nn.Parameter or None required"):
            model.register_parameter("p", t.zeros(2))
        with pytest.raises(TypeError, match="is not a Module subclass"):
            model.add_module("sub", 3)
        with pytest.raises(KeyError, match="attribute 'bias' already exists"):
            model.add_module("bias", m.ReLU())
        model.register_parameter("extra", m.Parameter(t.ones(1)))
        model.register_parameter("weight", m.Parameter(t.ones(1)))  # a parameter replaced
        model.add_module("sub", m.Tanh())
        model.register_module("other", m.ReLU())
        assert [n for n, _ in model.named_parameters()] == ["weight", "bias", "extra"]
        assert [n for n, _ in model.named_children()] == ["sub", "other"]


def test_to_and_dtype_methods() -> None:
    model = with_buffers(nn, s2sgrad)
    weight = model.inner.weight
    opt = optim.SGD(model.parameters(), lr=0.1)
    model.inner(tensor([[1.0, 2.0]])).sum().backward()
    assert model.float() is model
    assert weight is model.inner.weight and weight.dtype is s2sgrad.float32
    assert weight.grad.dtype is s2sgrad.float32
    assert model.running_mean.dtype is s2sgrad.float32 and model.steps.dtype is s2sgrad.int64
    opt.step()  # the optimizer holds the same Parameters
    assert model.inner.weight.dtype is s2sgrad.float32
    assert model.half().weight.dtype is s2sgrad.float16
    assert model.double().inner.bias.dtype is s2sgrad.float64
    assert model.to("cpu", s2sgrad.float32, False).weight.dtype is s2sgrad.float32
    assert tensor([1.0]).to(s2sgrad.float16, False).dtype is s2sgrad.float16
    for args, kwargs, expected in (
            (("cpu", s2sgrad.float32), {}, s2sgrad.float32),
            ((), {"dtype": np.float16}, s2sgrad.float16),
            ((tensor([1.0], dtype=np.float32),), {}, s2sgrad.float32),
            (("float64",), {}, s2sgrad.float64),
            ((), {"device": "cpu", "dtype": s2sgrad.complex128}, s2sgrad.complex128)):
        assert model.to(*args, **kwargs) is model
        assert model.weight.dtype is expected and model.running_mean.dtype is expected
        assert model.steps.dtype is s2sgrad.int64
    assert model.to("cpu") is model and model.to(device="cpu:0") is model
    with pytest.raises(RuntimeError, match="'cuda' is not available"):
        model.to("cuda")
    with pytest.raises(RuntimeError, match="'cuda:1' is not available"):
        model.to(device="cuda:1")
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes, but "
                                        "got desired dtype=torch.int64"):
        model.to(s2sgrad.int64)
    with pytest.raises(RuntimeError, match="'mps' is not available"):
        tensor([1.0]).to("mps")
    assert tensor([1.0]).to(device="cpu").dtype is s2sgrad.float64


def test_dtype_methods_as_torch() -> None:
    torch = pytest.importorskip("torch")
    results = []
    for m, t in ((nn, s2sgrad), (torch.nn, torch)):
        model = with_buffers(m, t)
        dtypes = []
        for change in (lambda x: x.float(), lambda x: x.half(), lambda x: x.double(),
                       lambda x: x.to(t.float32), lambda x: x.to("cpu", t.float64)):
            change(model)
            dtypes.append([str(v.dtype) for v in model.state_dict().values()])
        results.append(dtypes)
    assert results[0] == results[1]


def test_zero_grad_and_modules() -> None:
    model = Tower()
    model(tensor(rand(2, 3))).sum().backward()
    model.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    assert [type(m).__name__ for m in model.modules()] == [
        "Tower", "ModuleList", "Linear", "Linear", "ModuleDict", "Linear", "Linear", "SiLU"]
    assert [n for n, _ in model.named_children()] == ["blocks", "heads", "act"]


# -- load -----------------------------------------------------------------------------------

def test_load_takes_torchs_keywords() -> None:
    buffer = io.BytesIO()
    s2sgrad.save({"w": tensor([1.0, 2.0])}, buffer)
    for kwargs in ({}, {"map_location": "cpu"}, {"map_location": None},
                   {"weights_only": True}, {"weights_only": False},
                   {"map_location": "cpu", "weights_only": False}):
        buffer.seek(0)
        assert s2sgrad.load(buffer, **kwargs)["w"].tolist() == [1.0, 2.0]
    buffer.seek(0)
    assert s2sgrad.load(buffer, "cpu")["w"].tolist() == [1.0, 2.0]
    for where in ("cuda", "cuda:0", {"cuda:0": "cpu"}, lambda storage, location: storage):
        buffer.seek(0)
        with pytest.raises(ValueError, match="map_location"):
            s2sgrad.load(buffer, map_location=where)


# -- one_hot and pad, against torch ---------------------------------------------------------


@pytest.mark.parametrize("classes", [-1, 6])
def test_one_hot_like_torchs(classes, torch64):
    index = np.array([[0, 3], [2, 1]])
    ours = s2sgrad.nn.functional.one_hot(s2sgrad.tensor(index), classes)
    theirs = torch64.nn.functional.one_hot(torch64.tensor(index), classes)
    assert ours.dtype == s2sgrad.int64 and not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        s2sgrad.nn.functional.one_hot(s2sgrad.tensor(index), 2)


@pytest.mark.parametrize("pads, mode, value", [
    ((1, 2), "constant", None), ((1, 1, 2, 0), "constant", 0.5), ((2, 1), "reflect", None),
    ((1, 2, 1, 1), "replicate", None), ((2, 2), "circular", None),
])
def test_pad_like_torchs_values_and_gradients(pads, mode, value, torch64):
    # (PyTorch pads the last dimension of a 3-d input, the last two of a 4-d one, outside
    # the constant mode)
    x = np.random.default_rng(1).normal(size=(1, 2, 3, 4) if len(pads) == 4 else (2, 3, 4))
    ours_in = s2sgrad.tensor(x, requires_grad=True)
    theirs_in = torch64.tensor(x, requires_grad=True)
    kwargs = {} if value is None else {"value": value}
    ours = s2sgrad.nn.functional.pad(ours_in, pads, mode=mode, **kwargs)
    theirs = torch64.nn.functional.pad(theirs_in, pads, mode=mode, **kwargs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())
    weights = np.random.default_rng(2).normal(size=tuple(theirs.shape))
    (ours * s2sgrad.tensor(weights)).sum().backward()
    (theirs * torch64.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradients_match_finite_differences(mode):
    """Each mode's gradient (the reflected, repeated and wrapped ones read an axis at its
    sources) against central differences of the padded values, with or without torch."""
    x = np.random.default_rng(3).normal(size=(2, 3, 4))
    pads = (2, 1, 1, 2)
    weights = np.random.default_rng(4).normal(size=(2, 3 + 3, 4 + 3))

    def value(array):
        return float(np.sum(weights * s2sgrad.nn.functional.pad(
            s2sgrad.tensor(array), pads, mode=mode).numpy()))

    t = s2sgrad.tensor(x, requires_grad=True)
    (s2sgrad.nn.functional.pad(t, pads, mode=mode) * s2sgrad.tensor(weights)).sum().backward()
    expected = s2sgrad.testing.numeric_gradient(value, (x,), 0)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-8)
