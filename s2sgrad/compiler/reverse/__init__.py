"""Pass 5, reverse: the forward function that saves, and the adjoint, from the analysis.

Before: an ``Analysis`` of an ANF function.
After:  ``Reversed``: the forward body and the adjoint body.
        - forward: the primal statements; calls to differentiated callees replaced by their
          forward functions; for each active loop a trip counter; at the end of each active
          block (a branch, a loop body) a ``__push__(k)`` marker.
        - adjoint: for each active statement in reverse order, the derivative rule inlined
          as a template; contributions reduced to their operand's shape where the shapes can
          differ; the first contribution to a cotangent assigned, later ones added. An
          ``if`` becomes an ``if`` on the same (saved) condition, a loop a loop over its trip
          count; each reverse block starts with a ``__pop__(k)`` marker. Cotangents of values
          from outside a block that receive contributions inside it start at zero before it.
        ``optimize`` prunes the adjoint, then turns the markers into pushes and pops of exactly
        the values each reverse block reads (the top-level ones become the saved tuple).

    h = np.tanh(_t1)    ->  forward: h = np.tanh(_t1)
                            adjoint: _t1_bar = h_bar * (1.0 - h * h)

The pass is a package, one module per job:

    context.py     what every job reads: the analysis, aliasing, the namer, bound names
    forward.py     the forward that saves: trip counters, push markers, in-place updates,
                   callees' forwards, the copies and shapes the adjoint asks for
    adjoint.py     the adjoint of each statement kind: blocks, branches, loops; which
                   cotangents start at zero before a block
    operations.py  the adjoint of each operation kind: rules inlined, callees' backwards,
                   container operations
    broadcast.py   a contribution reduced to the shape of its operand
    cotangents.py  each active name's cotangent: its name, whether it has a value yet, the
                   statements that add to it

A statement class has one entry in ``Forward.lowering`` and in ``Adjoint.reversers``; an
operation kind, in ``Forward.by_op`` and in ``Operations.adjoints``. This module builds the
adjoint first (it decides what the forward saves), then the forward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gast

from ...naming import Namer
from ..aliasing import Aliasing, aliasing
from ..analyze import Analysis
from ..context import POP, PUSH, Context  # noqa: F401
from .adjoint import Adjoint
from .broadcast import Broadcast
from .cotangents import Cotangents
from .forward import Forward
from .operations import Operations


@dataclass(frozen=True)
class Reversed:
    analysis: Analysis
    forward: list[gast.stmt]  # without the final return
    adjoint: list[gast.stmt]  # ends with the return of the cotangents
    bindings: dict[str, Any]  # names the generated code reads -> the objects they name
    result: gast.expr  # what the forward returns as its output
    namer: Namer
    shape_saves: frozenset[str]  # forward statements only the adjoint reads (shapes, copies)
    seed: str  # the adjoint's parameter: the cotangent of the output
    saved: str  # the adjoint's parameter: what the forward saved
    bar_of: dict[str, str]  # primal name -> the name of its cotangent
    result_aliases: frozenset[str]  # parameters whose memory the result may share
    snapshot_of: dict[str, str]  # a copy taken for the adjoint -> the name it copies
    aliases: Aliasing | None = None  # what shares memory, and which writes change what


def reverse(analysis: Analysis, aliases: Aliasing | None = None) -> Reversed:
    """``aliases``: what shares memory (the aliasing pass), computed here if not given."""
    ctx = Context(analysis, aliases or aliasing(analysis))
    saved = ctx.namer.fresh("saved")
    seed = ctx.namer.fresh("out_bar")
    body, result = analysis.body[:-1], analysis.result  # without the final return
    forward = Forward(ctx)
    cotangents = Cotangents(ctx, seed, result, forward.structure)
    operations = Operations(ctx, forward, cotangents, Broadcast(ctx, forward))
    adjoint = Adjoint(ctx, forward, cotangents, operations).block(body, None)
    adjoint.append(cotangents.returned(analysis.wrt))
    lowered = forward.block(body)  # after the adjoint, which asks for the saves
    return Reversed(analysis, lowered, adjoint, ctx.bindings.names, result,
                    ctx.namer, forward.only_for_the_adjoint(), seed, saved,
                    dict(cotangents.bar_of), ctx.aliases.result_aliases(result),
                    forward.snapshot_of(), ctx.aliases)
