"""The catalogue runners' check that a call leaves its array arguments as they were."""

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

import s2sgrad
from s2sgrad.testing import check_grads


def assert_unchanged(args: Sequence[Any], before: Sequence[Any], what: str) -> None:
    """``args`` equal ``before`` (copies taken before the call), dtype and values."""
    for i, (now, then) in enumerate(zip(args, before, strict=True)):
        if isinstance(now, np.ndarray):
            assert now.dtype == then.dtype and np.array_equal(now, then), \
                f"{what} modified its argument {i} in place"


def checked(fn, *args, order=2):
    """The gradients of ``fn`` against finite differences, first order in both modes and
    second order where asked; its value as the plain call's; its arguments unchanged."""
    before = copy.deepcopy(args)
    expected = fn(*copy.deepcopy(args))
    value, _ = s2sgrad.value_and_grad(fn)(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    assert_unchanged(args, before, fn.__name__)
    check_grads(fn, *args, modes=("rev", "fwd"))
    if order == 2:
        check_grads(fn, *args, order=2, modes=("rev",))
    assert_unchanged(args, before, fn.__name__)
