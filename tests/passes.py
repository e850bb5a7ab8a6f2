"""A function through every pass of the compiler, rendered as text for the per-pass golden
files: what fence accepted, the ANF of normalize, what analyze found, aliasing's memory
groups, reverse's forward and adjoint, optimize's, and the source codegen renders.

Only what each pass returns is read, as the pipeline chains them (``reverse_passes``, whose
observer sees each result). Each section is rendered as soon as its pass returns, since
later passes may rewrite the trees they receive. The text is deterministic: objects are named by module and qualified name,
never by identity, and collections without an order of their own are sorted.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import astor
import gast
import numpy as np

from s2sgrad import syntax
from s2sgrad.compiler.aliasing import Aliasing
from s2sgrad.compiler.analyze import Analysis, abstract_of
from s2sgrad.compiler.optimize import Optimized
from s2sgrad.compiler.pipeline import reverse_passes
from s2sgrad.compiler.reverse import Reversed


def through_passes(fn: Callable, wrt: Sequence[int], args: Sequence[Any]
                   ) -> list[tuple[str, str]]:
    """(pass, what it gave) for every pass, for ``fn`` called with ``args`` and
    differentiated at positions ``wrt``."""
    bound = inspect.signature(fn).bind(*args)
    bound.apply_defaults()
    signature = {name: abstract_of(value) for name, value in bound.arguments.items()}
    params = list(bound.arguments)
    names = tuple(params[i] for i in wrt)
    render = {"fence": lambda parsed: _source(parsed.node),
              "normalize": lambda normalized: _source(normalized.node),
              "analyze": _analysis, "reverse": lambda rev: _reversed(rev, params),
              "optimize": lambda optimized: _optimized(optimized, params),
              "codegen": lambda generated: generated.forward_source + "\n"
              + generated.adjoint_source}
    sections = []
    analysis = None

    def observe(pass_name, result):
        nonlocal analysis
        if pass_name == "analyze":
            analysis = result
        if pass_name == "aliasing":
            sections.append(("aliasing", _aliasing(result, analysis)))
        elif pass_name in render:
            sections.append((pass_name, render[pass_name](result)))

    reverse_passes(fn, names, signature, observe=observe)
    return sections


def as_text(sections: list[tuple[str, str]]) -> str:
    return "\n".join(f"== {title} ==\n{body.rstrip()}\n" for title, body in sections)


# --- source -------------------------------------------------------------------------------


def _source(node: gast.AST) -> str:
    return astor.to_source(syntax.to_python_ast(node)).rstrip()


def _function(name: str, params: list[str], body: list[gast.stmt]) -> str:
    return _source(syntax.function(name, params, body))


def _header(stmt: gast.stmt) -> str:
    """The line that opens a compound statement, or the whole of a simple one."""
    if isinstance(stmt, gast.If):
        return f"if {_source(stmt.test)}:"
    if isinstance(stmt, gast.For):
        return f"for {_source(stmt.target)} in {_source(stmt.iter)}:"
    if isinstance(stmt, gast.While):
        return f"while {_source(stmt.test)}:"
    return _source(stmt)


def _statements(body: list[gast.stmt], depth: int = 0
                ) -> Iterator[tuple[str, gast.stmt | None]]:
    """Every statement of ``body`` in program order, with its indented opening line (and
    the ``else:`` lines, with no statement)."""
    indent = "    " * depth
    for stmt in body:
        yield indent + _header(stmt), stmt
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            yield from _statements(stmt.body, depth + 1)
            if stmt.orelse:
                yield indent + "else:", None
                yield from _statements(stmt.orelse, depth + 1)


def _listed(rows: list[str]) -> list[str]:
    return [f"    {row}" for row in rows] or ["    none"]


# --- values -------------------------------------------------------------------------------


def _show(value: Any) -> str:
    """``value`` as text that names what it is, never where it is in memory."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, gast.Constant):
        return repr(value.value)
    if isinstance(value, gast.AST):
        return _source(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_show, value)) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (list, frozenset, set)):
        items = list(value) if isinstance(value, list) else sorted(value, key=_show)
        return "[" + ", ".join(map(_show, items)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_show(k)}: {_show(v)}" for k, v in value.items()) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fields(value)
    if isinstance(value, type):  # by name only: where a class is defined is not the point
        return value.__qualname__
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, np.dtype):
        return f"dtype {value}"
    if isinstance(value, np.ufunc):
        return f"numpy.{value.__name__}"
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}, {value.dtype}"
    qualname = getattr(value, "__qualname__", None)
    if isinstance(qualname, str):
        module = getattr(value, "__module__", None)
        return f"{module}.{qualname}" if module else qualname
    name = getattr(value, "name", None)
    return type(value).__name__ + (f" {name}" if isinstance(name, str) else "")


