"""The declaration of Tensor's methods that are one operation with PyTorch's names: a row
each (name, form, target), from which ``install`` writes the methods' source, compiles it in
tensor.py's namespace and sets them on ``Tensor``, as PyTorch generates its own methods from
a declaration file. The class itself, and its bases, hold only what is not a row.

    "__add__": ("binary", "add")      def __add__(self, other): return _ops.binary("add", self, other)
    "exp":     ("numpy", "exp")       def exp(self): return _ops.numpy_call(np.exp, (self,), {})
    "floor":   ("stepwise", "floor")  def floor(self): return _stepwise(self, np.floor, "FloorBackward0")

The written source reads like the methods it replaces (``methods.source()``); tracebacks show
its lines. In the Tensor layer; imports nothing of s2sgrad.
"""

from __future__ import annotations

import linecache
from typing import Any

# form -> (parameters, the returned expression); {name} is the method's, {target} the row's
FORMS = {
    # an operator, computed by ops (compiled where a gradient is needed); r...: reflected
    "binary": ("self, other: Any", "_ops.binary({target!r}, self, other)"),
    "rbinary": ("self, other: Any", "_ops.binary({target!r}, other, self)"),
    "unary": ("self", "_ops.unary({target!r}, self)"),
    # a NumPy function without a gradient (a comparison): computed on the data
    "plain": ("self, other: Any", "_ops.plain(np.{target}, self, other)"),
    "rplain": ("self, other: Any", "_ops.plain(np.{target}, other, self)"),
    # a NumPy function of the Tensor (and of another operand), in the graph
    "numpy": ("self", "_ops.numpy_call(np.{target}, (self,), {{}})"),
    "numpy2": ("self, other: Any", "_ops.numpy_call(np.{target}, (self, other), {{}})"),
    # in place: the same Tensor, its version bumped
    "inplace": ("self, other: Any", "_ops.inplace(self, {target!r}, other)"),
    "apply_": ("self", "_ops.apply_(self, Tensor.{target})"),
    # piecewise constant: a zero gradient, and still in the graph, as in PyTorch
    "stepwise": ("self", "_stepwise(self, np.{target}, {backward!r})"),
    # a conversion to another dtype, in the graph when it is floating
    "to": ("self", "self.to(np.{target})"),
}

