"""Higher order: the derivatives of derivatives users write, each checked numerically.

The functions are in tests/cases/higher.py. Every derivative here is compared with central
differences in float64 along random directions: of the function for a first derivative,
of an already checked first derivative for a second one (``difference``). The few expected
numbers written out are exact closed forms (d2/dx2 x^3 = 6x), and those are checked
against differences too.

- gradients of gradients, three deep, ``value_and_grad`` of a gradient, mixed partials;
- ``jvp`` of a gradient, ``hvp``, ``hessian`` (scalar and array inputs, several ``wrt``),
  ``jacobian`` / ``jacfwd`` / ``jacrev`` (agreeing with each other);
- a gradient called inside a differentiated function: made inline, a module global, an
  argument, read out of a dict or a list, in a loop, in a branch, of a decorated function,
  of a function with a helper, of one with a loop and an element write, of a ``@grad``
  Function, on arrays and on floats; checked in reverse and forward mode;
- a few steps of gradient descent differentiated with respect to the starting point and
  the step size (meta-learning), a gradient penalty, a Newton step;
- ``check_grads(order=2)``;
- what must stay refused (a vjp pullback called inside), at the user's line;
- PyTorch (``torch.func``) as an oracle, skipped without torch.

What is refused or wrong today although it should be right is a strict xfail whose reason
names the error (the constants under "known failures"); ``WRONG NUMBER`` in a reason marks
a defect rather than a refusal. Wrong numbers: a parameter named ``out_bar`` (reverse over
reverse), or ``grad_bar`` / ``value_bar`` (value_and_grad inside), collides with the
generated backward of higher.py's ``derivative_pair``. Crashes: forward mode of
``value_and_grad`` (TypeError), a parameter named ``grad_<function name>``. Refusals: the
second derivative in the step size alone of a loop through a helper (reported at line 0 of
generated code), a Jacobian of a Jacobian (reported in s2sgrad/api.py).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import TransformError
from s2sgrad.testing import check_grads
from tests.cases import higher as cases
from tests.located import assert_names_no_place_inside_s2sgrad, assert_points_at

rng = np.random.default_rng(20240611)
X = rng.standard_normal(4)
Y = rng.standard_normal(4)
U = rng.standard_normal(4)
DATA = rng.standard_normal((5, 4))
W = 0.5 * rng.standard_normal((3, 4))
A, B = 0.7, 1.3

STEP = 1e-5  # differences of derivatives: truncation ~1e-10, rounding ~1e-11
RTOL, ATOL = 1e-6, 1e-8


def random_like(value, seed: int | str):
    """A standard normal direction of value's shape (a float for a float)."""
    if isinstance(seed, str):
        seed = zlib.crc32(seed.encode())
    g = np.random.default_rng(seed)
    if isinstance(value, np.ndarray):
        return g.standard_normal(value.shape)
    return float(g.standard_normal())


def _moved(args, moves, t):
    out = list(args)
    for i, v in moves.items():
        out[i] = args[i] + t * v
    return out


def difference(fn, args, moves, step=STEP):
    """d/dt fn(*args moved by t * moves[i] in argument i) at t = 0, by a central
    difference: an array (of each item, for a tuple output)."""
    plus, minus = fn(*_moved(args, moves, step)), fn(*_moved(args, moves, -step))
    if isinstance(plus, tuple):
        return tuple((np.asarray(p) - np.asarray(m)) / (2 * step)
                     for p, m in zip(plus, minus, strict=True))
    return (np.asarray(plus) - np.asarray(minus)) / (2 * step)


def close(actual, expected, rtol=RTOL, atol=ATOL):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), actual
        for a, e in zip(actual, expected, strict=True):
            close(a, e, rtol, atol)
        return
    assert np.shape(actual) == np.shape(expected), (np.shape(actual), np.shape(expected))
    np.testing.assert_allclose(np.asarray(actual, float), np.asarray(expected, float),
                               rtol=rtol, atol=atol)


def along(jac, v, arg):
    """A Jacobian of shape out.shape + arg.shape applied to v (arg's shape)."""
    return np.tensordot(jac, v, axes=np.ndim(arg))


def xfail(reason, raises=None):
    return pytest.mark.xfail(strict=True, reason=reason, raises=raises)


# --- known failures (strict xfails) --------------------------------------------------------

JACOBIAN_OF_JACOBIAN = (
    "refused at the user's function: a jacobian/jacfwd/jacrev function is not a Derivative, "
    "so a Jacobian of it is not followed (s2sgrad.hessian is the Jacobian of a gradient)")
LOOP_HELPER_STEP = (
    "refused: \"'_tN[...]' is not indexing of an array (it is a object): what it computes is "
    "not differentiated\" at the user's def line (a node the compiler made in its "
    "tangent function has no line of its own): the second derivative in the step size alone (hvp with the iterate's tangent "
    "None) of a loop 'x = x - lr * helper(x)' whose iterate starts from an argument that "
    "does not move; with np.cos(x) in place of the helper call it is right. Not specific "
    "to gradients inside (a plain helper does it); found through check_grads(order=2, "
    "modes=('fwd',))")


# --- gradients of gradients -------------------------------------------------------------


