"""The statement kinds and operation kinds are extension points: one table of statement kinds
(``statements.KINDS``) that the generic walks follow, and one handler per statement class and
per operation kind in the passes with specific code (reverse's forward and adjoint). A kind
that a table lacks is an internal error naming the pass, never skipped.
"""

import dataclasses

import gast
import numpy as np
import pytest

from s2sgrad import syntax
from s2sgrad.compiler import statements
from s2sgrad.compiler.aliasing import aliasing
from s2sgrad.compiler.analyze import abstract_of, analyze, facts
from s2sgrad.compiler.context import Context
from s2sgrad.compiler.fence import fence
from s2sgrad.compiler.normalize import normalize
from s2sgrad.compiler.optimize import _definitely_assigned, _eliminate_dead
from s2sgrad.compiler.parse import parse
from s2sgrad.compiler.reverse import reverse
from s2sgrad.compiler.reverse.adjoint import Adjoint
from s2sgrad.compiler.reverse.cotangents import Cotangents
from s2sgrad.compiler.reverse.forward import Forward
from s2sgrad.compiler.reverse.operations import Operations
from s2sgrad.compiler.tangent import _Tangent

# The operation kinds analyze gives (``analyze.facts.Op.kind``), and those a gradient flows
# through (an unknown operation carries one nowhere: analyze refuses it where it would).
OP_KINDS = set(facts.OP_KINDS)
CARRYING = {name for name, kind in facts.OP_KINDS.items() if kind.carries}
# Statements normalize leaves out of what reverse reads: the final return is the result, a
# continue is desugared into branches.
NOT_REVERSED = {gast.Return, gast.Continue}


def loop_and_branch(x, n):
    s = 0.0
    for i in range(n):
        if i > 1:
            s = s + np.sum(x * i)
    return s


def _analysis(fn, *args):
    parsed = fence(parse(fn))
    signature = {p: abstract_of(a) for p, a in zip(parsed.params, args, strict=True)}
    return analyze(normalize(parsed), (parsed.params[0],), signature, None)


def _jobs(analysis):
    ctx = Context(analysis, aliasing(analysis))
    forward = Forward(ctx)
    cotangents = Cotangents(ctx, "out_bar", analysis.result)
    operations = Operations(ctx, forward, cotangents, None)
    return forward, Adjoint(ctx, forward, cotangents, operations), operations


def test_reverse_has_a_handler_for_every_statement_kind_it_reads():
    forward, adjoint, _ = _jobs(_analysis(loop_and_branch, np.ones(3), 4))
    normalized = {cls for cls, kind in statements.KINDS.items() if not kind.generated}
    assert set(forward.lowering) == normalized - NOT_REVERSED
    assert set(adjoint.reversers) == normalized - NOT_REVERSED


def test_reverse_has_a_handler_for_every_operation_kind():
    forward, _, operations = _jobs(_analysis(loop_and_branch, np.ones(3), 4))
    assert set(forward.by_op) == OP_KINDS
    assert set(operations.adjoints) == CARRYING


def test_forward_mode_has_a_handler_for_every_operation_kind():
    analysis = _analysis(loop_and_branch, np.ones(3), 4)
    assert set(_Tangent(analysis, aliasing(analysis)).by_op) == OP_KINDS


def test_an_operation_kind_without_an_adjoint_is_an_internal_error():
    analysis = _analysis(loop_and_branch, np.ones(3), 4)
    for key, op in analysis.ops.items():
        if op.kind == "rule" and op.target in analysis.active:
            analysis.ops[key] = dataclasses.replace(op, kind="new")
    with pytest.raises(syntax.InternalError,
                       match="reverse has no case for Assign in an operation of kind 'new'"):
        reverse(analysis)


def test_a_statement_reverse_does_not_read_is_an_internal_error():
    analysis = _analysis(loop_and_branch, np.ones(3), 4)
    analysis.body.insert(0, syntax.ret(syntax.const(None)))
    with pytest.raises(syntax.InternalError, match="reverse has no case for Return"):
        reverse(analysis)


def test_generated_kinds_are_internal_errors_in_normalized_code():
    update = syntax.aug_assign("x", "Add", syntax.name("y"))
    with pytest.raises(syntax.InternalError, match="analyze has no case for AugAssign"):
        statements.kind(update, "analyze")
    assert statements.kind(update, "optimize", generated=True).computes


def test_walks_follow_the_table():
    inner = syntax.assign("a", syntax.const(1.0))
    update = syntax.aug_assign("a", "Add", syntax.const(1.0))
    loop = syntax.for_(syntax.name("i", store=True), syntax.name("r"), [inner, update])
    branch = syntax.if_(syntax.name("t"), [loop], [])
    assert list(statements.in_order([branch], "optimize", generated=True)) == [
        branch, loop, inner, update]
    emptied = statements.map_blocks(branch, lambda block: [], "optimize", generated=True)
    assert isinstance(emptied.body[0], gast.Pass) and emptied.orelse == []
    assert branch.body == [loop]  # a copy: the statement given is unchanged


def test_optimize_walks_generated_statements():
    update = syntax.aug_assign("a", "Add", syntax.name("b"))
    kept, live = _eliminate_dead([update], {"a"})
    assert kept == [update] and live == {"a", "b"}
    assert _definitely_assigned([update]) == []


# --- a construct added where CONTRIBUTING.md says: one row in normalize's table -----------


def with_global_read(x):
    global SCALE  # noqa: PLW0602
    return np.sum(np.tanh(x) * SCALE)


def with_global_and_a_set(x):
    global SCALE  # noqa: PLW0602
    w = {SCALE}
    return np.sum(x) * len(w)


SCALE = 2.0


def test_normalize_handles_exactly_the_users_statements_fence_lets_through():
    from s2sgrad.compiler import normalize as normalize_package

    assert set(normalize_package._Statements.TABLE) == statements.SOURCE


def test_a_construct_added_to_normalizes_table_passes_fence(monkeypatch):
    import s2sgrad
    from s2sgrad.compiler import fence as fence_module
    from s2sgrad.compiler import normalize as normalize_package
    from s2sgrad.errors import TransformError

    def global_(self, stmt):  # a declaration of a name only read: nothing to do
        pass

    statements_class = normalize_package._Statements
    monkeypatch.setattr(statements_class, "global_", global_, raising=False)
    monkeypatch.setitem(statements_class.TABLE, gast.Global, "global_")
    monkeypatch.setattr(fence_module, "SOURCE", frozenset(statements_class.TABLE))
    monkeypatch.delitem(fence_module._REFUSED, gast.Global)
    x = np.linspace(-1.0, 1.0, 4)
    s2sgrad.testing.check_grads(with_global_read, x)
    with pytest.raises(TransformError, match="set literals"):  # its parts are still checked
        s2sgrad.gradient(with_global_and_a_set)(x)
