"""Grad mode: no_grad / enable_grad / set_grad_enabled as context managers and decorators,
per thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import s2sgrad
from s2sgrad.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from s2sgrad.autograd.tensor import tensor


@s2sgrad.grad
def double(a):
    return a * 2.0


def test_no_grad_context_records_nothing() -> None:
    x = tensor([1.0], requires_grad=True)
    with no_grad():
        assert not is_grad_enabled()
        y = x * 2
        z = double(x)
    assert is_grad_enabled()
    for t in (y, z):
        assert not t.requires_grad and t.grad_fn is None and t.is_leaf


def test_enable_grad_inside_no_grad() -> None:
    x = tensor([1.0], requires_grad=True)
    with no_grad():
        with enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and y.grad_fn is not None
    assert not z.requires_grad


@pytest.mark.parametrize("decorator", [no_grad(), no_grad], ids=["no_grad()", "no_grad"])
def test_no_grad_as_a_decorator(decorator) -> None:
    @decorator
    def inference(t):
        """Doc kept."""
        assert not is_grad_enabled()
        return t ** 2 + 1

    result = inference(tensor([3.0], requires_grad=True))
    assert not result.requires_grad and result.tolist() == [10.0]
    assert is_grad_enabled()
    assert inference.__name__ == "inference" and inference.__doc__ == "Doc kept."


def test_enable_grad_as_a_decorator() -> None:
    @enable_grad
    def tracked(t):
        return t * 2

    with no_grad():
        assert tracked(tensor([1.0], requires_grad=True)).requires_grad
        assert not is_grad_enabled()


def test_set_grad_enabled_as_a_call_context_and_decorator() -> None:
    set_grad_enabled(False)
    try:
        assert not is_grad_enabled()
    finally:
        set_grad_enabled(True)
    assert is_grad_enabled()
    with set_grad_enabled(False):
        assert not is_grad_enabled()
    assert is_grad_enabled()

    @set_grad_enabled(False)
    def off():
        return is_grad_enabled()

    assert is_grad_enabled()  # decorating does not change the mode
    assert off() is False and is_grad_enabled()


def test_mode_is_restored_when_an_exception_escapes() -> None:
    with pytest.raises(ValueError), no_grad():
        raise ValueError
    assert is_grad_enabled()

    @no_grad()
    def fails():
        raise ValueError

    with pytest.raises(ValueError):
        fails()
    assert is_grad_enabled()


def test_grad_mode_is_per_thread() -> None:
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def worker() -> None:
        seen["worker starts enabled"] = is_grad_enabled()
        with no_grad():
            inside.set()
            release.wait(5)
            seen["worker inside no_grad"] = is_grad_enabled()

    thread = threading.Thread(target=worker)
    with no_grad():
        thread.start()
        inside.wait(5)
        # The worker is inside its own no_grad; this thread's mode is its own.
        with enable_grad():
            x = tensor([1.0], requires_grad=True)
            assert (x * 2).requires_grad
        release.set()
        thread.join(5)
    assert seen == {"worker starts enabled": True, "worker inside no_grad": False}
    assert is_grad_enabled()


def test_no_grad_in_a_training_step() -> None:
    w = tensor(np.array([0.5]), requires_grad=True)
    loss = ((w * 3.0 - 1.0) ** 2).sum()
    loss.backward()
    with no_grad():
        w -= 0.1 * w.grad
    assert w.is_leaf and w.requires_grad
    np.testing.assert_allclose(w.data, [0.5 - 0.1 * 2 * (1.5 - 1.0) * 3.0])
