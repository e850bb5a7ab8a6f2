"""Tensor's one-operation methods are rows of a table (s2sgrad/autograd/methods.py): each row
is a method of Tensor, written from the row, none is also written by hand in the class or in
its bases (which the row would hide), and each computes what NumPy (or PyTorch's operator)
computes, gradient included."""

import ast
import inspect
import pathlib

import numpy as np
import pytest

import s2sgrad
from s2sgrad.autograd import methods, tensor


def _hand_written() -> set[str]:
    """The names defined in the bodies of Tensor and of its bases, read from their source."""
    names: set[str] = set()
    for cls in s2sgrad.Tensor.__mro__[:-1]:  # all but object
        tree = ast.parse(pathlib.Path(inspect.getfile(cls)).read_text())
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef)
                    and n.name == cls.__name__).body
        names |= {n.name for n in body if isinstance(n, ast.FunctionDef)} | {
            t.id for n in body if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Name)}
    return names


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


def test_the_bases_hold_no_state_and_read_what_tensor_py_binds_in_them():
    bases = s2sgrad.Tensor.__bases__
    assert {cls.__module__ for cls in bases} == {module.__name__ for module in tensor._BASES}
    assert all(vars(cls)["__slots__"] == () for cls in bases)
    assert not hasattr(s2sgrad.tensor(1.0), "__dict__")
    for module in tensor._BASES:
        for name in ("_ops", "Tensor", "_make", "_leaf"):
            if name in vars(module):
                assert vars(module)[name] is vars(tensor)[name], (module.__name__, name)


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
