"""The statement kinds the passes meet: the one table every pass dispatches on.

After ``normalize``, a function body holds only these statements, with atoms (names and
constants) as operands:

    y = op(a, b)            assignment        one operation, one target
    op(a)                   expression        a call kept for its effect (print(...))
    if t: ... else: ...     if                blocks: body, orelse
    for i in range(n): ...  for               a loop over an index; blocks: body
    while t: ...            while             blocks: body
    with cm(...): ...       with              blocks: body (runs once, under the manager)
    try: ... except E: ...  try               blocks: body, handler (the one that ran to
                                              its end: a body that raised did nothing the
                                              rest of the function sees; syntax.Try)
    return a / break / continue / pass / raise / assert

The code ``reverse`` generates (the forward and the adjoint that ``optimize`` and
``codegen`` read) is made of the same kinds (a block's ``__push__(k)`` marker is an
expression, a loop's adjoint a ``for _ in range(trips)``) and one more:

    x_1 += y                augmented assignment   an in-place update of an array

``kind(stmt, pass_name)`` gives a statement's ``Kind``: the blocks nested in it (unless it
loops, exactly one of them runs), whether they may run more than once (data-flow analyses
iterate those to a fixpoint), the expression it evaluates to run them, and whether it
computes a value. A statement of any other class is an internal error in the pass that
meets it, never skipped; so is a kind of generated code in a pass that reads normalized
code (``generated=False``). ``in_order`` and ``map_blocks`` walk and rebuild blocks
through the table.

The statements ``normalize`` takes in from the user's code are ``SOURCE`` (fence refuses
every other one at the user's line). A new construct is a row there and its handler in
normalize's table, which desugars it into the kinds above; one that cannot be desugared adds
a row to ``KINDS`` too, and each pass's handler table then names it (the passes with statement-specific code
look their handlers up by ``type(stmt)`` and raise on a missing one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import gast

from .. import syntax


@dataclass(frozen=True)
class Kind:
    name: str
    blocks: tuple[str, ...] = ()  # the fields that hold nested statement lists
    loop: bool = False  # its blocks may run again after they finish
    computes: bool = False  # an assignment or an expression: one operation
    head: str | None = None  # the field of the expression it evaluates to run its blocks
    generated: bool = False  # only in code reverse generates, never in normalized code


KINDS: dict[type, Kind] = {
    gast.Assign: Kind("assignment", computes=True),
    gast.Expr: Kind("expression", computes=True),
    gast.AugAssign: Kind("augmented assignment", computes=True, generated=True),
    gast.If: Kind("if", ("body", "orelse"), head="test"),
    gast.For: Kind("for", ("body",), loop=True, head="iter"),
    gast.While: Kind("while", ("body",), loop=True, head="test"),
    gast.With: Kind("with", ("body",)),  # its manager's call reads constants only
    syntax.Try: Kind("try", ("body", "handler")),  # the exception caught: a static reference
    gast.Return: Kind("return"),
    gast.Break: Kind("break"),
    gast.Continue: Kind("continue"),
    gast.Pass: Kind("pass"),
    gast.Raise: Kind("raise"),
    gast.Assert: Kind("assert"),
}


# The user's statements normalize desugars into KINDS (its handler table has exactly these:
# tests/compiler/test_statements.py); ``return`` and ``continue`` are lifted out before it walks.
SOURCE: frozenset[type] = frozenset({
    gast.Assign, gast.AnnAssign, gast.AugAssign, gast.Expr, gast.If, gast.For, gast.While,
    gast.FunctionDef, gast.Break, gast.Assert, gast.Raise, gast.Pass, gast.Delete,
    gast.Nonlocal, gast.Import, gast.ImportFrom, gast.With, gast.Try,
})


def kind(stmt: gast.stmt, pass_name: str, generated: bool = False) -> Kind:
    """The kind of a statement of normalized code, or with ``generated`` of the code reverse
    generates; an internal error names the pass otherwise."""
    found = KINDS.get(type(stmt))
    if found is None or (found.generated and not generated):
        raise syntax.unexpected(pass_name, stmt)
    return found


def in_order(stmts: list[gast.stmt], pass_name: str, generated: bool = False
             ) -> Iterator[gast.stmt]:
    """The statements of a block and of its nested blocks, in program order."""
    for stmt in stmts:
        yield stmt
        for field in kind(stmt, pass_name, generated).blocks:
            yield from in_order(getattr(stmt, field), pass_name, generated)


def map_blocks(stmt: gast.stmt, change: Callable[[list[gast.stmt]], list[gast.stmt]],
               pass_name: str, generated: bool = False) -> gast.stmt:
    """``stmt`` with ``change`` applied to each block it holds (a copy, see
    ``syntax.replace``), or ``stmt`` itself if it holds none. The first block is the body,
    which Python requires to hold a statement: left empty, it holds a ``pass``."""
    fields = kind(stmt, pass_name, generated).blocks
    if not fields:
        return stmt
    changed = {field: change(getattr(stmt, field)) for field in fields}
    changed[fields[0]] = syntax.block(changed[fields[0]])
    return syntax.replace(stmt, **changed)
