"""The compiler: the list of passes, run in order, with debugging output between them.

    parse -> fence -> normalize -> analyze -> aliasing -> reverse -> optimize -> codegen

``compile_vjp(fn, wrt, signature)`` returns a ``Compiled`` pair ``forward(*args) -> (out,
saved)`` and ``backward(saved, out_bar) -> (cotangent per wrt input)``, cached per function,
differentiated parameters and abstract signature (the kind and rank of each argument).

Each pass takes what the earlier ones returned and returns something new: it never changes
its input (tests/test_pass_inputs.py checks this after every pass), so a table an earlier
pass keyed by a statement still describes that statement. Only ``syntax`` builds gast
nodes; every pass dispatches on statement kinds through ``statements``.

``S2SGRAD_DEBUG=1`` prints the generated source of every compilation; ``=2`` also prints the
function after every pass.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

import gast

from . import higher, syntax
from .aliasing import aliasing
from .analyze import Abstract, Analysis, abstract_of, analyze
from .batching import NotBatchable
from .codegen import codegen, codegen_tangent
from .compiled import Compiled, CompiledJvp
from .derivatives import Derivative
from .fence import fence
from .normalize import normalize
from .optimize import optimize
from .parse import Parsed, own_state, parse, unwrap
from .reverse import reverse
from .rules import registry
from .tangent import tangent


class _Recursive:
    """Stands for a pair still being compiled, where a function calls itself: its forward
    and backward find the finished pair in the cache when they run. Nothing is known of its
    result (rank, aliasing), so the caller's code stays general there."""

    result_value = Abstract("array", None, True)
    result_aliases = None
    dependencies = ()

    def __init__(self, fn: Callable, key: tuple):
        self.fn, self.key, self.name = fn, key, fn.__name__

    def forward(self, *args, **kwargs):
        return _cache[self.fn][self.key].forward(*args, **kwargs)

    def backward(self, saved, out_bar):
        return _cache[self.fn][self.key].backward(saved, out_bar)


class _RecursiveJvp:
    """Stands for a tangent function still being compiled, where a function calls itself."""

    result_value = Abstract("array", None, True)
    result_aliases = None
    dependencies = ()

    def __init__(self, fn: Callable, key: tuple, wrt: tuple[str, ...],
                 tangent_params: tuple[str, ...]):
        self.fn, self.key, self.name = fn, key, fn.__name__
        self.wrt, self.tangent_params = wrt, tangent_params

    def jvp(self, *args, **kwargs):
        return _jvp_cache[self.fn][self.key].jvp(*args, **kwargs)


_cache: weakref.WeakKeyDictionary[Callable, dict] = weakref.WeakKeyDictionary()
_jvp_cache: weakref.WeakKeyDictionary[Callable, dict] = weakref.WeakKeyDictionary()
_lock = threading.RLock()
_in_progress: set = set()


def _debug_level() -> int:
    try:
        return int(os.environ.get("S2SGRAD_DEBUG", "0") or 0)
    except ValueError:
        return 1


def compile_vjp(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                call_site: tuple[Parsed, Any] | None = None,
                lifted: dict[str, str] | None = None) -> Compiled:
    """The compiled pair of ``fn`` differentiated with respect to the parameters ``wrt``.

    ``lifted`` maps values the function reads (``'self.W'``) to keyword-only parameters
    that replace them (see parse), so that ``wrt`` can name them."""
    fn = unwrap(fn)
    if not inspect.isfunction(fn) and not isinstance(fn, Derivative):
        parse(fn)  # raises the TransformError that explains why
    lifted = dict(lifted or {})
    key = (tuple(wrt), tuple(sorted(signature.items())), tuple(sorted(lifted.items())))

    def build() -> Compiled:
        if isinstance(fn, Derivative):  # higher order
            return higher.derivative_pair(fn, tuple(wrt), signature, compile_vjp, compile_jvp)
        return _run_passes(fn, tuple(wrt), signature, lifted)

    return _cached(_cache, fn, key, build, lambda: _Recursive(fn, key))


def _cached(cache: weakref.WeakKeyDictionary, fn: Callable, key: tuple,
            build: Callable[[], Any], stand_in: Callable[[], Any]) -> Any:
    """What ``cache`` holds for (fn, key) if still valid, else ``build()``, stored. A
    function that calls itself meets its own compile in progress: it gets ``stand_in()``,
    which finds the finished result when it runs."""
    with _lock:
        per_fn = cache.setdefault(fn, {})
        if key in per_fn and per_fn[key].valid():
            return per_fn[key]
        token = (id(cache), fn, key)
        if token in _in_progress:
            return stand_in()
        _in_progress.add(token)
        try:
            compiled = build()
        finally:
            _in_progress.discard(token)
        per_fn[key] = compiled
        return compiled


