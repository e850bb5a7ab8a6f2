"""The catalogue runners' check that a call leaves its array arguments as they were."""

from collections.abc import Sequence
from typing import Any

import numpy as np


def assert_unchanged(args: Sequence[Any], before: Sequence[Any], what: str) -> None:
    """``args`` equal ``before`` (copies taken before the call), dtype and values."""
    for i, (now, then) in enumerate(zip(args, before, strict=True)):
        if isinstance(now, np.ndarray):
            assert now.dtype == then.dtype and np.array_equal(now, then), \
                f"{what} modified its argument {i} in place"
