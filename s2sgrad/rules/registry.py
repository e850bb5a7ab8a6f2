"""The derivative-rule table: what the reverse pass knows about each primitive.

A rule is a plain Python function that computes the contributions of one primitive call to
the cotangents of its inputs. It is runnable (and unit-tested numerically) as it stands; the
reverse pass does not call it but *inlines its body* into the generated adjoint, with the
parameters replaced by the names at the call site::

    @vjp_rule(np.tanh, shape="elementwise")
    def tanh(g, ans, x):
        return g * (1.0 - ans * ans)

Conventions a rule follows:

- Parameters: ``g`` (the cotangent of the output), ``ans`` (the primal output), then the
  primitive's own parameters with the primitive's names and defaults, so that keyword
  arguments at a call site (``axis=0``, ``keepdims=True``) bind by name.
- Return: one contribution for the first parameter, or a tuple with one entry for each of the
  leading parameters; ``None`` marks a parameter that has no derivative. Parameters beyond the
  returned ones (``axis``, ``keepdims``) are static: they never receive a gradient.
- Body: straight-line statements and ``if`` tests. Tests on static facts (constants such as
  ``axis is None``, ``keepdims``, and ``np.ndim(x)`` when the rank is known) are folded when the
  rule is inlined, so the generated code holds only the branch that applies.
- ``shape="elementwise"`` rules may return contributions shaped like the broadcast *output*;
  the engine reduces them to each input's shape where the shapes can differ, so rules never
  unbroadcast by hand. Other rules return contributions shaped like their input.

``shape`` also tells the analysis the rank of the result: ``"elementwise"`` (broadcast of the
inputs), ``"reduce"`` (uses ``axis``/``keepdims``), ``"matmul"``, ``"dot"``, ``"outer"`` (of
``np.outer``: two axes; of a ufunc's ``outer``: the axes of both operands),
``"transpose"`` (axes reversed, or permuted by a static ``axes``), ``"permute"`` (the axes of
the first argument in another order: its rank, nothing more), ``"same"`` (exactly the first
argument's shape), ``"scalar"`` (rank 0), ``"item"`` (an item of the first argument, a
container: the one at the key given as the second, or the ``default``), or ``None``
(unknown: the generated code then keeps runtime tests where a rule needs the rank).

``requires=`` names a check of the call's static arguments for a rule that covers only some
uses of its primitive (``np.linalg.norm``'s rule is the 2-norm's): it returns None, or the
reason the call is refused at transform time.

Complex values. A rule is written for real numbers unless it says otherwise with
``complex=``: a call where an operand or the result is complex is refused at transform time
for a rule without it, never differentiated with a formula that holds only for reals.
Cotangents follow JAX's and HIPS autograd's convention: the cotangent of a complex value
``z = x + iy`` is ``dL/dx - i dL/dy``, and the vjp is the transpose of the jvp without
conjugation, so the rule of a holomorphic function is its real rule unchanged
(``g * f'(z)``: ``multiply`` gives ``g * b`` to ``a``) and such a rule says ``complex=True``.
A function that is not holomorphic spells its complex case out (``np.abs``: ``g *
np.conj(x) / ans``), testing ``np.iscomplexobj(x)``, which is folded where the analysis
knows the operand's dtype. What ``complex=`` says of the result's dtype: ``True``, complex
where an operand is; ``"real"``, real (``np.abs``, ``np.real``, ``np.fft.irfft``);
``"complex"``, complex whatever the operands (``np.fft.fft``). A real operand of a call
that involves complex values gets the real part of its contribution (the engine takes it).

``None`` says the output does not depend on a parameter (``np.floor``'s input, an index).
Where a rule does not give a derivative that exists (the order ``v`` of a Bessel function
``jv(v, x)``, the shape ``a`` of ``gammainc(a, x)``), the parameter is named in ``held=``
instead: a call where it depends on a differentiated input is refused at transform time,
never differentiated as if it were constant.

Forward mode (``jvp``) has a table beside this one, read through ``jvp_lookup``. A jvp
template has the vjp template's parameters, with ``g`` now the tangent of one input: entry i
of what it returns is the output's tangent when only parameter i moves, by ``g``. So an
elementwise vjp template is its own jvp template (``g * (1.0 - ans * ans)`` both ways), and
the library's elementwise and scalar rules need no second one. A primitive that is linear in
its differentiable parameters (``np.sum``, ``x[i]``, ``np.stack``) is declared with
``linear``: its tangent is the primitive applied to the tangents. A user's ``vjp_rule``
drops the forward-mode rule its primitive had; register one with ``jvp_rule`` beside it.

Tuple and list results. ``shape="tuple"`` (or ``"list"``) says the primitive returns a tuple
(a list) of arrays, as ``np.linalg.qr`` and ``np.split`` do. ``items=`` tells the analysis
what it holds: called like ``requires`` with the call's static arguments and the rank of an
argument (for a ``*args`` parameter, the tuple of its arguments' ranks), it returns the ranks
of the items (an int, or None where unknown, for each; the type ``bool`` or ``int`` for an
item that is a flag or a count, which has no gradient), None where the number of items is
not known when compiling (``np.split(x, n)`` with ``n`` computed), or ``One(rank)`` where this
call returns one array instead (``np.atleast_1d(x)`` of one argument). The result is then a
container: ``q, r = np.linalg.qr(a)`` reads its items, and its cotangent is a list with one
cotangent per item (zeros where nothing flowed). The template receives that list as ``g``
and the result itself (NumPy's named tuple) as ``ans``, and unpacks them::

    @vjp_rule(np.linalg.slogdet, shape="tuple", items=lambda static, ndim: (
        ndim("a") - 2, ndim("a") - 2), fields=("sign", "logabsdet"))
    def slogdet(g, ans, a):
        g_sign, g_logdet = g        # inlined as _g_sign = _t1_bar[0]; _g_logdet = _t1_bar[1]
        return g_logdet[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)

Its jvp template returns, for each parameter, the result's tangent as a tuple with one
tangent per item (``return (t_sign, t_logdet),`` for one parameter, ``return (t_q, t_r),
None`` for ``qr(a, mode)``); where several operands move, the tangents are added item by
item (never with ``+``, which would concatenate them). A jvp template with such a result has
no form for a batch of tangents: batched forward mode (``batched_jvp``, ``jacobian``,
``hessian``) raises ``NotBatchable`` there, and its callers take one direction at a time (a
``linear`` one, ``np.split``, has its batched form in ``batching.LINEAR``). ``fields=`` names
the fields of a named tuple result (``("Q", "R")``): ``res.Q`` is read as ``res[0]`` where
``res`` is known to hold the rule's result (the name it was assigned to); elsewhere reading a
field of a tuple is refused. A template that unpacks ``g`` for a rule registered without a
container shape is refused at registration.

Variadic operands. A primitive whose differentiable parameters are ``*args`` (``np.einsum(
subscripts, *operands)``, ``np.atleast_1d(*arys)``) has a template with that ``*args``
parameter and a keyword-only index parameter named by ``each=``. The engine, which knows how
many arguments a call passes, inlines the template once per argument, with the index bound to
its position: the return's last entry is the contribution to ``operands[k]``, those before it
go to the parameters before ``*args`` (they are read off the inlining for the first argument,
so they must not depend on ``k``)::

    @vjp_rule(np.atleast_1d, shape="tuple", items=..., each="k")
    def atleast_1d(g, ans, *arys, k=0):
        if len(arys) == 1:
            return np.reshape(g, np.shape(arys[0]))
        return np.reshape(g[k], np.shape(arys[k]))

In the inlined body ``len(arys)`` is a constant, ``arys[k]`` the k-th of the call's atoms,
``arys[:k] + (g,) + arys[k + 1:]`` a tuple of atoms, and ``f(*others)`` passes them one by one,
so the generated code has no ``*`` left. The jvp template has the same parameters (``each``
included): its last entry is the output's tangent when ``operands[k]`` moves by ``g``. As plain
Python the template gives one operand's contribution per call (``einsum(g, ans, "ij,jk", a, b,
k=1)``).

Users register their own rules with the same decorator; a later registration for the same
primitive replaces the earlier one.

Rules for the functions of a module that is costly to import (scipy's) are registered the
first time they can matter: ``when_imported(module, register)`` keeps ``register`` pending
until ``module`` is imported, and every read or write of the tables first runs the pending
registrations of the modules imported by then. A program holds one of their functions only
once the module is imported, so the tables answer as if everything had been registered at
import, and a user's registration, which comes after the library's, replaces it. Registration checks the template (``check.py``): a rule
the compiler would misread, such as ``return helper(g, x, y)`` in a rule of two inputs, or
contributions for a ``*args`` parameter without ``each=``, is refused with a ``RuleError``
naming its file:line.
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .check import (  # noqa: F401  (RuleError is part of the contract)
    EACH,
    RuleError,
    check_container_result,
    check_rule,
)

SHAPES = (None, "elementwise", "reduce", "matmul", "dot", "outer", "transpose", "permute", "same",
          "scalar", "item", "tuple", "list")
# what a rule says of complex operands (Rule.complex)
COMPLEX = (False, True, "real", "complex")
# shapes of a result that is a container of arrays, and the container's type
CONTAINERS = {"tuple": tuple, "list": list}


@dataclass(frozen=True)
class One:
    """What ``items=`` returns for a call that gives one array of this rank, not a container
    (``np.atleast_1d(x)`` of one argument)."""

    rank: int | None


@dataclass(frozen=True)
class Rule:
    """A derivative rule: the template function and what the engine needs to know of it."""

    primitive: Any
    template: Callable
    params: tuple[str, ...]  # the primitive's parameters, as the template names them
    defaults: dict[str, Any]  # defaults of the static parameters
    shape: str | None
    # Optional: (static arguments, rank of an argument) -> None, or why the rule does not
    # apply to this call (e.g. a norm of another order); the call is then refused.
    requires: Callable | None = None
    # parameters whose derivative the rule does not give: refused where they are differentiated
    held: tuple[str, ...] = ()
    # For shape "tuple"/"list": (static arguments, rank of an argument) -> the ranks of the
    # items, None (their number is not known), or One(rank) (this call returns one array).
    items: Callable | None = None
    # The keyword-only index parameter of a template inlined once per argument of *args.
    each: str | None = None
    # For a named tuple result: the names of its fields, in order (res.Q is res[0])
    fields: tuple[str, ...] = ()
    # Right for complex operands too (see above): False (real numbers only), True (the
    # result is complex where an operand is), "real" or "complex" (the result's dtype)
    complex: bool | str = False

    @property
    def name(self) -> str:
        return primitive_name(self.primitive)

    @property
    def container(self) -> type | None:
        """tuple or list where the result is a container of arrays, else None."""
        return CONTAINERS.get(self.shape)

    @property
    def star(self) -> str | None:
        """The template's ``*args`` parameter, if it has one."""
        return _star(self.template)


