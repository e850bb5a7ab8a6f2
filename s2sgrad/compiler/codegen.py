"""Pass 7, codegen: render the forward and adjoint as Python source and compile them.

Before: ``Optimized`` bodies and the objects they name.
After:  ``Generated``: the two functions' source (one statement per line, the user's names,
        ``# adjoint of: <line>`` comments) and the compiled function objects. The source is
        registered with linecache under its own file name, so a traceback inside generated
        code shows the generated line; where each line and function comes from is registered
        too (``errors.register_origins``), so an exception raised in it names the user's
        line. The functions read the user's module globals live (like the original function)
        and reach the rule helpers and compiled callees through closure cells, so nothing is
        injected into the user's module.

    def loss_backward(saved, out_bar):
        x, h = saved
        # adjoint of: h = np.tanh(x @ w)
        _t1_bar = h_bar * (1.0 - h * h)
        ...
"""

from __future__ import annotations

import linecache
import os
import re
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import astor
import gast

from .. import syntax
from ..errors import register_origins
from . import sourcefile, statements
from .optimize import Optimized
from .parse import file_tree
from .tangent import Tangents

_MARK = "__s2sgrad_comment_{}__"


@dataclass(frozen=True)
class Generated:
    forward: Callable
    backward: Callable
    forward_source: str
    adjoint_source: str
    filename: str


def codegen(opt: Optimized) -> Generated:
    rev = opt.reversed
    parsed = rev.analysis.normalized.parsed
    name = parsed.name
    comments = _Comments(parsed)

    forward_args = syntax.clone(parsed.node.args)
    forward_args.defaults = []
    forward_args.kw_defaults = [None] * len(forward_args.kwonlyargs)
    forward = syntax.function(f"{name}_forward", [], comments.commented(opt.forward, "# "))
    forward.args = forward_args

    unpack = []
    if opt.saved:
        unpack = [syntax.unpack(list(opt.saved), syntax.name(rev.saved))]
    adjoint = syntax.function(f"{name}_backward", [rev.saved, rev.seed],
                              unpack + comments.commented(opt.adjoint, "# adjoint of: "))

    forward_src = comments.render(forward)
    adjoint_src = comments.render(adjoint)
    fwd, bwd = _compile(parsed, rev.bindings, [forward_src, adjoint_src],
                        [(f"{name}_forward", parsed.fn.__defaults__, parsed.fn.__kwdefaults__),
                         (f"{name}_backward", None, None)], "",
                        [comments.places(forward), comments.places(adjoint)],
                        ("forward", "adjoint"))
    return Generated(fwd, bwd, forward_src, adjoint_src, fwd.__code__.co_filename)


@dataclass(frozen=True)
class GeneratedTangent:
    jvp: Callable
    source: str
    filename: str


def codegen_tangent(tan: Tangents) -> GeneratedTangent:
    """The tangent function ``f_jvp(*params, *, x_dot...)`` (see tangent.py)."""
    parsed = tan.analysis.normalized.parsed
    name = f"{parsed.name}_jvp"
    comments = _Comments(parsed)
    fn = syntax.function(name, [], comments.commented(tan.body, "# "))
    args = syntax.clone(parsed.node.args)
    args.defaults = []
    args.kw_defaults = [None] * len(args.kwonlyargs)
    params = tan.tangent_params + ((tan.batch,) if tan.batch else ())
    args.kwonlyargs = args.kwonlyargs + [syntax.param(p) for p in params]
    args.kw_defaults = args.kw_defaults + [None] * len(params)
    fn.args = args
    source = comments.render(fn)
    (jvp,) = _compile(parsed, tan.bindings, [source],
                      [(name, parsed.fn.__defaults__, parsed.fn.__kwdefaults__)], "jvp",
                      [comments.places(fn)], ("tangent",))
    return GeneratedTangent(jvp, source, jvp.__code__.co_filename)


def as_function(parsed) -> Callable:
    """The parsed function itself, compiled again from its (transformed) tree: the user's
    function with the values ``parse`` lifted (``self.W``) read from keyword-only
    parameters instead, so that a caller can pass them, and differentiate them."""
    comments = _Comments(parsed)
    fn = syntax.replace(parsed.node, body=comments.commented(parsed.node.body, "# "),
                        decorator_list=[])
    source = comments.render(fn)
    (made,) = _compile(parsed, {}, [source],
                       [(parsed.node.name, parsed.fn.__defaults__, parsed.fn.__kwdefaults__)],
                       "lifted", [comments.places(fn)])
    return made


