"""Tensor methods that mirror PyTorch's: comparisons, all/any, dtype conversions, extrema,
softmax, statistics, norms, expand, masked_fill, where and gather. Values, dtypes and
gradients are checked against PyTorch when it is installed, and gradients against central
finite differences in float64 always."""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad.autograd  # noqa: F401  (binds Tensor's operations)
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.testing import numeric_gradient
from tests.torch_compare import assert_like_torch

rng = np.random.default_rng(7)
X = rng.standard_normal((3, 4))  # no ties: finite differences are valid for max/min
T = np.array([[1.0, 3.0, 3.0, -2.0], [2.0, 2.0, 0.0, 0.0], [5.0, -1.0, 5.0, 5.0]])  # ties
MASK = X > 0.2
INDEX = np.array([[0, 2], [1, 1]])  # smaller than X along both dimensions


def _const(x, value):
    """``value`` as a constant of x's library (s2sgrad or torch)."""
    if isinstance(x, Tensor):
        return tensor(value)
    import torch
    return torch.tensor(value)


# Differentiable methods: name -> function of a Tensor (s2sgrad's or torch's).
DIFFERENTIABLE = {
    "max": lambda x: x.max(),
    "min": lambda x: x.min(),
    "max_dim": lambda x: x.max(1).values,
    "max_dim_keepdim": lambda x: x.max(-1, keepdim=True)[0],
    "min_dim": lambda x: x.min(0).values,
    "min_dim_neg_keepdim": lambda x: x.min(-2, keepdim=True).values,
    "max_tensor": lambda x: x.max(_const(x, X[0])),
    "float": lambda x: x.float() * 1.0,
    "double": lambda x: x.double(),
    "to_float32": lambda x: x.to("float32") if isinstance(x, Tensor) else x.to(
        __import__("torch").float32),
    "softmax": lambda x: x.softmax(1),
    "softmax_neg": lambda x: x.softmax(-2),
    "log_softmax": lambda x: x.log_softmax(-1),
    "log_softmax_0": lambda x: x.log_softmax(0),
    "view": lambda x: x.view(4, 3),
    "view_minus_one": lambda x: x.view(-1, 6),
    "expand": lambda x: x[:, :1].expand(2, 3, -1),
    "expand_tuple": lambda x: x[:1].expand((3, 4)),
    "masked_fill": lambda x: x.masked_fill(_const(x, MASK), 0.5),
    "where": lambda x: x.where(_const(x, MASK), _const(x, X[1] * 2.0)),
    "gather_1": lambda x: x.gather(1, _const(x, INDEX)),
    "gather_0": lambda x: x.gather(0, _const(x, INDEX)),
    "gather_neg": lambda x: x.gather(-1, _const(x, np.array([[3, 3, 0]] * 3))),
    "norm": lambda x: x.norm(),
    "norm_1_dim": lambda x: x.norm(1, dim=1),
    "norm_3_keepdim": lambda x: x.norm(3, dim=-2, keepdim=True),
    "norm_inf": lambda x: x.norm(float("inf"), dim=1),
    "norm_dims": lambda x: x.norm(dim=(1, 0), keepdim=True),
    "var": lambda x: x.var(),
    "var_dim_keepdim": lambda x: x.var(1, keepdim=True),
    "var_biased": lambda x: x.var(0, False),
    "var_correction": lambda x: x.var(dim=-1, correction=0),
    "var_unbiased_only": lambda x: x.var(False),
    "std": lambda x: x.std(),
    "std_dim": lambda x: x.std(-1, keepdim=True),
    "std_correction": lambda x: x.std(dim=0, correction=2),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_against_finite_differences(name):
    fn = DIFFERENTIABLE[name]
    x = tensor(X, requires_grad=True)
    y = fn(x)
    w = rng.standard_normal(tuple(y.shape))
    (y * tensor(w)).sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape

    def scalar(a):
        return float(np.sum(fn(tensor(a)).detach().numpy().astype(np.float64) * w))

    # A float32 forward is linear here: a large step keeps its rounding small.
    float32 = name in ("float", "to_float32")
    numeric = numeric_gradient(scalar, [X], 0, eps=0.1 if float32 else 1e-6)
    tol = 1e-5 if float32 else 1e-6
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=tol, atol=tol)


