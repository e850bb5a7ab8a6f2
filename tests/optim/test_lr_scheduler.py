"""Learning-rate schedulers follow PyTorch's rules: learning-rate sequences are compared with
torch's where it imports, and with sequences worked out by hand everywhere."""

from __future__ import annotations

import math

import numpy as np
import pytest

from s2sgrad import optim
from s2sgrad.autograd.tensor import tensor
from s2sgrad.optim import lr_scheduler

CosineAnnealingLR = lr_scheduler.CosineAnnealingLR
LambdaLR = lr_scheduler.LambdaLR
ReduceLROnPlateau = lr_scheduler.ReduceLROnPlateau
StepLR = lr_scheduler.StepLR

EPOCHS = 30


def two_group_optimizer(lib):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0], requires_grad=True)
    return lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)


def lrs(lib, make, epochs: int = EPOCHS, metrics=None) -> list[list[float]]:
    opt = two_group_optimizer(lib)
    scheduler = make(lib.optim.lr_scheduler, opt)
    seen = [scheduler.get_last_lr()]
    for epoch in range(epochs):
        opt.step()
        if metrics is None:
            scheduler.step()
        else:
            scheduler.step(metrics[epoch])
        seen.append(list(scheduler.get_last_lr()))
        assert seen[-1] == [g["lr"] for g in opt.param_groups]
    return seen


