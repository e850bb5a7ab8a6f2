"""No pass changes what an earlier pass returned: a pass that rewrites a statement or a block
builds a new one, so each pass's result stays as it was when the pass returned it (what
S2SGRAD_DEBUG=2 prints between passes is what the next pass received).

The passes run as the pipeline chains them (``pipeline.reverse_passes``); after each one, the
trees every earlier pass returned must dump as they did (fields and source positions).
"""

import inspect

import gast
import pytest

from s2sgrad.compiler.analyze import abstract_of
from s2sgrad.compiler.pipeline import reverse_passes
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
    trees = {"parse": lambda parsed: [parsed.node], "fence": lambda parsed: [],
             "normalize": lambda normalized: [normalized.node],
             "analyze": lambda analysis: [analysis.result], "aliasing": lambda aliases: [],
             "reverse": lambda rev: [rev.forward, rev.adjoint, rev.result],
             "optimize": lambda optimized: [optimized.forward, optimized.adjoint],
             "codegen": lambda generated: []}
    seen = []

    def observe(pass_name, result):
        seen.append(pass_name)
        results.returned(pass_name, *trees[pass_name](result))

    reverse_passes(fn, names, signature, observe=observe)
    assert seen == list(trees)
