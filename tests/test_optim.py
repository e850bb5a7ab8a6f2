"""SGD and Adam follow PyTorch's update formulas (re-derived here from PyTorch's documented
algorithms; test_torch_oracle.py compares with torch itself)."""

from __future__ import annotations

import numpy as np
import pytest

from s2sgrad import nn, optim
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.testing import numeric_gradient

rng = np.random.default_rng(3)
A = rng.standard_normal((5, 3))
B = rng.standard_normal(5)
W0 = rng.standard_normal(3)


def quadratic(w: Tensor) -> Tensor:
    return ((A @ w - B) ** 2).sum()


def quadratic_grad(w: np.ndarray) -> np.ndarray:
    # d/dw |A w - b|^2 = 2 A^T (A w - b), by hand; checked numerically just below.
    return 2 * A.T @ (A @ w - B)


def test_quadratic_grad_is_right() -> None:
    expected = numeric_gradient(lambda w: float(np.sum((A @ w - B) ** 2)), [W0.copy()], 0)
    np.testing.assert_allclose(quadratic_grad(W0), expected, rtol=1e-6)
    w = tensor(W0, requires_grad=True)
    quadratic(w).backward()
    np.testing.assert_allclose(w.grad.data, quadratic_grad(W0), rtol=1e-12)


def reference_sgd(w, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0,
                  nesterov=False, maximize=False):
    """PyTorch's documented SGD algorithm, step by step."""
    w, buf = w.copy(), None
    for _ in range(steps):
        g = quadratic_grad(w)
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
    return w


def reference_adam(w, steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                   amsgrad=False, maximize=False):
    """PyTorch's documented Adam algorithm, step by step."""
    w = w.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    v_max = np.zeros_like(w)
    for t in range(1, steps + 1):
        g = quadratic_grad(w)
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        if amsgrad:
            v_max = np.maximum(v_max, v)
        m_hat = m / (1 - betas[0] ** t)
        denom = np.sqrt(v_max if amsgrad else v) / np.sqrt(1 - betas[1] ** t) + eps
        w = w - lr * m_hat / denom
    return w


def run(make, steps: int) -> np.ndarray:
    w = tensor(W0, requires_grad=True)
    opt = make([w])
    for _ in range(steps):
        opt.zero_grad()
        quadratic(w).backward()
        opt.step()
    return w.data


SGD_SETTINGS = [
    {"lr": 0.01},
    {"lr": 0.01, "momentum": 0.9},
    {"lr": 0.01, "momentum": 0.9, "dampening": 0.5},
    {"lr": 0.01, "momentum": 0.9, "nesterov": True},
    {"lr": 0.01, "momentum": 0.5, "weight_decay": 0.1},
    {"lr": 0.001, "maximize": True},
]


@pytest.mark.parametrize("settings", SGD_SETTINGS, ids=str)
def test_sgd_matches_the_algorithm(settings: dict) -> None:
    ours = run(lambda p: optim.SGD(p, **settings), 7)
    np.testing.assert_allclose(ours, reference_sgd(W0, 7, **settings), rtol=1e-12)


ADAM_SETTINGS = [
    {"lr": 0.01},
    {"lr": 0.1, "betas": (0.8, 0.99), "eps": 1e-6},
    {"lr": 0.01, "weight_decay": 0.1},
    {"lr": 0.05, "amsgrad": True},
    {"lr": 0.01, "maximize": True},
]


@pytest.mark.parametrize("settings", ADAM_SETTINGS, ids=str)
def test_adam_matches_the_algorithm(settings: dict) -> None:
    ours = run(lambda p: optim.Adam(p, **settings), 9)
    np.testing.assert_allclose(ours, reference_adam(W0, 9, **settings), rtol=1e-12)


def test_zero_grad_to_none_or_to_zeros_in_place() -> None:
    w = tensor(W0, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    quadratic(w).backward()
    grad = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is grad and np.all(grad.data == 0)
    opt.zero_grad()
    assert w.grad is None


def test_parameters_without_a_gradient_are_left_alone() -> None:
    a = tensor([1.0], requires_grad=True)
    b = tensor([2.0], requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    (a * 3.0).sum().backward()
    opt.step()
    assert b.tolist() == [2.0] and a.tolist() != [1.0]
    assert id(b) not in opt.state


def test_param_groups_and_changing_the_learning_rate() -> None:
    a = tensor([1.0], requires_grad=True)
    b = tensor([1.0], requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    a.grad = tensor([1.0])
    b.grad = tensor([1.0])
    opt.step()
    assert a.tolist() == [0.9] and b.tolist() == [0.5]
    opt.param_groups[0]["lr"] = 1.0
    opt.step()
    assert a.tolist() == [pytest.approx(-0.1)]


def test_step_with_a_closure() -> None:
    w = tensor(W0, requires_grad=True)
    opt = optim.SGD([w], lr=0.01)

    def closure() -> Tensor:
        opt.zero_grad()
        loss = quadratic(w)
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == pytest.approx(float(np.sum((A @ W0 - B) ** 2)))
    np.testing.assert_allclose(w.data, W0 - 0.01 * quadratic_grad(W0), rtol=1e-12)


def test_a_step_invalidates_graphs_that_saved_the_parameter() -> None:
    w = tensor(W0, requires_grad=True)
    opt = optim.SGD([w], lr=0.01)
    first = (w * w).sum()  # the adjoint of w * w reads w
    first.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        first.backward()
    # A @ w does not keep w for its adjoint: after the step its graph is still valid (torch
    # accepts this too).
    second = quadratic(w)
    second.backward(retain_graph=True)
    opt.step()
    second.backward()


def test_optimizer_errors() -> None:
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    w = tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([np.zeros(2)], lr=0.1)


def test_training_a_module_converges_to_least_squares() -> None:
    class Linear(nn.Module):
        def __init__(self) -> None:
            self.W = nn.Parameter(np.zeros(3))
            self.b = nn.Parameter(np.zeros(1))

        def forward(self, x: np.ndarray) -> Tensor:
            return x @ self.W + self.b

    model = Linear()
    opt = optim.Adam(model.parameters(), lr=0.05)
    for _ in range(1500):
        opt.zero_grad()
        ((model(A) - B) ** 2).mean().backward()
        opt.step()
    design = np.hstack([A, np.ones((5, 1))])
    solution = np.linalg.lstsq(design, B, rcond=None)[0]
    np.testing.assert_allclose(np.append(model.W.data, model.b.data), solution, atol=1e-5)
