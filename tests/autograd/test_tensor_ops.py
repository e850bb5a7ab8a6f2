"""Eager operations on Tensors: operators, NumPy functions and methods build a graph whose
gradients match finite differences, through generated functions compiled by the pipeline."""

from __future__ import annotations

import inspect
import linecache

import numpy as np
import pytest

from s2sgrad.autograd import ops
from s2sgrad.autograd.grad_mode import no_grad
from s2sgrad.autograd.tensor import Tensor, tensor
from s2sgrad.compiler import sourcefile
from s2sgrad.errors import TransformError
from tests.autograd.test_tensor_fd import check_backward

rng = np.random.default_rng(42)
V = rng.standard_normal(3)
W = rng.standard_normal(3)
P = rng.uniform(0.5, 2.0, 3)  # positive, for log, sqrt, fractional powers
M = rng.standard_normal((2, 3))
N = rng.standard_normal((3, 2))
S = rng.standard_normal((2, 2)) + 3 * np.eye(2)  # well conditioned
C = np.array([0.5, -1.0, 2.0])  # a constant: ndarray operand

CASES = {
    # operators, with Tensor, ndarray and float operands, broadcasting
    "add": (lambda a, b: a + b, [V, W]),
    "add_float": (lambda a: a + 3.0, [V]),
    "radd_float": (lambda a: 3.0 + a, [V]),
    "add_ndarray": (lambda a: a + C, [V]),
    "ndarray_add": (lambda a: C + a, [V]),
    "add_broadcast": (lambda a, b: a + b, [M, V]),
    "sub": (lambda a, b: a - b, [V, W]),
    "rsub": (lambda a: 1.0 - a, [V]),
    "mul": (lambda a, b: a * b, [V, W]),
    "mul_same": (lambda a: a * a, [V]),
    "mul_broadcast_column": (lambda a, b: a * b, [M, rng.standard_normal((2, 1))]),
    "rmul_int": (lambda a: 2 * a, [V]),
    "div": (lambda a, b: a / b, [V, P]),
    "rdiv": (lambda a: 2.0 / a, [P]),
    "pow_int": (lambda a: a ** 2, [V]),
    "pow_float": (lambda a: a ** 1.5, [P]),
    "pow_tensor": (lambda a, b: a ** b, [P, W]),
    "rpow": (lambda a: 2.0 ** a, [V]),
    "neg": (lambda a: -a, [V]),
    "pos": (lambda a: +a, [V]),
    "matmul_mm": (lambda a, b: a @ b, [M, N]),
    "matmul_mv": (lambda a, b: a @ b, [M, V]),
    "matmul_dot": (lambda a, b: a @ b, [V, W]),
    "matmul_ndarray_left": (lambda b: N @ b, [M]),
    "abs": (lambda a: abs(a), [V]),
    # NumPy functions on Tensors
    "np_tanh": (lambda a: np.tanh(a), [V]),
    "np_exp": (lambda a: np.exp(a), [V]),
    "np_log": (lambda a: np.log(a), [P]),
    "np_sqrt": (lambda a: np.sqrt(a), [P]),
    "np_sin_cos": (lambda a: np.sin(a) * np.cos(a), [V]),
    "np_maximum": (lambda a, b: np.maximum(a, b), [V, W]),
    "np_sum": (lambda a: np.sum(a), [M]),
    "np_sum_axis": (lambda a: np.sum(a, axis=0), [M]),
    "np_sum_keepdims": (lambda a: np.sum(a, axis=1, keepdims=True), [M]),
    "np_mean": (lambda a: np.mean(a), [M]),
    "np_mean_axis": (lambda a: np.mean(a, 1), [M]),
    "np_dot": (lambda a, b: np.dot(a, b), [M, N]),
    "np_matmul": (lambda a, b: np.matmul(a, b), [M, N]),
    "np_transpose": (lambda a: np.transpose(a), [M]),
    "np_reshape": (lambda a: np.reshape(a, (3, 2)), [M]),
    "np_where": (lambda a, b: np.where(V > 0, a, b), [V, W]),
    "np_clip": (lambda a: np.clip(a, -0.5, 0.5), [V]),
    "np_linalg_inv": (lambda a: np.linalg.inv(a), [S]),
    "np_var": (lambda a: np.var(a), [V]),
    "np_outer": (lambda a, b: np.outer(a, b), [V, W]),
    # methods in PyTorch's spelling
    "sum": (lambda a: a.sum(), [M]),
    "sum_dim": (lambda a: a.sum(0), [M]),
    "sum_dim_keepdim": (lambda a: a.sum(dim=1, keepdim=True), [M]),
    "mean": (lambda a: a.mean(), [M]),
    "mean_dim": (lambda a: a.mean(dim=0), [M]),
    "prod": (lambda a: a.prod(), [P]),
    "reshape": (lambda a: a.reshape(3, 2), [M]),
    "view": (lambda a: a.view((6,)), [M]),
    "flatten": (lambda a: a.flatten(), [M]),
    "T": (lambda a: a.T, [M]),
    "transpose": (lambda a: a.transpose(0, 1), [M]),
    "permute": (lambda a: a.permute(1, 0), [M]),
    "squeeze_unsqueeze": (lambda a: a.unsqueeze(0).squeeze(0), [V]),
    "exp_log_sqrt": (lambda a: a.exp() + a.log() + a.sqrt(), [P]),
    "tanh_sin_cos": (lambda a: a.tanh() + a.sin() * a.cos(), [V]),
    "relu": (lambda a: a.relu(), [V]),
    "sigmoid": (lambda a: a.sigmoid(), [V]),
    "square_pow": (lambda a: a.square() + a.pow(3), [V]),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), [V]),
    "clone": (lambda a: a.clone() * 2.0, [V]),
    "dot": (lambda a, b: a.dot(b), [V, W]),
    "mm": (lambda a, b: a.mm(b), [M, N]),
    # indexing: basic, advanced with repeats, boolean masks, Tensors as indices
    "index_int": (lambda a: a[0] * 2.0, [M]),
    "index_pair": (lambda a: a[1, 2] * a[0, 0], [M]),
    "index_slice": (lambda a: a[:, 1:], [M]),
    "index_column": (lambda a: a[:, 0], [M]),
    "index_repeated": (lambda a: a[[0, 0, 1]], [M]),
    "index_array_pair": (lambda a: a[np.array([1, 0]), np.array([2, 2])], [M]),
    "index_mask": (lambda a: a[M > 0], [M]),
    "index_tensor": (lambda a: a[tensor([2, 0])], [V]),
    "iterate_rows": (lambda a: sum(row * float(i + 1) for i, row in enumerate(a)), [M]),
    # compositions: a graph of several nodes, with fan-out
    "mse": (lambda w, b: ((np.tanh(M @ w + b) - 1.0) ** 2).mean(),
            [rng.standard_normal(3), rng.standard_normal(2)]),
    "fan_out": (lambda a: (a * a + a.exp()) * a, [V]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name: str) -> None:
    f, arrays = CASES[name]
    check_backward(f, *arrays)


