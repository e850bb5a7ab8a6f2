"""Golden files: the generated forward and adjoint of a few functions, kept in tests/golden/,
and for some of them the output of every pass, in tests/golden/passes/.

Readability of generated code is a feature, so changes to it show up in review; so does a
change to any one pass, in the section of that pass (see tests/passes.py). After an
intended change, refresh the files with:  S2SGRAD_UPDATE_GOLDEN=1 python -m pytest tests/compiler/test_golden.py
"""

import inspect
import os
import pathlib

import pytest

import s2sgrad
from s2sgrad.compiler.analyze import abstract_of
from s2sgrad.compiler.function import specialiser
from s2sgrad.compiler.pipeline import compile_jvp, compile_vjp
from tests.cases import golden_cases as cases
from tests.passes import as_text, through_passes

GOLDEN = pathlib.Path(__file__).parent.parent / "golden"
CASES = cases.calls()


# one function without control flow, one calling another, one with a loop, a branch and an
# element write
PER_PASS = ["scalar_chain", "logistic", "clipped_rnn"]


def _compiled(name):
    fn, wrt, args = CASES[name]
    return specialiser(fn).compiled(wrt, args, {})


def _assert_golden(path, text):
    if os.environ.get("S2SGRAD_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing {path}; run with S2SGRAD_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text()


@pytest.mark.parametrize("name", list(CASES))
def test_generated_source_matches_golden(name):
    fn, wrt, args = CASES[name]
    s2sgrad.testing.check_grads(fn, *args, wrt=wrt)  # the golden code is also correct
    compiled = _compiled(name)
    _assert_golden(GOLDEN / f"{name}.py.txt",
                   compiled.forward_source + "\n\n" + compiled.adjoint_source)


@pytest.mark.parametrize("name", PER_PASS)
def test_each_pass_matches_golden(name):
    fn, wrt, args = CASES[name]
    sections = through_passes(fn, wrt, args)
    compiled = _compiled(name)
    # the passes run here as the pipeline runs them: the same code comes out
    assert dict(sections)["codegen"] == compiled.forward_source + "\n" + compiled.adjoint_source
    _assert_golden(GOLDEN / "passes" / f"{name}.txt", as_text(sections))


# forward mode: the tangent function of a function without control flow and of the loop
TANGENT = ["tanh_regression", "clipped_rnn"]


@pytest.mark.parametrize("name", TANGENT)
def test_tangent_source_matches_golden(name):
    fn, wrt, args = CASES[name]
    s2sgrad.testing.check_grads(fn, *args, wrt=wrt, modes=("fwd",))
    compiled = specialiser(fn).compiled(wrt, args, {}, mode="jvp")
    _assert_golden(GOLDEN / "tangent" / f"{name}.py.txt", compiled.source)


@pytest.mark.parametrize("name", TANGENT)
def test_batched_tangent_source_matches_golden(name):
    """The tangent function for a batch of directions (the Jacobian's columns at once)."""
    fn, wrt, args = CASES[name]
    s2sgrad.testing.check_grads(fn, *args, wrt=wrt, modes=("batch",), directions=3)
    compiled = specialiser(fn).compiled(wrt, args, {}, mode="batched")
    _assert_golden(GOLDEN / "batched" / f"{name}.py.txt", compiled.source)


def test_second_order_source_matches_golden():
    """The derivative of gradient(f): its pair (higher.py), f's tangent function, and the
    adjoint of that tangent function, which is where the second derivatives come from."""
    fn, wrt, args = CASES["tanh_regression"]
    s2sgrad.testing.check_grads(fn, *args, wrt=wrt, order=2)
    derivative = s2sgrad.gradient(fn, wrt[0])
    pair = specialiser(derivative).compiled(wrt, args, {})
    names = tuple(inspect.signature(fn).parameters)
    signature = {k: abstract_of(v) for k, v in zip(names, args, strict=True)}
    moving = tuple(names[i] for i in wrt)
    tangent = compile_jvp(fn, moving, signature, "tangent")
    adjoint = compile_vjp(tangent.jvp, moving, {**signature, **{
        f"{m}_dot": signature[m] for m in moving}})
    text = "\n".join([
        "# the pair of gradient(tanh_regression)", pair.forward_source, pair.adjoint_source,
        "# its tangent function", tangent.source,
        "# the tangent function's pair", adjoint.forward_source, adjoint.adjoint_source])
    _assert_golden(GOLDEN / "second_order" / "tanh_regression.py.txt", text)


_SEEDED = """
import numpy as np
import s2sgrad
from s2sgrad.compiler import codegen

def f(x, y):
    return np.sum(np.concatenate((x, y * 2.0)) ** 2) + np.sum(np.stack([x, x]) * y[0])

s2sgrad.value_and_grad(f, (0, 1))(np.ones(3), np.ones(2))
print("\\n".join(sorted(codegen._sources.values())))
"""


def test_generated_text_does_not_depend_on_the_hash_seed(tmp_path):
    """Names a rule reads (bound as parameters of the function that makes the generated
    code) come in one order: two processes with different seeds write the same text."""
    import subprocess
    import sys

    program = tmp_path / "seeded.py"
    program.write_text(_SEEDED)
    texts = []
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, str(program)], env=env, capture_output=True,
                             text=True, check=True)
        assert "__s2sgrad_make__(" in run.stdout
        texts.append(run.stdout)
    assert texts[0] == texts[1] == texts[2]