METHODS: dict[str, tuple[str, str]] = {
    "__add__": ("binary", "add"), "__radd__": ("rbinary", "add"),
    "__sub__": ("binary", "sub"), "__rsub__": ("rbinary", "sub"),
    "__mul__": ("binary", "mul"), "__rmul__": ("rbinary", "mul"),
    "__truediv__": ("binary", "truediv"), "__rtruediv__": ("rbinary", "truediv"),
    "__pow__": ("binary", "pow"), "__rpow__": ("rbinary", "pow"),
    "__matmul__": ("binary", "matmul"), "__rmatmul__": ("rbinary", "matmul"),
    "__mod__": ("binary", "mod"), "__rmod__": ("rbinary", "mod"),
    "matmul": ("binary", "matmul"), "pow": ("binary", "pow"),
    "__floordiv__": ("plain", "floor_divide"), "__rfloordiv__": ("rplain", "floor_divide"),
    "__neg__": ("unary", "neg"), "__pos__": ("unary", "pos"), "neg": ("unary", "neg"),
    "relu": ("unary", "relu"), "sigmoid": ("unary", "sigmoid"), "rsqrt": ("unary", "rsqrt"),
    # comparisons give bool Tensors, which never require grad
    "__lt__": ("plain", "less"), "__le__": ("plain", "less_equal"),
    "__gt__": ("plain", "greater"), "__ge__": ("plain", "greater_equal"),
    "__eq__": ("plain", "equal"), "__ne__": ("plain", "not_equal"),
    "lt": ("plain", "less"), "le": ("plain", "less_equal"),
    "gt": ("plain", "greater"), "ge": ("plain", "greater_equal"),
    "eq": ("plain", "equal"), "ne": ("plain", "not_equal"),
    "__abs__": ("numpy", "abs"), "abs": ("numpy", "abs"), "exp": ("numpy", "exp"),
    "log": ("numpy", "log"), "sqrt": ("numpy", "sqrt"), "sin": ("numpy", "sin"),
    "cos": ("numpy", "cos"), "tanh": ("numpy", "tanh"), "square": ("numpy", "square"),
    "log1p": ("numpy", "log1p"), "expm1": ("numpy", "expm1"), "log2": ("numpy", "log2"),
    "log10": ("numpy", "log10"), "tan": ("numpy", "tan"), "sinh": ("numpy", "sinh"),
    "cosh": ("numpy", "cosh"), "asin": ("numpy", "arcsin"), "acos": ("numpy", "arccos"),
    "atan": ("numpy", "arctan"),
    "clone": ("numpy", "copy"),  # its own memory, and in the graph (gradients flow through)
    "dot": ("numpy2", "dot"), "atan2": ("numpy2", "arctan2"),
    "maximum": ("numpy2", "maximum"),  # a tie's gradient shared evenly, as in PyTorch
    "minimum": ("numpy2", "minimum"),
    "__iadd__": ("inplace", "add"), "__isub__": ("inplace", "sub"),
    "__imul__": ("inplace", "mul"), "__itruediv__": ("inplace", "truediv"),
    "__ipow__": ("inplace", "pow"), "mul_": ("inplace", "mul"), "div_": ("inplace", "truediv"),
    "relu_": ("apply_", "relu"), "exp_": ("apply_", "exp"), "neg_": ("apply_", "neg"),
    "floor": ("stepwise", "floor"), "ceil": ("stepwise", "ceil"),
    "trunc": ("stepwise", "trunc"),
    "float": ("to", "float32"), "double": ("to", "float64"), "half": ("to", "float16"),
    "long": ("to", "int64"), "int": ("to", "int32"), "bool": ("to", "bool_"),
}

# what a method says of itself, where its name does not say it all
DOCS = {
    'clone': 'A copy with its own memory that stays in the graph (gradients flow through).',
    'float': 'float32 (``self`` if it already is).',
    'double': 'float64 (``self`` if it already is).',
    'half': 'float16 (``self`` if it already is).',
    'long': 'int64 (``self`` if it already is), outside the graph.',
    'int': 'int32 (``self`` if it already is), outside the graph.',
    'bool': 'bool (``self`` if it already is), outside the graph: True where nonzero.',
    'rsqrt': '``1 / sqrt(t)``.',
    'atan2': 'The angle of the point ``(other, self)``, elementwise.',
    'maximum': "The elementwise maximum (a tie's gradient shared evenly, as in PyTorch).",
    'minimum': 'The elementwise minimum.',
}

# PyTorch's other names for methods (of the table or of the class)
ALIASES = {
    "view": "reshape", "mm": "matmul", "clip": "clamp", "negative": "neg",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
    "clip_": "clamp_",
}

FILENAME = "<s2sgrad Tensor methods>"


def source() -> str:
    """The methods of the table, as Python source."""
    chunks = []
    for name, (form, target) in METHODS.items():
        params, returned = FORMS[form]
        backward = f"{target.capitalize()}Backward0"
        doc = f'    """{DOCS[name]}"""\n' if name in DOCS else ""
        chunks.append(f"def {name}({params}) -> Tensor:\n{doc}"
                      f"    return {returned.format(target=target, backward=backward)}\n")
    return "\n\n".join(chunks)


def install(cls: type, namespace: dict[str, Any]) -> None:
    """Set the table's methods, compiled in ``namespace`` (the module of ``cls``, whose
    names their source reads), and the aliases on ``cls``."""
    text = source()
    linecache.cache[FILENAME] = (len(text), None, text.splitlines(True), FILENAME)
    made: dict[str, Any] = {}
    exec(compile(text, FILENAME, "exec"), namespace, made)  # noqa: S102
    for name, method in made.items():
        method.__qualname__ = f"{cls.__name__}.{name}"
        setattr(cls, name, method)
    for alias, name in ALIASES.items():
        setattr(cls, alias, getattr(cls, name))