def _run_passes(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                lifted: dict[str, str] | None = None) -> Compiled:
    debug = _debug_level()
    version = registry.version
    own = own_state(fn)  # before reading the source: a change during the compile shows
    parsed, analysis, aliases = _analysed(fn, wrt, signature, lifted, compile_vjp, debug)
    reversed_ = reverse(analysis, aliases)
    _show(debug, "reverse (adjoint)", syntax.function("adjoint", [], reversed_.adjoint))
    optimized = optimize(reversed_)
    generated = codegen(optimized)
    if debug >= 1:
        print(f"[s2sgrad] {fn.__qualname__} wrt {wrt}:\n{generated.forward_source}\n"
              f"{generated.adjoint_source}", file=sys.stderr)
    dependencies = _dependencies(parsed, analysis)
    return Compiled(fn, parsed.name, wrt, tuple(sorted(signature.items())),
                    generated.forward, generated.backward, generated.forward_source,
                    generated.adjoint_source, optimized.saved, _result_value(analysis),
                    generated.filename, reversed_.result_aliases,
                    dependencies, version, _by_string_value(analysis),
                    own[0][3], own[1][3], own, len(own) > 2 or bool(dependencies),
                    optimized.external)


def compile_jvp(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                returns: str = "both", batched: bool = False) -> CompiledJvp:
    """The compiled tangent function of ``fn`` for tangents of the parameters ``wrt``;
    ``returns`` is "both" (``(out, out_dot)``) or "tangent" (``out_dot``). ``batched``:
    for tangents with a leading axis of directions (batching.py); it raises
    ``NotBatchable`` where that cannot be done."""
    fn = unwrap(fn)
    if not inspect.isfunction(fn) and not isinstance(fn, Derivative):
        parse(fn)  # raises the TransformError that explains why
    key = (tuple(wrt), tuple(sorted(signature.items())), returns) + (
        ("batched",) if batched else ())

    def build() -> CompiledJvp:
        if isinstance(fn, Derivative):  # higher order
            if batched:
                return higher.derivative_rows(fn, tuple(wrt), signature, compile_vjp,
                                              compile_jvp, returns)
            return higher.derivative_tangent(fn, tuple(wrt), signature, compile_jvp, returns)
        compiled = _run_tangent_passes(fn, tuple(wrt), signature, returns, batched)
        if compiled.jvp is not None:
            _close_recursion(compiled.jvp, fn, key)
        return compiled

    return _cached(_jvp_cache, fn, key, build,
                   lambda: _RecursiveJvp(fn, key, tuple(wrt), _tangent_names(fn, wrt)))


def _close_recursion(jvp: Callable, fn: Callable, key: tuple) -> None:
    """A function that calls itself was compiled with a stand-in for its own tangent
    function (``_RecursiveJvp``): put the real one in its place, so that the code reads as
    a function calling itself when it is differentiated again (higher order)."""
    for cell in jvp.__closure__ or ():
        stand_in = getattr(cell.cell_contents, "__self__", None)  # its bound .jvp
        if isinstance(stand_in, _RecursiveJvp) and stand_in.fn is fn and stand_in.key == key:
            cell.cell_contents = jvp


def _tangent_names(fn: Callable, wrt: tuple[str, ...]) -> tuple[str, ...]:
    """The names the tangent parameters get (as the tangent pass names them)."""
    return tuple(f"{w}_dot" for w in wrt)


def _run_tangent_passes(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                        returns: str, batched: bool = False) -> CompiledJvp:
    debug = _debug_level()
    version = registry.version
    own = own_state(fn)
    parsed, analysis, aliases = _analysed(fn, wrt, signature, None, compile_jvp, debug)
    dependencies = _dependencies(parsed, analysis)
    try:
        tangents = tangent(analysis, aliases, returns, _batched_callee if batched else None)
    except NotBatchable as exc:  # kept, so that the next call does not try again
        return CompiledJvp(fn, parsed.name, wrt, tuple(sorted(signature.items())), None, "",
                           (), _result_value(analysis), "", frozenset(), dependencies,
                           version, _by_string_value(analysis), own[0][3], own[1][3], own,
                           len(own) > 2 or bool(dependencies), unbatchable=str(exc))
    generated = codegen_tangent(tangents)
    if debug >= 1:
        print(f"[s2sgrad] {fn.__qualname__} jvp wrt {wrt}:\n{generated.source}",
              file=sys.stderr)
    return CompiledJvp(fn, parsed.name, wrt, tuple(sorted(signature.items())), generated.jvp,
                       generated.source, tangents.tangent_params, _result_value(analysis),
                       generated.filename, tangents.result_aliases, dependencies, version,
                       _by_string_value(analysis), own[0][3], own[1][3], own,
                       len(own) > 2 or bool(dependencies), tangents.batch)