@dataclass(frozen=True)
class JvpRule:
    """A forward-mode rule: a template (see above), or a linear primitive (no template: its
    tangent is the primitive itself applied to the tangents)."""

    primitive: Any
    template: Callable | None
    linear: bool = False
    # of a linear primitive: the parameters that add a constant to its result (np.sum's
    # initial=), which its tangent's call gives as 0
    constant: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return primitive_name(self.primitive)


_RULES: dict[Any, Rule] = {}
_NONDIFF: dict[Any, str] = {}
_JVP: dict[Any, JvpRule] = {}
# The library's own rules, as it registered them (library_rules)
_LIBRARY: dict[Any, Rule] = {}
# elementwise and scalar vjp templates of the library that are their own jvp templates
_POINTWISE = ("elementwise", "scalar")


def _key(primitive: Any) -> Any:
    # Bound methods and descriptors are hashable; a few NumPy objects are not (ufunc are).
    try:
        hash(primitive)
        return primitive
    except TypeError:
        return id(primitive)


def vjp_rule(*primitives: Any, shape: str | None = None, requires: Callable | None = None,
             held: tuple[str, ...] = (), items: Callable | None = None,
             each: str | None = None, fields: tuple[str, ...] = (),
             complex: bool | str = False) -> Callable[[Callable], Callable]:
    """Register ``fn`` as the vector-Jacobian product rule of each of ``primitives``.

    >>> @vjp_rule(np.sinh, shape="elementwise")
    ... def sinh(g, ans, x):
    ...     return g * np.cosh(x)
    """
    if not primitives:
        raise TypeError("vjp_rule() needs at least one primitive, e.g. @vjp_rule(np.sinh)")
    if shape not in SHAPES:
        raise ValueError(f"vjp_rule(shape={shape!r}): shape must be one of {SHAPES}")
    if complex not in COMPLEX:
        raise ValueError(f"vjp_rule(complex={complex!r}): complex must be one of {COMPLEX}")
    for option, given in (("items", items is not None), ("fields", bool(fields))):
        if given and shape not in CONTAINERS:
            raise ValueError(f"vjp_rule({option}=...) describes the items of a tuple or list "
                             f"result: give shape='tuple' or shape='list' with it, not "
                             f"shape={shape!r}")

    def register(template: Callable) -> Callable:
        if _watched:
            _load_imported()
        sig = inspect.signature(template)
        names = list(sig.parameters)
        if names[:2] != ["g", "ans"]:
            raise TypeError(
                f"rule {template.__name__}{sig}: the first two parameters must be "
                "(g, ans): the output cotangent and the primal output"
            )
        if each is not None:
            _check_each(template, sig, each)
            EACH[template] = each
        if not (getattr(template, "__module__", None) or "").startswith(f"{__package__}."):
            # Refuse what the compiler would misread (check.py). The library's own tables are
            # checked by the test suite and when first inlined, which keeps importing cheap.
            check_rule(template, each)
            check_container_result(template, shape)
        params = tuple(n for n in names[2:] if n != each)
        unknown = [p for p in held if p not in params]
        if unknown:
            raise TypeError(f"vjp_rule(held={held!r}): {template.__name__} has no parameter "
                            f"{unknown[0]!r}")
        defaults = {
            name: p.default
            for name, p in sig.parameters.items()
            if p.default is not inspect.Parameter.empty and name != each
        }
        for primitive in primitives:
            _NONDIFF.pop(_key(primitive), None)
            _JVP.pop(_key(primitive), None)  # a new derivative: its tangent is not known
            _RULES[_key(primitive)] = Rule(primitive, template, params, defaults, shape,
                                           requires, tuple(held), items, each,
                                           tuple(fields), complex)
        _changed()
        return template

    return register


