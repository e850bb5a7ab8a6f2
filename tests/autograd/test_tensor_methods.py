"""More Tensor methods that mirror PyTorch's: dtype conversions, elementwise functions, the
piecewise-constant ones (zero gradient), cumulative sums and products, flips and rolls,
sorting and top-k, splitting, repeats, selections, products, triangles, ``logsumexp``,
``amax``/``amin``, the ``new_*`` creators, a few in-place methods, ``inference_mode``, and
NumPy ufuncs with ``dtype=`` on Tensors.

Values, dtypes, shapes and gradients are compared with PyTorch when it is installed, and
gradients with central finite differences in float64 always."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import s2sgrad
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.testing import numeric_gradient
from tests.torch_compare import assert_like_torch

rng = np.random.default_rng(11)
X = rng.standard_normal((3, 4))  # no ties, no integers: finite differences are valid
T = np.array([[1.0, 3.0, 3.0, -2.0], [2.0, 2.0, 0.5, 0.5], [5.0, -1.0, 5.0, 5.0]])  # ties
MASK = X > 0.2
ROWS = np.array([2, 0, 2])  # an index along dimension 0 (repeats one row)


def lib(x: Any) -> Any:
    """The library of the Tensor ``x``: s2sgrad or torch."""
    if isinstance(x, Tensor):
        return s2sgrad
    import torch
    return torch


def const(x: Any, value: Any) -> Any:
    """``value`` as a Tensor of x's library."""
    return lib(x).tensor(value)


def node_name(node: Any) -> str:
    """The name of a graph node: an attribute of ours, a method of torch's."""
    return node.name() if callable(node.name) else node.name


def weighted_cat(x: Any, parts: Any, dim: int) -> Any:
    """The parts joined along ``dim``, each scaled differently (so that a gradient sent to
    the wrong part is seen)."""
    return lib(x).cat([p * (i + 1.0) for i, p in enumerate(parts)], dim)


def weighted_stack(x: Any, parts: Any) -> Any:
    return lib(x).stack([p * (i + 1.0) for i, p in enumerate(parts)])


