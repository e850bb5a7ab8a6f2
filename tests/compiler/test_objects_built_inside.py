"""Objects built inside a differentiated function: ``l = Lin(w)``, then ``l.forward(x)``.

The compiler follows such an object through its attributes: ``__init__`` and the methods
it calls are inlined where they are called, each attribute a variable of its own
(``l.w`` is read and written as a name would be), so the gradient flows through the
attributes as through any local. Checked as users write classes (methods calling
methods, ``__call__``, a property, a class attribute, inheritance, an attribute updated in a
loop or a branch, two objects of one class, decorated, on a Tensor) against finite
differences; an object used as a value (passed on, returned, stored) is refused at the
user's line. Frozen scipy.stats distributions (``st.norm(m, s).logpdf(x)``) are followed
the same way, as the distribution's own methods with the frozen parameters.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

try:
    import scipy.stats as st
except ImportError:  # scipy is optional: the frozen-distribution test skips
    st = None

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(5)
X = rng.standard_normal(3)
W = rng.standard_normal((3, 3)) * 0.6


class Lin:
    def __init__(self, w, b=0.0):
        self.w = w
        self.b = b

    def forward(self, x):
        return np.tanh(self.w @ x + self.b)

    def __call__(self, x):
        return self.forward(x)


class Scaled(Lin):
    scale = 2.0

    @property
    def weight(self):
        return self.w * self.scale

    def forward(self, x):
        return self.weight @ x


class Accumulator:
    def __init__(self, start):
        self.total = start
        self.count = 0

    def add(self, v):
        self.total = self.total + np.sum(v)
        self.count += 1

    def mean(self):
        return self.total / self.count


def one_layer(x, w):
    layer = Lin(w)
    return np.sum(layer.forward(x))


def called(x, w):
    layer = Lin(w, b=0.5)
    return np.sum(layer(x) ** 2)


def inherited(x, w):
    s = Scaled(w)
    return np.sum(s(x) ** 2) + np.sum(s.weight)


class Shifted(Lin):
    """Lin through super(): its __init__ and forward call the base's."""

    def __init__(self, w, shift):
        super().__init__(w, b=0.25)
        self.shift = shift

    def forward(self, x):
        return super().forward(x) * 2.0 + self.shift


class Doubled(Shifted):
    def forward(self, x):  # the grandparent's and the parent's, by both spellings
        return super(Shifted, self).forward(x) + super().forward(x)


def through_super(x, w):
    layer = Shifted(w, np.sin(x))
    return np.sum(layer(x) ** 2)


def through_super_twice(x, w):
    first = Doubled(w, 0.5)
    h = first.forward(x)
    for _ in range(2):
        h = first.forward(np.tanh(h))
    return np.sum(h)


def updated_in_a_loop(x, w):
    acc = Accumulator(np.sum(x))
    for k in range(3):
        acc.add(np.sin(w @ x * (k + 1.0)))
    return acc.mean()


def written_by_the_caller(x, w):
    layer = Lin(w)
    layer.w = layer.w * 2.0
    layer.b = x
    return np.sum(layer.forward(x))


def written_in_a_branch(x, w):
    layer = Lin(w)
    if np.sum(x) > 0:
        layer.b = x * 3.0
    return np.sum(layer(x))


def two_objects(x, w):
    first, second = Lin(w), Lin(w.T, b=x)
    return np.sum(second(first(x)))


def through_a_helper(x, w):
    return one_layer(np.sin(x), w) * 2.0


@pytest.mark.parametrize("f", [one_layer, called, inherited, updated_in_a_loop,
                               written_by_the_caller, written_in_a_branch, two_objects,
                               through_a_helper, through_super, through_super_twice])
def test_objects_built_inside(f):
    check_grads(f, X, W, modes=("rev", "fwd"), order=2)
    if f is written_in_a_branch:
        check_grads(f, -np.abs(X), W, modes=("rev", "fwd"))


@s2sgrad.grad
def decorated(x, w):
    layer = Lin(w)
    return np.sum(layer(x))