def jvp_rule(*primitives: Any) -> Callable[[Callable], Callable]:
    """Register ``fn`` as the forward-mode (Jacobian-vector product) rule of ``primitives``,
    each of which has a ``vjp_rule`` with the same parameters.

    >>> @jvp_rule(np.linalg.inv)
    ... def inv(g, ans, a):
    ...     return -(ans @ g @ ans)
    """

    def register(template: Callable) -> Callable:
        if _watched:
            _load_imported()
        sig = inspect.signature(template)
        names = list(sig.parameters)
        each = None
        for primitive in primitives:
            rule = _RULES.get(_key(primitive))
            if rule is None:
                raise TypeError(f"jvp_rule({primitive_name(primitive)}): register its "
                                "vjp_rule first; the two rules share their parameters")
            each = rule.each
            if tuple(n for n in names[2:] if n != each) != rule.params or \
                    names[:2] != ["g", "ans"] or (each is not None and each not in names):
                wanted = ", ".join(rule.params) + (f", {each}" if each else "")
                raise TypeError(
                    f"jvp rule {template.__name__}{sig}: the parameters must be (g, ans, "
                    f"{wanted}), as in the vjp rule of {primitive_name(primitive)}")
        if each is not None:
            _check_each(template, sig, each)
            EACH[template] = each
        if not (getattr(template, "__module__", None) or "").startswith(f"{__package__}."):
            check_rule(template, each)
        for primitive in primitives:
            _JVP[_key(primitive)] = JvpRule(primitive, template)
        _changed()
        return template

    return register