def _batched_callee(callee: Any) -> CompiledJvp:
    """The batched tangent function (returning both) of a callee compiled for one
    direction."""
    if isinstance(callee, _RecursiveJvp) or isinstance(callee.fn, Derivative):
        raise NotBatchable(f"{callee.name}() calls itself, or is a derivative")
    compiled = compile_jvp(callee.fn, callee.wrt, dict(callee.signature), "both", batched=True)
    if isinstance(compiled, _RecursiveJvp):
        raise NotBatchable(f"{callee.name}() calls itself")
    if compiled.unbatchable:  # already placed in the callee; the call is placed here
        raise NotBatchable(f"{callee.name}() cannot be batched: {compiled.unbatchable}")
    return compiled


def _analysed(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
              lifted: dict[str, str] | None, compile_callee: Callable, debug: int) -> tuple:
    """The passes both modes share: parse, fence, normalize, analyze (callees compiled by
    ``compile_callee``, the mode's own compile) and aliasing."""
    parsed = fence(parse(fn, lifted, _spread_of(fn, signature)))
    unknown = [w for w in wrt if w not in parsed.params]
    if unknown:
        raise TypeError(f"{fn.__qualname__}() has no parameter named {unknown[0]!r}")
    normalized = normalize(parsed, fence)
    _show(debug, "normalize", normalized.node)

    def callee(fn_, callee_wrt, callee_signature, node):
        return compile_callee(fn_, callee_wrt, callee_signature)

    analysis = analyze(normalized, wrt, signature, callee)
    if debug >= 2:
        print(f"[s2sgrad] after analyze: active = {sorted(analysis.active)}", file=sys.stderr)
    return parsed, analysis, aliasing(analysis)  # aliasing refuses what cannot be followed


def _by_string_value(analysis: Analysis) -> bool:
    """Whether the result depends on a string argument's value (its own code's, or a
    callee's)."""
    return analysis.by_string_value or any(getattr(op.callee, "by_string_value", False)
                                           for op in analysis.ops.values() if op.kind == "call")


def _spread_of(fn: Callable, signature: dict[str, Abstract]) -> tuple:
    """How many values ``*args`` holds and which keys ``**kwargs`` holds, where known."""
    count = keys = None
    for p in inspect.signature(fn, follow_wrapped=False).parameters.values():
        value = signature.get(p.name)
        if value is not None and value.items is None:
            continue
        items = () if value is None else value.items  # nothing passed: empty
        if p.kind == p.VAR_POSITIONAL:
            count = len(items)
        elif p.kind == p.VAR_KEYWORD:
            keys = tuple(k for k, _ in items)
    return count, keys


def _dependencies(parsed: Parsed, analysis: Analysis) -> tuple:
    """This function's resolved names and its callees' (a callee may be redefined too)."""
    found: dict = {}
    for dep in parsed.dependencies:  # a name read twice keeps its strictest check (an
        key = (id(dep[0]), dep[1])     # unrolled tuple's identity over its type)
        if key not in found or found[key][2] == "type":
            found[key] = dep
    for op in analysis.ops.values():
        if op.kind == "call":
            for dep in op.callee.dependencies + getattr(op.callee, "own", ()):
                found.setdefault((id(dep[0]), dep[1]), dep)
    return tuple(found.values())


def _result_value(analysis: Analysis) -> Abstract:
    result = analysis.result
    if isinstance(result, gast.Name):
        return analysis.values.get(result.id, Abstract("array"))
    if syntax.is_const(result):
        return abstract_of(result.value)
    return Abstract("array")


def _show(debug: int, title: str, node: gast.AST) -> None:
    if debug >= 2:
        import astor
        print(f"[s2sgrad] after {title}:\n{astor.to_source(syntax.to_python_ast(node))}",
              file=sys.stderr)
