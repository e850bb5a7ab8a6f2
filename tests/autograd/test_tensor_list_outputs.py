"""NumPy functions that return a list of arrays (np.split and its kin), called on Tensors:
a list of Tensors, as NumPy gives a list of arrays, each piece differentiable, with or without
grad. (A list result was once stacked into one Tensor.)"""

from __future__ import annotations

import numpy as np
import pytest

from s2sgrad.autograd.grad_mode import no_grad
from s2sgrad.autograd.tensor import Tensor, tensor
from tests.autograd.test_tensor_fd import check_backward

RNG = np.random.default_rng(0)
A1 = RNG.standard_normal(7)
A2 = RNG.standard_normal((4, 6))

SPLITS = {
    "split_equal": (lambda x: np.split(x, 3, axis=1), A2),
    "split_sections": (lambda x: np.split(x, [1, 4]), A1),
    "array_split": (lambda x: np.array_split(x, 3), A1),
    "hsplit": (lambda x: np.hsplit(x, 2), A2),
    "vsplit": (lambda x: np.vsplit(x, [1]), A2),
}


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_pieces_are_a_list_of_tensors_with_numpys_values(name):
    split, a = SPLITS[name]
    want = split(a)
    for requires_grad in (False, True):
        pieces = split(tensor(a, requires_grad=requires_grad))
        assert type(pieces) is list and len(pieces) == len(want)
        for got, expected in zip(pieces, want, strict=True):
            assert isinstance(got, Tensor) and got.requires_grad == requires_grad
            np.testing.assert_array_equal(got.numpy() if not requires_grad else
                                          got.detach().numpy(), expected)


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_each_piece_is_differentiated(name):
    split, a = SPLITS[name]
    weights = [RNG.standard_normal(p.shape) for p in split(a)]

    def combined(x):
        pieces = split(x)  # every piece used, each differently
        total = 0.0
        for k, (p, w) in enumerate(zip(pieces, weights, strict=True)):
            total = total + np.sum(np.sin(p * (k + 1)) * w)
        return total

    check_backward(combined, a)


def test_unpacked_pieces_under_no_grad_and_after():
    x = tensor(A1, requires_grad=True)
    with no_grad():
        first, rest = np.split(x, [2])
    assert not first.requires_grad and first.shape == (2,)
    head, tail = np.split(x, [3])
    (np.sum(head ** 2) + np.sum(tail)).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.r_[2 * A1[:3], np.ones(4)])
