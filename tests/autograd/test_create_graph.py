"""``create_graph=True``: gradients through Tensors that can be differentiated again.

``check_double_backward(f, *arrays)`` runs ``f`` on leaf Tensors, takes the gradients with
``autograd.grad(..., create_graph=True)``, back-propagates ``<grads, v>`` for a random ``v``,
and compares each leaf's ``.grad`` (a Hessian-vector product) with central differences of the
first-order gradient (computed without ``create_graph``), entry by entry. The programs are the
ones users write: Tensor operators, ``@grad`` functions, both mixed, fan-out, tuples,
indexing, three levels deep, a gradient penalty that trains.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import s2sgrad
from s2sgrad import autograd
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.testing import numeric_gradient


def check_double_backward(f: Callable[..., Tensor], *arrays: np.ndarray, seed: int = 0
                          ) -> None:
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    rng = np.random.default_rng(seed)
    v = [rng.standard_normal(a.shape) for a in arrays]
    leaves = [tensor(a, requires_grad=True) for a in arrays]
    grads = autograd.grad(f(*leaves), leaves, create_graph=True)
    assert all(g.requires_grad for g in grads), "the gradients keep their graph"
    total = sum((g * tensor(w)).sum() for g, w in zip(grads, v, strict=True))
    total.backward()

    def first(*values: np.ndarray) -> float:
        ts = [tensor(a, requires_grad=True) for a in values]
        gs = autograd.grad(f(*ts), ts)
        return float(sum(np.sum(g.data * w) for g, w in zip(gs, v, strict=True)))

    for i, leaf in enumerate(leaves):
        expected = numeric_gradient(first, arrays, i)
        np.testing.assert_allclose(leaf.grad.data, expected, rtol=1e-5, atol=1e-7,
                                   err_msg=f"second derivative of input {i}")


@s2sgrad.grad
def tanh_layer(w, x):
    return np.tanh(x @ w)


@s2sgrad.grad
def two_outputs(x):
    return np.sin(x), x * x


@s2sgrad.grad
def looped(x, n):
    y = x
    for _ in range(n):
        y = np.tanh(y) * x
    return np.sum(y)


def fan_out(y):
    return (y * y).sum() + y.sum() * y[0]  # y feeds three uses


X = np.array([0.3, -1.2, 0.7])
W = np.array([[0.5, -0.3], [0.2, 0.8], [-0.4, 0.1]])


@pytest.mark.parametrize("f, arrays", [
    (lambda x: (x * x * x).sum(), [X]),
    (lambda x: (x.exp() * x.sin()).sum(), [X]),
    (lambda x: ((x ** 3).sum() / x.sum()), [np.abs(X) + 1.0]),
    (lambda w, x: tanh_layer(w, x).sum(), [W, X]),
    (lambda w, x: (tanh_layer(w, x) ** 2).sum() + (w * w).sum(), [W, X]),
    (lambda x: fan_out(x * 2.0), [X]),
    (lambda x: (two_outputs(x)[0] * two_outputs(x)[1]).sum(), [X]),
    (lambda x: (x[1:] * x[:-1]).sum(), [X]),
    (lambda x: looped(x, 3), [X]),
], ids=["ops", "exp-sin", "quotient", "grad-function", "mixed", "fan-out", "tuple-output",
        "indexing", "loop"])
def test_second_derivatives_match_finite_differences(f, arrays):
    check_double_backward(f, *arrays)


def test_backward_with_create_graph_gives_a_differentiable_grad():
    x = tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    first = x.grad
    assert first.grad_fn is not None
    np.testing.assert_allclose(first.data, [3.0, 12.0])
    x.grad = None
    first.sum().backward()
    np.testing.assert_allclose(x.grad.data, [6.0, 12.0])  # 6x, checked by hand and below
    check_double_backward(lambda t: (t ** 3).sum(), np.array([1.0, 2.0]))


def test_third_derivative():
    x = tensor(0.7, requires_grad=True)
    y = x.sin() * x ** 3
    (d1,) = autograd.grad(y, x, create_graph=True)
    (d2,) = autograd.grad(d1, x, create_graph=True)
    (d3,) = autograd.grad(d2, x)

    def second(a):
        return float(s2sgrad.gradient(s2sgrad.gradient(lambda_free))(a))

    assert np.isclose(d3.item(), numeric_gradient(second, [0.7], 0), rtol=1e-5)
    assert np.isclose(d2.item(), second(0.7), rtol=1e-10)


def lambda_free(x):
    return np.sin(x) * x ** 3


def test_gradient_penalty_trains_and_matches_the_functional_form():
    rng = np.random.default_rng(3)
    data = rng.standard_normal((8, 3))
    w0 = rng.standard_normal((3, 2)) * 0.5
    w = tensor(w0.copy(), requires_grad=True)
    x = tensor(data, requires_grad=True)
    out = tanh_layer(w, x).sum()
    (gx,) = autograd.grad(out, x, create_graph=True)
    penalty = (gx ** 2).sum()
    penalty.backward()

    def penalty_of(w_, x_):
        return np.sum(s2sgrad.gradient(summed_layer, 1)(w_, x_) ** 2)

    np.testing.assert_allclose(w.grad.data, s2sgrad.gradient(penalty_of)(w0, data),
                               rtol=1e-10, atol=1e-12)
    losses = []
    opt = s2sgrad.optim.SGD([w], lr=0.05)
    for _ in range(20):
        opt.zero_grad()
        (gx,) = autograd.grad(tanh_layer(w, x).sum(), x, create_graph=True)
        loss = (gx ** 2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def summed_layer(w, x):
    return np.sum(np.tanh(x @ w))


def test_hessian_vector_product_by_double_backward():
    x = tensor(X, requires_grad=True)
    v = np.array([1.0, 0.5, -2.0])
    (g,) = autograd.grad((x.exp() * x).sum(), x, create_graph=True)
    (hv,) = autograd.grad((g * tensor(v)).sum(), x)
    expected = s2sgrad.hvp(exp_times, (X,), (v,))
    np.testing.assert_allclose(hv.data, expected, rtol=1e-12)


def exp_times(x):
    return np.sum(np.exp(x) * x)


def test_an_input_changed_in_place_is_refused():
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    out = (y ** 3).sum()
    y.add_(1.0)  # the pow node's input changed since it ran
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        autograd.grad(out, x, create_graph=True)


class Model:
    def __init__(self, w, b):
        self.w, self.b = w, b

    @s2sgrad.grad
    def __call__(self, x):
        return np.sum(np.tanh(x @ self.w + self.b))


def test_a_gradient_penalty_through_a_model_s_parameters():
    """The model reads its parameters from attributes (self.w): the penalty on the input
    gradient is differentiated in them, as in PyTorch."""
    rng = np.random.default_rng(5)
    b0 = rng.standard_normal(2)
    model = Model(tensor(W, requires_grad=True), tensor(b0, requires_grad=True))
    x = tensor(X, requires_grad=True)
    (gx,) = autograd.grad(model(x), x, create_graph=True)
    (gx ** 2).sum().backward()

    def penalty(w, b, x_):
        return np.sum(s2sgrad.gradient(plain_model, 2)(w, b, x_) ** 2)

    expected = s2sgrad.gradient(penalty, (0, 1))(W, b0, X)
    np.testing.assert_allclose(model.w.grad.data, expected[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.b.grad.data, expected[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x.grad.data, s2sgrad.gradient(penalty, 2)(W, b0, X),
                               rtol=1e-10, atol=1e-12)
    for i, a in enumerate((W, b0, X)):
        numeric = numeric_gradient(penalty, [W, b0, X], i)
        got = (model.w.grad, model.b.grad, x.grad)[i].data
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-7)


def plain_model(w, b, x):
    return np.sum(np.tanh(x @ w + b))


# --- torch.autograd.functional's names, for Tensor users ------------------------------------

def tensor_f(x):
    return (x.exp() * x.sin()).sum()


def numpy_f(x):
    return np.sum(np.exp(x) * np.sin(x))


def tensor_g(x):
    return x.tanh() * x[0]


def numpy_g(x):
    return np.tanh(x) * x[0]


V = np.array([1.0, 0.5, -2.0])


def test_functional_hessian_and_hvp_are_second_derivatives():
    from s2sgrad.autograd import functional as F
    H = F.hessian(tensor_f, tensor(X)).data
    expected = np.stack([numeric_gradient(lambda x, k=k: s2sgrad.gradient(numpy_f)(x)[k],
                                          [X], 0) for k in range(3)])
    np.testing.assert_allclose(H, expected, rtol=1e-5, atol=1e-7)
    value, hv = F.hvp(tensor_f, tensor(X), tensor(V))
    np.testing.assert_allclose(hv.data, H @ V, rtol=1e-12)
    assert np.isclose(value.item(), numpy_f(X)) and not value.requires_grad


def test_functional_jacobian_jvp_vjp_agree_with_finite_differences():
    from s2sgrad.autograd import functional as F
    J = F.jacobian(tensor_g, tensor(X)).data
    expected = np.stack([numeric_gradient(lambda x, k=k: numpy_g(x)[k], [X], 0)
                         for k in range(3)])
    np.testing.assert_allclose(J, expected, rtol=1e-5, atol=1e-7)
    _, jv = F.jvp(tensor_g, tensor(X), tensor(V))
    np.testing.assert_allclose(jv.data, J @ V, rtol=1e-12)
    _, vj = F.vjp(tensor_g, tensor(X), tensor(V))
    np.testing.assert_allclose(vj.data, V @ J, rtol=1e-12)


def test_functional_matches_torch():
    torch = pytest.importorskip("torch")
    from s2sgrad.autograd import functional as F
    tx, tv = torch.tensor(X), torch.tensor(V)
    pairs = [
        (F.hessian(tensor_f, tensor(X)).data,
         torch.autograd.functional.hessian(tensor_f, tx).numpy()),
        (F.hvp(tensor_f, tensor(X), tensor(V))[1].data,
         torch.autograd.functional.hvp(tensor_f, tx, tv)[1].numpy()),
        (F.jacobian(tensor_g, tensor(X)).data,
         torch.autograd.functional.jacobian(tensor_g, tx).numpy()),
        (F.jvp(tensor_g, tensor(X), tensor(V))[1].data,
         torch.autograd.functional.jvp(tensor_g, tx, tv)[1].numpy()),
        (F.vjp(tensor_g, tensor(X), tensor(V))[1].data,
         torch.autograd.functional.vjp(tensor_g, tx, tv)[1].numpy()),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


class Critic(s2sgrad.nn.Module):
    def __init__(self, rng):
        self.W1 = s2sgrad.nn.Parameter(rng.standard_normal((3, 4)) * 0.5)
        self.W2 = s2sgrad.nn.Parameter(rng.standard_normal(4) * 0.5)

    def forward(self, x):
        return np.tanh(x @ self.W1) @ self.W2


def plain_critic(W1, W2, x):
    return np.sum(np.tanh(x @ W1) @ W2)


def two_sided_penalty(W1, W2, x):
    g = s2sgrad.gradient(plain_critic, 2)(W1, W2, x)
    return np.mean((np.sum(g ** 2, axis=1) - 1.0) ** 2)


def test_wgan_gp_penalty_through_an_nn_module():
    """The penalty of WGAN-GP, (|grad_x critic(x)| - 1)^2, trained through a Module."""
    rng = np.random.default_rng(0)
    critic = Critic(rng)
    data = rng.standard_normal((5, 3))
    x = tensor(data, requires_grad=True)
    (gx,) = autograd.grad(critic(x).sum(), x, create_graph=True)
    (((gx ** 2).sum(axis=1) - 1.0) ** 2).mean().backward()
    args = [critic.W1.data, critic.W2.data, data]
    for i, param in enumerate((critic.W1, critic.W2)):
        np.testing.assert_allclose(param.grad.data, numeric_gradient(two_sided_penalty, args, i),
                                   rtol=1e-5, atol=1e-7)
