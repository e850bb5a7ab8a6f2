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


# The quick tier (``python -m pytest -m quick``): the core of every layer, for the
# edit-test loop; under a minute on two cores. The whole suite is the default (tests/tiers.py).
QUICK = frozenset({
    "test_api.py", "test_golden.py", "test_statements.py", "test_pass_inputs.py",
    "test_layering.py", "test_syntax_home.py", "test_errors.py", "test_rules.py",
    "test_jvp_rules.py", "test_control_flow.py", "test_item_updates.py", "test_channels.py",
    "test_view_writes.py", "test_soundness_semantics.py", "test_python_constructs.py",
    "test_backend_registration.py", "test_tensor.py", "test_tensor_ops.py",
    "test_tensor_table.py", "test_graph.py", "test_create_graph.py", "test_nn.py",
    "test_optim.py", "test_star_args_tensors.py",
})


def pytest_collection_modifyitems(config: Any, items: list) -> None:
    for item in items:
        if item.path.name in QUICK:
            item.add_marker(pytest.mark.quick)


def pytest_configure(config: Any) -> None:
    """The ``quick`` marker; and ``S2SGRAD_DUMP_COMPILES=DIR``, which writes every source the
    compiler generates during the run into DIR, one file per distinct text (named by its
    hash), so that two runs of the suite (before and after a restructuring) can be compared
    compile by compile: ``diff -r before/ after/``."""
    import os

    config.addinivalue_line("markers", "quick: the core tier, for the edit-test loop")

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
