"""Libraries whose arrays do not run NumPy's functions (JAX; the namespaces of the Python
array API standard, such as ``array_api_strict``): the generated code calls the library's
namespace, bound in place of NumPy under the name its users give it (``jnp``, ``xp``). For
the standard's namespaces the code is first written in the standard's names and forms
(``forms.standard_forms``). A call of one of NumPy's functions in the user's code is refused
at the user's line: NumPy would convert the arrays to its own.

Part of the compiler layer.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..runtime import containers, standard, unbroadcast
from . import check, forms, scatter
from .base import Backend, on
from .identity import NAMESPACES, namespace_of

# The helpers that compute only with Python's containers, the arrays' operators, slices and
# shapes, which run on the library's arrays as they are; and the standard's versions of
# those that call NumPy's functions, bound in their place.
NAMESPACE_HELPERS = frozenset({
    containers.tree_add, containers.concat, containers.repeat, containers.leading,
    containers.trailing, containers.add_item, containers.add_leaf, containers.item_or_absent,
    containers.pieces_along, containers.inverse_axes, standard.unbroadcast,
    standard.zeros_tree,
})
STANDARD_HELPERS = {unbroadcast.unbroadcast: standard.unbroadcast,
                    containers.zeros_tree: standard.zeros_tree}


class Namespace(Backend):
    updates_in_place = False
    dispatches = False
    helpers = NAMESPACE_HELPERS

    def __init__(self, name: str, alias: str, standard: bool):
        self.name = name
        self.alias = alias  # the name the library's users give its namespace
        # a namespace of the array API standard (named by its module), not one s2sgrad
        # knows by name: it answers bool(), float() and int() of a 0-d array as the
        # standard defines them
        self.standard = standard

    def __repr__(self) -> str:
        return f"Namespace({self.name!r})"

    def namespace(self) -> Any:
        return namespace_of(self.name)

    def ones_like(self, value: Any) -> Any:
        return self.namespace().ones_like(value)

    def adjoint_forms(self, adjoint: list[gast.stmt], bindings: dict, ranks: dict[str, int],
                      arrays: set[str]) -> list[gast.stmt]:
        if self.standard:
            return forms.standard_forms(adjoint, bindings, ranks, arrays)
        return super().adjoint_forms(adjoint, bindings, ranks, arrays)

    def primal_forms(self, stmts: list[gast.stmt], bindings: dict, ranks: dict[str, int],
                     arrays: set[str]) -> list[gast.stmt]:
        if self.standard:  # the saves of shapes included
            return forms.standard_forms([syntax.clone(s) for s in stmts], bindings, ranks,
                                        arrays)
        return stmts

    def callee(self, signature: dict[str, Any]) -> dict[str, Any]:
        return {k: on(v, self.name) for k, v in signature.items()}

    def bind(self, bindings: dict[str, Any], code: tuple[list[gast.stmt], ...],
             analysis: Any, taken: Callable[[], dict[str, Any]]
             ) -> tuple[dict[str, Any], tuple[list[gast.stmt], ...]]:
        """NumPy and its submodules bound to the library's namespace under the name its
        users give it (where that name is free, or names the namespace already), so that the
        templates call its functions and the code says so; the helpers that call NumPy's
        functions bound to their standard versions, and the scatter helpers to the
        library's."""
        self.refuse_numpy_calls(analysis)
        helpers = {**STANDARD_HELPERS, **scatter.helpers(self.name)}
        space = self.namespace()
        others = taken()
        swapped, renames = {}, {}
        for name, value in bindings.items():
            if value is np:
                value = space
                if others.get(self.alias, space) is space and self.alias not in bindings:
                    renames[name], name = self.alias, self.alias
            elif isinstance(value, types.ModuleType) and value.__name__.startswith("numpy."):
                value = getattr(space, value.__name__.partition(".")[2], value)
            elif isinstance(value, types.FunctionType):
                value = helpers.get(value, value)
            swapped[name] = value
        return swapped, tuple([syntax.rename(syntax.clone(s), renames) for s in body]
                              for body in code)

    def refuse_numpy_calls(self, analysis: Any) -> None:
        """Refuse, at the user's line, a call of one of NumPy's functions in the user's code
        (it would convert the arrays to NumPy's); the code must call the library's own."""
        for stmt, op in analysis.ops.items():
            func = getattr(op, "primitive", None)
            module = getattr(func, "__module__", None) or ""
            if isinstance(func, np.ufunc) or module == "numpy" or module.startswith("numpy."):
                name = getattr(func, "__name__", "?")
                raise analysis.normalized.parsed.error(
                    f"numpy.{name} on {self.name} arrays: NumPy converts them to its own "
                    "arrays", stmt, self.call_instead(name))

    def check(self, filename: str, names: Callable[[], dict[str, Any]],
              values: dict[str, Any]) -> None:
        check.check(self, filename, names(), values)

    def call_instead(self, name: str) -> str:
        """The hint to call the library's function ``name``: ``jax.numpy.tanh``;
        ``xp.tanh``, with ``xp = array_namespace(x)``, for a namespace of the standard."""
        if self.name in NAMESPACES:
            return f"Call {NAMESPACES[self.name]}.{name} instead."
        return f"Call xp.{name} instead, with xp = array_namespace(x)."


def jax_array(value: Any) -> str | None:
    """"jax" for one of JAX's arrays (or a tracer standing for one under ``jax.jit``), where
    JAX is imported; else None."""
    jax = sys.modules.get("jax")
    return "jax" if jax is not None and isinstance(value, jax.Array) else None
