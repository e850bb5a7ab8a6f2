"""Pass 1, parse: a live Python function -> its gast FunctionDef and the namespace it sees.

Before: a function object (plain function, method, or one wrapped by ``@grad``).
After:  ``Parsed``: the FunctionDef with decorators removed and line/column numbers pointing
        into the user's real file; the parameter names; the live namespace (closure cells,
        globals, builtins) used to resolve what a call refers to at transform time.

    def f(x):                 FunctionDef(name='f', args=[x], body=[Return(...)])
        return np.sin(x)      resolve(Attribute(np, 'sin')) -> <ufunc 'sin'>
"""

from __future__ import annotations

import builtins
import inspect
import linecache
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast

from . import syntax
from .errors import TransformError

MISSING = object()


@dataclass(frozen=True)
class Parsed:
    fn: Callable
    node: gast.FunctionDef
    filename: str
    params: tuple[str, ...]
    local_names: frozenset[str]  # parameters and every name the body assigns
    closure: dict[str, Any]  # free variable -> cell
    globals: dict[str, Any]

    @property
    def name(self) -> str:
        return self.node.name

    def lookup(self, ident: str) -> Any:
        """The value a non-local name has right now: closure, then globals, then builtins."""
        if ident in self.local_names:
            return MISSING
        cell = self.closure.get(ident)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:  # an empty cell: the closure variable is not bound yet
                return MISSING
        if ident in self.globals:
            return self.globals[ident]
        return getattr(builtins, ident, MISSING)

    def resolve(self, node: gast.expr) -> Any:
        """The object a Name/Attribute chain of non-local names refers to, or MISSING."""
        path = syntax.dotted_name(node)
        if path is None:
            return MISSING
        head, *rest = path.split(".")
        value = self.lookup(head)
        for attr in rest:
            if value is MISSING:
                break
            value = getattr(value, attr, MISSING)
        return value

    def error(self, message: str, node: Any, hint: str = "") -> TransformError:
        return TransformError(message, self.filename, getattr(node, "lineno", 0) or 0,
                              getattr(node, "col_offset", 0) or 0, hint)


def unwrap(fn: Any) -> Callable:
    """The plain Python function behind a ``@grad`` Function, a bound method, or a wrapper."""
    while True:
        if hasattr(fn, "fn") and callable(fn.fn) and hasattr(fn, "compiled_for"):
            fn = fn.fn
        elif inspect.ismethod(fn):
            fn = fn.__func__
        else:
            return fn


def parse(fn: Callable) -> Parsed:
    fn = unwrap(fn)
    what = getattr(fn, "__qualname__", repr(fn))
    if not inspect.isfunction(fn):
        raise TransformError(
            f"cannot differentiate {what!s}: it is not a Python function with source "
            f"(it is {type(fn).__name__})",
            hint="Wrap it in a Python function, or register a derivative rule for it with "
                 "@s2sgrad.vjp_rule.")
    if fn.__name__ == "<lambda>":
        raise TransformError(
            f"cannot differentiate the lambda {what}: lambdas are not supported yet",
            inspect.getsourcefile(fn) or "<unknown>", fn.__code__.co_firstlineno, 0,
            hint="Define it with def in a .py file.")
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise TransformError(
            f"cannot read the source of {what}: {exc}",
            fn.__code__.co_filename, fn.__code__.co_firstlineno, 0,
            hint="Functions typed at the interactive prompt or built with exec() have no "
                 "source to read; define the function in a .py file (or a notebook cell).",
        ) from None
    filename = fn.__code__.co_filename
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != source else 0
    tree = gast.parse(dedented)
    node = tree.body[0]
    if isinstance(node, gast.AsyncFunctionDef):
        raise TransformError(f"cannot differentiate {what}: async functions are not supported",
                             filename, node.lineno + first - 1, node.col_offset + indent,
                             hint="Differentiate a synchronous function.")
    if not isinstance(node, gast.FunctionDef):
        raise TransformError(f"cannot differentiate {what}: expected a def", filename, first, 0)
    for child in gast.walk(node):
        if getattr(child, "lineno", None) is not None:
            child.lineno += first - 1
            child.col_offset += indent
        if getattr(child, "end_lineno", None) is not None:
            child.end_lineno += first - 1
            child.end_col_offset += indent
    node.decorator_list = []
    if filename not in linecache.cache and not linecache.getline(filename, first):
        linecache.cache[filename] = (len(source), None, lines, filename)

    params = tuple(a.id for a in node.args.posonlyargs + node.args.args)
    params += tuple(a.id for a in node.args.kwonlyargs)
    if node.args.vararg is not None:
        params += (node.args.vararg.id,)
    if node.args.kwarg is not None:
        params += (node.args.kwarg.id,)
    local_names = frozenset(params) | frozenset(
        n.id for n in gast.walk(node)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    return Parsed(fn, node, filename, params, local_names, closure, fn.__globals__)
