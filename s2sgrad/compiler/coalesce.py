"""Part of pass 6, optimize: loop bodies without the copies that versioning put in them.

Before: the forward and the adjoint after their stacks are resolved. A loop body carries
its values from one iteration to the next through copies (``h_2 = h_1`` where it starts,
``h_1 = h_3`` where it ends, and the same in reverse for the cotangents), and a loop with a
list of its own pushes onto it where the body ends.
After: in every loop body,

- a push onto the loop's own list moved up to just after the last statement that assigns
  a value it pushes (what a person writes: ``hs.append(h)`` before ``h`` changes);
- a copy ``a = b`` removed, reading ``b`` for ``a``, where ``a`` is assigned only there,
  is read only in this body, and ``b`` does not change while ``a`` is still read;
- a copy ``t = s`` removed, ``s`` renamed ``t``, where ``s`` is assigned once, earlier in
  the body, is read nowhere after the copy nor outside the body, and ``t`` is neither
  read nor assigned in between; a definition of ``s`` that only arithmetic separates from
  the copy first moves down to it. Not in a body that a break or continue may leave
  before the copy (``t`` would change on a path that skips it).

    for t in _t7:                            for t in _t7:
        h_2 = h_1                                _steps.append((t, h_1))
        _t10 = W @ h_2 + x[t]          ->        _t10 = W @ h_1 + x[t]
        h_3 = np.tanh(_t10)                      h_1 = np.tanh(_t10)
        h_1 = h_3
        _steps.append((t, h_2))

Renaming only touches names local to the body, so what the forward saves and returns keeps
its names. A statement kind without a case here is an internal error.
"""

from __future__ import annotations

import functools
from collections import Counter

import gast

from .. import syntax
from . import statements

_kind = functools.partial(statements.kind, pass_name="optimize", generated=True)

# expressions that compute a value from their operands and nothing else: a definition made
# of them may move past statements that change none of its operands
_PURE = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Name, gast.Constant, gast.Tuple,
         gast.Subscript, gast.Attribute, gast.Slice, gast.Load, gast.operator, gast.unaryop,
         gast.cmpop, gast.expr_context)


def coalesce(stmts: list[gast.stmt], lists: set[str]) -> list[gast.stmt]:
    """``stmts`` (a whole function body) with its loop bodies' copies removed; ``lists``:
    the loops' own lists, whose pushes may move up."""
    everything = [syntax.clone(s) for s in stmts]  # changed in place from here on

    def visit(block: list[gast.stmt]) -> None:
        for stmt in block:
            kind = _kind(stmt)
            for field in kind.blocks:
                visit(getattr(stmt, field))
            if kind.loop:
                stmt.body = _body(stmt.body, everything, lists, stmt)

    visit(everything)
    return everything


def _body(body: list[gast.stmt], everything: list[gast.stmt], lists: set[str],
          loop: gast.stmt) -> list[gast.stmt]:
    everything = _Function(everything, loop)
    body = list(body)
    early = _leaves_early(body)  # a break or continue may skip the copies at the end
    if not early:
        body = _pushes_up(body, lists, loop)
    changed = True
    while changed:
        changed = False
        for k, stmt in enumerate(body):
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name)
                    and isinstance(stmt.value, gast.Name)):
                continue
            a, b = stmt.targets[0].id, stmt.value.id
            if a == b:
                del body[k]
            elif _reads_for(body, k, a, b, everything, loop):
                del body[k]
                for s in body[k:]:
                    syntax.rename(s, {a: b})
            elif not early and _renames_source(body, k, a, b, everything, loop):
                del body[k]  # now a = a
            else:
                continue
            changed = True
            break
    return body or [syntax.pass_()]


def _leaves_early(body: list[gast.stmt]) -> bool:
    """Does the body (not a loop nested in it) hold a break, continue or return?"""
    for stmt in body:
        if isinstance(stmt, (gast.Break, gast.Continue, gast.Return)):
            return True
        kind = _kind(stmt)
        if kind.blocks and not kind.loop and any(
                _leaves_early(getattr(stmt, f)) for f in kind.blocks):
            return True
    return False


def _pushes_up(body: list[gast.stmt], lists: set[str], loop: gast.stmt) -> list[gast.stmt]:
    """The push onto the loop's own list (its last statement), moved up to just after the
    last statement that assigns a name it pushes (or to the top)."""
    last = body[-1] if body else None
    if not (isinstance(last, gast.Expr) and isinstance(last.value, gast.Call)
            and isinstance(last.value.func, gast.Attribute) and last.value.func.attr == "append"
            and isinstance(last.value.func.value, gast.Name)
            and last.value.func.value.id in lists):
        return body
    pushed = syntax.names_read(last.value.args[0])
    at = 0
    for k, stmt in enumerate(body[:-1]):
        if _assigned([stmt]) & pushed:
            at = k + 1
    return body[:at] + [syntax.located(last, body[at] if at < len(body) - 1 else loop)] + \
        body[at:-1]


