"""The tables of docs/rules.md, generated from the registry so that they cannot drift.

``python -m s2sgrad.rules.doc`` rewrites the part of docs/rules.md between the markers; the
test suite fails while the file is stale.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from . import LIBRARY_RULES, nondiff
from .registry import Rule, primitive_name

BEGIN = "<!-- begin generated tables: python -m s2sgrad.rules.doc -->"
END = "<!-- end generated tables -->"
MODULES = ("operators", "elementwise", "scalars", "reductions", "shapes", "linalg", "creators")
DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def library_rules() -> list[Rule]:
    return list(LIBRARY_RULES)


def name(primitive) -> str:
    """``primitive_name``, but with the submodule NumPy users write (``numpy.linalg.inv``)."""
    module = getattr(primitive, "__module__", None) or ""
    if module.startswith("numpy.linalg"):
        return f"numpy.linalg.{primitive.__name__}"
    if module == "numpy.random" and getattr(primitive, "__self__", None) is not None:
        return f"numpy.random.{primitive.__name__}"  # a method of the global RandomState
    return primitive_name(primitive)


def _signature(template) -> str:
    return f"{template.__name__}{inspect.signature(template)}"


def tables() -> str:
    out = []
    for module in MODULES:
        by_template: dict = {}
        for rule in LIBRARY_RULES:
            if rule.template.__module__ == f"{__package__}.{module}":
                by_template.setdefault(rule.template, []).append(rule)
        if not by_template:
            continue
        summary = sys.modules[f"{__package__}.{module}"].__doc__.split("\n\n")[0]
        out += [f"### `{module}`", "", " ".join(summary.split()), "",
                "| Primitives | Rule | Shape |", "|---|---|---|"]
        for template, group in by_template.items():
            names = ", ".join(f"`{name(r.primitive)}`" for r in group)
            shape = group[0].shape or "unknown"
            out.append(f"| {names} | `{_signature(template)}` | {shape} |")
        out.append("")
    out += ["### Non-differentiable", ""]
    for why, primitives in nondiff.GROUPS:
        out.append(f"- {why[0].upper() + why[1:]}: " + ", ".join(f"`{name(p)}`" for p in primitives))
    return "\n".join(out)


def update(text: str) -> str:
    """``text`` with the part between the markers replaced by the current tables."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n\n{tables()}\n\n{END}{tail}"


def main() -> None:
    DOC.write_text(update(DOC.read_text()))


if __name__ == "__main__":
    main()
