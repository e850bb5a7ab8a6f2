"""Early returns lifted: every path through the function ends in one assignment of its result.

Takes a list of user-level statements and the name of the result; gives statements with no
``return``, where each path ends in ``result = value``. The statements after an ``if`` that
returns on some path move into both of its branches (tail duplication), so later passes see
one exit, the final ``return result`` that ``normalize`` appends:

    if x > 0:                     if x > 0:
        return x          ->          result = x
    y = -x                        else:
    return y                          y = -x
                                      result = y

A ``with`` block may return as its last statement, and so may a try block, the rest moving
into its except blocks (fence refuses the other returns in them). A path that falls off the
end assigns None. A return inside a loop is refused. The same
lifting makes the body of an inlined nested function assign its one result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import gast

from ... import syntax
from ..parse import Parsed


def lift_returns(parsed: Parsed, stmts: list[gast.stmt], result: str) -> list[gast.stmt]:
    """Make every path end in exactly one ``result = value``, by moving the statements after
    an ``if`` that returns on some path into its branches (tail duplication)."""
    out: list[gast.stmt] = []
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, gast.Return):
            value = stmt.value if stmt.value is not None else syntax.const(None)
            result_name = syntax.name(result, store=True)
            out.append(syntax.located(syntax.assign(result_name, value), stmt))
            return out  # the rest is unreachable
        if isinstance(stmt, (gast.For, gast.While)) and _has_return(stmt):
            ret = next(_returns(stmt))
            raise parsed.error("'return' inside a loop is not supported yet", ret,
                               "Assign the result to a variable, 'break', and return after "
                               "the loop.")
        if isinstance(stmt, gast.With) and _has_return(stmt):  # as its last statement
            if any(isinstance(i.context_expr, gast.Call) and parsed.resolve(
                    i.context_expr.func) is contextlib.suppress for i in stmt.items):
                raise parsed.error("'return' inside a 'with contextlib.suppress(...)' block "
                                   "is not supported", next(_returns(stmt)),
                                   "Assign the result in the block and return after it.")
            stmt.body = lift_returns(parsed, stmt.body, result)  # (fence): the rest is
            out.append(stmt)                                      # not reached
            return out
        if isinstance(stmt, gast.Try) and _has_return(stmt):  # its body ends in return
            stmt.body = lift_returns(parsed, stmt.body, result)  # (fence): the rest runs
            for handler in stmt.handlers:                       # after a handler only
                handler.body = lift_returns(
                    parsed, handler.body + [syntax.clone(s) for s in stmts[k + 1:]], result)
            out.append(stmt)
            return out
        if isinstance(stmt, gast.If) and _has_return(stmt):
            rest = stmts[k + 1:]
            stmt.body = lift_returns(parsed, stmt.body + [syntax.clone(s) for s in rest],
                                     result)
            stmt.orelse = lift_returns(parsed, stmt.orelse + [syntax.clone(s) for s in rest],
                                       result)
            out.append(stmt)
            return out
        out.append(stmt)
    last = stmts[-1] if stmts else parsed.node
    out.append(syntax.located(syntax.assign(result, syntax.const(None)), last))
    return out


def _returns(node: gast.AST) -> Iterator[gast.Return]:
    """The return statements of ``node``'s own code (not of functions defined in it)."""
    todo = list(gast.iter_child_nodes(node))
    while todo:
        n = todo.pop(0)
        if isinstance(n, gast.Return):
            yield n
        elif not isinstance(n, (gast.FunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(n))


def _has_return(node: gast.AST) -> bool:
    return next(_returns(node), None) is not None