@pytest.mark.parametrize("x", [-1.1, 0.3, 1.5])
def test_second_and_third_derivative_of_a_cube(x):
    d1 = s2sgrad.gradient(cases.cube)
    d2 = s2sgrad.gradient(d1)
    d3 = s2sgrad.gradient(d2)
    assert d2(x) == pytest.approx(6.0 * x, rel=1e-12)
    assert d3(x) == pytest.approx(6.0, rel=1e-12)
    close(d2(x), difference(d1, [x], {0: 1.0}))
    close(d3(x), difference(d2, [x], {0: 1.0}))


@pytest.mark.parametrize("x", [-0.8, 0.4, 1.7])
def test_three_deep(x):
    d1 = s2sgrad.gradient(cases.quartic_mix)
    d2 = s2sgrad.gradient(d1)
    d3 = s2sgrad.gradient(d2)
    close(d1(x), x ** 3 + np.cos(x), rtol=1e-12)
    close(d2(x), 3.0 * x ** 2 - np.sin(x), rtol=1e-12)
    close(d3(x), 6.0 * x - np.cos(x), rtol=1e-12)
    close(d1(x), difference(cases.quartic_mix, [x], {0: 1.0}))
    close(d2(x), difference(d1, [x], {0: 1.0}))
    close(d3(x), difference(d2, [x], {0: 1.0}))


def test_four_deep():
    d3 = s2sgrad.gradient(s2sgrad.gradient(s2sgrad.gradient(cases.quartic_mix)))
    d4 = s2sgrad.gradient(d3)
    close(d4(0.9), 6.0 + np.sin(0.9), rtol=1e-12)
    close(d4(0.9), difference(d3, [0.9], {0: 1.0}))


def test_value_and_grad_of_a_gradient():
    value, second = s2sgrad.value_and_grad(s2sgrad.gradient(cases.cube))(1.5)
    assert value == pytest.approx(3.0 * 1.5 ** 2, rel=1e-12)
    assert second == pytest.approx(6.0 * 1.5, rel=1e-12)
    d1 = s2sgrad.gradient(cases.quartic_mix)
    value, second = s2sgrad.value_and_grad(d1)(0.6)
    close(value, d1(0.6), rtol=1e-12)
    close(second, difference(d1, [0.6], {0: 1.0}))
    check_grads(d1, 0.6, modes=("rev", "fwd"))


def test_gradient_of_a_gradient_of_an_array_function():
    """<grad energy(x), u> differentiated in x: the Hessian applied to u."""
    hu = s2sgrad.gradient(cases.energy_gradient_along)(X, U)
    v = random_like(X, 1)
    close(np.dot(hu, v), np.dot(U, difference(cases.DENERGY, [X], {0: v})))
    close(hu, s2sgrad.hessian(cases.energy)(X) @ U)
    check_grads(cases.energy_gradient_along, X, U, wrt=[0], modes=("rev", "fwd"))


# --- mixed partials ---------------------------------------------------------------------


def test_mixed_partials_of_scalars_in_both_orders():
    a, b = A, B
    exact = 6.0 * a * b ** 2 + np.cos(a * b) - a * b * np.sin(a * b)
    ab = s2sgrad.gradient(s2sgrad.gradient(cases.coupled, wrt=1), wrt=0)(a, b)
    ba = s2sgrad.gradient(s2sgrad.gradient(cases.coupled, wrt=0), wrt=1)(a, b)
    assert ab == pytest.approx(exact, rel=1e-12)
    assert ba == pytest.approx(exact, rel=1e-12)
    close(ab, difference(s2sgrad.gradient(cases.coupled, wrt=1), [a, b], {0: 1.0}))
    close(ba, difference(s2sgrad.gradient(cases.coupled, wrt=0), [a, b], {1: 1.0}))
    # the pure second derivatives too
    aa = s2sgrad.gradient(s2sgrad.gradient(cases.coupled, wrt=0), wrt=0)(a, b)
    assert aa == pytest.approx(2.0 * b ** 3 - b ** 2 * np.sin(a * b), rel=1e-12)


def test_mixed_partials_of_arrays():
    """gradient(f, wrt=1) of a two-argument f, then its gradient wrt the other argument:
    the mixed block of the Hessian, in either order."""
    grad_x = s2sgrad.gradient(cases.mixed_along, wrt=0)(X, Y, U)  # H_yx^T u
    v = random_like(X, 2)
    close(np.dot(grad_x, v), np.dot(U, difference(cases.GRAD_PAIR_Y, [X, Y], {0: v})))
    blocks = s2sgrad.hessian(cases.pair_energy, wrt=(0, 1))(X, Y)
    close(grad_x, blocks[1][0].T @ U)
    close(blocks[0][1], blocks[1][0].T, rtol=1e-12, atol=1e-14)
    check_grads(cases.mixed_along, X, Y, U, wrt=[0, 1], modes=("rev", "fwd"))


# --- jvp of a gradient, hvp, hessian ----------------------------------------------------


