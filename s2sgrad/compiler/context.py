"""What every job of the two modes' passes reads (reverse's jobs and the tangent pass): the
analysis, what shares memory (the aliasing pass), the namer, and the names the generated
code gives the objects it uses from outside. A shared home of the sibling passes.

    ctx = Context(analysis, aliases)
    ctx.np                                  'np', or another name if the function binds np
    ctx.bindings.claim("unbroadcast", fn)   the name the generated code reads fn by
    ctx.is_active(stmts)                    whether a block computes an active value

The forward marks the end of each active block with ``__push__(k)``, and the adjoint starts
the reverse block with ``__pop__(k)``; ``optimize`` turns the pair into a push and a pop of
the values the reverse block reads.
"""

from __future__ import annotations

from typing import Any

import gast
import numpy as np

from .. import syntax
from ..naming import Namer
from . import statements
from .aliasing import Aliasing
from .analyze import Analysis
from .parse import MISSING

PUSH, POP = "__push__", "__pop__"  # markers that optimize turns into stack operations


class Bindings:
    """Names the generated code uses for objects outside it (``np``, rules, callees)."""

    def __init__(self, analysis: Analysis, namer: Namer):
        self.parsed = analysis.normalized.parsed
        self.namer = namer
        self.names: dict[str, Any] = {}

    def claim(self, preferred: str, obj: Any) -> str:
        if preferred in self.names:
            if self.names[preferred] is obj:
                return preferred
        elif preferred not in self.parsed.local_names and preferred not in self.namer.generated:
            seen = self.parsed.lookup(preferred)
            if seen is MISSING or seen is obj:
                self.names[self.namer.reserve(preferred)] = obj
                return preferred
        for name, bound in self.names.items():
            if bound is obj and name.startswith(preferred):
                return name
        name = self.namer.fresh(preferred)
        self.names[name] = obj
        return name


class Context:
    def __init__(self, analysis: Analysis, aliases: Aliasing):
        self.analysis = analysis
        self.aliases = aliases
        self.namer = analysis.normalized.namer
        self.bindings = Bindings(analysis, self.namer)
        self.np = self.bindings.claim("np", np)

    def is_active(self, stmts: list[gast.stmt]) -> bool:
        """Does the block compute an active value (so that it has an adjoint)?"""
        return any(isinstance(stmt, gast.Assign) and any(
            t in self.analysis.active for t in syntax.names_written(stmt.targets[0]))
            for stmt in statements.in_order(stmts, "reverse"))