def _star(template: Callable) -> str | None:
    return next((p.name for p in inspect.signature(template).parameters.values()
                 if p.kind is p.VAR_POSITIONAL), None)


def _check_each(template: Callable, sig: inspect.Signature, each: str) -> None:
    """``each=`` names a keyword-only parameter after the template's ``*args``."""
    param = sig.parameters.get(each)
    if _star(template) is None or param is None or param.kind is not param.KEYWORD_ONLY:
        raise TypeError(
            f"rule {template.__name__}{sig}: each={each!r} names the index of the argument "
            f"of *args a contribution is for: give the template a *args parameter and a "
            f"keyword-only parameter {each} after it, e.g. (g, ans, *arrays, {each}=0)")


def linear(*primitives: Any, constant: tuple[str, ...] = ()) -> None:
    """Declare primitives linear in their differentiable parameters (those their vjp rule
    gives a contribution to), jointly: ``np.sum``, ``x[i]``, ``np.stack``. Forward mode
    applies the primitive itself to the tangents, with 0 for the parameters named in
    ``constant``, which add a constant to the result (``np.sum(x, initial=c)``)."""
    if _watched:
        _load_imported()
    for primitive in primitives:
        if _key(primitive) not in _RULES:
            raise TypeError(f"linear({primitive_name(primitive)}): register its vjp_rule first")
        _JVP[_key(primitive)] = JvpRule(primitive, None, linear=True, constant=tuple(constant))
    _changed()


