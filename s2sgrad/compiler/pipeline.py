"""The compiler: the list of passes, run in order, with debugging output between them.

    parse -> fence -> normalize -> analyze -> aliasing -> reverse -> optimize -> codegen

``compile_vjp(fn, wrt, signature)`` returns a ``Compiled`` pair ``forward(*args) -> (out,
saved)`` and ``backward(saved, out_bar) -> (cotangent per wrt input)``, cached per function
(on the function: ``compiled.state_of``), differentiated parameters and abstract signature
(the kind and rank of each argument).

Functions of the same code share one compile: a closure made anew at every step of a loop
gets the pair compiled for an earlier closure of its code, over its own cells (``_Shared``),
when what that compile read from the closure is still what it read (the same functions in
its cells, data of the same kinds). Only the code objects are shared: the template a
compile leaves per code object holds no closure and none of its cells' contents.

Each pass takes what the earlier ones returned and returns something new: it never changes
its input (tests/compiler/test_pass_inputs.py checks this after every pass), so a table an earlier
pass keyed by a statement still describes that statement. Only ``syntax`` builds gast
nodes; every pass dispatches on statement kinds through ``statements``.

``S2SGRAD_DEBUG=1`` prints the generated source of every compilation; ``=2`` also prints the
function after every pass.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import random
import sys
import threading
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from .. import backends, syntax
from ..rules import registry
from . import codegen as codegen_module
from . import compiled as compiled_module
from . import higher, sourcefile
from .aliasing import Forwards, aliasing, forward_reads
from .analyze import Abstract, Analysis, Fold, NeedsArray, abstract_of, analyze
from .analyze.values import holds_closure, identified
from .batching import NotBatchable
from .codegen import codegen, codegen_tangent
from .compiled import Compiled, CompiledJvp, state_of
from .derivatives import Derivative
from .fence import fence
from .normalize import Respread, normalize, numpy_name
from .optimize import optimize
from .parse import MISSING, Parsed, made_by_transform, parse, unwrap
from .reverse import reverse
from .tangent import tangent
from .validity import own_state, read, shape_key, still_valid


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
        return state_of(self.fn).vjp[self.key].forward(*args, **kwargs)

    def backward(self, saved, out_bar):
        return state_of(self.fn).vjp[self.key].backward(saved, out_bar)


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
        return state_of(self.fn).jvp[self.key].jvp(*args, **kwargs)


_lock = threading.RLock()
_in_progress: set = set()


def _debug_level() -> int:
    try:
        return int(os.environ.get("S2SGRAD_DEBUG", "0") or 0)
    except ValueError:
        return 1


def compile_vjp(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                call_site: tuple[Parsed, Any] | None = None,
                lifted: dict[str, str] | None = None, callee: bool = False) -> Compiled:
    """The compiled pair of ``fn`` differentiated with respect to the parameters ``wrt``.

    ``lifted`` maps values the function reads (``'self.W'``) to keyword-only parameters
    that replace them (see parse), so that ``wrt`` can name them. Only a ``callee`` (of
    another compiled function) may return a function it makes: the caller knows it as
    the tuple that stands for it (see analyze/values.py, ``Abstract.closure``)."""
    fn = unwrap(fn)
    if not inspect.isfunction(fn) and not isinstance(fn, Derivative):
        fn = higher.stand_in_of(fn)
    lifted = dict(lifted or {})
    key = (tuple(wrt), tuple(sorted(signature.items())), tuple(sorted(lifted.items())))

    def build() -> Compiled:
        if isinstance(fn, Derivative):  # higher order
            return higher.derivative_pair(fn, tuple(wrt), signature, compile_vjp, compile_jvp)
        found = _shared(fn, "vjp", key)
        if found is None:
            found = _run_passes(fn, tuple(wrt), signature, lifted)
            _share(fn, "vjp", key, found)
        return found

    compiled = _cached("vjp", fn, key, build, lambda: _Recursive(fn, key))
    if not callee:
        _refuse_returned_function(fn, compiled.result_value)
    return compiled


def _refuse_returned_function(fn: Callable, value: Abstract) -> None:
    """A function returned to the user (not to compiled code) is not the tuple that stands
    for a function made inside: refused at the return."""
    if not holds_closure(value) or not inspect.isfunction(fn):
        return
    parsed = parse(fn)
    returns = [n.value for n in gast.walk(parsed.node) if isinstance(n, gast.Return) and
               n.value is not None]
    raise parsed.error(
        "the function returns a function it makes (or a container that holds one): a "
        "differentiated function returns numbers and arrays", returns[-1] if returns else
        parsed.node, "Return what the function computes, and call the function it makes "
        "where it makes it.")


def _cached(mode: str, fn: Callable, key: tuple, build: Callable[[], Any],
            stand_in: Callable[[], Any]) -> Any:
    """What ``fn``'s state holds for ``key`` in ``mode`` ("vjp": pairs, "jvp": tangent
    functions) if still valid, else ``build()``, stored. A function that calls itself
    meets its own compile in progress: it gets ``stand_in()``, which finds the finished
    result when it runs."""
    with _lock:
        per_fn = getattr(state_of(fn), mode)
        if key in per_fn and per_fn[key].valid():
            return per_fn[key]
        token = (mode, fn, key)
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
    passed = reverse_passes(fn, wrt, signature, lifted, _debug_observer(debug))
    parsed, analysis, optimized, generated = (passed.parsed, passed.analysis,
                                              passed.optimized, passed.generated)
    if debug >= 1:
        print(f"[s2sgrad] {fn.__qualname__} wrt {wrt}:\n{generated.forward_source}\n"
              f"{generated.adjoint_source}", file=sys.stderr)
    dependencies = _dependencies(parsed, analysis)
    return Compiled(fn, parsed.name, wrt, tuple(sorted(signature.items())),
                    generated.forward, generated.backward, generated.forward_source,
                    generated.adjoint_source, optimized.saved, _result_value(analysis),
                    generated.filename, optimized.reversed.result_aliases,
                    dependencies, version, _by_string_value(analysis),
                    own[0][3], own[1][3], own, len(own) > 2 or bool(dependencies),
                    optimized.external, draws=_draws(analysis))


@dataclasses.dataclass(frozen=True)
class Passed:
    """What the reverse-mode passes return, pass by pass (``reverse_passes``)."""

    parsed: Parsed
    analysis: Analysis
    optimized: Any  # optimize.Optimized, its bindings those of the arrays' library
    generated: Any  # codegen.Generated


Observer = Callable[[str, Any], None]  # called with each pass's name and what it returned


def reverse_passes(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                   lifted: dict[str, str] | None = None,
                   observe: Observer = lambda name, result: None) -> Passed:
    """The chain of passes of reverse mode, written once: parse, fence, normalize, analyze,
    aliasing (``front_passes``), reverse, optimize, the library's bindings, codegen and the
    library's check. ``observe`` sees what each pass returned, as it returned it (the
    debugging output, the pass-by-pass golden files, the check that no pass changes an
    earlier one's result)."""
    backend = backends.of(signature)
    parsed, analysis, aliases = front_passes(fn, wrt, signature, lifted, compile_vjp, observe)
    reversed_ = reverse(analysis, aliases)
    observe("reverse", reversed_)
    optimized = optimize(reversed_, backend)
    observe("optimize", optimized)
    bindings, (forward, adjoint) = backend.bind(  # the library's namespace and helpers
        reversed_.bindings, (optimized.forward, optimized.adjoint), analysis,
        lambda: _taken(parsed, analysis))
    if bindings is not reversed_.bindings:
        reversed_ = dataclasses.replace(reversed_, bindings=bindings)
        optimized = dataclasses.replace(optimized, reversed=reversed_, forward=forward,
                                        adjoint=adjoint)
    generated = codegen(optimized)
    observe("codegen", generated)
    backend.check(generated.filename, lambda: _names(parsed, reversed_.bindings),
                  analysis.values)
    return Passed(parsed, analysis, optimized, generated)


