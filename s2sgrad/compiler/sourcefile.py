"""Functions written as source text at run time, in one file that linecache serves.

The compiler reads a function's source, so a function made at run time needs source it can
read: its text goes into a fake file, ``<s2sgrad ops>``, registered in ``linecache`` (and
shown by tracebacks). The eager operations on Tensors are written here (``autograd/ops.py``),
and so are the forwarding functions through which a function with a registered rule is
differentiated by that rule.

Part of the compiler layer; imports nothing of s2sgrad.
"""

from __future__ import annotations

import functools
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


def partial_forwarding(partial: functools.partial) -> Callable:
    """For ``functools.partial(func, <held>, k=2.0)``, a function that calls ``func`` as the
    partial does, the arguments it holds read as constants: of a Python function, with the
    parameters left (``def f(x, *, k=<2.0>): return <func>(<held>, x, k=k)``); of a library
    function, with those left without a default by position and any others by name
    (``def f(x, **kwargs): return <func>(<held>, x, k=<2.0>, **kwargs)``)."""
    if FILENAME not in linecache.cache:
        register()
    own = list(inspect.signature(partial).parameters.values())
    named: list[str] = []
    callee = "func_"
    while callee in {p.name for p in own}:
        callee += "_"
    bindings: dict[str, Any] = {callee: partial.func}
    if inspect.isfunction(partial.func):
        kept = own  # (the keywords it holds are defaults there)
    else:
        kept = [p for p in own if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.default is p.empty]
        if len(kept) < len(own):
            kept.append(inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD))
        for key, value in partial.keywords.items():
            named.append(f"{key}=held{len(bindings)}_")
            bindings[f"held{len(bindings)}_"] = value
    params, call = parameters(inspect.Signature(kept), bindings)
    held = []
    for value in partial.args:
        held.append(f"held{len(bindings)}_")
        bindings[held[-1]] = value
    spread = [c for c in call if c.startswith("**")]  # after the keywords it holds
    call = held + [c for c in call if not c.startswith("**")] + named + spread
    name = identifier(getattr(partial.func, "__name__", None), "function")
    return define(name, params, f"{callee}({', '.join(call)})", (), bindings)


def stand_in(fn: Any, required: tuple[str, ...]) -> Callable:
    """A function with source that computes what ``fn`` computes, for a function without
    source: a partial's (``partial_forwarding``), or a library function's that has a rule,
    ``def det(a): return <det>(a)``, its parameters without a default (``required``, where
    ``fn`` has no signature) by position and any others by name (``**kwargs``). Made once
    for each object."""
    found = _stand_ins.get(id(fn))
    if found is not None and found[0] is fn:
        return found[1]
    if isinstance(fn, functools.partial):
        made = partial_forwarding(fn)
    else:
        try:
            own = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):  # a builtin without one: the rule's parameters
            own = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                   for name in required]
        kept = [p for p in own if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.default is p.empty]
        if len(kept) < len(own):  # the rest by name, as the call gives them
            kept.append(inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD))
        made = forwarding(fn, inspect.Signature(kept))
    if len(_stand_ins) > 256:
        _stand_ins.clear()
    _stand_ins[id(fn)] = (fn, made)
    return made


# id of a function without source -> (the function, its stand-in): kept with the object
_stand_ins: dict[int, tuple[Any, Callable]] = {}
