"""Objects of user classes the compiler did not see built beside the function: built here
from a class of another module, returned by a factory function or by a method, passed in
as an argument, held in a global. Their methods are read from the class's own module (its
names resolved there), and what the compiled code relies on of an object it did not build
(its class, what each attribute holds) is part of what it is specialised on: a call with
another class or with attributes of other kinds compiles again.

Each variant is checked against central finite differences in both modes (second order
where the construct is differentiable twice), its compiled value against the plain call,
and the caller's arrays and objects as they were.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads
from tests.arguments import assert_unchanged
from tests.cases.elsewhere import (
    Averaged,
    Dense,
    Integrator,
    Net,
    Softplus,
    build_model,
    build_scaled,
)
from tests.located import assert_points_at

# Names the classes of tests/cases/elsewhere.py also use, bound here to other values: their
# methods must read their own module's.
SCALE = 10.0


def softplus(v):
    return v * 100.0


rng = np.random.default_rng(11)
X = rng.standard_normal((4, 3))
W1, B1 = rng.standard_normal((3, 5)) * 0.5, rng.standard_normal(5) * 0.3
W2, B2 = rng.standard_normal((5, 2)) * 0.5, rng.standard_normal(2) * 0.3
Y0 = np.array([1.0, 0.5, -0.3])


def checked(fn, *args, wrt=None, order=2):
    """Gradients against finite differences (both modes, second order where asked), the
    compiled value against the plain call's, and the arguments (objects included) as they
    were before."""
    before = copy.deepcopy(args)
    expected = fn(*copy.deepcopy(args))
    positions = wrt if wrt is not None else tuple(
        i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray)))
    value, _ = s2sgrad.value_and_grad(fn, wrt=positions)(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    check_grads(fn, *args, wrt=positions, modes=("rev", "fwd"))
    if order == 2:
        check_grads(fn, *args, wrt=positions, order=2, modes=("rev",))
    assert_unchanged(args, before, fn.__name__)
    for now, then in zip(args, before, strict=True):
        if hasattr(now, "__dict__"):
            assert vars(now).keys() == vars(then).keys(), fn.__name__
            for key, value in vars(now).items():
                assert type(value) is type(vars(then)[key]), (fn.__name__, key)
                if isinstance(value, np.ndarray):
                    np.testing.assert_array_equal(value, vars(then)[key])


# --- built here, from a class of another module ----------------------------------------------


def decay(y, k):
    return -k * y * y


def reaction_yield(k, y0):
    solver = Integrator(decay, 0.01)
    y = y0
    for _ in range(50):
        y = solver.step(y, k)
    return np.sum(y ** 2)


def through_super(x, W, b):
    layer = Softplus(W, b)  # Softplus.__init__ and .apply call Base's through super()
    return np.sum(layer.apply(x) ** 2)


def two_modules_one_loop(x, W, b, W2):
    first = Softplus(W, b)
    second = Dense(W2, b[:2])
    h = x
    for _ in range(2):
        h = second.apply(first.apply(np.tanh(h)) * 0.5) @ W2.T @ W.T
    return np.sum(h)


@s2sgrad.grad
def decorated_yield(k, y0):
    return reaction_yield(k, y0) * 2.0


@pytest.mark.parametrize("fn, args", [
    (reaction_yield, (0.7, Y0)),
    (through_super, (X, W1, B1)),
    (two_modules_one_loop, (X, W1, B1, W2)),
])
def test_built_here_from_another_module(fn, args):
    checked(fn, *args)


def test_the_methods_read_their_own_modules_names():
    # Softplus reads elsewhere's softplus and SCALE (0.5), not this module's
    expected = np.sum(np.log1p(np.exp(X @ W1 * 0.5 + B1)) ** 2)
    assert through_super(X, W1, B1) == pytest.approx(expected)
    value, _ = s2sgrad.value_and_grad(through_super, wrt=(1,))(X, W1, B1)
    assert value == pytest.approx(expected)


def test_decorated_and_on_a_tensor():
    k = s2sgrad.tensor(0.7, requires_grad=True)
    y0 = s2sgrad.tensor(Y0, requires_grad=True)
    decorated_yield(k, y0).backward()
    g_k, g_y0 = s2sgrad.gradient(reaction_yield, wrt=(0, 1))(0.7, Y0)
    np.testing.assert_allclose(k.grad.numpy(), 2.0 * g_k, rtol=1e-12)
    np.testing.assert_allclose(y0.grad.numpy(), 2.0 * g_y0, rtol=1e-12)


def test_the_generated_code_reads_the_attributes_as_names(capsys):
    s2sgrad.show(through_super, X, W1, B1)
    printed = capsys.readouterr().out
    code = [line for line in printed.splitlines() if not line.strip().startswith("#")]
    assert any("layer_W" in line for line in code), printed
    assert not any("Softplus(" in line for line in code), printed  # no object at run time
    assert "# adjoint of: return np.sum(layer.apply(x) ** 2)" in printed, printed


# --- returned by a factory function ----------------------------------------------------------


def factory(x, W, b):
    model = build_model((W, b))
    return np.sum(model.apply(x) ** 2)


def factory_called_at_once(x, W, b):
    return np.sum(build_scaled(W, b).apply(x))


def factory_with_a_default(x, W, b):
    model = build_scaled(W, b * 2.0)  # scale: elsewhere's SCALE, as the def evaluated it
    h = x
    for _ in range(2):
        h = model.apply(h) @ W.T
    return np.sum(h)


def local_factory(W, b):
    return Dense(np.tanh(W), b)


def factory_of_this_module(x, W, b):
    layer = local_factory(W, b)
    return np.sum(layer.apply(x))


@pytest.mark.parametrize("fn", [factory, factory_called_at_once, factory_with_a_default,
                                factory_of_this_module])
def test_returned_by_a_factory(fn):
    checked(fn, X, W1, B1)


# --- passed in, held in a global, returned by a method ---------------------------------------


LAYERS = [Dense(W1, B1), Dense(W2, B2)]
NET = Net([Dense(W1, B1), Dense(W2, B2)])


def loss(x, layers):
    h = x
    for layer in layers[:-1]:
        h = layer.apply(h)
    out = layers[-1].apply(h)[:, 0]
    return np.mean(out ** 2)


def loss_of_the_global(x):
    return loss(x, LAYERS) + np.sum(LAYERS[0].apply(x) * LAYERS[0].b)


def through_a_method(x, net):
    layer = net.layer(0)
    return np.sum(net.layer(1).apply(layer.apply(x)))


def through_attributes(x, net):
    return np.sum(net.layers[1].apply(net.first.apply(x))) * net.depth + np.sum(net.act(x))


def net_forward(x, net):
    return np.sum(net.forward(x) ** 2)


def the_global_net(x):
    return np.sum(NET.layer(1).apply(NET.layers[0].apply(x)) ** 2)


def weights_read_outside(x, layers):
    return np.sum(x @ layers[0].W) + np.sum(layers[1].b * x[:, :2])


@pytest.mark.parametrize("fn, args", [
    (loss, (X, [Dense(W1, B1), Dense(W2, B2)])),
    (loss, (X, (Dense(W1, B1), Net([Dense(W2, B2)]).first))),
    (loss_of_the_global, (X,)),
    (through_a_method, (X, Net([Dense(W1, B1), Dense(W2, B2)]))),
    (through_attributes, (X, Net([Dense(W1, B1), Dense(W2, B2)]))),
    (net_forward, (X, Net([Dense(W1, B1), Dense(W2, B2)]))),
    (the_global_net, (X,)),
    (weights_read_outside, (X, [Dense(W1, B1), Dense(W2, B2)])),
])
def test_objects_not_built_here(fn, args):
    checked(fn, *args, wrt=(0,))


@s2sgrad.grad
def decorated_loss(x, layers):
    return loss(x, layers)


def test_an_object_argument_of_a_decorated_function_on_a_tensor():
    layers = [Dense(W1, B1), Dense(W2, B2)]
    x = s2sgrad.tensor(X, requires_grad=True)
    decorated_loss(x, layers).backward()
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(loss)(X, layers),
                               rtol=1e-12)


# --- what the compile relied on: another class, attributes of other kinds ---------------------


class Doubled(Dense):
    def apply(self, h):
        return 2.0 * Dense.apply(self, h)


def test_a_call_with_attributes_of_other_kinds_compiles_again():
    grad = s2sgrad.gradient(weights_read_outside)
    first = [Dense(W1, B1), Dense(W2, B2)]
    check = [Dense(W1, B1), Dense(W2, B2[:1])]  # b of one item: broadcast, summed back
    for layers in (first, check, first):
        got = grad(X, layers)
        check_grads(weights_read_outside, X, layers, wrt=0, modes=("rev", "fwd"))
        expected = W1.sum(axis=1) + np.broadcast_to(layers[1].b, (2,)) @ np.eye(2, 3)
        np.testing.assert_allclose(got, np.broadcast_to(expected, X.shape), rtol=1e-12)


def test_a_call_with_another_class_compiles_again():
    grad = s2sgrad.gradient(loss)
    plain = grad(X, [Dense(W1, B1), Dense(W2, B2)])
    doubled = grad(X, [Doubled(W1, B1), Dense(W2, B2)])
    assert not np.allclose(plain, doubled)
    check_grads(loss, X, [Doubled(W1, B1), Dense(W2, B2)], wrt=0, modes=("rev", "fwd"))


def test_a_global_object_changed_between_calls_compiles_again():
    grad = s2sgrad.gradient(loss_of_the_global)
    before = grad(X)
    saved = LAYERS[0].b
    try:
        LAYERS[0].b = np.float64(0.25)  # a number where an array was
        check_grads(loss_of_the_global, X, modes=("rev", "fwd"))
        assert not np.allclose(grad(X), before)
        LAYERS[0].W, LAYERS[0].b = W1[:, :1], saved  # one column: broadcast against b
        check_grads(loss_of_the_global, X, modes=("rev", "fwd"))
    finally:
        LAYERS[0].W, LAYERS[0].b = W1, saved
    np.testing.assert_allclose(grad(X), before, rtol=1e-12)


def test_the_attributes_are_part_of_the_key():
    from s2sgrad.compiler.analyze import abstract_of
    assert abstract_of(Dense(W1, B1)) != abstract_of(Dense(W1, B1[:1]))
    assert abstract_of(Dense(W1, B1)) == abstract_of(Dense(W1 * 2.0, B1 + 1.0))
    assert abstract_of(Integrator(decay, 0.1)) != abstract_of(Integrator(softplus, 0.1))


# --- what stays refused ------------------------------------------------------------------------


def writes_the_callers_object(x, layer):
    layer.W = layer.W * x[0, 0]  # <- refused
    return np.sum(layer.apply(x))


def classmethod_through_an_instance(x, holder):
    return np.sum(holder.scaled(x))  # <- refused


class Holder:
    FACTOR = 3.0

    def __init__(self):
        self.note = "holder"

    @classmethod
    def scaled(cls, v):
        return v * cls.FACTOR


def built_in_a_loop(x, W, b):
    h = x
    for _ in range(2):
        model = build_model((W, b))  # <- refused
        h = model.apply(h) @ W.T
    return np.sum(h)


def without_a_rule_in_another_module(x, W):
    layer = Averaged(W)
    return layer.apply(x[0])  # <- refused


@pytest.mark.parametrize("fn, args, token, words", [
    (without_a_rule_in_another_module, (X, W1), "layer.apply(x[0])",
     "no derivative rule for statistics.fmean"),
    (writes_the_callers_object, (X, Dense(W1, B1)), "layer.W",
     "would change an object outside the function"),
    (classmethod_through_an_instance, (X, Holder()), "holder.scaled(x)",
     "classmethod called on an instance"),
    (built_in_a_loop, (X, W1, B1), "build_model((W, b))", "inside a loop"),
])
def test_refused(fn, args, token, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(*args)
    assert words in str(info.value), str(info.value)
    assert_points_at(info.value, fn, token, __file__)