# Differentiable methods: name -> function of a Tensor (s2sgrad's or torch's). Functions
# with a restricted domain get their input mapped into it first (tanh, squares).
DIFFERENTIABLE = {
    # dtype conversions that stay in the graph
    "type_float32": lambda x: x.type(lib(x).float32) * 1.0,
    "type_string": lambda x: x.type("torch.FloatTensor") * 1.0,
    "type_as": lambda x: x.type_as(const(x, np.zeros(1, dtype=np.float32))) * 1.0,
    "view_as": lambda x: x.view_as(const(x, np.zeros((2, 6)))),
    "contiguous": lambda x: x.contiguous() * 2.0,
    "sum_dtype": lambda x: x.sum(dtype=lib(x).float32),
    "sum_dim_dtype": lambda x: x.sum(1, dtype=lib(x).float32),
    "mean_dtype": lambda x: x.mean(0, keepdim=True, dtype=lib(x).float32),
    "flatten_start": lambda x: x.reshape(3, 2, 2).flatten(1),
    "flatten_range": lambda x: x.reshape(3, 2, 2, 1).flatten(0, 1),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "unflatten_minus_one": lambda x: x.unflatten(-1, (-1, 2)),
    # elementwise
    "clip": lambda x: x.clip(-0.5, 0.7),
    "clip_min": lambda x: x.clip(min=0.1),
    "neg": lambda x: x.neg(),
    "negative": lambda x: x.negative(),
    "reciprocal": lambda x: (x * x + 0.5).reciprocal(),
    "rsqrt": lambda x: (x * x + 0.5).rsqrt(),
    "log1p": lambda x: (x * x).log1p(),
    "expm1": lambda x: x.expm1(),
    "log2": lambda x: (x * x + 0.1).log2(),
    "log10": lambda x: (x * x + 0.1).log10(),
    "tan": lambda x: (0.5 * x.tanh()).tan(),
    "sinh": lambda x: x.sinh(),
    "cosh": lambda x: x.cosh(),
    "asin": lambda x: (0.9 * x.tanh()).asin(),
    "acos": lambda x: (0.9 * x.tanh()).acos(),
    "atan": lambda x: x.atan(),
    "arcsin": lambda x: (0.9 * x.tanh()).arcsin(),
    "arccos": lambda x: (0.9 * x.tanh()).arccos(),
    "arctan": lambda x: x.arctan(),
    "atan2": lambda x: x.atan2(const(x, X[::-1].copy())),
    "atan2_self": lambda x: x.atan2(x.flip(0)),
    "arctan2": lambda x: x[:1].arctan2(x[1:]),
    "maximum": lambda x: x.maximum(const(x, X[1] * 0.5)),
    "minimum": lambda x: x.minimum(x.flip(1)),
    # piecewise constant: zero gradient, as in PyTorch
    "floor": lambda x: (3.0 * x).floor() + x,
    "ceil": lambda x: (3.0 * x).ceil(),
    "round": lambda x: (3.0 * x).round(),
    "round_decimals": lambda x: x.round(decimals=1),
    "trunc": lambda x: (3.0 * x).trunc(),
    "sign": lambda x: x.sign() * x,
    # cumulative, reordering
    "cumsum": lambda x: x.cumsum(1),
    "cumsum_neg": lambda x: x.cumsum(dim=-2),
    "cumprod": lambda x: x.cumprod(1),
    "cumprod_0": lambda x: x.cumprod(0),
    "flip": lambda x: x.flip(0),
    "flip_list": lambda x: x.flip([0, 1]),
    "flip_varargs": lambda x: x.flip(1, 0),
    "roll": lambda x: x.roll(1, 1),
    "roll_flat": lambda x: x.roll(5),
    "roll_tuples": lambda x: x.roll((1, -2), (0, 1)),
    "sort": lambda x: x.sort().values,
    "sort_dim0_desc": lambda x: x.sort(dim=0, descending=True, stable=True)[0],
    "sort_stable": lambda x: x.sort(dim=1, stable=True).values,
    "topk": lambda x: x.topk(2).values,
    "topk_smallest_dim0": lambda x: x.topk(2, dim=0, largest=False)[0],
    # splitting
    "split_int": lambda x: weighted_cat(x, x.split(3, 1), 1),
    "split_sizes": lambda x: weighted_cat(x, x.split([1, 2], 0), 0),
    "split_dim_neg": lambda x: weighted_cat(x, x.split([3, 1], dim=-1), 1),
    "chunk": lambda x: weighted_cat(x, x.chunk(3, 1), 1),
    "chunk_uneven": lambda x: weighted_cat(x, x.chunk(2, dim=0), 0),
    "unbind": lambda x: weighted_stack(x, x.unbind()),
    "unbind_1": lambda x: weighted_stack(x, x.unbind(1)),
    "select": lambda x: x.select(1, 2),
    # repeats, selections
    "repeat": lambda x: x.repeat(2, 1),
    "repeat_more_dims": lambda x: x.repeat(2, 1, 3),
    "repeat_interleave": lambda x: x.repeat_interleave(2),
    "repeat_interleave_dim": lambda x: x.repeat_interleave(3, dim=0),
    "repeat_interleave_tensor": lambda x: x.repeat_interleave(const(x, [1, 0, 3, 2]), dim=1),
    "index_select": lambda x: x.index_select(0, const(x, ROWS)),
    "index_select_neg": lambda x: x.index_select(-1, const(x, [3, 3, 1])),
    "masked_select": lambda x: x.masked_select(const(x, MASK)),
    "masked_select_broadcast": lambda x: x.masked_select(const(x, [True, False, True, True])),
    # products, triangles, diagonals
    "bmm": lambda x: x.reshape(1, 3, 4).bmm(x.reshape(1, 4, 3)),
    "outer": lambda x: x[0].outer(x[1]),
    "diag_of_matrix": lambda x: x.diag(),
    "diag_offset": lambda x: x.diag(1),
    "diag_below": lambda x: x.diag(-1),
    "diag_of_vector": lambda x: x[1].diag(),
    "diag_of_vector_offset": lambda x: x[0].diag(-2),
    "triu": lambda x: x.triu(),
    "triu_1": lambda x: x.triu(1),
    "tril_neg": lambda x: x.tril(diagonal=-1),
    "tril_batched": lambda x: x.reshape(3, 2, 2).tril(),
    # reductions
    "logsumexp": lambda x: x.logsumexp(1),
    "logsumexp_keepdim": lambda x: x.logsumexp(0, keepdim=True),
    "logsumexp_dims": lambda x: x.logsumexp((0, 1)),
    "amax": lambda x: x.amax(),
    "amax_dim": lambda x: x.amax(1),
    "amin_keepdim": lambda x: x.amin(dim=0, keepdim=True),
    "amin_dims": lambda x: x.amin((0, 1)),
}
FLOAT32 = {"type_float32", "type_string", "type_as", "sum_dtype", "sum_dim_dtype",
           "mean_dtype"}
