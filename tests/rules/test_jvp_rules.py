"""Every library rule's forward-mode (jvp) rule, checked numerically as plain Python.

For each case of tests/rules/test_rules.py and each float input ``x`` of it (each float item of a
list input, each float value of a dict input), along a random direction ``u`` shaped like
``x`` (or its item) and for a random weight ``w`` shaped like the output,

    <w, tangent>  ==  <w, (f(x + eps u) - f(x - eps u)) / (2 eps)>

where the analytic ``tangent`` of the output comes from ``registry.jvp_lookup``:

- a template rule: entry i of ``template(u, ans, *args, **kwargs)``, i being x's parameter (a
  list or dict input gets a tangent container: ``u`` at the item, zeros elsewhere); an
  elementwise or scalar rule's entry may have the input's shape and broadcasts to the output's.
  The entry is computed as the engine inlines it (tangent.py): from the statements it needs
  alone, because the other entries need not compute with this ``g`` (``matmul``'s
  ``return g @ b, a @ g`` with ``g`` shaped like ``a``);
- a linear rule: the primitive itself, called with x replaced by its tangent and every other
  differentiable float input (one the vjp rule gives a contribution to) by zeros;
- ``None`` (a template entry, or a parameter the vjp rule gives no contribution to): zero.

A rule with a tuple or list result (``np.linalg.qr``, ``np.split``) has a tangent with one
item per item of the result, compared item after item (``test_rules.flat``). A rule registered
with ``each=`` has one input per argument of its ``*args``: its entry is the return's last,
the template called with the index of that argument.

Also checked: every library rule has a jvp rule; a user's ``vjp_rule`` drops the jvp rule its
primitive had (and ``jvp_rule`` registers one beside it); ``jvp_rule`` refuses a template whose
parameters differ from the vjp rule's, and a primitive without a vjp rule.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import textwrap

import numpy as np
import pytest

from s2sgrad.rules import doc, registry
from s2sgrad.runtime.containers import zeros_tree
from s2sgrad.testing import central_difference
from tests.rules.test_rules import (
    ATOL,
    PARAMS,
    RTOL,
    Case,
    bound_inputs,
    call,
    contributions,
    draw_like,
    entry_of,
    flat,
    is_float,
    library_rules,
    varying,
    with_input,
)

POINTWISE = ("elementwise", "scalar")  # templates whose entries broadcast to the output


# --- the inputs that move -------------------------------------------------------------------


def float_container(x):
    """A list or dict of floats, or a tuple holding floats (cho_solve's (c, lower))."""
    items = x.values() if isinstance(x, dict) else x if isinstance(x, (list, tuple)) else None
    if isinstance(x, tuple):
        return bool(items) and any(is_float(item) for item in items)
    return bool(items) and all(is_float(item) for item in items)


def moving_items(x):
    """(key, value) of each float that can move in the input x: (None, x) for a float input,
    one pair per float item of a list, tuple or dict, nothing for any other input."""
    if float_container(x):
        pairs = list(x.items()) if isinstance(x, dict) else list(enumerate(x))
        return [(k, v) for k, v in pairs if is_float(v)]
    return [(None, x)] if is_float(x) else []


def with_item(x, key, item):
    """x with its item at key replaced (x replaced itself for key None)."""
    if key is None:
        return item
    new = dict(x) if isinstance(x, dict) else list(x)
    new[key] = item
    return tuple(new) if isinstance(x, tuple) else new


# --- the two tangents -----------------------------------------------------------------------


def numeric_tangent(primitive, c: Case, where, x, key, u, w):
    """<w, d/dt f(x + t u)> by a central difference, u moving x's item at key."""
    def output(item):
        return flat(varying(primitive, c, where)(with_item(x, key, item)))
    return central_difference(output, [x if key is None else x[key]], 0, u, weight=flat(w))


def linear_tangent(primitive, c: Case, inputs, differentiable, i, dx):
    """The primitive at the tangents: input i at dx, the other differentiable inputs at 0,
    and 0 for the parameters that add a constant (np.sum's initial=)."""
    args, kwargs = c.args, c.kwargs
    kwargs = {k: 0 if k in registry.jvp_lookup(primitive).constant else v
              for k, v in kwargs.items()}
    for j, (_, value, where) in enumerate(inputs):
        if j != i and j in differentiable and (is_float(value) or float_container(value)):
            args, kwargs = with_input(args, kwargs, where, zeros_tree(value))
    return call(primitive, *with_input(args, kwargs, inputs[i][2], dx))


def names(node, context):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, context)}


