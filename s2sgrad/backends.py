"""After codegen, for arrays of another library: the generated code does only what that
library can do with its arrays where they are.

Before: the generated forward and adjoint (or tangent function) of a compile whose arguments
include arrays of a backend (``analyze.values.BACKENDS``: Dask, CuPy). Those libraries
implement NumPy's dispatch protocols, so the NumPy-style code s2sgrad generates runs on their
arrays unchanged: ``np.tanh(x)`` runs ``dask.array.tanh``, ``x.T @ g`` is a lazy product.

After: the same code, checked; or a TransformError at the user's line, naming the backend,
for the first statement that would need the arrays' values in this process (a Dask array has
none until it is computed; a CuPy array's are on the GPU) or that the library cannot do:

    if s > 0: ...                 a test on an array (``if``, ``while``, ``and``/``or``, ``x if c
                                  else y``): Python asks for the value now
    float(np.sum(x)), x.item()    a conversion to a Python number, a list or a NumPy array
    out[idx] += v                 a write into positions of an array (the scatter-add of
                                  ``y[idx] += v``'s adjoint included)
    np.sort(x)                    a NumPy function the library does not have (NumPy would
                                  convert the array and compute it here)

The checks read names in the generated code through what the code's names resolve to (the
compile's bindings, the function's globals and builtins) and what the analysis knows of the
user's values; a runtime helper of s2sgrad passes only where it is known to run on any
array that implements NumPy's protocols (``PORTABLE_HELPERS``).

Part of the compiler layer.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import linecache
import types
from typing import Any

import numpy as np

from .analyze import Abstract
from .analyze.values import backend_of as backend_of_value
from .errors import TransformError
from .runtime import containers, unbroadcast

# The library each backend's arrays come from: whose functions NumPy's dispatch calls
# (``DISPATCHING``), or, for JAX, whose functions the code calls itself: the templates read
# NumPy through one name, which a compile for JAX binds to ``jax.numpy`` (``namespaced``).
NAMESPACES = {"dask": "dask.array", "cupy": "cupy", "jax": "jax.numpy"}
DISPATCHING = frozenset({"dask", "cupy"})
ALIASES = {"jax": "jnp"}  # the name a library's users give its namespace

# s2sgrad's helpers in generated code that compute only with NumPy's dispatched functions,
# Python's containers and the arrays' operators: they run on a backend's arrays as they are.
PORTABLE_HELPERS = frozenset({
    unbroadcast.unbroadcast, containers.unbroadcast_each, containers.tree_add,
    containers.concat, containers.repeat, containers.leading, containers.trailing,
    containers.add_item, containers.add_leaf, containers.item_or_absent,
})

# Builtins that turn an array into a Python value (asking for the array's values now).
_CONVERSIONS = frozenset({float, int, bool, complex})
_CONVERTING_METHODS = frozenset({"item", "tolist", "tobytes", "__array__", "__float__",
                                 "__int__", "__bool__"})
# Functions that give a Python number or tuple of an array without reading its values.
_SIZES = frozenset({len, np.size, np.ndim, np.shape, np.result_type})
_NUMPY_CONVERSIONS = frozenset({np.asarray, np.array, np.asanyarray, np.ascontiguousarray,
                                np.copyto})


def backend_of(signature: dict[str, Abstract]) -> str | None:
    """The backend of the arrays among the arguments (in containers too), None for NumPy's;
    a TransformError where two backends meet (their arrays do not mix)."""
    found: set[str] = set()

    def walk(value: Abstract) -> None:
        if value.backend is not None:
            found.add(value.backend)
        for _, item in value.items or ():
            if isinstance(item, Abstract):
                walk(item)

    for value in signature.values():
        walk(value)
    if len(found) > 1:
        raise TypeError(f"arrays of {' and '.join(sorted(found))} among the arguments: "
                        "one call works on the arrays of one library")
    return next(iter(found), None)


def on(value: Abstract, backend: str) -> Abstract:
    """``value`` with its arrays (in containers too) those of ``backend``: what a callee
    receives from a caller compiled for that library."""
    if value.kind == "array" and value.backend is None:
        return dataclasses.replace(value, backend=backend)
    if value.items:
        items = tuple((k, on(v, backend) if isinstance(v, Abstract) else v)
                      for k, v in value.items)
        return dataclasses.replace(value, items=items)
    return value


def namespaced(bindings: dict[str, Any], backend: str | None, taken: dict[str, Any]
               ) -> tuple[dict[str, Any], dict[str, str]]:
    """The generated code's bindings for ``backend``, and the names to rename in its code:
    for a library whose arrays do not dispatch NumPy's functions (JAX), NumPy and its
    submodules bound to the library's namespace under the name its users give it
    (``jnp``), so that the templates call its functions and the code says so; for the
    others, the bindings as they are. ``taken``: what the code's other names name (the alias
    is used where it is free, or names the namespace already)."""
    if backend is None or backend in DISPATCHING:
        return bindings, {}
    space = _namespace(backend)
    alias = ALIASES[backend]
    swapped, renames = {}, {}
    for name, value in bindings.items():
        if value is np:
            value = space
            if taken.get(alias, space) is space and alias not in bindings:
                renames[name], name = alias, alias
        elif isinstance(value, types.ModuleType) and value.__name__.startswith("numpy."):
            value = getattr(space, value.__name__.partition(".")[2], value)
        swapped[name] = value
    return swapped, renames


def refuse_numpy_calls(backend: str, analysis: Any) -> None:
    """For a library whose arrays do not dispatch NumPy's functions: refuse, at the user's
    line, a call of one of NumPy's functions in the user's code (it would convert the
    arrays to NumPy's); the code must call the library's own."""
    if backend in DISPATCHING:
        return
    for stmt, op in analysis.ops.items():
        func = getattr(op, "primitive", None)
        module = getattr(func, "__module__", None) or ""
        if isinstance(func, np.ufunc) or module == "numpy" or module.startswith("numpy."):
            name = getattr(func, "__name__", "?")
            raise analysis.normalized.parsed.error(
                f"numpy.{name} on {backend} arrays: NumPy converts them to its own arrays",
                stmt, f"Call {NAMESPACES[backend]}.{name} instead.")


def ones_like(value: Any) -> Any:
    """A seed of ones shaped like ``value``, an array of its own library."""
    backend = backend_of_value(value)
    return (np if backend in DISPATCHING else _namespace(backend)).ones_like(value)


def check(backend: str, filename: str, names: dict[str, Any],
          values: dict[str, Abstract]) -> None:
    """Refuse the first statement of the generated file ``filename`` (as linecache holds
    it) that ``backend`` cannot run. ``names``: what the code's free names resolve to (the
    function's globals, its closure, the compile's bindings); ``values``: what the analysis
    knows of the user's names."""
    tree = ast.parse("".join(linecache.getlines(filename)))
    _Check(backend, _namespace(backend), names, values, filename).visit(tree)