def compile_jvp(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                returns: str = "both", batched: bool = False,
                callee: bool = False) -> CompiledJvp:
    """The compiled tangent function of ``fn`` for tangents of the parameters ``wrt``;
    ``returns`` is "both" (``(out, out_dot)``) or "tangent" (``out_dot``). ``batched``:
    for tangents with a leading axis of directions (batching.py); it raises
    ``NotBatchable`` where that cannot be done."""
    fn = unwrap(fn)
    if not inspect.isfunction(fn) and not isinstance(fn, Derivative):
        fn = higher.stand_in_of(fn)
    key = (tuple(wrt), tuple(sorted(signature.items())), returns) + (
        ("batched",) if batched else ())

    def build() -> CompiledJvp:
        if isinstance(fn, Derivative):  # higher order
            if batched:
                return higher.derivative_rows(fn, tuple(wrt), signature, compile_vjp,
                                              compile_jvp, returns)
            return higher.derivative_tangent(fn, tuple(wrt), signature, compile_jvp, returns)
        compiled = _shared(fn, "jvp", key)
        if compiled is None:
            compiled = _run_tangent_passes(fn, tuple(wrt), signature, returns, batched)
            if compiled.jvp is not None:
                _close_recursion(compiled.jvp, fn, key)
            _share(fn, "jvp", key, compiled)
        return compiled

    compiled = _cached("jvp", fn, key, build,
                       lambda: _RecursiveJvp(fn, key, tuple(wrt), _tangent_names(fn, wrt)))
    if not callee:
        _refuse_returned_function(fn, compiled.result_value)
    return compiled


