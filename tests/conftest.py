"""Fixtures shared by the test modules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def torch64() -> Iterator[Any]:
    """PyTorch (skipped where it is not installed) with float64 as its default dtype, as
    s2sgrad's is, so that values and reprs compare as they are."""
    torch = pytest.importorskip("torch")
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(before)
