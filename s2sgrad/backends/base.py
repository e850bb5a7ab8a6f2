"""The ``Backend`` object: what a compile asks of the library of its arrays. Its methods are
the steps in which a compile for NumPy's arrays and one for another library's differ; each
does NumPy's by default, so that a library overrides only where it differs.

Part of the compiler layer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from . import forms


class Backend:
    """NumPy's steps; another library's module overrides those it does differently."""

    name: str | None = None  # the library's name, as ``Any.backend`` gives it
    # the adjoint updates the cotangent buffers it owns in place (``inplace.py``): NumPy's
    # in-place operations write only NumPy's arrays
    updates_in_place = True
    # the library's arrays run NumPy's functions (NumPy's dispatch protocols)
    dispatches = True
    # a namespace of the array API standard: the code is written in the standard's forms
    standard = False

    def namespace(self) -> Any:
        """The module of the functions of the library's arrays."""
        return np

    def ones_like(self, value: Any) -> Any:
        """A seed of ones shaped like ``value``, an array of the library."""
        return np.ones_like(value)

    # -- optimize -----------------------------------------------------------------------------

    def lower(self, adjoint: list[gast.stmt], rev: Any) -> list[gast.stmt]:
        """The adjoint rewritten for the library before the shapes it reads are hoisted into
        the forward (what it then reads is saved)."""
        return adjoint

    def adjoint_forms(self, adjoint: list[gast.stmt], bindings: dict, ranks: dict[str, int],
                      arrays: set[str]) -> list[gast.stmt]:
        """The adjoint in the forms the library's code takes: for NumPy's arrays, NumPy's
        functions as the arrays' methods where a NumPy programmer calls them (``a.sum()``,
        ``a.T``). ``ranks``: names certain to hold arrays of rank >= 1; ``arrays``: of any
        rank."""
        return forms.method_forms(adjoint, bindings, ranks)

    def primal_forms(self, stmts: list[gast.stmt], bindings: dict, ranks: dict[str, int],
                     arrays: set[str]) -> list[gast.stmt]:
        """The forward (or the tangent function's body) in the library's forms: as written."""
        return stmts

    # -- pipeline -----------------------------------------------------------------------------

    def callee(self, signature: dict[str, Any]) -> dict[str, Any]:
        """A callee's signature, as the caller's compile passes it on."""
        return signature

    def bind(self, bindings: dict[str, Any], code: tuple[list[gast.stmt], ...],
             analysis: Any, taken: Callable[[], dict[str, Any]]
             ) -> tuple[dict[str, Any], tuple[list[gast.stmt], ...]]:
        """The generated code's bindings and its functions' bodies, for the library (a
        refusal at the user's line for what the library's code cannot call). ``taken``: what
        the code's other names name."""
        return bindings, code

    def check(self, filename: str, names: Callable[[], dict[str, Any]],
              values: dict[str, Any]) -> None:
        """Refuse the first statement of the generated file that the library cannot run."""


def on(value: Any, backend: str) -> Any:
    """``value`` with its arrays (in containers too) those of ``backend``: what a callee
    receives from a caller compiled for that library."""
    if value.kind == "array" and value.backend is None:
        return dataclasses.replace(value, backend=backend)
    if value.items:
        items = tuple((k, on(v, backend) if is_abstract(v) else v)
                      for k, v in value.items)
        return dataclasses.replace(value, items=items)
    return value


def is_abstract(value: Any) -> bool:
    """An abstract value of the analysis (what a signature holds), not a key or a constant."""
    return dataclasses.is_dataclass(value) and hasattr(value, "backend")
