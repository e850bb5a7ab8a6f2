"""Tensors a @grad function reads through attributes of its arguments (self.W), globals
or closures are inputs of its one compiled node, and receive gradients like arguments."""

import numpy as np
import pytest

import s2sgrad as sg
from s2sgrad.testing import numeric_gradient
from tests.cases import modules


def numeric(f, t):
    """The gradient of f() with respect to the data of Tensor t, by central differences
    (f reads t itself, so each value is written into t's data)."""
    start = t.data.copy()

    def at(data):
        t.data[...] = data
        with sg.no_grad():
            return f().item()

    try:
        return numeric_gradient(at, [start], 0)
    finally:
        t.data[...] = start


def test_method_reading_self_parameters_is_one_compiled_node():
    rng = np.random.default_rng(0)
    model = modules.Linear(3, 2, rng)
    x = rng.standard_normal((5, 3))
    out = model(x)
    assert "self_W_bar" in out.grad_fn.source and "self_b_bar" in out.grad_fn.source
    loss = out.sum()
    loss.backward()
    for p in (model.W, model.b):
        np.testing.assert_allclose(p.grad.data, numeric(lambda: model(x).sum(), p),
                                   rtol=1e-6, atol=1e-9)


def test_nested_module_attributes():
    rng = np.random.default_rng(1)
    model = modules.TwoLayer(rng)
    x = rng.standard_normal((4, 3))
    model(x).backward()
    params = list(model.parameters())
    assert len(params) == 3 and all(p.grad is not None for p in params)
    for p in params:
        np.testing.assert_allclose(p.grad.data, numeric(lambda: model(x), p), rtol=1e-6,
                                   atol=1e-9)


def test_global_and_closure_tensors_receive_gradients():
    y = sg.tensor(np.array([0.3, -0.2]), requires_grad=True)
    modules.TEMPERATURE.grad = None
    out = modules.tempered(y)
    out.backward()
    np.testing.assert_allclose(modules.TEMPERATURE.grad.data,
                               numeric(lambda: modules.tempered(y), modules.TEMPERATURE),
                               rtol=1e-6)
    weight = sg.tensor(0.7, requires_grad=True)
    penalty = modules.make_penalty(weight)
    penalty(y).backward()
    assert weight.grad.item() == pytest.approx(float(np.sum(y.data ** 2)))


def test_only_implicit_tensors_require_grad():
    rng = np.random.default_rng(2)
    model = modules.Linear(3, 2, rng)
    out = model(rng.standard_normal((2, 3)))  # x is a plain array
    assert out.requires_grad and out.grad_fn is not None


def test_no_grad_records_nothing():
    rng = np.random.default_rng(3)
    model = modules.Linear(3, 2, rng)
    with sg.no_grad():
        out = model(rng.standard_normal((2, 3)))
    assert not out.requires_grad and out.grad_fn is None


def test_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    model = modules.Linear(3, 2, rng)
    x = rng.standard_normal((5, 3))
    (model(x) ** 2).sum().backward()
    W = torch.tensor(model.W.data, requires_grad=True)
    b = torch.tensor(model.b.data, requires_grad=True)
    ((2.0 * torch.tanh(torch.tensor(x) @ W + b)) ** 2).sum().backward()
    np.testing.assert_allclose(model.W.grad.data, W.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(model.b.grad.data, b.grad.numpy(), rtol=1e-12)