def _close_recursion(jvp: Callable, fn: Callable, key: tuple) -> None:
    """A function that calls itself was compiled with a stand-in for its own tangent
    function (``_RecursiveJvp``): put the real one in its place, so that the code reads as
    a function calling itself when it is differentiated again (higher order)."""
    for cell in jvp.__closure__ or ():
        stand_in = getattr(cell.cell_contents, "__self__", None)  # its bound .jvp
        if isinstance(stand_in, _RecursiveJvp) and stand_in.fn is fn and stand_in.key == key:
            cell.cell_contents = jvp


# -- functions of the same code share one compile -------------------------------------------

# Per code object (``compiled.shared``, held weakly), its compiles' templates by (mode, key),
# the most recently used last: at most _SHARED_KEYS specialisations, each with at most
# _VARIANTS templates (closures whose cells held different functions compile apart, and
# each leaves its template). A loop that makes a closure per step uses one; the bounds keep
# a code object specialised many ways (a closure per shape of batch) from holding more than
# a few dozen templates. A function written at run time (sourcefile.define) has a code
# object of its own, which no other function shares: it leaves none.
_SHARED_KEYS = 32
_VARIANTS = 4
_templates = compiled_module.shared


@dataclasses.dataclass(frozen=True)
class _Shared:
    """What a compile of one function gives another function of the same code (another
    closure made by the same ``def``), holding nothing of the first function's own.

    ``functions``: per generated function, its code object, whether it takes the user's
    defaults and keyword defaults, and per free variable where its cell comes from: a
    shared cell (a rule helper, a callee's compiled pair: ``bindings``), the name of the
    closure variable it reads (the new closure's cell), a stand-in for the function's own
    compile in progress (``_Recursive``: recursion), or the index of a generated function
    (a tangent function that calls itself). ``checks``: the compile's dependencies, those
    read through the closure as paths from a closure variable (see ``_template``)."""

    mode: str
    cls: type
    globals: dict
    defaults: Any  # the abstract values of the defaults and keyword defaults compiled with
    version: object
    checks: tuple
    functions: tuple
    fields: dict  # the Compiled's (or CompiledJvp's) other fields


def _shared(fn: Callable, mode: str, key: tuple) -> Any:
    """The result of compiling ``fn`` for ``key``, made from a template another function of
    its code left, or None if none still holds for ``fn``."""
    table = _templates.get(fn.__code__)
    variants = table.get((mode, key)) if table is not None else None
    if not variants:
        return None
    for template in reversed(variants):
        made = _rebound(template, fn, key)
        if made is not None:
            table.move_to_end((mode, key))
            return made
    return None