def _fields(value: Any) -> str:
    """A dataclass instance: its class and the fields that differ from their defaults."""
    shown = []
    for f in dataclasses.fields(value):
        v = getattr(value, f.name)
        if f.default is not dataclasses.MISSING and _same(v, f.default):
            continue
        if f.default_factory is not dataclasses.MISSING and _same(v, f.default_factory()):
            continue
        shown.append(f"{f.name}={_show(v)}")
    return f"{type(value).__name__}({', '.join(shown)})"


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):  # arrays and other values without a plain ==
        return False


# --- analyze ------------------------------------------------------------------------------


def _operation(op: Any) -> str:
    """What analyze says a statement does: its kind, what it calls, with what."""
    what = op.what or (op.rule.name if op.rule is not None else "")
    text = op.kind + (f" {what}" if what else "")
    if op.bindings:
        text += "(" + ", ".join(f"{k}={_show(v)}" for k, v in op.bindings.items()) + ")"
    if op.diff_params:
        text += f" differentiable in {', '.join(op.diff_params)}"
    if op.refusal is not None:
        text += f" refused: {op.refusal[0]}"
    return text


def _analysis(analysis: Analysis) -> str:
    lines = [f"wrt: {', '.join(analysis.wrt)}", f"result: {_show(analysis.result)}",
             f"specialised on string values: {analysis.by_string_value}", "", "statements:"]
    rows = []
    for text, stmt in _statements(analysis.body):
        op = analysis.ops.get(stmt) if stmt is not None else None
        if op is None:
            rows.append((text, ""))
            continue
        active = op.target is not None and op.target in analysis.active
        rows.append((text, _operation(op) + ("  [active]" if active else "")))
    width = max(len(text) for text, _ in rows)
    lines += [f"    {text.ljust(width)}  {what}".rstrip() for text, what in rows]
    lines += ["", "values:"]
    width = max(map(len, analysis.values))
    for name in sorted(analysis.values):
        active = "  [active]" if name in analysis.active else ""
        lines.append(f"    {name.ljust(width)}  {_show(analysis.values[name])}{active}")
    classes: dict[int, list[str]] = {}
    for name, cls in analysis.shape_class.items():
        classes.setdefault(cls, []).append(name)
    lines += ["", "same shape:"]
    lines += _listed(sorted(", ".join(sorted(names)) for names in classes.values()
                            if len(names) > 1))
    return "\n".join(lines)



# --- aliasing -----------------------------------------------------------------------------


def _aliasing(aliases: Aliasing, analysis: Analysis) -> str:
    def root(name: str) -> str:
        while aliases.group.get(name, name) != name:
            name = aliases.group[name]
        return name

    members: dict[str, list[str]] = {}
    for name in set(aliases.group) | set(aliases.group.values()):
        members.setdefault(root(name), []).append(name)
    groups = sorted(sorted(names) for names in members.values() if len(names) > 1)
    updates = sorted((position, target, stmt) for target, found in aliases.writes.items()
                     for position, stmt in found)
    lines = ["may share memory:"] + _listed([", ".join(names) for names in groups])
    lines += ["updated in place:"] + _listed([f"{target}: {_source(stmt)}"
                                              for _, target, stmt in updates])
    lines.append(f"put into a container: {_show(frozenset(aliases.slots.contained))}")
    lines.append("the result shares memory with: "
                 f"{_show(aliases.result_aliases(analysis.result))}")
    return "\n".join(lines)


# --- reverse and optimize -----------------------------------------------------------------


def _bindings(bindings: dict[str, Any]) -> list[str]:
    return [f"    {name}: {_show(bindings[name])}" for name in sorted(bindings)]


def _reversed(rev: Reversed, params: list[str]) -> str:
    name = rev.analysis.normalized.parsed.name
    lines = [_function(f"{name}_forward", params, rev.forward),
             f"    # returns {_show(rev.result)}", "",
             _function(f"{name}_adjoint", [rev.saved, rev.seed], rev.adjoint), "",
             f"cotangents: {_show(dict(sorted(rev.bar_of.items())))}",
             f"kept only for a shape: {_show(rev.shape_saves)}",
             f"copies taken for the adjoint: {_show(dict(sorted(rev.snapshot_of.items())))}",
             f"the result shares memory with: {_show(rev.result_aliases)}",
             "names the code reads:"] + _bindings(rev.bindings)
    return "\n".join(lines)


def _optimized(opt: Optimized, params: list[str]) -> str:
    name = opt.reversed.analysis.normalized.parsed.name
    return "\n".join([
        _function(f"{name}_forward", params, opt.forward), "",
        _function(f"{name}_adjoint", [opt.reversed.saved, opt.reversed.seed], opt.adjoint), "",
        f"saved: {_show(opt.saved)}",
        f"saved values that may share outside memory: {_show(opt.external)}"])
