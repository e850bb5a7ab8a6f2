"""Pass 1, parse: a live Python function -> its gast FunctionDef and the namespace it sees.

Before: a function object (plain function, method, or one wrapped by ``@grad``).
After:  ``Parsed``: the FunctionDef with decorators removed and line/column numbers pointing
        into the user's real file; the parameter names; the live namespace (closure cells,
        globals, builtins) used to resolve what a call refers to at transform time. The
        imports at the top level of the body (``from scipy.special import logsumexp``) are
        done here, as a module-level import would be, and the names they bind join the
        closure: the function reads them as it reads any name from outside. A nested function
        made into a value inside differentiated code is compiled as the function that
        stands for all its closures (``nested_function``): its first parameter holds what
        it closes over, read into its free variables before its body.

Parse also says whose source is the user's: a function of an installed package or of the
standard library (``installed_package``) is called, never entered, unless its package was
named in ``differentiate_through``.

    def f(x):                 FunctionDef(name='f', args=[x], body=[Return(...)])
        return np.sin(x)      resolve(Attribute(np, 'sin')) -> <ufunc 'sin'>
"""

from __future__ import annotations
import __future__

import ast
import builtins
import functools
import importlib
import inspect
import linecache
import os
import site
import sysconfig
import textwrap
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast

from .. import syntax
from ..errors import TransformError, in_package, user_frame
from .validity import MISSING, identity


@dataclass(frozen=True)
class Parsed:
    fn: Callable
    node: gast.FunctionDef
    filename: str
    params: tuple[str, ...]
    local_names: frozenset[str]  # parameters and every name the body assigns
    closure: dict[str, Any]  # free variable -> cell
    globals: dict[str, Any]
    # What the compile resolved non-local names to: (where, name, kind, value), checked on
    # every call so that rebinding one (a redefined function) recompiles.
    dependencies: list = field(default_factory=list)

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
                value = cell.cell_contents
            except ValueError:  # an empty cell: the closure variable is not bound yet
                return MISSING
            self.dependencies.append((cell, ident, *identity(value)))
            return value
        if ident in self.globals:
            value = self.globals[ident]
            if not _is_library_module(value):  # `np` and `math` are not rebound in practice
                self.dependencies.append((self.globals, ident, *identity(value)))
            return value
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
            owner, value = value, getattr(value, attr, MISSING)
            if not _is_library_module(owner):  # a module, class or object: may be changed
                self.dependencies.append((owner, attr, *identity(value)))
        return value

    def error(self, message: str, node: Any, hint: str = "") -> TransformError:
        lineno = getattr(node, "lineno", 0) or 0
        if not lineno:  # a node the compiler made: the function's own line
            return TransformError(message, self.filename, self.node.lineno,
                                  self.node.col_offset, hint)
        return TransformError(message, self.filename, lineno,
                              getattr(node, "col_offset", 0) or 0, hint)


# Packages whose source the user asked to have differentiated (``differentiate_through``).
_THROUGH: set[str] = set()


def differentiate_through(*modules: str | types.ModuleType) -> None:
    """Differentiate calls into these installed packages through their source, as if the
    functions were the user's own. By default a function that lives in an installed
    package (site-packages) or in Python's standard library is called, never entered: a
    differentiated value that flows into one without a derivative rule is refused."""
    for module in modules:
        _THROUGH.add(module.__name__ if isinstance(module, types.ModuleType) else module)


@functools.cache
def _installed_roots() -> tuple[str, ...]:
    paths = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib",
                                                      "platlib")}
    paths |= set(site.getsitepackages()) | {site.getusersitepackages()}
    return tuple(os.path.join(os.path.realpath(p), "") for p in paths if p)


