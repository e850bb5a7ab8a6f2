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


def pytest_configure(config: Any) -> None:
    """``S2SGRAD_DUMP_COMPILES=DIR`` writes every source the compiler generates during the
    run into DIR, one file per distinct text (named by its hash), so that two runs of the
    suite (before and after a restructuring) can be compared compile by compile:
    ``diff -r before/ after/``."""
    import os

    target = os.environ.get("S2SGRAD_DUMP_COMPILES")
    if not target:
        return
    import hashlib
    from pathlib import Path

    from s2sgrad.compiler import codegen

    folder = Path(target)
    folder.mkdir(parents=True, exist_ok=True)
    unique = codegen._unique

    def dumping(filename: str, text: str) -> str:
        name = hashlib.sha1(text.encode()).hexdigest()
        (folder / f"{name}.py").write_text(text)
        return unique(filename, text)

    codegen._unique = dumping
