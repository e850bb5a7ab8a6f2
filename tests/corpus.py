"""The functions of the test catalogues, as pytest parameters: a corpus for checks that
must hold of every function the compiler meets (what normalize records, its form)."""

import importlib
import inspect
import pkgutil

import pytest


def functions(*packages) -> list:
    """Every function defined in the modules of ``packages``, with ids ``module.name``."""
    found = []
    for package in packages:
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for name, fn in vars(module).items():
                if inspect.isfunction(fn) and fn.__module__ == module.__name__:
                    found.append(pytest.param(fn, id=f"{info.name}.{name}"))
    return found
