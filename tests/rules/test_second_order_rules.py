"""Every rule's second derivative, through the compiler, against finite differences.

A second derivative is the compiler applied to its own output (s2sgrad/compiler/higher.py): the
derivative of ``gradient(f)`` is the reverse mode of f's tangent function, so the code a jvp
template (or an elementwise vjp template, its own jvp template) emits must itself be
differentiable in both modes. For each case of tests/test_rules.CASES the primitive's call
becomes a function with source,

    def case(x0, x1):
        return np.sum(weight_ * primitive_(x0, x1, axis=(0, 2), keepdims=True))

(``np.real(np.sum(weight_ * ...))``, a complex weight, for a complex output), with the float
or complex inputs as parameters (a list or dict of floats, or a tuple holding floats, as
a literal of parameters, one per item, so that check_grads moves each), the static arguments
as the literals a user writes (ints, tuples, strings, slices, None), and the rest (index
arrays, masks, the primitive, the output's random weight) bound as globals.
``check_grads(..., order=2, modes=("rev", "fwd"))`` then checks the first derivatives and the
derivatives of the gradient in both modes.

The static arguments are literals because the compiler folds a rule's tests on constants
of the source (and ``is None`` on what a module global holds, the last test); a jvp
template whose test stays undecided is called rather than inlined, and such a call has no
derivative.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest

from s2sgrad.compiler import sourcefile
from s2sgrad.testing import check_grads
from tests.rules.test_rules import PARAMS, Case, call, is_float
from tests.tiers import sample

# getset descriptors are read as attributes, not called (test_rules.CALLS)
GETTERS = {np.ndarray.T: "T", np.ndarray.real: "real", np.ndarray.imag: "imag"}
if hasattr(np.ndarray, "mT"):
    GETTERS[np.ndarray.mT] = "mT"


def spelled(value, floats, bindings):
    """The source text of an argument: a parameter for a float, a literal of parameters for
    a list or dict of floats, a global for anything else."""
    if is_float(value):
        floats.append(value)
        return f"x{len(floats) - 1}"
    if isinstance(value, list) and value and all(is_float(v) for v in value):
        return "[" + ", ".join(spelled(v, floats, bindings) for v in value) + "]"
    if isinstance(value, tuple) and any(is_float(v) for v in value):  # (c, lower)
        return "(" + "".join(spelled(v, floats, bindings) + ", " for v in value) + ")"
    if isinstance(value, dict) and value and all(is_float(v) for v in value.values()):
        return "{" + ", ".join(f"{k!r}: {spelled(v, floats, bindings)}"
                               for k, v in value.items()) + "}"
    literal = source_literal(value)
    if literal is not None:
        return literal
    name = f"s{len(bindings)}_"
    bindings[name] = value
    return name


def source_literal(value):
    """Python source for a static value a user would write in the call (``axis=(0, 2)``,
    ``order="F"``, ``slice(1, 3)``), so that the compiler sees the constant and folds the
    rules' tests on it; None for a value that is bound as a global instead (an index array)."""
    if value is None or value is Ellipsis or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, slice):
        return f"slice({value.start!r}, {value.stop!r}, {value.step!r})"
    if isinstance(value, (tuple, list)):
        items = [source_literal(v) for v in value]
        if any(item is None for item in items):
            return None
        text = ", ".join(items) + ("," if isinstance(value, tuple) and len(items) == 1 else "")
        return f"({text})" if isinstance(value, tuple) else f"[{text}]"
    if isinstance(value, type) and getattr(np, value.__name__, None) is value:
        return f"np.{value.__name__}"
    return None


def case_function(primitive, c: Case, rng):
    """(the function of the case, its float arguments)."""
    floats, bindings = [], {"primitive_": primitive}
    args = [spelled(a, floats, bindings) for a in c.args]
    args += [f"{k}={spelled(v, floats, bindings)}" for k, v in c.kwargs.items()]
    if primitive in GETTERS:
        expression = f"{args[0]}.{GETTERS[primitive]}"
    else:
        expression = f"primitive_({', '.join(args)})"
    out = call(primitive, c.args, c.kwargs)
    params = [f"x{i}" for i in range(len(floats))]
    if isinstance(out, (list, tuple)):  # a container output: one weight per item
        terms = []
        for k, item in enumerate(out):
            bindings[f"weight{k}_"] = rng.standard_normal(np.shape(item))
            terms.append(f"np.sum(weight{k}_ * out_[{k}])")
        return sourcefile.define("case", params, " + ".join(terms) or "0.0",
                                 (f"out_ = {expression}",), bindings), floats
    bindings["weight_"] = rng.standard_normal(np.shape(out))
    if np.iscomplexobj(out):  # a real loss of a complex output: Re <weight, out>
        bindings["weight_"] = bindings["weight_"] + 1j * rng.standard_normal(np.shape(out))
        return sourcefile.define("case", params, f"np.real(np.sum(weight_ * {expression}))",
                                 (), bindings), floats
    return sourcefile.define("case", params, f"np.sum(weight_ * {expression})", (),
                             bindings), floats


POWERS = (operator.pow, np.power, np.float_power, pow, math.pow)
ZERO_BASE = (
    "the base holds 0, the edge of the domain of the derivative in the exponent, "
    "a ** b * log(a): a central difference of the gradient moves the base below 0, where that "
    "derivative is nan (NumPy) or raises ValueError (math.log), so the mixed second "
    "derivative has no finite difference to be checked against at this point")


def expected_failure(primitive, c: Case):
    """The reason a case's second derivative cannot be checked, or None."""
    if primitive in POWERS and is_float(c.args[1]) and np.any(np.asarray(c.args[0]) == 0):
        return ZERO_BASE
    return None


def params():
    """Every rule's cases, each rule's first of them and a sample of the rest outside
    ``S2SGRAD_TESTS=full`` (tests/tiers.py)."""
    out = []
    for p in PARAMS:
        reason = expected_failure(*p.values)
        marks = [pytest.mark.xfail(strict=True, reason=reason,
                                   raises=(AssertionError, ValueError))] if reason else []
        out.append(pytest.param(*p.values, id=p.id, marks=marks))
    return sample(out, family=lambda p: id(p.values[0]), every=10)


@pytest.mark.parametrize("primitive, c", params())
def test_second_derivative_matches_finite_differences(primitive, c):
    rng = np.random.default_rng(20240612)
    fn, floats = case_function(primitive, c, rng)
    with np.errstate(invalid="ignore" if c.quiet else "warn"):
        check_grads(fn, *floats, order=2, modes=("rev", "fwd"))


# --- a static argument the compiler does not see -------------------------------------------

AXIS = 0  # a module global: its value is not a constant of the source


def max_over_global_axis(x):
    return np.sum(np.max(x, axis=AXIS) ** 2)


def test_second_derivative_with_a_static_argument_held_in_a_global(monkeypatch):
    # extremum_jvp tests `axis is None or keepdims`: with axis a global, the test is decided
    # from what the global holds now, and the template inlined; a rebinding to another type
    # (None) compiles again
    x = np.random.default_rng(3).standard_normal((3, 4))
    check_grads(max_over_global_axis, x, order=2, modes=("rev", "fwd"))
    monkeypatch.setitem(globals(), "AXIS", None)
    check_grads(max_over_global_axis, x, order=2, modes=("rev", "fwd"))
