"""The tables of docs/rules.md, generated from the registry so that they cannot drift.

``python -m s2sgrad.rules.doc`` rewrites the parts of docs/rules.md between the markers: the
conventions at special points (``CONVENTIONS``, each checked by an example in
tests/rules/test_soundness_rules.py) and the rule tables. The test suite fails while the file is
stale.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from pathlib import Path

from . import nondiff, registry
from .registry import Rule, primitive_name

BEGIN = "<!-- begin generated tables: python -m s2sgrad.rules.doc -->"
END = "<!-- end generated tables -->"
BEGIN_CONVENTIONS = "<!-- begin generated conventions: python -m s2sgrad.rules.doc -->"
END_CONVENTIONS = "<!-- end generated conventions -->"


@dataclass(frozen=True)
class Convention:
    """The gradient a rule gives at a point where the derivative is not defined, or where the
    textbook formula divides by zero, and what PyTorch gives there."""

    key: str  # names the examples that check it (tests/rules/test_soundness_rules.py)
    primitives: str
    point: str
    gradient: str
    torch: str


CONVENTIONS = (
    Convention("std-constant", "`np.std`, `ndarray.std`",
               "all entries of a slice equal (a size-1 axis, a constant array)", "0", "0"),
    Convention("var-no-dof", "`np.var`, `np.std` and their methods",
               "`ddof` equal to the slice's length (NumPy's value is nan)",
               "nan, without a division error", "nan"),
    Convention("pow-zero-exponent", "`**`, `np.power`, `np.float_power`, `pow`, `math.pow`",
               "exponent 0, any base (0 included)", "0 to the base", "0"),
    Convention("pow-zero-base", "`**`, `np.power`, `np.float_power`, `pow`, `math.pow`",
               "base 0, exponent b > 0", "b * 0 ** (b - 1) to the base: 1 for b = 1, 0 for "
               "b > 1, inf for 0 < b < 1; 0 to the exponent", "the same"),
    Convention("pow-zero-base-negative", "`**`, `np.power`, `np.float_power`",
               "base 0, exponent b < 0 (the value is inf)",
               "-inf to the base (b = -1); nan to the exponent", "-inf to the exponent"),
    Convention("arctan2-origin", "`np.arctan2`, `math.atan2`", "y = x = 0",
               "0 to both", "0 to both"),
    Convention("hypot-origin", "`np.hypot`", "both arguments 0", "nan", "nan"),
    Convention("sqrt-zero", "`np.sqrt`, `np.cbrt`, `x ** 0.5`", "0", "inf", "inf"),
    Convention("norm-zero", "`np.linalg.norm`", "x = 0", "0", "0"),
    Convention("abs-zero", "`np.abs`, `np.fabs`, `abs`, `math.fabs`", "0", "0", "0"),
    Convention("maximum-tie", "`np.maximum`, `np.minimum`", "equal operands",
               "half to each", "half to each"),
    Convention("builtin-max-tie", "`max`, `min` of two numbers", "equal arguments",
               "all to the first, which Python returns", "(no counterpart)"),
    Convention("extremum-tie", "`np.max`, `np.min`, `np.amax`, `np.amin` and the methods",
               "several entries equal to the extremum", "shared evenly among them",
               "shared evenly"),
    Convention("clip-bound", "`np.clip`, `ndarray.clip`", "the input on a bound",
               "to the input (bounds included); elsewhere to the bound that replaced it",
               "to the input"),
    Convention("prod-zeros", "`np.prod`, `ndarray.prod`", "zeros in the input",
               "the product of the other entries (0 with two zeros or more)", "the same"),
    Convention("empty-reduction", "`np.mean`, `np.var`, `np.std`, `np.sum`, `np.prod` and "
               "the methods", "a reduction over an empty axis (NumPy's mean is nan)",
               "an empty array shaped like the input, without a division error",
               "an empty array"),
)

NOTES = (
    ("`np.where(c, x, y)`: `c` gets no gradient; the unselected side gets exact zeros, even "
    "where the cotangent is infinite."),
    ("`np.clip(a, lo, hi)` with `lo > hi`: NumPy returns `hi` everywhere; the rule is not "
    "meant for that case."),
    ("`a ** b` where `a < 0`: the derivative in `b` is nan, as the real logarithm of `a` does "
    "not exist."),
    ("Indexing (`x[i]`, slices, boolean masks, integer arrays) sends each output's cotangent "
    "back to the entry it came from; an entry picked several times (`x[[0, 0]]`) receives the "
    "sum."),
    ("`math.*` rules compute with Python floats and raise like `math` does where the derivative "
    "is infinite or undefined (`math.sqrt` at 0 and `math.hypot` at the origin raise "
    "`ZeroDivisionError`); NumPy rules return `inf`/`nan` with NumPy's warnings."),
    ("Complex values: the rules marked in the column Complex hold for complex operands, in "
     "JAX's and HIPS autograd's convention (the cotangent of `z = x + iy` is `dL/dx - i "
     "dL/dy`, and a real-valued function's gradient with respect to a complex input is that "
     "cotangent); any other rule is refused where an operand or the result is complex. A real "
     "operand of an operation on complex values gets the real part of its contribution."),
    ("Piecewise-constant functions (`floor`, `round`, `sign`, `//`, comparisons) and "
    "integer-valued ones (`argmax`, `len`, shapes) carry no gradient."),
)


def conventions() -> str:
    out = [("Where a derivative is not defined, or its formula would divide by zero, the rules "
           "give PyTorch's value wherever PyTorch defines one:"), "",
           "| Primitives | At | Gradient | PyTorch |", "|---|---|---|---|"]
    out += [f"| {c.primitives} | {c.point} | {c.gradient} | {c.torch} |" for c in CONVENTIONS]
    out += [""] + [f"- {note}" for note in NOTES]
    return "\n".join(out)
MODULES = ("operators", "elementwise", "scalars", "reductions", "shapes", "arrays", "products",
           "linalg", "fourier", "decompositions", "scipy_linalg", "special", "stats",
           "distributions", "signal", "integrate",
           "creators", "containers")
# what the table says of a rule's complex= (rules/registry.py)
COMPLEX = {False: "", True: "yes", "real": "yes, real result", "complex": "yes, complex result"}
DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def library_rules() -> list[Rule]:
    return list(registry.library_rules())


def name(primitive) -> str:
    """``primitive_name``, but with the submodule NumPy users write (``numpy.linalg.inv``)."""
    module = getattr(primitive, "__module__", None) or ""
    for package in ("scipy.special", "scipy.linalg"):  # their ufuncs have no __module__
        public = sys.modules.get(package)
        if public is not None and getattr(public, getattr(primitive, "__name__", ""),
                                          None) is primitive:
            return f"{package}.{primitive.__name__}"
    if module.startswith("numpy.linalg"):
        return f"numpy.linalg.{primitive.__name__}"
    if module == "numpy.random" and getattr(primitive, "__self__", None) is not None:
        return f"numpy.random.{primitive.__name__}"  # a method of the global RandomState
    if module == "s2sgrad.runtime.containers":  # what the analysis makes of an operator
        return {"concat": "tuple/list +", "repeat": "tuple/list *"}[primitive.__name__]
    return primitive_name(primitive)


def _signature(template) -> str:
    return f"{template.__name__}{inspect.signature(template)}"


def tables() -> str:
    out = []
    every = library_rules()
    for module in MODULES:
        by_template: dict = {}
        for rule in every:
            if rule.template.__module__ == f"{__package__}.{module}":
                by_template.setdefault(rule.template, []).append(rule)
        if not by_template:
            continue
        summary = sys.modules[f"{__package__}.{module}"].__doc__.split("\n\n")[0]
        out += [f"### `{module}`", "", " ".join(summary.split()), "",
                "| Primitives | Rule | Shape | Complex |", "|---|---|---|---|"]
        for template, group in by_template.items():
            names = ", ".join(f"`{name(r.primitive)}`" for r in group)
            shape = group[0].shape or "unknown"
            if group[0].each is not None:  # inlined once per argument of *args
                shape += f", one contribution per *{group[0].star}"
            complex_ = COMPLEX[group[0].complex]
            out.append(f"| {names} | `{_signature(template)}` | {shape} | {complex_} |")
        out.append("")
    out += ["### Methods of ufuncs", "",
            ("Each takes the rules of the function it computes, given the method's arguments "
             "by name:"), ""]
    for method, primitive, defaults in registry.same_methods():
        given = ", ".join(f"{k}={v!r}" for k, v in defaults.items())
        out.append(f"- `{method}`: `{name(primitive)}`" + (f" with `{given}`" if given else ""))
    out += ["", "### Non-differentiable", ""]
    for why, primitives in nondiff.GROUPS:
        out.append(f"- {why[0].upper() + why[1:]}: " + ", ".join(f"`{name(p)}`" for p in primitives))
    return "\n".join(out)


def update(text: str) -> str:
    """``text`` with the parts between the markers replaced by the current ones."""
    for begin, end, generate in ((BEGIN_CONVENTIONS, END_CONVENTIONS, conventions),
                                 (BEGIN, END, tables)):
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{begin}\n\n{generate()}\n\n{end}{tail}"
    return text


def main() -> None:
    DOC.write_text(update(DOC.read_text()))


if __name__ == "__main__":
    main()