def jvp_lookup(primitive: Any) -> JvpRule | None:
    """The forward-mode rule of ``primitive``, or None."""
    if _watched:
        _load_imported()
    found = _JVP.get(_key(primitive))
    if found is not None:
        return found
    rule = _RULES.get(_key(primitive))
    if rule is not None and rule.shape in _POINTWISE and (
            getattr(rule.template, "__module__", None) or "").startswith(f"{__package__}."):
        return JvpRule(primitive, rule.template)
    return None


def nondifferentiable(*primitives: Any, why: str = "") -> None:
    """Declare primitives whose outputs carry no gradient (``np.argmax``, ``np.floor``, ``len``).

    Their results are treated as constants by the reverse pass.
    """
    if _watched:
        _load_imported()
    for primitive in primitives:
        _RULES.pop(_key(primitive), None)
        _JVP.pop(_key(primitive), None)
        _NONDIFF[_key(primitive)] = why
    _changed()


# Replaced by a new object whenever the table changes: a compiled pair records the one it
# was compiled with, and is compiled again once a rule is registered or replaced.
version = object()


def _changed() -> None:
    global version
    # A pending registration that only adds rules adds what no compiled pair could have
    # looked up (_as_library): it keeps the version.
    if _loader != threading.get_ident():
        version = object()


# module -> the registrations pending until it is imported (when_imported), each with the
# key of the rule registered last before it was declared (_FIRST before any)
_PENDING: dict[str, list[tuple[Callable[[], None], Any]]] = {}
_FIRST = object()
# (top-level package, its modules in _PENDING): what every read of the tables tests
_watched: tuple[tuple[str, tuple[str, ...]], ...] = ()
_lock = threading.RLock()
_loader: int | None = None  # the thread running pending registrations (set under _lock)
_sealed = False  # the library's own tables are registered: pending ones may run
# The library's rules that pending registrations added, by the key they were declared after:
# library_rules lists them there, where importing scipy at once would have registered them.
_LATER: dict[Any, dict[Any, Rule]] = {}


def when_imported(module: str, register: Callable[[], None]) -> None:
    """Call ``register``, which registers the rules of functions of ``module``, before the
    tables are next read or written once ``module`` is imported (before they are read in
    full, by ``all_rules``, ``all_nondifferentiable`` or ``library_rules``, in any case).
    It handles a missing ``module`` itself (by registering nothing)."""
    with _lock:
        after = next(reversed(_RULES), _FIRST)
        _PENDING.setdefault(module, []).append((register, after))
        _watch()