def _share(fn: Callable, mode: str, key: tuple, compiled: Any) -> None:
    """Leave the template of ``compiled`` (just compiled for ``fn``) for the other functions
    of ``fn``'s code, where it can be made without holding anything of ``fn``."""
    template = _template(fn, mode, key, compiled)
    if template is None:
        return
    table = _templates.get(fn.__code__)
    if table is None:
        table = _templates[fn.__code__] = OrderedDict()
    variants = table.setdefault((mode, key), [])
    variants.append(template)
    del variants[:-_VARIANTS]
    table.move_to_end((mode, key))
    while len(table) > _SHARED_KEYS:
        table.popitem(last=False)


_SCALARS = (int, float, bool, complex, str, bytes, type(None))


def _template(fn: Callable, mode: str, key: tuple, compiled: Any) -> _Shared | None:
    """The template of ``compiled``, or None where another function of the code could not
    be told apart from ``fn`` by what the template keeps.

    A dependency on one of ``fn``'s cells is kept as its variable's name. An object read
    through a cell as data (``batch`` of ``def objective(w): return loss(w, batch[0])``,
    checked by type) is the closure's own: the dependencies on it become paths from that
    variable (``batch``, item 0), checked on the other closure's objects, with the abstract
    value of what they held (the kinds and ranks the compile specialised on). A function
    held in a cell is checked by identity, as for any closure. There is no template where
    an object read through the closure as data is also reached another way, where the
    compile depends on ``fn`` otherwise (a call of itself of another specialisation), or
    where a generated function reads ``fn`` or its cells through a binding."""
    if not isinstance(fn, types.FunctionType) or fn.__code__.co_filename == sourcefile.FILENAME:
        return None
    cells = {id(c): v for v, c in zip(fn.__code__.co_freevars, fn.__closure__ or (),
                                      strict=True)}
    paths: dict[int, tuple] = {}  # id of an object read through the closure -> its path
    elsewhere: set[int] = set()  # ids of the objects the other dependencies reach
    checks = []
    try:
        for where, name, kind, value in compiled.dependencies:
            if id(where) in cells:
                var, steps = cells[id(where)], ()
            elif id(where) in paths:
                var, steps = paths[id(where)]
            else:
                now = read(where, name, kind)
                if kind == "is" and value is fn and where is fn.__globals__:
                    checks.append(("itself", where, name))  # calls itself by a global name
                    continue
                if where is fn or value is fn or now is fn or id(now) in paths:
                    return None
                elsewhere.update((id(where), id(now)))
                checks.append(("as is", (where, name, kind, value)))
                continue
            now = read(where, name, kind)
            if now is MISSING:
                return None
            abstract = None
            if kind == "is" and value is fn:  # a closure that calls itself by its name
                kind, value = "self", None
            elif kind == "item" and not identified(value):  # data: of the same kind
                kind, value, abstract = "item type", type(value), abstract_of(now)
            elif kind in ("type", "shape"):
                abstract = abstract_of(now)
            if kind in ("type", "shape", "item type") and not isinstance(now, _SCALARS):
                if id(now) in elsewhere:
                    return None
                paths[id(now)] = (var, steps + ((name, kind if kind != "item type" else
                                                 "item"),))
            checks.append(("path", var, steps, name, kind, value, abstract))
        defaults = _abstract_defaults(fn)
    except TypeError:  # a value abstract_of refuses: compiled for this function alone
        return None
    generated = [compiled.forward, compiled.backward] if mode == "vjp" else [compiled.jvp]
    functions = []
    for made in generated if generated != [None] else []:
        sources = []
        for var, cell in zip(made.__code__.co_freevars, made.__closure__ or (), strict=True):
            if id(cell) in cells:
                sources.append(cells[id(cell)])
                continue
            try:
                content = cell.cell_contents
            except ValueError:  # not filled yet: nothing to tell what it will hold
                return None
            stand_in = getattr(content, "__self__", None)
            if isinstance(stand_in, (_Recursive, _RecursiveJvp)) and stand_in.fn is fn:
                if stand_in.key != key:  # a call of itself of another specialisation
                    return None
                sources.append(("recursive", type(stand_in), content.__func__.__name__))
            elif any(content is g for g in generated):
                sources.append(("generated", next(k for k, g in enumerate(generated)
                                                  if content is g)))
            elif _reads(content, fn, cells):
                return None
            else:
                sources.append(cell)
        functions.append((made.__code__, made.__defaults__ is not None,
                          bool(made.__kwdefaults__), tuple(sources)))
    skip = {"fn", "forward", "backward", "jvp", "dependencies", "code", "defaults", "own", "walk"}
    fields = {f.name: getattr(compiled, f.name) for f in dataclasses.fields(compiled)
              if f.name not in skip}
    return _Shared(mode, type(compiled), fn.__globals__, defaults, compiled.version,
                   tuple(checks), tuple(functions), fields)


