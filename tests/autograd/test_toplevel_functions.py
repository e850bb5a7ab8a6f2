"""PyTorch's top-level functions (``torch.exp(t)``, ``torch.sum(t, dim=0)``, ``torch.max(t,
1)``, ``torch.where(c, a, b)``) as s2sgrad's: the same values and the same gradients as torch
(float64), for Tensors, arrays and numbers as input; the names that are Python's builtins
are offered on demand and kept out of ``from s2sgrad import *``."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.autograd import toplevel

A = np.array([[0.1, -0.5, 2.0], [1.0, 0.3, -0.2]])
B = np.array([[0.4, 0.2, -1.0], [-0.3, 0.8, 0.5]])

CASES = [  # name, arguments after the input, keyword arguments
    ("exp", (), {}), ("log1p", (), {}), ("tanh", (), {}), ("sigmoid", (), {}),
    ("relu", (), {}), ("sqrt", (), {}), ("abs", (), {}), ("neg", (), {}),
    ("sum", (), {}), ("sum", (1,), {}), ("sum", (), {"dim": 0, "keepdim": True}),
    ("mean", (0,), {}), ("prod", (1,), {}), ("std", (1,), {}), ("var", (0,), {}),
    ("amax", (1,), {}), ("logsumexp", (1,), {}), ("softmax", (1,), {}),
    ("log_softmax", (0,), {}), ("cumsum", (1,), {}), ("clamp", (-0.1, 0.5), {}),
    ("pow", (3,), {}), ("transpose", (0, 1), {}), ("flatten", (), {}),
    ("norm", (), {}), ("max", (), {}), ("min", (), {}),
]


def _value(out):
    return out.values if isinstance(out, tuple) else out  # (values, indices) along a dim


@pytest.mark.parametrize("name, args, kwargs", CASES,
                         ids=[f"{c[0]}{c[1]}{c[2]}" for c in CASES])
def test_like_torchs_values_and_gradients(name, args, kwargs, torch64):
    x = np.abs(A) + 0.1 if name in ("sqrt", "log1p") else A
    ours_in = s2sgrad.tensor(x, requires_grad=True)
    theirs_in = torch64.tensor(x, requires_grad=True)
    ours = _value(getattr(s2sgrad, name)(ours_in, *args, **kwargs))
    theirs = _value(getattr(torch64, name)(theirs_in, *args, **kwargs))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    weights = np.random.default_rng(0).normal(size=np.shape(theirs.detach().numpy()))
    (ours * s2sgrad.tensor(weights)).sum().backward()
    (theirs * torch64.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_along_a_dim_and_elementwise(name, torch64):
    ours = getattr(s2sgrad, name)(s2sgrad.tensor(A), 1)
    theirs = getattr(torch64, name)(torch64.tensor(A), 1)
    np.testing.assert_allclose(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    a, b = s2sgrad.tensor(A, requires_grad=True), s2sgrad.tensor(B, requires_grad=True)
    ta, tb = torch64.tensor(A, requires_grad=True), torch64.tensor(B, requires_grad=True)
    getattr(s2sgrad, name)(a, b).sum().backward()
    getattr(torch64, name)(ta, tb).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy())


def test_where_and_matmul_like_torchs(torch64):
    a, b = s2sgrad.tensor(A, requires_grad=True), s2sgrad.tensor(B, requires_grad=True)
    ta, tb = torch64.tensor(A, requires_grad=True), torch64.tensor(B, requires_grad=True)
    ours = s2sgrad.where(a > 0, a, b).sum() + s2sgrad.matmul(a, b.T).sum()
    theirs = torch64.where(ta > 0, ta, tb).sum() + torch64.matmul(ta, tb.T).sum()
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)
    ours.backward()
    theirs.backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-12)


def test_arrays_and_numbers_are_taken_as_tensors():
    out = s2sgrad.exp(A)
    assert isinstance(out, s2sgrad.Tensor)
    np.testing.assert_allclose(out.numpy(), np.exp(A))
    assert s2sgrad.sum(A, 0).shape == (3,)


def test_builtin_names_are_offered_on_demand_and_not_exported():
    namespace: dict = {}
    exec("from s2sgrad import *", namespace)
    for name in toplevel.SHADOWING:
        assert callable(getattr(s2sgrad, name))
        assert name not in s2sgrad.__all__ and name not in namespace
    assert s2sgrad.exp is toplevel.FUNCTIONS["exp"] and "exp" in dir(s2sgrad)
    assert "sum" in dir(s2sgrad) and s2sgrad.sum is toplevel.FUNCTIONS["sum"]


def test_no_top_level_function_hides_a_name_the_package_had():
    import ast
    import pathlib

    source = pathlib.Path(s2sgrad.__file__).read_text()
    imported = {a.asname or a.name for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ImportFrom) for a in node.names}
    assert not set(toplevel.FUNCTIONS) & imported