# Results that depend on the order PyTorch gives equal elements, which it does not specify
# unless asked for a stable sort.
UNSTABLE = {"sort", "topk", "topk_smallest_dim0"}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_against_finite_differences(name: str) -> None:
    fn = DIFFERENTIABLE[name]
    x = tensor(X, requires_grad=True)
    y = fn(x)
    assert y.requires_grad
    w = rng.standard_normal(tuple(y.shape))
    (y * tensor(w)).sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape

    def scalar(a: np.ndarray) -> float:
        return float(np.sum(fn(tensor(a)).detach().numpy().astype(np.float64) * w))

    # A float32 forward is linear here: a large step keeps its rounding small.
    float32 = name in FLOAT32
    numeric = numeric_gradient(scalar, [X], 0, eps=0.1 if float32 else 1e-6)
    tol = 1e-4 if float32 else 1e-6
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=tol, atol=tol)


@pytest.mark.parametrize("data", ["plain", "ties"])
@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_against_torch(name: str, data: str) -> None:
    torch = pytest.importorskip("torch")
    if data == "ties" and name in UNSTABLE:
        pytest.skip("PyTorch does not specify the order of equal elements here")
    value = X if data == "plain" else T
    assert_like_torch(torch, DIFFERENTIABLE[name], value, rng,
                      1e-6 if name in FLOAT32 else 1e-12)


# -- results without a gradient, against torch ----------------------------------------------

# name -> function of a Tensor holding T; the result (or each item of a tuple result) is
# compared with torch's: dtype, shape, values, repr.
PLAIN = {
    "int": lambda x: x.int(),
    "bool": lambda x: (x - 2.0).bool(),
    "int_of_bool": lambda x: (x > 1).int(),
    "type_int64": lambda x: x.type(lib(x).int64),
    "type_long_string": lambda x: x.type("torch.LongTensor"),
    "type_as_int": lambda x: x.type_as(const(x, [1, 2])),
    "sort_indices_stable": lambda x: x.sort(dim=1, stable=True).indices,
    "sort_desc_indices_stable": lambda x: x.sort(dim=1, descending=True, stable=True).indices,
    "sort_ints": lambda x: tuple(x.long().sort(dim=0, stable=True)),
    "topk_indices": lambda x: x[:, [0, 3, 1]].topk(1).indices,
    "floor_of_ints": lambda x: x.long().floor(),
    "sign_of_ints": lambda x: (x - 2).long().sign(),
    "round_of_ints": lambda x: x.int().round(),
    "cumsum_of_ints": lambda x: x.int().cumsum(0),
    "cumsum_of_bools": lambda x: (x > 1).cumsum(1),
    "split_of_ints": lambda x: x.long().split(2, 1),
    "chunk_of_empty": lambda x: x[:, :0].chunk(2, 1),
    "split_of_empty": lambda x: x[:, :0].split(2, 1),
    "masked_select_of_ints": lambda x: x.long().masked_select(x > 1),
    "index_select_0d_index": lambda x: x.long().index_select(1, const(x, 2)),
    "flip_of_bools": lambda x: (x > 1).flip(0),
    "repeat_of_ints": lambda x: x.int().repeat(1, 2),
    "triu_of_ints": lambda x: x.long().triu(),
    "amax_of_ints": lambda x: x.long().amax(1),
    "new_zeros": lambda x: x.new_zeros(2, 3),
    "new_zeros_tuple_dtype": lambda x: x.new_zeros((2,), dtype=lib(x).int32),
    "new_ones": lambda x: x.int().new_ones([3]),
    "new_full": lambda x: x.int().new_full((2,), 1.7),
    "new_full_float": lambda x: x.new_full((2, 1), 3),
    "new_tensor": lambda x: x.new_tensor([1, 2]),
    "new_tensor_dtype": lambda x: x.new_tensor([1.5, 2.5], dtype=lib(x).float16),
    "new_empty_shape": lambda x: x.new_empty(2, 0),
}


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_results_against_torch(name: str, torch64: Any) -> None:
    torch = torch64
    ours, theirs = PLAIN[name](tensor(T)), PLAIN[name](torch.tensor(T))
    if not isinstance(theirs, tuple):
        ours, theirs = (ours,), (theirs,)
    assert isinstance(ours, tuple) and len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert str(a.dtype) == str(b.dtype) and a.dtype == b.dtype
        assert tuple(a.shape) == tuple(b.shape)
        assert not a.requires_grad
        if a.numel():
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert repr(a) == repr(b)