@pytest.mark.parametrize("data", ["plain", "ties"])
@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_against_torch(name, data):
    torch = pytest.importorskip("torch")
    value = X if data == "plain" else T
    assert_like_torch(torch, DIFFERENTIABLE[name], value, rng, 1e-6)


# -- comparisons ------------------------------------------------------------------------------

COMPARISONS = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparison_methods(name):
    a = tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tensor([3.0, 2.0, 1.0])
    expected = COMPARISONS[name](a.detach().numpy(), b.numpy())
    for result in (getattr(a, name)(b), COMPARISONS[name](a, b)):
        assert result.dtype == np.bool_
        assert not result.requires_grad and result.grad_fn is None
        np.testing.assert_array_equal(result.numpy(), expected)
    np.testing.assert_array_equal(getattr(a, name)(2.0).numpy(),
                                  COMPARISONS[name](a.detach().numpy(), 2.0))


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_against_torch(name):
    torch = pytest.importorskip("torch")
    a, b = tensor(T), tensor(T[::-1].copy())
    ta, tb = torch.tensor(T), torch.tensor(T[::-1].copy())
    result, expected = getattr(a, name)(b), getattr(ta, name)(tb)
    np.testing.assert_array_equal(result.numpy(), expected.numpy())
    assert repr(result) == repr(expected)


def test_bool_repr_like_torch():
    assert repr(tensor([True, False])) == "tensor([ True, False])"
    assert repr(tensor([1.0, 2.0]) > 1.5) == "tensor([False,  True])"


def test_tensors_still_hash_by_identity():
    a, b = tensor([1.0]), tensor([1.0])
    assert len({a, b}) == 2
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b"


# -- all, any, argmax, argmin -----------------------------------------------------------------

REDUCTIONS = {
    "all": lambda x: x.all(),
    "all_dim": lambda x: (x > 0).all(dim=1),
    "all_keepdim": lambda x: (x > -1.5).all(-1, keepdim=True),
    "any": lambda x: (x > 4).any(),
    "any_dim_keepdim": lambda x: (x > 4).any(0, keepdim=True),
    "argmax": lambda x: x.argmax(),
    "argmax_keepdim_none": lambda x: x.argmax(keepdim=True),
    "argmax_dim": lambda x: x.argmax(1),
    "argmax_neg_keepdim": lambda x: x.argmax(-2, keepdim=True),
    "argmin": lambda x: x.argmin(),
    "argmin_dim": lambda x: x.argmin(dim=1, keepdim=True),
    "max_indices": lambda x: x.max(1).indices,
    "min_indices_keepdim": lambda x: x.min(-1, keepdim=True)[1],
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_tests_and_indices_against_torch(name):
    torch = pytest.importorskip("torch")
    x = tensor(T, requires_grad=True)
    result, expected = REDUCTIONS[name](x), REDUCTIONS[name](torch.tensor(T))
    assert not result.requires_grad
    assert str(result.dtype) == str(expected.dtype) and result.dtype == expected.dtype
    assert tuple(result.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(result.numpy(), expected.numpy())
    assert repr(result) == repr(expected)


def test_argmax_ties_pick_the_first():
    x = tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    assert x.argmax().item() == 1
    np.testing.assert_array_equal(x.argmax(1).numpy(), [1, 0])
    assert x.argmax(1).dtype == np.int64
    np.testing.assert_array_equal(x.argmin(1).numpy(), [0, 2])


def test_all_any_values():
    x = tensor([[1.0, 0.0], [2.0, 3.0]])
    assert x.all().item() is False and x.any().item() is True
    np.testing.assert_array_equal(x.all(1).numpy(), [False, True])
    assert x.any(0, keepdim=True).shape == (1, 2)


# -- max and min ------------------------------------------------------------------------------

def test_max_dim_is_a_named_pair():
    x = tensor(T, requires_grad=True)
    result = x.max(1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert type(result).__name__ == "ReturnMax" and type(x.min(0)).__name__ == "ReturnMin"
    np.testing.assert_array_equal(values.detach().numpy(), [3.0, 2.0, 5.0])
    np.testing.assert_array_equal(indices.numpy(), [1, 0, 0])
    assert indices.dtype == np.int64 and not indices.requires_grad


def test_max_gradient_ties():
    x = tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    x.max().backward()  # shared evenly among ties
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0.5, 0.5], [0, 0, 0]])
    x.grad = None
    x.max(1).values.sum().backward()  # to the index returned
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [1, 0, 0]])
    x.grad = None
    x.min(dim=0, keepdim=True).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 0], [0, 1, 1]])