@functools.cache
def entry_alone(template, i):
    """The template returning its entry i only, after the statements that entry needs (those
    writing a name it reads, and any writing none), as the engine inlines it: a function of
    the template's parameters and module globals, or None for no entry i."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(template)))
    ast.increment_lineno(tree, template.__code__.co_firstlineno - 1)
    fn = tree.body[0]
    *body, ret = fn.body
    entries = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
    if i >= len(entries):
        return None
    needed, kept = names(entries[i], ast.Load), []
    for stmt in reversed(body):
        written = names(stmt, ast.Store)
        if written & needed or not written:
            kept.append(stmt)
            needed |= names(stmt, ast.Load)
    fn.decorator_list = []
    fn.body = kept[::-1] + [ast.copy_location(ast.Return(entries[i]), ret)]
    namespace = {}
    code = compile(tree, inspect.getsourcefile(template), "exec")
    exec(code, template.__globals__, namespace)
    return namespace[fn.name]


def template_tangent(jvp, shape, c: Case, ans, i, dx, each=None):
    """Entry i of the jvp template at tangent dx, broadcast to the output for pointwise rules
    (``each``: (the rule's index parameter, the index of the moving argument of *args))."""
    entry_i = entry_alone(jvp.template, i)
    index = {} if each is None else {each[0]: each[1]}
    entry = None if entry_i is None else entry_i(dx, ans, *c.args, **c.kwargs, **index)
    if entry is None:
        return None
    return np.broadcast_to(entry, np.shape(ans)) if shape in POINTWISE else entry


def check_jvp(primitive, c: Case):
    rule, jvp = registry.lookup(primitive), registry.jvp_lookup(primitive)
    assert jvp is not None, f"{doc.name(primitive)} has no jvp rule"
    ans = call(primitive, c.args, c.kwargs)
    w = draw_like(ans)
    inputs = bound_inputs(rule, c.args, c.kwargs)
    # The parameters the vjp rule gives a contribution to (the static ones get none).
    differentiable = {j for j, g in enumerate(contributions(rule, w, ans, c.args, c.kwargs))
                      if g is not None}
    checked = 0
    for i, (name, x, where) in enumerate(inputs):
        for key, item in moving_items(x):
            u = draw_like(item)
            dx = with_item(zeros_tree(x), key, u)
            # On inputs inside the domain a rule has no business dividing by zero or making
            # a nan (see test_rules.check_rule).
            with np.errstate(divide="raise", over="raise",
                             invalid="ignore" if c.quiet else "raise"):
                if i not in differentiable:
                    tangent = None
                elif jvp.linear:
                    tangent = linear_tangent(primitive, c, inputs, differentiable, i, dx)
                else:
                    entry, k = entry_of(rule, i, inputs)
                    tangent = template_tangent(jvp, rule.shape, c, ans, entry, dx,
                                               None if k is None else (rule.each, k))
            if tangent is None:
                tangent = zeros_tree(ans) if isinstance(ans, (tuple, list)) else np.zeros(
                    np.shape(ans))
            label = name if key is None else f"{name}[{key!r}]"
            if isinstance(ans, (tuple, list)):  # one tangent per item of the result
                assert isinstance(tangent, (tuple, list)) and len(tangent) == len(ans), label
                assert [np.shape(t) for t in tangent] == [np.shape(a) for a in ans], label
            assert np.shape(flat(tangent)) == np.shape(flat(ans)), (label, np.shape(tangent))
            analytic = np.real(np.sum(flat(w) * np.asarray(flat(tangent))))  # Re <w, t>
            numeric = numeric_tangent(primitive, c, where, x, key, u, w)
            assert np.isclose(analytic, numeric, rtol=RTOL, atol=ATOL), (label, analytic,
                                                                         numeric)
            checked += 1
    assert checked, "the case has no float input to check"


@pytest.mark.parametrize("primitive, c", PARAMS)
def test_jvp_rule_matches_finite_differences(primitive, c):
    check_jvp(primitive, c)


def test_every_library_rule_has_a_jvp_rule():
    missing = {doc.name(r.primitive) for r in library_rules()
               if registry.jvp_lookup(r.primitive) is None}
    assert not missing, f"rules without a forward-mode rule: {sorted(missing)}"


# --- registration ---------------------------------------------------------------------------


@contextlib.contextmanager
def library_rules_restored(primitive):
    """Put the primitive's vjp and jvp rules back as they were, whatever the block registers."""
    rule, jvp = registry.lookup(primitive), registry.jvp_lookup(primitive)
    try:
        yield
    finally:
        registry.vjp_rule(primitive, shape=rule.shape, requires=rule.requires,
                          complex=rule.complex)(rule.template)
        if jvp.linear:
            registry.linear(primitive, constant=jvp.constant)
        elif jvp.template is not rule.template:  # pointwise rules are their own jvp template
            registry.jvp_rule(primitive)(jvp.template)
        assert registry.lookup(primitive) == rule
        assert registry.jvp_lookup(primitive) == jvp


def user_tanh(g, ans, x):  # its own jvp template, as the library's elementwise ones
    return g * (1.0 - ans * ans)


def user_sum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.broadcast_to(g, np.shape(a))


def user_sum_jvp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.sum(g, axis=axis, keepdims=keepdims)


def user_inv(g, ans, a):
    return -(np.swapaxes(ans, -1, -2) @ g @ np.swapaxes(ans, -1, -2))


def user_inv_jvp(g, ans, a):
    return -(ans @ g @ ans)


@pytest.mark.parametrize("primitive, shape, vjp, jvp", [
    (np.tanh, "elementwise", user_tanh, user_tanh),  # the library's template was its own jvp
    (np.sum, "reduce", user_sum, user_sum_jvp),  # declared linear
    (np.linalg.inv, "same", user_inv, user_inv_jvp),  # an explicit jvp template
], ids=["tanh", "sum", "inv"])
def test_a_user_vjp_rule_drops_the_jvp_rule(primitive, shape, vjp, jvp):
    assert registry.jvp_lookup(primitive) is not None
    with library_rules_restored(primitive):
        registry.vjp_rule(primitive, shape=shape)(vjp)
        assert registry.jvp_lookup(primitive) is None
        registry.jvp_rule(primitive)(jvp)  # registered beside it, the user's is used
        assert registry.jvp_lookup(primitive) == registry.JvpRule(primitive, jvp)


def test_jvp_rule_refuses_parameters_unlike_the_vjp_rule():
    before = registry.jvp_lookup(np.linalg.inv)

    def renamed(g, ans, x):
        return -(ans @ g @ ans)

    def extra(g, ans, a, b):
        return -(ans @ g @ ans), None

    def no_ans(g, a):
        return g

    for template in (renamed, extra, no_ans):
        with pytest.raises(TypeError, match=r"parameters must be \(g, ans, a\)"):
            registry.jvp_rule(np.linalg.inv)(template)
    assert registry.jvp_lookup(np.linalg.inv) == before


def test_jvp_rule_refuses_a_primitive_without_a_vjp_rule():
    def unknown(x):
        return x

    for primitive in (unknown, np.argmax):  # no rule at all; nondifferentiable
        with pytest.raises(TypeError, match="register its vjp_rule first"):
            registry.jvp_rule(primitive)(user_tanh)
        with pytest.raises(TypeError, match="register its vjp_rule first"):
            registry.linear(primitive)
        assert registry.jvp_lookup(primitive) is None
