"""What the analysis knows at a point of its walk: each name's abstract value and shape
class, which names are *varied* (depend on a differentiated input), and what each statement
does (``Op``).

    facts.set_value("h", Abstract("array", (False, False)), cls)   h: rank 2, shape class cls
    facts.value(atom)       the abstract value of a name, a literal or a non-local name
    facts.is_varied(atom)   whether a differentiated input flows into it

A name assigned on several paths holds the ``join`` of what each assignment gives it; the
statement walk (``analyze``) runs loops to a fixpoint of these facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gast

from ... import syntax
from ...rules.registry import Rule
from ..parse import MISSING, Parsed
from .values import Abstract, abstract_of, join


@dataclass(frozen=True)
class OpKind:
    """One kind of operation: what it is, whether it changes a value in place, and whether
    a gradient can flow through it (every other kind's adjoint table has a row for it)."""

    meaning: str
    update: bool = False
    carries: bool = True


# The operation kinds analyze gives (``Op.kind``): the one table the passes' handler tables
# follow (forward's lowering, the adjoint, the tangent; tests/compiler/test_statements.py checks each
# against it). A new kind adds a row here, then a handler in each of them.
OP_KINDS: dict[str, OpKind] = {
    "copy": OpKind("a name's value under another name"),
    "rule": OpKind("a call of a function with a derivative rule, or an operator"),
    "call": OpKind("a call of a function differentiated through its source"),
    "pack": OpKind("a tuple, list or dict of atoms"),
    "item": OpKind("an item of a tuple, list or dict"),
    "setitem": OpKind("an element write into an array", update=True),
    "put": OpKind("an item put into a list or dict", update=True),
    "append": OpKind("an item appended to a list", update=True),
    "insert": OpKind("an item inserted into a list", update=True),
    "pop": OpKind("an item taken out of a list or dict", update=True),
    "nondiff": OpKind("a call whose result carries no gradient"),
    "effect": OpKind("a call kept for its effect (print)"),
    "unknown": OpKind("a call the analysis cannot follow, refused where a gradient would "
                      "flow through it", carries=False),
}


@dataclass(frozen=True)
class Op:
    """The operation of one ANF statement."""

    kind: str  # a key of OP_KINDS
    target: str | None
    rule: Rule | None = None
    bindings: dict[str, gast.expr] = field(default_factory=dict)  # rule parameter -> atom
    callee: Any = None  # for 'call': the compiled callee
    callee_args: tuple[gast.expr, ...] = ()
    what: str = ""  # a readable name of the callee, for messages
    diff_params: tuple[str, ...] = ()  # parameters that can receive a contribution
    primitive: Any = None  # for 'rule', 'nondiff' and 'unknown' calls: the function called
    refusal: tuple[str, str] | None = None  # for 'unknown': why, and what to write instead
    always: bool = False  # refused even where the result is not used (it may mutate)
    # for 'call': a checkpointed callee (derivatives.Checkpointed): the forward calls the
    # function itself, the adjoint runs its forward again before its backward
    recompute: bool = False
    # for 'call': the call runs only as compiled, even where nothing differentiated comes
    # out of it: a nested function made into a value reaches it or comes back from it (the
    # tuple that stands for the function, which the plain function could not call)
    compiled_only: bool = False


# The operations that change a value in place, as NumPy and Python do them: an element
# write into an array, an item put into a list or dict, an append, an insert, a pop.
UPDATES = frozenset(name for name, kind in OP_KINDS.items() if kind.update)


class Facts:
    def __init__(self, parsed: Parsed, wrt: tuple[str, ...], signature: dict[str, Abstract]):
        self.parsed = parsed
        self.values: dict[str, Abstract] = dict(signature)
        self.shape_class: dict[str, int] = {}
        self.varied: set[str] = set(wrt)
        self.static_alias: dict[str, gast.expr] = {}  # f = np.tanh: calls of f are np.tanh
        self.dtype_kinds: dict[str, str] = {}  # names holding x.dtype: 'f', 'c' or 'i'
        self.by_string_value = False  # see Analysis.by_string_value
        # Arrays known to hold integers or booleans: writing a float into one truncates it,
        # so nothing differentiable flows through the write. A name is one if every
        # assignment to it makes one (``int_result`` says whether the current one does).
        self.int_arrays: set[str] = set()
        self.not_int: set[str] = set()
        self.int_result = False
        self._classes = 0
        # a starred argument (or a ** argument's value) normalize left as it is -> its
        # spread site (see spreads.py)
        self.spread_arguments: dict[gast.AST, int] = {}
        # the names of functions made into values for one call only (normalize's
        # ``Functions.value``): the callee must not return them
        self.transient: set[str] = set()

    def value(self, atom: gast.expr) -> Abstract:
        if isinstance(atom, gast.Name) and atom.id in self.values:
            return self.values[atom.id]
        if syntax.is_const(atom):
            return abstract_of(atom.value)
        if syntax.is_static_tuple(atom):
            return abstract_of(syntax.const_value(atom))
        resolved = self.parsed.resolve(atom)
        if resolved is MISSING:
            return Abstract("object", None, False, object)
        v = abstract_of(resolved)
        # A global array may be rebound to another shape later: do not specialise on it.
        return v if v.kind != "array" else Abstract("array", None, v.float, complex=v.complex)

    def is_varied(self, atom: Any) -> bool:
        if isinstance(atom, tuple):  # the atoms a callee's *args receives
            return any(self.is_varied(a) for a in atom)
        if isinstance(atom, dict):  # ... and its **kwargs
            return any(self.is_varied(a) for a in atom.values())
        return isinstance(atom, gast.Name) and atom.id in self.varied

    def set_value(self, target: str | None, value: Abstract, cls: int | None = None) -> None:
        """Record what ``target`` holds; a name assigned on several paths (a merge, a loop
        version) holds the join of what each assignment gives it."""
        if target is None:
            return
        cls = cls if cls is not None else self.new_class()
        if target in self.values and target not in self.parsed.params:
            value = join(self.values[target], value)
            if self.shape_class.get(target) != cls:
                cls = self.new_class()
        self.values[target] = value
        self.shape_class[target] = cls

    def new_class(self) -> int:
        self._classes += 1
        return self._classes

    def is_int_array(self, name: str) -> bool:
        return name in self.int_arrays and name not in self.not_int

    def key_of(self, atom: Any) -> Any:
        """The key an index or ``get`` reads with, where it is known when compiling: a
        literal, or a string passed in (the pair is then specialised on its value); else
        None."""
        if syntax.is_const(atom):
            return atom.value
        if isinstance(atom, gast.Name) and atom.id in self.values:
            key = self.values[atom.id].value
            self.by_string_value |= isinstance(key, str)
            return key
        return None

    def class_of(self, atom: Any) -> int | None:
        """The shape class of a name (None for other atoms)."""
        return self.shape_class.get(atom.id) if isinstance(atom, gast.Name) else None