def _reads(content: Any, fn: Callable, cells: dict[int, str]) -> bool:
    """Does a binding of generated code hold ``fn``, its cells, or a stand-in of it?"""
    if content is fn or getattr(content, "derivative_of", None) is fn:
        return True
    owner = getattr(content, "__self__", None)
    if owner is fn or getattr(owner, "fn", None) is fn:
        return True
    for cell in getattr(content, "__closure__", None) or ():
        if id(cell) in cells:
            return True
        try:
            held = cell.cell_contents
        except ValueError:
            continue
        if held is fn or getattr(getattr(held, "__self__", None), "fn", None) is fn:
            return True
    return False


def _abstract_defaults(fn: Callable) -> tuple:
    kwdefaults = fn.__kwdefaults__ or {}
    return (None if fn.__defaults__ is None else tuple(abstract_of(d) for d in fn.__defaults__),
            tuple((k, abstract_of(v)) for k, v in sorted(kwdefaults.items())))


def _rebound(template: _Shared, fn: Callable, key: tuple) -> Any:
    """The template made for ``fn``: its cells in place of the first closure's, its
    dependencies checked; None where one does not hold (compile ``fn`` anew)."""
    if fn.__globals__ is not template.globals or template.version is not registry.version \
            or made_by_transform(fn) is not None:
        return None
    try:
        if _abstract_defaults(fn) != template.defaults:
            return None
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
        dependencies = []
        for check in template.checks:
            if check[0] == "as is":
                dependencies.append(check[1])
                continue
            if check[0] == "itself":
                dependencies.append((check[1], check[2], "is", fn))
                continue
            _, var, steps, name, kind, value, abstract = check
            where = cells[var]
            for step, how in steps:
                where = read(where, step, how)
            if where is MISSING:
                return None
            now = read(where, name, kind)
            if kind == "self":
                if now is not fn:
                    return None
                kind, value = "is", fn
            elif kind == "item type":
                if type(now) is not value:
                    return None
                kind, value = "item", now
            if abstract is not None and abstract_of(now) != abstract:
                return None
            if kind == "shape":  # this closure's data, of the kind the compile saw
                value = shape_key(now)
            dependencies.append((where, name, kind, value))
    except TypeError:  # a value abstract_of refuses: the compile says why
        return None
    dependencies = tuple(dependencies)
    if not still_valid(dependencies):
        return None
    own = own_state(fn)
    generated: list[Any] = []
    later = []  # cells of generated functions that call themselves
    for code, takes_defaults, takes_kwdefaults, sources in template.functions:
        closure = []
        for source in sources:
            if isinstance(source, str):
                closure.append(cells[source])
            elif isinstance(source, types.CellType):
                closure.append(source)
            elif source[0] == "recursive":
                stand_in = (_Recursive(fn, key) if source[1] is _Recursive else
                            _RecursiveJvp(fn, key, template.fields["wrt"],
                                          template.fields["tangent_params"]))
                closure.append(types.CellType(getattr(stand_in, source[2])))
            else:
                cell = types.CellType()
                later.append((cell, source[1]))
                closure.append(cell)
        generated.append(codegen_module.made(
            code, fn.__globals__, fn.__defaults__ if takes_defaults else None,
            fn.__kwdefaults__ if takes_kwdefaults else None, tuple(closure)))
    for cell, index in later:
        cell.cell_contents = generated[index]
    if template.mode == "vjp":
        functions = {"forward": generated[0], "backward": generated[1]}
    else:
        functions = {"jvp": generated[0] if generated else None}
    return template.cls(fn=fn, dependencies=dependencies, code=own[0][3], defaults=own[1][3],
                        own=own, walk=len(own) > 2 or bool(dependencies), **functions,
                        **template.fields)


