"""Higher order: the derivatives of a derivative, as first-order derivatives of generated code.

A call of ``D = gradient(f, wrt=P)`` (a ``Derivative``) inside differentiated code, or a
transform of ``D`` itself, needs ``D``'s own derivatives. They are not found by
differentiating ``f``'s adjoint. By the symmetry of second derivatives both are first-order
derivatives of ``f``'s tangent function ``F(x; t) = <grad_P f(x), t>``, which forward mode
generates as ordinary source:

    reverse   D's output has cotangent g    ->  input a gets  d/da F(x; t=g)
              (the vjp of F, the tangent parameters held at g)
    forward   the inputs move along u       ->  D's output moves by  grad_P F(x; u),
              F now f's tangent function along u: a Derivative of generated code

So a second derivative is reverse (or forward) mode applied to a generated tangent function,
a third one the same one level up: the compiler applied to its own output. The pair and the
tangent function of a Derivative are themselves generated source, short and readable:

    def grad_f_forward(x, y):               def grad_f_backward(saved, out_bar):
        return grad_f(x, y), (x, y)             x, y = saved
                                                _, f_jvp_saved = f_jvp_forward(
                                                    x, y, x_dot=out_bar)
                                                return f_jvp_backward(f_jvp_saved, 1.0)

    def grad_f_jvp(x, y, *, x_dot, y_dot):
        return grad_f(x, y), grad_f_jvp_dot(x, y, x_dot=x_dot, y_dot=y_dot)

A Hessian's columns in one call (``derivative_rows``) are the one place forward mode reads
f's adjoint: the gradient written as f's own forward and backward, whose tangent function
for a batch of directions costs about a gradient per direction (forward over reverse).
Reverse mode over f's batched tangent function, in its rows of tangents, is the adjoint for
a batch of cotangents (``transposed``): a Jacobian's rows in one call.

``compile_vjp`` and ``compile_jvp`` (pipeline) hand a Derivative to ``derivative_pair``,
``derivative_tangent`` and ``derivative_rows``, passing themselves in.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

from ..errors import TransformError
from ..rules import registry
from . import sourcefile
from .analyze import Abstract
from .batching import NotBatchable
from .compiled import Compiled, CompiledJvp, state_of
from .derivatives import Derivative, make, signature_of
from .parse import parse, source_lines, unwrap
from .validity import own_state


def target_of(d: Derivative) -> Any:
    """The function a Derivative differentiates, as the compiler reads it."""
    target = d.derivative_of
    if isinstance(target, Derivative):
        return target
    plain = unwrap(target)
    if signature_of(plain) != signature_of(target):  # a bound method: self is not a parameter
        raise TransformError(
            f"{d.transform} is of a method bound to an object; its derivatives are computed "
            "for functions. Differentiate a function that takes the object as an argument.")
    return plain if inspect.isfunction(plain) else stand_in_of(plain)


def root_of(d: Any) -> Callable:
    """The plain function at the bottom of a chain of Derivatives."""
    while isinstance(d, Derivative):
        d = target_of(d)
    return d


def stand_in_of(fn: Any) -> Callable:
    """What the compiler reads for a function without source: the stand-in of a library
    function with a rule (``gradient(np.linalg.det)``) or of a ``functools.partial``
    (sourcefile.stand_in); anything else is refused."""
    rule = registry.lookup(fn)
    if rule is None and not isinstance(fn, functools.partial):
        parse(fn)  # raises the TransformError that explains why
    return sourcefile.stand_in(fn, () if rule is None else tuple(
        p for p in rule.params if p not in rule.defaults))


def names_of(d: Derivative) -> tuple[str, ...]:
    """The parameters a Derivative differentiates, by name."""
    params = [p for p in signature_of(d.derivative_of).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = []
    for i in d.positions:
        if not -len(params) <= i < len(params):
            fn, name, place = _star_args_of(root_of(d))
            raise TransformError(
                f"a derivative of a derivative with respect to a value that {fn.__qualname__}"
                f"() receives through *{name}: those are computed for named parameters only",
                *place, hint="Name the parameter in the function's signature.")
        names.append(params[i].name)
    return tuple(names)


def _star_args_of(fn: Callable) -> tuple[Callable, str, tuple[str, int, int]]:
    """The function whose ``*args`` a derivative reaches (the one it calls, for a function
    s2sgrad wrote that passes its parameters on), the parameter's name, and its file, line
    and column."""
    while getattr(fn, "__s2sgrad_calls__", None) is not None:
        fn = unwrap(fn.__s2sgrad_calls__)
    code = fn.__code__
    name = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
    lines, start = source_lines(code, fn.__globals__)
    for k, line in enumerate(lines):
        col = line.find(f"*{name}")
        if col >= 0:
            return fn, name, (code.co_filename, start + k, col)
    return fn, name, (code.co_filename, code.co_firstlineno, 0)


def _valid_state(d: Derivative) -> dict[str, Any]:
    root = root_of(d)
    own = own_state(root)
    return {"version": registry.version, "code": own[0][3], "defaults": own[1][3], "own": own,
            "walk": True}


def _result_value(d: Derivative, signature: dict[str, Abstract], value: Abstract) -> Abstract:
    grads = [signature[n] for n in names_of(d)]
    grad = grads[0] if d.single else _tuple(grads)
    return _tuple([value, grad]) if d.with_value else grad


def _may_be_array(value: Abstract) -> bool:
    """Whether f's output may be an array that is not 0-d (one of one entry, then)."""
    return value.kind == "array" and value.ndim != 0