def test_jvp_of_a_gradient_is_a_hessian_vector_product():
    v = random_like(X, 3)
    grad, hv = s2sgrad.jvp(s2sgrad.gradient(cases.energy), (X,), (v,))
    close(grad, cases.DENERGY(X), rtol=1e-12, atol=0)
    close(hv, difference(cases.DENERGY, [X], {0: v}))
    close(s2sgrad.hvp(cases.energy, (X,), (v,)), hv, rtol=1e-12, atol=1e-14)


def test_jvp_of_a_gradient_of_scalars():
    d_a = s2sgrad.gradient(cases.coupled, wrt=0)
    _, along_a = s2sgrad.jvp(d_a, (A, B), (1.0, None))
    _, along_b = s2sgrad.jvp(d_a, (A, B), (None, 1.0))
    close(along_a, difference(d_a, [A, B], {0: 1.0}))
    close(along_b, difference(d_a, [A, B], {1: 1.0}))
    assert isinstance(along_a, float) and isinstance(along_b, float)


def test_hvp_with_several_arguments_moving():
    v, w = random_like(X, 4), random_like(Y, 5)
    both = s2sgrad.hvp(cases.pair_energy, (X, Y), (v, w))
    close(both, difference(s2sgrad.gradient(cases.pair_energy, (0, 1)), [X, Y], {0: v, 1: w}))
    only_y = s2sgrad.hvp(cases.pair_energy, (X, Y), (None, w))
    close(only_y, difference(s2sgrad.gradient(cases.pair_energy, 1), [X, Y], {1: w}))


def test_hessian_of_an_array_function():
    h = s2sgrad.hessian(cases.energy)(X)
    assert h.shape == (4, 4)
    close(h, h.T, rtol=1e-12, atol=1e-14)
    for k in range(2):
        v = random_like(X, 10 + k)
        close(h @ v, difference(cases.DENERGY, [X], {0: v}))
        close(h @ v, s2sgrad.hvp(cases.energy, (X,), (v,)), rtol=1e-12, atol=1e-14)


def test_hessian_of_a_matrix_argument():
    h = s2sgrad.hessian(cases.loss, wrt=1)(X, DATA)
    assert h.shape == DATA.shape + DATA.shape
    v = random_like(DATA, 12)
    close(along(h, v, DATA), difference(s2sgrad.gradient(cases.loss, 1), [X, DATA], {1: v}))
    close(h.reshape(20, 20), h.reshape(20, 20).T, rtol=1e-10, atol=1e-14)


def test_hessian_of_scalars():
    h = s2sgrad.hessian(cases.coupled)(A, B)
    assert float(h) == pytest.approx(2.0 * B ** 3 - B ** 2 * np.sin(A * B), rel=1e-12)
    close(h, difference(s2sgrad.gradient(cases.coupled), [A, B], {0: 1.0}))
    blocks = s2sgrad.hessian(cases.coupled, wrt=(0, 1))(A, B)
    mixed = 6.0 * A * B ** 2 + np.cos(A * B) - A * B * np.sin(A * B)
    yy = 6.0 * A ** 2 * B - A ** 2 * np.sin(A * B)
    close(np.array(blocks, dtype=float), [[float(h), mixed], [mixed, yy]], rtol=1e-12)
    close(blocks[1][1], difference(s2sgrad.gradient(cases.coupled, 1), [A, B], {1: 1.0}))


def test_hessian_with_several_array_arguments():
    blocks = s2sgrad.hessian(cases.pair_energy, wrt=(0, 1))(X, Y)
    args = [X, Y]
    for i in range(2):
        for j in range(2):
            assert blocks[i][j].shape == (4, 4)
            v = random_like(args[j], 20 + 2 * i + j)
            close(blocks[i][j] @ v,
                  difference(s2sgrad.gradient(cases.pair_energy, i), args, {j: v}))
    close(blocks[0][1], blocks[1][0].T, rtol=1e-12, atol=1e-14)


# --- jacobian, jacfwd, jacrev -----------------------------------------------------------

JACOBIANS = [
    (cases.vector_field, (X,), 0),
    (cases.matrix_field, (X, W), 0),
    (cases.matrix_field, (X, W), 1),
    (cases.matrix_field, (X, W), (0, 1)),
    (cases.energy, (X,), 0),  # a scalar output: the gradient
    (cases.DENERGY, (X,), 0),  # a gradient: the Hessian
    (cases.coupled, (A, B), (0, 1)),  # floats
]


@pytest.mark.parametrize("fn, args, wrt", JACOBIANS,
                         ids=[f"{getattr(f, '__name__', 'f')}-{w}" for f, _, w in JACOBIANS])
def test_jacobians_agree_with_each_other_and_with_differences(fn, args, wrt):
    auto = s2sgrad.jacobian(fn, wrt)(*args)
    fwd = s2sgrad.jacfwd(fn, wrt)(*args)
    rev = s2sgrad.jacrev(fn, wrt)(*args)
    close(fwd, auto, rtol=1e-12, atol=1e-14)
    close(rev, auto, rtol=1e-12, atol=1e-14)
    positions = (wrt,) if isinstance(wrt, int) else wrt
    blocks = (auto,) if isinstance(wrt, int) else auto
    out = fn(*args)
    for k, (i, block) in enumerate(zip(positions, blocks, strict=True)):
        assert np.shape(block) == np.shape(out) + np.shape(args[i])
        v = random_like(args[i], 30 + k)
        close(along(block, v, args[i]), difference(fn, args, {i: v}))