def test_decorated_and_on_a_tensor():
    x = s2sgrad.tensor(X, requires_grad=True)
    w = s2sgrad.tensor(W, requires_grad=True)
    decorated(x, w).backward()
    g_x, g_w = s2sgrad.gradient(lambda x, w: np.sum(Lin(w)(x)), wrt=(0, 1))(X, W)
    np.testing.assert_allclose(x.grad.numpy(), g_x, rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), g_w, rtol=1e-12)
    h = np.tanh(W @ X)
    np.testing.assert_allclose(g_x, W.T @ (1.0 - h * h), rtol=1e-12)


def test_the_generated_code_reads_the_attributes_as_names(capsys):
    s2sgrad.show(one_layer, X, W)
    printed = capsys.readouterr().out
    assert "layer_w" in printed and "# adjoint of: return np.tanh(self.w @ x + self.b)" in \
        printed and "# self.w = w" in printed
    code = [line for line in printed.splitlines() if not line.strip().startswith("#")]
    assert not any("Lin(" in line for line in code)  # no object is built at run time


# --- what stays refused ----------------------------------------------------------------------


def passed_on(x, w):
    layer = Lin(w)
    return np.sum(apply(layer, x))


def apply(layer, x):
    return layer(x)


def returned(x, w):
    return Lin(w * x)


def stored(x, w):
    layers = [Lin(w)]
    return np.sum(layers[0](x))


def built_in_a_loop(x, w):
    for _ in range(2):
        layer = Lin(w)
        x = layer(x)
    return np.sum(x)


def new_attribute(x, w):
    layer = Lin(w)
    layer.extra = x
    return np.sum(layer(x) * layer.extra)


class HeldSuper(Lin):
    def forward(self, x):
        parent = super()
        return parent.forward(x)


def super_held(x, w):
    return np.sum(HeldSuper(w).forward(x))


def local_class(x, w):
    class Local:
        def __init__(self, w):
            self.w = w

    return np.sum(Local(w).w @ x)