class _Comments:
    """``# <line>`` comments before the statements of each source line of the user's."""

    def __init__(self, parsed):
        self.spans = _statement_spans(parsed.node)
        self.file_spans: list[tuple] | None = None
        self.lines = linecache.getlines(parsed.filename)
        self.filename = parsed.filename
        self.comments: list[str] = []
        self.origins: list[tuple[str, int, int]] = []  # per comment: the statement's place

    def spans_at(self, lineno: int) -> list[tuple]:
        """The statements of the function at ``lineno``; for a line outside it (a method of
        an object the function builds, inlined), those of its file there."""
        found = [s for s in self.spans if s[0] <= lineno <= s[1]]
        if found or not lineno:
            return found
        if self.file_spans is None:
            tree = file_tree(self.filename)
            self.file_spans = _statement_spans(tree) if tree is not None else []
        return [s for s in self.file_spans if s[0] <= lineno <= s[1]]

    def text_of(self, lineno: int) -> str:
        """The source of the innermost statement (or compound header) at ``lineno``,
        without a trailing comment."""
        around = [(last - first, first, last, start, end)
                  for first, last, start, end in self.spans_at(lineno)]
        if not around:
            return ""
        _, first, last, start, end = min(around)
        text = self.lines[first - 1:last]
        if not text:
            return ""
        if end is not None:
            text[-1] = text[-1][:end] if len(text) > 1 else text[-1][start:end]
        if len(text) > 1:
            text[0] = text[0][start:]
        return " ".join(line.strip() for line in text)

    def commented(self, stmts: list[gast.stmt], prefix: str) -> list[gast.stmt]:
        out, last = [], None
        for stmt in stmts:
            # a forward statement the adjoint makes again (optimize: a loop that pushes
            # nothing) is labelled as such
            label = AGAIN if getattr(stmt, "made_again", False) else prefix
            origin = self.text_of(getattr(stmt, "lineno", 0) or 0)
            if origin and (label, origin) != last and not isinstance(stmt, gast.Return):
                self.comments.append(label + origin)
                self.origins.append(self.place_of(stmt.lineno))
                out.append(syntax.expr_stmt(syntax.name(_MARK.format(len(self.comments) - 1))))
            last = (label, origin) if not isinstance(stmt, gast.Return) else last
            out.append(statements.map_blocks(stmt, lambda block: self.commented(block, prefix),
                                             "codegen", generated=True))
        return out

    def place_of(self, lineno: int) -> tuple[str, int, int]:
        """The file, line and column of the innermost statement at ``lineno``."""
        around = [(last - first, first, start) for first, last, start, _ in
                  self.spans_at(lineno)]
        if not around:
            return self.filename, lineno, 0
        _, first, start = min(around)
        return self.filename, first, start

    def render(self, fn: gast.FunctionDef) -> str:
        return _render(fn, self.comments)

    def places(self, fn: gast.FunctionDef) -> list[tuple[str, int, int] | None]:
        """For each line of ``render(fn)``, the place of the user's statement it comes from
        (the one its comment names)."""
        out, current = [], None
        for line in astor.to_source(syntax.to_python_ast(fn)).rstrip().splitlines():
            found = re.match(r"^\s*__s2sgrad_comment_(\d+)__$", line)
            if found:
                current = self.origins[int(found.group(1))]
            out.append(current)
        return out


AGAIN = "# computed again: "

_sources: dict[str, str] = {}  # generated file name -> its text


def _unique(filename: str, text: str) -> str:
    """``filename``, or a numbered variant of it when another text has the name (another
    specialisation of the same function): the compiler reads generated source back by its
    file name, for higher order, so two texts never share one."""
    name, n = filename, 1
    while _sources.get(name, text) != text:
        n += 1
        name = f"{filename[:-1]} #{n}>"
    _sources[name] = text
    return name


def _filename(parsed, kind: str = "") -> str:
    where = f"{os.path.basename(parsed.filename)}:{parsed.node.lineno}"
    label = f"{parsed.fn.__qualname__} {kind}".rstrip()
    return f"<s2sgrad {label} ({where})>"


