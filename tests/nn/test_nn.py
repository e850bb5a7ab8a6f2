"""nn.Module finds its parameters; nn.Parameter is a leaf that requires grad."""

from __future__ import annotations

import numpy as np
import pytest

from s2sgrad import nn
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.testing import numeric_gradient


class Linear(nn.Module):
    def __init__(self, n_in: int, n_out: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.W = nn.Parameter(rng.standard_normal((n_in, n_out)))
        self.b = nn.Parameter(np.zeros(n_out))
        self.scale = tensor(2.0)  # a constant Tensor: not a parameter
        self.note = "not a tensor"

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.W + self.b


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()  # allowed, not needed
        self.layers = [Linear(3, 4, seed=1), Linear(4, 1, seed=2)]
        self.extra = {"gain": tensor([1.5], requires_grad=True)}
        self.shared = self.layers[0]  # the same module twice: its parameters count once

    def forward(self, x: Tensor) -> Tensor:
        h = np.tanh(self.layers[0](x))
        return self.layers[1](h) * self.extra["gain"]


def test_parameter_is_a_leaf_that_requires_grad() -> None:
    p = nn.Parameter(np.array([1.0, 2.0]))
    assert isinstance(p, Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert not nn.Parameter([1.0], requires_grad=False).requires_grad


def test_named_parameters_in_attribute_order_through_containers() -> None:
    model = MLP()
    names = [name for name, _ in model.named_parameters()]
    assert names == ["layers.0.W", "layers.0.b", "layers.1.W", "layers.1.b", "extra.gain"]
    assert [p for p in model.parameters()] == [p for _, p in model.named_parameters()]
    assert [type(m).__name__ for m in model.modules()] == ["MLP", "Linear", "Linear"]


def test_call_runs_forward_and_gradients_reach_every_parameter() -> None:
    model = MLP()
    x = np.random.default_rng(5).standard_normal((2, 3))
    loss = (model(tensor(x)) ** 2).sum()
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape, name

    def as_function(w0: np.ndarray) -> float:
        layer0, layer1 = model.layers
        h = np.tanh(x @ w0 + layer0.b.data)
        return float(np.sum(((h @ layer1.W.data + layer1.b.data) * 1.5) ** 2))

    expected = numeric_gradient(as_function, [model.layers[0].W.data.copy()], 0)
    np.testing.assert_allclose(model.layers[0].W.grad.data, expected, rtol=1e-6, atol=1e-9)


def test_zero_grad() -> None:
    model = Linear(2, 1)
    model(tensor(np.ones((1, 2)))).sum().backward()
    grad = model.W.grad
    model.zero_grad(set_to_none=False)
    assert model.W.grad is grad and np.all(grad.data == 0)
    model.zero_grad()
    assert model.W.grad is None and model.b.grad is None


def test_train_and_eval_flags() -> None:
    model = MLP()
    assert model.eval() is model
    assert not model.training and not model.layers[1].training
    model.train()
    assert model.training and model.layers[0].training


def test_forward_must_be_defined() -> None:
    with pytest.raises(NotImplementedError, match="Empty must define forward"):
        type("Empty", (nn.Module,), {})()(1)


def test_repr_shows_sub_modules_not_parameters() -> None:
    # PyTorch's form (tests/nn/test_module_repr.py): a module without sub-modules or settings
    assert repr(Linear(2, 1)) == "Linear()"


def test_reference_cycles_between_modules() -> None:
    a, b = Linear(1, 1), Linear(1, 1, seed=3)
    a.peer, b.peer = b, a
    assert len(list(a.parameters())) == 4