def cache_sizes() -> dict[str, int]:
    """The sizes of the tables kept across functions, for tests (each stays bounded, or
    holds one entry per live code object): ``compiled.cache_sizes()``, and the generated
    source files."""
    return {**compiled_module.cache_sizes(), "sources": len(codegen_module._sources)}


def _tangent_names(fn: Callable, wrt: tuple[str, ...]) -> tuple[str, ...]:
    """The names the tangent parameters get (as the tangent pass names them)."""
    return tuple(f"{w}_dot" for w in wrt)


def _run_tangent_passes(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                        returns: str, batched: bool = False) -> CompiledJvp:
    debug = _debug_level()
    version = registry.version
    own = own_state(fn)
    parsed, analysis, aliases = front_passes(fn, wrt, signature, None, compile_jvp,
                                             _debug_observer(debug))
    dependencies = _dependencies(parsed, analysis)
    try:
        tangents = tangent(analysis, aliases, returns, _batched_callee if batched else None)
    except NotBatchable as exc:  # kept, so that the next call does not try again
        return CompiledJvp(fn, parsed.name, wrt, tuple(sorted(signature.items())), None, "",
                           (), _result_value(analysis), "", frozenset(), dependencies,
                           version, _by_string_value(analysis), own[0][3], own[1][3], own,
                           len(own) > 2 or bool(dependencies), unbatchable=str(exc))
    backend = backends.of(signature)
    arrays = {n: v.ndim for n, v in analysis.values.items() if v.kind == "array"}
    body = backend.primal_forms(tangents.body, tangents.bindings,
                                {n: k for n, k in arrays.items() if k}, set(arrays))
    bindings, (body,) = backend.bind(  # the library's namespace and helpers
        tangents.bindings, (body,), analysis, lambda: _taken(parsed, analysis))
    if bindings is not tangents.bindings:
        tangents = dataclasses.replace(tangents, bindings=bindings, body=body)
    generated = codegen_tangent(tangents)
    if debug >= 1:
        print(f"[s2sgrad] {fn.__qualname__} jvp wrt {wrt}:\n{generated.source}",
              file=sys.stderr)
    backend.check(generated.filename, lambda: _names(parsed, tangents.bindings),
                  analysis.values)
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
    compiled = compile_jvp(callee.fn, callee.wrt, dict(callee.signature), "both", batched=True,
                           callee=True)
    if isinstance(compiled, _RecursiveJvp):
        raise NotBatchable(f"{callee.name}() calls itself")
    if compiled.unbatchable:  # already placed in the callee; the call is placed here
        raise NotBatchable(f"{callee.name}() cannot be batched: {compiled.unbatchable}")
    return compiled


# how many rounds of reads moved to an updated version (each round moves every read it
# finds; a further round follows an update of that version)
_FORWARDS = 20


