"""What a rule must be for the compiler to use it as written, checked when it is registered.

The reverse pass copies a rule's body into the generated adjoint (``templates.py``) and reads
its contributions off the ``return``: a tuple literal gives one entry per leading parameter,
any other expression is the first parameter's alone. A rule that does not say plainly how many
contributions it returns would be misread without a sound: ``return helper(g, x, y)``, where
``helper`` returns a pair, would make the whole pair the gradient of ``x`` and leave ``y``
without one. So a rule is refused at registration, with its file and line, when

- its source cannot be read, or it is not a ``def`` (the body is what gets copied);
- it takes ``**kwargs`` (parameters bind by name), or reads variables of an enclosing function
  (the copied body sees only its module's globals);
- its body uses lambdas, comprehensions, ``:=``, ``yield`` or ``await``, whose names inlining
  cannot keep apart from the adjoint's;
- a ``return`` gives no value, unpacks with ``*``, or the returns disagree on the number of
  contributions;
- it returns more contributions than it has parameters to receive them: ``*args`` collects
  the call's remaining arguments into one tuple, which gets no contribution (the parameters
  before it can), unless the rule is registered with ``each=``: then the template is inlined
  once per argument of ``*args`` and its return has one more entry, the contribution to the
  argument at the index ``each`` names;
- it returns a tuple that is not written as a literal in the ``return`` (a name bound to one,
  a conditional expression choosing between two), or, with more than one parameter, a value
  whose number of contributions cannot be known: the result of a call to anything but NumPy,
  ``math``, the builtins and functions annotated to return something other than a tuple
  (``-> np.ndarray``, ``-> list``), or of one of those that returns several arrays.

For example::

    @vjp_rule(np.multiply)
    def multiply(g, ans, x, y):
        return helper(g, x, y)

    RuleError: rule multiply (example.py:3) returns helper(g, x, y): the result of a call to
    helper(...), and how many contributions it holds cannot be known. Write the contributions
    as a tuple in the return (c_x, c_y = ...; return c_x, c_y), ...

The library's own rules are checked by the test suite, and every rule again when it is first
inlined (``templates.py``), which also refuses a local read before a path assigns it, a name
the rule's module does not define, a ``*x`` in a call where ``x`` is not a tuple of the call's
arguments (``*arys``, ``arys[:k] + arys[k + 1:]``; generated code passes arguments one by
one), and a rule with ``*args`` or keyword-only parameters that would have to be called rather
than inlined, unless it is registered with ``each=`` (whose calls pass them one by one and by
keyword).
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np


class RuleError(TypeError):
    """A derivative rule that the compiler cannot use as written."""


# Templates (vjp and jvp) registered with each=: their index parameter (the registry fills it)
EACH: dict[Callable, str] = {}


# NumPy functions that return a tuple (or a list) of several arrays: the result of one of them,
# returned as it is, cannot be read as one contribution.
SEVERAL_RESULTS = frozenset({
    "divmod", "modf", "frexp", "unstack", "broadcast_arrays", "meshgrid", "nonzero",
    "histogram", "histogram2d", "histogramdd", "unique", "gradient", "atleast_1d",
    "atleast_2d", "atleast_3d", "eig", "eigh", "svd", "qr", "slogdet", "lstsq", "polyfit",
})
SEVERAL_BUILTINS = frozenset({"divmod", "tuple", "zip"})
_NOT_ALLOWED = {
    ast.Lambda: "a lambda", ast.ListComp: "a list comprehension",
    ast.SetComp: "a set comprehension", ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression", ast.NamedExpr: "an assignment expression (:=)",
    ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await",
}


def location(fn: Callable, lineno: int | None = None) -> str:
    """``file:line`` of a rule, or of one of its lines."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{code.co_filename}:{lineno or code.co_firstlineno}"


def fail(fn: Callable, message: str, lineno: int | None = None, hint: str = "") -> RuleError:
    text = f"rule {getattr(fn, '__name__', fn)} ({location(fn, lineno)}) {message}"
    return RuleError(f"{text}. {hint}" if hint else text)


def function_node(fn: Callable) -> ast.FunctionDef:
    """The rule's ``def``, parsed from its file (line numbers are the file's)."""
    code = getattr(fn, "__code__", None)
    defs = _defs_in(code.co_filename) if code is not None else {}
    if not defs:
        raise fail(fn, "has no readable source: a rule's body is copied into the generated "
                   "code, so it must be a def in a file")
    if code.co_name == "<lambda>" or code.co_firstlineno not in defs:
        raise fail(fn, "is not a def: a rule's body is copied into the generated code, so it "
                   "must be a plain def (not a lambda or an async def)")
    return defs[code.co_firstlineno]


