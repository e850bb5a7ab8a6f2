"""Libraries whose arrays implement NumPy's dispatch protocols (Dask, CuPy): the NumPy-style
code s2sgrad generates runs on them unchanged (``np.tanh(x)`` runs ``dask.array.tanh``,
``x.T @ g`` is a lazy product). The adjoint's accumulations into indexed positions are bound
to the library's own (``runtime.indexing.SCATTER``); a reduction's cotangent broadcast back
over a chunked array keeps that array's chunks (``broadcast_like``); the check refuses what
would need the arrays' values in this process.

Part of the compiler layer.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from .. import syntax
from ..runtime import chunks, containers, unbroadcast
from . import check, scatter
from .base import Backend, on
from .identity import namespace_of

# s2sgrad's helpers in generated code that compute only with NumPy's dispatched functions,
# Python's containers and the arrays' operators: they run on a backend's arrays as they are.
PORTABLE_HELPERS = frozenset({
    unbroadcast.unbroadcast, containers.unbroadcast_each, containers.tree_add,
    containers.concat, containers.repeat, containers.leading, containers.trailing,
    containers.add_item, containers.add_leaf, containers.item_or_absent,
    containers.pieces_along, containers.inverse_axes, chunks.broadcast_like,
})


class Dispatching(Backend):
    updates_in_place = False  # NumPy's in-place operations do not write the library's arrays
    helpers = PORTABLE_HELPERS  # what the check lets the generated code call

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Dispatching({self.name!r})"

    def namespace(self) -> Any:
        return namespace_of(self.name)

    def lower(self, adjoint: list[gast.stmt], rev: Any) -> list[gast.stmt]:
        """``np.broadcast_to(g, np.shape(a))`` -> ``broadcast_like(g, a)``, which keeps
        ``a``'s chunks (``a`` is then saved for the adjoint: for a chunked array, its graph,
        not its values). The adjoint is rewritten in place."""
        numpy_names = {name for name, obj in rev.bindings.items() if obj is np}
        name = None

        class Rewrite(gast.NodeTransformer):
            def visit_Call(self, node: gast.Call) -> gast.expr:
                nonlocal name
                self.generic_visit(node)
                func = syntax.dotted_name(node.func) or ""
                head, _, attr = func.rpartition(".")
                if head not in numpy_names or attr != "broadcast_to" or len(node.args) != 2 \
                        or node.keywords:
                    return node
                query = syntax.shape_query(node.args[1], numpy_names)
                if query is None or query[1] != "shape":
                    return node
                if name is None:
                    name = rev.namer.fresh("broadcast_like")
                    rev.bindings[name] = chunks.broadcast_like
                return syntax.located(syntax.call(syntax.name(name), [
                    node.args[0], syntax.name(query[0])]), node)

        rewrite = Rewrite()
        return [rewrite.visit(stmt) for stmt in adjoint]

    def callee(self, signature: dict[str, Any]) -> dict[str, Any]:
        return {k: on(v, self.name) for k, v in signature.items()}

    def bind(self, bindings: dict[str, Any], code: tuple[list[gast.stmt], ...],
             analysis: Any, taken: Callable[[], dict[str, Any]]
             ) -> tuple[dict[str, Any], tuple[list[gast.stmt], ...]]:
        """The adjoint's scatter helpers bound to the library's; the code as it is."""
        helpers = scatter.helpers(self.name)
        bound = {name: helpers.get(value, value) if isinstance(value, types.FunctionType)
                 else value for name, value in bindings.items()}
        return bound, tuple([syntax.clone(s) for s in body] for body in code)

    def check(self, filename: str, names: Callable[[], dict[str, Any]],
              values: dict[str, Any]) -> None:
        check.check(self, filename, names(), values)