def test_jacobian_of_a_jacobian_is_refused_at_the_user_s_function():
    """(JACOBIAN_OF_JACOBIAN) A Jacobian is not a Derivative; the Jacobian of a gradient is
    s2sgrad.hessian, checked above."""
    with pytest.raises(TransformError, match="hessian") as info:
        s2sgrad.jacfwd(s2sgrad.jacrev(cases.vector_field))(X)
    assert info.value.filename == cases.__file__  # the user's function, not s2sgrad


# --- a gradient called inside a differentiated function ---------------------------------

INSIDE = [
    ("inline, float", cases.uses_inline_gradient, (1.3,), None, None),
    ("module global", cases.uses_global_gradient, (X,), None, None),
    ("module global, float", cases.uses_global_gradient_float, (0.8,), None, None),
    ("argument", cases.uses_gradient_argument, (cases.DENERGY, X), [1], None),
    ("from a dict", cases.uses_gradient_from_dict, (X,), None, None),
    ("from a list", cases.uses_gradient_from_list, (X,), None, None),
    ("dict argument", cases.uses_gradient_from_dict_argument, (cases.GRADIENTS, X), [1], None),
    ("branch taken", cases.uses_gradient_in_branch, (np.abs(X) + 0.1,), None, None),
    ("branch not taken", cases.uses_gradient_in_branch, (-np.abs(X) - 0.1,), None, None),
    ("for loop", cases.uses_gradient_in_loop, (X, 3), [0], None),
    ("for loop, no trip", cases.uses_gradient_in_loop, (X, 0), [0], None),
    ("decorated", cases.uses_gradient_of_decorated, (X,), None, None),
    ("helper", cases.uses_gradient_of_caller, (X,), None, None),
    ("loop and element write", cases.uses_gradient_of_loop, (X,), None, None),
    ("of a Function", cases.uses_gradient_of_function, (X,), None, None),
    ("in a Function", cases.prepared_calls_gradient, (X,), None, None),
    ("wrt=1", cases.uses_gradient_of_two, (X, Y), None, None),
    ("wrt=(0, 1)", cases.uses_two_gradients, (X, Y), None, None),
    ("keyword argument", cases.uses_gradient_with_keyword, (X, 0.7), None, None),
    ("negative wrt", cases.uses_gradient_negative_wrt, (X, 0.7), None, None),
    ("gradient of a gradient", cases.uses_second_derivative, (0.9,), None, None),
    ("value_and_grad", cases.uses_value_and_grad, (X,), None, None),
    ("value_and_grad, wrt=(0, 1)", cases.uses_value_and_two_gradients, (X, 0.7), None, None),
    ("mixed block along u", cases.mixed_along, (X, Y, U), [0, 1], None),
]


def _inside_params():
    params = []
    for name, fn, args, wrt, failing in INSIDE:
        for mode in ("rev", "fwd"):
            reason = (failing or {}).get(mode)
            marks = [xfail(reason, TypeError)] if reason else []
            params.append(pytest.param(fn, args, wrt, mode, id=f"{name}-{mode}", marks=marks))
    return params


@pytest.mark.parametrize("fn, args, wrt, mode", _inside_params())
def test_gradient_called_inside(fn, args, wrt, mode):
    """Differentiated in reverse (vjp) or forward (jvp) mode, against differences."""
    check_grads(fn, *args, wrt=wrt, modes=(mode,))


def test_gradient_called_inside_closed_form():
    """slope * x with slope = 3 x^2: the derivative 9 x^2 needs the derivative of the
    gradient inside."""
    for x in (-0.7, 1.5):
        assert s2sgrad.gradient(cases.uses_inline_gradient)(x) == pytest.approx(
            9.0 * x ** 2, rel=1e-12)
        close(s2sgrad.gradient(cases.uses_inline_gradient)(x),
              difference(cases.uses_inline_gradient, [x], {0: 1.0}))


def test_value_of_a_function_calling_a_gradient_is_the_plain_call():
    for fn, args in [(cases.uses_global_gradient, (X,)), (cases.descend_global, (X, 0.1, 3)),
                     (cases.penalised_loss, (X, Y, DATA, 0.3))]:
        value, _ = s2sgrad.value_and_grad(fn)(*args)
        close(value, fn(*args), rtol=1e-12, atol=0)


def test_jvp_of_value_and_grad():
    v = random_like(X, 50)
    (value, grad), (value_dot, grad_dot) = s2sgrad.jvp(
        s2sgrad.value_and_grad(cases.energy), (X,), (v,))
    close(value, cases.energy(X), rtol=1e-12, atol=0)
    close(grad, cases.DENERGY(X), rtol=1e-12, atol=0)
    close(value_dot, difference(cases.energy, [X], {0: v}))
    close(grad_dot, difference(cases.DENERGY, [X], {0: v}))


# --- meta-learning: gradient descent, differentiated ------------------------------------

