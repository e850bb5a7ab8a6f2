"""Views and in-place changes: the right gradient or PyTorch's error, never a silent number.

A view (``y[1:]``, ``y[0]``, ``y.T``, ``y.reshape(...)``, ``y.unsqueeze(0)``...) shares its
base's memory and version counter, as in PyTorch. The families:

- A. A recorded in-place change through a view (each operator and method, every kind of view,
  chained views) rewrites the base's history: the base's later uses see the write.
- B. A view whose base was changed in place after the view was made takes its history again
  from the base's before its next use.
- C. The same inside loops, through ``@grad`` functions (a view passed to one, a view returned
  by one) and with ``no_grad`` around the write.
- D. What PyTorch refuses is refused with PyTorch's words: an in-place change of a view of a
  leaf that requires grad, a view made in ``no_grad`` mode changed (or its base changed) with
  grad mode on, a saved value changed through a view, ``detach_()`` of a view.
- E. A ``@grad`` function given a Tensor inside a dict argument refuses it as it refuses one
  inside a list.

Each program runs on s2sgrad's Tensors; its gradient is compared with central finite
differences of the same program on Tensors that do not require grad, and, when torch is
installed, its value and gradient with torch's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import s2sgrad as sg

try:
    import torch
except ImportError:  # the comparisons with torch are skipped
    torch = None


class Lib:
    """What a program needs from its Tensor library: make a tensor, no_grad, @grad."""

    def __init__(self, name: str, tensor: Callable, no_grad: Callable, grad: Callable) -> None:
        self.name, self.tensor, self.no_grad, self.grad = name, tensor, no_grad, grad


SG = Lib("s2sgrad", lambda a, requires_grad=False: sg.tensor(a, requires_grad=requires_grad),
         sg.no_grad, sg.grad)
TORCH = None if torch is None else Lib(
    "torch",
    lambda a, requires_grad=False: torch.tensor(a, dtype=torch.float64,
                                                requires_grad=requires_grad),
    torch.no_grad, lambda f: f)

START = {
    (2,): np.array([1.0, 2.0]),
    (3,): np.array([1.0, 2.0, 3.0]),
    (4,): np.array([0.5, -1.5, 2.0, 1.25]),
    (2, 3): np.array([[1.0, -2.0, 0.5], [1.5, 0.75, -1.0]]),
    (1, 3): np.array([[1.0, -2.0, 0.5]]),
    (2, 3, 2): np.linspace(-1.0, 1.5, 12).reshape(2, 3, 2),
}

CASES: dict[str, tuple[tuple[int, ...], Callable, list | None]] = {}


def case(shape: tuple[int, ...], expected: list | None = None) -> Callable:
    """Register a program of one Tensor of ``shape``. A change made under ``no_grad`` is not
    differentiated (PyTorch's meaning), so finite differences do not apply to such programs:
    they give the ``expected`` gradient instead, PyTorch's."""
    def register(f: Callable) -> Callable:
        assert f.__name__ not in CASES
        CASES[f.__name__] = (shape, f, expected)
        return f
    return register


# -- A. writes through a view, read through the base -------------------------------------------

@case((2,))
def slice_imul_read_base(L: Lib, w: Any) -> Any:
    y = w * 1
    z = y[0:1]
    z *= 3
    return y.sum() + (y * y).sum()


@case((3,))
def slice_setitem_constant(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    v[0] = 10.0
    return (y * y).sum()


@case((3,))
def slice_setitem_from_the_leaf(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    v[0] = w[0] * 5
    return (y * y).sum() + (v * w[1:]).sum()


@case((3,))
def slice_iadd_other_slice(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    v += w[:2]
    return (y * y).sum()


@case((3,))
def slice_isub_itruediv(L: Lib, w: Any) -> Any:
    y = w * 2
    v = y[1:]
    v -= w[:2] * w[:2]
    v /= w[1:] + 4.0
    return (y * y * y).sum()


@case((3,))
def slice_ipow(L: Lib, w: Any) -> Any:
    y = w * w + 1.0
    v = y[:2]
    v **= 1.5
    return (y * w).sum()


@case((3,))
def slice_zero_(L: Lib, w: Any) -> Any:
    y = w * 3
    y[1:].zero_()
    return (y * y).sum() + y[0] * w[2]


@case((3,))
def slice_mul_(L: Lib, w: Any) -> Any:
    y = w * 1
    y[1:].mul_(w[:2])
    return (y * y).sum()


@case((3,))
def slice_add_and_sub_with_alpha(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[:2]
    v.add_(w[1:], alpha=2.0)
    v.sub_(w[1:] * w[1:], alpha=0.5)
    return (y * y).sum()


@case((3,))
def slice_copy_(L: Lib, w: Any) -> Any:
    y = w * 1
    y[1:].copy_(w[:2] * w[:2])
    return (y * y).sum()


@case((3,))
def slice_fill_(L: Lib, w: Any) -> Any:
    y = w * w
    y[:2].fill_(2.0)
    return (y * w).sum()


@case((3,))
def element_then_imul(L: Lib, w: Any) -> Any:
    y = w * 1
    z = y[0]
    z *= 3
    return (y * y).sum() + z * w[1]


@case((4,))
def chained_slices(L: Lib, w: Any) -> Any:
    y = w * 1
    u = y[1:][1:]
    u *= w[0]
    v = y[1:3][1:]
    v[0] = w[3] * w[3]
    return (y * y).sum() + (u * w[2:]).sum()


@case((2, 3))
def reshape_view(L: Lib, w: Any) -> Any:
    y = w * 1
    r = y.reshape(6)
    r[2:4] *= 3
    return (y * y).sum()


@case((2, 3))
def view_method(L: Lib, w: Any) -> Any:
    y = w * 1
    r = y.view(3, 2)
    r[1] = w[0, :2] * 4
    return (y * y).sum()


@case((2, 3))
def flatten_view(L: Lib, w: Any) -> Any:
    y = w * 1
    f = y.flatten()
    f.mul_(w.flatten())
    return (y * y).sum()


@case((2, 3))
def unsqueeze_view(L: Lib, w: Any) -> Any:
    y = w * 1
    u = y.unsqueeze(0)
    u[0, 1] = w[0] * 2
    return (y * y).sum()


@case((1, 3))
def squeeze_view(L: Lib, w: Any) -> Any:
    y = w * 1
    s = y.squeeze(0)
    s *= w[0] + 1
    return (y * y).sum()


@case((2, 3))
def transpose_view(L: Lib, w: Any) -> Any:
    y = w * 1
    t = y.transpose(0, 1)
    t[0] *= w[:, 2]
    return (y * y).sum()


@case((2, 3, 2))
def permute_view(L: Lib, w: Any) -> Any:
    y = w * 1
    p = y.permute(2, 0, 1)
    p[1] = w[:, :, 0] * 3
    return (y * y).sum()


@case((2, 3))
def dot_T_view(L: Lib, w: Any) -> Any:
    y = w * 1
    t = y.T
    t[1, 0] = w[0, 0] ** 2
    t[2] += w[:, 0]
    return (y * y).sum()


@case((2, 3))
def row_then_imul(L: Lib, w: Any) -> Any:
    y = w * 1
    r = y[0]
    r *= w[1]
    return (y * y).sum() + (r * w[0]).sum()


@case((2, 3))
def column_of_a_reshape_then_copy_(L: Lib, w: Any) -> Any:
    y = w * 1
    c = y.reshape(3, 2)[:, 1]
    c.copy_(w[1] * w[0])
    return (y * y).sum()


@case((4,))
def views_of_a_0d_base(L: Lib, w: Any) -> Any:
    s = w[0] * 1
    v = s.reshape(1)
    v *= w[1]
    u = s.reshape(1, 1)
    total = s + w[2] + (u + w[3]).sum()
    s.mul_(w[3])
    return total + (v * v).sum() + (u * w[1]).sum()


@case((3,))
def buffer_without_grad_written_through_a_view(L: Lib, w: Any) -> Any:
    b = L.tensor(np.zeros(3))
    v = b[1:]
    v += w[:2] * w[1:]
    return (b * b).sum() + (v * w[1:]).sum()


# -- B. writes to the base, read through an older view ------------------------------------------

@case((3,))
def base_setitem_read_view(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    y[1] = 10.0
    return (v * v).sum()


@case((3,))
def base_imul_read_view(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    y *= w
    return (v * v).sum()


@case((2, 3))
def base_mul_read_transpose(L: Lib, w: Any) -> Any:
    y = w * 1
    t = y.T
    y.mul_(w)
    return (t * t).sum() + (t[0] * w[:, 1]).sum()


@case((3,))
def base_zero_then_refill(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    y.zero_()
    y += w * w
    return (v * v).sum() + y[0] * v[1]


@case((4,))
def overlapping_views(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    u = y[:3]
    u *= 3
    v[1] = u[0] + w[3]  # u[0] * w[3] would save u[0], which the write changes: refused
    return (v * v).sum() + (u * u).sum() + (y * w).sum()


@case((3,))
def view_of_a_view_read_after_the_base_changed(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    e = v[1]
    y.copy_(w * w)
    return e * e + v.sum()


@case((3,))
def view_read_as_the_root_of_backward(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[2]
    y *= w
    return v


# -- C. loops, @grad functions, no_grad ---------------------------------------------------------

@case((3,))
def loop_of_writes_through_slices(L: Lib, w: Any) -> Any:
    y = w * 1
    for i in range(3):
        r = y[i:i + 1]
        r *= w[i] + 1
    return (y * y).sum()


@case((4,))
def loop_of_setitems_reading_elements(L: Lib, w: Any) -> Any:
    y = w * 1
    for i in range(3):
        y[i + 1] = y[i] * 2 + w[i + 1]
    return (y * y).sum()


@case((2, 3))
def loop_over_rows_kept_in_a_list(L: Lib, w: Any) -> Any:
    y = w * 1
    rows = [y[i] for i in range(2)]
    for k, r in enumerate(rows):
        r *= w[1 - k]
    return sum((r * r).sum() for r in rows) + (y * w).sum()


@case((3,))
def stale_view_passed_to_a_grad_function(L: Lib, w: Any) -> Any:
    @L.grad
    def energy(a):
        return (a * a * a).sum()

    y = w * 1
    v = y[1:]
    y[1] = w[0] * 5
    return energy(v)


@case((3,))
def write_through_a_view_returned_by_a_grad_function(L: Lib, w: Any) -> Any:
    @L.grad
    def tail(a):
        return a[1:]

    y = w * 2
    t = tail(y)
    t *= w[:2]
    return (y * y).sum() + (t * w[1:]).sum()


@case((3,), expected=[2.0, 20.0, 30.0])
def no_grad_write_through_a_view(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    with L.no_grad():
        v *= 3
    return (y * y).sum() + (v * w[1:]).sum()


@case((3,), expected=[0.0, 20.0, 6.0])
def no_grad_write_to_the_base_read_view(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    with L.no_grad():
        y[1] = 10.0
    return (v * v).sum()


@case((3,), expected=[0.0, 8.0, 12.0])
def leaf_changed_in_no_grad_read_older_view(L: Lib, w: Any) -> Any:
    v = w[1:]
    with L.no_grad():
        w.mul_(2)
    return (v * v).sum()


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_through_views(name: str) -> None:
    shape, program, expected = CASES[name]
    x = START[shape]
    w = SG.tensor(x, requires_grad=True)
    loss = program(SG, w)
    loss.backward()
    assert w.grad is not None

    def value(a: np.ndarray) -> float:
        return float(program(SG, SG.tensor(a)).item())

    assert float(loss.item()) == pytest.approx(value(x), rel=1e-12)
    if expected is None:
        expected = sg.testing.numeric_gradient(value, [x], 0)
    np.testing.assert_allclose(w.grad.data, expected, rtol=1e-6, atol=1e-6)
    if TORCH is None:
        return
    tw = TORCH.tensor(x, requires_grad=True)
    tloss = program(TORCH, tw)
    tloss.backward()
    assert float(loss.item()) == pytest.approx(float(tloss.item()), rel=1e-12)
    np.testing.assert_allclose(w.grad.data, tw.grad.numpy(), rtol=1e-10, atol=1e-12)


# -- D. refused, with PyTorch's words -----------------------------------------------------------

LEAF_VIEW = "a view of a leaf Variable that requires grad is being used in an in-place operation"
NOGRAD_WRITE = "A view was created in no_grad mode and is being modified inplace with grad mode"
NOGRAD_STALE = "A view was created in no_grad mode and its base or another view of its base"
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace"


def leaf_slice_imul(L: Lib, w: Any) -> Any:
    v = w[1:]
    v *= 2


def leaf_slice_setitem(L: Lib, w: Any) -> Any:
    v = w[1:]
    v[0] = 1.0


def leaf_element_zero_(L: Lib, w: Any) -> Any:
    w[0].zero_()


def leaf_reshape_fill_(L: Lib, w: Any) -> Any:
    w.reshape(3, 1).fill_(1.0)


def leaf_unsqueeze_copy_(L: Lib, w: Any) -> Any:
    w.unsqueeze(1).copy_(w.unsqueeze(1) * 2)


def no_grad_view_written_with_grad(L: Lib, w: Any) -> Any:
    y = w * 1
    with L.no_grad():
        v = y[1:]
    v *= w[1:]


def no_grad_view_of_a_buffer_written_with_grad(L: Lib, w: Any) -> Any:
    b = L.tensor(np.zeros(3))
    with L.no_grad():
        v = b[1:]
    v += w[1:]


def no_grad_view_used_after_its_base_was_written(L: Lib, w: Any) -> Any:
    y = w * 1
    with L.no_grad():
        v = y[1:]
    y[1] = w[0] * 10
    return (v * v).sum().backward()


def saved_base_changed_through_a_view(L: Lib, w: Any) -> Any:
    y = w * 1
    loss = (y * y).sum()
    v = y[1:]
    v *= 3
    loss.backward()


def saved_view_changed_through_the_base(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    loss = (v * v).sum()
    y[2] = 0.0
    loss.backward()


def saved_element_changed_through_an_overlapping_view(L: Lib, w: Any) -> Any:
    y = w * 1
    v = y[1:]
    u = y[:2]
    prod = u[1] * w[2]  # saves u[1], which is v[0]
    v[0] = 4.0
    prod.backward()


def saved_base_changed_through_a_view_in_no_grad(L: Lib, w: Any) -> Any:
    y = w * 1
    loss = (y * y).sum()
    with L.no_grad():
        y.reshape(3, 1)[0] = 5.0
    loss.backward()


REFUSED = {
    leaf_slice_imul: LEAF_VIEW,
    leaf_slice_setitem: LEAF_VIEW,
    leaf_element_zero_: LEAF_VIEW,
    leaf_reshape_fill_: LEAF_VIEW,
    leaf_unsqueeze_copy_: LEAF_VIEW,
    no_grad_view_written_with_grad: NOGRAD_WRITE,
    no_grad_view_of_a_buffer_written_with_grad: NOGRAD_WRITE,
    no_grad_view_used_after_its_base_was_written: NOGRAD_STALE,
    saved_base_changed_through_a_view: MODIFIED,
    saved_view_changed_through_the_base: MODIFIED,
    saved_element_changed_through_an_overlapping_view: MODIFIED,
    saved_base_changed_through_a_view_in_no_grad: MODIFIED,
}


@pytest.mark.parametrize("program", list(REFUSED), ids=lambda f: f.__name__)
def test_refused_as_pytorch_refuses(program: Callable) -> None:
    x = START[(3,)]
    with pytest.raises(RuntimeError, match=REFUSED[program]):
        program(SG, SG.tensor(x, requires_grad=True))
    if TORCH is not None:
        with pytest.raises(RuntimeError, match=REFUSED[program]):
            program(TORCH, TORCH.tensor(x, requires_grad=True))


def test_views_share_version_and_know_their_base() -> None:
    w = sg.tensor(START[(2, 3)], requires_grad=True)
    y = w * 1
    for view in (y[0], y[:, 1:], y.T, y.reshape(6), y.unsqueeze(0), y.reshape(6)[2:][::2],
                 y[1, 2]):
        assert view._base is y and view._version is y._version
    assert np.shares_memory(y[1, 2].data, y.data)  # an element is a 0-d view, as in PyTorch
    assert y.detach()._base is None and y.detach()._version is y._version
    assert (y + 1)._base is None and y.clone()._base is None


def test_a_write_through_a_view_names_copyslices() -> None:
    w = sg.tensor(START[(3,)], requires_grad=True)
    y = w * 1
    v = y[1:]
    v *= 2
    assert y.grad_fn.name == "CopySlices" and v.grad_fn.name == "AsStridedBackward0"
    assert y._version.value == v._version.value == 1


def test_detach_in_place_of_a_view_is_refused() -> None:
    y = sg.tensor(START[(3,)], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach"):
        y[1:].detach_()
    if TORCH is not None:
        ty = TORCH.tensor(START[(3,)], requires_grad=True) * 1
        with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach"):
            ty[1:].detach_()


def test_views_of_plain_tensors_stay_plain() -> None:
    b = sg.tensor(START[(2, 3)])
    r = b.T
    r[0] = 7.0
    r *= 2
    assert b.tolist() == [[14.0, -4.0, 1.0], [14.0, 1.5, -2.0]]
    assert not b.requires_grad and not r.requires_grad and b._version.value == 2


def test_a_view_whose_base_data_was_replaced_is_no_longer_a_view() -> None:
    w = sg.tensor(START[(3,)], requires_grad=True)
    y = w * 1
    v = y[1:]
    y.data = np.zeros(3)
    y *= w  # changes y's history; v no longer shares its memory
    (v * v).sum().backward()
    np.testing.assert_allclose(w.grad.data, [0.0, 4.0, 6.0])
    assert v._base is None
    u = y[:2]
    u.data = np.ones(2)
    u *= w[1:]  # u's own memory now: y keeps its value and history
    assert y.tolist() == [0.0, 0.0, 0.0] and u.tolist() == [2.0, 3.0] and u._base is None


def test_a_view_made_in_no_grad_mode_prints_and_converts_after_its_base_changed() -> None:
    w = sg.tensor(START[(3,)], requires_grad=True)
    y = w * 1
    with sg.no_grad():
        v = y[1:]
    y[1] = w[0] * 10
    assert repr(v) == "tensor([10.,  3.])" and v.numpy().tolist() == [10.0, 3.0]
    with pytest.raises(RuntimeError, match=NOGRAD_STALE):
        v.requires_grad  # noqa: B018  (PyTorch refuses reading its history too)


def test_positions_in_a_non_contiguous_base() -> None:
    from s2sgrad.autograd.ops import positions_in

    base = np.arange(24.0).reshape(4, 6)[::-1, 1::2]  # not contiguous, negative stride
    view = base.T[1:, ::-2]
    expected = np.arange(base.size).reshape(base.shape).T[1:, ::-2]
    np.testing.assert_array_equal(positions_in(base, view), expected)
    assert positions_in(base, np.zeros(3)) is None
    assert positions_in(base, base.astype(np.float32)) is None


# -- E. Tensors inside container arguments of @grad functions -----------------------------------

@sg.grad
def scaled(x, params):
    return (x * params["w"]).sum()


@sg.grad
def scaled_by_first(x, params):
    return (x * params[0]).sum()


@pytest.mark.parametrize("requires_grad", [True, False])
def test_a_tensor_inside_a_dict_argument_is_refused_like_one_inside_a_list(
        requires_grad: bool) -> None:
    x = sg.tensor(START[(2,)], requires_grad=requires_grad)
    w = sg.tensor(START[(2,)], requires_grad=True)
    with pytest.raises(TypeError, match="a Tensor inside a dict argument cannot be "
                                        "differentiated; pass each Tensor as its own argument"):
        scaled(x, {"w": w})
    with pytest.raises(TypeError, match="a Tensor inside a list or tuple argument cannot be "
                                        "differentiated; pass each Tensor as its own argument"):
        scaled_by_first(x, [w])
    with pytest.raises(TypeError, match="inside a dict argument"):
        scaled(x, {"w": [w]})  # at any depth
    assert scaled(x, {"w": START[(2,)]}).item() == pytest.approx(5.0)  # arrays are fine