def _tuple(items: list[Abstract]) -> Abstract:
    return Abstract("object", (None,) * len(items), any(a.float for a in items), tuple,
                    tuple(enumerate(items)))


class _Names:
    """Names for generated source that no parameter of the function shadows."""

    def __init__(self, d: Any):
        self.taken = set(signature_of(d).parameters)

    def __call__(self, base: str) -> str:
        while base in self.taken:
            base += "_"
        self.taken.add(base)
        return base


def derivative_pair(d: Derivative, wrt: tuple[str, ...], signature: dict[str, Abstract],
                    compile_vjp: Callable, compile_jvp: Callable) -> Compiled:
    """The forward/backward pair of a Derivative, differentiated in ``wrt``."""
    f = target_of(d)
    names = names_of(d)
    tangent = compile_jvp(f, names, signature, "both" if d.with_value else "tangent")
    dots = dict(zip(names, tangent.tangent_params, strict=True))
    outer = compile_vjp(tangent.jvp, wrt, {**signature, **{
        dots[n]: signature[n] for n in names}})
    fresh = _Names(d)
    name, inner = fresh(_name(d)), outer.name  # inner: f_jvp, whose pair this one calls
    forward, backward = fresh(f"{inner}_forward"), fresh(f"{inner}_backward")
    bindings: dict[str, Any] = {name: d, forward: outer.forward, backward: outer.backward}
    params, call = sourcefile.parameters(signature_of(d), bindings)
    saved = [p.lstrip("*").split("=")[0] for p in params if p not in ("/", "*")]
    packed = ", ".join(saved) + ("," if len(saved) == 1 else "")
    forward_fn = sourcefile.define(
        f"{_name(d)}_forward", params, f"{name}({', '.join(call)}), ({packed})", (), bindings)
    saved_name, out_bar, inner_saved = fresh("saved"), fresh("out_bar"), fresh(
        f"{inner}_saved")
    # f's tangent is seeded with 1.0, or with ones shaped as it where f returns an array
    # (of one entry, as a gradient requires): the tangent the inner forward returns
    moving = fresh("tangent") if _may_be_array(tangent.result_value) else "_"
    one = "1.0" if moving == "_" else f"np.ones_like({moving})"
    if d.with_value:
        value_bar, grad_bar = fresh("value_bar"), fresh("grad_bar")
        unpack = [f"{value_bar}, {grad_bar} = {out_bar}"]
        seed, grads = f"({value_bar}, {one})", grad_bar
        moving = "_" if moving == "_" else f"(_, {moving})"
    else:
        unpack, seed, grads = [], one, out_bar
    moved = [f"{dots[n]}={grads}" if d.single else f"{dots[n]}={grads}[{k}]"
             for k, n in enumerate(names)]
    body = (f"{packed} = {saved_name}", *unpack,
            f"{moving}, {inner_saved} = {forward}({', '.join(call + moved)})")
    backward_fn = sourcefile.define(
        f"{_name(d)}_backward", [saved_name, out_bar], f"{backward}({inner_saved}, {seed})",
        body, bindings)
    state = _valid_state(d)
    return Compiled(root_of(d), _name(d), tuple(wrt), tuple(sorted(signature.items())),
                    forward_fn, backward_fn, sourcefile.source_of(forward_fn),
                    sourcefile.source_of(backward_fn), tuple(saved),
                    _result_value(d, signature, tangent.result_value), sourcefile.FILENAME,
                    frozenset(), tangent.dependencies + outer.dependencies,
                    external=tuple(enumerate(saved)), calls=(tangent, outer), **state)


