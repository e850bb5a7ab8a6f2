"""Broadcast planning: a contribution reduced to the shape of the operand it goes to.

An elementwise operation broadcasts its operands to the shape of its result, so the
contribution an operand receives has the result's shape. ``fit`` reduces it: where the
analysis knows which axes have size 1, a plain ``np.sum`` over the broadcast axes (or
nothing, for operands in the result's shape class); elsewhere a run-time ``unbroadcast``
to the operand's shape, which the forward saves (``Forward.save_shape``).

    y = x * W    x: rank 1, W: rank 2      ->  x gets np.sum(y_bar * W, axis=0)
    y = a + b    ranks unknown             ->  a gets unbroadcast(y_bar, a_shape)
"""

from __future__ import annotations

import gast

from ... import shapes, syntax
from ...runtime.unbroadcast import unbroadcast
from ..context import Context
from .forward import Forward


class Broadcast:
    def __init__(self, ctx: Context, forward: Forward):
        self.ctx, self.forward = ctx, forward

    def fit(self, stmt: gast.stmt, c: gast.expr, atom: str, out: str | None) -> gast.expr:
        """Reduce a contribution shaped like ``out`` (None: a region of unknown shape) to the
        shape of ``atom``, if they can differ."""
        a, np = self.ctx.analysis, self.ctx.np
        if out is not None and a.same_shape(atom, out):
            return c
        operand = a.values[atom].dims
        result = None if out is None else a.values[out].dims
        if operand == ():
            return c if result == () else syntax.call(f"{np}.sum", [c])
        plan = None if operand is None or result is None else shapes.sum_axes(operand, result)
        if plan is None:
            helper = self.ctx.bindings.claim("unbroadcast", unbroadcast)
            shape = self.forward.save_shape(stmt, atom)
            return syntax.call(syntax.name(helper), [c, syntax.name(shape)])
        lead, kept = plan
        if lead:
            c = syntax.call(f"{np}.sum", [c], {"axis": _axes(lead)})
        if kept:
            c = syntax.call(f"{np}.sum", [c], {"axis": _axes(kept),
                                               "keepdims": syntax.const(True)})
        return c


def _axes(axes: tuple[int, ...]) -> gast.expr:
    return syntax.const(axes[0]) if len(axes) == 1 else syntax.tuple_(syntax.const(a) for a in axes)
