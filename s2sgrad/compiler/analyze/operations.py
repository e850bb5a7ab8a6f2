"""What an operation means, from its operands' kinds.

    a + b      numbers/arrays: the rule of +; tuples/lists: concatenation; a user class:
               its __add__ / __radd__, differentiated through; anything else: refused
    a[i]       an array: indexing; a tuple/list/dict: its item; a user class: __getitem__;
               np.r_ and other objects that define []: refused where differentiated
    x.attr     a property's getter, differentiated through; x.dtype; a value read; a field
               of a named tuple a rule returned (``res.Q`` of ``res = np.linalg.qr(a)``):
               its item
    (a, b)     a container of its items (``pack``)
    __setitem__, __append__, __insert__, __pop_item__
               the element writes, appends, inserts and pops normalize made explicit: of an
               array, an element write (``np.add.at``'s too); of a list or dict, the
               container with the item replaced (``put``), added or taken out

``Operations.operation(node, target)`` returns the ``Op`` of one assigned value and records
what the target holds; calls go to ``Calls``, and the functions found here (the rule of +,
a property's getter, a class's __getitem__) to ``Callees``.
"""

from __future__ import annotations

import dataclasses
import operator
import types
from typing import Any

import gast
import numpy as np

from ... import syntax
from ...rules import registry
from ...runtime import containers
from ..normalize import APPEND, INSERT, POP_ITEM, SETITEM
from ..parse import MISSING
from . import checks
from .callees import Callees
from .calls import Calls
from .facts import Facts, Op
from .values import (
    UNKNOWN_ARRAY,
    Abstract,
    ShapeTuple,
    abstract_of,
    described,
    element_of,
    installed_package,
    is_container,
    is_sequence,
    item_of,
    join,
    join_elements,
    package_method,
    user_method,
)