def _watch() -> None:
    global _watched
    roots: dict[str, list[str]] = {}
    for module in _PENDING:
        roots.setdefault(module.partition(".")[0], []).append(module)
    _watched = tuple((root, tuple(modules)) for root, modules in roots.items())


def _load_imported() -> None:
    """Run the pending registrations of the modules imported by now."""
    for root, modules in _watched:
        if root in sys.modules:
            for module in modules:
                if module in sys.modules:
                    _load()
                    return


def _load(everything: bool = False) -> None:
    """Run the pending registrations of the modules imported by now, or all of them."""
    global _loader
    with _lock:
        if _loader is not None or not _sealed:
            return  # a registration made by one of them, or by the library's own tables
        _loader = threading.get_ident()
        try:
            while True:  # importing one module can import another
                ready = [m for m in _PENDING if everything or m in sys.modules]
                if not ready:
                    return
                for module in ready:
                    registers = _PENDING.pop(module)
                    _watch()
                    for i, (register, after) in enumerate(registers):
                        try:
                            _as_library(register, after)
                        except BaseException:
                            _PENDING[module] = registers[i:]  # tried again on the next read
                            _watch()
                            raise
        finally:
            _loader = None


def _as_library(register: Callable[[], None], after: Any) -> None:
    """Run ``register`` and record what it registers as the library's."""
    global version
    tables = (_RULES, _NONDIFF, _JVP)
    old = [dict(table) for table in tables]
    register()
    if any(key not in table or table[key] is not entry
           for table, was in zip(tables, old, strict=True) for key, entry in was.items()):
        version = object()  # it replaced what a compiled pair may have used
    before = old[0]
    groups = [_LIBRARY, *_LATER.values()]
    for key in before.keys() - _RULES.keys():
        for group in groups:
            group.pop(key, None)
    for key, rule in _RULES.items():
        if before.get(key) is not rule:
            # in place where the library had a rule (as a dict keeps a replaced key's place)
            group = next((g for g in groups if key in g), None)
            if group is None:
                group = _LATER.setdefault(after, {})
            group[key] = rule


def seal_library() -> None:
    """Record the rules registered so far as the library's own (``library_rules``), and let
    pending registrations run from now on."""
    global _sealed
    _LIBRARY.update(_RULES)
    _sealed = True


# Array libraries whose functions mirror NumPy's: a function of one of them that has no rule
# of its own takes the rule of NumPy's function of the same name, for the names listed, whose
# parameters, defaults and results are NumPy's (tests/backends/test_backend_jax.py checks each one
# against finite differences). The generated code then runs that library's functions
# (backends/namespaces.py swaps the namespace the templates read).
MIRRORED = frozenset({
    # elementwise
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "cbrt",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "abs", "absolute", "negative", "positive", "reciprocal", "add",
    "subtract", "multiply", "divide", "true_divide", "power", "maximum", "minimum",
    "logaddexp", "logaddexp2", "arctan2", "hypot", "where",
    # reductions
    "sum", "mean", "prod", "max", "min", "amax", "amin",
    # products and shapes
    "dot", "matmul", "outer", "inner", "transpose", "reshape", "ravel", "expand_dims",
    "squeeze", "broadcast_to", "concatenate", "stack", "swapaxes", "moveaxis",
    # no gradient
    "argmax", "argmin", "argsort", "sign", "floor", "ceil", "round", "zeros_like",
    "ones_like", "shape", "size", "ndim", "arange", "zeros", "ones", "full", "eye",
})
MIRRORS = {"jax.numpy": np}

