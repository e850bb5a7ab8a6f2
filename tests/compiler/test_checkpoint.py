"""``s2sgrad.checkpoint(f)``: memory traded for computation.

A call of a checkpointed function in differentiated code runs the plain function in the
forward and saves only its arguments; the adjoint runs the function's forward again (with
its saves) right before its backward. Wrapped as a decorator, as a global, inline, passed
in as an argument; called once, in a loop, on a chunk of a loop, with keywords and
non-differentiated arguments, on arguments written to after the call; through
``value_and_grad``, ``vjp``, ``jvp``, ``hessian``, ``@grad`` on Tensors with
``backward()`` and ``create_graph``. Every gradient is checked against central
differences and against the same function without the checkpoint; the saved values are
measured (bytes in the saved tuple), the generated code read.
"""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads

rng = np.random.default_rng(3)
A = 0.5 * rng.standard_normal((4, 4))
B = 0.1 * rng.standard_normal(4)
H0 = rng.standard_normal(4)


def block(h, a, b):
    z = np.tanh(a @ h + b)
    return h + 0.1 * z * z


block_ckpt = s2sgrad.checkpoint(block)


@s2sgrad.checkpoint
def block_decorated(h, a, b):
    z = np.tanh(a @ h + b)
    return h + 0.1 * z * z


def once_plain(h, a, b):
    return np.sum(block(h, a, b) ** 2)


def once_global(h, a, b):
    return np.sum(block_ckpt(h, a, b) ** 2)


def once_decorated(h, a, b):
    return np.sum(block_decorated(h, a, b) ** 2)


def once_inline(h, a, b):
    return np.sum(s2sgrad.checkpoint(block)(h, a, b) ** 2)


def loop_plain(h, a, b):
    for _ in range(6):
        h = block(h, a, b)
    return np.sum(h * h)


def loop_ckpt(h, a, b):
    for _ in range(6):
        h = block_ckpt(h, a, b)
    return np.sum(h * h)


def steps(h, a, b, n):
    """A chunk of a long loop: ``n`` steps."""
    for _ in range(n):
        h = block(h, a, b)
    return h


steps_ckpt = s2sgrad.checkpoint(steps)


def chunked_plain(h, a, b):
    for _ in range(5):
        h = steps(h, a, b, 8)
    return np.sum(h * h)


def chunked_ckpt(h, a, b):
    for _ in range(5):
        h = steps_ckpt(h, a, b, 8)
    return np.sum(h * h)


def scaled(h, a, b, scale=1.0, times=1):
    for _ in range(times):
        h = scale * np.tanh(a @ h + b)
    return h


scaled_ckpt = s2sgrad.checkpoint(scaled)


def with_keywords(h, a, b):
    return np.sum(scaled_ckpt(h, a, b=b, scale=0.7, times=3) ** 2)


def with_keywords_plain(h, a, b):
    return np.sum(scaled(h, a, b=b, scale=0.7, times=3) ** 2)


def written_after(h, a, b):
    """The argument is changed in place after the call: the adjoint's recompute must see
    the value the call saw."""
    x = h * 1.0
    y = block_ckpt(x, a, b)
    x[0] = 3.0
    return np.sum(y * y) + np.sum(x * h)


def written_after_plain(h, a, b):
    x = h * 1.0
    y = block(x, a, b)
    x[0] = 3.0
    return np.sum(y * y) + np.sum(x * h)


def two_calls(h, a, b):
    u = block_ckpt(h, a, b)
    v = block_ckpt(u, a, b)
    return np.sum(u * v)


def two_calls_plain(h, a, b):
    u = block(h, a, b)
    v = block(u, a, b)
    return np.sum(u * v)


def passed_in(h, a, b, step):
    for _ in range(3):
        h = step(h, a, b)
    return np.sum(h ** 2)


PAIRS = [
    (once_global, once_plain),
    (once_decorated, once_plain),
    (once_inline, once_plain),
    (loop_ckpt, loop_plain),
    (chunked_ckpt, chunked_plain),
    (with_keywords, with_keywords_plain),
    (written_after, written_after_plain),
    (two_calls, two_calls_plain),
]


@pytest.mark.parametrize("fn, plain", PAIRS, ids=[f.__name__ for f, _ in PAIRS])
def test_gradient_equals_the_plain_one_and_finite_differences(fn, plain):
    args = (H0.copy(), A.copy(), B.copy())
    check_grads(fn, *args, modes=("rev", "fwd"))
    value, grads = s2sgrad.value_and_grad(fn, (0, 1, 2))(*args)
    value_plain, grads_plain = s2sgrad.value_and_grad(plain, (0, 1, 2))(*args)
    assert value == pytest.approx(value_plain, rel=1e-13)
    for g, gp in zip(grads, grads_plain, strict=True):
        np.testing.assert_allclose(g, gp, rtol=1e-11, atol=1e-13)


