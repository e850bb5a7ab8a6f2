"""What an installed s2sgrad carries: its license, its type marker, one version, and the
public names it exports (``__all__``, what ``from s2sgrad import *`` gives)."""

import importlib.metadata
import pathlib

import tomllib

import s2sgrad

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_license_file_is_the_license_pyproject_names():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "LICENSE").read_text()
    assert meta["license"] == {"text": "Apache-2.0"}
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_package_is_marked_typed():
    assert (ROOT / "s2sgrad" / "py.typed").exists()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in config["package-data"]["s2sgrad"]


def test_the_version_is_written_once():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in data["project"] and data["project"]["dynamic"] == ["version"]
    assert data["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "s2sgrad.__version__"}
    assert importlib.metadata.version("s2sgrad") == s2sgrad.__version__


def test_all_lists_the_public_names_and_nothing_else():
    assert sorted(s2sgrad.__all__) == s2sgrad.__all__
    assert all(hasattr(s2sgrad, name) for name in s2sgrad.__all__)
    namespace: dict = {}
    exec("from s2sgrad import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == s2sgrad.__all__
    internal = {"api", "analyze", "pipeline", "optimize", "reverse", "rules", "syntax"}
    assert not internal & set(s2sgrad.__all__)