def derivative_tangent(d: Derivative, wrt: tuple[str, ...], signature: dict[str, Abstract],
                       compile_jvp: Callable, returns: str = "both") -> CompiledJvp:
    """The tangent function of a Derivative, for tangents of ``wrt``: the Derivative
    itself (for the value), and the same kind of Derivative of f's tangent function along
    ``wrt`` (returning the tangent alone), which is the tangent of every output."""
    f = target_of(d)
    moving = compile_jvp(f, wrt, signature, "tangent")
    made = make(moving.jvp, d.positions if not d.single else d.positions[0], d.with_value)
    fresh = _Names(d)
    name = fresh(_name(d))
    dot_name = fresh(f"{_name(d)}_jvp_dot")
    bindings: dict[str, Any] = {name: d, dot_name: made}
    params, call = sourcefile.parameters(signature_of(d), bindings)
    dots = tuple(fresh(f"{w}_dot") for w in wrt)
    # the tangents are keyword-only, before any **kwargs
    end = next((k for k, p in enumerate(params) if p.startswith("**")), len(params))
    marker = [] if any(p == "*" or (p.startswith("*") and not p.startswith("**"))
                       for p in params[:end]) else ["*"]
    signature_text = params[:end] + marker + list(dots) + params[end:]
    moved = [f"{p}={t}" for p, t in zip(moving.tangent_params, dots, strict=True)]
    value = f"{name}({', '.join(call)})"
    dot = f"{dot_name}({', '.join(call + moved)})"
    expression = dot if returns == "tangent" else f"{value}, {dot}"
    jvp = sourcefile.define(f"{_name(d)}_jvp", signature_text, expression, (), bindings)
    state = _valid_state(d)
    return CompiledJvp(root_of(d), _name(d), tuple(wrt), tuple(sorted(signature.items())),
                       jvp, sourcefile.source_of(jvp), dots,
                       _result_value(d, signature, moving.result_value),
                       sourcefile.FILENAME, frozenset(), moving.dependencies, **state)


def derivative_rows(d: Derivative, wrt: tuple[str, ...], signature: dict[str, Abstract],
                    compile_vjp: Callable, compile_jvp: Callable, returns: str = "tangent"
                    ) -> CompiledJvp:
    """The tangent function of a gradient for a batch of directions (a Hessian's columns
    at once). The gradient is first written as generated code, and its batched tangent
    function is then generated like any other:

    - forward over reverse: the gradient is f's own forward and backward, read again by
      forward mode; a direction costs about what a gradient costs.

        def grad_f(x, y):
            return f_backward(f_forward(x, y)[1], 1.0)[0]

    - forward over forward, where forward mode refuses f's adjoint: the gradient is f's
      batched tangent function along every direction of its input (the identity). A
      direction then costs as much as the whole gradient, so the record says so
      (``quadratic``) and a caller batches few directions only.

        def grad_f_rows(x, y):
            return np.reshape(f_rows(x, y, x_dot=np.reshape(np.eye(np.size(x)),
                (np.size(x),) + np.shape(x)), batch=np.size(x)), np.shape(x))

    Where neither can be done, the record says why (``unbatchable``)."""
    state = _valid_state(d)
    try:
        if d.with_value or not d.single or isinstance(d.derivative_of, Derivative):
            raise NotBatchable(f"{d.transform}: only a gradient of one argument of a function "
                               "is batched")
        f = target_of(d)
        (p,) = names_of(d)
        try:
            pair = compile_vjp(f, (p,), signature)
            gradient = _gradient_source(d, pair)
            compiled = compile_jvp(gradient, wrt, signature, returns, batched=True)
            if compiled.unbatchable:
                raise NotBatchable(compiled.unbatchable)
        except (TransformError, NotBatchable):  # forward mode refuses f's adjoint
            compiled = dataclasses.replace(
                _over_forward(d, p, wrt, signature, compile_jvp, returns), quadratic=True)
    except NotBatchable as exc:
        return _not_batched(d, wrt, signature, state, str(exc))
    return dataclasses.replace(compiled, fn=root_of(d), **state)