SCHEDULES = [
    lambda m, o: m.StepLR(o, step_size=7),
    lambda m, o: m.StepLR(o, step_size=1, gamma=0.9),
    lambda m, o: m.StepLR(o, step_size=4, gamma=0.5),
    lambda m, o: m.CosineAnnealingLR(o, T_max=10),
    lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    lambda m, o: m.CosineAnnealingLR(o, T_max=30, eta_min=1e-3),
    lambda m, o: m.LambdaLR(o, lambda epoch: 0.95 ** epoch),
    lambda m, o: m.LambdaLR(o, [lambda epoch: epoch // 5, lambda epoch: 1 / (epoch + 1)]),
    lambda m, o: m.MultiStepLR(o, milestones=[3, 8, 8, 15]),
    lambda m, o: m.MultiStepLR(o, milestones=[2, 5], gamma=0.5),
    lambda m, o: m.ExponentialLR(o, gamma=0.9),
]
SCHEDULE_IDS = ["step7", "step1", "step4", "cos10", "cos7", "cos30", "lambda", "lambdas",
                "multistep", "multistep_half", "exponential"]

METRICS = ([5.0, 4.0, 3.0] + [3.0] * 6 + [2.0, 1.0, 0.99995] + [1.0] * 8
           + [0.5, 0.4] + [0.4] * 8)
PLATEAU_SETTINGS = [
    {"patience": 2},
    {"patience": 3, "factor": 0.5, "cooldown": 2},
    {"patience": 1, "threshold_mode": "abs", "threshold": 0.05, "min_lr": 0.02},
    {"patience": 2, "threshold": 0.1, "min_lr": [0.0, 0.1]},
    {"mode": "max", "patience": 2},
    {"mode": "max", "patience": 1, "threshold_mode": "abs", "threshold": 0.5, "cooldown": 1},
]


@pytest.mark.parametrize("make", SCHEDULES, ids=SCHEDULE_IDS)
def test_schedules_match_torch(make) -> None:
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(lrs(optim_lib(), make), lrs(torch, make), rtol=1e-12, atol=0)


@pytest.mark.parametrize("settings", PLATEAU_SETTINGS, ids=str)
def test_reduce_on_plateau_matches_torch(settings: dict) -> None:
    torch = pytest.importorskip("torch")
    metrics = [10 - m for m in METRICS] if settings.get("mode") == "max" else METRICS

    def make(m, o):
        return m.ReduceLROnPlateau(o, **settings)

    ours = lrs(optim_lib(), make, metrics=metrics)
    np.testing.assert_allclose(ours, lrs(torch, make, metrics=metrics), rtol=1e-12, atol=0)
    assert ours[-1] != ours[0]  # the sequence does reduce


def optim_lib():
    import s2sgrad

    return s2sgrad


def test_step_lr_by_hand() -> None:
    seen = lrs(optim_lib(), lambda m, o: m.StepLR(o, step_size=3, gamma=0.5), epochs=7)
    expected = [[0.1 * 0.5 ** (e // 3), 0.5 * 0.5 ** (e // 3)] for e in range(8)]
    np.testing.assert_allclose(seen, expected, rtol=1e-15)


def test_cosine_annealing_by_hand() -> None:
    # The recursive form agrees with the closed form eta_min + (lr0 - eta_min)(1 + cos)/2 for
    # the first half period.
    seen = lrs(optim_lib(), lambda m, o: m.CosineAnnealingLR(o, T_max=8, eta_min=0.01),
               epochs=8)
    expected = [[0.01 + (lr0 - 0.01) * (1 + math.cos(math.pi * e / 8)) / 2
                 for lr0 in (0.1, 0.5)] for e in range(9)]
    np.testing.assert_allclose(seen, expected, rtol=1e-12)
    assert seen[-1] == pytest.approx([0.01, 0.01])


def test_lambda_lr_by_hand_and_its_errors() -> None:
    seen = lrs(optim_lib(), lambda m, o: m.LambdaLR(o, [lambda e: e + 1, lambda e: 0.5]),
               epochs=3)
    assert seen == [[0.1, 0.25], [0.2, 0.25], [0.30000000000000004, 0.25], [0.4, 0.25]]
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        LambdaLR(two_group_optimizer(optim_lib()), [lambda e: 1.0])
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        StepLR([], step_size=1)


def test_reduce_on_plateau_by_hand() -> None:
    metrics = [1.0, 0.5, 0.5, 0.5, 0.5, 0.4, 0.4, 0.4, 0.4, 0.4]
    seen = lrs(optim_lib(), lambda m, o: m.ReduceLROnPlateau(o, patience=2, factor=0.5),
               epochs=len(metrics), metrics=metrics)
    # bad epochs: 0.5 x3 (the third exceeds patience 2: reduce), 0.4 improves, 0.4 x4: reduce
    # at the third bad one
    assert [s[0] for s in seen] == [0.1] * 5 + [0.05] * 4 + [0.025] * 2
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        ReduceLROnPlateau(two_group_optimizer(optim_lib()), factor=1.0)
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        ReduceLROnPlateau(two_group_optimizer(optim_lib()), min_lr=[0.1])
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        ReduceLROnPlateau(two_group_optimizer(optim_lib()), mode="avg")


def test_initial_lr_and_resuming() -> None:
    opt = two_group_optimizer(optim_lib())
    with pytest.raises(KeyError, match=r"'initial_lr' is not specified in param_groups\[0\]"):
        StepLR(opt, step_size=2, last_epoch=3)
    scheduler = StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert scheduler.base_lrs == [0.1, 0.5] and scheduler.last_epoch == 0
    ReduceLROnPlateau(opt2 := two_group_optimizer(optim_lib()))
    assert all("initial_lr" not in g for g in opt2.param_groups)


@pytest.mark.parametrize("make", SCHEDULES[:1] + SCHEDULES[3:5] + SCHEDULES[6:],
                         ids=["step7", "cos10", "cos7", "lambda", "lambdas", "multistep",
                              "multistep_half", "exponential"])
def test_scheduler_state_dict_round_trip(make) -> None:
    straight = lrs(optim_lib(), make, epochs=20)
    opt = two_group_optimizer(optim_lib())
    scheduler = make(optim.lr_scheduler, opt)
    for _ in range(10):
        scheduler.step()
    saved_optimizer, saved = opt.state_dict(), scheduler.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 10
    opt = two_group_optimizer(optim_lib())
    again = make(optim.lr_scheduler, opt)
    opt.load_state_dict(saved_optimizer)
    again.load_state_dict(saved)
    seen = []
    for _ in range(10):
        again.step()
        seen.append(again.get_last_lr())
    np.testing.assert_allclose(seen, straight[11:], rtol=1e-12)


def test_lambda_lr_state_dict_keeps_callable_objects_attributes() -> None:
    class Warmup:
        def __init__(self) -> None:
            self.length = 4

        def __call__(self, epoch: int) -> float:
            return min(1.0, (epoch + 1) / self.length)

    scheduler = LambdaLR(optim.SGD([tensor([1.0], requires_grad=True)], lr=1.0), Warmup())
    saved = scheduler.state_dict()
    assert saved["lr_lambdas"] == [{"length": 4}]
    other = LambdaLR(optim.SGD([tensor([1.0], requires_grad=True)], lr=1.0),
                     fn := Warmup())
    fn.length = 10
    other.load_state_dict(saved)
    assert fn.length == 4 and "lr_lambdas" in saved


def test_reduce_on_plateau_state_dict_round_trip() -> None:
    opt = two_group_optimizer(optim_lib())
    scheduler = ReduceLROnPlateau(opt, patience=1)
    for m in [3.0, 2.0, 2.0]:
        scheduler.step(m)
    saved = scheduler.state_dict()
    assert saved["best"] == 2.0 and saved["num_bad_epochs"] == 1
    again = ReduceLROnPlateau(two_group_optimizer(optim_lib()), patience=5)
    again.load_state_dict(saved)
    assert again.patience == 1 and again.best == 2.0
    again.step(2.0)  # the second bad epoch exceeds patience 1
    assert [g["lr"] for g in again.optimizer.param_groups] == [0.1 * 0.1, 0.5 * 0.1]


def test_imported_as_a_submodule_of_optim() -> None:
    import s2sgrad.optim.lr_scheduler
    from s2sgrad.optim.lr_scheduler import CosineAnnealingLR as Cosine

    assert s2sgrad.optim.lr_scheduler is lr_scheduler and Cosine is CosineAnnealingLR
    from s2sgrad.nn.utils import clip_grad_norm_

    assert clip_grad_norm_ is s2sgrad.nn.utils.clip_grad_norm_