def test_type_names_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for name in ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8",
                 "bool", "complex64", "complex128"):
        ours = s2sgrad.zeros(2, dtype=getattr(s2sgrad, name)).type()
        assert ours == torch.zeros(2, dtype=getattr(torch, name)).type()
        assert s2sgrad.zeros(1).type(ours).dtype == getattr(s2sgrad, name)


def test_conversions_return_self_when_nothing_changes() -> None:
    x = tensor(X, requires_grad=True)
    assert x.contiguous() is x
    assert x.type(s2sgrad.float64) is x and x.type_as(tensor([1.0])) is x
    i = tensor([1, 2], dtype=np.int32)
    assert i.int() is i and (i > 0).bool().dtype is s2sgrad.bool
    assert x.int().dtype is s2sgrad.int32 and not x.int().requires_grad


def test_sort_and_topk_are_named_pairs() -> None:
    x = tensor([[3.0, 1.0, 2.0]], requires_grad=True)
    result = x.sort(descending=True)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert type(result).__name__ == "ReturnSort" and type(x.topk(1)).__name__ == "ReturnTopk"
    assert values.tolist() == [[3.0, 2.0, 1.0]] and indices.tolist() == [[0, 2, 1]]
    assert indices.dtype == np.int64 and not indices.requires_grad
    top = x.topk(2, largest=False)
    assert top.values.tolist() == [[1.0, 2.0]] and top.indices.tolist() == [[1, 2]]
    scalar = tensor(4.0).sort()
    assert scalar.values.item() == 4.0 and scalar.indices.item() == 0


def test_sort_of_nan_as_torch() -> None:
    torch = pytest.importorskip("torch")
    data = np.array([1.0, np.nan, -2.0, 0.5])
    for descending in (False, True):
        ours = tensor(data).sort(descending=descending, stable=True)
        theirs = torch.tensor(data).sort(descending=descending, stable=True)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


def test_split_pieces_are_views() -> None:
    x = tensor(np.arange(6.0).reshape(2, 3))
    first, second = x.split([1, 2], 1)
    assert first._base is x and np.shares_memory(second.numpy(), x.numpy())
    rows = x.unbind()
    assert rows[1].tolist() == [3.0, 4.0, 5.0] and rows[1]._base is x


def test_copies_do_not_alias_the_input() -> None:
    # flip and diag give new memory in PyTorch: writing to the result leaves the input alone
    x = tensor(np.arange(4.0).reshape(2, 2))
    for result in (x.flip(0), x.diag(), x.roll(1), x.triu(), x.repeat(1, 1)):
        result[0] = -1.0
        assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_piecewise_constant_functions_have_zero_gradient() -> None:
    x = tensor([-1.5, 0.5, 2.0], requires_grad=True)
    for name in ("floor", "ceil", "round", "trunc", "sign"):
        y = getattr(x, name)()
        assert y.requires_grad and y.grad_fn is not None
        assert node_name(y.grad_fn) == name.capitalize() + "Backward0"
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
        x.grad = None


def test_integer_inputs_of_float_functions_give_float64() -> None:
    # PyTorch gives its default dtype; ours is float64
    for name in ("reciprocal", "rsqrt", "log1p", "expm1", "log2", "log10", "tan", "sinh",
                 "cosh", "asin", "acos", "atan", "logsumexp"):
        args = (0,) if name == "logsumexp" else ()
        ints = tensor([0, 1] if name in ("asin", "acos") else [1, 2])
        result = getattr(ints, name)(*args)
        assert result.dtype is s2sgrad.float64, name
    np.testing.assert_allclose(tensor([1, 2]).reciprocal().numpy(), [1.0, 0.5])