def _compile(parsed, bindings: dict[str, Any], sources: list[str], functions: list[tuple],
             kind: str = "", places: list[list] | None = None, parts: tuple[str, ...] = ()
             ) -> list[Callable]:
    """Compile the generated functions under a file name of their own (registered with
    linecache), reading the user's globals live and ``bindings`` and the function's closure
    through cells. ``functions``: (name, defaults, keyword defaults) of each; ``places``:
    per source, where each of its lines comes from, and ``parts``, what each function is of
    the user's (forward, adjoint, tangent; by default the function itself): see
    ``errors.register_origins``."""
    freevars = list(parsed.closure)
    outer_params = list(bindings) + [v for v in freevars if v not in bindings]
    maker = f"def __s2sgrad_make__({', '.join(outer_params)}):\n"
    maker += textwrap.indent("\n".join(sources), "    ")
    maker += f"\n    return {', '.join(name for name, _, _ in functions)},\n"
    label = _filename(parsed, kind)
    if parsed.filename == sourcefile.FILENAME:  # written at run time, at new lines each
        # time (a seeded gradient per function): the same text is the same file
        label = f"<s2sgrad {parsed.fn.__qualname__} {kind}".rstrip() + f" ({parsed.filename})>"
    filename = _unique(label, maker)
    linecache.cache[filename] = (len(maker), None, maker.splitlines(True), filename)
    if places:
        lines = maker.splitlines()
        origins, starts = {}, []
        # the def's own name (a decorator's wrapper takes the name of what it wraps)
        qualname = getattr(getattr(parsed.fn, "__code__", None), "co_qualname",
                           parsed.fn.__qualname__)
        for (name, _, _), where, part in zip(functions, places, parts or ("",) * len(places),
                                             strict=True):
            first = next(k for k, line in enumerate(lines)
                         if line.startswith(f"    def {name}("))
            starts.append((first + 1, qualname, part))
            origins.update({first + 1 + i: place for i, place in enumerate(where) if place})
            # the def line stands for the user's function (an error on a node the compiler
            # made, which has no line of its own, is reported there)
            origins.setdefault(first + 1, (parsed.filename, parsed.node.lineno,
                                           parsed.node.col_offset))
        register_origins(filename, origins, starts)

    code = compile(maker, filename, "exec")
    make_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = {c.co_name: c for c in make_code.co_consts if isinstance(c, types.CodeType)}
    cells = {k: types.CellType(v) for k, v in bindings.items()}
    cells.update({k: v for k, v in parsed.closure.items() if k not in bindings})
    return [made(inner[code_name], parsed.fn.__globals__, argdefs, kwdefaults,
                 tuple(cells[v] for v in inner[code_name].co_freevars))
            for code_name, argdefs, kwdefaults in functions]


def made(code: types.CodeType, globals_: dict, argdefs: tuple | None, kwdefaults: dict | None,
         closure: tuple) -> Callable:
    """A generated function from its code object: what ``_compile`` builds, and what a
    closure of the same code gets again over its own cells (pipeline's shared compiles)."""
    fn = types.FunctionType(code, globals_, code.co_name, argdefs, closure)
    if kwdefaults:
        fn.__kwdefaults__ = dict(kwdefaults)
    return fn


def _statement_spans(fn: gast.FunctionDef | gast.Module) -> list[tuple]:
    """(first line, last line, first column, end column) of every statement; for
    if/for/while/with/try only the header (whose end column is not known: the whole line)."""
    spans = []
    # the user's code, as parsed: statements (a loop's else, a nested def) that normalize
    # desugars, which syntax's walk knows
    for stmt in syntax.in_order(fn.body):
        first = stmt.lineno
        last = getattr(stmt, "end_lineno", None) or first
        end = getattr(stmt, "end_col_offset", None)
        if isinstance(stmt, (gast.If, gast.For, gast.While, gast.With, gast.Try)) and \
                stmt.body:
            last = max(first, stmt.body[0].lineno - 1)
            end = None
        spans.append((first, last, stmt.col_offset, end))
    return spans


def _render(fn: gast.FunctionDef, comments: list[str]) -> str:
    source = astor.to_source(syntax.to_python_ast(fn))

    def replace(match: re.Match) -> str:
        return match.group(1) + comments[int(match.group(2))]

    source = re.sub(r"^(\s*)__s2sgrad_comment_(\d+)__$", replace, source, flags=re.MULTILINE)
    return source.rstrip() + "\n"