class Operations:
    def __init__(self, facts: Facts, calls: Calls, callees: Callees):
        self.facts = facts
        self.parsed = facts.parsed
        self.calls, self.callees = calls, callees
        self.value, self.is_varied, self.set_value = facts.value, facts.is_varied, facts.set_value
        # names holding a named tuple a rule returned -> its fields (None: not one on a path)
        self.fields: dict[str, tuple[str, ...] | None] = {}

    def operation(self, node: gast.expr, target: str | None) -> Op:
        op = self.operation_of(node, target)
        if target is not None:
            self.note_fields(node, target, op)
        return op

    def note_fields(self, node: gast.expr, target: str, op: Op) -> None:
        """Which fields ``target`` has, if it certainly holds a named tuple that a rule
        returned: a name assigned otherwise on some path has none."""
        fields: tuple[str, ...] | None = None
        if op.kind in ("rule", "nondiff") and op.primitive is not None:
            rule = op.rule or registry.lookup(op.primitive)
            fields = (rule.fields or None) if rule is not None else None
        elif op.kind == "copy" and isinstance(node, gast.Name):
            fields = self.fields.get(node.id)
        if target in self.fields and self.fields[target] != fields:
            fields = None
        self.fields[target] = fields
        value = self.facts.values.get(target)
        if fields and value is not None and is_sequence(value) and value.fields != fields \
                and value.items is not None and len(value.items) == len(fields):
            # the value itself has its fields: a helper it is passed to reads them too
            self.facts.values[target] = dataclasses.replace(value, fields=fields)

    def operation_of(self, node: gast.expr, target: str | None) -> Op:
        if isinstance(node, gast.JoinedStr):  # an f-string: text, whatever it formats
            self.set_value(target, Abstract("object", None, False, str))
            return Op("nondiff", target, what="an f-string")
        if isinstance(node, gast.BinOp):
            return self.binary(node, target)
        if isinstance(node, gast.UnaryOp):
            return self.callees.primitive(_UNARY_PRIMITIVES[type(node.op)], [node.operand], {},
                                          target, node)
        if isinstance(node, gast.Compare):
            prim = _CMP_PRIMITIVES.get(type(node.ops[0])) or operator.eq
            return self.callees.primitive(prim, [node.left, node.comparators[0]], {}, target, node)
        if isinstance(node, gast.Call):
            if syntax.is_name(node.func, SETITEM):
                return self.setitem(node, target)
            if syntax.is_name(node.func, APPEND):
                return self.append(node, target)
            if syntax.is_name(node.func, INSERT):
                return self.insert(node, target)
            if syntax.is_name(node.func, POP_ITEM):
                return self.pop_item(node, target)
            return self.calls.call(node, target)
        if isinstance(node, gast.Attribute) and not (isinstance(node.value, gast.Name)
                                                     and node.value.id in self.facts.values):
            if self.parsed.resolve(node) is not MISSING and target is not None:
                self.facts.static_alias[target] = node  # f = np.tanh: calls of f resolve to np.tanh
            self.set_value(target, self.value(node))
            return Op("nondiff", target)
        if isinstance(node, gast.Attribute) and node.attr == "dtype" and \
                self.value(node.value).kind in ("array", "scalar"):
            owner = self.value(node.value)  # x.dtype: its kind is known here, not its size
            self.set_value(target, Abstract("object", None, False, np.dtype))
            if target is not None:
                self.facts.dtype_kinds[target] = "c" if owner.complex else "f" if owner.float else "i"
            return Op("nondiff", target, what="dtype")
        if isinstance(node, gast.Attribute) and self.value(node.value).value is not None:
            held = getattr(self.value(node.value).value, node.attr, MISSING)  # cls.scale
            value = abstract_of(held) if held is not MISSING else UNKNOWN_ARRAY
            self.set_value(target, value if value.kind != "array" else UNKNOWN_ARRAY)
            return Op("nondiff", target)
        if isinstance(node, gast.Attribute) and is_sequence(self.value(node.value)) and \
                self.calls.method_of(self.value(node.value), node.attr) is MISSING:
            return self.field(node, target)
        if isinstance(node, gast.Attribute):
            owner = self.value(node.value)
            descriptor = self.calls.method_of(owner, node.attr)
            if owner.kind == "object" and not is_container(owner):
                # an attribute of an object: a property runs its getter; anything else is
                # a value read from the object, of unknown kind
                if isinstance(descriptor, property) and isinstance(
                        descriptor.fget, types.FunctionType) and not installed_package(
                        descriptor.fget):  # (a package's property is read, not entered)
                    self.parsed.dependencies.append((owner.type, node.attr, "static",
                                                     descriptor))
                    return self.callees.user_call(descriptor.fget, [node.value], {}, target, node,
                                                  infer=owner.items is not None)
                known = _known_attribute(self.facts, node, owner, descriptor, target)
                return known or self.callees.opaque(target, [], {}, f".{node.attr}", receiver=node.value)
            if descriptor is MISSING:
                return self.callees.opaque(target, [], {}, f".{node.attr}", receiver=node.value)
            if isinstance(descriptor, _METHODS) and self.is_varied(node.value):
                name = self.calls.user_name(node) or f"(...).{node.attr}"
                raise self.parsed.error(
                    f"'{name}' reads a method without calling it: the bound method is a "
                    "function made from a differentiated value, which is not followed", node,
                    f"Call it where it is used: `{name}(...)`.")
            return self.callees.primitive(descriptor, [node.value], {}, target, node)
        if isinstance(node, gast.Subscript):
            return self.subscript(node, target)
        if isinstance(node, (gast.Tuple, gast.List, gast.Dict)):
            if isinstance(node, gast.Dict):
                keys = [syntax.const_value(k) for k in node.keys]
                elements, kind = list(node.values), dict
            else:
                keys = list(range(len(node.elts)))
                elements = list(node.elts)
                kind = tuple if isinstance(node, gast.Tuple) else list
            items = tuple((k, self.value(e)) for k, e in zip(keys, elements, strict=True))
            self.set_value(target, Abstract(
                "object", None if kind is dict else (None,) * len(elements),
                any(a.float for _, a in items), kind, items))
            if any(self.is_varied(e) for e in elements) and target is not None:
                self.facts.varied.add(target)
                return Op("pack", target, bindings=dict(zip(keys, elements, strict=True)),
                          diff_params=tuple(keys), what="a container")
            return Op("nondiff", target)
        if not isinstance(node, (gast.Name, gast.Constant, gast.Attribute)):
            raise syntax.unexpected("analyze", node, "an assigned value")
        # a copy of an atom
        if target is not None and not isinstance(node, gast.Name) and \
                self.parsed.resolve(node) is not MISSING:
            self.facts.static_alias[target] = node  # f = np.tanh: calls of f resolve to np.tanh
        self.set_value(target, self.value(node),
                       self.facts.shape_class.get(node.id) if isinstance(node, gast.Name) else None)
        self.facts.int_result = isinstance(node, gast.Name) and self.facts.is_int_array(node.id)
        if self.is_varied(node) and target is not None:
            self.facts.varied.add(target)
        return Op("copy", target, bindings={"x": node})

    def binary(self, node: gast.BinOp, target: str | None) -> Op:
        """``a op b``: the operator's meaning comes from the operands' kinds. Numbers and
        arrays: arithmetic; tuples and lists: concatenation (+) and repetition (*); objects
        of a class that defines the operator: that method, differentiated through."""
        prim = _BINOP_PRIMITIVES[type(node.op)]
        left, right = self.value(node.left), self.value(node.right)
        operands = [node.left, node.right]
        # None has no operators: a None operand is a path on which Python raises (or one the
        # analysis has not yet seen the value of), so the other operand gives the meaning
        if left.kind == "none" and right.kind != "none":
            left = Abstract(right.kind, None, right.float, right.type)
        elif right.kind == "none" and left.kind != "none":
            right = Abstract(left.kind, None, left.float, left.type)
        if (is_sequence(left) or is_sequence(right)) and "array" not in (left.kind,
                                                                         right.kind):
            return self.sequence_op(node, prim, left, right, target)
        for value, atoms, name in ((left, operands, _DUNDER.get(prim)),
                                   (right, operands[::-1], _REFLECTED.get(prim))):
            method = user_method(value, name)
            if method is None:
                continue
            if value is right and left.kind == "array":
                if self.is_varied(node.left) or self.is_varied(node.right):
                    raise self.parsed.error(
                        f"an array {checks.SYMBOLS[prim]} an object of class "
                        f"{value.type.__name__}: NumPy decides whether {name} runs", node,
                        f"Call the method explicitly: `b.{name}(a)`.")
                break
            self.parsed.dependencies.append((value.type, name, "static", method))
            return self.callees.user_call(method, atoms, {}, target, node)
        for value, name in ((left, _DUNDER.get(prim)), (right, _REFLECTED.get(prim))):
            if package_method(value, name) is not None and (
                    self.is_varied(node.left) or self.is_varied(node.right)):
                raise self.parsed.error(
                    f"'{checks.SYMBOLS[prim]}' of {described(value)}: its class, from an "
                    f"installed package, defines what it computes ({name}), which has no "
                    "derivative rule and is not differentiated through", node,
                    "Convert the object to an array first (`np.asarray(a)`, `a.toarray()` "
                    "for a sparse matrix), or compute this outside the differentiated "
                    "function.")
        return self.callees.primitive(prim, operands, {}, target, node)

    def sequence_op(self, node: gast.BinOp, prim: Any, left: Abstract, right: Abstract,
                    target: str | None) -> Op:
        """``+`` and ``*`` of tuples and lists, as Python defines them."""
        varied = self.is_varied(node.left) or self.is_varied(node.right)
        if prim is operator.add and is_sequence(left) and is_sequence(right):
            items = None
            if left.items is not None and right.items is not None:
                items = tuple(enumerate([v for _, v in left.items] + [v for _, v in right.items]))
            value = Abstract("object", None if items is None else (None,) * len(items),
                             left.float or right.float, left.type, items,
                             element=None if items is not None else join_elements(
                                 element_of(left), element_of(right)))
            op = self.callees.primitive(containers.concat, [node.left, node.right], {}, target,
                                        node)
        elif prim is operator.mul and (is_sequence(left) != is_sequence(right)):
            seq, count = (node.left, node.right) if is_sequence(left) else (
                node.right, node.left)
            seq_value = left if is_sequence(left) else right
            times = syntax.const_value(count) if syntax.is_const(count) else None
            items = None
            if seq_value.items is not None and isinstance(times, int):
                items = tuple(enumerate([v for _, v in seq_value.items] * max(times, 0)))
            value = Abstract("object", None if items is None else (None,) * len(items),
                             seq_value.float, seq_value.type, items,
                             element=None if items is not None else element_of(seq_value))
            op = self.callees.primitive(containers.repeat, [seq, count], {}, target, node)
        else:
            if not varied:
                self.set_value(target, Abstract("object", None, False, object))
                return Op("nondiff", target, what=checks.SYMBOLS.get(prim, "operator"))
            raise self.parsed.error(
                f"'{checks.SYMBOLS.get(prim, 'this operator')}' of {described(left)} and "
                f"{described(right)}: for tuples and lists only + of two of the same type "
                "and * by an int are defined", node,
                "Convert the items to an array first (np.array(...)) for arithmetic.")
        if target is not None:
            self.facts.values[target] = value
        return op

    def subscript(self, node: gast.Subscript, target: str | None) -> Op:
        """``a[i]``: indexing is differentiated only where ``a`` is known to be an array
        (or a tuple, list or dict); ``np.r_[x, y]`` and other objects that define
        ``[]`` mean something else."""
        base = self.value(node.value)
        if is_container(base):
            return self.item(node, target)
        if base.type is ShapeTuple:  # x.shape[0], x.shape[1:]
            sliced = isinstance(node.slice, gast.Slice)
            self.set_value(target, Abstract("object", None, False, ShapeTuple) if sliced
                           else Abstract("scalar", (), False))
            return Op("nondiff", target, what="shape")
        if base.kind in ("array", "scalar"):
            checks.refuse_boolean_index(self.facts, node.slice, node)
            return self.callees.primitive(operator.getitem, [node.value, node.slice], {},
                                          target, node)
        index_atoms = [a for a in checks.index_atoms(node.slice)]
        varied = self.is_varied(node.value) or any(self.is_varied(a) for a in index_atoms)
        method = user_method(base, "__getitem__")
        if method is not None and varied and not isinstance(node.slice, (gast.Slice,
                                                                         gast.Tuple)):
            self.parsed.dependencies.append((base.type, "__getitem__", "static", method))
            return self.callees.user_call(method, [node.value, node.slice], {}, target, node)
        if varied:
            what = getattr(base.type, "__name__", "object")
            resolved = self.parsed.resolve(node.value)
            hint = "Index an array, or call a function." if resolved not in (
                np.r_, np.c_) else "Write np.concatenate([...]) (with np.atleast_1d for " \
                "numbers) instead: it is differentiated."
            name = syntax.dotted_name(node.value)
            if base.type in (None, object):  # an item of a list whose items have no join
                raise self.parsed.error(
                    "indexing a value whose kind is not known here (an item of a list that "
                    "holds values of different kinds, read at an index known only at run "
                    "time): what it computes is not differentiated", node,
                    "Keep values of one kind in a list (arrays, or numbers, or lists), or "
                    "read the item at a constant index.")
            raise self.parsed.error(
                f"'{name or what}[...]' is not indexing of an array (it is a {what}): what it "
                "computes is not differentiated", node, hint)
        self.set_value(target, Abstract("object", None, False, object))
        return Op("nondiff", target, what="[]")

    def item(self, node: gast.Subscript, target: str | None) -> Op:
        """``t[k]`` of a tuple, list or dict: the item (a slice of a list is a list)."""
        container = self.value(node.value)
        key = self.facts.key_of(node.slice)
        held = self.parsed.resolve(node.value)
        if held is not MISSING and key is not None and isinstance(held, (dict, list, tuple)):
            try:  # an item of a global dict or list: recompile if it is replaced
                self.parsed.dependencies.append((held, key, "item", held[key]))
            except (KeyError, IndexError, TypeError):
                pass
        if isinstance(node.slice, gast.Slice):
            value = _slice_of(container, node.slice)
        else:
            value = item_of(container, key)
        self.set_value(target, value)
        if self.is_varied(node.value) and target is not None and value.float:
            self.facts.varied.add(target)
            return Op("item", target, bindings={"c": node.value, "key": node.slice},
                      diff_params=("c",), what="an item")
        return Op("nondiff", target, what="an item")

    def field(self, node: gast.Attribute, target: str | None) -> Op:
        """``res.Q`` of a named tuple (an argument's, or one a rule returned, ``fields=``):
        its item at the field's position. A field of a tuple not known to be one is refused
        where differentiated: which item it is cannot be told."""
        owner = self.value(node.value)
        fields = owner.fields or (
            self.fields.get(node.value.id) if isinstance(node.value, gast.Name) else None)
        if fields and node.attr in fields:
            key = syntax.located(syntax.const(fields.index(node.attr)), node)
            return self.item(syntax.subscript(node.value, key), target)
        if fields and self.is_varied(node.value):
            name = syntax.dotted_name(node) or f"(...).{node.attr}"
            kind = f"the named tuple {owner.named.__name__}" if owner.named else "this named tuple"
            raise self.parsed.error(
                f"'{name}' is not a field of {kind} (its fields are {', '.join(fields)}): of "
                "a named tuple, the fields are differentiated, not its class's other "
                "attributes and methods", node, "Compute it from the fields in the function: "
                f"`{syntax.dotted_name(node.value) or 'p'}.{fields[0]}`.")
        if self.is_varied(node.value):
            name = syntax.dotted_name(node) or f"(...).{node.attr}"
            raise self.parsed.error(
                f"'{name}' reads a field of a tuple whose fields are not known here (a named "
                "tuple is followed by position: a rule's result read where it was assigned "
                "has its fields)", node, "Unpack it by position: `q, r = np.linalg.qr(a)`, "
                "or index it: `res[0]`.")
        return self.callees.opaque(target, [], {}, f".{node.attr}", receiver=node.value)

    def append(self, node: gast.Call, target: str | None) -> Op:
        """``xs_1 = __append__(xs, v)``: xs with v at its end."""
        base, value = node.args
        before = self.value(base)
        item = self.value(value)
        self.set_value(target, Abstract("object", None, before.float or item.float, list,
                                        None, element=join_elements(element_of(before), item)))
        if (self.is_varied(base) or self.is_varied(value)) and target is not None:
            self.facts.varied.add(target)
        return Op("append", target, bindings={"xs": base, "v": value},
                  diff_params=("xs", "v"), what="append")

    def setitem(self, node: gast.Call, target: str | None) -> Op:
        """``y_1 = __setitem__(y[idx], v)``: y_1 is y with the region replaced by v; with a
        ufunc's name (``np.add.at(y, idx, v)``), y with v added at idx, each occurrence of
        a repeated position adding its part."""
        region, value, *ufunc = node.args
        base = region.value
        bindings = {"a": base, "index": region.slice, "v": value}
        what = "element assignment"
        if ufunc:
            bindings["ufunc"], what = ufunc[0], f"np.{ufunc[0].value}.at"
            checks.check_scatter(self.facts, base, value, what, node)
        elif self.value(base).kind == "object" and self.value(base).type not in (None, object):
            return self.put(node, target)  # a list's or dict's item (or refused)
        checks.refuse_boolean_index(self.facts, region.slice, node)
        self.set_value(target, self.value(base), self.facts.shape_class.get(base.id))
        if self.facts.is_int_array(base.id):  # the value is truncated: piecewise constant
            self.facts.int_result = True
            return Op("setitem", target, bindings=bindings, what=what, diff_params=())
        if (self.is_varied(base) or self.is_varied(value)) and target is not None:
            self.facts.varied.add(target)
        return Op("setitem", target, bindings=bindings, what=what, diff_params=("a", "v"))


    def container(self, base: gast.Name, node: gast.AST, what: str,
                  kinds: tuple[type, ...] = (list, dict)) -> Abstract:
        """The list or dict that ``what`` changes in place; anything else is refused."""
        value = self.value(base)
        if is_container(value) and value.type in kinds:
            return value
        name = self.calls.user_name(base) or base.id
        kind = described(value)
        hint = "A tuple cannot be changed: build a new one (`t = (v,) + t[1:]`)." if \
            value.type is tuple else "Build a new value instead of changing this one."
        raise self.parsed.error(f"{what} of '{name}', which is {kind}: only lists and dicts "
                                "are changed in place here", node, hint)

    def put(self, node: gast.Call, target: str | None) -> Op:
        """``d_1 = __setitem__(d[k], v)`` of a list or dict: d with its item k replaced (or,
        for a dict, added)."""
        region, value = node.args
        base = region.value
        before = self.container(base, node, "assignment to an item")
        if isinstance(region.slice, gast.Slice):
            raise self.parsed.error(
                f"assignment to a slice of the list '{base.id}': it may change the list's "
                "length", node, "Assign the items one by one, or build a new list "
                "(`xs = xs[:i] + [v] + xs[j:]`).")
        key = self.facts.key_of(region.slice)
        self.set_value(target, _with_item(before, key, self.value(value)))
        if (self.is_varied(base) or self.is_varied(value)) and target is not None:
            self.facts.varied.add(target)
        return Op("put", target, bindings={"c": base, "key": region.slice, "v": value},
                  diff_params=("c", "v"), what="assignment to an item")

    def insert(self, node: gast.Call, target: str | None) -> Op:
        """``xs_1 = __insert__(xs, i, v)``: xs with v before its item i."""
        base, index, value = node.args
        before = self.container(base, node, "insert", (list,))
        item = self.value(value)
        self.set_value(target, Abstract("object", None, before.float or item.float, list,
                                        None, element=join_elements(element_of(before), item)))
        if (self.is_varied(base) or self.is_varied(value)) and target is not None:
            self.facts.varied.add(target)
        return Op("insert", target, bindings={"xs": base, "index": index, "v": value},
                  diff_params=("xs", "v"), what="insert")

    def pop_item(self, node: gast.Call, target: str | None) -> Op:
        """``xs_1 = __pop_item__(xs, k, item)``: xs without its item k (read as ``item``)."""
        base, key, item = node.args
        before = self.container(base, node, "pop")
        if before.type is dict:
            k = self.facts.key_of(key)
            items = None if before.items is None or k is None else tuple(
                (kk, v) for kk, v in before.items if not (kk == k and type(kk) is type(k)))
            after = Abstract("object", None, before.float, dict, items)
        else:
            after = Abstract("object", None, before.float, list, None,
                             element=element_of(before))
        self.set_value(target, after)
        if self.is_varied(base) and target is not None:
            self.facts.varied.add(target)
        return Op("pop", target, bindings={"xs": base, "key": key, "item": item},
                  diff_params=("xs",), what="pop")



