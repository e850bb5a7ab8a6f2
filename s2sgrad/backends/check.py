"""The check after codegen, for another library's arrays: the generated code does only what
that library can do with its arrays where they are.

Before: the generated forward and adjoint (or tangent function), as linecache holds them.
After:  the same code, checked; or a TransformError at the user's line, naming the library,
for the first statement that would need the arrays' values in this process (a Dask array has
none until it is computed; a CuPy array's are on the GPU) or that the library cannot do:

    if s > 0: ...                 a test on an array (``if``, ``while``, ``and``/``or``, ``x if c
                                  else y``): Python asks for the value now (a namespace of
                                  the standard answers it as the standard says: allowed)
    float(np.sum(x)), x.item()    a conversion to a Python number, a list or a NumPy array
    out[idx] += v                 a write into positions of an array by the user's code, and
                                  an accumulation the library has no implementation of
    np.sort(x)                    a NumPy function the library does not have (NumPy would
                                  convert the array and compute it here), or that converts
                                  the arrays of a library that does not dispatch NumPy's
    xp.outer(a, b)                a function the namespace does not have

The checks read names in the generated code through what the code's names resolve to (the
compile's bindings, the function's globals and builtins, the namespace a local name holds)
and what the analysis knows of the user's values; a runtime helper of s2sgrad passes only
where it is known to run on the library's arrays (the backend's ``helpers`` and every
library's scatter helpers).

Part of the compiler layer.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import types
from typing import Any

import numpy as np

from ..errors import TransformError
from .scatter import NUMPY_SCATTERS, SCATTERS

# Builtins that turn an array into a Python value (asking for the array's values now).
_CONVERSIONS = frozenset({float, int, bool, complex})
_CONVERTING_METHODS = frozenset({"item", "tolist", "tobytes", "__array__", "__float__",
                                 "__int__", "__bool__"})
# Functions that give a Python number or tuple of an array without reading its values.
_SIZES = frozenset({len, np.size, np.ndim, np.shape, np.result_type})
_SHAPE_ATTRIBUTES = frozenset({"shape", "size", "ndim", "dtype"})
_NUMPY_CONVERSIONS = frozenset({np.asarray, np.array, np.asanyarray, np.ascontiguousarray,
                                np.copyto})


def check(backend: Any, filename: str, names: dict[str, Any],
          values: dict[str, Any]) -> None:
    """Refuse the first statement of the generated file ``filename`` (as linecache holds
    it) that ``backend`` cannot run. ``names``: what the code's free names resolve to (the
    function's globals, its closure, the compile's bindings); ``values``: what the analysis
    knows of the user's names."""
    tree = ast.parse("".join(linecache.getlines(filename)))
    checker = _Check(backend, names, values, filename)
    checker.find_numbers(tree)
    checker.visit(tree)


class _Check(ast.NodeVisitor):
    def __init__(self, backend: Any, names: dict[str, Any], values: dict[str, Any],
                 filename: str):
        self.library = backend
        self.backend = backend.name
        self.namespace = namespace = backend.namespace()
        self.names = names
        self.values = values
        self.filename = filename
        self.local: set[str] = set()
        self.numbers: set[str] = set()  # generated names assigned numbers, not arrays
        # A namespace of the array API standard answers bool(), float() and int() of a 0-d
        # array as the standard defines them (an eager library computes the value, a lazy one
        # raises): the user's tests and conversions are the user's to make there.
        self.standard = backend.standard
        self.array_type = type(namespace.zeros(()))  # whose methods the arrays have

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
            if node.id in self.numbers:
                return False
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
            if node.id in self.local:  # a user's name holding a module (xp = ...)
                value = self.values.get(node.id)
                return value.value if value is not None and isinstance(
                    value.value, types.ModuleType) else None
            if node.id in self.names:
                return self.names[node.id]
            return getattr(builtins, node.id, None)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, (types.ModuleType, np.ufunc, type)):
                return getattr(base, node.attr, None)
        return None

    def refuse(self, node: ast.AST, what: str, hint: str, why: str | None = None) -> None:
        why = why or (f"{self.backend} cannot do it where the arrays are, without bringing "
                      "their values into this process")
        raise TransformError(f"{what}, on {self.backend} arrays: {why}", self.filename,
                             node.lineno, node.col_offset, hint)

    # -- statements ---------------------------------------------------------------------------

    def find_numbers(self, tree: ast.AST) -> None:
        """The generated code's own names that every assignment gives a number computed
        from shapes and numbers only (a count of entries), never an array."""
        assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.With):
                for name in ast.walk(node.target if not isinstance(node, ast.With) else node):
                    if isinstance(name, ast.Name):
                        assigned.setdefault(name.id, []).append(None)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    simple = isinstance(target, ast.Name)
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            assigned.setdefault(name.id, []).append(
                                node.value if simple else None)
        self.numbers = {name for name, values in assigned.items()
                        if name not in self.values and None not in values}
        changed = True
        while changed:  # a name assigned an array, or a name that may hold one, is not
            changed = False
            for name in list(self.numbers):
                if any(self.array(value) or self.reads_attribute(value)
                       for value in assigned[name]):
                    self.numbers.discard(name)
                    changed = True

    def reads_attribute(self, node: ast.expr) -> bool:
        """Whether ``node`` reads an attribute of a value other than its shape's (``X.T``
        is an array; ``X.shape``, ``math.prod`` are not)."""
        return any(isinstance(n, ast.Attribute) and n.attr not in _SHAPE_ATTRIBUTES
                   and not isinstance(self.resolve(n.value), types.ModuleType | type)
                   for n in ast.walk(node))

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
        if self.standard:
            return
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
        if func in _CONVERSIONS and not self.standard and any(self.array(a) for a in operands):
            self.refuse(node, f"{func.__name__}() of an array",
                        "Keep the value an array (np.sum(x) rather than float(np.sum(x))).")
        if func in _NUMPY_CONVERSIONS and any(self.array(a) for a in operands):
            self.refuse(node, f"numpy.{func.__name__}() of an array",
                        "Leave the array as it is.")
        if isinstance(node.func, ast.Attribute) and func is None and isinstance(
                self.resolve(node.func.value), types.ModuleType):
            module = self.resolve(node.func.value)
            self.refuse(node, f"{module.__name__}.{node.func.attr}()",
                        "Write it with the functions the library has.",
                        f"{module.__name__} has no such function")
        if isinstance(node.func, ast.Attribute) and func is None:
            method = node.func.attr
            if method in _CONVERTING_METHODS and self.array(node.func.value):
                self.refuse(node, f".{method}() of an array",
                            "Keep the value an array.")
            if method == "at":  # np.add.at; jax.numpy's returns a new array instead
                self._scatter(node)
            if (hasattr(np.ndarray, method) and self.array(node.func.value)
                    and not hasattr(self.array_type, method)):
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
            if not self.library.dispatches:
                self.refuse(node, f"numpy.{name}, which converts {self.backend}'s arrays to "
                            "NumPy's", self.library.call_instead(name))
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
            if func in NUMPY_SCATTERS:
                self._scatter(node)  # NumPy's: the backend has none (scatter.helpers)
            elif func not in self.library.helpers and func not in SCATTERS:
                self.refuse(node, f"s2sgrad's helper {func.__name__}()",
                            "This construct is supported on NumPy arrays only.")