def test_a_checkpointed_function_passed_in():
    args = (H0.copy(), A.copy(), B.copy())
    check_grads(passed_in, *args, block_ckpt, wrt=(0, 1, 2))
    g = s2sgrad.gradient(passed_in, (0, 1))(*args, block_ckpt)
    gp = s2sgrad.gradient(passed_in, (0, 1))(*args, block)
    for a, b in zip(g, gp, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_called_outside_differentiated_code_it_is_the_function():
    np.testing.assert_array_equal(block_ckpt(H0, A, B), block(H0, A, B))
    assert block_ckpt.__name__ == "block" and block_ckpt.__wrapped__ is block
    assert "checkpoint" in repr(block_ckpt)


def _source(fn, *args):
    spec = s2sgrad.compiler.function.specialiser(fn)
    compiled = spec.compiled((0, 1, 2), args, {})
    return compiled.forward_source, compiled.adjoint_source


def test_the_forward_calls_the_function_and_the_adjoint_runs_it_again():
    forward, adjoint = _source(once_global, H0, A, B)
    assert "block_ckpt(h, a, b)" in forward and "block_forward" not in forward
    assert "block_forward(h, a, b)[1]" in adjoint
    assert adjoint.index("block_forward(") < adjoint.index("block_backward(")
    forward, adjoint = _source(once_plain, H0, A, B)
    assert "block_forward(h, a, b)" in forward and "block_forward" not in adjoint


def _nbytes(value):
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    return 8 if isinstance(value, float) else 0


def test_the_forward_saves_less():
    """What the forward keeps for the adjoint: the step's saves per step without the
    checkpoint, one state per chunk with it."""
    args = (H0.copy(), A.copy(), B.copy())
    spec = s2sgrad.compiler.function.specialiser(chunked_ckpt)
    _, saved = spec.compiled((0, 1, 2), args, {}).forward(*args)
    spec_plain = s2sgrad.compiler.function.specialiser(chunked_plain)
    _, saved_plain = spec_plain.compiled((0, 1, 2), args, {}).forward(*args)
    assert _nbytes(saved) < _nbytes(saved_plain) / 4


def test_in_a_loop_it_saves_the_arguments_per_step():
    forward, adjoint = _source(loop_ckpt, H0, A, B)
    assert "block_ckpt(h_1, a, b)" in forward.replace("h_2", "h_1")
    assert "block_forward" in adjoint


def test_second_order_through_a_checkpoint():
    args = (H0.copy(), A.copy(), B.copy())
    check_grads(loop_ckpt, *args, wrt=0, order=2)
    hess = s2sgrad.hessian(loop_ckpt)(*args)
    np.testing.assert_allclose(hess, s2sgrad.hessian(loop_plain)(*args), rtol=1e-10,
                               atol=1e-12)


def test_gradient_of_a_gradient_through_a_checkpoint():
    def inner(h, a, b):
        return s2sgrad.gradient(loop_ckpt)(h, a, b)

    def outer(h, a, b):
        return np.sum(inner(h, a, b) ** 2)

    def outer_plain(h, a, b):
        return np.sum(s2sgrad.gradient(loop_plain)(h, a, b) ** 2)

    args = (H0.copy(), A.copy(), B.copy())
    check_grads(outer, *args, wrt=0)
    np.testing.assert_allclose(s2sgrad.gradient(outer)(*args),
                               s2sgrad.gradient(outer_plain)(*args), rtol=1e-10)


def test_on_tensors_with_backward():
    @s2sgrad.grad
    def loss(h, a, b):
        for _ in range(4):
            h = block_ckpt(h, a, b)
        return np.sum(h * h)

    def loss_plain(h, a, b):
        for _ in range(4):
            h = block(h, a, b)
        return np.sum(h * h)

    ts = [s2sgrad.tensor(v.copy(), requires_grad=True) for v in (H0, A, B)]
    loss(*ts).backward()
    check_grads(loss_plain, H0, A, B)
    expected = s2sgrad.gradient(loss_plain, (0, 1, 2))(H0, A, B)
    for t, e in zip(ts, expected, strict=True):
        np.testing.assert_allclose(t.grad.numpy(), e, rtol=1e-12)


def test_create_graph_through_a_checkpoint():
    @s2sgrad.grad
    def loss(h, a, b):
        return np.sum(block_ckpt(h, a, b) ** 2)

    h = s2sgrad.tensor(H0.copy(), requires_grad=True)
    out = loss(h, s2sgrad.tensor(A), s2sgrad.tensor(B))
    (g,) = s2sgrad.autograd.grad(out, [h], create_graph=True)
    (row,) = s2sgrad.autograd.grad(g[1], [h])
    check_grads(once_plain, H0, A, B, wrt=0, order=2)
    hess = s2sgrad.hessian(once_plain)(H0, A, B)
    np.testing.assert_allclose(row.numpy(), hess[1], rtol=1e-9, atol=1e-12)


def test_checkpoint_of_what_is_not_a_function_is_refused():
    with pytest.raises(TypeError, match="checkpoint"):
        s2sgrad.checkpoint(3.0)


def noisy(h, a, rng):
    return np.tanh(a @ h + rng.normal(size=h.shape))


def noisy_global(h, a):
    return np.tanh(a @ h + np.random.normal(size=h.shape))


def calls_noisy(h, a, rng):
    return noisy(h, a, rng) * 2.0


@pytest.mark.parametrize("callee, extra", [
    (noisy, (np.random.default_rng(0),)),
    (noisy_global, ()),
    (calls_noisy, (np.random.default_rng(0),)),  # a draw in the callee's callee
])
def test_a_checkpointed_function_that_draws_random_numbers_is_refused(callee, extra):
    """Its forward would run again in the adjoint and draw other numbers: the gradient
    would be of another function."""
    wrapped = s2sgrad.checkpoint(callee)

    def loss(h, a, *rest):
        return np.sum(wrapped(h, a, *rest) ** 2)

    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(loss)(H0, A, *extra)
    message = str(info.value)
    assert "random" in message and "test_checkpoint.py" in message
    assert "pass" in message.lower()
    assert s2sgrad.gradient(lambda h, a, *r: np.sum(callee(h, a, *r) ** 2))(H0, A, *extra) \
        is not None  # without the checkpoint: one draw, differentiated


SCALE = 0.5
OFFSET = np.array([0.1, -0.2, 0.3, 0.0])


def reads_a_global_number(h, a, b):
    return np.tanh(SCALE * (a @ h) + b)


def reads_a_global_array(h, a, b):
    return np.tanh(a @ h + b + OFFSET)


def make_closure(scale):
    def closure_block(h, a, b):
        return np.tanh(scale * (a @ h) + b)
    return closure_block


@pytest.mark.parametrize("callee, name", [
    (reads_a_global_number, "SCALE"),
    (reads_a_global_array, "OFFSET"),
    (make_closure(0.3), "scale"),
])
def test_a_checkpointed_function_that_reads_data_from_outside_is_refused(callee, name):
    """The adjoint would run it on the data as it is when the backward runs (a vjp's
    pullback, a Tensor's backward may run after the global is rebound)."""
    wrapped = s2sgrad.checkpoint(callee)

    def loss(h, a, b):
        return np.sum(wrapped(h, a, b) ** 2)

    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(loss)(H0, A, B)
    message = str(info.value)
    assert f"'{name}'" in message and "test_checkpoint.py" in message
    assert "argument" in message


class Net:
    def __init__(self, a, b):
        self.a, self.b = a, b

    @s2sgrad.checkpoint
    def block(self, h):
        return np.tanh(self.a @ h + self.b)

    def loss(self, h):
        return np.sum(self.block(self.block(h)) ** 2)


def with_a_net(h, net):
    return net.loss(h)


def given_an_object(h, net):
    return np.sum(block_of_net(h, net) ** 2)


@s2sgrad.checkpoint
def block_of_net(h, net):
    return np.tanh(net.a @ h + net.b)


def test_a_checkpointed_method_runs_as_the_method():
    net = Net(A, B)
    expected = np.tanh(A @ np.tanh(A @ H0 + B) + B)
    np.testing.assert_allclose(net.block(net.block(H0)), expected, rtol=1e-15)
    assert Net.block.__wrapped__ is Net.__dict__["block"].fn


@pytest.mark.parametrize("f", [with_a_net, given_an_object])
def test_a_checkpointed_function_given_an_object_is_refused(f):
    """It may read the object's attributes, which may change before the adjoint runs it
    again (an optimizer's step between a forward and a later backward)."""
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(f)(H0, Net(A, B))
    message = str(info.value)
    assert "object" in message and "test_checkpoint.py" in message
    assert "argument" in message


@s2sgrad.checkpoint
def block_of_nets(h, nets):
    return np.tanh(nets[0].a @ h + nets[0].b)


def given_an_object_by_keyword(h, net):
    return np.sum(block_of_net(h, net=net) ** 2)


def given_objects_in_a_list(h, net):
    return np.sum(block_of_nets(h, [net]) ** 2)


@pytest.mark.parametrize("f", [given_an_object_by_keyword, given_objects_in_a_list])
def test_an_object_by_keyword_or_in_a_container_is_refused(f):
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(f)(H0, Net(A, B))
    message = str(info.value)
    assert "object" in message and "test_checkpoint.py" in message
