"""The catalogue runners' check that a call leaves its array arguments as they were."""

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

import s2sgrad
from s2sgrad.testing import check_grads


def assert_unchanged(args: Sequence[Any], before: Sequence[Any], what: str) -> None:
    """``args`` equal ``before`` (copies taken before the call), dtype and values; a
    dict, list or tuple holds the same keys and items, each unchanged."""
    for i, (now, then) in enumerate(zip(args, before, strict=True)):
        assert _same(now, then), f"{what} modified its argument {i} in place"


def _same(now: Any, then: Any) -> bool:
    if isinstance(now, np.ndarray):
        return isinstance(then, np.ndarray) and now.dtype == then.dtype and \
            np.array_equal(now, then)
    if isinstance(now, dict):
        return isinstance(then, dict) and list(now) == list(then) and all(
            _same(now[k], then[k]) for k in now)
    if isinstance(now, (list, tuple)):
        return type(now) is type(then) and len(now) == len(then) and all(
            _same(a, b) for a, b in zip(now, then, strict=True))
    return True


def checked(fn, *args, order=2):
    """The gradients of ``fn`` against finite differences, first order in both modes and
    second order where asked; its value as the plain call's; its arguments unchanged."""
    before = copy.deepcopy(args)
    expected = fn(*copy.deepcopy(args))
    value, _ = s2sgrad.value_and_grad(fn)(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    assert_unchanged(args, before, fn.__name__)
    check_grads(fn, *args, modes=("rev", "fwd"))
    # (a gradient with respect to a dict or list is one too, which check_grads does not
    # weigh: the second order of those is checked through a function of their arrays)
    plain = [i for i, a in enumerate(args) if not isinstance(a, (dict, list, tuple))]
    if order == 2 and plain:
        check_grads(fn, *args, order=2, modes=("rev",), wrt=plain)
    assert_unchanged(args, before, fn.__name__)