def _assigned(stmts: list[gast.stmt]) -> set[str]:
    """Names assigned (by an assignment or a loop's target) in ``stmts``, nested too."""
    names: set[str] = set()
    for s in statements.in_order(stmts, "optimize", generated=True):
        if isinstance(s, (gast.Assign, gast.AugAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            for t in targets:
                names |= syntax.names_written(t)
        elif isinstance(s, gast.For):
            names |= syntax.names_written(s.target)
    return names


def _changed(stmts: list[gast.stmt]) -> set[str]:
    """Names assigned, or updated in place (``a[i] = v``, ``a[i] += v``, ``a += v``)."""
    names = _assigned(stmts)
    for s in statements.in_order(stmts, "optimize", generated=True):
        targets = s.targets if isinstance(s, gast.Assign) else (
            [s.target] if isinstance(s, gast.AugAssign) else [])
        for t in targets:
            while isinstance(t, (gast.Subscript, gast.Attribute)):
                t = t.value
            if isinstance(t, gast.Name):
                names.add(t.id)
    return names


def _reads(stmts: list[gast.stmt]) -> set[str]:
    return set().union(*(syntax.names_read(s) for s in stmts)) if stmts else set()


class _Function:
    """The whole function, as one loop's body is rewritten: what lies outside the body (no
    rewrite of the body changes it) is counted once; the body, whose statements the
    rewrites change in place, is read again at each question."""

    def __init__(self, everything: list[gast.stmt], loop: gast.stmt):
        self.loop = loop
        inside = {id(n) for s in loop.body for n in gast.walk(s)}
        self.loads = {n.id for s in everything for n in gast.walk(s)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                      and id(n) not in inside}
        self.assigned = _assignments(everything)
        self.assigned.subtract(_assignments(loop.body))

    def count_assigned(self, name: str) -> int:
        """How many times the function assigns ``name``."""
        return self.assigned[name] + _assignments(self.loop.body)[name]

    def read_outside(self, name: str) -> bool:
        """Is ``name`` read anywhere but in the loop's body?"""
        return name in self.loads


def _assignments(stmts: list[gast.stmt]) -> Counter:
    """How many times ``stmts`` assign each name (``x += y`` rebinds a number)."""
    count: Counter = Counter()
    for s in statements.in_order(stmts, "optimize", generated=True):
        if isinstance(s, gast.Assign):
            for t in s.targets:
                count.update(syntax.names_written(t))
        elif isinstance(s, (gast.AugAssign, gast.For)):
            count.update(syntax.names_written(s.target))
    return count


def _reads_for(body: list[gast.stmt], k: int, a: str, b: str,
               everything: _Function, loop: gast.stmt) -> bool:
    """``a = b`` at ``body[k]``: may the statements after it read ``b`` for ``a``?"""
    if everything.count_assigned(a) != 1 or everything.read_outside(a) \
            or a in _reads(body[:k]):
        return False
    rest = body[k + 1:]
    last = max((j for j, stmt in enumerate(rest) if a in syntax.names_read(stmt)), default=-1)
    if last < 0:
        return True
    final = rest[last]  # reads a before it assigns b, unless it holds blocks
    return b not in _assigned(rest[:last]) and not (
        _kind(final).blocks and b in _assigned([final]))


def _renames_source(body: list[gast.stmt], k: int, t: str, s: str,
                    everything: _Function, loop: gast.stmt) -> bool:
    """``t = s`` at ``body[k]``: rename ``s`` to ``t`` where ``s`` is defined earlier in the
    body (moving that definition down to the copy first where only arithmetic that leaves
    its operands alone lies between). Done in place, the copy left as ``t = t``; True if
    done."""
    defs = [j for j, stmt in enumerate(body[:k]) if isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1 and syntax.is_name(stmt.targets[0], s)]
    if len(defs) != 1 or everything.count_assigned(s) != 1 \
            or everything.read_outside(s) or s in _reads(body[k + 1:]) \
            or s in _reads(body[:defs[0]]):
        return False
    d = defs[0]
    between = body[d + 1:k]
    if t in _reads(between) | _assigned(between):
        definition = body[d]
        operands = syntax.names_read(definition.value)
        if not (all(isinstance(n, _PURE) for n in gast.walk(definition.value))
                and all(isinstance(x, (gast.Assign, gast.AugAssign)) for x in between)
                and not (_changed(between) & (operands | {s}))
                and s not in _reads(between)):
            return False
        del body[d]
        body.insert(k - 1, definition)  # just before the copy, which stays at k
        d = k - 1
    for stmt in body[d:k + 1]:
        _rename_everywhere(stmt, s, t)
    return True


def _rename_everywhere(stmt: gast.stmt, old: str, new: str) -> None:
    for n in gast.walk(stmt):
        if isinstance(n, gast.Name) and n.id == old:
            n.id = new