DESCENT = [
    ("global", cases.descend_global, (X, 0.1, 3), [0, 1], None),
    ("global, no step", cases.descend_global, (X, 0.1, 0), [0, 1], None),
    ("made before the loop", cases.descend_made_before_loop, (X, 0.1, 3), [0, 1], None),
    ("unrolled inline", cases.descend_unrolled, (X, 0.1), [0, 1], None),
    ("helper", cases.descend_by_helper, (X, 0.1, 3), [0, 1], None),
    ("argument", cases.descend_with, (cases.DENERGY, X, 0.1, 3), [1, 2], None),
    ("float", cases.descend_float, (0.8, 0.1), [0, 1], None),
    ("weights, global", cases.descend_weights_global, (X, DATA, 0.5, 3), [0, 2], None),
    ("inline in the loop", cases.descend, (X, 0.1, 3), [0, 1], None),
    ("weights, inline in the loop", cases.descend_weights, (X, DATA, 0.5, 3), [0, 2], None),
]


@pytest.mark.parametrize("fn, args, wrt", [
    pytest.param(fn, args, wrt, id=name,
                 marks=[xfail(why, TransformError)] if why else [])
    for name, fn, args, wrt, why in DESCENT])
def test_gradient_descent_differentiated(fn, args, wrt):
    """The loss after a few steps, differentiated with respect to the starting point and
    the step size, in both modes."""
    check_grads(fn, *args, wrt=wrt, modes=("rev", "fwd"))


def test_one_step_meta_gradient_by_the_chain_rule():
    """x1 = x0 - lr g(x0): d E(x1) / d lr = -<g(x1), g(x0)>, d E(x1) / d x0 =
    (I - lr H(x0)) g(x1), from first derivatives and the (checked) Hessian."""
    lr = 0.1
    g0 = cases.DENERGY(X)
    x1 = X - lr * g0
    g1 = cases.DENERGY(x1)
    d_x0, d_lr = s2sgrad.gradient(cases.descend_global, wrt=(0, 1))(X, lr, 1)
    close(d_lr, -np.dot(g1, g0), rtol=1e-10, atol=1e-12)
    close(d_x0, g1 - lr * s2sgrad.hessian(cases.energy)(X) @ g1, rtol=1e-10, atol=1e-12)


# --- gradient penalty, Newton's method --------------------------------------------------


@pytest.mark.parametrize("wrt", [[0], [0, 1, 3]], ids=["weights", "all"])
def test_gradient_penalty(wrt):
    check_grads(cases.penalised_loss, X, Y, DATA, 0.3, wrt=wrt, modes=("rev", "fwd"))