# -- dtype conversions ------------------------------------------------------------------------

def test_float_double_to():
    x = tensor(X, requires_grad=True)
    assert x.double() is x and x.to(np.float64) is x and x.to("float64") is x
    f = x.float()
    assert f.dtype == np.float32 and f.requires_grad and f.grad_fn is not None
    assert x.to("torch.float32").dtype == np.float32
    assert x.to(np.dtype(np.float32)).dtype == np.float32
    assert x.to(dtype="float32").dtype == np.float32
    assert x.to(tensor([1], dtype=np.int64)).dtype == np.int64
    assert x.to("cpu") is x
    i = x.to("int64")
    assert i.dtype == np.int64 and not i.requires_grad
    assert f.float() is f
    d = f.double()
    assert d.dtype == np.float64 and d.requires_grad
    (d * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(X.shape, 2.0))


def test_float32_leaf_gradient_keeps_its_dtype():
    x = tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    (x.double() * tensor([3.0, 4.0])).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


# -- softmax, shapes, selections --------------------------------------------------------------

def test_softmax_is_stable():
    x = tensor([[1000.0, 1001.0, -1000.0], [-np.inf, 0.0, 1.0]], requires_grad=True)
    s = x.softmax(1)
    ls = x.log_softmax(1)
    assert np.all(np.isfinite(s.detach().numpy()))
    np.testing.assert_allclose(s.detach().numpy().sum(1), [1.0, 1.0])
    np.testing.assert_allclose(ls.detach().numpy()[0, :2],
                               [-1.0 - np.log1p(np.exp(-1.0)), -np.log1p(np.exp(-1.0))])
    (s[0] * tensor([1.0, 2.0, 3.0])).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))


def test_view_and_expand_share_memory():
    base = tensor(np.arange(6.0))
    v = base.view(2, 3)
    assert np.shares_memory(v.numpy(), base.numpy())
    e = tensor([[1.0], [2.0]]).expand(-1, 3)
    np.testing.assert_array_equal(e.numpy(), [[1, 1, 1], [2, 2, 2]])
    assert e.shape == (2, 3)


def test_expand_refusals():
    with pytest.raises(RuntimeError):
        tensor([[1.0], [2.0]]).expand(3)
    with pytest.raises(RuntimeError):
        tensor([1.0]).expand(-1, 3)
    with pytest.raises(ValueError):
        tensor([1.0, 2.0]).expand(3)


def test_masked_fill_tensor_value_gets_the_gradient():
    x = tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = tensor(7.0, requires_grad=True)
    y = x.masked_fill(tensor([True, False, True]), v)
    np.testing.assert_array_equal(y.detach().numpy(), [7.0, 2.0, 7.0])
    (y * tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 0.0])
    assert v.grad.item() == 4.0
    f = tensor([1.0, 2.0], dtype=np.float32).masked_fill(tensor([True, False]), 0.25)
    assert f.dtype == np.float32
    with pytest.raises(RuntimeError):
        x.masked_fill(tensor([1, 0, 1]), 0.0)


def test_where_gradient_to_both_sides():
    x = tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = tensor([4.0, 5.0, 6.0], requires_grad=True)
    z = x.where(tensor([True, False, True]), y)
    np.testing.assert_array_equal(z.detach().numpy(), [1.0, 5.0, 3.0])
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 1.0, 0.0])


def test_gather_repeated_indices_accumulate():
    x = tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    g = x.gather(1, tensor([[2, 2, 0, 2]]))
    np.testing.assert_array_equal(g.detach().numpy(), [[3.0, 3.0, 1.0, 3.0]])
    g.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 0.0, 3.0]])
    with pytest.raises(RuntimeError):
        x.gather(1, tensor([[0.0]]))
    with pytest.raises(RuntimeError):
        x.gather(1, tensor([0]))


def test_norm_at_zero_has_gradient_zero():
    x = tensor(np.zeros(3), requires_grad=True)
    x.norm().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