def installed_package(fn: Callable) -> str | None:
    """The module of a Python function that belongs to an installed package or to the
    standard library (not to the user's code, nor to a package the user named in
    ``differentiate_through``), or None."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_filename.startswith("<"):
        return None
    module = getattr(fn, "__module__", None) or ""
    if any(module == m or module.startswith(m + ".") for m in _THROUGH):
        return None
    path = os.path.realpath(code.co_filename)
    return module or path if path.startswith(_installed_roots()) else None


def _is_library_module(value: Any) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in (
        "numpy", "math", "builtins", "s2sgrad", "operator")


def source_lines(code: types.CodeType, module_globals: dict | None = None
                 ) -> tuple[list[str], int]:
    """The lines of the function (or lambda) whose code is ``code``, and the number of the
    first: what ``inspect.getsourcelines`` gives, read through ``linecache`` without its
    search of every loaded module for the file's module (most of a first compile's time).
    A file changed on disk since it was read is read again."""
    filename = code.co_filename
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        raise OSError("could not get source code")
    first = code.co_firstlineno
    if not 1 <= first <= len(lines):
        raise OSError("lineno is out of bounds")
    return inspect.getblock(lines[first - 1:]), first


def unwrap(fn: Any) -> Callable:
    """The plain Python function behind a ``@grad`` Function, a bound method, a
    ``staticmethod`` or a cache (``functools.lru_cache``), never behind another wrapper:
    ``__wrapped__`` names the function a decorator wraps, not the code that runs."""
    while True:
        if hasattr(fn, "fn") and callable(fn.fn) and hasattr(fn, "compiled_for"):
            fn = fn.fn
        elif inspect.ismethod(fn) or isinstance(fn, (staticmethod, classmethod)):
            fn = fn.__func__
        elif isinstance(fn, functools._lru_cache_wrapper):
            fn = fn.__wrapped__
        else:
            return fn


def made_by_transform(fn: Any) -> str | None:
    """What a function returned by ``vjp``, ``jacobian`` or ``hessian`` is (``'the
    pullback of vjp(f)'``), or None. Differentiating one is higher order through it, which
    is not followed (``gradient`` and ``value_and_grad`` return Derivatives, which are:
    higher.py)."""
    return getattr(fn, "_s2sgrad_transform", None)


def _refuse_transform(fn: Callable, made: str) -> TransformError:
    """Placed at the user's function the transform was made of (a jacobian's), else at the
    user's line that asked for the derivative (a pullback is s2sgrad's own closure)."""
    pullback = hasattr(fn, "_s2sgrad_transpose")
    code = getattr(inspect.unwrap(fn), "__code__", None)
    where = (code.co_filename, code.co_firstlineno, 0) if code is not None and not \
        in_package(code.co_filename) else user_frame()
    return TransformError(
        f"cannot differentiate {made}: derivatives are followed through s2sgrad.gradient "
        "and s2sgrad.value_and_grad" + (", and s2sgrad.vjp and s2sgrad.jvp of a pullback,"
                                       if pullback else ",") +
        " not through a jacobian or a hessian, or a pullback called inside differentiated "
        "code", *where,
        hint="Differentiate s2sgrad.gradient(f) or s2sgrad.value_and_grad(f) instead (a "
             "Jacobian of a gradient is s2sgrad.hessian(f))" + (
                 "; the pullback's own pullback is s2sgrad.vjp(pullback, seed)."
                 if pullback else "."))


def implicit_paths(fn: Callable) -> list[tuple[str, ...]]:
    """Values a function reads that a caller may hold as Tensors: attribute chains rooted at
    a parameter (``self.W``, ``model.layer.b``) and names from outside (globals, closures)."""
    node = parse(fn).node
    params = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    local = params | {n.id for n in gast.walk(node)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    paths: dict[tuple[str, ...], None] = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Attribute) and isinstance(n.ctx, gast.Load):
            chain = syntax.dotted_name(n)
            if chain is not None and chain.split(".")[0] in params:
                paths[tuple(chain.split("."))] = None
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in local:
            paths[(n.id,)] = None
    return list(paths)


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _is_running_code(code: types.CodeType, lines: list[str],
                     module_globals: dict | None = None) -> bool:
    """Does the source ``inspect`` reads compile to the code object that runs? A file edited
    after import is read anew while Python still runs the old function. The whole file is
    compiled (the bytecode of a def depends on its module: imported names, future flags)
    and the function that starts on the same line is compared; a file that no longer
    compiles cannot be checked and is let through (its def is parsed on its own next), and
    so is source that is not a file (linecache holds it without a modification time). A
    module whose asserts pytest rewrote when it imported it (a test file: its globals hold
    pytest's helpers) is compiled as pytest compiled it."""
    text = "".join(linecache.getlines(code.co_filename))
    entry = linecache.cache.get(code.co_filename)
    if not text or (entry is not None and entry[1] is None):
        return True  # source registered by whoever made the code (a notebook cell, our ops)
    rewritten = module_globals is not None and "@pytest_ar" in module_globals
    key = (code.co_filename, hash(text), code.co_flags & _FUTURE_FLAGS, rewritten)
    module = _compiled_files.get(key)
    if module is None:
        try:
            module = compile(_as_pytest_ran(text, code.co_filename) if rewritten else text,
                             code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS,
                             dont_inherit=True)
        except (SyntaxError, ValueError, ImportError):
            return True
        if len(_compiled_files) > 64:
            _compiled_files.clear()
        _compiled_files[key] = module
    mine = _fingerprint(code)  # (lambdas on one line share a name and a line)
    return any(_fingerprint(found) == mine
               for found in _find_code(module, code.co_name, code.co_firstlineno))


_compiled_files: dict[tuple, types.CodeType] = {}


def _as_pytest_ran(text: str, filename: str) -> ast.Module:
    """The module tree of a test file with its asserts rewritten as pytest rewrites them when
    it imports the file (their messages show the values compared)."""
    from _pytest.assertion.rewrite import rewrite_asserts
    tree = ast.parse(text, filename)
    rewrite_asserts(tree, text.encode(), module_path=filename)
    return tree


def _find_code(code: types.CodeType, name: str, line: int) -> list[types.CodeType]:
    found = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == line:
                found.append(const)
            found += _find_code(const, name, line)
    return found


def _fingerprint(code: types.CodeType) -> tuple:
    consts = tuple(_fingerprint(c) if isinstance(c, types.CodeType) else (type(c), repr(c))
                   for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, consts)


def _lift(node: gast.FunctionDef, lifted: dict[str, str]) -> None:
    """Replace reads of the lifted paths by keyword-only parameters named for them."""

    class Lift(gast.NodeTransformer):
        def visit_Attribute(self, n: gast.Attribute) -> gast.expr:
            chain = syntax.dotted_name(n)
            if chain in lifted and isinstance(n.ctx, gast.Load):
                return gast.copy_location(syntax.name(lifted[chain]), n)
            return self.generic_visit(n)

        def visit_Name(self, n: gast.Name) -> gast.expr:
            if n.id in lifted and isinstance(n.ctx, gast.Load):
                return gast.copy_location(syntax.name(lifted[n.id]), n)
            return n

    for k, stmt in enumerate(node.body):
        node.body[k] = Lift().visit(stmt)
    for name in lifted.values():
        node.args.kwonlyargs.append(syntax.param(name))
        node.args.kw_defaults.append(None)


def _capture(node: gast.FunctionDef, holder: str, names: tuple[str, ...]) -> None:
    """A nested function as its closures are compiled: a first parameter ``holder`` that
    holds what the function closes over, in the order of ``names``, read into the names
    before the body (``beta, gamma = rhs``)."""
    (node.args.posonlyargs or node.args.args).insert(0, syntax.param(holder))
    if names:
        target = syntax.tuple_([syntax.name(n, store=True) for n in names], store=True)
        node.body.insert(0, gast.copy_location(syntax.assign(target, syntax.name(holder)),
                                               node))


def _only_read(node: gast.FunctionDef, name: str | None) -> bool:
    """Is ``name`` only passed on (``*args``, ``**kwargs``), indexed or measured (len), so
    that what it holds is what the call received? A method call (kwargs.update(...),
    kwargs.setdefault(...)) may change it, and a spread would then pass stale items."""
    if name is None:
        return False
    allowed: set[int] = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Starred) or (isinstance(n, gast.keyword) and n.arg is None):
            allowed.add(id(n.value))
        elif isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load):
            allowed.add(id(n.value))  # read an item (kwargs[k] = v changes the dict)
        elif isinstance(n, gast.Call) and syntax.is_name(n.func, "len") and len(n.args) == 1:
            allowed.add(id(n.args[0]))
    return all(id(n) in allowed for n in gast.walk(node)
               if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load))


