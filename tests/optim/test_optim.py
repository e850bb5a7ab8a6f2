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


# -- AdamW and RMSprop -----------------------------------------------------------------------


def reference_adamw(w, steps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                    amsgrad=False):
    """The AdamW algorithm (decoupled weight decay), step by step."""
    w = w.copy()
    m, v, v_max = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t in range(1, steps + 1):
        g = quadratic_grad(w)
        w = w * (1 - lr * weight_decay)
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        v_max = np.maximum(v_max, v)
        denom = np.sqrt(v_max if amsgrad else v) / np.sqrt(1 - betas[1] ** t) + eps
        w = w - lr * m / (1 - betas[0] ** t) / denom
    return w


def reference_rmsprop(w, steps, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0,
                      momentum=0.0, centered=False):
    """PyTorch's documented RMSprop algorithm, step by step."""
    w = w.copy()
    v, g_avg, buf = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for _ in range(steps):
        g = quadratic_grad(w)
        if weight_decay:
            g = g + weight_decay * w
        v = alpha * v + (1 - alpha) * g * g
        v_tilde = v
        if centered:
            g_avg = alpha * g_avg + (1 - alpha) * g
            v_tilde = v - g_avg * g_avg
        if momentum:
            buf = momentum * buf + g / (np.sqrt(v_tilde) + eps)
            w = w - lr * buf
        else:
            w = w - lr * g / (np.sqrt(v_tilde) + eps)
    return w


ADAMW_SETTINGS = [
    {},
    {"lr": 0.05},
    {"lr": 0.05, "weight_decay": 0.3},
    {"lr": 0.05, "weight_decay": 0.0},
    {"lr": 0.1, "betas": (0.8, 0.95), "eps": 1e-6, "amsgrad": True},
    {"lr": 0.05, "weight_decay": 0.2, "amsgrad": True},
]

RMSPROP_SETTINGS = [
    {},
    {"lr": 0.05, "alpha": 0.9},
    {"lr": 0.01, "weight_decay": 0.1},
    {"lr": 0.01, "momentum": 0.9},
    {"lr": 0.01, "centered": True},
    {"lr": 0.01, "momentum": 0.5, "centered": True, "weight_decay": 0.1},
    {"lr": 0.02, "alpha": 0.5, "eps": 1e-4, "momentum": 0.8, "centered": True},
]


@pytest.mark.parametrize("settings", ADAMW_SETTINGS, ids=str)
def test_adamw_matches_the_algorithm(settings: dict) -> None:
    ours = run(lambda p: optim.AdamW(p, **settings), 10)
    np.testing.assert_allclose(ours, reference_adamw(W0, 10, **settings), rtol=1e-12)


def test_adamw_differs_from_adam_with_l2_weight_decay() -> None:
    adamw = run(lambda p: optim.AdamW(p, lr=0.05, weight_decay=0.3), 10)
    adam = run(lambda p: optim.Adam(p, lr=0.05, weight_decay=0.3), 10)
    assert np.max(np.abs(adamw - adam)) > 1e-3
    assert optim.AdamW([tensor([1.0], requires_grad=True)]).defaults == {
        "lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 1e-2,
        "amsgrad": False, "maximize": False, "decoupled_weight_decay": True}


def test_one_adamw_step_by_hand() -> None:
    # The first step of Adam moves each coordinate by lr * sign(g) (up to eps), after the
    # decoupled decay w * (1 - lr * wd).
    w = tensor([2.0, -1.0], requires_grad=True)
    w.grad = tensor([0.5, -3.0])
    optim.AdamW([w], lr=0.1, weight_decay=0.5, eps=0.0).step()
    np.testing.assert_allclose(w.data, [2.0 * 0.95 - 0.1, -1.0 * 0.95 + 0.1], rtol=1e-15)