@pytest.mark.parametrize(("expression", "expected"), [
    (lambda x, m: x * x, "MulBackward0"),
    (lambda x, m: x + 3, "AddBackward0"),
    (lambda x, m: 3 + x, "AddBackward0"),
    (lambda x, m: x - 1, "SubBackward0"),
    (lambda x, m: 1 - x, "RsubBackward1"),
    (lambda x, m: x / 2, "DivBackward0"),
    (lambda x, m: x ** 2, "PowBackward0"),
    (lambda x, m: x ** x, "PowBackward1"),
    (lambda x, m: 2 ** x, "PowBackward2"),
    (lambda x, m: -x, "NegBackward0"),
    (lambda x, m: x.sum(), "SumBackward0"),
    (lambda x, m: m.sum(0), "SumBackward1"),
    (lambda x, m: x.mean(), "MeanBackward0"),
    (lambda x, m: m.mean(0), "MeanBackward1"),
    (lambda x, m: m @ m, "MmBackward0"),
    (lambda x, m: m @ x, "MvBackward0"),
    (lambda x, m: x @ x, "DotBackward0"),
    (lambda x, m: m.T, "PermuteBackward0"),
    (lambda x, m: m.transpose(0, 1), "TransposeBackward0"),
    (lambda x, m: m.reshape(4), "ViewBackward0"),
    (lambda x, m: x.tanh(), "TanhBackward0"),
    (lambda x, m: np.tanh(x), "TanhBackward0"),
    (lambda x, m: np.exp(x), "ExpBackward0"),
    (lambda x, m: x.log(), "LogBackward0"),
    (lambda x, m: x.sqrt(), "SqrtBackward0"),
    (lambda x, m: x.abs(), "AbsBackward0"),
    (lambda x, m: x.relu(), "ReluBackward0"),
    (lambda x, m: x.sigmoid(), "SigmoidBackward0"),
    (lambda x, m: np.maximum(x, x), "MaximumBackward0"),
    (lambda x, m: x.clamp(0, 1), "ClampBackward1"),
    (lambda x, m: x.clone(), "CloneBackward0"),
    (lambda x, m: np.max(x), "MaxBackward1"),
    (lambda x, m: np.max(m, axis=0), "MaxBackward0"),
    (lambda x, m: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x, m: x.square(), "PowBackward0"),
    (lambda x, m: x.dot(x), "DotBackward0"),
    (lambda x, m: x[0], "SelectBackward0"),
    (lambda x, m: m[:, 0], "SelectBackward0"),
    (lambda x, m: x[0:1], "SliceBackward0"),
    (lambda x, m: x[[0, 1]], "IndexBackward0"),
])
def test_node_names_mimic_torch(expression, expected: str) -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    m = tensor(np.ones((2, 2)), requires_grad=True)
    node = expression(x, m).grad_fn
    assert node.name == expected
    assert repr(node).startswith(f"<{expected} object at 0x")


