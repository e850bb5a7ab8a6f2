"""``scipy.integrate.odeint`` as people use it: exponential decay (against its closed form), a
linear system with its matrix in ``args``, a damped pendulum and Lotka-Volterra fitted to
observations, losses over whole trajectories, the solve inside a helper, in a loop over
initial conditions, in ``@s2sgrad.grad`` and on Tensors with ``backward()``, and the
gradient with respect to the times. Each is checked against finite differences in reverse
and forward mode; what is not differentiated (a closure over a differentiated value, second
derivatives, ``full_output=``, a right-hand side without derivative) is refused, saying what
to write instead.

Tolerances: every solve here runs at ``rtol = atol = 1e-11``. The solver's error is not a
smooth function of the inputs (its steps change with them), so a central difference of step
``h`` carries an error of about ``1e-11 / h`` relative to the derivative, and the adjoint or
sensitivity ODE is itself solved to about ``1e-10``. With ``h = 1e-4`` (``EPS``) the
difference's own truncation error is near ``h**2 = 1e-8``: ``RTOL = 1e-5`` leaves a margin of
100 over both.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads, numeric_gradient

scipy_integrate = pytest.importorskip("scipy.integrate")
odeint = scipy_integrate.odeint

from tests.located import assert_points_at

TOL = 1e-11  # the solver's rtol and atol in every differentiated solve
EPS, RTOL, ATOL = 1e-4, 1e-5, 1e-7  # see the module's docstring
MODES = ("rev", "fwd")

rng = np.random.default_rng(20240701)


def close(f, *args, **options):
    """check_grads at the tolerances the solver allows, in both modes."""
    check_grads(f, *args, modes=MODES, eps=EPS, rtol=RTOL, atol=ATOL, **options)


# --- exponential decay: y' = -k y, y = y0 exp(-k (t - t0)) ----------------------------------


def decay(y, t, k):
    return -k * y


TIMES = np.array([0.2, 0.7, 1.0, 1.6])


def weighted_decay(y0, k, t, w):
    ys = odeint(decay, y0, t, args=(k,), rtol=TOL, atol=TOL)
    return np.sum(w * ys)


def test_exponential_decay_matches_its_closed_form():
    y0, k, w = np.array([1.5, -0.5]), 0.8, rng.standard_normal((4, 2))
    g_y0, g_k, g_t = s2sgrad.gradient(weighted_decay, wrt=(0, 1, 2))(y0, k, TIMES, w)
    # L = sum_i w_i . y0 exp(-k (t_i - t_0))
    decays = np.exp(-k * (TIMES - TIMES[0]))[:, None]
    np.testing.assert_allclose(g_y0, np.sum(w * decays, axis=0), rtol=1e-9)
    np.testing.assert_allclose(g_k, -np.sum(w * (TIMES - TIMES[0])[:, None] * decays * y0),
                               rtol=1e-9)
    moved = -k * np.sum(w * decays * y0, axis=1)  # dL/dt_i for i > 0
    np.testing.assert_allclose(g_t[1:], moved[1:], rtol=1e-9)
    np.testing.assert_allclose(g_t[0], -np.sum(moved[1:]), rtol=1e-9)
    close(weighted_decay, y0, k, TIMES, w)


def test_exponential_decay_forward_mode_matches_its_closed_form():
    y0, k, w = np.array([1.5, -0.5]), 0.8, rng.standard_normal((4, 2))
    dy0, dk, dt = np.array([0.3, 1.0]), -0.7, np.array([0.5, -1.0, 0.2, 2.0])
    value, tangent = s2sgrad.jvp(weighted_decay, (y0, k, TIMES, w), (dy0, dk, dt, None))
    decays = np.exp(-k * (TIMES - TIMES[0]))[:, None]
    elapsed = (TIMES - TIMES[0])[:, None]
    moving = dy0 * decays - y0 * decays * (elapsed * dk + k * (dt - dt[0])[:, None])
    np.testing.assert_allclose(value, np.sum(w * y0 * decays), rtol=1e-9)
    np.testing.assert_allclose(tangent, np.sum(w * moving), rtol=1e-8)


def test_a_scalar_initial_value():
    def final_value(y0, k):
        return odeint(decay, y0, np.array([0.0, 2.0]), args=(k,), rtol=TOL, atol=TOL)[-1, 0]

    g_y0, g_k = s2sgrad.gradient(final_value, wrt=(0, 1))(1.5, 0.4)
    np.testing.assert_allclose([g_y0, g_k], [np.exp(-0.8), -3.0 * np.exp(-0.8)], rtol=1e-9)
    close(final_value, 1.5, 0.4)


# --- a linear system with its matrix in args -------------------------------------------------


def linear(y, t, a, b):
    return a @ y + b


def linear_loss(y0, a, b, t):
    ys = odeint(linear, y0, t, args=(a, b), rtol=TOL, atol=TOL)
    return np.sum(np.sin(ys))


def test_linear_system_with_a_matrix_in_args():
    a = np.array([[-0.5, 1.0], [-1.0, -0.3]])
    close(linear_loss, np.array([1.0, 0.5]), a, np.array([0.2, -0.1]), np.array([0.0, 0.4, 1.5]))


def test_linear_system_against_the_matrix_exponential():
    # y(T) = expm(a T) y0 for b = 0: the gradient of its sum in y0 is expm(a T)^T 1
    scipy_linalg = pytest.importorskip("scipy.linalg")
    a = np.array([[-0.5, 1.0], [-1.0, -0.3]])

    def final_sum(y0, a):
        ys = odeint(linear, y0, np.array([0.0, 1.2]), args=(a, np.zeros(2)), rtol=TOL,
                    atol=TOL)
        return np.sum(ys[-1])

    g = s2sgrad.gradient(final_sum)(np.array([1.0, 0.5]), a)
    np.testing.assert_allclose(g, scipy_linalg.expm(1.2 * a).T @ np.ones(2), rtol=1e-9)


# --- nonlinear: a damped pendulum, Lotka-Volterra --------------------------------------------


def pendulum(y, t, damping, gravity):
    theta, omega = y
    return [omega, -damping * omega - gravity * np.sin(theta)]  # a list, as scipy's example


def pendulum_misfit(y0, damping, gravity, observed):
    ys = odeint(pendulum, y0, np.linspace(0.0, 3.0, 7), args=(damping, gravity), rtol=TOL,
                atol=TOL)
    return np.sum((ys[:, 0] - observed) ** 2)


def test_damped_pendulum_fit():
    observed = rng.standard_normal(7) * 0.3
    close(pendulum_misfit, np.array([1.0, 0.0]), 0.25, 9.81 / 4.0, observed)


def lotka_volterra(y, t, rates):
    prey, predators = y[0], y[1]
    return np.array([rates[0] * prey - rates[1] * prey * predators,
                     rates[2] * prey * predators - rates[3] * predators])


def lotka_volterra_misfit(rates, y0, observed):
    ys = odeint(lotka_volterra, y0, np.linspace(0.0, 2.0, 5), args=(rates,), rtol=TOL,
                atol=TOL)
    return np.mean((np.log(ys) - np.log(observed)) ** 2)


def test_lotka_volterra_fit():
    rates, y0 = np.array([1.1, 0.4, 0.1, 0.4]), np.array([10.0, 5.0])
    observed = odeint(lotka_volterra, y0, np.linspace(0.0, 2.0, 5), args=(rates * 1.1,))
    close(lotka_volterra_misfit, rates, y0, observed)
    # descending the gradient lowers the misfit
    g = s2sgrad.gradient(lotka_volterra_misfit)(rates, y0, observed)
    assert lotka_volterra_misfit(rates - 1e-3 * g, y0, observed) < \
        lotka_volterra_misfit(rates, y0, observed)


# --- a loss over the whole trajectory ---------------------------------------------------------


def trajectory_energy(y0, damping, gravity):
    ys = odeint(pendulum, y0, np.linspace(0.0, 2.0, 9), args=(damping, gravity), rtol=TOL,
                atol=TOL)
    total = 0.0
    for k in range(1, 9, 2):  # the energy at every other time
        total = total + 0.5 * ys[k, 1] ** 2 + gravity * (1.0 - np.cos(ys[k, 0]))
    return total


def test_a_loss_that_sums_the_trajectory_at_several_times():
    close(trajectory_energy, np.array([0.8, 0.3]), 0.2, 2.0)


# --- the solve inside a helper, a loop, @grad, Tensors ----------------------------------------


def simulate(y0, damping, gravity):
    return odeint(pendulum, y0, np.array([0.0, 0.5, 1.0]), args=(damping, gravity), rtol=TOL,
                  atol=TOL)


def through_a_helper(y0, damping):
    return np.sum(simulate(y0, damping, 2.0)[-1] ** 2)


def test_odeint_inside_a_helper():
    close(through_a_helper, np.array([0.4, -0.2]), 0.3)


def over_initial_values(starts, damping, gravity):
    total = 0.0
    for y0 in starts:
        total = total + np.sum(simulate(y0, damping, gravity)[-1])
    return total


def test_a_loop_over_initial_values():
    starts = rng.uniform(-0.5, 0.5, (3, 2))
    close(over_initial_values, starts, 0.3, 2.0)
    # the sum of the runs' gradients, one run at a time
    per_run = s2sgrad.gradient(lambda y0, d, g: np.sum(simulate(y0, d, g)[-1]), wrt=(1, 2))
    expected = np.sum([per_run(y0, 0.3, 2.0) for y0 in starts], axis=0)
    got = s2sgrad.gradient(over_initial_values, wrt=(1, 2))(starts, 0.3, 2.0)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@s2sgrad.grad
def decorated_loss(y0, damping, gravity):
    return np.sum(simulate(y0, damping, gravity) ** 2)


def test_a_decorated_function_and_tensors_backward():
    y0, damping, gravity = np.array([0.6, 0.1]), 0.3, 2.0
    close(decorated_loss.fn, y0, damping, gravity)
    tensors = [s2sgrad.tensor(v, requires_grad=True) for v in (y0, damping, gravity)]
    out = decorated_loss(*tensors)
    out.backward()
    for i, t in enumerate(tensors):
        np.testing.assert_allclose(np.asarray(t.grad), numeric_gradient(
            decorated_loss.fn, [y0, damping, gravity], i, eps=EPS), rtol=1e-6)


class Oscillator(s2sgrad.nn.Module):
    """A module whose parameters reach the right-hand side through args."""

    def __init__(self):
        super().__init__()
        self.damping = s2sgrad.tensor(0.3, requires_grad=True)
        self.stiffness = s2sgrad.tensor(1.7, requires_grad=True)

    @s2sgrad.grad
    def forward(self, y0):
        ys = odeint(pendulum, y0, np.linspace(0.0, 1.0, 4), args=(self.damping,
                                                                   self.stiffness),
                    rtol=TOL, atol=TOL)
        return np.sum(ys[:, 0] ** 2)


def test_a_modules_parameters_through_args():
    model, y0 = Oscillator(), np.array([0.5, 0.0])
    model(y0).backward()

    def loss(damping, stiffness):
        return np.sum(simulate_with(y0, damping, stiffness) ** 2)

    for i, p in enumerate((model.damping, model.stiffness)):
        expected = numeric_gradient(loss, [0.3, 1.7], i, eps=EPS)
        np.testing.assert_allclose(np.asarray(p.grad), expected, rtol=1e-6)


def simulate_with(y0, damping, stiffness):
    return odeint(pendulum, y0, np.linspace(0.0, 1.0, 4), args=(damping, stiffness), rtol=TOL,
                  atol=TOL)[:, 0]


# --- the forms of the call ------------------------------------------------------------------


def decay_with_time_first(t, y, k):
    return -k * y * (1.0 + t)


def time_first(y0, k):
    ys = odeint(decay_with_time_first, y0, np.array([0.0, 0.5, 1.0]), args=(k,), tfirst=True,
                rtol=TOL, atol=TOL)
    return np.sum(ys[-1])


def forced(y, t, params, order):
    return -params["rate"] * y ** order + params["force"] * np.cos(t)


def dict_and_int_args(y0, rate, force):
    ys = odeint(forced, y0, np.array([0.0, 0.6, 1.2]), args=({"rate": rate, "force": force}, 3),
                rtol=TOL, atol=TOL)
    return np.sum(ys)


def passed_in(y0, k, rhs):
    return np.sum(odeint(rhs, y0, np.array([0.0, 1.0]), args=(k,), rtol=TOL, atol=TOL))


module_lambda = lambda y, t, k: -k * y  # a module-level function defined by a lambda


def through_a_module_lambda(y0, k):
    return np.sum(odeint(module_lambda, y0, np.array([0.0, 1.0]), args=(k,), rtol=TOL,
                         atol=TOL) ** 2)


def from_a_list(a, b, k):
    return np.sum(odeint(decay, [a, b], [0.0, 0.5, 1.0], args=(k,), rtol=TOL, atol=TOL))


def per_component_tolerances(y0, k):
    ys = odeint(decay, y0, np.array([0.0, 0.5, 1.0]), args=(k,), rtol=TOL,
                atol=np.array([TOL, TOL / 10]))
    return np.sum(ys ** 2)


@pytest.mark.parametrize("fn, args", [
    (time_first, (np.array([1.0, 2.0]), 0.4)),
    (dict_and_int_args, (np.array([0.5, 1.0]), 0.7, 0.3)),
    (passed_in, (np.array([1.0, 2.0]), 0.4, decay)),
    (through_a_module_lambda, (np.array([1.0, 2.0]), 0.4)),
    (from_a_list, (1.0, 2.0, 0.4)),
    (per_component_tolerances, (np.array([1.0, 2.0]), 0.4)),
], ids=["tfirst", "dict-and-int-args", "function-passed-in", "module-lambda", "lists",
        "per-component-atol"])
def test_forms_of_the_call(fn, args):
    wrt = tuple(i for i, a in enumerate(args) if not callable(a))
    close(fn, *args, wrt=wrt)


def weighted_states(y0, k, t, w):
    ys = odeint(decay, y0, t, args=(k,), rtol=TOL, atol=TOL)
    return np.sum(w * ys)


def test_the_adjoint_is_one_call_in_readable_code():
    compiled = s2sgrad.grad(weighted_states)
    compiled(np.array([1.0, 2.0]), 0.5, TIMES, np.ones((4, 2)))
    source = compiled.adjoint_source
    assert source.count("odeint_backward(ys_bar, ys, decay, y0, t,") == 1, source
    assert "k_bar = " in source and "t_bar = " in source, source


# --- refused -------------------------------------------------------------------------------


def closure_over_rate(y0, k):
    return np.sum(odeint(lambda y, t: -k * y, y0, TIMES))  # <- refused


def nested_closure(y0, k):
    def rhs(y, t):
        return -k * y

    return np.sum(odeint(rhs, y0, TIMES))  # <- refused


def statistics(y0, k):
    ys, _info = odeint(decay, y0, TIMES, args=(k,), full_output=True)  # <- refused
    return np.sum(ys)


@pytest.mark.parametrize("fn, token, words", [
    (closure_over_rate, "lambda", ["lambda is used other than by calling it", "args=(k,)"]),
    (nested_closure, "rhs", ["nested function 'rhs'", "args=(k,)"]),
    (statistics, "odeint", ["full_output", "Leave out full_output="]),
])
def test_refused_calls_say_what_to_write(fn, token, words):
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(fn, wrt=1)(np.array([1.0, 2.0]), 0.5)
    assert_points_at(info.value, fn, token)
    for text in words:
        assert text in str(info.value)


def rounded_rate(y, t, k):
    return -np.round(k, 1) * y - scipy_special.ellipk(0.1 * y)  # <- refused


def uses_rounded_rate(y0, k):
    return np.sum(odeint(rounded_rate, y0, TIMES, args=(k,)))


def test_a_right_hand_side_without_derivative_is_refused_at_its_line():
    global scipy_special
    scipy_special = pytest.importorskip("scipy.special")
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(uses_rounded_rate)(np.array([1.0, 2.0]), 0.5)
    assert_points_at(info.value, rounded_rate, "scipy_special")
    assert "ellipk" in str(info.value)


def final_sum(y0, k):
    return np.sum(odeint(decay, y0, TIMES, args=(k,), rtol=TOL, atol=TOL))  # <- refused


@pytest.mark.parametrize("second", [
    lambda: s2sgrad.hessian(final_sum, wrt=1)(np.array([1.0, 2.0]), 0.5),
    lambda: s2sgrad.gradient(s2sgrad.gradient(final_sum, wrt=1), wrt=1)(np.array([1.0, 2.0]),
                                                                         0.5),
    lambda: s2sgrad.hvp(final_sum, (np.array([1.0, 2.0]), 0.5), (None, 1.0)),
], ids=["hessian", "gradient-of-gradient", "hvp"])
def test_second_derivatives_are_refused(second):
    with pytest.raises(s2sgrad.TransformError) as info:
        second()
    assert_points_at(info.value, final_sum, "return")  # the statement the tangent came from
    assert "no derivative rule for s2sgrad.runtime.odeint.odeint_tangent" in str(info.value)


def test_many_directions_at_once_take_one_at_a_time():
    # the sensitivity equations have no batched form: batched_jvp says so, and jacobian
    # falls back to one direction per call
    y0 = np.array([1.0, 2.0])

    def trajectory(y0, k):
        return odeint(decay, y0, TIMES, args=(k,), rtol=TOL, atol=TOL)

    with pytest.raises(s2sgrad.NotBatchable, match="odeint"):
        s2sgrad.batched_jvp(trajectory, (y0, 0.5), (np.eye(2), np.zeros(2)))
    for mode in ("fwd", "rev"):
        jac = s2sgrad.jacobian(trajectory, wrt=0, mode=mode)(y0, 0.5)
        decays = np.exp(-0.5 * (TIMES - TIMES[0]))
        np.testing.assert_allclose(jac, decays[:, None, None] * np.eye(2), rtol=1e-9)


def stiff_decay(k):
    return np.sum(odeint(decay, np.array([1.0]), np.array([0.0, 1.0]), args=(k,), mxstep=200,
                         rtol=1e-10, atol=1e-10))


def test_a_derivative_whose_solve_fails_raises():
    # y' = -30 y solves forwards within 200 steps; backwards, beside its adjoint, it grows
    # like exp(30 t) and needs more: the derivative raises rather than use a partial solution
    with warnings.catch_warnings():
        warnings.simplefilter("error", scipy_integrate.ODEintWarning)
        stiff_decay(30.0)  # the forward solve succeeds
    with pytest.raises(RuntimeError, match="solves the adjoint equations") as info:
        s2sgrad.gradient(stiff_decay)(30.0)
    assert "larger mxstep=" in str(info.value)


def test_the_rules_register_nothing_without_scipy():
    code = ("import sys; sys.modules['scipy'] = None\n"
            "import s2sgrad\n"
            "from s2sgrad.rules import integrate, registry\n"
            "assert integrate.scipy is None\n"
            "assert not any('odeint' in r.name for r in registry.all_rules())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