@pytest.mark.parametrize("f, words", [
    (passed_on, "used as a value"),
    (returned, "used as a value"),
    (stored, "used as a value"),
    (built_in_a_loop, "inside a loop"),
    (new_attribute, "'extra'"),
    (local_class, "class definitions inside"),
    (super_held, "super() is followed only as the receiver of a method call"),
])
def test_refused(f, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(f)(X, W)
    assert words in str(info.value)
    assert "test_objects_built_inside.py" in str(info.value)


# --- attributes set where the loop cannot see them, and properties with setters -----------


def set_by_a_nested_function(x, w):
    layer = Lin(w)

    def step(h):
        layer.b = h * 0.5
        return layer(h)

    h = x
    for _ in range(3):
        h = step(h)
    return np.sum(h) + np.sum(layer.b)


class Halved:
    def __init__(self, w):
        self.w = w  # through the setter: _w is w / 2

    @property
    def w(self):
        return self._w * 2.0

    @w.setter
    def w(self, value):
        self._w = value / 2.0


def through_a_setter(x, w):
    h = Halved(w * x)
    return np.sum(h._w)


def test_an_attribute_set_inside_a_nested_function_in_a_loop():
    check_grads(set_by_a_nested_function, X, W, modes=("rev", "fwd"), order=2)


def test_a_property_setter_is_refused():
    with pytest.raises(TransformError, match="setter is not followed"):
        s2sgrad.gradient(through_a_setter)(X, W)


class Dense:
    def __init__(self, params, activation=np.tanh):
        self.W, self.b = params
        self.activation = activation

    def __call__(self, x):
        return self.activation(x @ self.W + self.b)


def unpacked_attributes_and_a_function_held(x, w):
    relu_like = Dense((w, 0.1), activation=np.sin)
    return np.sum(Dense((w.T, x))(relu_like(x)) ** 2)


def test_attributes_set_by_unpacking_and_a_function_held_in_one():
    check_grads(unpacked_attributes_and_a_function_held, X, W, modes=("rev", "fwd"), order=2)


# --- frozen scipy.stats distributions ------------------------------------------------------


def frozen_normal(mu, sigma, x):
    d = st.norm(mu, sigma)
    return -np.sum(d.logpdf(x)) + np.sum(st.norm(loc=mu, scale=1.0).cdf(x)) + d.entropy()


def frozen_in_a_loop(mus, x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(st.t(4.0, loc=mus[k]).logpdf(x))
    return total


def frozen_passed_on(mu, x):
    d = st.norm(mu, 1.0)
    return np.sum(log_density(d, x))


def log_density(d, x):
    return d.logpdf(x)


def frozen_named_in_a_loop(mus, x):
    total = 0.0
    for k in range(3):
        d = st.norm(mus[k], 1.0)
        total = total + np.sum(d.pdf(x))
    return total


def test_frozen_distributions():
    pytest.importorskip("scipy")
    check_grads(frozen_normal, 0.3, 1.2, X, modes=("rev", "fwd"), order=2)
    check_grads(frozen_in_a_loop, X, X, modes=("rev", "fwd"))
    for f, words in ((frozen_passed_on, "used as a value"),
                     (frozen_named_in_a_loop, "inside a loop")):
        with pytest.raises(TransformError, match=words):
            s2sgrad.gradient(f)(X[0] if f is frozen_passed_on else X, X)


class Cell:
    def __init__(self, w):
        self.w = w
        self.steps = 0

    def step(self, h, x):
        self.steps += 1
        self.bump()
        return np.tanh(self.w @ h + x)

    def bump(self):
        self.w = self.w * 0.9  # set by a method that another method calls


def unrolled(w, xs):
    cell = Cell(w)
    hs = {-1: np.zeros(3)}
    for t in range(3):
        hs[t] = cell.step(hs[t - 1], xs[t])
    return np.sum(hs[2] ** 2) * cell.steps


def test_attributes_a_loop_sets_through_methods_are_carried(capsys):
    check_grads(unrolled, W, np.stack([X, X * 2.0, X * 3.0]), modes=("rev", "fwd"), order=2)
    s2sgrad.show(one_layer_in_a_loop, X, W)
    printed = capsys.readouterr().out
    assert "layer_w_1 = layer_w" not in printed  # not set in the loop: not carried


def one_layer_in_a_loop(x, w):
    layer = Lin(w)
    for _ in range(2):
        x = layer(x)
    return np.sum(x)


class Swappable:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return np.sin(self.w * x)


def swapped(x, w):
    return np.sum(Swappable(w).apply(x))


def cosine_apply(self, x):
    return np.cos(self.w * x)


def test_a_method_replaced_on_the_class_compiles_again():
    first = s2sgrad.gradient(swapped)(X, X)
    original = Swappable.apply
    try:
        Swappable.apply = cosine_apply
        second = s2sgrad.gradient(swapped)(X, X)
    finally:
        Swappable.apply = original
    np.testing.assert_allclose(first, X * np.cos(X * X))
    np.testing.assert_allclose(second, -X * np.sin(X * X))


# --- attributes changed in place: a list appended to, an array written ---------------------


class Recorder:
    def __init__(self):
        self.hs = []
        self.buf = np.zeros(3)

    def record(self, h):
        self.hs.append(h)
        return h

    def total(self):
        return sum(np.sum(h) for h in self.hs)

    def poke(self, k, v):
        self.buf[k] = v


def records(x):
    r = Recorder()
    r.record(x * 2.0)
    r.record(np.sin(x))
    r.poke(0, x[0] ** 2)
    return r.total() + np.sum(r.buf * 3.0)


def records_in_a_loop(x):
    r = Recorder()
    for k in range(3):
        r.record(x * k)
        r.poke(k, x[k] * (k + 1.0))
        r.hs.append(r.buf * 1.0)
    return r.total() + np.sum(r.buf ** 2)


@pytest.mark.parametrize("f", [records, records_in_a_loop])
def test_attributes_changed_in_place(f):
    check_grads(f, X, modes=("rev", "fwd"), order=2)


@dataclasses.dataclass
class _State:
    theta: float
    omega: float

    def step(self, dt):
        omega = self.omega - dt * np.sin(self.theta)
        return _State(self.theta + dt * omega, omega)


def pendulum(theta0):
    state = _State(theta0, 0.0)
    for _ in range(3):
        state = state.step(0.1)
    return state.theta  # <- refused


def test_an_attribute_of_an_object_a_callee_returned_is_refused_as_an_attribute():
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(pendulum)(0.3)
    message = str(info.value)
    assert "the attribute .theta of a value whose class is not known" in message, message
    assert "method" not in message.splitlines()[0], message
    assert_points_at(info.value, pendulum, "state.theta", __file__)