@pytest.mark.parametrize("settings", RMSPROP_SETTINGS, ids=str)
def test_rmsprop_matches_the_algorithm(settings: dict) -> None:
    ours = run(lambda p: optim.RMSprop(p, **settings), 10)
    np.testing.assert_allclose(ours, reference_rmsprop(W0, 10, **settings), rtol=1e-12)


def test_one_rmsprop_step_by_hand() -> None:
    # v = (1 - alpha) g^2, so the step is lr * g / (sqrt(1 - alpha) |g| + eps).
    w = tensor([1.0, 1.0], requires_grad=True)
    w.grad = tensor([2.0, -0.5])
    optim.RMSprop([w], lr=0.1, alpha=0.75, eps=0.0).step()
    np.testing.assert_allclose(w.data, [1.0 - 0.1 / 0.5, 1.0 + 0.1 / 0.5], rtol=1e-15)


def torch_run(torch, name: str, settings: dict, steps: int) -> np.ndarray:
    w = torch.tensor(W0, requires_grad=True)
    opt = getattr(torch.optim, name)([w], **settings)
    a, b = torch.tensor(A), torch.tensor(B)
    for _ in range(steps):
        opt.zero_grad()
        ((a @ w - b) ** 2).sum().backward()
        opt.step()
    return w.detach().numpy()


@pytest.mark.parametrize(("name", "settings"),
                         [("AdamW", s) for s in ADAMW_SETTINGS]
                         + [("RMSprop", s) for s in RMSPROP_SETTINGS], ids=str)
def test_adamw_and_rmsprop_match_torch(name: str, settings: dict) -> None:
    torch = pytest.importorskip("torch")
    ours = run(lambda p: getattr(optim, name)(p, **settings), 10)
    np.testing.assert_allclose(ours, torch_run(torch, name, settings, 10), rtol=1e-12)


ADAGRAD_SETTINGS = [
    {"lr": 0.1},
    {"lr": 0.05, "lr_decay": 0.1},
    {"lr": 0.1, "weight_decay": 0.2, "initial_accumulator_value": 0.5},
    {"lr": 0.1, "eps": 1e-3, "maximize": True},
]


def reference_adagrad(w, steps, lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                      initial_accumulator_value=0.0, eps=1e-10, maximize=False):
    """PyTorch's documented Adagrad algorithm, step by step."""
    w = w.copy()
    total = np.full_like(w, initial_accumulator_value)
    for t in range(1, steps + 1):
        g = -quadratic_grad(w) if maximize else quadratic_grad(w)
        g = g + weight_decay * w
        total = total + g * g
        w = w - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(total) + eps)
    return w


@pytest.mark.parametrize("settings", ADAGRAD_SETTINGS, ids=str)
def test_adagrad_matches_the_algorithm_and_torch(settings: dict) -> None:
    ours = run(lambda p: optim.Adagrad(p, **settings), 10)
    np.testing.assert_allclose(ours, reference_adagrad(W0, 10, **settings), rtol=1e-12)
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(ours, torch_run(torch, "Adagrad", settings, 10), rtol=1e-12)


def test_adagrad_errors() -> None:
    with pytest.raises(ValueError, match="Invalid lr_decay value: -1"):
        optim.Adagrad([tensor(W0, requires_grad=True)], lr_decay=-1)


def test_rmsprop_state_and_errors() -> None:
    w = tensor(W0, requires_grad=True)
    opt = optim.RMSprop([w], momentum=0.5, centered=True)
    quadratic(w).backward()
    opt.step()
    assert sorted(opt.state[id(w)]) == ["grad_avg", "momentum_buffer", "square_avg", "step"]
    assert opt.state[id(w)]["step"] == 1
    with pytest.raises(ValueError, match="Invalid alpha value: -0.5"):
        optim.RMSprop([w], alpha=-0.5)
    with pytest.raises(ValueError, match="Invalid momentum value: -1"):
        optim.RMSprop([w], momentum=-1)


# -- state_dict ------------------------------------------------------------------------------

