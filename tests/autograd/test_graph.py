"""The graph between compiled functions and the backward engine, with PyTorch's behaviour and
error messages (the texts are compared with torch itself in test_torch_oracle.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2sgrad
from s2sgrad import autograd
from s2sgrad.autograd import graph
from s2sgrad.autograd.grad_mode import no_grad
from s2sgrad.autograd.graph import AccumulateGrad
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.testing import numeric_gradient
from tests.autograd.test_tensor_fd import check_backward

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
         "after they have already been freed). Saved intermediate values of the graph are freed "
         "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
         "to backward through the graph a second time or if you need to access saved tensors "
         "after calling backward.")
MODIFIED = ("one of the variables needed for gradient computation has been modified by an "
            "inplace operation: ")


@s2sgrad.grad
def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


@s2sgrad.grad
def scale(a, k):
    return a * k


@s2sgrad.grad
def count(a):
    return np.argmax(a)


rng = np.random.default_rng(7)
X = rng.standard_normal((4, 3))
Y = rng.standard_normal((4, 1))
W0 = rng.standard_normal((3, 1))

# -- backward and accumulation -------------------------------------------------------------


def test_backward_accumulates_into_the_same_grad_object() -> None:
    x = tensor([2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    first = x.grad
    # d/dx sum(x*x) = 2x, by hand; also checked numerically in test_tensor_ops.py.
    assert first.tolist() == [4.0, 6.0]
    (x * x).sum().backward()
    assert x.grad is first  # updated in place, as PyTorch does
    assert first.tolist() == [8.0, 12.0]
    assert not first.requires_grad and first.is_leaf


def test_gradient_does_not_alias_the_seed() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    seed = tensor([1.0, 1.0])
    (x + 0.0).backward(seed)
    seed.data[:] = 5.0
    assert x.grad.tolist() == [1.0, 1.0]
    x.grad.zero_()  # the stored gradient is writable
    assert x.grad.tolist() == [0.0, 0.0]


def test_backward_on_a_leaf() -> None:
    x = tensor([2.0, 3.0], requires_grad=True)
    x.backward(tensor([1.0, 1.0]))
    assert x.grad.tolist() == [1.0, 1.0]
    s = tensor(2.0, requires_grad=True)
    s.backward()
    assert s.grad.item() == 1.0


def test_backward_twice_fails_once_saved_values_are_freed() -> None:
    x = tensor([2.0], requires_grad=True)
    z = (x * x).sum()
    z.backward()
    with pytest.raises(RuntimeError) as info:
        z.backward()
    assert str(info.value) == FREED


def test_retain_graph_allows_a_second_backward() -> None:
    x = tensor([2.0], requires_grad=True)
    z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert x.grad.tolist() == [8.0]  # 2 * (2x) at x = 2
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()


def test_a_graph_that_saved_nothing_may_run_twice() -> None:
    x = tensor([2.0, 1.0], requires_grad=True)
    y = x + 3.0  # the adjoint of + needs no primal value
    y.backward(tensor([1.0, 1.0]))
    y.backward(tensor([1.0, 1.0]))
    assert x.grad.tolist() == [2.0, 2.0]


def test_non_scalar_needs_a_gradient() -> None:
    x = tensor([2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward()
    assert str(info.value) == "grad can be implicitly created only for scalar outputs"
    (x * 2).backward(np.array([1.0, 0.5]))  # an ndarray works as the gradient
    assert x.grad.tolist() == [2.0, 1.0]


def test_gradient_of_the_wrong_shape() -> None:
    x = tensor([2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward(tensor([1.0, 1.0, 1.0]))
    assert str(info.value) == ("Mismatch in shape: grad_output[0] has a shape of (3,) and "
                               "output[0] has a shape of (2,).")


def test_backward_on_a_tensor_that_does_not_require_grad() -> None:
    with pytest.raises(RuntimeError) as info:
        tensor([2.0]).sum().backward()
    assert str(info.value) == ("element 0 of tensors does not require grad and does not have "
                               "a grad_fn")
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        tensor([2.0, 1.0]).backward()


def test_diamond_and_fan_out_are_summed_before_each_node_runs() -> None:
    # y feeds two branches that meet again: y's node must run once, after both arrive.
    def f(x: Tensor) -> Tensor:
        y = x * x
        return (y + 1.0) * (y * 2.0) + np.tanh(y)

    check_backward(f, np.array([0.3, -1.2]))


def test_a_long_chain_does_not_recurse() -> None:
    x = tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, [1.0001 ** 3000])


def test_backward_with_inputs_accumulates_only_there() -> None:
    a = tensor([1.0], requires_grad=True)
    b = tensor([2.0], requires_grad=True)
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


def test_autograd_backward_with_several_roots() -> None:
    a = tensor([1.0, 2.0], requires_grad=True)
    autograd.backward([(a * 3.0).sum(), a * a], [None, tensor([1.0, 1.0])])
    assert a.grad.tolist() == [5.0, 7.0]  # 3 + 2a


def test_next_functions_lead_to_the_producers() -> None:
    x = tensor([1.0], requires_grad=True)
    y = x * 2.0
    z = y + x
    producers = [node for node, _ in z.grad_fn.next_functions]
    assert producers[0] is y.grad_fn
    # a leaf: the AccumulateGrad that adds into x.grad, the same object for every edge into x
    assert isinstance(producers[1], AccumulateGrad) and producers[1].variable is x
    assert y.grad_fn.next_functions[0][0] is producers[1]
    assert producers[1].next_functions == ()
    assert repr(producers[1]).startswith("<AccumulateGrad object at 0x")


def test_next_functions_print_like_torch() -> None:
    torch = pytest.importorskip("torch")
    texts = []
    for lib in (torch, None):
        make = torch.tensor if lib is torch else tensor
        x = make([1.0, 2.0], requires_grad=True)
        y = x * x + x
        texts.append(re.sub(r"0x[0-9a-f]+", "0x", str(y.grad_fn.next_functions)))
        texts.append(re.sub(r"0x[0-9a-f]+", "0x", str(
            y.grad_fn.next_functions[0][0].next_functions)))
    assert texts[0] == texts[2] and texts[1] == texts[3], texts


# -- retain_grad -----------------------------------------------------------------------------


def test_retain_grad_fills_and_accumulates_a_non_leaf_grad() -> None:
    x = tensor([2.0], requires_grad=True)
    y = x * 3.0
    y.retain_grad()
    assert y.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    assert y.grad.tolist() == [12.0]  # dz/dy = 2y = 12 at y = 6
    z.backward()
    assert y.grad.tolist() == [24.0]
    assert x.grad.tolist() == [72.0]  # 2 * (2y * 3)


# -- autograd.grad ---------------------------------------------------------------------------


def test_autograd_grad_returns_gradients_without_touching_grad() -> None:
    x = tensor([2.0], requires_grad=True)
    y = x * 3.0
    y.retain_grad()
    (gx,) = autograd.grad((y * y).sum(), [x])
    assert gx.tolist() == [36.0] and not gx.requires_grad
    assert x.grad is None and y.grad is None


def test_autograd_grad_with_respect_to_a_non_leaf() -> None:
    x = tensor([2.0], requires_grad=True)
    y = x * 3.0
    gy, gx = autograd.grad((y * y).sum(), [y, x])
    assert gy.tolist() == [12.0] and gx.tolist() == [36.0]


def test_autograd_grad_single_input_and_grad_outputs() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    result = autograd.grad(x * x, x, grad_outputs=tensor([1.0, 0.5]))
    assert isinstance(result, tuple) and result[0].tolist() == [2.0, 2.0]


def test_autograd_grad_unused_input() -> None:
    x = tensor([2.0], requires_grad=True)
    w = tensor([2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        autograd.grad((x * 2.0).sum(), [x, w])
    assert str(info.value) == ("The differentiated Tensor at index 1 appears to not have been "
                               "used in the graph. Set allow_unused=True if this is the desired "
                               "behavior.")
    gx, gw = autograd.grad((x * 2.0).sum(), [x, w], allow_unused=True)
    assert gx.tolist() == [2.0] and gw is None


def test_autograd_grad_input_that_does_not_require_grad() -> None:
    x = tensor([2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        autograd.grad((x * 2.0).sum(), [tensor([1.0])])
    assert str(info.value) == "One of the differentiated Tensors does not require grad"


def test_autograd_grad_frees_the_graph_unless_retained() -> None:
    x = tensor([2.0], requires_grad=True)
    z = (x * x).sum()
    autograd.grad(z, [x], retain_graph=True)
    autograd.grad(z, [x])
    with pytest.raises(RuntimeError) as info:
        autograd.grad(z, [x])
    assert str(info.value) == FREED


def test_autograd_grad_runs_only_what_it_needs() -> None:
    a = tensor([1.0], requires_grad=True)
    b = tensor([2.0], requires_grad=True)
    ab = a * b
    z = (ab + b * b).sum()
    (gab,) = autograd.grad(z, [ab])
    assert gab.tolist() == [1.0]
    assert ab.grad_fn.saved is not None  # the product's node was not needed, so not freed


# -- in-place changes and version counters -------------------------------------------------


def test_in_place_change_of_a_leaf_that_requires_grad() -> None:
    x = tensor([2.0], requires_grad=True)
    for change in (lambda t: t.__iadd__(1.0), lambda t: t.zero_(), lambda t: t.mul_(2.0),
                   lambda t: t.__setitem__(0, 1.0), lambda t: t.copy_(tensor([1.0]))):
        with pytest.raises(RuntimeError) as info:
            change(x)
        assert str(info.value) == ("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
    assert x.tolist() == [2.0]
    with no_grad():
        x -= 0.5
        x[0] = x[0] * 2.0
    assert x.tolist() == [3.0] and x.requires_grad and x.is_leaf


def test_changing_a_saved_leaf_after_the_forward_is_detected() -> None:
    x = tensor([2.0], requires_grad=True)
    y = (x * x).sum()
    with no_grad():
        x -= 1.0
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert str(info.value).startswith(
        MODIFIED + "[float64 [1]] is at version 1; expected version 0 instead.")


def test_changing_a_leaf_that_was_not_saved_is_fine() -> None:
    x = tensor([2.0], requires_grad=True)
    y = (x + 3.0).sum()
    with no_grad():
        x -= 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]


def test_changing_a_saved_constant_is_detected() -> None:
    x = tensor([2.0], requires_grad=True)
    c = tensor([3.0])
    y = (x * c).sum()
    c += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    d = tensor([3.0])
    z = (x + d).sum()
    d += 1.0  # not saved by +: PyTorch accepts this too
    z.backward()
    assert x.grad.tolist() == [1.0]


def test_changing_a_saved_output_in_place_is_detected() -> None:
    x = tensor([2.0], requires_grad=True)
    y = np.tanh(x)  # its adjoint reads the output
    y += 1.0
    assert y.grad_fn.name == "AddBackward0"
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value).startswith(
        MODIFIED + "[float64 [1]], which is output 0 of Tanh, is at version 1; expected "
        "version 0 instead.")


def test_changing_a_view_of_a_saved_value_is_detected() -> None:
    x = tensor([[1.0, 2.0]], requires_grad=True)
    y = (x * x).sum()
    with no_grad():
        flat = x.reshape(2)  # shares x's memory and version counter
        flat += 1.0
    assert x.tolist() == [[2.0, 3.0]]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_changing_an_indexed_view_is_detected() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with no_grad():
        first = x[0:1]  # basic indexing gives a view, sharing x's version counter
        first *= 3.0
    assert x.tolist() == [3.0, 2.0]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_in_place_on_a_non_leaf_is_recorded() -> None:
    def f(x: Tensor, z: Tensor) -> Tensor:
        y = x * 1.0
        y *= z  # the forward saved the old y: it must not see the new value
        y += x
        return y

    check_backward(f, np.array([2.0, -1.0]), np.array([3.0, 0.5]))
    x = tensor([2.0], requires_grad=True)
    y = x * 1.0
    y *= tensor([3.0], requires_grad=True)
    assert y.grad_fn.name == "MulBackward0" and not y.is_leaf


def test_in_place_into_a_buffer_that_does_not_require_grad() -> None:
    x = tensor([2.0, 3.0], requires_grad=True)
    buffer = tensor([0.0, 0.0])
    buffer += x * x
    assert buffer.requires_grad and not buffer.is_leaf
    buffer.sum().backward()
    assert x.grad.tolist() == [4.0, 6.0]


def test_fill_and_copy_in_place_cut_the_old_value_off() -> None:
    def f(x: Tensor, v: Tensor) -> Tensor:
        y = x * 2.0
        y.copy_(v * v)  # the old value of y gets no gradient
        return y * x

    check_backward(f, np.array([1.0, 2.0]), np.array([0.5, -1.5]))
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.zero_()
    (y + x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_setitem_on_plain_tensors_and_in_the_graph() -> None:
    t = tensor([1.0, 2.0, 3.0])
    t[1] = 5.0
    t[tensor([0, 2])] = tensor([0.0, 0.0])
    assert t.tolist() == [0.0, 5.0, 0.0] and t._version.value == 2
    # In the graph the write is recorded (PyTorch's CopySlices): the overwritten entry gets
    # no gradient, the written value gets the entry's.
    x = tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = tensor(5.0, requires_grad=True)
    y = x * 2.0
    y[1] = v * x[0]
    assert y.grad_fn.name == "CopySlices" and y.tolist() == [2.0, 5.0, 6.0]
    (y * y).sum().backward()
    # L = (2 x0)^2 + (v x0)^2 + (2 x2)^2
    np.testing.assert_allclose(x.grad.data, [8 * 1.0 + 2 * 25.0 * 1.0, 0.0, 8 * 3.0])
    assert v.grad.item() == pytest.approx(2 * 5.0 * 1.0 ** 2)


# -- @grad functions called with Tensors --------------------------------------------------------


def test_a_grad_function_records_one_node_named_after_it() -> None:
    w = tensor(W0, requires_grad=True)
    out = loss(w, X, Y)
    assert isinstance(out, Tensor) and out.shape == ()
    assert out.grad_fn.name == "LossBackward"
    assert repr(out.grad_fn).startswith("<LossBackward object at 0x")
    assert repr(out).endswith(", grad_fn=<LossBackward>)")
    assert out.grad_fn.source == out.grad_fn.compiled.adjoint_source
    assert out.grad_fn.source.startswith("def loss_backward(saved, out_bar):")
    ((leaf, index),) = out.grad_fn.next_functions
    assert isinstance(leaf, AccumulateGrad) and leaf.variable is w and index == 0
    out.backward()
    expected = numeric_gradient(lambda w_: float(loss(w_, X, Y)), [W0.copy()], 0)
    np.testing.assert_allclose(w.grad.data, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w.grad.data, s2sgrad.gradient(loss)(W0, X, Y), rtol=1e-12)


def test_mixed_arguments_tensor_ndarray_float() -> None:
    a = tensor([1.0, 2.0], requires_grad=True)
    k = tensor(3.0)  # a Tensor that does not require grad is a constant
    for factor in (k, 3.0, np.float64(3.0), np.array(3.0)):
        a.grad = None
        scale(a, factor).sum().backward()
        assert a.grad.tolist() == [3.0, 3.0]
    ka = tensor(3.0, requires_grad=True)
    scale(np.array([1.0, 2.0]), ka).sum().backward()
    assert ka.grad.item() == 3.0  # d/dk sum(a*k) = sum(a)


def test_tensor_keyword_arguments_are_differentiated() -> None:
    w = tensor(W0, requires_grad=True)
    y = tensor(Y, requires_grad=True)
    out = loss(w, X, y=y)
    assert out.grad_fn.name == "LossBackward"
    out.backward()
    expected = numeric_gradient(lambda y_: float(loss(W0, X, y_)), [Y.copy()], 0)
    np.testing.assert_allclose(y.grad.data, expected, rtol=1e-6, atol=1e-9)


def test_keyword_only_tensor_that_requires_grad_is_refused() -> None:
    @s2sgrad.grad
    def f(x, *, k):
        return x * k

    with pytest.raises(TypeError, match="keyword-only argument 'k'"):
        f(tensor([1.0]), k=tensor([2.0], requires_grad=True))
    assert f(tensor([1.0], requires_grad=True), k=tensor([2.0])).tolist() == [2.0]


def test_tensor_inside_a_list_argument_is_refused() -> None:
    with pytest.raises(TypeError, match="inside a list or tuple argument"):
        scale(tensor([1.0], requires_grad=True), [tensor([1.0])])


def test_grad_functions_chain_with_eager_ops() -> None:
    def f(w: Tensor, b: Tensor) -> Tensor:
        h = scale(w, 2.0) + b
        return loss(h, X, Y) * 3.0 + (b * b).sum()

    check_backward(f, W0, rng.standard_normal((3, 1)))


def test_without_grad_the_original_function_runs_and_nothing_is_saved() -> None:
    class Spy:
        """A Function whose compiled pair must not be asked for."""

        def __init__(self) -> None:
            self.calls = 0

        def fn(self, a, b):
            self.calls += 1
            return a * b

        def compiled_for(self, *args):
            raise AssertionError("compiled under no_grad")

    spy = Spy()
    x = tensor([2.0], requires_grad=True)
    with no_grad():
        out = graph.call_function(spy, (x, 3.0), {})
    assert spy.calls == 1 and out.tolist() == [6.0]
    assert not out.requires_grad and out.grad_fn is None
    out = graph.call_function(spy, (tensor([2.0]), 3.0), {})  # nothing requires grad
    assert spy.calls == 2 and out.grad_fn is None


def test_a_grad_function_called_without_tensors_returns_plain_values() -> None:
    assert isinstance(loss(W0, X, Y), float | np.floating)


def test_integer_outputs_do_not_require_grad() -> None:
    i = count(tensor([1.0, 3.0, 2.0], requires_grad=True))
    assert isinstance(i, Tensor) and i.item() == 1 and not i.requires_grad


class Stub:
    """A compiled pair written by hand: out = a * b * c, differentiated wrt the given inputs."""

    name = "stub"
    adjoint_source = "def stub_backward(saved, out_bar): ..."

    def __init__(self, wrt: tuple[int, ...]):
        self.wrt = wrt

    def forward(self, a, b, c):
        return a * b * c, (a, b, c)

    def backward(self, saved, out_bar):
        a, b, c = saved
        partials = (out_bar * b * c, out_bar * a * c, out_bar * a * b)
        return tuple(partials[i] for i in self.wrt)


def test_node_inputs_are_an_arbitrary_list_of_tensors() -> None:
    # The engine does not assume that the differentiated inputs are the positional arguments
    # (a method reading self.W will add implicit inputs): record() takes any list of Tensors.
    a = tensor([2.0], requires_grad=True)
    b = tensor([3.0])
    c = tensor([5.0], requires_grad=True)
    stub = Stub((0, 2))
    out, saved = stub.forward(a.data, b.data, c.data)
    result = graph.record("StubBackward", stub, saved, out, [a, b, c], (0, 2))
    result.sum().backward()
    assert a.grad.tolist() == [15.0] and c.grad.tolist() == [6.0] and b.grad is None


def test_a_node_keeps_the_version_of_every_tensor_it_was_given() -> None:
    a = tensor([2.0], requires_grad=True)
    b = tensor([3.0])
    c = tensor([5.0], requires_grad=True)
    stub = Stub((0, 2))
    out, saved = stub.forward(a.data, b.data, c.data)
    result = graph.record("StubBackward", stub, saved, out, [a, b, c], (0, 2))
    b.fill_(4.0)
    with pytest.raises(RuntimeError, match="Hint: StubBackward saved this value"):
        result.sum().backward()


class Model:
    def __init__(self) -> None:
        self.W = tensor(W0, requires_grad=True)

    @s2sgrad.grad
    def loss(self, x, y):
        return np.mean((np.tanh(x @ self.W) - y) ** 2)


@pytest.mark.parametrize("x_requires_grad", [False, True])
def test_gradients_flow_into_tensor_attributes_read_by_a_grad_method(
        x_requires_grad: bool) -> None:
    model = Model()
    x = tensor(X, requires_grad=x_requires_grad)
    model.loss(x, Y).backward()
    np.testing.assert_allclose(model.W.grad.data, s2sgrad.gradient(loss)(W0, X, Y),
                               rtol=1e-12)
    if x_requires_grad:
        np.testing.assert_allclose(x.grad.data, s2sgrad.gradient(loss, 1)(W0, X, Y),
                                   rtol=1e-12)


def test_a_grad_method_reading_tensor_attributes_is_one_compiled_node() -> None:
    model = Model()
    out = model.loss(tensor(X), Y)
    assert out.grad_fn.name == "LossBackward"
    assert [t for t, _ in out.grad_fn.edges] == [model.W]


class TwoOutputs:
    """A compiled pair written by hand with two outputs: (a * b, a + b), and an integer."""

    name = "two"
    adjoint_source = "def two_backward(saved, out_bar): ..."

    def forward(self, a, b):
        return (a * b, a + b, np.argmax(a)), (a, b)

    def backward(self, saved, out_bar):
        a, b = saved
        g_product, g_sum, g_index = out_bar
        assert g_index.shape == ()  # a zero cotangent stands in for outputs nothing reached
        return g_product * b + g_sum, g_product * a + g_sum


def test_a_function_with_several_outputs() -> None:
    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor([3.0, 5.0], requires_grad=True)
    out, saved = TwoOutputs().forward(a.data, b.data)
    product, total, index = graph.record("TwoBackward", TwoOutputs(), saved, out, [a, b], (0, 1))
    assert product.grad_fn is total.grad_fn and (product._out, total._out) == (0, 1)
    assert index.grad_fn is None and not index.requires_grad
    product.sum().backward(retain_graph=True)  # total gets a zero cotangent
    assert a.grad.tolist() == [3.0, 5.0] and b.grad.tolist() == [1.0, 2.0]
    (product.sum() + total.sum() * 2.0).backward()  # both outputs, summed at the node
    assert a.grad.tolist() == [3.0 + 3.0 + 2.0, 5.0 + 5.0 + 2.0]
    assert b.grad.tolist() == [1.0 + 1.0 + 2.0, 2.0 + 2.0 + 2.0]