def _known_attribute(facts: Facts, node: gast.Attribute, owner: Abstract, descriptor: Any,
                     target: str | None) -> Op | None:
    """``obj.attr`` of an object passed in or read from outside, known by its attributes
    (the compiled code is specialised on what each holds): a value read, of the kind the
    attribute holds; None where it is not known (or the object carries a gradient, which
    its attributes cannot be followed through)."""
    held = dict(owner.items or ()).get(node.attr)
    if held is None or hasattr(descriptor, "__set__") or facts.is_varied(node.value):
        return None
    facts.set_value(target, held)
    return Op("nondiff", target, what=f".{node.attr}")

def _slice_of(container: Abstract, part: gast.Slice) -> Abstract:
    """What ``t[i:j:k]`` of a tuple or list holds: a tuple or list of the same kind, its
    items known where the container's are and the bounds are constants."""
    kind = container.type if container.type in (tuple, list) else list
    bounds = [None if b is None else b.value if syntax.is_const(b) else ...
              for b in (part.lower, part.upper, part.step)]
    if container.items is None or any(b is ... or not (b is None or type(b) is int)
                                      for b in bounds) or bounds[2] == 0:
        return Abstract("object", None, container.float, kind, None,
                        element=element_of(container))
    kept = [container.items[k][1] for k in range(len(container.items))[slice(*bounds)]]
    return Abstract("object", (None,) * len(kept), any(v.float for v in kept), kind,
                    tuple(enumerate(kept)))


