"""``autograd.Function`` (a custom forward and a hand-written backward) on Tensors, as PyTorch
runs it: compared with torch's ``torch.autograd.Function`` for the tutorials' Legendre
polynomial, several inputs and outputs, inputs that need no gradient, a backward returning
None, non-differentiable outputs; and refused, not silently wrong, at second order."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad import autograd

X = np.linspace(-0.9, 1.1, 5)
W = np.array([0.3, -1.2, 0.7, 2.0, -0.4])


def legendre(base):
    class LegendrePolynomial3(base):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)
    return LegendrePolynomial3


def scaled_pair(base):
    class ScaledPair(base):
        @staticmethod
        def forward(ctx, a, b, scale):
            ctx.scale = scale
            ctx.save_for_backward(a, b)
            return a * b * scale, a + b

        @staticmethod
        def backward(ctx, g_product, g_sum):
            a, b = ctx.saved_tensors
            ga = g_product * b * ctx.scale + g_sum if ctx.needs_input_grad[0] else None
            gb = g_product * a * ctx.scale + g_sum if ctx.needs_input_grad[1] else None
            return ga, gb, None
    return ScaledPair


def test_the_tutorials_legendre_polynomial_like_torchs(torch64):
    ours_x = s2sgrad.tensor(X, requires_grad=True)
    theirs_x = torch64.tensor(X, requires_grad=True)
    ours = legendre(autograd.Function).apply(ours_x * 2.0)
    theirs = legendre(torch64.autograd.Function).apply(theirs_x * 2.0)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-14)
    assert type(ours.grad_fn).__name__ == "Node" and "LegendrePolynomial3" in repr(ours.grad_fn)
    (ours * s2sgrad.tensor(W)).sum().backward()
    (theirs * torch64.tensor(W)).sum().backward()
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-14)
    # and the hand-written backward is right: finite differences of the forward
    fd = s2sgrad.testing.numeric_gradient(
        lambda x: np.sum(W * 0.5 * (5 * (2 * x) ** 3 - 3 * (2 * x))), (X,), 0)
    np.testing.assert_allclose(ours_x.grad.numpy(), fd, rtol=1e-6)


@pytest.mark.parametrize("requires", [(True, True), (True, False), (False, True)])
def test_several_inputs_and_outputs_like_torchs(requires, torch64):
    ours_in = [s2sgrad.tensor(v, requires_grad=r) for v, r in zip((X, W), requires)]
    theirs_in = [torch64.tensor(v, requires_grad=r) for v, r in zip((X, W), requires)]
    p, s = scaled_pair(autograd.Function).apply(*ours_in, 3.0)
    tp, ts = scaled_pair(torch64.autograd.Function).apply(*theirs_in, 3.0)
    (p.sum() + (s * s).sum()).backward()
    (tp.sum() + (ts * ts).sum()).backward()
    for o, t, r in zip(ours_in, theirs_in, requires):
        if r:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-14)
        else:
            assert o.grad is None and t.grad is None


def test_float32_stays_float32(torch64):
    x = s2sgrad.tensor(X.astype(np.float32), requires_grad=True)
    tx = torch64.tensor(X.astype(np.float32), requires_grad=True)
    legendre(autograd.Function).apply(x).sum().backward()
    legendre(torch64.autograd.Function).apply(tx).sum().backward()
    assert x.grad.dtype == s2sgrad.float32 and str(tx.grad.dtype) == "torch.float32"
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_without_inputs_that_require_grad_nothing_is_recorded():
    out = legendre(autograd.Function).apply(s2sgrad.tensor(X))
    assert out.grad_fn is None and not out.requires_grad


def test_a_non_differentiable_output_does_not_require_grad(torch64):
    class Sorted(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x.detach().numpy())
            ctx.mark_non_differentiable(index := s2sgrad.tensor(order.astype(float)))
            ctx.save_for_backward(s2sgrad.tensor(order))
            return x[order], index

        @staticmethod
        def backward(ctx, g, _):
            (order,) = ctx.saved_tensors
            out = np.zeros_like(g.numpy())
            out[order.numpy()] = g.numpy()
            return s2sgrad.tensor(out)

    x = s2sgrad.tensor(W, requires_grad=True)
    values, index = Sorted.apply(x)
    assert not index.requires_grad
    (values * s2sgrad.tensor(X)).sum().backward()
    expected = np.zeros_like(W)
    expected[np.argsort(W)] = X
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_a_wrong_number_of_gradients_is_torchs_error():
    class Wrong(autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    out = Wrong.apply(s2sgrad.tensor(X, requires_grad=True), s2sgrad.tensor(W))
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        out.sum().backward()


def test_second_order_through_it_is_refused_not_wrong():
    x = s2sgrad.tensor(X, requires_grad=True)
    out = legendre(autograd.Function).apply(x).sum()
    with pytest.raises(RuntimeError, match="create_graph=True through "
                       "LegendrePolynomial3Backward.*vjp_rule"):
        autograd.grad(out, [x], create_graph=True)