def _spread(node: gast.FunctionDef, count: int | None, keys: tuple | None) -> None:
    """Pass ``*args`` and ``**kwargs`` on item by item: ``fn(*args, **kwargs)`` becomes
    ``fn(args[0], args[1], scale=kwargs['scale'])`` for the number of positional and the
    keywords of this specialisation (a decorator's wrapper passes its arguments on so)."""
    star = node.args.vararg.id if node.args.vararg is not None and count is not None else None
    double = node.args.kwarg.id if node.args.kwarg is not None and keys is not None else None
    stored = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)}
    star = star if star not in stored and _only_read(node, star) else None
    double = double if double not in stored and _only_read(node, double) else None
    if star is None and double is None:
        return
    for call in gast.walk(node):
        if not isinstance(call, gast.Call):
            continue
        args = []
        for arg in call.args:
            if star and isinstance(arg, gast.Starred) and syntax.is_name(arg.value, star):
                args.extend(gast.copy_location(syntax.subscript(
                    syntax.name(star), syntax.const(k)), arg) for k in range(count))
            else:
                args.append(arg)
        call.args = args
        keywords = []
        for kw in call.keywords:
            if double and kw.arg is None and syntax.is_name(kw.value, double):
                keywords.extend(gast.copy_location(syntax.keyword(key, gast.copy_location(
                    syntax.subscript(syntax.name(double), syntax.const(key)), kw.value)),
                    kw.value) for key in keys)
            else:
                keywords.append(kw)
        call.keywords = keywords


