"""The module-level creators (``arange``, ``linspace``, ``full``, ``rand``, ``cat``, ...), the
dtype objects (``s2sgrad.float32`` and ``t.dtype``, printed as PyTorch prints them), and the one
default generator that ``manual_seed`` resets.

Creators are compared with PyTorch run with float64 as its default dtype (ours): dtypes and
shapes always, values where they are deterministic. Gradients through ``cat`` and ``stack``
are checked against central differences and against PyTorch."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import s2sgrad
from s2sgrad import nn, optim
from s2sgrad.autograd.tensor import Tensor
from s2sgrad.testing import numeric_gradient
from s2sgrad.utils.data import DataLoader, TensorDataset

TORCH_DTYPE_NAMES = ["float16", "float32", "float64", "complex64", "complex128", "int8",
                     "int16", "int32", "int64", "uint8", "bool", "float", "double", "half",
                     "long", "int", "short", "cfloat", "cdouble"]


# -- dtypes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", TORCH_DTYPE_NAMES)
def test_dtype_objects_print_and_compare_as_torchs(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(s2sgrad, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert ours == theirs
    assert ours.is_floating_point == theirs.is_floating_point
    assert ours.is_complex == theirs.is_complex
    assert ours.is_signed == theirs.is_signed
    assert ours.itemsize == theirs.itemsize
    assert tensor_of(ours).dtype is ours  # one object per dtype
    assert repr(tensor_of(ours).dtype) == repr(torch.zeros(2, dtype=theirs).dtype)


def tensor_of(dtype: Any) -> Tensor:
    return s2sgrad.tensor([0, 1], dtype=dtype)


def test_dtype_objects_stand_for_numpy_dtypes() -> None:
    t = s2sgrad.tensor([1.0, 2.0], dtype=s2sgrad.float32)
    assert t.dtype is s2sgrad.float32 is s2sgrad.float
    assert t.data.dtype == np.float32  # the data is a plain float32 array
    # equal to NumPy's dtype, type and name, either way round; not to other dtypes, nor None
    assert t.dtype == np.float32 and np.float32 == t.dtype
    assert t.dtype == np.dtype(np.float32) and np.dtype(np.float32) == t.dtype
    assert t.dtype == "float32" and t.dtype == "torch.float32"
    assert t.dtype != np.float64 and t.dtype != s2sgrad.float64 and t.dtype != None
    assert t.dtype in (np.float16, np.float32) and hash(t.dtype) == hash(np.dtype(np.float32))
    # NumPy takes it as a dtype, and its attributes are NumPy's
    assert np.zeros(3, dtype=t.dtype).dtype == np.float32
    assert np.arange(3).astype(t.dtype).dtype == np.float32
    assert np.dtype(t.dtype) == np.float32 and np.issubdtype(t.dtype, np.floating)
    assert (t.dtype.kind, t.dtype.name, t.dtype.type) == ("f", "float32", np.float32)
    # accepted wherever a dtype is
    assert s2sgrad.zeros(2, dtype=s2sgrad.int32).dtype == np.int32
    assert t.to(s2sgrad.float64).dtype is s2sgrad.float64
    assert t.to(dtype=s2sgrad.half).dtype == np.float16
    assert s2sgrad.tensor([1.5]).to(float).dtype is s2sgrad.float64
    assert s2sgrad.tensor([1.5]).long().dtype is s2sgrad.long
    # NumPy functions of Tensors take it too, as the compiler's dtype
    x = s2sgrad.tensor([1.0, 2.0], requires_grad=True)
    y = np.sum(x * x, dtype=s2sgrad.float32)
    assert y.dtype is s2sgrad.float32
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert np.zeros_like(x, s2sgrad.int32).dtype is s2sgrad.int32
    # copied and pickled, it stays the one object
    assert copy.copy(t.dtype) is copy.deepcopy(t.dtype) is t.dtype
    assert pickle.loads(pickle.dumps(t.dtype)) is t.dtype


def test_builtin_names_are_attributes_but_not_star_exports() -> None:
    for name, expected in (("float", np.float32), ("int", np.int32), ("bool", np.bool_)):
        assert getattr(s2sgrad, name) == expected and name in dir(s2sgrad)
        assert name not in s2sgrad.__all__  # `from s2sgrad import *` keeps the builtins
    with pytest.raises(AttributeError, match="no attribute 'float128'"):
        s2sgrad.float128  # noqa: B018


REPR_CASES = {
    "float32": ([1.5, -2.0], "float32"),
    "float32_0d": (3.0, "float32"),
    "float16": ([0.5, 1.0], "float16"),
    "int32": ([1, 2], "int32"),
    "int16": ([[1, -2], [3, 4]], "int16"),
    "int8": ([-1, 7], "int8"),
    "uint8": ([1, 200], "uint8"),
    "int64": ([1, 2], "int64"),
    "bool": ([True, False], "bool"),
    "empty_int32": ([], "int32"),
    "empty_int64": ([], "int64"),
    "empty_bool": ([], "bool"),
    "empty_float32": ([], "float32"),
    "float64": ([1.5, -2.0], "float64"),
}


@pytest.mark.parametrize("case", sorted(REPR_CASES))
def test_tensors_print_their_dtype_as_torch(case: str, torch64: Any) -> None:
    # torch with float64 as its default dtype prints as we do: float64 without dtype=,
    # float32 with it
    data, name = REPR_CASES[case]
    ours = s2sgrad.tensor(data, dtype=getattr(s2sgrad, name))
    assert repr(ours) == repr(torch64.tensor(data, dtype=getattr(torch64, name)))


def test_default_float_dtypes_print_alike() -> None:
    torch = pytest.importorskip("torch")
    assert torch.get_default_dtype() == torch.float32
    assert repr(s2sgrad.tensor([1.5, -2.0])) == repr(torch.tensor([1.5, -2.0]))


def test_dtype_shows_beside_grad_fn_and_in_parameters_as_torch(torch64: Any) -> None:
    x = s2sgrad.tensor([1.0, 2.0], dtype=s2sgrad.float32, requires_grad=True)
    tx = torch64.tensor([1.0, 2.0], dtype=torch64.float32, requires_grad=True)
    assert repr(x) == repr(tx)
    assert repr(x * 2) == repr(tx * 2)
    assert repr(nn.Parameter(np.array([0.5, 1.0], dtype=np.float32))) == repr(
        torch64.nn.Parameter(torch64.tensor([0.5, 1.0], dtype=torch64.float32)))


# -- creators against torch ------------------------------------------------------------------

# name -> function of the library (s2sgrad or torch); deterministic values
DETERMINISTIC: dict[str, Callable] = {
    "arange_int": lambda m: m.arange(5),
    "arange_start_end": lambda m: m.arange(2, 9),
    "arange_step": lambda m: m.arange(1, 10, 3),
    "arange_negative_step": lambda m: m.arange(5, -3, -2),
    "arange_float": lambda m: m.arange(0.0, 1, 0.1),
    "arange_float_step": lambda m: m.arange(0.1, 2.05, 0.2),
    "arange_float_end": lambda m: m.arange(2.5),
    "arange_dtype": lambda m: m.arange(4, dtype=m.float32),
    "arange_int_dtype_truncates": lambda m: m.arange(0.0, 5.0, 1.5, dtype=m.int64),
    "arange_tensor": lambda m: m.arange(m.tensor(3)),
    "arange_empty": lambda m: m.arange(3, 3),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "linspace_odd": lambda m: m.linspace(-1.3, 2.7, 11),
    "linspace_awkward": lambda m: m.linspace(0.1, 0.7, 7),
    "linspace_one": lambda m: m.linspace(3, 10, 1),
    "linspace_none": lambda m: m.linspace(3, 10, 0),
    "linspace_int": lambda m: m.linspace(0, 10, 4, dtype=m.int64),
    "linspace_float32": lambda m: m.linspace(0, 1, 7, dtype=m.float32),
    "full_float": lambda m: m.full((2, 3), 1.5),
    "full_int": lambda m: m.full((2,), 7),
    "full_bool": lambda m: m.full((3,), True),
    "full_dtype": lambda m: m.full([2, 2], 2, dtype=m.float32),
    "full_like": lambda m: m.full_like(m.tensor([[1, 2]]), 4),
    "full_like_dtype": lambda m: m.full_like(m.tensor([1.0]), 2.5, dtype=m.float32),
    "zeros_varargs": lambda m: m.zeros(2, 3),
    "zeros_tuple": lambda m: m.zeros((2, 3)),
    "zeros_list": lambda m: m.zeros([4]),
    "zeros_size": lambda m: m.zeros(m.ones(3, 1).shape),
    "zeros_scalar": lambda m: m.zeros(()),
    "ones_dtype": lambda m: m.ones(2, dtype=m.int32),
    "ones_like": lambda m: m.ones_like(m.tensor([1, 2])),
    "zeros_like_dtype": lambda m: m.zeros_like(m.tensor([1, 2]), dtype=m.float16),
    "eye": lambda m: m.eye(3),
    "eye_rect": lambda m: m.eye(2, 4, dtype=m.int64),
    "cat": lambda m: m.cat([m.tensor([[1.0, 2.0]]), m.tensor([[3.0, 4.0], [5.0, 6.0]])]),
    "cat_dim": lambda m: m.cat((m.ones(2, 1), m.zeros(2, 3)), dim=1),
    "cat_negative_dim": lambda m: m.cat([m.ones(2, 2), m.zeros(2, 1)], -1),
    "cat_promotes": lambda m: m.cat([m.tensor([1, 2]), m.tensor([0.5])]),
    "concat": lambda m: m.concat([m.tensor([1, 2]), m.tensor([3])]),
    "stack": lambda m: m.stack([m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])]),
    "stack_dim": lambda m: m.stack([m.tensor([1, 2]), m.tensor([3, 4])], dim=1),
    "stack_negative_dim": lambda m: m.stack([m.ones(2, 3), m.zeros(2, 3)], dim=-1),
    "stack_promotes": lambda m: m.stack([m.tensor([1, 2]), m.tensor([0.5, 1.5])]),
    "from_numpy": lambda m: m.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3)),
    "as_tensor_list": lambda m: m.as_tensor([1.0, 2.0]),
    "as_tensor_int_list": lambda m: m.as_tensor([[1, 2]]),
    "as_tensor_array": lambda m: m.as_tensor(np.array([1.5, 2.5], dtype=np.float32)),
    "as_tensor_dtype": lambda m: m.as_tensor(np.array([1, 2]), dtype=m.float64),
}

# name -> function of the library (s2sgrad or torch); random values
RANDOM: dict[str, Callable] = {
    "rand": lambda m: m.rand(3, 4),
    "rand_tuple": lambda m: m.rand((2, 5)),
    "rand_float32": lambda m: m.rand(2, dtype=m.float32),
    "randn": lambda m: m.randn(4),
    "randn_float32": lambda m: m.randn([2, 3], dtype=m.float32),
    "randn_complex": lambda m: m.randn(3, dtype=m.complex64),
    "rand_like": lambda m: m.rand_like(m.zeros(2, 2, dtype=m.float32)),
    "randn_like": lambda m: m.randn_like(m.zeros(3)),
    "randn_like_dtype": lambda m: m.randn_like(m.zeros(3), dtype=m.float16),
    "randint": lambda m: m.randint(10, (3, 2)),
    "randint_low": lambda m: m.randint(5, 8, (6,)),
    "randint_keywords": lambda m: m.randint(low=2, high=4, size=(5,)),
    "randint_size_keyword": lambda m: m.randint(3, size=(2,)),
    "randint_dtype": lambda m: m.randint(0, 3, (4,), dtype=m.int32),
    "randperm": lambda m: m.randperm(6),
    "randperm_dtype": lambda m: m.randperm(4, dtype=m.int32),
    "empty": lambda m: m.empty(2, 3),
    "empty_dtype": lambda m: m.empty((4,), dtype=m.int16),
    "empty_like": lambda m: m.empty_like(m.tensor([[1, 2]], dtype=m.int32)),
}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_creators_against_torch(name: str, torch64: Any) -> None:
    ours, theirs = DETERMINISTIC[name](s2sgrad), DETERMINISTIC[name](torch64)
    assert isinstance(ours, Tensor)
    assert ours.dtype == theirs.dtype and tuple(ours.shape) == tuple(theirs.shape)
    if ours.dtype.is_floating_point:  # torch's vectorised kernels round a few values apart
        ulp = np.finfo(ours.dtype).eps
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2 * ulp, atol=2 * ulp)
    else:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert not ours.requires_grad


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_creators_have_torchs_dtype_and_shape(name: str, torch64: Any) -> None:
    ours, theirs = RANDOM[name](s2sgrad), RANDOM[name](torch64)
    assert isinstance(ours, Tensor) and not ours.requires_grad
    assert ours.dtype == theirs.dtype and tuple(ours.shape) == tuple(theirs.shape)


def test_default_dtypes_without_torch() -> None:
    assert s2sgrad.arange(5).dtype is s2sgrad.int64
    assert s2sgrad.arange(0.0, 1, 0.1).dtype is s2sgrad.float64
    assert s2sgrad.linspace(0, 1, 3).dtype is s2sgrad.float64
    assert s2sgrad.randint(0, 5, (2,)).dtype is s2sgrad.int64
    assert s2sgrad.randperm(3).dtype is s2sgrad.int64
    assert s2sgrad.rand(2).dtype is s2sgrad.randn(2).dtype is s2sgrad.float64
    assert s2sgrad.full((1,), 2.0).dtype is s2sgrad.eye(2).dtype is s2sgrad.float64
    assert s2sgrad.full((1,), 2).dtype is s2sgrad.int64
    assert s2sgrad.full((1,), False).dtype is s2sgrad.bool
    assert s2sgrad.zeros(2).dtype is s2sgrad.ones((2,)).dtype is s2sgrad.float64
    assert s2sgrad.empty(2).dtype is s2sgrad.float64


def test_random_values_lie_in_their_ranges() -> None:
    s2sgrad.manual_seed(0)
    u = s2sgrad.rand(20000, dtype=s2sgrad.float16).numpy()
    assert u.min() >= 0 and u.max() < 1 and u.max() > 0.99  # rounding never reaches 1
    i = s2sgrad.randint(-3, 4, (2000,)).numpy()
    assert set(i.tolist()) == set(range(-3, 4))
    assert sorted(s2sgrad.randperm(50).tolist()) == list(range(50))
    z = s2sgrad.randn(100000, dtype=s2sgrad.complex128).numpy()
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.02  # unit variance, as torch's complex randn
    assert abs(np.var(z.real) - 0.5) < 0.01 and abs(np.var(z.imag) - 0.5) < 0.01


def test_requires_grad_on_creators() -> None:
    for t in (s2sgrad.zeros(2, requires_grad=True), s2sgrad.rand(2, 2, requires_grad=True),
              s2sgrad.randn(3, requires_grad=True), s2sgrad.arange(0.0, 3, requires_grad=True),
              s2sgrad.linspace(0, 1, 3, requires_grad=True),
              s2sgrad.full((2,), 1.0, requires_grad=True), s2sgrad.eye(2, requires_grad=True),
              s2sgrad.empty(2, requires_grad=True),
              s2sgrad.randn_like(s2sgrad.zeros(2), requires_grad=True)):
        assert t.requires_grad and t.is_leaf
        (t * t).sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), 2 * t.detach().numpy())


def test_creator_errors_as_torch() -> None:
    torch = pytest.importorskip("torch")
    calls = [
        lambda m: m.randint(0, 3, (2,), requires_grad=True),
        lambda m: m.arange(5, requires_grad=True),
        lambda m: m.arange(0, 5, -1),
        lambda m: m.randint(5, 5, (2,)),
    ]
    for call in calls:
        with pytest.raises(RuntimeError) as theirs:
            call(torch)
        with pytest.raises(RuntimeError, match="^" + str(theirs.value).split("\n")[0]):
            call(s2sgrad)
    with pytest.raises(RuntimeError, match="floating point"):
        s2sgrad.rand(2, dtype=s2sgrad.int64)
    with pytest.raises(RuntimeError, match="floating point"):
        s2sgrad.randn_like(s2sgrad.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        s2sgrad.from_numpy([1.0])
    with pytest.raises(ValueError, match="non-empty"):
        s2sgrad.cat([])
    with pytest.raises(TypeError, match="numeric dtype"):
        s2sgrad.zeros(2, dtype="U3")


def test_from_numpy_and_as_tensor_share_memory() -> None:
    a = np.arange(4.0)
    t = s2sgrad.from_numpy(a)
    a[0] = 10.0
    t[1] = 20.0
    assert t.tolist() == [10.0, 20.0, 2.0, 3.0] and a.tolist() == t.tolist()
    assert t.dtype is s2sgrad.float64 and s2sgrad.from_numpy(a.astype(np.float32)).dtype == \
        np.float32
    b = np.zeros(2, dtype=np.float32)
    shared, copied = s2sgrad.as_tensor(b), s2sgrad.as_tensor(b, dtype=s2sgrad.float64)
    b[0] = 1.0
    assert shared.tolist() == [1.0, 0.0] and copied.tolist() == [0.0, 0.0]
    x = s2sgrad.tensor([1.0], requires_grad=True)
    assert s2sgrad.as_tensor(x) is x and s2sgrad.as_tensor(x, dtype=s2sgrad.float64) is x
    y = s2sgrad.as_tensor(x, dtype=s2sgrad.float32)
    assert y.dtype is s2sgrad.float32 and y.grad_fn is not None  # converted in the graph


# -- gradients through cat and stack ---------------------------------------------------------

A = np.random.default_rng(0).standard_normal((2, 3))
B = np.random.default_rng(1).standard_normal((2, 3))
W_CAT = {0: np.random.default_rng(2).standard_normal((4, 3)),
         1: np.random.default_rng(3).standard_normal((2, 6))}
W_STACK = {0: np.random.default_rng(4).standard_normal((2, 2, 3)),
           -1: np.random.default_rng(5).standard_normal((2, 3, 2))}


@pytest.mark.parametrize(("join", "dim"), [("cat", 0), ("cat", 1), ("stack", 0), ("stack", -1)])
def test_gradients_through_cat_and_stack(join: str, dim: int) -> None:
    weight = (W_CAT if join == "cat" else W_STACK)[dim]
    numpy_join = np.concatenate if join == "cat" else np.stack

    def scalar(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.sum(weight * numpy_join([a, b], axis=dim)))

    a = s2sgrad.tensor(A, requires_grad=True)
    b = s2sgrad.tensor(B, requires_grad=True)
    out = getattr(s2sgrad, join)([a, b], dim)
    assert out.grad_fn is not None and out.requires_grad
    (out * s2sgrad.tensor(weight)).sum().backward()
    for i, t in enumerate((a, b)):
        numeric = numeric_gradient(scalar, [A, B], i)
        np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=1e-8, atol=1e-10)


def test_gradients_through_cat_and_stack_against_torch() -> None:
    torch = pytest.importorskip("torch")

    def run(m: Any) -> list[np.ndarray]:
        a = m.tensor(A, requires_grad=True)
        b = m.tensor(B, requires_grad=True)
        c = m.tensor(A * 2.0)  # a constant among them
        joined = m.cat([m.stack([a, b], 1).reshape(2, -1), m.cat([b, c]).reshape(2, -1)], 1)
        (joined.tanh() * m.tensor(np.arange(24.0).reshape(2, 12))).sum().backward()
        return [a.grad.numpy(), b.grad.numpy()]

    for ours, theirs in zip(run(s2sgrad), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


# -- one generator, reset by manual_seed -----------------------------------------------------

def small_training_run(seed: int) -> tuple[list[float], list[np.ndarray]]:
    """Random data, a model with Dropout, a shuffling loader, two epochs of SGD: the losses
    and the final parameters."""
    s2sgrad.manual_seed(seed)
    x = s2sgrad.randn(40, 4)
    y = s2sgrad.randint(0, 3, (40,))
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))
    opt = optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    losses = []
    for _ in range(2):
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_the_same_seed_repeats_a_whole_training_run() -> None:
    losses, params = small_training_run(7)
    np.random.seed(123)  # NumPy's global state plays no part
    np.random.standard_normal(5)
    again_losses, again_params = small_training_run(7)
    assert losses == again_losses
    for p, q in zip(params, again_params, strict=True):
        np.testing.assert_array_equal(p, q)
    other_losses, other_params = small_training_run(8)
    assert other_losses != losses
    assert not any(np.array_equal(p, q) for p, q in zip(params, other_params, strict=True))


def test_every_random_draw_comes_from_the_default_generator() -> None:
    # after manual_seed(s), each draw is what np.random.default_rng(s) draws (random.py)
    def expected(seed: int) -> np.random.Generator:
        assert s2sgrad.manual_seed(seed) is s2sgrad.default_generator
        return np.random.default_rng(seed)

    rng = expected(1)
    np.testing.assert_array_equal(s2sgrad.randn(3, 2).numpy(), rng.standard_normal((3, 2)))
    np.testing.assert_array_equal(s2sgrad.rand(4).numpy(), rng.random(4))
    np.testing.assert_array_equal(s2sgrad.randint(2, 9, (5,)).numpy(), rng.integers(2, 9, 5))
    np.testing.assert_array_equal(s2sgrad.randperm(7).numpy(), rng.permutation(7))
    np.testing.assert_array_equal(s2sgrad.randn_like(s2sgrad.zeros(2)).numpy(),
                                  rng.standard_normal(2))
    rng = expected(2)
    w = nn.init.normal_(nn.Parameter(np.zeros((3, 2))), 1.0, 0.5)
    np.testing.assert_array_equal(w.detach().numpy(), rng.normal(1.0, 0.5, (3, 2)))
    layer = nn.Linear(4, 3)
    bound = 1 / np.sqrt(4)
    np.testing.assert_allclose(layer.weight.detach().numpy(), rng.uniform(-bound, bound, (3, 4)),
                               rtol=1e-15)
    np.testing.assert_allclose(layer.bias.detach().numpy(), rng.uniform(-bound, bound, 3),
                               rtol=1e-15)
    emb = nn.Embedding(5, 2)
    np.testing.assert_array_equal(emb.weight.detach().numpy(), rng.normal(0.0, 1.0, (5, 2)))
    rng = expected(3)
    ones = s2sgrad.ones(4, 5)
    kept = rng.random((4, 5)) >= 0.4
    np.testing.assert_allclose(nn.Dropout(0.4)(ones).numpy(), kept / 0.6, rtol=1e-15)
    kept = rng.random((4, 5)) >= 0.5
    np.testing.assert_allclose(nn.functional.dropout(ones).numpy(), kept / 0.5, rtol=1e-15)
    rng = expected(4)
    loader = DataLoader(TensorDataset(s2sgrad.arange(10)), batch_size=10, shuffle=True)
    (batch,) = next(iter(loader))
    np.testing.assert_array_equal(batch.numpy(), rng.permutation(10))


def test_seed_and_initial_seed() -> None:
    s2sgrad.manual_seed(42)
    assert s2sgrad.initial_seed() == 42 == s2sgrad.default_generator.initial_seed()
    s2sgrad.manual_seed(-1)  # negative seeds are taken modulo 2**64
    assert s2sgrad.initial_seed() == 2**64 - 1
    with pytest.raises(ValueError, match="Overflow"):
        s2sgrad.manual_seed(2**64)
    chosen = s2sgrad.seed()
    assert isinstance(chosen, int) and 0 <= chosen < 2**64
    assert s2sgrad.initial_seed() == chosen
    np.testing.assert_array_equal(s2sgrad.rand(3).numpy(),
                                  np.random.default_rng(chosen).random(3))
    assert s2sgrad.seed() != chosen  # fresh entropy each time


def test_seeds_are_read_as_torch_reads_them() -> None:
    torch = pytest.importorskip("torch")
    for seed in (0, 5, -1, -(2**63), 2**64 - 1, 3.7, "12"):
        torch.manual_seed(seed)
        s2sgrad.manual_seed(seed)
        assert s2sgrad.initial_seed() == torch.initial_seed()
    assert s2sgrad.Generator().initial_seed() == torch.Generator().initial_seed()


def test_generators_of_ones_own() -> None:
    g = s2sgrad.Generator().manual_seed(3)
    assert isinstance(g, np.random.Generator) and g.initial_seed() == 3
    s2sgrad.manual_seed(0)
    first = s2sgrad.randn(4, generator=g).numpy()
    np.testing.assert_array_equal(first, np.random.default_rng(3).standard_normal(4))
    np.testing.assert_array_equal(s2sgrad.randn(2).numpy(),  # the default one was not used
                                  np.random.default_rng(0).standard_normal(2))
    twin = copy.deepcopy(g)
    assert isinstance(twin, s2sgrad.Generator) and twin.initial_seed() == 3
    np.testing.assert_array_equal(twin.random(3), g.random(3))
    loader = DataLoader(TensorDataset(s2sgrad.arange(6)), batch_size=6, shuffle=True,
                        generator=s2sgrad.Generator().manual_seed(5))
    np.testing.assert_array_equal(next(iter(loader))[0].numpy(),
                                  np.random.default_rng(5).permutation(6))