# The functions of the Python array API standard whose NumPy function of the same name (NumPy
# 2 has the standard's names: ``np.acos is np.arccos``, ``np.permute_dims is np.transpose``)
# takes the same parameters with the same defaults and computes the same values: a function of
# these names in a namespace that follows the standard (``follows_standard``) takes its rule
# (tests/backends/test_backend_array_api.py checks each against finite differences). The generated
# code then calls that namespace's functions (backends/namespaces.py). Left out: the names whose
# parameters differ (``sort``'s ``descending``), and those without a rule of NumPy's
# (``vecdot``).
STANDARD = frozenset({
    # elementwise
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "clip", "cos",
    "cosh", "divide", "exp", "expm1", "hypot", "log", "log1p", "log2", "log10", "logaddexp",
    "maximum", "minimum", "multiply", "negative", "positive", "pow", "sin", "sinh", "sqrt",
    "square", "subtract", "tan", "tanh", "where",
    # statistics
    "sum", "prod", "mean", "max", "min", "std", "var",
    # products and shapes
    "matmul", "tensordot", "matrix_transpose", "broadcast_to", "concat",
    "expand_dims", "flip", "moveaxis", "permute_dims", "reshape", "roll", "squeeze", "stack",
    "tile",
    # no gradient
    "argmax", "argmin", "argsort", "sign", "floor", "ceil", "round", "trunc", "zeros_like",
    "ones_like", "full_like", "zeros", "ones", "full", "eye", "arange", "linspace",
})
STANDARD_LINALG = frozenset({"inv", "det"})
# The standard's keywords that NumPy's function of the same name spells differently
STANDARD_KEYWORDS = {"std": {"correction": "ddof"}, "var": {"correction": "ddof"}}
# Packages whose functions follow the standard without the marker attribute on the package
STANDARD_PACKAGES = frozenset({"array_api_strict", "array_api_compat"})


def follows_standard(module: str) -> bool:
    """Whether a function of ``module`` belongs to a namespace of the array API standard
    other than NumPy's own (whose functions have their rules directly)."""
    package = module.partition(".")[0]
    if package in STANDARD_PACKAGES:
        return True
    found = sys.modules.get(package)
    return package != "numpy" and hasattr(found, "__array_api_version__")