TWO_GROUP_OPTIMIZERS = [
    (optim.SGD, {"lr": 0.01, "momentum": 0.9}),
    (optim.Adam, {"lr": 0.05, "amsgrad": True}),
    (optim.AdamW, {"lr": 0.05, "weight_decay": 0.1}),
    (optim.RMSprop, {"lr": 0.01, "momentum": 0.5, "centered": True}),
]


def two_groups(make, settings):
    w = tensor(W0[:2], requires_grad=True)
    b = tensor(W0[2:], requires_grad=True)
    return [w, b], make([{"params": [w]}, {"params": [b], "lr": 0.02}], **settings)


def two_parameter_loss(w: Tensor, b: Tensor) -> Tensor:
    return ((A[:, :2] @ w + A[:, 2:] @ b - B) ** 2).sum()


def train_steps(params: list[Tensor], opt, steps: int) -> None:
    for _ in range(steps):
        opt.zero_grad()
        two_parameter_loss(*params).backward()
        opt.step()


@pytest.mark.parametrize(("make", "settings"), TWO_GROUP_OPTIMIZERS, ids=str)
def test_state_dict_round_trip_continues_exactly(make, settings: dict) -> None:
    params, opt = two_groups(make, settings)
    train_steps(params, opt, 10)
    straight = [p.data.copy() for p in params]

    params, opt = two_groups(make, settings)
    train_steps(params, opt, 5)
    saved = opt.state_dict()
    halfway = [p.data.copy() for p in params]
    train_steps(params, opt, 1)  # a later step must leave the saved dict as it was
    params = [tensor(data, requires_grad=True) for data in halfway]
    fresh = make([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.5}], **settings)
    fresh.load_state_dict(saved)
    assert [g["lr"] for g in fresh.param_groups] == [settings["lr"], 0.02]
    train_steps(params, fresh, 5)
    for p, expected in zip(params, straight, strict=True):
        np.testing.assert_array_equal(p.data, expected)


def test_state_dict_layout() -> None:
    params, opt = two_groups(optim.Adam, {"lr": 0.05})
    train_steps(params, opt, 3)
    saved = opt.state_dict()
    assert list(saved) == ["state", "param_groups"]
    assert [g["params"] for g in saved["param_groups"]] == [[0], [1]]
    assert saved["param_groups"][1]["lr"] == 0.02
    assert sorted(saved["state"]) == [0, 1]
    assert saved["state"][0]["step"] == 3
    assert isinstance(saved["state"][1]["exp_avg"], np.ndarray)
    assert saved["state"][1]["exp_avg"] is not opt.state[id(params[1])]["exp_avg"]
    np.testing.assert_array_equal(saved["state"][1]["exp_avg"],
                                  opt.state[id(params[1])]["exp_avg"])


