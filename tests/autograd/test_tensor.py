"""Tensor basics: construction, dtypes, attributes, conversions and printing (as PyTorch)."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

from s2sgrad.autograd.creators import ones, ones_like, randn, zeros, zeros_like
from s2sgrad.autograd.grad_mode import no_grad
from s2sgrad.autograd.tensor import Tensor, tensor

# -- construction ------------------------------------------------------------------------------


def test_tensor_copies_its_data_and_defaults_to_float64_and_int64() -> None:
    data = np.array([1.0, 2.0])
    t = tensor(data)
    data[0] = 5.0
    assert t.data[0] == 1.0
    assert tensor([2.0]).dtype == np.float64
    assert tensor([1, 2]).dtype == np.int64
    assert tensor(2.5).shape == ()
    assert tensor([True]).dtype == np.bool_
    assert tensor([1, 2], dtype=np.float32).dtype == np.float32


def test_tensor_from_tensor_copies() -> None:
    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor(a)
    assert not b.requires_grad
    b.data[0] = 7.0
    assert a.data[0] == 1.0


def test_only_floating_tensors_can_require_grad() -> None:
    with pytest.raises(RuntimeError) as info:
        tensor([1, 2], requires_grad=True)
    assert str(info.value) == (
        "Only Tensors of floating point and complex dtype can require gradients")
    t = tensor([1, 2])
    with pytest.raises(RuntimeError) as info:
        t.requires_grad_()
    assert str(info.value) == "only Tensors of floating point dtype can require gradients"
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        t.requires_grad = True
    assert not t.requires_grad


def test_requires_grad_flag_on_leaves() -> None:
    t = tensor([1.0])
    assert t.requires_grad_() is t
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    t.requires_grad = False
    assert not t.requires_grad


def test_requires_grad_cannot_be_cleared_on_a_non_leaf() -> None:
    x = tensor([2.0], requires_grad=True)
    y = x * 2
    assert not y.is_leaf
    assert y.requires_grad_(True) is y  # allowed: it already requires grad
    with pytest.raises(RuntimeError) as info:
        y.requires_grad_(False)
    assert str(info.value).startswith(
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach().")
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad = False


def test_factories() -> None:
    x = tensor([[1.0, 2.0]], requires_grad=True)
    o = ones_like(x)
    assert o.shape == (1, 2) and o.dtype == np.float64 and not o.requires_grad
    assert np.all(o.data == 1)
    z = zeros_like(x, requires_grad=True)
    assert z.requires_grad and np.all(z.data == 0)
    assert ones(2, 3).shape == (2, 3)
    assert zeros((4,)).shape == (4,)
    assert randn(5, 3, requires_grad=True).shape == (5, 3)
    assert ones_like(np.zeros(3, dtype=np.int64)).dtype == np.int64


# -- attributes and conversions ------------------------------------------------------------


def test_shape_dtype_ndim_size_len() -> None:
    t = tensor(np.zeros((2, 3)))
    assert t.shape == (2, 3) and isinstance(t.shape, tuple)
    assert repr(t.shape) == str(t.size()) == "torch.Size([2, 3])"
    assert t.ndim == 2 and t.dim() == 2
    assert t.size() == (2, 3) and t.size(1) == 3
    assert t.numel() == 6
    assert len(t) == 2
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(tensor(1.0))


def test_item_tolist_float_int_bool() -> None:
    assert tensor([2.5]).item() == 2.5
    assert isinstance(tensor([3]).item(), int)
    assert tensor([[1.0, 2.0]]).tolist() == [[1.0, 2.0]]
    assert float(tensor(1.5, requires_grad=True)) == 1.5
    assert int(tensor([7])) == 7
    assert bool(tensor([1.0])) and not bool(tensor(0.0))
    with pytest.raises(RuntimeError) as info:
        tensor([2.0, 3.0]).item()
    assert str(info.value) == "a Tensor with 2 elements cannot be converted to Scalar"
    with pytest.raises(RuntimeError) as info:
        bool(tensor([1.0, 2.0]))
    assert str(info.value) == "Boolean value of Tensor with more than one value is ambiguous"


def test_numpy_shares_memory_and_refuses_tensors_that_require_grad() -> None:
    t = tensor([1.0, 2.0])
    a = t.numpy()
    a[0] = 9.0
    assert t.data[0] == 9.0
    r = tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        r.numpy()
    assert str(info.value) == ("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        np.asarray(r)
    assert np.asarray(r.detach())[0] == 1.0


def test_array_protocol() -> None:
    t = tensor([1.0, 2.0])
    assert np.asarray(t) is t.data
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.array(t) is not t.data


def test_iteration_yields_rows() -> None:
    t = tensor([[1.0, 2.0], [3.0, 4.0]])
    rows = list(t)
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(tensor(1.0))


def test_tensors_hash_by_identity_and_compare_elementwise() -> None:
    a, b = tensor([1.0, 2.0]), tensor([1.0, 3.0])
    assert len({a, b, a}) == 2
    eq = a == b
    assert isinstance(eq, Tensor) and eq.tolist() == [True, False]
    assert (a != b).tolist() == [False, True]
    assert (a < b).tolist() == [False, True]
    assert (a >= 1.5).tolist() == [False, True]
    assert (2.0 > a).tolist() == [True, False]
    x = tensor([1.0, 2.0], requires_grad=True)
    assert not (x > 1).requires_grad


def test_detach_shares_data_and_version() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.data is x.data
    d += 1  # allowed: d does not require grad; x sees it, as in PyTorch
    assert x.data.tolist() == [2.0, 3.0]
    assert x._version.value == 1


def test_detach_in_place() -> None:
    x = tensor([1.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad


def test_grad_setter_checks_shape_and_dtype() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    x.grad = tensor([0.5, 0.5])
    assert x.grad.tolist() == [0.5, 0.5]
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError) as info:
        x.grad = tensor([1.0, 1.0, 1.0])
    assert str(info.value) == (
        "attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please "
        "ensure that the gradient and the tensor are the same size")
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype"):
        x.grad = tensor([1, 1])


def test_grad_of_a_non_leaf_warns_like_torch() -> None:
    x = tensor([1.0], requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning) as record:
        assert y.grad is None
    assert str(record[0].message).startswith(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
        "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
        "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.")
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad is None
        assert x.grad is None  # a leaf never warns


def test_retain_grad_needs_requires_grad() -> None:
    with pytest.raises(RuntimeError) as info:
        tensor([1.0]).retain_grad()
    assert str(info.value) == "can't retain_grad on Tensor that has requires_grad=False"
    x = tensor([1.0], requires_grad=True)
    x.retain_grad()  # a no-op on a leaf
    assert not x.retains_grad


def test_deepcopy_of_leaves_only() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    c = copy.deepcopy(x)
    assert c is not x and c.requires_grad and c.data is not x.data
    assert c.grad.tolist() == x.grad.tolist() and c.grad is not x.grad
    with pytest.raises(RuntimeError, match="graph leaves\\) support the deepcopy protocol"):
        copy.deepcopy(x * 2)


# -- printing (checked against torch 2.13 in test_torch_oracle.py) ---------------------------


@pytest.mark.parametrize(("value", "expected"), [
    (tensor(8.0), "tensor(8.)"),
    (tensor([2.0, 3.0], requires_grad=True), "tensor([2., 3.], requires_grad=True)"),
    (tensor([0.1, 2.0]), "tensor([0.1000, 2.0000])"),
    (tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    (tensor([1, 2]), "tensor([1, 2])"),
    (tensor([True, False]), "tensor([ True, False])"),
    (tensor([1.5, np.nan]), "tensor([1.5000,    nan])"),
    (tensor([2.0], dtype=np.float32), "tensor([2.], dtype=torch.float32)"),
    (tensor([1e9, 1.0]), "tensor([1.0000e+09, 1.0000e+00])"),
    (tensor([]), "tensor([])"),
    (tensor(np.zeros((0, 3))), "tensor([], size=(0, 3))"),
    (tensor(-0.0), "tensor(-0.)"),
    (tensor([1.0 / 3.0]), "tensor([0.3333])"),
    (tensor([[-1.5, 20.0]]), "tensor([[-1.5000, 20.0000]])"),
])
def test_repr_like_torch(value: Tensor, expected: str) -> None:
    assert repr(value) == expected
    assert str(value) == expected
    assert f"{value}" == expected


def test_repr_of_a_result_names_its_node() -> None:
    x = tensor([2.0], requires_grad=True)
    assert repr(x * 2) == "tensor([4.], grad_fn=<MulBackward0>)"
    with no_grad():
        assert repr(x * 2) == "tensor([4.])"


def test_repr_summarizes_large_tensors() -> None:
    text = repr(tensor(np.arange(2000.0)))
    assert text == ("tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
                    "        1.9990e+03])")


def test_format_spec_on_scalars() -> None:
    assert f"{tensor(2.0):.2f}" == "2.00"
    assert f"{tensor([2.0]).item():.4f}" == "2.0000"
    with pytest.raises(TypeError):
        f"{tensor([1.0, 2.0]):.2f}"


def test_data_can_be_replaced_without_tracking() -> None:
    w = tensor([1.0, 2.0], requires_grad=True)
    w.data = w.data - 0.5 * tensor([2.0, 2.0])  # an ndarray minus a Tensor is a Tensor
    assert isinstance(w.data, np.ndarray) and w.tolist() == [0.0, 1.0]
    w.data = [3.0, 4.0]
    assert isinstance(w.data, np.ndarray) and w._version.value == 0  # as PyTorch's .data


def test_size_is_a_tuple_that_prints_like_torch() -> None:
    size = tensor(np.zeros((5, 3, 2))).shape
    assert size == (5, 3, 2) and hash(size) == hash((5, 3, 2))
    assert size[1] == 3 and type(size[1]) is int
    assert size[1:] == (3, 2) and repr(size[1:]) == "torch.Size([3, 2])"
    assert repr(size + (4,)) == "torch.Size([5, 3, 2, 4])"
    assert size.numel() == 30
    n, c, w = size
    assert (n, c, w) == (5, 3, 2)
    assert np.zeros(size).shape == (5, 3, 2)
    assert repr(tensor(1.5).shape) == "torch.Size([])"
    assert repr(tensor(np.zeros(4)).shape) == "torch.Size([4])"
    assert f"{size}" == "torch.Size([5, 3, 2])"
