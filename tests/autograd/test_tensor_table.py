"""Tensor's one-operation methods are rows of a table (s2sgrad/autograd/methods.py): each row
is a method of Tensor, written from the row, none is also written by hand in the class, and
each computes what NumPy (or PyTorch's operator) computes, gradient included."""

import ast
import pathlib

import numpy as np
import pytest

import s2sgrad
from s2sgrad.autograd import methods, tensor

TENSOR_FILE = pathlib.Path(tensor.__file__)


def _hand_written() -> set[str]:
    tree = ast.parse(TENSOR_FILE.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    return {n.name for n in cls.body if isinstance(n, ast.FunctionDef)} | {
        t.id for n in cls.body if isinstance(n, ast.Assign) for t in n.targets
        if isinstance(t, ast.Name)}


def test_each_row_is_a_method_written_from_it_and_only_there():
    assert not set(methods.METHODS) & _hand_written()
    assert not set(methods.ALIASES) & _hand_written()
    written = methods.source()
    for name in methods.METHODS:
        method = getattr(s2sgrad.Tensor, name)
        assert method.__qualname__ == f"Tensor.{name}"
        assert method.__code__.co_filename == methods.FILENAME
        line = written.splitlines()[method.__code__.co_firstlineno - 1]
        assert line.startswith(f"def {name}(")
    for alias, name in methods.ALIASES.items():
        assert getattr(s2sgrad.Tensor, alias) is getattr(s2sgrad.Tensor, name)


UNARY = [name for name, (form, _) in methods.METHODS.items() if form in ("numpy", "unary")
         and not name.startswith("__")]


@pytest.mark.parametrize("name", UNARY)
def test_a_unary_row_computes_numpys_function_and_its_gradient(name):
    x = np.array([0.3, 0.55, 0.8])
    t = s2sgrad.tensor(x, requires_grad=True)
    out = getattr(t, name)()
    form, target = methods.METHODS[name]
    expected = getattr(np, target)(x) if form == "numpy" else {
        "neg": -x, "relu": np.maximum(x, 0), "sigmoid": 1 / (1 + np.exp(-x)),
        "rsqrt": 1 / np.sqrt(x)}[target]
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-14)
    out.sum().backward()
    h = 1e-6
    up, down = s2sgrad.tensor(x + h), s2sgrad.tensor(x - h)
    numeric = (getattr(up, name)().numpy() - getattr(down, name)().numpy()) / (2 * h)
    np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=1e-6, atol=1e-9)
