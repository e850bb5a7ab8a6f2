"""Functions written as source text at run time, in one file that linecache serves.

The compiler reads a function's source, so a function made at run time needs source it can
read: its text goes into a fake file, ``<s2sgrad ops>``, registered in ``linecache`` (and
shown by tracebacks). The eager operations on Tensors are written here (``autograd/ops.py``),
and so are the forwarding functions through which a function with a registered rule is
differentiated by that rule.

Part of the compiler layer; imports nothing of s2sgrad.
"""

from __future__ import annotations

import inspect
import keyword
import linecache
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

FILENAME = "<s2sgrad ops>"
_lines: list[str] = []
_globals: dict[str, Any] = {"np": np, "__name__": __name__}
_lock = threading.Lock()


def define(name: str, params: list[str], expression: str, body: tuple[str, ...] = (),
           bindings: dict[str, Any] | None = None) -> Callable:
    """Compile ``def name(params): [body] return expression`` into the file.
    ``bindings`` are the names, besides ``np``, that the source reads as globals: the
    function gets its own namespace holding them."""
    lines = "".join(f"    {line}\n" for line in body)
    source = f"def {name}({', '.join(params)}):\n{lines}    return {expression}\n"
    with _lock:
        start = len(_lines)
        _lines.extend(source.splitlines(True))
        register()
    namespace: dict[str, Any] = {}
    code = compile("\n" * start + source, FILENAME, "exec")
    exec(code, {**_globals, **(bindings or {})}, namespace)  # noqa: S102 (our own source)
    return namespace[name]


def source_of(fn: Callable) -> str:
    """The source text of a function defined here."""
    return inspect.getsource(fn)


def identifier(name: Any, default: str) -> str:
    """``name`` if it can name a generated function, else ``default``."""
    if isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name):
        return name
    return default


def register() -> None:
    """Register the file with linecache (mtime None: checkcache leaves it alone)."""
    lines = list(_lines)
    linecache.cache[FILENAME] = (sum(map(len, lines)), None, lines, FILENAME)


def parameters(signature: inspect.Signature, bindings: dict[str, Any]
               ) -> tuple[list[str], list[str]]:
    """The parameter list of a ``def`` with ``signature``'s parameters (their defaults bound
    as globals in ``bindings``), and the arguments of a call that passes each on."""
    params: list[str] = []
    call: list[str] = []
    previous = None
    for p in signature.parameters.values():
        if identifier(p.name, "") != p.name:
            raise TypeError(f"{p.name!r} cannot name a parameter")
        if previous == p.POSITIONAL_ONLY and p.kind != previous:
            params.append("/")
        if p.kind == p.KEYWORD_ONLY and previous not in (p.KEYWORD_ONLY, p.VAR_POSITIONAL):
            params.append("*")
        previous = p.kind
        text = p.name
        if p.default is not p.empty:
            default = f"default{len(bindings)}_"
            bindings[default] = p.default  # defaults are evaluated in the global namespace
            text += f"={default}"
        if p.kind == p.VAR_POSITIONAL:
            params.append("*" + p.name)
            call.append("*" + p.name)
        elif p.kind == p.VAR_KEYWORD:
            params.append("**" + p.name)
            call.append("**" + p.name)
        elif p.kind == p.KEYWORD_ONLY:
            params.append(text)
            call.append(f"{p.name}={p.name}")
        else:
            params.append(text)
            call.append(p.name)
    if previous == inspect.Parameter.POSITIONAL_ONLY:
        params.append("/")
    return params, call


def forwarding(primitive: Any, signature: inspect.Signature) -> Callable:
    """``def f(x, k=<default>): return <primitive>(x, k)``, with ``signature``'s parameters:
    a function whose one operation is a call of ``primitive``. The compiler differentiates
    that call with the rule registered for ``primitive``, as it does a call inside any
    compiled function; so the transforms of a function that has a rule use the rule."""
    if FILENAME not in linecache.cache:
        register()  # the compiler reads the source from linecache
    names = set(signature.parameters)
    callee = "primitive_"
    while callee in names:  # a parameter would hide the global
        callee += "_"
    bindings: dict[str, Any] = {callee: primitive}
    params, call = parameters(signature, bindings)
    name = identifier(getattr(primitive, "__name__", None), "function")
    return define(name, params, f"{callee}({', '.join(call)})", (), bindings)
