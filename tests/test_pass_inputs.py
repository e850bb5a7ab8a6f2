"""No pass changes what an earlier pass returned: a pass that rewrites a statement or a block
builds a new one, so each pass's result stays as it was when the pass returned it (what
S2SGRAD_DEBUG=2 prints between passes is what the next pass received).

The passes are chained here as pipeline._run_passes chains them; after each one, the trees
every earlier pass returned must dump as they did (fields and source positions).
"""

import inspect

import gast
import pytest

from s2sgrad.compiler.aliasing import aliasing
from s2sgrad.compiler.analyze import abstract_of, analyze
from s2sgrad.compiler.codegen import codegen
from s2sgrad.compiler.fence import fence
from s2sgrad.compiler.normalize import normalize
from s2sgrad.compiler.optimize import optimize
from s2sgrad.compiler.parse import parse
from s2sgrad.compiler.pipeline import compile_vjp
from s2sgrad.compiler.reverse import reverse
from tests.cases import golden_cases as cases

CASES = cases.calls()


def _dump(trees) -> str:
    trees = trees if isinstance(trees, list) else [trees]
    return "\n".join(gast.dump(t, include_attributes=True) for t in trees)


class _Results:
    """What each pass returned, dumped when it returned it."""

    def __init__(self):
        self.kept: list[tuple[str, object, str]] = []

    def returned(self, pass_name: str, *trees) -> None:
        self.unchanged_by(pass_name)
        for tree in trees:
            self.kept.append((pass_name, tree, _dump(tree)))

    def unchanged_by(self, pass_name: str) -> None:
        for earlier, tree, dump in self.kept:
            assert _dump(tree) == dump, f"{pass_name} changed what {earlier} returned"


@pytest.mark.parametrize("name", list(CASES))
def test_no_pass_changes_what_an_earlier_pass_returned(name):
    fn, wrt, args = CASES[name]
    bound = inspect.signature(fn).bind(*args)
    signature = {k: abstract_of(v) for k, v in bound.arguments.items()}
    names = tuple(list(bound.arguments)[i] for i in wrt)
    results = _Results()

    parsed = parse(fn)
    results.returned("parse", parsed.node)
    parsed = fence(parsed)
    results.returned("fence")
    normalized = normalize(parsed)
    results.returned("normalize", normalized.node)

    def compile_callee(callee, callee_wrt, callee_signature, node):
        return compile_vjp(callee, callee_wrt, callee_signature, (parsed, node))

    analysis = analyze(normalized, names, signature, compile_callee)
    results.returned("analyze", analysis.result)
    aliases = aliasing(analysis)
    results.returned("aliasing")
    reversed_ = reverse(analysis, aliases)
    results.returned("reverse", reversed_.forward, reversed_.adjoint, reversed_.result)
    optimized = optimize(reversed_)
    results.returned("optimize", optimized.forward, optimized.adjoint)
    codegen(optimized)
    results.unchanged_by("codegen")