def _with_item(container: Abstract, key: Any, value: Abstract) -> Abstract:
    """What a list or dict holds after ``container[key] = value``: the item replaced where
    the key is known here; where it is not, any item of a list may be the new value, and
    a dict's items are known only as what any of them may be."""
    items = container.items
    float_ = container.float or value.float
    if container.type is list:
        if items is None:
            return Abstract("object", None, float_, list, None,
                            element=join_elements(element_of(container), value))
        size = len(items)
        if isinstance(key, int) and not isinstance(key, bool) and -size <= key < size:
            at = key % size
            return Abstract("object", container.dims, float_, list, tuple(
                (k, value if k == at else v) for k, v in items))
        return Abstract("object", container.dims, float_, list, tuple(
            (k, join(v, value)) for k, v in items))
    if key is not None and items is not None:
        kept = tuple((k, v) for k, v in items if not (k == key and type(k) is type(key)))
        return Abstract("object", None, float_, dict, kept + ((key, value),))
    return Abstract("object", None, float_, dict, None)


_BINOP_PRIMITIVES = {cls: getattr(operator, op) for cls, op in syntax.BINOPS.items()}
_UNARY_PRIMITIVES = {gast.USub: operator.neg, gast.UAdd: operator.pos,
                     gast.Not: operator.not_, gast.Invert: operator.invert}
_CMP_PRIMITIVES = {cls: getattr(operator, op, None) for cls, op in syntax.CMPOPS.items()}
_DUNDER = {prim: f"__{prim.__name__.strip('_')}__" for prim in checks.SYMBOLS}
_DUNDER[operator.and_], _DUNDER[operator.or_] = "__and__", "__or__"
_REFLECTED = {prim: "__r" + name[2:] for prim, name in _DUNDER.items()}
# What an attribute of an array, a number or a container is when it is a method (x.sum,
# d.get), not a value (x.T, x.shape): reading it makes a bound method.
_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType,
            types.ClassMethodDescriptorType, types.FunctionType, types.BuiltinFunctionType)