@functools.lru_cache(maxsize=64)
def _module_defs(filename: str, source: str) -> dict[int, ast.FunctionDef]:
    tree = ast.parse(source)
    return {(n.decorator_list[0].lineno if n.decorator_list else n.lineno): n
            for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _defs_in(filename: str) -> dict[int, ast.FunctionDef]:
    """Every def of a source file, by its first line (one parse per file)."""
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return {}
    try:
        return _module_defs(filename, "".join(lines))
    except SyntaxError:
        return {}


def own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, not descending into nested functions or classes (nor
    into its decorators, which are not copied: ``items=lambda ...`` is the registry's)."""
    out = []
    todo = [n for n in ast.iter_child_nodes(node)
            if not (isinstance(node, ast.FunctionDef) and n in node.decorator_list)]
    while todo:
        n = todo.pop()
        out.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))
    return out


class _Body:
    """One rule's def and what the checks read of it."""

    def __init__(self, fn: Callable, node: ast.FunctionDef):
        self.fn = fn
        self.node = node
        self.nodes = own_nodes(node)
        self.returns = sorted((n for n in self.nodes if isinstance(n, ast.Return)),
                              key=lambda n: n.lineno)
        self.assigned: dict[str, list[ast.expr]] = {}
        for n in self.nodes:
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        self.assigned.setdefault(t.id, []).append(n.value)
        args = node.args
        self.local = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} | {
            a.arg for a in (args.vararg, args.kwarg) if a is not None} | set(self.assigned)


def check_rule(fn: Callable, each: str | None = None) -> None:
    """Raise RuleError if the compiler cannot use ``fn`` as written (see the module docs);
    ``each``: the index parameter of a rule inlined once per argument of its ``*args`` (by
    default, the one ``fn`` is registered with, if any)."""
    if each is None:
        each = EACH.get(fn)
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())[2:]
    node = function_node(fn)
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            raise fail(fn, f"takes **{p.name}", node.lineno, "Name each keyword parameter the "
                       "primitive takes, with its default: arguments bind to rules by name")
    if fn.__code__.co_freevars:
        names = ", ".join(fn.__code__.co_freevars)
        raise fail(fn, f"reads {names} from an enclosing function", node.lineno, "A rule's "
                   "body is copied into the generated code, where only the globals of the "
                   "rule's module are visible: make them module globals")
    body = _Body(fn, node)
    for n in body.nodes:
        if type(n) in _NOT_ALLOWED:
            raise fail(fn, f"uses {_NOT_ALLOWED[type(n)]}", n.lineno, "Inlining cannot keep "
                       "the names it binds apart from the adjoint's: compute it in a helper "
                       "function of the module and call that")
    star = next((i for i, p in enumerate(params) if p.kind is p.VAR_POSITIONAL), None)
    receiving = params if star is None else params[:star]
    if star is not None and each is not None:  # one entry more: for args[each]
        receiving = receiving + [params[star]]
    widths = [(ret, _width(body, ret, len(receiving))) for ret in body.returns]
    if not widths:
        raise fail(fn, "has no return", node.lineno,
                   "End it with the contributions: return c_x, c_y")
    first_ret, first = widths[0]
    for ret, width in widths[1:]:
        if width != first:
            raise fail(fn, f"returns {_count(first)} at line {first_ret.lineno} but "
                       f"{_count(width)} at line {ret.lineno}", ret.lineno,
                       "Give every return the same number of entries, with None for an "
                       "input that gets no contribution")
    if first > len(receiving):
        if star is not None and each is None:
            named = "".join(f"{p.name}, " for p in receiving)
            raise fail(fn, f"returns {_count(first)}, but only {len(receiving)} of its "
                       f"parameters can receive one: *{params[star].name} collects the "
                       "remaining arguments into one tuple, which gets no contribution",
                       first_ret.lineno, "Name the differentiable parameters one by one "
                       f"(e.g. def {fn.__name__}(g, ans, {named}a, b)), a rule for calls with "
                       "that many arguments, or register it with each='k' and a keyword-only "
                       f"index (def {fn.__name__}(g, ans, {named}*{params[star].name}, k=0)) "
                       f"whose last entry is the contribution to {params[star].name}[k]")
        raise fail(fn, f"returns {_count(first)} for {len(receiving)} parameter"
                   f"{'' if len(receiving) == 1 else 's'}", first_ret.lineno,
                   "Return one entry per leading parameter")


def check_container_result(fn: Callable, shape: str | None) -> None:
    """A template that unpacks its cotangent (``g_q, g_r = g``) is for a primitive that
    returns a tuple: without ``shape="tuple"`` the analysis would take the result for one
    array, and the cotangent it builds would not have the items' shapes."""
    if shape in ("tuple", "list"):
        return
    node = function_node(fn)
    for n in own_nodes(node):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and \
                n.value.id == "g" and any(isinstance(t, (ast.Tuple, ast.List))
                                          for t in n.targets):
            raise fail(fn, "unpacks g, the cotangent of its primitive's result, into items",
                       n.lineno, "Register a rule for a primitive that returns a tuple with "
                       "shape='tuple' (or 'list'), so that the result is read as a container "
                       "and g holds one cotangent per item: @vjp_rule(f, shape='tuple', "
                       "items=lambda static, ndim: (ndim('x'), ndim('x')))")