def _namespace(backend: str) -> Any:
    try:
        return importlib.import_module(NAMESPACES[backend])
    except ImportError:  # the arrays came from it: it is installed
        return None


class _Check(ast.NodeVisitor):
    def __init__(self, backend: str, namespace: Any, names: dict[str, Any],
                 values: dict[str, Abstract], filename: str):
        self.backend = backend
        self.namespace = namespace
        self.names = names
        self.values = values
        self.filename = filename
        self.local: set[str] = set()

    # -- what a name or an expression is ----------------------------------------------------

    def array(self, node: ast.expr) -> bool:
        """Whether ``node`` may be an array: a user's name the analysis knows as one, or any
        value the generated code computed (a cotangent, a temporary of the adjoint)."""
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Name):
            value = self.values.get(node.id)
            if value is not None:
                return value.kind == "array"
            return node.id not in self.names  # the adjoint's own names: assume an array
        if isinstance(node, ast.Call) and self.resolve(node.func) in _SIZES:
            return False
        if isinstance(node, ast.Compare | ast.BinOp | ast.UnaryOp | ast.Call | ast.Subscript):
            return any(self.array(n) for n in ast.iter_child_nodes(node)
                       if isinstance(n, ast.expr))
        return False

    def resolve(self, node: ast.expr) -> Any:
        """What a dotted name of free names resolves to, or None."""
        if isinstance(node, ast.Name):
            if node.id in self.local:
                return None
            if node.id in self.names:
                return self.names[node.id]
            return getattr(builtins, node.id, None)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, (types.ModuleType, np.ufunc, type)):
                return getattr(base, node.attr, None)
        return None

    def refuse(self, node: ast.AST, what: str, hint: str) -> None:
        raise TransformError(
            f"{what}, on {self.backend} arrays: {self.backend} cannot do it where the arrays "
            "are, without bringing their values into this process", self.filename,
            node.lineno, node.col_offset, hint)

    # -- statements ---------------------------------------------------------------------------

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name != "__s2sgrad_make__":  # whose parameters are the bindings
            self.local.update(a.arg for a in node.args.args + node.args.kwonlyargs)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node)
        self.generic_visit(node)

    def _target(self, target: ast.expr, stmt: ast.stmt) -> None:
        for t in ast.walk(target):
            if isinstance(t, ast.Name):
                self.local.add(t.id)
        if isinstance(target, ast.Subscript) and self.array(target.value):
            self.refuse(stmt, "a write into positions of an array",
                        "Build the result from whole-array operations (np.where, a product "
                        "with a one-hot matrix), or compute the arrays first.")

    def visit_If(self, node: ast.If) -> None:
        self._test(node.test, node)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._test(node.test, node)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._test(node.test, node)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._test(node.operand, node)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        for value in node.values[:-1]:
            self._test(value, node)
        self.generic_visit(node)

    def _test(self, test: ast.expr, node: ast.AST) -> None:
        if isinstance(test, ast.Name) and test.id not in self.values:
            return  # a flag the forward saved for the adjoint: a Python bool
        if self.array(test):
            self.refuse(node, "a test on the value of an array",
                        "Decide with whole-array operations (np.where(cond, a, b)), or "
                        "compute the value first and pass it in as a number.")

    # -- calls ----------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        func = self.resolve(node.func)
        operands = [*node.args, *(k.value for k in node.keywords)]
        if func in _CONVERSIONS and any(self.array(a) for a in operands):
            self.refuse(node, f"{func.__name__}() of an array",
                        "Keep the value an array (np.sum(x) rather than float(np.sum(x))).")
        if func in _NUMPY_CONVERSIONS and any(self.array(a) for a in operands):
            self.refuse(node, f"numpy.{func.__name__}() of an array",
                        "Leave the array as it is.")
        if isinstance(node.func, ast.Attribute) and func is None:
            method = node.func.attr
            if method in _CONVERTING_METHODS and self.array(node.func.value):
                self.refuse(node, f".{method}() of an array",
                            "Keep the value an array.")
            if method == "at":  # np.add.at; jax.numpy's returns a new array instead
                self._scatter(node)
            if (hasattr(np.ndarray, method) and self.namespace is not None
                    and self.array(node.func.value)
                    and not hasattr(getattr(self.namespace, "Array", None) or
                                    getattr(self.namespace, "ndarray", object), method)):
                self.refuse(node, f"the array method .{method}()",
                            f"{self.backend}'s arrays have no such method.")
        elif func is not None:
            self._function(node, func)
        self.generic_visit(node)

    def _scatter(self, node: ast.Call) -> None:
        self.refuse(node, "an accumulation into indexed positions (the adjoint of reading "
                    "x[idx] with an array of indices, or of y[idx] += v)",
                    "Index with slices, or write the selection as a product with a one-hot "
                    "matrix.")

    def _function(self, node: ast.Call, func: Any) -> None:
        module = getattr(func, "__module__", None) or ""
        if isinstance(func, np.ufunc) or module == "numpy" or module.startswith("numpy."):
            name = func.__name__
            if self.backend not in DISPATCHING:
                self.refuse(node, f"numpy.{name}, which converts {self.backend}'s arrays to "
                            "NumPy's", f"Call {NAMESPACES[self.backend]}.{name}.")
            if module.startswith(("numpy.random", "numpy.linalg", "numpy.fft")):
                space = module.split(".", 1)[1]
                ok = self.namespace is not None and hasattr(
                    getattr(self.namespace, space, None), name)
            else:
                ok = self.namespace is not None and hasattr(self.namespace, name)
            if not ok:
                self.refuse(node, f"numpy.{name}, which {self.backend} does not have",
                            "Write it with functions the library has, or compute the arrays "
                            "first.")
        elif module.startswith("s2sgrad."):
            if func in (_add_at(), _add_at_each()):
                self._scatter(node)
            elif func not in PORTABLE_HELPERS or self.backend not in DISPATCHING:
                self.refuse(node, f"s2sgrad's helper {func.__name__}()",
                            "This construct is supported on NumPy arrays only.")


def _add_at() -> Any:
    from .runtime import indexing
    return indexing.add_at


def _add_at_each() -> Any:
    from .runtime import indexing
    return indexing.add_at_each
