"""Calls that write into an array they are given, and calls whose value is dropped.

Takes a call of user-level Python; emits, through the walk, what it stands for:

    np.multiply(a, b, out=c)    c[...] = np.multiply(a, b)           the value: c itself
    np.exp(x, y)                y[...] = np.exp(x)                    (a ufunc's output
                                                                       passed by position)
    np.add.at(y, idx, v)        y_1 = __setitem__(y[idx], v, 'add')   each occurrence of a
                                                                       repeated position adds
    np.sum(y)  (value unused)   nothing: a NumPy function with a derivative rule changes
                                none of its arguments, so only its arguments are evaluated

An ``out=`` array is written as an element write of the whole array, ``c[...] = value``
(the same storage model, and the same checks of what shares its memory); ``ufunc.at``
is an element write whose region receives every occurrence of a repeated position (for
``np.add`` and ``np.subtract``, whose adjoint does not depend on the values). Only a local
variable is written this way; anything else is left to the analysis, which refuses it.
"""

from __future__ import annotations

import inspect
from typing import Any

import gast
import numpy as np

from ... import syntax
from ...rules import registry
from .walk import Walk

# ufuncs whose ``.at`` is followed, by name (the element write's third argument)
SCATTERS = {"add": np.add, "subtract": np.subtract}


class Outputs:
    def __init__(self, walk: Walk, expressions: Any, assignments: Any):
        self.walk, self.parsed = walk, walk.parsed
        self.expressions, self.assignments = expressions, assignments
        self.writes: set[gast.stmt] = set()  # the element writes of out= (``Normalized``)

    def is_local(self, node: gast.expr) -> bool:
        return isinstance(node, gast.Name) and (
            node.id in self.parsed.local_names or node.id in self.walk.versions.synthetic)

    def library_function(self, call: gast.Call) -> Any:
        """The NumPy or SciPy function (or ufunc) a call runs, known here; else None."""
        if not isinstance(call, gast.Call) or not self.expressions.is_static(call.func) or any(
                isinstance(a, gast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):
            return None
        found = self.parsed.resolve(call.func)
        module = getattr(found, "__module__", None) or ""
        if isinstance(found, np.ufunc) or isinstance(getattr(found, "__self__", None), np.ufunc) \
                or module.split(".")[0] in ("numpy", "scipy"):
            return found  # (a ufunc's method: np.add.reduce)
        return None

    # --- out= ------------------------------------------------------------------------------

    def output_of(self, call: gast.expr) -> tuple[gast.Call, gast.Name] | None:
        """A call of a library function that writes its result into a local array (``out=``
        or a ufunc's extra positional argument): the call without it, and the array."""
        found = self.library_function(call)
        if found is None:
            return None
        keywords = {k.arg: k.value for k in call.keywords}
        args = list(call.args)
        if "out" in keywords:
            out = keywords.pop("out")
        elif isinstance(found, np.ufunc) and found.nout == 1 and len(args) == found.nin + 1:
            out = args.pop()
        else:
            return None
        if isinstance(out, gast.Tuple) and len(out.elts) == 1:  # out=(c,): one output
            out = out.elts[0]
        if not self.is_local(out) or (isinstance(found, np.ufunc) and "where" in keywords):
            return None  # (a ufunc's where= keeps out's values elsewhere: left refused)
        plain = syntax.call(syntax.clone(call.func), args,
                            [(k, v) for k, v in keywords.items()])
        return syntax.located(plain, call), out

    def write_output(self, call: gast.Call, plain: gast.Call, out: gast.Name) -> gast.Name:
        """``out[...] = plain``, as the user's element write; the array is the value."""
        region = syntax.located(syntax.subscript(syntax.name(out.id), syntax.const(Ellipsis),
                                                 store=True), out)
        self.walk.statement(syntax.located(syntax.assign(region, plain), call))
        self.writes.add(self.walk.out[-1])
        return syntax.located(syntax.name(out.id), out)

    # --- ufunc.at --------------------------------------------------------------------------

    def scatter_of(self, call: gast.expr) -> tuple[str, list[gast.expr]] | None:
        """``np.add.at(y, idx, v)``: the ufunc's name and the arguments; else None."""
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "at" and self.expressions.is_static(call.func.value)):
            return None
        ufunc = self.parsed.resolve(call.func.value)
        name = next((k for k, u in SCATTERS.items() if u is ufunc), None)
        if name is None or len(call.args) != 3 or call.keywords or any(
                isinstance(a, gast.Starred) for a in call.args):
            return None
        return name, list(call.args)

    def scatter(self, call: gast.expr) -> bool:
        """``np.add.at(y, idx, v)`` on a local array: an element write that adds each
        occurrence (emitted here); False for any other call."""
        found = self.scatter_of(call)
        if found is None:
            return False
        name, (base, index, value) = found
        if not self.is_local(base):
            raise self.parsed.error(
                f"np.{name}.at(a, ...) changes a in place: here a is not a variable of the "
                "function", base, "Make a local array first (`y = np.zeros(n)`), and add "
                f"into it: `np.{name}.at(y, idx, v)`.")
        self.assignments.scatter(name, base, index, value, call)
        return True

    def written(self, body: list[gast.stmt]) -> set[str]:
        """The local variables the calls in ``body`` write into (a loop's carried ones)."""
        found = set()
        for node in gast.walk(syntax.module(body)):
            output = self.output_of(node) if isinstance(node, gast.Call) else None
            scatter = self.scatter_of(node) if isinstance(node, gast.Call) else None
            if output is not None:
                found.add(output[1].id)
            elif scatter is not None and self.is_local(scatter[1][0]):
                found.add(scatter[1][0].id)
        return found

    # --- values dropped --------------------------------------------------------------------

    def is_idle(self, call: gast.expr) -> bool:
        """A call whose value is dropped and which changes nothing: a NumPy or SciPy function
        with a derivative rule, given no output array and not told to write into its input
        (``copy=False``, ``overwrite_a=True``); draws and other functions without a rule are
        kept, and refused where they receive a differentiated array."""
        found = self.library_function(call)
        if found is None or (registry.lookup(found) is None
                             and registry.same_primitive(found) is None):
            return False
        if getattr(found, "__name__", None) == "at":  # np.add.at changes its first argument
            return False
        if isinstance(found, np.ufunc):
            return len(call.args) <= found.nin and "out" not in {k.arg for k in call.keywords}
        try:
            bound = inspect.signature(found).bind_partial(
                *call.args, **{k.arg: k.value for k in call.keywords})
        except (TypeError, ValueError):  # no signature, or not a call NumPy takes
            return False
        # np.nan_to_num(x, copy=False) and scipy's overwrite_a=True write into an argument
        writes = [name for name in bound.arguments if name == "out" or name == "copy" or
                  name.startswith("overwrite")]
        return all(name != "out" and syntax.is_const(bound.arguments[name]) and
                   bound.arguments[name].value is (name == "copy") for name in writes)

    def idle(self, call: gast.Call) -> None:
        """Its arguments evaluated, in order (they may call functions); the call dropped."""
        for arg in call.args:
            self.expressions.atom(arg)
        for keyword in call.keywords:
            self.expressions.atom(keyword.value)