def front_passes(fn: Callable, wrt: tuple[str, ...], signature: dict[str, Abstract],
                 lifted: dict[str, str] | None, compile_callee: Callable,
                 observe: Observer = lambda name, result: None) -> tuple:
    """The passes both modes share: parse, fence, normalize, analyze (callees compiled by
    ``compile_callee``, the mode's own compile) and aliasing, each result shown to
    ``observe``."""
    parsed = parse(fn, lifted, _spread_of(fn, signature))
    observe("parse", parsed)
    parsed = fence(parsed)
    observe("fence", parsed)
    unknown = [w for w in wrt if w not in parsed.params]
    if unknown:
        raise TypeError(f"{fn.__qualname__}() has no parameter named {unknown[0]!r}")
    backend = backends.of(signature)

    def callee(fn_, callee_wrt, callee_signature, node):
        # its arrays are the caller's library's: compiled for it
        return compile_callee(fn_, callee_wrt, backend.callee(callee_signature), callee=True)

    conversions: frozenset[tuple] = frozenset()
    lengths: dict = {}  # the size of each spread site (g(*xs), a, *rest = xs) asked for
    folds: dict = {}  # the ifs whose test has one value on every call
    while True:  # normalized again for each list NumPy converts, each spread site sized,
        normalized = normalize(parsed, fence, conversions, lengths, folds)  # each if folded
        try:
            analysis = analyze(normalized, wrt, signature, callee)
            break
        except NeedsArray as needs:
            if needs.site in conversions or numpy_name(parsed) is None:
                raise needs.error from None
            conversions |= {needs.site}
        except Respread as asked:  # written out with that site's size
            lengths[asked.site] = asked.size
        except Fold as found:  # only the block that runs
            if not found.sites.keys() - folds.keys():
                raise syntax.unexpected("analyze", parsed.node, "an if folded twice") from None
            folds.update(found.sites)
    for _ in range(_FORWARDS):  # reads of an array after its update through another name
        try:
            aliases = aliasing(analysis)  # refuses what cannot be followed
            break
        except Forwards as found:  # read the updated version instead, and analyse again
            normalized = forward_reads(normalized, found.reads)
            analysis = analyze(normalized, wrt, signature, callee)
    else:
        raise parsed.error("an array is updated in place through many names in turn, each "
                           "read after the other's update", parsed.node,
                           "Copy the array where a name should keep its values (`k = h.copy()`).")
    observe("normalize", normalized)
    observe("analyze", analysis)
    observe("aliasing", aliases)
    return parsed, analysis, aliases


def _names(parsed: Any, bindings: dict[str, Any]) -> dict[str, Any]:
    """What the free names of the generated code resolve to: the compile's bindings, the
    function's closure and globals."""
    names = dict(parsed.fn.__globals__)
    for name, cell in parsed.closure.items():
        try:
            names[name] = cell.cell_contents
        except ValueError:  # an empty cell: a name the function assigns later
            pass
    names.update(bindings)
    return names


def _taken(parsed: Any, analysis: Analysis) -> dict[str, Any]:
    """What the names of the generated code other than its bindings name: the function's
    globals and closure, and its own local names (what the analysis knows they hold, as a
    namespace ``xp = array_namespace(x)``; a value of its own otherwise)."""
    names = _names(parsed, {})
    for name in parsed.local_names:
        value = analysis.values.get(name)
        names[name] = value.value if value is not None and value.value is not None else value
    return names


def _by_string_value(analysis: Analysis) -> bool:
    """Whether the result depends on a string argument's value (its own code's, or a
    callee's)."""
    return analysis.by_string_value or any(getattr(op.callee, "by_string_value", False)
                                           for op in analysis.ops.values() if op.kind == "call")


def _draws(analysis: Analysis) -> str:
    """The first random-number function the code or its callees call ("" if none)."""
    for op in analysis.ops.values():
        if op.kind == "call" and getattr(op.callee, "draws", ""):
            return op.callee.draws
        if op.primitive is not None and _is_random(op.primitive):
            return op.what or getattr(op.primitive, "__qualname__", repr(op.primitive))
    return ""


def _is_random(fn: Any) -> bool:
    """A function of numpy.random or random, or a method of a generator of either."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (np.random.Generator, np.random.RandomState, random.Random,
                          np.random.BitGenerator)):
        return True
    module = getattr(fn, "__module__", None) or ""
    return module.startswith("numpy.random") or module == "random"


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
        if key not in found or found[key][2] in ("type", "shape"):
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


def _debug_observer(debug: int) -> Observer:
    """``S2SGRAD_DEBUG=2``: the code after normalize and reverse's adjoint, and the active
    names, on stderr."""
    def observe(name: str, result: Any) -> None:
        if debug < 2:
            return
        if name == "normalize":
            _show("normalize", result.node)
        elif name == "analyze":
            print(f"[s2sgrad] after analyze: active = {sorted(result.active)}",
                  file=sys.stderr)
        elif name == "reverse":
            _show("reverse (adjoint)", syntax.function("adjoint", [], result.adjoint))
    return observe


def _show(title: str, node: gast.AST) -> None:
    import astor
    print(f"[s2sgrad] after {title}:\n{astor.to_source(syntax.to_python_ast(node))}",
          file=sys.stderr)