def test_gradient_penalty_by_the_mixed_hessian():
    """d/dw [lam |grad_x inner(x, w)|^2] = 2 lam (d grad_x / dw)^T grad_x."""
    lam = 0.3
    gw = s2sgrad.gradient(cases.penalised_loss)(X, Y, DATA, lam)
    gx = s2sgrad.gradient(cases.inner, 0)(Y, X)
    blocks = s2sgrad.hessian(cases.inner, wrt=(0, 1))(Y, X)
    expected = s2sgrad.gradient(cases.loss)(X, DATA) + 2.0 * lam * blocks[0][1].T @ gx
    close(gw, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("x", [0.9, -1.3, 2.1])
def test_newton_step(x):
    d = s2sgrad.gradient(cases.newton_step)(x)
    close(d, cases.newton_derivative_closed_form(x), rtol=1e-10)
    close(d, difference(cases.newton_step, [x], {0: 1.0}))
    check_grads(cases.newton_step, x, modes=("rev", "fwd"))


def test_newton_steps_in_a_loop():
    """Two Newton steps toward 2 ** (1/3), the derivative made inline in the loop."""
    check_grads(cases.newton_steps, 1.4, modes=("rev", "fwd"))
    x1 = 1.4 - (1.4 ** 3 - 2.0) / (3.0 * 1.4 ** 2)
    close(cases.newton_steps(1.4), x1 - (x1 ** 3 - 2.0) / (3.0 * x1 ** 2), rtol=1e-12)


# --- check_grads(order=2) ---------------------------------------------------------------

ORDER_TWO = [
    ("energy", cases.energy, (X,), None, None),
    ("coupled", cases.coupled, (A, B), None, None),
    ("pair_energy", cases.pair_energy, (X, Y), None, None),
    ("vector_field", cases.vector_field, (X,), None, None),
    ("matrix_field", cases.matrix_field, (X, W), None, None),
    ("loss", cases.loss, (X, DATA), None, None),
    ("quartic gradient", cases.DQUARTIC, (0.7,), None, None),  # third derivatives
    # a function that calls a gradient: its second derivatives are third ones
    ("inline gradient", cases.uses_inline_gradient, (1.3,), None, None),
    ("global gradient", cases.uses_global_gradient, (X,), None, None),
    ("energy gradient", cases.DENERGY, (X,), None, None),  # array output: weighted
    ("gradient penalty", cases.penalised_loss, (X, Y, DATA, 0.3), [0], None),
    ("newton step", cases.newton_step, (0.9,), None, None),
    ("descent", cases.descend_global, (X, 0.1, 2), [0, 1], {"fwd": LOOP_HELPER_STEP}),
    ("descent, initial point", cases.descend_global, (X, 0.1, 2), [0], None),
    ("descent by a helper", cases.descend_by_helper, (X, 0.1, 2), [0, 1], None),
    ("loop and write inside", cases.uses_gradient_of_loop, (X,), None, None),
    ("newton steps in a loop", cases.newton_steps, (1.4,), None, None),
    ("descent inline in the loop", cases.descend, (X, 0.1, 2), [0, 1],
     {"fwd": LOOP_HELPER_STEP}),
    ("descent inline, initial point", cases.descend, (X, 0.1, 2), [0], None),
    ("weights inline in the loop", cases.descend_weights, (X, DATA, 0.5, 2), [0, 2],
     {"fwd": LOOP_HELPER_STEP}),
    ("descent made before the loop", cases.descend_made_before_loop, (X, 0.1, 2), [0, 1],
     {"fwd": LOOP_HELPER_STEP}),
    ("descent unrolled", cases.descend_unrolled, (X, 0.1), [0, 1], None),
    ("descent on a float", cases.descend_float, (0.8, 0.1), None, None),
    ("two gradients inside", cases.uses_two_gradients, (X, Y), None, None),
    ("keyword inside", cases.uses_gradient_with_keyword, (X, 0.7), None, None),
    ("decorated inside", cases.uses_gradient_of_decorated, (X,), None, None),
    ("from a dict", cases.uses_gradient_from_dict, (X,), None, None),
    ("in a Function", cases.prepared_calls_gradient, (X,), None, None),
    ("value_and_grad inside", cases.uses_value_and_grad, (X,), None, None),
]


@pytest.mark.parametrize("fn, args, wrt, mode", [
    pytest.param(fn, args, wrt, mode, id=f"{name}-{mode}",
                 marks=[xfail(why[mode], TransformError)] if why and mode in why else [])
    for name, fn, args, wrt, why in ORDER_TWO for mode in ("rev", "fwd")])
def test_check_grads_order_two(fn, args, wrt, mode):
    check_grads(fn, *args, wrt=wrt, order=2, modes=(mode,))


@pytest.mark.parametrize("fn", [
    cases.step_size_through_cos,
    pytest.param(cases.step_size_through_helper,
                 marks=xfail(LOOP_HELPER_STEP, TransformError)),
], ids=lambda f: f.__name__)
def test_second_derivative_in_the_step_size_alone(fn):
    """Only the step size moves; the iterate starts from a value that does not."""
    d = s2sgrad.gradient(fn, 1)
    close(s2sgrad.hvp(fn, (0.5, 0.1), (None, 1.0)), difference(d, [0.5, 0.1], {1: 1.0}))


# --- user names that the generated code also uses -------------------------------------


def test_parameter_named_like_a_generated_cotangent():
    d2 = s2sgrad.gradient(s2sgrad.gradient(cases.named_like_cotangent))(1.0, 3.0)
    assert d2 == pytest.approx(6.0, rel=1e-12)


def test_parameter_named_like_a_generated_cotangent_in_forward_mode():
    assert s2sgrad.hvp(cases.named_like_cotangent, (1.0, 3.0), (1.0, None)) == \
        pytest.approx(6.0, rel=1e-12)


def test_parameter_named_like_the_gradient_cotangent_of_value_and_grad():
    """value = x^3 c, gradient 3 x^2 c: d/dx (value + gradient) = 3 x^2 c + 6 x c."""
    fn = cases.uses_value_and_grad_of_named
    d = s2sgrad.gradient(fn)(1.0, 2.0)
    close(d, difference(fn, [1.0, 2.0], {0: 1.0}))
    assert d == pytest.approx(18.0, rel=1e-12)


def test_parameter_named_like_its_own_gradient():
    d2 = s2sgrad.gradient(s2sgrad.gradient(cases.named_like_its_gradient))(1.0, 2.0)
    assert d2 == pytest.approx(12.0, rel=1e-12)


def test_parameter_named_like_its_own_gradient_in_forward_mode():
    assert s2sgrad.hvp(cases.named_like_its_gradient, (1.0, 2.0), (1.0, None)) == \
        pytest.approx(12.0, rel=1e-12)


# --- vjp of a vjp pullback, to any depth ------------------------------------------------


def layer_with_count(x, W, k):
    return np.tanh(W @ x) * k + np.sum(x ** 2)


@s2sgrad.grad
def decorated_field(x):
    return np.sin(x) * x[::-1]


def scalar_fn(a, b):
    return np.sin(a * b) + a ** 3


R = np.random.default_rng(11)
PULLBACKS = [
    pytest.param(layer_with_count, (R.standard_normal(3), R.standard_normal((4, 3)), 2),
                 id="two arrays and an int"),
    pytest.param(decorated_field, (R.standard_normal(5),), id="decorated"),
    pytest.param(scalar_fn, (0.3, 1.7), id="floats"),
    pytest.param(s2sgrad.gradient(scalar_fn), (0.3, 1.7), id="a gradient"),
]


def _draw(value, rng):
    return None if value is None or isinstance(value, int) else (
        rng.standard_normal(np.shape(value)) if isinstance(value, np.ndarray)
        else float(rng.standard_normal()))


@pytest.mark.parametrize("fn, args", PULLBACKS)
def test_the_pullback_of_a_pullback_is_the_jvp(fn, args):
    """vjp(pullback, u) pulls w back to J w, checked against central differences of f
    along w; its own pullback is the first pullback again (any depth)."""
    rng = np.random.default_rng(0)
    out, pullback = s2sgrad.vjp(fn, *args)
    u = _draw(out, rng)
    grads, pullback2 = s2sgrad.vjp(pullback, u)
    assert all(np.allclose(a, b) for a, b in zip(grads, pullback(u), strict=True)
               if a is not None)
    w = tuple(_draw(a, rng) for a in args)
    (Jw,) = pullback2(w)
    weight = _draw(out, rng)
    numeric = sum(s2sgrad.testing.central_difference(fn, args, i, w[i], weight=weight)
                  for i in range(len(args)) if w[i] is not None)
    close(np.sum(weight * Jw), numeric)
    value, pullback3 = s2sgrad.vjp(pullback2, w)
    close(value[0], Jw, rtol=1e-12, atol=1e-12)
    (again,) = pullback3((u,))
    for a, b in zip(again, pullback(u), strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            close(a, b, rtol=1e-12, atol=1e-12)
    _, pullback4 = s2sgrad.vjp(pullback3, (u,))
    close(pullback4((w,))[0][0], Jw, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, args", PULLBACKS)
def test_a_pullback_is_its_own_tangent(fn, args):
    rng = np.random.default_rng(1)
    out, pullback = s2sgrad.vjp(fn, *args)
    u, du = _draw(out, rng), _draw(out, rng)
    value, tangent = s2sgrad.jvp(pullback, (u,), (du,))
    for a, b in zip(value + tangent, pullback(u) + pullback(du), strict=True):
        if a is not None:
            close(a, b, rtol=1e-12, atol=1e-12)


def test_differentiating_a_pullback_otherwise_is_refused_at_the_user_s_line():
    _, pullback = s2sgrad.vjp(scalar_fn, 0.3, 1.7)
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(pullback)(1.0)  # the line the refusal names
    line = test_differentiating_a_pullback_otherwise_is_refused_at_the_user_s_line \
        .__code__.co_firstlineno + 3
    assert f"test_higher_order.py:{line}:" in str(info.value)
    assert_names_no_place_inside_s2sgrad(str(info.value))
    assert "s2sgrad.vjp(pullback, seed)" in str(info.value)


# --- what must stay refused -------------------------------------------------------------


def test_vjp_pullback_inside_is_refused_where_it_is_called():
    _, pullback = s2sgrad.vjp(cases.cube, 1.2)
    fn = cases.make_pullback_user(pullback)
    for transform in (lambda: s2sgrad.gradient(fn)(1.0),
                      lambda: s2sgrad.jvp(fn, (1.0,), (1.0,)),
                      lambda: s2sgrad.hessian(fn)(1.0)):
        with pytest.raises(TransformError) as info:
            transform()
        assert "pullback of vjp(cube)" in str(info.value)
        assert "higher order" in str(info.value)
        assert_points_at(info.value, fn, "pullback(s)", cases.__file__)


def test_gradient_of_a_closure_over_an_input_is_refused():
    """Never differentiated as if the captured value were a constant."""
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(cases.closure_over_input)(X)
    assert "nested function 'inner_loss'" in str(info.value)
    assert_points_at(info.value, cases.closure_over_input, "inner_loss)(w", cases.__file__)


# --- PyTorch as the oracle --------------------------------------------------------------


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _t(torch, a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def _np(t):
    if isinstance(t, tuple):
        return tuple(_np(x) for x in t)
    return t.detach().numpy()


def t_energy(torch, x):
    return (torch.sin(x) * x ** 2).sum() + x.sum() ** 2 * 0.5 + torch.log(1.0 + (x ** 2).sum())


def t_pair_energy(torch, x, y):
    return (torch.sin(x) * y ** 2 + x * y).sum() + torch.tanh(x * y).sum()


def t_vector_field(torch, x):
    return torch.tanh(x) * (x ** 2).sum() + torch.exp(0.5 * x)


def t_loss(torch, w, x):
    return ((torch.tanh(x @ w) - 0.5) ** 2).mean()


def t_inner(torch, x, w):
    return (torch.tanh(w * x) + 0.5 * w * x ** 2).sum()


def t_quartic_mix(torch, x):
    return 0.25 * x ** 4 + torch.sin(x)


ORACLE_TOL = {"rtol": 1e-10, "atol": 1e-12}


def test_torch_hessian(torch):
    ours = s2sgrad.hessian(cases.energy)(X)
    theirs = torch.func.hessian(lambda x: t_energy(torch, x))(_t(torch, X))
    close(ours, _np(theirs), **ORACLE_TOL)


def test_torch_hessian_of_two_arguments(torch):
    ours = s2sgrad.hessian(cases.pair_energy, wrt=(0, 1))(X, Y)
    theirs = torch.func.hessian(lambda x, y: t_pair_energy(torch, x, y), argnums=(0, 1))(
        _t(torch, X), _t(torch, Y))
    close(tuple(tuple(row) for row in ours), _np(tuple(tuple(row) for row in theirs)),
          **ORACLE_TOL)


def test_torch_jacrev_and_jacfwd(torch):
    theirs = _np(torch.func.jacrev(lambda x: t_vector_field(torch, x))(_t(torch, X)))
    close(s2sgrad.jacrev(cases.vector_field)(X), theirs, **ORACLE_TOL)
    close(s2sgrad.jacfwd(cases.vector_field)(X), theirs, **ORACLE_TOL)
    theirs = _np(torch.func.jacrev(lambda w: t_loss(torch, w, _t(torch, DATA)))(_t(torch, X)))
    close(s2sgrad.jacrev(cases.loss)(X, DATA), theirs, **ORACLE_TOL)


def test_torch_jvp_of_a_gradient(torch):
    v = random_like(X, 60)
    grad_t = torch.func.grad(lambda x: t_energy(torch, x))
    out_t, dot_t = torch.func.jvp(grad_t, (_t(torch, X),), (_t(torch, v),))
    out, dot = s2sgrad.jvp(cases.DENERGY, (X,), (v,))
    close(out, _np(out_t), **ORACLE_TOL)
    close(dot, _np(dot_t), **ORACLE_TOL)
    close(s2sgrad.hvp(cases.energy, (X,), (v,)), _np(dot_t), **ORACLE_TOL)


def test_torch_third_derivative(torch):
    d3_t = torch.func.grad(torch.func.grad(torch.func.grad(lambda x: t_quartic_mix(torch, x))))
    d3 = s2sgrad.gradient(s2sgrad.gradient(cases.DQUARTIC))
    close(d3(0.9), _np(d3_t(_t(torch, 0.9))), **ORACLE_TOL)


def test_torch_meta_gradient(torch):
    """The gradient of the loss after gradient descent, with respect to the initial point
    and the step size: torch.func.grad inside torch.func.grad."""
    def descend_t(x0, lr):
        g = torch.func.grad(lambda x: t_energy(torch, x))
        x = x0
        for _ in range(3):
            x = x - lr * g(x)
        return t_energy(torch, x)

    theirs = torch.func.grad(descend_t, argnums=(0, 1))(_t(torch, X), _t(torch, 0.1))
    ours = s2sgrad.gradient(cases.descend_global, wrt=(0, 1))(X, 0.1, 3)
    close(ours, _np(theirs), **ORACLE_TOL)


def test_torch_gradient_penalty(torch):
    def penalised_t(w, x, data, lam):
        gx = torch.func.grad(lambda xx: t_inner(torch, xx, w))(x)
        return t_loss(torch, w, data) + lam * (gx ** 2).sum()

    theirs = torch.func.grad(penalised_t)(_t(torch, X), _t(torch, Y), _t(torch, DATA), 0.3)
    ours = s2sgrad.gradient(cases.penalised_loss)(X, Y, DATA, 0.3)
    close(ours, _np(theirs), **ORACLE_TOL)


def test_torch_maml(torch):
    def descend_weights_t(w0, x, lr):
        w = w0
        for _ in range(3):
            w = w - lr * torch.func.grad(lambda ww: t_loss(torch, ww, x))(w)
        return t_loss(torch, w, x)

    theirs = torch.func.grad(descend_weights_t, argnums=(0, 2))(
        _t(torch, X), _t(torch, DATA), _t(torch, 0.5))
    ours = s2sgrad.gradient(cases.descend_weights_global, wrt=(0, 2))(X, DATA, 0.5, 3)
    close(ours, _np(theirs), **ORACLE_TOL)


def test_torch_newton_step(torch):
    f = lambda x: t_quartic_mix(torch, x)
    g, h = torch.func.grad(f), torch.func.grad(torch.func.grad(f))
    theirs = torch.func.grad(lambda x: x - g(x) / h(x))(_t(torch, 0.9))
    close(s2sgrad.gradient(cases.newton_step)(0.9), _np(theirs), **ORACLE_TOL)


# a function returning an array of one entry has a gradient (its one entry is the value);
# the gradient's own derivatives seed that array with ones of its shape
def _row_sum(x):
    return np.sum(np.sin(x), axis=1)


def _kept_row_sum(x):
    return np.sum(np.sin(x) * x, axis=1, keepdims=True)


def _column_of_one(x):
    return np.tanh(x[:, :1]).T @ x[:, 1:2]


@pytest.mark.parametrize("fn", [_row_sum, _kept_row_sum, _column_of_one])
def test_derivatives_of_the_gradient_of_an_array_of_one_entry(fn):
    x = np.random.default_rng(3).uniform(-1.0, 1.0, (1, 3))
    total_of_gradient = lambda v: np.sum(s2sgrad.gradient(fn)(v) ** 2)
    check_grads(total_of_gradient, x, modes=("rev", "fwd"))
    gradient_and_value = lambda v: np.sum(
        s2sgrad.value_and_grad(fn)(v)[1] * s2sgrad.value_and_grad(fn)(v)[0])
    check_grads(gradient_and_value, x, modes=("rev",))
    check_grads(lambda v: np.sum(fn(v)), x, modes=("rev", "fwd"), order=2)