def _def(source: str, lines: list[str], first: int, filename: str,
         what: str) -> gast.FunctionDef:
    """The def that starts ``lines``, with positions in the user's file."""
    dedented = textwrap.dedent(source)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != source else 0
    node = gast.parse(dedented).body[0]
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
    return node


def _lambda_def(code: types.CodeType, what: str) -> gast.FunctionDef:
    """The lambda whose code is ``code``, as ``def name(params): return body``. Several
    lambdas may share a line: the one meant is the innermost whose extent holds every
    position its code object records (Python 3.11 keeps line and column per instruction)
    and whose parameters are the code's. It is named for what it is assigned to or passed
    as (``act = lambda v: ...`` is ``act``), else for its line (``lambda_12``)."""
    filename, line = code.co_filename, code.co_firstlineno
    tree = file_tree(filename)
    positions = getattr(code, "co_positions", None)  # Python 3.11 on
    spans = [p for p in positions() if None not in p and p[:2] != p[2:] and
             (p[0], p[2]) != (p[1], p[3])] if positions is not None else []
    count = code.co_argcount + code.co_kwonlyargcount + bool(
        code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    params = code.co_varnames[:count]
    found: list[tuple[gast.Lambda, str]] = []
    for owner in gast.walk(tree) if tree is not None else ():
        for lam, name in _lambdas_of(owner, f"lambda_{line}"):
            if lam.lineno != line or _params(lam.args) != params:
                continue
            start, end = (lam.lineno, lam.col_offset), (lam.end_lineno, lam.end_col_offset)
            if all(start <= (p[0], p[2]) and (p[1], p[3]) <= end for p in spans):
                found.append((lam, name))
    if not found:
        raise TransformError(
            f"cannot differentiate the lambda {what}: its source is not found in "
            f"{filename} at line {line}", filename, line, 0,
            hint="Define it with def in a .py file (or a notebook cell).")
    if positions is None and len(found) > 1:
        raise TransformError(
            f"cannot differentiate the lambda {what}: {len(found)} lambdas with its "
            f"parameters are on line {line}, and this Python does not record which one a "
            "code object is (Python 3.11 does)", filename, line, 0,
            hint="Put each lambda on its own line, or define it with def.")
    lam, name = min(found, key=lambda f: (f[0].end_lineno - f[0].lineno,
                                          f[0].end_col_offset - f[0].col_offset))
    lam = syntax.clone(lam)  # the file's tree is shared by every lambda in it
    ret = gast.copy_location(syntax.ret(lam.body), lam.body)
    node = syntax.function(name, [], [ret])
    node.args = lam.args
    return gast.copy_location(node, lam)


def _params(args: gast.arguments) -> tuple[str, ...]:
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.id for a in (args.vararg, args.kwarg) if a is not None]
    return tuple(names)