def _gradient_source(d: Derivative, pair: Compiled) -> Callable:
    """``d`` as generated code: f's forward, then its backward from the seed 1.0."""
    fresh = _Names(d)
    forward, backward = fresh(f"{pair.name}_forward"), fresh(f"{pair.name}_backward")
    bindings: dict[str, Any] = {forward: pair.forward, backward: pair.backward}
    params, call = sourcefile.parameters(signature_of(d), bindings)
    return sourcefile.define(fresh(_name(d)), params,
                             f"{backward}({forward}({', '.join(call)})[1], 1.0)[0]", (),
                             bindings)


def _over_forward(d: Derivative, p: str, wrt: tuple[str, ...], signature: dict[str, Abstract],
                  compile_jvp: Callable, returns: str) -> CompiledJvp:
    f = target_of(d)
    rows = compile_jvp(f, (p,), signature, "tangent", batched=True)
    if rows.unbatchable:
        raise NotBatchable(f"{rows.name}() cannot be batched: {rows.unbatchable}")
    fresh = _Names(d)
    rows_name = fresh(f"{rows.name}_rows")
    bindings: dict[str, Any] = {rows_name: rows.jvp}
    params, call = sourcefile.parameters(signature_of(d), bindings)
    size = f"np.size({p})"
    eye = f"np.reshape(np.eye({size}), ({size},) + np.shape({p}))"
    expression = (f"np.reshape({rows_name}({', '.join(call)}, "
                  f"{rows.tangent_params[0]}={eye}, {rows.batch}={size}), np.shape({p}))")
    gradient = sourcefile.define(fresh(f"{_name(d)}_rows"), params, expression, (), bindings)
    try:
        compiled = compile_jvp(gradient, wrt, signature, returns, batched=True)
    except TransformError as exc:  # a construct of f's batched tangent function that
        # forward mode refuses when it reads that function again (a rule called row by
        # row): one Hessian-vector product per direction does not read it
        raise NotBatchable(f"{d.transform}: {exc.reason}") from None
    if compiled.unbatchable:
        raise NotBatchable(compiled.unbatchable)
    return compiled


@dataclasses.dataclass
class Transposed:
    """f's batched tangent function with its rows of tangents as the first parameters
    (``fn``), and why the reverse pass refuses it, once known (``refused``)."""

    fn: Callable
    refused: str | None = None


def transposed(rows: CompiledJvp, fn: Any) -> Transposed:
    """The adjoint of ``fn`` for a batch of cotangents, as reverse mode over its batched
    tangent function ``rows``. That function is linear in its rows of tangents, so its vjp
    in them takes rows of cotangents of the output to rows of cotangents of the inputs:
    with the identity as the cotangents, every row of a Jacobian in one call.

        def f_jvp_transposed(x_dot, W, x):
            return f_jvp(W, x, x_dot=x_dot, batch=np.shape(x_dot)[0])

    One per batched tangent function; the caller records a refusal of its pair (a rule
    called row by row in the batched code) in ``refused``, so that it is not tried again."""
    state = state_of(rows.jvp)  # kept on the function: freed with it
    known = state.transposed
    if known is None:
        fresh = _Names(fn)
        name = fresh(rows.name)
        bindings: dict[str, Any] = {name: rows.jvp}
        params, call = sourcefile.parameters(signature_of(fn), bindings)
        dots = [fresh(p) for p in rows.tangent_params]
        moved = [f"{p}={d}" for p, d in zip(rows.tangent_params, dots, strict=True)]
        expression = (f"{name}({', '.join(call + moved)}, "
                      f"{rows.batch}=np.shape({dots[0]})[0])")
        known = Transposed(sourcefile.define(fresh(f"{rows.name}_transposed"),
                                             dots + params, expression, (), bindings))
        state.transposed = known
    return known


def _not_batched(d: Derivative, wrt: tuple[str, ...], signature: dict[str, Abstract],
                 state: dict[str, Any], why: str) -> CompiledJvp:
    return CompiledJvp(root_of(d), _name(d), tuple(wrt), tuple(sorted(signature.items())), None,
                       "", (), _result_value(d, signature, signature[wrt[0]]), "",
                       unbatchable=why, **state)


def _name(d: Any) -> str:
    """grad_f, value_and_grad_f, grad_grad_f: a readable identifier for a Derivative."""
    prefix = "value_and_grad_" if d.with_value else "grad_"
    inner = d.derivative_of
    if isinstance(inner, Derivative):
        return prefix + _name(inner)
    return prefix + sourcefile.identifier(getattr(unwrap(inner), "__name__", None), "f")
