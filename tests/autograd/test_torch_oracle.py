"""PyTorch as the oracle: the same scenarios run in torch (float64) and in s2sgrad, and the
gradients, printed forms, node names and error messages are compared. Skipped without torch.
Written against torch 2.13.0.
"""

from __future__ import annotations

import copy
import re
import warnings
from collections.abc import Callable

import numpy as np
import pytest

from s2sgrad import autograd, optim
from s2sgrad.autograd import grad_mode
from s2sgrad.autograd.tensor import tensor

torch = pytest.importorskip("torch")


class Lib:
    """What a scenario needs from a library, so that one scenario runs on both."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "torch":
            self.no_grad = torch.no_grad
            self.grad = torch.autograd.grad
            self.optim = torch.optim
        else:
            self.no_grad = grad_mode.no_grad
            self.grad = autograd.grad
            self.optim = optim

    def tensor(self, data, requires_grad: bool = False):
        if self.name == "torch":
            data = np.asarray(data)
            dtype = torch.float64 if data.dtype.kind == "f" else None
            return torch.tensor(data, dtype=dtype, requires_grad=requires_grad)
        return tensor(data, requires_grad=requires_grad)


TORCH, OURS = Lib("torch"), Lib("s2sgrad")


def values(t) -> np.ndarray | None:
    if t is None:
        return None
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# -- gradients -----------------------------------------------------------------------------

rng = np.random.default_rng(11)
X = rng.standard_normal((4, 3))
W = rng.standard_normal((3, 2))
V = rng.uniform(0.5, 2.0, 3)


def mlp(lib: Lib):
    x, w = lib.tensor(X), lib.tensor(W, requires_grad=True)
    b = lib.tensor(np.zeros(2), requires_grad=True)
    loss = ((x @ w + b).tanh() - 1.0).pow(2).mean() + w.abs().sum() * 0.01
    loss.backward()
    return [w.grad, b.grad]


def elementwise(lib: Lib):
    v = lib.tensor(V, requires_grad=True)
    y = (v.exp() + v.log() * v.sqrt() - 1.0 / v + 2.0 ** v + v.sigmoid() * v.relu()).sum()
    y.backward()
    return [v.grad]


def shapes(lib: Lib):
    m = lib.tensor(X, requires_grad=True)
    y = (m.T.reshape(2, 6).transpose(0, 1) * m.reshape(6, 2)).sum(0).mean()
    y.backward()
    return [m.grad]


def indexing(lib: Lib):
    m = lib.tensor(X, requires_grad=True)
    y = (m[0] * m[:, 1].sum() + m[[0, 0, 2], :].sum(0) - m[1, 2] + m[1:, 0].sum()).sum()
    y.backward()
    return [m.grad]


def reductions(lib: Lib):
    m = lib.tensor(X, requires_grad=True)
    y = (m.sum(1, keepdim=True) * m.mean(0)).sum() + m.prod()
    y.backward()
    return [m.grad]


def fan_out_and_reuse(lib: Lib):
    x = lib.tensor([2.0, -1.0], requires_grad=True)
    y = x * x
    z = (y + 1) * (y * 2) - y.clamp(0.5, 3.0)
    z.backward(lib.tensor([1.0, 0.5]))
    return [x.grad]


def accumulation(lib: Lib):
    x = lib.tensor([2.0], requires_grad=True)
    (x ** 2).sum().backward()
    (x ** 3).sum().backward()
    return [x.grad]


def retain_graph_twice(lib: Lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).tanh()
    y.sum().backward(retain_graph=True)
    (y * 2).sum().backward()
    return [x.grad]


def retained_non_leaf(lib: Lib):
    x = lib.tensor([2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()
    return [x.grad, y.grad]


def autograd_grad(lib: Lib):
    x = lib.tensor([2.0, 1.0], requires_grad=True)
    w = lib.tensor([0.5, 0.5], requires_grad=True)
    u = lib.tensor([3.0], requires_grad=True)
    y = x * w
    gx, gy, gu = lib.grad((y * y).sum(), [x, y, u], allow_unused=True)
    assert gu is None and x.grad is None
    return [gx, gy]


def in_place_on_non_leaf(lib: Lib):
    x = lib.tensor([2.0, -1.0], requires_grad=True)
    z = lib.tensor([3.0, 0.5], requires_grad=True)
    y = x * 1
    y *= z
    y += x
    y.sum().backward()
    return [x.grad, z.grad]


def buffer_in_place(lib: Lib):
    x = lib.tensor([2.0, 3.0], requires_grad=True)
    buffer = lib.tensor([0.0, 0.0])
    buffer += x * x
    buffer.sum().backward()
    return [x.grad]


def no_grad_update(lib: Lib):
    w = lib.tensor([0.5], requires_grad=True)
    for _ in range(3):
        loss = ((w * 3.0 - 1.0) ** 2).sum()
        loss.backward()
        with lib.no_grad():
            w -= 0.1 * w.grad
        w.grad.zero_()
    return [w]


def leaf_backward(lib: Lib):
    x = lib.tensor([2.0, 3.0], requires_grad=True)
    x.backward(lib.tensor([1.0, 2.0]))
    return [x.grad]


def saved_nothing_twice(lib: Lib):
    x = lib.tensor([2.0, 1.0], requires_grad=True)
    y = x + 3.0
    y.backward(lib.tensor([1.0, 1.0]))
    y.backward(lib.tensor([1.0, 1.0]))
    return [x.grad]


SCENARIOS = [mlp, elementwise, shapes, indexing, reductions, fan_out_and_reuse, accumulation,
             retain_graph_twice, retained_non_leaf, autograd_grad, in_place_on_non_leaf,
             buffer_in_place, no_grad_update, leaf_backward, saved_nothing_twice]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_same_gradients_as_torch(scenario: Callable) -> None:
    expected = [values(t) for t in scenario(TORCH)]
    got = [values(t) for t in scenario(OURS)]
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_sum_backward_twice_like_torch() -> None:
    def twice(lib: Lib):
        x = lib.tensor([2.0], requires_grad=True)
        z = x.sum()
        z.backward()
        z.backward()
        return [x.grad]

    np.testing.assert_allclose(values(twice(OURS)[0]), values(twice(TORCH)[0]))


# -- error messages -------------------------------------------------------------------------


def normalize(message: str) -> str:
    """Erase what differs by design: torch's type names and shape class, its C++ origin note,
    and the hint that follows a version error."""
    message = re.sub(r"torch\.Size\(\[([^\]]*)\]\)", lambda m: repr(tuple(
        int(n) for n in m.group(1).split(",") if n.strip())), message)
    message = re.sub(r"\[torch\.(Double|Float)Tensor ", "[float64 ", message)
    message = re.sub(r" \(Triggered internally at .*\)$", "", message)
    return message.split(" Hint:")[0]


def error_of(scenario: Callable, lib: Lib) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        scenario(lib)
    return info.type, normalize(str(info.value))


def backward_twice(lib):
    x = lib.tensor([2.0], requires_grad=True)
    z = (x * x).sum()
    z.backward()
    z.backward()


def autograd_grad_twice(lib):
    x = lib.tensor([2.0], requires_grad=True)
    z = (x * x).sum()
    lib.grad(z, [x])
    lib.grad(z, [x])


def non_scalar(lib):
    (lib.tensor([2.0, 3.0], requires_grad=True) * 2).backward()


def wrong_shape(lib):
    (lib.tensor([2.0, 3.0], requires_grad=True) * 2).backward(lib.tensor([1.0, 1.0, 1.0]))


def not_requiring_grad(lib):
    lib.tensor([2.0]).sum().backward()


def flag_of_non_leaf(lib):
    (lib.tensor([2.0], requires_grad=True) * 2).requires_grad_(False)


def integer_requires_grad(lib):
    lib.tensor(np.array([1, 2]), requires_grad=True)


def integer_requires_grad_(lib):
    lib.tensor(np.array([1, 2])).requires_grad_()


def leaf_in_place(lib):
    x = lib.tensor([2.0], requires_grad=True)
    x += 1


def leaf_zero_(lib):
    lib.tensor([2.0], requires_grad=True).zero_()


def saved_leaf_changed(lib):
    x = lib.tensor([2.0], requires_grad=True)
    y = (x * x).sum()
    with lib.no_grad():
        x -= 1
    y.backward()


def saved_constant_changed(lib):
    x = lib.tensor([2.0], requires_grad=True)
    c = lib.tensor([3.0])
    y = (x * c).sum()
    c += 1
    y.backward()


def saved_output_changed(lib):
    x = lib.tensor([2.0], requires_grad=True)
    y = x.tanh()
    y += 1
    y.sum().backward()


def unused_input(lib):
    x = lib.tensor([2.0], requires_grad=True)
    w = lib.tensor([2.0], requires_grad=True)
    lib.grad((x * 2).sum(), [x, w])


def input_not_requiring_grad(lib):
    x = lib.tensor([2.0], requires_grad=True)
    lib.grad((x * 2).sum(), [lib.tensor([1.0])])


def retain_grad_without_requires_grad(lib):
    lib.tensor([2.0]).retain_grad()


def item_of_many(lib):
    lib.tensor([2.0, 3.0]).item()


def numpy_of_requires_grad(lib):
    lib.tensor([2.0], requires_grad=True).numpy()


def len_of_0d(lib):
    len(lib.tensor(2.0))


def bool_of_many(lib):
    bool(lib.tensor([1.0, 2.0]))


def grad_of_wrong_size(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.grad = lib.tensor([1.0, 1.0, 1.0])


def deepcopy_non_leaf(lib):
    copy.deepcopy(lib.tensor([1.0], requires_grad=True) * 2)


def empty_optimizer(lib):
    lib.optim.SGD([], lr=0.1)


def negative_learning_rate(lib):
    lib.optim.SGD([lib.tensor([1.0], requires_grad=True)], lr=-1)


def non_leaf_parameter(lib):
    lib.optim.Adam([lib.tensor([1.0], requires_grad=True) * 2])


def bad_beta(lib):
    lib.optim.Adam([lib.tensor([1.0], requires_grad=True)], betas=(0.9, 1.0))


ERRORS = [backward_twice, autograd_grad_twice, non_scalar, wrong_shape, not_requiring_grad,
          flag_of_non_leaf, integer_requires_grad, integer_requires_grad_, leaf_in_place,
          leaf_zero_, saved_leaf_changed, saved_constant_changed, saved_output_changed,
          unused_input, input_not_requiring_grad, retain_grad_without_requires_grad,
          item_of_many, numpy_of_requires_grad, len_of_0d, bool_of_many, grad_of_wrong_size,
          empty_optimizer, negative_learning_rate, non_leaf_parameter, bad_beta]


@pytest.mark.parametrize("scenario", ERRORS, ids=lambda f: f.__name__)
def test_same_error_as_torch(scenario: Callable) -> None:
    assert error_of(scenario, OURS) == error_of(scenario, TORCH)


def test_deepcopy_of_a_non_leaf_error_starts_like_torch() -> None:
    ours = error_of(deepcopy_non_leaf, OURS)[1]
    theirs = error_of(deepcopy_non_leaf, TORCH)[1]
    assert theirs.startswith(ours)  # torch adds a note about torch.nn.utils.weight_norm


def test_same_warning_for_the_grad_of_a_non_leaf() -> None:
    messages = []
    for lib in (TORCH, OURS):
        y = lib.tensor([1.0], requires_grad=True) * 2
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            assert y.grad is None
        messages.append(normalize(str(record[0].message)))
    assert messages[0] == messages[1]


# -- printing and node names ---------------------------------------------------------------

PRINTED = [
    8.0, [2.0, 3.0], [0.1, 2.0], [1e-5, 1.0], [[1.0, 2.0], [3.0, 4.0]], [1e9, 1.0], [],
    -0.0, [1.0 / 3.0], [[-1.5, 20.0]], [1.5, float("nan"), float("inf")], [0.0, 0.0],
    np.arange(2000.0).tolist(), [[0.5] * 30] * 2, [-2.0, 0.25, 1e4], [1, 2, 3], [True, False],
    np.linspace(-3, 3, 12).reshape(2, 2, 3).tolist(),
]


@pytest.mark.parametrize("data", PRINTED, ids=lambda d: str(d)[:30])
def test_printed_like_torch(data) -> None:
    # torch's default dtype (float32) prints without a dtype, and so does ours (float64).
    assert repr(tensor(data)) == repr(torch.tensor(data))


def test_printed_with_requires_grad_and_grad_fn_like_torch() -> None:
    for lib_tensor, text in ((tensor, repr), (torch.tensor, repr)):
        x = lib_tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        assert text(x * 2) == "tensor([[2., 4.],\n        [6., 8.]], grad_fn=<MulBackward0>)"
        assert text(x) == "tensor([[1., 2.],\n        [3., 4.]], requires_grad=True)"


EXPRESSIONS = {
    "x * x": lambda x, m: x * x, "x + 3": lambda x, m: x + 3, "3 + x": lambda x, m: 3 + x,
    "x - 1": lambda x, m: x - 1, "1 - x": lambda x, m: 1 - x, "x / 2": lambda x, m: x / 2,
    "x ** 2": lambda x, m: x ** 2, "x ** x": lambda x, m: x ** x, "2 ** x": lambda x, m: 2 ** x,
    "-x": lambda x, m: -x, "x.sum()": lambda x, m: x.sum(), "m.sum(0)": lambda x, m: m.sum(0),
    "x.mean()": lambda x, m: x.mean(), "m.mean(0)": lambda x, m: m.mean(0),
    "m @ m": lambda x, m: m @ m, "m @ x": lambda x, m: m @ x, "x @ x": lambda x, m: x @ x,
    "m.T": lambda x, m: m.T, "m.transpose": lambda x, m: m.transpose(0, 1),
    "m.reshape": lambda x, m: m.reshape(4), "m.view": lambda x, m: m.view(4),
    "m.flatten": lambda x, m: m.flatten(), "m.permute": lambda x, m: m.permute(1, 0),
    "tanh": lambda x, m: x.tanh(), "exp": lambda x, m: x.exp(), "log": lambda x, m: x.log(),
    "sqrt": lambda x, m: x.sqrt(), "abs": lambda x, m: x.abs(), "relu": lambda x, m: x.relu(),
    "sigmoid": lambda x, m: x.sigmoid(), "sin": lambda x, m: x.sin(),
    "cos": lambda x, m: x.cos(), "clamp": lambda x, m: x.clamp(0, 1),
    "clone": lambda x, m: x.clone(), "square": lambda x, m: x.square(),
    "pow(3)": lambda x, m: x.pow(3), "dot": lambda x, m: x.dot(x), "mm": lambda x, m: m.mm(m),
    "unsqueeze": lambda x, m: x.unsqueeze(0), "squeeze": lambda x, m: m.reshape(1, 4).squeeze(),
    "prod": lambda x, m: x.prod(), "x[0]": lambda x, m: x[0], "m[:, 0]": lambda x, m: m[:, 0],
    "m[0, 1]": lambda x, m: m[0, 1], "x[0:1]": lambda x, m: x[0:1],
    "x[[0, 1]]": lambda x, m: x[[0, 1]],
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_node_names_like_torch(name: str) -> None:
    names = []
    for lib in (TORCH, OURS):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        m = lib.tensor(np.ones((2, 2)), requires_grad=True)
        node = EXPRESSIONS[name](x, m).grad_fn
        names.append(type(node).__name__ if lib is TORCH else node.name)
    assert names[1] == names[0]


# -- optimizers ----------------------------------------------------------------------------


OPTIMIZERS = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}),
    ("SGD", {"lr": 0.05, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.1, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "maximize": True}),
]


GRADIENTS = [(rng.standard_normal((3, 2)), rng.standard_normal(2)) for _ in range(8)]


def steps(lib: Lib, name: str, settings: dict) -> list[np.ndarray]:
    """The same gradients given to both libraries' optimizers: only the update formulas
    differ, so the parameters must agree to rounding."""
    w = lib.tensor(W, requires_grad=True)
    b = lib.tensor(np.zeros(2), requires_grad=True)
    opt = getattr(lib.optim, name)([w, b], **settings)
    for g_w, g_b in GRADIENTS:
        opt.zero_grad()
        w.grad, b.grad = lib.tensor(g_w), lib.tensor(g_b)
        opt.step()
    return [values(w), values(b)]


@pytest.mark.parametrize(("name", "settings"), OPTIMIZERS, ids=str)
def test_optimizer_updates_like_torch(name: str, settings: dict) -> None:
    for e, g in zip(steps(TORCH, name, settings), steps(OURS, name, settings), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-15)


def train(lib: Lib, name: str, settings: dict) -> list[np.ndarray]:
    w = lib.tensor(W, requires_grad=True)
    b = lib.tensor(np.zeros(2), requires_grad=True)
    opt = getattr(lib.optim, name)([w, b], **settings)
    x = lib.tensor(X)
    for step in range(8):
        opt.zero_grad()
        loss = ((x @ w + b).tanh() - 0.3 * step).pow(2).mean()
        loss.backward()
        opt.step()
    return [values(w), values(b)]


@pytest.mark.parametrize(("name", "settings"), OPTIMIZERS, ids=str)
def test_training_like_torch(name: str, settings: dict) -> None:
    # Gradients differ from torch's by rounding (~1e-16), which eight steps may amplify.
    for e, g in zip(train(TORCH, name, settings), train(OURS, name, settings), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_element_assignment_in_the_graph_like_torch() -> None:
    """t[i] = v on a Tensor in the graph is recorded; gradients match torch's (indices
    without repeats, where torch's index_put and ours agree)."""
    rng = np.random.default_rng(7)
    x0, w0 = rng.standard_normal((3, 4)), rng.standard_normal(4)

    def run(make, matrix):
        x, w = make(x0), make(w0)
        y = x * 2.0
        y[1] = w * x[0]
        y[:, 2] = matrix(y[:, 2]) * 0.5
        (y * y).sum().backward()
        return x.grad, w.grad

    ours = run(lambda a: tensor(a.copy(), requires_grad=True), lambda t: t)
    theirs = run(lambda a: torch.tensor(a.copy(), requires_grad=True), lambda t: t.clone())
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.data, b.numpy(), rtol=1e-12)