def _lambdas_of(node: gast.AST, unnamed: str):
    """The lambdas directly under ``node``, each with the name it is bound to there."""
    for field_name, value in gast.iter_fields(node):
        for child in value if isinstance(value, list) else [value]:
            if not isinstance(child, gast.Lambda):
                continue
            name = unnamed
            if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], gast.Name):
                name = node.targets[0].id
            elif isinstance(node, gast.keyword) and node.arg is not None:
                name = node.arg
            yield child, name


def file_tree(filename: str) -> gast.Module | None:
    """The module tree of a source file as linecache holds it (cached), or None."""
    text = "".join(linecache.getlines(filename))
    key = (filename, hash(text))
    tree = _parsed_files.get(key)
    if tree is None:
        try:
            tree = gast.parse(text)
        except SyntaxError:
            return None
        if len(_parsed_files) > 16:
            _parsed_files.clear()
        _parsed_files[key] = tree
    return tree


_parsed_files: dict[tuple, gast.Module] = {}


def imported_names(stmt: gast.stmt) -> list[tuple[str, str, str | None]]:
    """The names an import statement binds, each with the module it imports and the name
    taken from that module (None: the module itself). ``import a.b`` binds ``a``."""
    if isinstance(stmt, gast.Import):
        return [(a.asname, a.name, None) if a.asname else
                (a.name.split(".")[0], a.name.split(".")[0], None) for a in stmt.names]
    module = "." * stmt.level + (stmt.module or "")
    return [(a.asname or a.name, module, a.name) for a in stmt.names]


def _imports(node: gast.FunctionDef, module_globals: dict, filename: str
             ) -> dict[str, types.CellType]:
    """The objects the imports at the top level of the body bind, in cells (fence refuses
    an import elsewhere, and one whose names the function also assigns or reads before it)."""
    package = module_globals.get("__package__") or None
    cells: dict[str, types.CellType] = {}
    for stmt in node.body:
        if not isinstance(stmt, (gast.Import, gast.ImportFrom)):
            continue
        for name, module, attr in imported_names(stmt):
            try:
                value = importlib.import_module(module, package)
                if attr is not None:
                    value = getattr(value, attr) if hasattr(value, attr) else \
                        importlib.import_module(f"{module}.{attr}", package)
            except (ImportError, ValueError, TypeError) as exc:
                raise TransformError(
                    f"cannot import {attr or module!r} here: {exc}", filename,
                    stmt.lineno, stmt.col_offset,
                    hint="The function imports it when it runs, and so does the compiler "
                         "when it reads the function: make it importable.") from None
            cells[name] = types.CellType(value)
    return cells


def parse(fn: Callable, lifted: dict[str, str] | None = None,
          spread: tuple[int | None, tuple | None] = (None, None)) -> Parsed:
    """``lifted`` maps paths the function reads (``'self.W'``) to parameters that replace
    them: values a caller passes in explicitly, so that they can be differentiated.
    ``spread`` is the number of values ``*args`` holds and the keys ``**kwargs`` holds in
    this specialisation, if known: calls that pass them on are written out item by item."""
    fn = unwrap(fn)
    what = getattr(fn, "__qualname__", repr(fn))
    made = made_by_transform(fn)
    if made is not None:
        raise _refuse_transform(fn, made)
    if not inspect.isfunction(fn):
        raise TransformError(
            f"cannot differentiate {what!s}: it is not a Python function with source "
            f"(it is {type(fn).__name__})",
            hint="Wrap it in a Python function, or register a derivative rule for it with "
                 "@s2sgrad.vjp_rule.")
    try:  # the source of the code that runs (never that of a __wrapped__ function)
        lines, first = source_lines(fn.__code__, fn.__globals__)
    except (OSError, TypeError) as exc:
        raise TransformError(
            f"cannot read the source of {what}: {exc}",
            fn.__code__.co_filename, fn.__code__.co_firstlineno, 0,
            hint="Functions typed at the interactive prompt or built with exec() have no "
                 "source to read; define the function in a .py file (or a notebook cell).",
        ) from None
    filename = fn.__code__.co_filename
    source = "".join(lines)
    if not _is_running_code(fn.__code__, lines, fn.__globals__):
        raise TransformError(
            f"cannot differentiate {what}: its source file has changed since the function was "
            "defined, so the code that runs is not the code in the file",
            filename, first, 0,
            hint="Reload the module (importlib.reload) or restart Python, so that the "
                 "function and its file agree.")
    if fn.__code__.co_name == "<lambda>":  # even a lambda given another __name__
        node = _lambda_def(fn.__code__, what)
    else:
        node = _def(source, lines, first, filename, what)
    node.decorator_list = []
    captures = getattr(fn, "_s2sgrad_captures", None)
    if captures is not None:  # a nested function made into a value: see nested_function
        _capture(node, *captures)
    if lifted:
        _lift(node, lifted)
    _spread(node, *spread)
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
    closure.update(_imports(node, fn.__globals__, filename))
    return Parsed(fn, node, filename, params, local_names, closure, fn.__globals__)