def test_logsumexp_is_stable() -> None:
    torch = pytest.importorskip("torch")
    data = np.array([[1000.0, 1000.0, -np.inf], [-np.inf, -np.inf, -np.inf], [-5e3, 0.0, 1.0]])
    x, tx = tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # the row of -inf: log(0)
        y, ty = x.logsumexp(1), tx.logsumexp(1)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
        (y[[0, 2]] * tensor([1.0, 2.0])).sum().backward()
    (ty[[0, 2]] * torch.tensor([1.0, 2.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


ERRORS = {
    "split_size_zero": (lambda x: x.split(0), RuntimeError, "split_size can only be 0"),
    "split_sizes_sum": (lambda x: x.split([1, 1], 1), RuntimeError, "sum exactly to 4"),
    "chunk_zero": (lambda x: x.chunk(0), RuntimeError, "greater than 0"),
    "topk_too_many": (lambda x: x.topk(5), RuntimeError, "k out of range"),
    "index_select_matrix": (lambda x: x.index_select(1, const(x, [[0]])), IndexError,
                            "supposed to be a vector"),
    "index_select_floats": (lambda x: x.index_select(1, const(x, [0.0])), RuntimeError,
                            "int32 or int64"),
    "masked_select_ints": (lambda x: x.masked_select(const(x, [1, 0, 1, 1])), RuntimeError,
                           "BoolTensor"),
    "bmm_2d": (lambda x: x.bmm(x), RuntimeError, "batch1 must be a 3D tensor"),
    "bmm_sizes": (lambda x: x.reshape(1, 3, 4).bmm(x.reshape(1, 3, 4)), RuntimeError,
                  "first two dimensions of batch2"),
    "outer_2d": (lambda x: x.outer(x[0]), RuntimeError, "Expected 1-D argument self"),
    "triu_1d": (lambda x: x[0].triu(), RuntimeError, "at least 2 dimensions"),
    "diag_3d": (lambda x: x[None].diag(), RuntimeError, "Supports 1D or 2D"),
    "repeat_too_few": (lambda x: x.repeat(2), RuntimeError, "can not be smaller"),
    "flatten_order": (lambda x: x.flatten(1, 0), RuntimeError, "cannot come after"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name: str) -> None:
    fn, error, message = ERRORS[name]
    with pytest.raises(error, match=message):
        fn(tensor(X))
    torch = pytest.importorskip("torch")
    with pytest.raises(error, match=message):
        fn(torch.tensor(X))


# -- in place ---------------------------------------------------------------------------------

INPLACE = {
    "clamp_": lambda y: y.clamp_(-0.3, 0.4),
    "clamp_min": lambda y: y.clamp_(min=0.0),
    "clip_": lambda y: y.clip_(max=0.1),
    "relu_": lambda y: y.relu_(),
    "exp_": lambda y: y.exp_(),
    "neg_": lambda y: y.neg_(),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_against_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    fn = INPLACE[name]
    results = []
    for make in (tensor, torch.tensor):
        x = make(X, requires_grad=True)
        y = x * 1.5
        out = fn(y)
        assert out is y
        name = node_name(y.grad_fn)
        (y * make(X[::-1].copy())).sum().backward()
        results.append((y.detach().numpy().copy(), x.grad.numpy().copy(), name))
    (ours, ours_grad, ours_name), (theirs, theirs_grad, theirs_name) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-12)
    assert ours_name == theirs_name


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_against_finite_differences(name: str) -> None:
    fn = INPLACE[name]
    w = X[::-1].copy()

    def forward(a: Any) -> Any:
        y = a * 1.5
        fn(y)
        return y

    x = tensor(X, requires_grad=True)
    (forward(x) * tensor(w)).sum().backward()
    numeric = numeric_gradient(lambda a: float(np.sum(forward(tensor(a)).numpy() * w)), [X], 0)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-6)


def test_inplace_outside_the_graph_and_refusals() -> None:
    plain = tensor([-1.0, 2.0])
    before = plain._version.value
    assert plain.relu_() is plain and plain.tolist() == [0.0, 2.0]
    assert plain._version.value == before + 1
    assert plain.neg_().tolist() == [-0.0, -2.0]
    leaf = tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.exp_()
    with s2sgrad.no_grad():
        leaf.clamp_(max=0.5)
    assert leaf.tolist() == [0.5] and leaf.grad_fn is None
    ints = tensor([1, 2])
    with pytest.raises(TypeError):
        ints.exp_()


def test_inplace_through_a_view_reaches_the_base() -> None:
    x = tensor(X, requires_grad=True)
    y = x * 1.0
    y[0].relu_()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0], (X[0] > 0).astype(float))
    np.testing.assert_array_equal(x.grad.numpy()[1:], np.ones((2, 4)))


# -- inference mode ---------------------------------------------------------------------------

def test_inference_mode_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for lib_ in (s2sgrad, torch):
        states = []
        x = lib_.ones(2, requires_grad=True)
        states.append((lib_.is_inference_mode_enabled(), lib_.is_grad_enabled()))
        with lib_.inference_mode():
            y = x * 2
            states.append((lib_.is_inference_mode_enabled(), lib_.is_grad_enabled(),
                           y.requires_grad))
            with lib_.inference_mode(False):
                states.append((lib_.is_inference_mode_enabled(), lib_.is_grad_enabled()))
            with lib_.enable_grad():
                states.append((lib_.is_inference_mode_enabled(), lib_.is_grad_enabled()))
        with lib_.no_grad(), lib_.inference_mode(False):
            states.append((lib_.is_inference_mode_enabled(), lib_.is_grad_enabled()))
        states.append((lib_.is_inference_mode_enabled(), lib_.is_grad_enabled()))

        @lib_.inference_mode
        def bare() -> tuple:
            return lib_.is_inference_mode_enabled(), (x * 2).requires_grad

        @lib_.inference_mode()
        def called() -> tuple:
            return lib_.is_inference_mode_enabled(), (x * 2).requires_grad

        @lib_.inference_mode(mode=False)
        def off() -> tuple:
            return lib_.is_inference_mode_enabled(), (x * 2).requires_grad

        states += [bare(), called(), off(), bare.__name__]
        states.append((lib_.is_inference_mode_enabled(), lib_.is_grad_enabled()))
        if lib_ is s2sgrad:
            ours = states
    assert ours == states
    assert ours[1] == (True, False, False)


def test_inference_mode_is_restored_after_an_error() -> None:
    with pytest.raises(ValueError), s2sgrad.inference_mode():
        raise ValueError
    assert not s2sgrad.is_inference_mode_enabled() and s2sgrad.is_grad_enabled()


# -- NumPy functions with dtype= --------------------------------------------------------------

def test_ufuncs_take_dtype_on_tensors() -> None:
    torch = pytest.importorskip("torch")
    for dtype in (np.float32, np.dtype(np.float32), s2sgrad.float32, "float32"):
        x = tensor([1.0, 2.0], requires_grad=True)
        y = np.add(x, 1, dtype=dtype)
        assert y.dtype is s2sgrad.float32 and y.requires_grad
        np.testing.assert_array_equal(y.detach().numpy(), [2.0, 3.0])
        (np.multiply(y, y, dtype=dtype) * tensor([1.0, 3.0])).sum().backward()
        tx = torch.tensor([1.0, 2.0], requires_grad=True)
        ((tx.float() + 1) ** 2 * torch.tensor([1.0, 3.0])).sum().backward()
        assert x.grad.dtype is s2sgrad.float64
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    i = tensor([1, 2])
    f = np.add(i, i, dtype=s2sgrad.float64)
    assert f.dtype is s2sgrad.float64 and f.tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="Cannot cast"):
        np.add(tensor([1.5], requires_grad=True), 1, dtype=np.int64)