def _count(width: int) -> str:
    return "1 contribution" if width == 1 else f"{width} contributions"


def _width(body: _Body, ret: ast.Return, receiving: int) -> int:
    """How many contributions ``ret`` gives, or raise if that cannot be known."""
    fn, value = body.fn, ret.value
    if value is None:
        raise fail(fn, "returns nothing", ret.lineno,
                   "Return the contributions, or None for an input without one")
    if isinstance(value, ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in value.elts):
            raise fail(fn, "unpacks with * in its return", ret.lineno,
                       "Write one entry per contribution: return c_x, c_y")
        return len(value.elts)
    kind, why = _kind(body, value, frozenset())
    text = ast.unparse(value)
    if kind == "tuple":
        raise fail(fn, f"returns {text}, {why}, which is not written as a tuple in the return",
                   ret.lineno, "Only a tuple written in the return statement is read as "
                   "several contributions: return c_x, c_y")
    if kind == "unknown" and receiving > 1:
        raise fail(fn, f"returns {text}: the result of {why}, and how many contributions "
                   "it holds cannot be known", ret.lineno,
                   "Write the contributions as a tuple in the return (c_x, c_y = ...; "
                   "return c_x, c_y), return (c,) for the first parameter's alone, or "
                   "annotate the function's return type (-> np.ndarray)")
    return 1


def _kind(body: _Body, value: ast.expr, seen: frozenset[str]) -> tuple[str, str]:
    """("one", ""), ("tuple", why) or ("unknown", why) for a returned expression."""
    if isinstance(value, ast.Tuple):
        return "tuple", "a tuple"
    if isinstance(value, ast.IfExp):
        for branch in (value.body, value.orelse):
            kind, why = _kind(body, branch, seen)
            if kind != "one":
                return kind, why
        return "one", ""
    if isinstance(value, ast.Name) and value.id not in seen:
        # a local: what its assignments bind (a name bound by unpacking is one value)
        for source in body.assigned.get(value.id, ()):
            kind, why = _kind(body, source, seen | {value.id})
            if kind == "tuple":
                return kind, f"{value.id} is {why}"
            if kind == "unknown":
                return kind, why
        return "one", ""
    if isinstance(value, ast.Call):
        return _call_kind(body, value)
    return "one", ""


def _call_kind(body: _Body, call: ast.Call) -> tuple[str, str]:
    unknown = ("unknown", f"a call to {ast.unparse(call.func)}(...)")
    path = []
    root = call.func
    while isinstance(root, ast.Attribute):
        path.append(root.attr)
        root = root.value
    if not isinstance(root, ast.Name):
        return unknown
    if root.id in body.local:  # a method of a value: x.reshape(...), g.sum(...)
        return unknown if path and path[0] in SEVERAL_RESULTS else ("one", "")
    if root.id in body.fn.__globals__:
        obj = body.fn.__globals__[root.id]
    elif hasattr(builtins, root.id):
        obj = getattr(builtins, root.id)
        if not path:
            return unknown if root.id in SEVERAL_BUILTINS else ("one", "")
    else:
        return unknown
    if path and _is_numpy_or_math(obj):
        several = path[0] in SEVERAL_RESULTS or (path[0] == "where" and len(call.args) == 1
                                                and not call.keywords)
        return unknown if several else ("one", "")
    for attr in reversed(path):
        obj = getattr(obj, attr, None)
    annotated = _annotated(obj)
    if annotated == "one":
        return "one", ""
    if annotated == "tuple":
        return "unknown", f"{ast.unparse(call.func)}(...), annotated to return a tuple"
    return unknown


def _annotated(obj: Any) -> str | None:
    """"one" if a function's return annotation names a type other than a tuple (a helper
    annotated ``-> np.ndarray`` or ``-> list`` returns one value), "tuple" if it names a
    tuple, None if it has none or says ``Any``."""
    try:
        annotation = inspect.get_annotations(obj).get("return", inspect.Signature.empty)
    except TypeError:
        return None
    if annotation is inspect.Signature.empty or annotation is None:
        return None
    text = annotation if isinstance(annotation, str) else getattr(
        annotation, "__name__", None) or repr(annotation)
    text = text.replace(" ", "")
    parts = text.split("|")
    if any(p.split("[")[0].rsplit(".", 1)[-1] in ("tuple", "Tuple") for p in parts):
        return "tuple"
    if any(p.rsplit(".", 1)[-1] in ("Any", "object", "") for p in parts):
        return None
    return "one"


def _is_numpy_or_math(obj: Any) -> bool:
    if obj is math or obj is np:
        return True
    return isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] == "numpy"