def test_a_node_shows_the_generated_backward_source() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    node = np.tanh(x).grad_fn
    assert node.source.startswith("def tanh_backward(saved, out_bar):")
    assert "adjoint of: return np.tanh(x0)" in node.source


def test_eager_ops_are_generated_functions_with_readable_source() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    function = ops._operator("mul")
    assert inspect.getsource(function.fn) == "def mul(x, y):\n    return x * y\n"
    assert function.fn.__code__.co_filename == sourcefile.FILENAME
    assert sourcefile.FILENAME in linecache.cache
    assert y.grad_fn.compiled.fn is function.fn


def test_eager_ops_are_cached() -> None:
    x = tensor([[1.0, 2.0]], requires_grad=True)
    first = np.sum(x, axis=0).grad_fn.compiled
    again = np.sum(x, axis=0).grad_fn.compiled
    assert first is again
    assert np.sum(x, axis=1).grad_fn.compiled is not first  # another layout, another function
    assert (x * 2).grad_fn.compiled is (x * 5).grad_fn.compiled  # constants are arguments


def test_nothing_is_recorded_without_grad() -> None:
    x = tensor([1.0, 2.0])
    y = np.tanh(x) * 2 + 1
    assert isinstance(y, Tensor) and y.grad_fn is None and not y.requires_grad
    r = tensor([1.0, 2.0], requires_grad=True)
    with no_grad():
        z = (r * 2).sum()
    assert z.grad_fn is None and not z.requires_grad and z.is_leaf


def test_integer_results_do_not_require_grad() -> None:
    x = tensor([1.0, 3.0, 2.0], requires_grad=True)
    i = np.argmax(x)
    assert isinstance(i, Tensor) and i.item() == 1 and not i.requires_grad
    assert np.shape(x) == (3,) and np.ndim(x) == 1  # queries return plain values
    assert np.allclose(x, x) is True
    f = np.floor(x * 1.5)
    assert not f.requires_grad


def test_function_without_a_rule_is_a_clear_error() -> None:
    x = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TransformError, match="no derivative rule for numpy.copysign"):
        np.copysign(x, -1.0)
    assert np.copysign(x.detach(), -1.0).shape == (2,)  # fine when nothing needs a gradient


def test_ufunc_methods() -> None:
    x = tensor([1.0, 2.0])
    assert np.add.reduce(x).item() == 3.0
    r = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="np.add.reduce is not differentiable on Tensors"):
        np.add.reduce(r)


def test_ufunc_out_argument() -> None:
    x = tensor([1.0, 2.0])
    np.multiply(x, 2.0, out=x)
    assert x.tolist() == [2.0, 4.0] and x._version.value == 1
    buffer = np.zeros(2)
    np.add(x, 1.0, out=buffer)
    assert buffer.tolist() == [3.0, 5.0]
    r = tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="would drop the gradient"):
        np.add(r, 1.0, out=buffer)


def test_unsupported_operand_types_are_left_to_python() -> None:
    x = tensor([1.0])
    with pytest.raises(TypeError):
        x + "a"
    assert (x + [1.0]).tolist() == [2.0]  # lists are arrays, as in NumPy


def test_concatenate_and_stack() -> None:
    check_backward(lambda a, b: np.concatenate([a, b]) * np.stack([b, a]).sum(0).sum(), V, W)


def test_ops_survive_a_cleared_linecache() -> None:
    x = tensor(np.ones((2, 2, 2)), requires_grad=True)
    linecache.clearcache()
    y = np.sum(x, axis=(0, 2))  # a new layout: compiled now, reading its source again
    y.sum().backward()
    assert x.grad.tolist() == np.ones((2, 2, 2)).tolist()
    assert sourcefile.FILENAME in linecache.cache


def test_relu_and_sigmoid_at_their_edges() -> None:
    x = tensor([-1.0, 0.0, 2.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]  # PyTorch's convention at 0
    big = tensor([-800.0, 0.0, 800.0], requires_grad=True)
    # no overflow, no nan; e**-800 underflows to 0, which is its value in float64
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        s = big.sigmoid()
        s.sum().backward()
    assert s.tolist() == [0.0, 0.5, 1.0]
    assert big.grad.tolist() == [0.0, 0.25, 0.0]  # s (1 - s)