def test_state_dict_without_state_and_loading_errors() -> None:
    w = tensor([1.0], requires_grad=True)
    b = tensor([2.0], requires_grad=True)
    opt = optim.SGD([w, b], lr=0.1)
    assert opt.state_dict()["state"] == {}
    one_group = opt.state_dict()
    two = optim.SGD([{"params": [w]}, {"params": [b]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        two.load_state_dict(one_group)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD([w], lr=0.1).load_state_dict(one_group)


def test_state_dict_matches_torch_layout_and_values() -> None:
    torch = pytest.importorskip("torch")
    params, opt = two_groups(optim.RMSprop, {"lr": 0.01, "momentum": 0.5, "centered": True})
    train_steps(params, opt, 4)
    w = torch.tensor(W0[:2], requires_grad=True)
    b = torch.tensor(W0[2:], requires_grad=True)
    topt = torch.optim.RMSprop([{"params": [w]}, {"params": [b], "lr": 0.02}], lr=0.01,
                               momentum=0.5, centered=True)
    a1, a2, bb = torch.tensor(A[:, :2]), torch.tensor(A[:, 2:]), torch.tensor(B)
    for _ in range(4):
        topt.zero_grad()
        ((a1 @ w + a2 @ b - bb) ** 2).sum().backward()
        topt.step()
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert [g["params"] for g in ours["param_groups"]] == [
        g["params"] for g in theirs["param_groups"]]
    for key in ("lr", "alpha", "eps", "momentum", "centered", "weight_decay", "maximize"):
        assert [g[key] for g in ours["param_groups"]] == [
            g[key] for g in theirs["param_groups"]]
    assert ours["state"].keys() == theirs["state"].keys()
    for i, state in theirs["state"].items():
        assert ours["state"][i].keys() == state.keys()
        assert ours["state"][i]["step"] == state["step"].item()
        for key in ("square_avg", "grad_avg", "momentum_buffer"):
            np.testing.assert_allclose(ours["state"][i][key], state[key].numpy(), rtol=1e-12)


# -- nn.utils.clip_grad_norm_ ----------------------------------------------------------------

GRADS = [np.array([3.0, -4.0]), np.array([[1.0, 2.0], [-2.0, 0.5]])]


def with_grads(lib, grads, none_too: bool = True) -> list:
    params = []
    for g in grads:
        p = lib.tensor(np.zeros_like(g), requires_grad=True)
        p.grad = lib.tensor(g)
        params.append(p)
    if none_too:
        params.append(lib.tensor([1.0], requires_grad=True))  # its grad is None: skipped
    return params


def test_clip_grad_norm_by_hand() -> None:
    params = with_grads(nn_lib(), [np.array([3.0, -4.0])])
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    assert isinstance(total, Tensor) and total.shape == () and total.item() == 5.0
    np.testing.assert_allclose(params[0].grad.data, np.array([3.0, -4.0]) / (5.0 + 1e-6))
    # A norm below max_norm leaves the gradients alone (the factor is clamped to 1).
    p = with_grads(nn_lib(), [np.array([0.3, 0.4])], none_too=False)[0]
    assert nn.utils.clip_grad_norm_(p, max_norm=1.0).item() == pytest.approx(0.5)
    np.testing.assert_array_equal(p.grad.data, [0.3, 0.4])
    q = with_grads(nn_lib(), [np.array([0.5, -2.0])], none_too=False)[0]
    assert nn.utils.clip_grad_norm_([q], 1.0, norm_type=float("inf")).item() == 2.0
    assert nn.utils.clip_grad_norm_([tensor([1.0], requires_grad=True)], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite() -> None:
    params = with_grads(nn_lib(), [np.array([np.inf, 1.0])])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                       "`parameters` is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_(params, 1.0).item() == np.inf


def nn_lib():
    import s2sgrad

    return s2sgrad


@pytest.mark.parametrize(("max_norm", "norm_type"),
                         [(1.0, 2.0), (100.0, 2.0), (0.5, float("inf")), (2.0, 1.0),
                          (1.5, 3.0)], ids=str)
def test_clip_grad_norm_matches_torch(max_norm: float, norm_type: float) -> None:
    torch = pytest.importorskip("torch")
    ours_params = with_grads(nn_lib(), GRADS)
    torch_params = with_grads(torch, GRADS)
    ours = nn.utils.clip_grad_norm_(ours_params, max_norm, norm_type)
    theirs = torch.nn.utils.clip_grad_norm_(torch_params, max_norm, norm_type)
    assert ours.shape == () and theirs.shape == ()
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)
    for p, t in zip(ours_params[:2], torch_params[:2], strict=True):
        np.testing.assert_allclose(p.grad.data, t.grad.numpy(), rtol=1e-12)
    assert ours_params[2].grad is None and torch_params[2].grad is None


def test_clip_grad_norm_error_message_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    messages = []
    for lib, clip in ((torch, torch.nn.utils.clip_grad_norm_), (nn_lib(), nn.utils.clip_grad_norm_)):
        with pytest.raises(RuntimeError) as caught:
            clip(with_grads(lib, [np.array([np.nan, 1.0])]), 1.0, float("inf"),
                 error_if_nonfinite=True)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