def test_ufunc_dtype_gradient_against_finite_differences() -> None:
    x = tensor(X, requires_grad=True)
    (np.sin(np.multiply(x, x, dtype=np.float64)) * tensor(X)).sum().backward()
    numeric = numeric_gradient(lambda a: float(np.sum(np.sin(a * a) * X)), [X], 0)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-6)


def test_numpy_functions_take_dtype_objects() -> None:
    x = tensor(X, requires_grad=True)
    for dtype in (s2sgrad.float32, np.float32):
        for y in (np.sum(x, axis=1, dtype=dtype), np.mean(x, 0, dtype),
                  np.cumsum(x, 1, dtype)):
            assert y.dtype is s2sgrad.float32 and y.requires_grad
    with s2sgrad.no_grad():
        assert np.sum(x, dtype=s2sgrad.float16).dtype is s2sgrad.float16
    from s2sgrad.autograd import ops
    y = ops.numpy_call(np.sum, (x,), {"axis": 0, "dtype": s2sgrad.float32})
    assert y.dtype is s2sgrad.float32
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4)))


def test_sigmoid_is_exact_in_both_tails():
    x = np.array([-700.0, -40.0, -20.0, -1e-3, 0.0, 1e-3, 20.0, 40.0, 700.0])
    t = s2sgrad.tensor(x, requires_grad=True)
    y = t.sigmoid()
    with np.errstate(over="ignore"):
        want = 1.0 / (1.0 + np.exp(-x))
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-15, atol=0)
    y.sum().backward()
    e = np.exp(-np.abs(x))
    np.testing.assert_allclose(t.grad.numpy(), e / (1.0 + e) ** 2, rtol=1e-13, atol=0)
    assert t.grad.numpy()[1] > 0 and t.grad.numpy()[7] > 0  # 4.2e-18, not 0
