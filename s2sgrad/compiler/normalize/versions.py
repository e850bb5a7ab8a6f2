"""Single assignment: which version of each variable the walk is at, and where versions meet.

Takes the assignments the walk makes, in order; gives each one the name it stores into, so
that no name is assigned twice in a block. A user variable assigned again gets a numbered
version (``h``, ``h_1``), and so does a *synthetic* variable, one the desugaring introduces
(the value of ``a if c else b``, a comprehension's list, an inlined function's locals).
Temporaries, which hold the value of one operation (``_t1 = x @ w``), are assigned once
where they are made and need no version.

Where control flow meets, versions meet through copies that are not the user's code (no
source position):

    if c:                    if c:                     after an if, a variable whose
        h = h * 2.0   ->         h_1 = h * 2.0         branches end at different
                                 h_2 = h_1             versions gets a new one, copied
                             else:                     at the end of each branch
                                 h_2 = h

    while c(h):              h_1 = h                   a variable the loop assigns has a
        h = f(h)      ->     while True:               loop version: copied in before the
                                 h_2 = h_1             loop and at the start of the body
                                 ...                   (the value this iteration starts
                                 h_3 = f(h_2)          with), and out at the body's end
                                 h_1 = h_3

A variable first assigned in a loop has its loop version bound to None before it (a
*placeholder*: the analysis gives it no value). Each version is recorded with the variable
it stands for (``variable_of``: ``h_2`` -> ``h``), which is what aliasing follows copies by.
Copies nothing reads are dropped at the end (``drop_dead_copies``).
"""

from __future__ import annotations

import collections

import gast

from ... import syntax
from ...naming import Namer
from ..parse import Parsed


class Versions:
    def __init__(self, parsed: Parsed, namer: Namer):
        self.parsed = parsed
        self.namer = namer
        self.current: dict[str, str] = {p: p for p in parsed.params}  # user name -> version
        self.variable_of: dict[str, str] = {p: p for p in parsed.params}  # version -> name
        self.synthetic: set[str] = set()  # variables of desugared expressions (versioned)
        self.reassigned: set[str] = set()  # generated names assigned more than once (flags)
        self.placeholders: set[gast.stmt] = set()  # `v = None` binding a loop version early
        self.deleted: set[str] = set()  # variables `del` unbound (reading one raises)

    def synthetic_variable(self) -> str:
        """A variable the desugaring introduces; versioned and merged like the user's own."""
        name = self.namer.temp()
        self.synthetic.add(name)
        return name

    def define(self, user_name: str) -> str:
        """The name a new assignment to ``user_name`` stores into (a new version if needed)."""
        if user_name not in self.parsed.local_names and user_name not in self.synthetic:
            return user_name  # a temporary: assigned once, where it is made
        taken = user_name in self.current or user_name in self.deleted or (
            user_name in self.namer.generated and user_name not in self.synthetic)
        self.deleted.discard(user_name)
        version = self.namer.fresh(user_name) if taken else self.namer.reserve(user_name)
        self.current[user_name] = version
        self.variable_of[version] = user_name
        return version

    def delete(self, names: set[str] | list[str]) -> None:
        """``del name``: the variable is unbound from here on; reading it, or deleting it
        again, is refused (Python raises), until it is assigned again."""
        for name in names:
            self.current.pop(name, None)
            self.deleted.add(name)

    def merge(self, before: dict[str, str], after_then: dict[str, str],
              then_block: list[gast.stmt], after_else: dict[str, str],
              else_block: list[gast.stmt]) -> None:
        """After an if: a variable whose branches end at different versions gets a new one,
        copied at the end of each branch that assigns it."""
        merged = dict(before)
        for user in sorted(set(after_then) | set(after_else)):
            a, b = after_then.get(user), after_else.get(user)
            if a == b:
                merged[user] = a
                continue
            version = self._meeting(user)
            for block, branch in ((then_block, a), (else_block, b)):
                if branch is not None:  # merge copies are not the user's code: no position
                    block.append(syntax.assign(version, syntax.name(branch)))
                else:  # first assigned in the other branch: bound here, so it can be saved
                    placeholder = syntax.assign(version, syntax.const(None))
                    self.placeholders.add(placeholder)
                    block.append(placeholder)
            merged[user] = version
        self.current = merged

    def enter_loop(self, carried: list[str]) -> tuple[dict[str, str], list[gast.stmt]]:
        """The loop version of each variable the body assigns, and the statements before the
        loop that bind it."""
        loop_versions: dict[str, str] = {}
        before: list[gast.stmt] = []
        for user in carried:
            loop_versions[user] = self._meeting(user)
            if user in self.current:  # before the loop: the loop version starts as the value
                before.append(syntax.assign(loop_versions[user],
                                            syntax.name(self.current[user])))
            else:  # first assigned in the loop: bound before it, so it can be saved after it
                placeholder = syntax.assign(loop_versions[user], syntax.const(None))
                self.placeholders.add(placeholder)
                before.append(placeholder)
        return loop_versions, before

    def start_iteration(self, loop_versions: dict[str, str]) -> list[gast.stmt]:
        """The copies that open the loop body."""
        copies = []
        for user, version in loop_versions.items():
            if user in self.current:  # in the body: read the value this iteration starts with
                copies.append(syntax.assign(self.define(user), syntax.name(version)))
            else:
                self.current[user] = version
        return copies

    def end_iteration(self, loop_versions: dict[str, str]) -> list[gast.stmt]:
        """The copies that close the loop body: the next iteration, and the code after the
        loop, read the loop versions."""
        copies = []
        for user, version in loop_versions.items():
            if self.current.get(user) not in (None, version):
                copies.append(syntax.assign(version, syntax.name(self.current[user])))
            self.current[user] = version
        return copies

    def _meeting(self, user: str) -> str:
        """A new version of ``user`` where versions meet (after an if, around a loop)."""
        version = self.namer.fresh(user)
        self.variable_of[version] = user
        return version


def drop_dead_copies(body: list[gast.stmt]) -> list[gast.stmt]:
    """Remove copies ``a = b`` (merges, loop versions) and ``a = None`` (what an inlined
    function without a return gives) whose target no computation reads: nothing but other
    such copies, which a loop may chain into a cycle (``a_2 = a_1`` in a branch, ``a_1 =
    a_2`` at the end of the body)."""
    copies = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Assign)
              and isinstance(n.targets[0], gast.Name) and (
                  isinstance(n.value, gast.Name) or syntax.is_const(n.value)
                  and n.value.value is None)]
    loads = collections.Counter(n.id for s in body for n in gast.walk(s)
                                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    for copy in copies:  # reads by copies do not make a name live by themselves
        if isinstance(copy.value, gast.Name):
            loads[copy.value.id] -= 1
    live = {name for name, count in loads.items() if count > 0}
    changed = True
    while changed:  # the source of a live copy is live
        changed = False
        for copy in copies:
            if copy.targets[0].id in live and isinstance(copy.value, gast.Name) and \
                    copy.value.id not in live:
                live.add(copy.value.id)
                changed = True
    dead = {id(c) for c in copies if c.targets[0].id not in live}
    return _without(body, dead) if dead else body


def _without(stmts: list[gast.stmt], dead: set[int]) -> list[gast.stmt]:
    out = []
    for s in stmts:
        if id(s) in dead:
            continue
        for field in ("body", "orelse", "handler"):  # (a try's handler: syntax.Try)
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, _without(getattr(s, field), dead))
        if isinstance(s, gast.If) and not s.body:
            s.body = [syntax.pass_()]
        out.append(s)
    return out
