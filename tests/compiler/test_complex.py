"""Complex values and the Fourier transforms, through the whole compiler.

The families a user writes with complex intermediates and real losses: the power of a
spectrum, a convolution through np.fft, a damped oscillator ``np.exp(1j * w * t)``, a phase
retrieval loss, a Fourier series fitted to data; each called as ``gradient``,
``value_and_grad`` and ``@grad`` on Tensors, through nested functions and containers, in loops
and branches, and at second order. Every gradient is checked against central differences
(``check_grads``: reverse and forward mode, and the gradient's own derivatives), the compiled
value against the plain call, the caller's arguments unchanged; the gradients of real inputs
are real. Complex inputs follow JAX's and HIPS autograd's convention (``df/dx - i df/dy``),
compared with both where they are installed. What is refused: a rule written for real
numbers meeting a complex value, a complex Tensor that requires grad, a complex output.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import TransformError
from s2sgrad.rules import registry
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(20240614)
X = rng.standard_normal(8)
K = rng.standard_normal(8) * 0.5
T = np.linspace(0.0, 2.0, 9)
Z = rng.standard_normal(5) + 1j * rng.standard_normal(5)


# --- the programs -----------------------------------------------------------------------


def spectral_power(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def spectral_power_ortho(x):
    # Parseval: with norm="ortho" this is np.sum(x ** 2)
    spectrum = np.fft.fft(x, norm="ortho")
    return np.sum(spectrum.real ** 2 + spectrum.imag ** 2)


def fft_convolution(x, k):
    y = np.fft.irfft(np.fft.rfft(x) * np.fft.rfft(k), n=x.shape[0])
    return np.sum(y ** 2) + np.sum(y * x)


def padded_convolution(x, k):
    n = 2 * x.shape[0]
    y = np.fft.ifft(np.fft.fft(x, n) * np.fft.fft(k, n))
    return np.sum(np.real(y) ** 2 + 0.1 * np.imag(y))


def damped_oscillator(w, t):
    z = np.exp(1j * w * t) * np.exp(-0.3 * t)
    return np.sum(np.real(z) ** 2) + np.sum(z.imag * t)


def phase_retrieval(x, measured):
    # the magnitudes of the spectrum against measured ones
    return np.mean((np.abs(np.fft.fft(x)) - measured) ** 2)


def fourier_series(c, t, y):
    # a series with complex coefficients built from real ones, fitted to y
    coefficients = c[:3] + 1j * c[3:]
    model = np.zeros(t.shape, dtype=complex)
    for k in range(3):
        model = model + coefficients[k] * np.exp(2j * np.pi * k * t)
    return np.sum((np.real(model) - y) ** 2)


def angles_and_conjugates(x):
    z = x[:4] + 1j * x[4:]
    return np.sum(np.angle(z) * np.abs(z)) + np.real(np.vdot(z, z * 2.0)) + np.sum(
        (np.conj(z) * z).real)


def two_dimensional(x):
    image = np.reshape(x, (2, 4))
    spectrum = np.fft.fftshift(np.fft.fft2(image))
    return np.sum(np.abs(spectrum)) + np.sum(np.fft.irfftn(np.fft.rfftn(image) * 0.5) ** 2)


def matrix_of_phases(x):
    # a complex matrix product: a DFT matrix written out, against np.fft.fft
    n = x.shape[0]
    k = np.arange(n)
    dft = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return np.sum(np.abs(dft @ x - np.fft.fft(x)) ** 2) + np.sum(np.abs(dft @ x))


def builtin_complex_arithmetic(x):
    z = x[0] + 1j * x[1]
    w = z * z / (1.0 + z) - z ** 3
    return abs(w) + w.real * x[2]


PROGRAMS = [
    (spectral_power, (X,)),
    (spectral_power_ortho, (X,)),
    (fft_convolution, (X, K)),
    (padded_convolution, (X[:5], K[:5])),
    (damped_oscillator, (1.3, T)),
    (phase_retrieval, (X, np.abs(np.fft.fft(X + 0.3)))),
    (fourier_series, (rng.standard_normal(6), T, np.sin(T))),
    (angles_and_conjugates, (X,)),
    (two_dimensional, (X,)),
    (matrix_of_phases, (X[:4],)),
    (builtin_complex_arithmetic, (X[:3],)),
]
IDS = [f.__name__ for f, _ in PROGRAMS]


def float_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, float) or (
        isinstance(a, np.ndarray) and a.dtype.kind in "fc")]


@pytest.mark.parametrize(("fn", "args"), PROGRAMS, ids=IDS)
def test_real_inputs_through_complex_values(fn, args):
    copies = [np.copy(a) for a in args]
    expected = fn(*args)
    for i in float_positions(args):
        value, grad = s2sgrad.value_and_grad(fn, i)(*args)
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert np.isrealobj(grad), "a real input's gradient is real"
        assert np.shape(grad) == np.shape(args[i])
    for a, c in zip(args, copies, strict=True):
        np.testing.assert_array_equal(a, c)
    check_grads(fn, *args, wrt=float_positions(args), modes=("rev", "fwd"))


@pytest.mark.parametrize(("fn", "args"), PROGRAMS, ids=IDS)
def test_second_order(fn, args):
    check_grads(fn, *args, wrt=float_positions(args), order=2, modes=("rev", "fwd"))


def test_spectral_power_is_parseval():
    # sum |fft(x)|^2 = n sum x^2: the gradient is 2 n x
    np.testing.assert_allclose(s2sgrad.gradient(spectral_power)(X), 2 * len(X) * X)
    np.testing.assert_allclose(s2sgrad.gradient(spectral_power_ortho)(X), 2 * X)


# --- against JAX and HIPS autograd --------------------------------------------------------


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


@pytest.mark.parametrize(("name", "fn", "jfn"), [
    ("spectral_power", spectral_power,
     lambda jnp: lambda x: jnp.sum(jnp.abs(jnp.fft.fft(x)) ** 2)),
    ("fft_convolution", lambda x: fft_convolution(x, K),
     lambda jnp: lambda x: jnp.sum(jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(K), n=8) ** 2)
     + jnp.sum(jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(K), n=8) * x)),
    ("phase_retrieval", lambda x: phase_retrieval(x, np.ones(8)),
     lambda jnp: lambda x: jnp.mean((jnp.abs(jnp.fft.fft(x)) - 1.0) ** 2)),
    ("two_dimensional", two_dimensional,
     lambda jnp: lambda x: jnp.sum(jnp.abs(jnp.fft.fftshift(jnp.fft.fft2(x.reshape(2, 4)))))
     + jnp.sum(jnp.fft.irfftn(jnp.fft.rfftn(x.reshape(2, 4)) * 0.5) ** 2)),
])
def test_real_inputs_agree_with_jax(name, fn, jfn):
    jax, jnp = _jax()
    np.testing.assert_allclose(s2sgrad.gradient(fn)(X), jax.grad(jfn(jnp))(X), rtol=1e-10,
                               atol=1e-10)


# --- complex inputs ----------------------------------------------------------------------


def magnitudes(z):
    return np.sum(np.abs(z) ** 2 + np.real(z * z) + np.angle(z))


def holomorphic_then_real(z):
    w = np.exp(z) * np.sin(z) / (1.0 + z * z) + np.sqrt(z + 3.0) * np.log(z + 3.0)
    return np.sum(np.real(w) + np.imag(w) ** 2)


def spectrum_of_complex(z):
    spectrum = np.fft.ifft(np.fft.fft(z, 8) * np.arange(8))
    return np.sum(np.abs(spectrum)) + np.real(np.vdot(z, np.conj(z)))


def mixed(z, x):
    return np.sum(np.abs(z * x + np.conj(z) * x[::-1]) ** 2)


COMPLEX = [(magnitudes, (Z,)), (holomorphic_then_real, (Z * 0.5,)),
           (spectrum_of_complex, (Z,)), (mixed, (Z, X[:5]))]
COMPLEX_IDS = [f.__name__ for f, _ in COMPLEX]


@pytest.mark.parametrize(("fn", "args"), COMPLEX, ids=COMPLEX_IDS)
def test_complex_inputs_against_finite_differences(fn, args):
    copies = [np.copy(a) for a in args]
    grads = s2sgrad.gradient(fn, wrt=tuple(range(len(args))))(*args)
    assert np.iscomplexobj(grads[0])
    for a, g in zip(args, grads, strict=True):
        assert np.iscomplexobj(g) == np.iscomplexobj(a)
    for a, c in zip(args, copies, strict=True):
        np.testing.assert_array_equal(a, c)
    check_grads(fn, *args, modes=("rev", "fwd"))
    check_grads(fn, *args, order=2, modes=("rev", "fwd"))


def test_the_convention_is_jax_and_autograd():
    # d/dz of |z|^2 + Re(z): 2 conj(z) + 1, the conjugate of the direction of steepest ascent
    def f(z):
        return np.abs(z) ** 2 + np.real(z)

    z = 3.0 + 4.0j
    assert s2sgrad.gradient(f)(z) == pytest.approx(7.0 - 8.0j)
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    assert autograd.grad(lambda z: anp.abs(z) ** 2 + anp.real(z))(z) == pytest.approx(
        7.0 - 8.0j)


@pytest.mark.parametrize(("fn", "args"), COMPLEX, ids=COMPLEX_IDS)
def test_complex_inputs_agree_with_jax(fn, args):
    jax, jnp = _jax()
    ours = s2sgrad.gradient(fn)(*args)
    jfn = types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp})
    np.testing.assert_allclose(ours, jax.grad(jfn)(*args), rtol=1e-10, atol=1e-10)


def test_complex_inputs_agree_with_autograd():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    for fn in (magnitudes, holomorphic_then_real):
        theirs = autograd.grad(types.FunctionType(fn.__code__, {**fn.__globals__, "np": anp}))
        np.testing.assert_allclose(s2sgrad.gradient(fn)(Z * 0.5), theirs(Z * 0.5), rtol=1e-10)


def test_a_descent_step_along_the_conjugate_lowers_the_loss():
    z = Z.copy()
    before = magnitudes(z)
    z = z - 0.01 * np.conj(s2sgrad.gradient(magnitudes)(z))
    assert magnitudes(z) < before


# --- the forms a user writes ----------------------------------------------------------------


def _spectrum_energy(v):
    return np.sum(np.abs(np.fft.rfft(v)) ** 2)


def nested_helper(x):
    return _spectrum_energy(x) + _spectrum_energy(x[::2] * 2.0)


def through_containers(x):
    parts = {"re": x[:4], "im": x[4:]}
    z = parts["re"] + 1j * parts["im"]
    pair = (z, np.conj(z))
    return np.sum(np.real(pair[0] * pair[1]))


def in_a_loop(x):
    total = 0.0
    z = x[:4] + 0j
    for k in range(3):
        z = z * np.exp(1j * x[4 + k])
        total = total + np.sum(np.abs(z - x[k]))
    return total


def in_a_branch(x):
    if np.sum(x) > 0:
        z = np.fft.fft(x)
    else:
        z = np.fft.ifft(x) * 8.0
    return np.sum(np.abs(z) ** 2)


def lambda_of_spectrum(x):
    energy = lambda v: np.sum(np.abs(np.fft.fft(v)))
    return energy(x) * energy(x[:4])


def written_into_complex_buffer(x):
    buffer = np.zeros(4, dtype=complex)
    buffer[0] = x[0] + 1j * x[1]
    buffer[1:3] = x[2:4] * 1j
    buffer[3] = np.exp(1j * x[4])
    return np.sum(np.abs(np.fft.fft(buffer)) ** 2)


def astype_and_dtype(x):
    z = np.asarray(x, dtype=complex) * np.exp(1j * x)
    ones = np.ones_like(z)
    return np.sum(np.abs(z + ones))


FORMS = [nested_helper, through_containers, in_a_loop, in_a_branch, lambda_of_spectrum,
         written_into_complex_buffer, astype_and_dtype]


@pytest.mark.parametrize("fn", FORMS, ids=[f.__name__ for f in FORMS])
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus_x"])
def test_forms(fn, x):
    copy = x.copy()
    value, grad = s2sgrad.value_and_grad(fn)(x)
    assert value == pytest.approx(fn(x), rel=1e-12)
    assert np.isrealobj(grad)
    np.testing.assert_array_equal(x, copy)
    check_grads(fn, x, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn", FORMS, ids=[f.__name__ for f in FORMS])
def test_forms_second_order(fn):
    check_grads(fn, X, order=2, modes=("rev",))


def test_decorated_function_called_on_tensors():
    @s2sgrad.grad
    def loss(x, k):
        return fft_convolution(x, k)

    x = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = loss(x, K)
    out.backward()
    assert out.item() == pytest.approx(fft_convolution(X, K))
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(fft_convolution)(X, K))
    assert not x.grad.is_complex()


def test_a_complex_tensor_that_requires_grad_is_refused():
    @s2sgrad.grad
    def energy(z):
        return np.sum(np.abs(z) ** 2)

    z = s2sgrad.tensor(Z, requires_grad=True)
    with pytest.raises(RuntimeError, match="complex Tensor that requires grad"):
        energy(z)


def test_a_complex_output_has_no_gradient():
    with pytest.raises(TypeError, match="returned a complex value"):
        s2sgrad.gradient(lambda x: np.sum(np.fft.fft(x)))(X)


def test_vjp_of_a_complex_output_takes_a_complex_seed():
    def transform(x):
        return np.fft.fft(x)

    out, pullback = s2sgrad.vjp(transform, X)
    np.testing.assert_allclose(out, np.fft.fft(X))
    seed = rng.standard_normal(8) + 1j * rng.standard_normal(8)
    (grad,) = pullback(seed)
    # Re <seed, fft(x + v) - fft(x)> = <grad, v> for real v
    v = rng.standard_normal(8)
    assert np.sum(grad * v) == pytest.approx(np.real(np.sum(seed * np.fft.fft(v))))


# --- refused --------------------------------------------------------------------------------


def sorted_spectrum(x):
    z = np.fft.fft(x)
    return np.real(np.sum(np.sort(z)[:2]))  # <- refused


def user_rule_for_reals(x):
    return np.sum(np.abs(_real_only(np.fft.fft(x))))  # <- refused


def _real_only(v):
    return v * 2.0


def sign_of_complex(x):
    z = x + 1j
    return np.sum(np.real(z * np.sign(z)))  # <- refused


def test_the_sign_of_a_complex_value_is_refused():
    # np.sign(z) is z / |z| for complex z: not piecewise constant, as the sign of a real is
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(sign_of_complex)(X)
    assert "not constant" in str(info.value)
    assert_points_at(info.value, sign_of_complex, "np.sign(z)", __file__)


def _phases(n):
    return np.exp(1j * np.arange(n))


def times_phases_of_a_helper(x):
    return np.sum(np.abs(x * _phases(4)))


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "the result of a call of a user function that receives no differentiated value is an "
    "array of unknown dtype, taken as real: a complex one reaches np.abs's rule for reals"))
def test_complex_values_returned_by_an_undifferentiated_helper():
    check_grads(times_phases_of_a_helper, X[:4])


def test_a_real_rule_meeting_a_complex_value_is_refused():
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(sorted_spectrum)(X)
    assert "holds for real numbers only" in str(info.value)
    assert "complex=True" in str(info.value)
    assert_points_at(info.value, sorted_spectrum, "np.sort(z)", __file__)


def test_a_user_rule_without_complex_is_refused_on_complex_values():
    @s2sgrad.vjp_rule(_real_only, shape="elementwise")
    def _real_only_vjp(g, ans, v):
        return 2.0 * g

    try:
        with pytest.raises(TransformError) as info:
            s2sgrad.gradient(user_rule_for_reals)(X)
        assert "holds for real numbers only" in str(info.value)
        assert_points_at(info.value, user_rule_for_reals, "_real_only(np.fft.fft(x))",
                         __file__)

        s2sgrad.vjp_rule(_real_only, shape="elementwise", complex=True)(_real_only_vjp)
        check_grads(user_rule_for_reals, X)
    finally:
        registry._RULES.pop(_real_only, None)
