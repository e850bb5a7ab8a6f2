"""The code passes the linter with the project's settings (pyproject.toml, the version
the test extras pin): the suite runs it, so CI does."""

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or (pathlib.Path(sys.executable).parent / "ruff")
    if not pathlib.Path(ruff).exists():
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    found = subprocess.run([str(ruff), "check", "--no-cache", "s2sgrad", "tests", "benchmarks",
                            "examples", "docs"], cwd=ROOT, capture_output=True, text=True,
                           check=False)
    assert found.returncode == 0, found.stdout + found.stderr