def twin(primitive: Any) -> Any:
    """NumPy's function that ``primitive`` mirrors (``MIRRORED``, ``STANDARD``), or None."""
    module = getattr(primitive, "__module__", None)
    name = getattr(primitive, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        return None
    numpy = MIRRORS.get(module)
    if numpy is not None:  # its functions of the standard's names follow the standard too
        return getattr(numpy, name, None) if name in MIRRORED or name in STANDARD else None
    if not follows_standard(module):
        return None
    if "linalg" in module:
        return getattr(np.linalg, name, None) if name in STANDARD_LINALG else None
    return getattr(np, name, None) if name in STANDARD else None


def mirrored_keywords(primitive: Any, keywords: dict[str, Any]) -> dict[str, Any]:
    """A call's keywords as NumPy's function that ``primitive`` mirrors names them
    (``xp.std(x, correction=1)`` is ``np.std(x, ddof=1)``)."""
    names = STANDARD_KEYWORDS.get(getattr(primitive, "__name__", None))
    module = getattr(primitive, "__module__", None)
    if not names or not isinstance(module, str) or not (
            module in MIRRORS or follows_standard(module)):
        return keywords
    return {names.get(key, key): value for key, value in keywords.items()}


def lookup(primitive: Any) -> Rule | None:
    """The rule of ``primitive`` (or of the NumPy function it mirrors), or None."""
    if _watched:
        _load_imported()
    found = _RULES.get(_key(primitive))
    if found is None:
        mirrored = twin(primitive)
        if mirrored is not None:
            found = _RULES.get(_key(mirrored))
    return found


def is_nondifferentiable(primitive: Any) -> bool:
    if _watched:
        _load_imported()
    if _key(primitive) in _NONDIFF:
        return True
    mirrored = twin(primitive)
    return mirrored is not None and _key(mirrored) in _NONDIFF


def all_rules() -> list[Rule]:
    """Every registered rule, in registration order (one entry per primitive), the pending
    ones registered first."""
    if _watched:
        _load(everything=True)
    return list(_RULES.values())


def all_nondifferentiable() -> list[Any]:
    if _watched:
        _load(everything=True)
    return [k for k in _NONDIFF]


def library_rules() -> tuple[Rule, ...]:
    """The library's own rules, all of them (the pending ones registered first), as it
    registered them: what a user's registration replaced is still here."""
    if _watched:
        _load(everything=True)
    found = list(_LATER.get(_FIRST, {}).values())
    for key, rule in _LIBRARY.items():
        found += [rule, *_LATER.get(key, {}).values()]
    found += [rule for after, group in _LATER.items() if after is not _FIRST and
              after not in _LIBRARY for rule in group.values()]
    return tuple(found)


# Methods of ufuncs that compute what a function with a rule computes, keyed by (the ufunc,
# the method's name): the method's positional parameters, the function, and the defaults
# the method gives where the function's differ (``np.add.reduce`` is ``np.sum`` with
# ``axis=0``). A call of one is differentiated as that function's call (see ``same_as``).
_SAME: dict[tuple[Any, str], tuple[tuple[str, ...], Any, dict[str, Any]]] = {}


def same_as(method: Any, primitive: Any, params: tuple[str, ...], **defaults: Any) -> None:
    """Declare that a ufunc's method (``np.add.reduce``), whose positional parameters are
    ``params``, computes what ``primitive`` (``np.sum``) computes when given the method's
    arguments by name, with ``defaults`` where the method's defaults differ: its calls take
    that primitive's rules, of both modes."""
    _SAME[(method.__self__, method.__name__)] = (tuple(params), primitive, dict(defaults))


def _same(fn: Any) -> tuple[tuple[str, ...], Any, dict[str, Any]] | None:
    owner = getattr(fn, "__self__", None)
    if not isinstance(owner, np.ufunc):
        return None
    return _SAME.get((owner, getattr(fn, "__name__", None)))


def same_primitive(fn: Any) -> Any:
    """The primitive a method declared with ``same_as`` computes, or None."""
    found = _same(fn)
    return None if found is None else found[1]


def same_methods() -> list[tuple[str, Any, dict[str, Any]]]:
    """Every method declared with ``same_as``: its name, its primitive, its defaults."""
    return [(f"numpy.{ufunc.__name__}.{method}", primitive, defaults)
            for (ufunc, method), (_, primitive, defaults) in _SAME.items()]


def same_call(fn: Any, args: list, keywords: dict
              ) -> tuple[Any, list, dict, dict] | None:
    """For a method declared with ``same_as``: the primitive, and the call's arguments as
    it takes them (the first positional, the others by name) with the method's defaults
    for those not given (plain values); None for anything else."""
    found = _same(fn)
    if found is None or not args or len(args) > len(found[0]):
        return None
    params, primitive, defaults = found
    named = dict(zip(params[1:], args[1:]))
    if set(named) & set(keywords):
        return None  # given twice: NumPy raises, and the primitive's rule would too
    named.update(keywords)
    return primitive, args[:1], named, {k: v for k, v in defaults.items() if k not in named}


def primitive_name(primitive: Any) -> str:
    """A readable dotted name for a primitive: ``numpy.tanh``, ``operator.add``, ``ndarray.sum``."""
    owner = getattr(primitive, "__self__", None)
    if isinstance(owner, np.ufunc):  # np.add.reduce: the ufunc's method
        return f"numpy.{owner.__name__}.{primitive.__name__}"
    if inspect.ismethod(primitive) and isinstance(getattr(owner, "name", None), str) and \
            not isinstance(owner, type):  # scipy.stats.norm.logpdf: the instance's name
        module = ".".join(p for p in type(owner).__module__.split(".") if not p.startswith("_"))
        return f"{module}.{owner.name}.{primitive.__name__}"
    module = getattr(primitive, "__module__", None)
    qualname = getattr(primitive, "__qualname__", None) or getattr(primitive, "__name__", None)
    if qualname is None:
        objclass = getattr(primitive, "__objclass__", None)
        if objclass is not None:
            return f"{objclass.__name__}.{getattr(primitive, '__name__', '?')}"
        return repr(primitive)
    if module in (None, "builtins", "__main__"):
        return qualname
    # Public spelling: numpy.fft._pocketfft.fft -> numpy.fft.fft, _operator.add -> operator.add
    module = ".".join(p for p in module.split(".") if not p.startswith("_")) or \
        module.lstrip("_")
    return f"{module}.{qualname}"
