"""The statement kinds of normalized code: the one table every pass dispatches on.

After ``normalize``, a function body holds only these statements, with atoms (names and
constants) as operands:

    y = op(a, b)            assignment        one operation, one target
    op(a)                   expression        a call kept for its effect (print(...))
    if t: ... else: ...     if                blocks: body, orelse
    for i in range(n): ...  for               a loop over an index; blocks: body
    while t: ...            while             blocks: body
    return a / break / continue / pass / raise / assert

``kind(stmt, pass_name)`` gives a statement's ``Kind``: the blocks nested in it, whether
they may run more than once (data-flow analyses iterate those to a fixpoint), and whether
it computes a value. A statement of any other class is an internal error in the pass that
meets it, never skipped. A new construct is desugared into these by ``normalize``; one that
cannot be adds a row here, and each pass's handler table then names it (the passes look
their handlers up by ``type(stmt)`` and raise on a missing one).
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from . import syntax


@dataclass(frozen=True)
class Kind:
    name: str
    blocks: tuple[str, ...] = ()  # the fields that hold nested statement lists
    loop: bool = False  # its blocks may run again after they finish
    computes: bool = False  # an assignment or an expression: one operation


KINDS: dict[type, Kind] = {
    gast.Assign: Kind("assignment", computes=True),
    gast.Expr: Kind("expression", computes=True),
    gast.If: Kind("if", ("body", "orelse")),
    gast.For: Kind("for", ("body",), loop=True),
    gast.While: Kind("while", ("body",), loop=True),
    gast.Return: Kind("return"),
    gast.Break: Kind("break"),
    gast.Continue: Kind("continue"),
    gast.Pass: Kind("pass"),
    gast.Raise: Kind("raise"),
    gast.Assert: Kind("assert"),
}


def kind(stmt: gast.stmt, pass_name: str) -> Kind:
    """The kind of a normalized statement; an internal error names the pass otherwise."""
    found = KINDS.get(type(stmt))
    if found is None:
        raise syntax.unexpected(pass_name, stmt)
    return found