# -- nested functions as values ------------------------------------------------------------

# Per code object of a nested function or lambda, the function that stands for each of its
# closures (by the module's globals and the defaults): held while the code object lives.
_NESTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def nested_code(fn: Callable, node: gast.FunctionDef | gast.Lambda,
                params: tuple[str, ...]) -> types.CodeType | None:
    """The code object of the nested def or lambda ``node`` of ``fn`` (at any depth), found
    by its name and first line, a lambda by the extent of its positions (Python 3.11 keeps
    them per instruction) and its parameters ``params``; None if it is not ``fn``'s."""
    if isinstance(node, gast.FunctionDef):
        line = min([node.lineno] + [d.lineno for d in node.decorator_list])
        found = _find_code(fn.__code__, node.name, line)
        return found[0] if len(found) == 1 else None
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    found = []  # (how far its positions reach beyond the others', code)
    for code in _find_code(fn.__code__, "<lambda>", node.lineno):
        count = code.co_argcount + code.co_kwonlyargcount + bool(
            code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
        positions = getattr(code, "co_positions", None)
        spans = [p for p in positions() if None not in p and p[:2] != p[2:] and
                 (p[0], p[2]) != (p[1], p[3])] if positions is not None else []
        if code.co_varnames[:count] != params or not all(
                start <= (p[0], p[2]) and (p[1], p[3]) <= end for p in spans):
            continue
        reach = (min((p[0], p[2]) for p in spans), tuple(-v for v in max(
            (p[1], p[3]) for p in spans))) if spans else None
        found.append((reach, code))
    if len(found) == 1:
        return found[0][1]
    if not found or any(reach is None for reach, _ in found):
        return None  # not told apart (a Python that keeps no positions)
    return min(found, key=lambda f: f[0])[1]  # a lambda inside it reaches less far


def nested_function(code: types.CodeType, module_globals: dict, defaults: tuple,
                    holder: str) -> types.FunctionType:
    """The function that stands for every closure of the nested def or lambda ``code``,
    compiled once for all of them: its first parameter ``holder`` holds the values of its
    free variables (a tuple, in the order of ``co_freevars``), which ``parse`` reads into
    them before its body, so that a gradient flows back into what it closes over. Its
    cells stay empty; its signature (``inspect.signature``) shows ``holder`` first."""
    table = _NESTED.setdefault(code, {})
    key = (id(module_globals), defaults, holder)
    fn = table.get(key)
    if fn is None or fn.__globals__ is not module_globals:
        fn = types.FunctionType(code, module_globals, code.co_name, defaults or None,
                                tuple(types.CellType() for _ in code.co_freevars))
        fn._s2sgrad_captures = (holder, code.co_freevars)
        signature = inspect.signature(fn)
        params = list(signature.parameters.values())
        kind = inspect.Parameter.POSITIONAL_ONLY if code.co_posonlyargcount else \
            inspect.Parameter.POSITIONAL_OR_KEYWORD
        fn.__signature__ = signature.replace(parameters=[inspect.Parameter(holder, kind)] +
                                             params)
        table[key] = fn
    return fn
