"""Programs that use the rules of rules/decompositions.py and the norms of rules/linalg.py as
people write them: a Gaussian likelihood through a Cholesky factor, least squares through a
pseudo-inverse, walks on a graph with matrix powers, batched linear systems, robust losses
with 1-, inf- and 0-norms, a norm of an order held in a global, and, where SciPy is installed,
a linear ODE with expm, the Bures distance with sqrtm, whitening with solve_triangular, a
Gaussian energy through scipy's cholesky, a smoother through solve_banded and a Lyapunov
equation with solve_sylvester; batched solves whose right-hand side is a global. Each is checked against finite differences in both
modes, and to second order where the function is smooth there; the calls the rules do not
cover are refused with a message that says what to write instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads, numeric_gradient

try:
    import scipy.linalg
except ImportError:
    scipy = None

needs_scipy = pytest.mark.skipif(scipy is None, reason="scipy is not installed")

rng = np.random.default_rng(11)


def well_conditioned(n, *batch):
    return rng.standard_normal(batch + (n, n)) * 0.3 + 2.0 * np.eye(n)


# --- cholesky and solve: the log-likelihood of points under a Gaussian ---------------------


def gaussian_log_likelihood(factor, mean, points):
    covariance = factor @ factor.T + np.eye(3)
    low = np.linalg.cholesky(covariance)
    total = -len(points) * np.sum(np.log(np.diag(low)))
    for point in points:
        z = np.linalg.solve(low, point - mean)
        total = total - 0.5 * z @ z
    return total


def test_gaussian_log_likelihood_in_a_loop():
    factor, mean, points = rng.standard_normal((3, 3)), rng.standard_normal(3), \
        rng.standard_normal((4, 3))
    check_grads(gaussian_log_likelihood, factor, mean, points, order=2, modes=("rev", "fwd"))
    # the same gradient through a tensor's backward()
    t = s2sgrad.tensor(factor, requires_grad=True)
    gaussian_log_likelihood(t, mean, points).backward()
    np.testing.assert_allclose(np.asarray(t.grad),
                               numeric_gradient(gaussian_log_likelihood,
                                                [factor, mean, points], 0),
                               rtol=1e-6, atol=1e-8)


def test_upper_cholesky_factor_of_a_stack():
    def log_dets(a):
        upper = np.linalg.cholesky(a @ np.swapaxes(a, -1, -2), upper=True)
        return 2.0 * np.sum(np.log(np.diagonal(upper, axis1=-2, axis2=-1)))

    a = well_conditioned(3, 2)
    check_grads(log_dets, a, order=2, modes=("rev", "fwd"))
    np.testing.assert_allclose(s2sgrad.gradient(log_dets)(a),
                               2.0 * np.swapaxes(np.linalg.inv(a), -1, -2), rtol=1e-10)


# --- pinv: least squares fitted in a helper, scored on held-out data -------------------------


def fit(features, targets):
    return np.linalg.pinv(features) @ targets


def held_out_error(features, targets, test_features, test_targets):
    weights = fit(features, targets)
    residual = test_features @ weights - test_targets
    return np.mean(residual ** 2) + 0.1 * np.linalg.norm(weights, 1)


def minimum_norm_solution(a, b):
    return np.sum(np.linalg.pinv(a) @ b)


def test_least_squares_through_pinv():
    features, targets = rng.standard_normal((6, 3)), rng.standard_normal(6)
    test_features, test_targets = rng.standard_normal((4, 3)), rng.standard_normal(4)
    check_grads(held_out_error, features, targets, test_features, test_targets, order=2,
                modes=("rev", "fwd"))
    # a wide matrix: the minimum-norm solution
    check_grads(minimum_norm_solution, rng.standard_normal((2, 4)), rng.standard_normal(2),
                order=2, modes=("rev", "fwd"))


# --- matrix_power: walks on a weighted graph --------------------------------------------------


def walk_weights(adjacency, steps):
    total = 0.0
    for k in range(1, 4):
        # closed walks of length k, as in log det(I - A) = -sum_k tr(A^k) / k
        total = total - np.trace(np.linalg.matrix_power(adjacency, k)) / k
    return total + np.sum(np.linalg.matrix_power(adjacency + 2.0 * np.eye(3), -2) * steps)


def test_matrix_powers_in_a_loop():
    adjacency = rng.uniform(0.0, 0.3, (3, 3))
    check_grads(walk_weights, adjacency, rng.standard_normal((3, 3)), order=2,
                modes=("rev", "fwd"))


# --- solve on stacks and norms along axes: many small systems at once ------------------------


def batched_systems(matrices, rhs, shared):
    columns = np.linalg.solve(matrices, rhs)  # (k, n, m): a stack of matrix right-hand sides
    vectors = np.linalg.solve(matrices, shared)  # one vector for every matrix of the stack
    return (np.sum(np.linalg.norm(columns, 3, axis=1)) + np.sum(np.linalg.norm(vectors, axis=-1))
            + np.sum(np.linalg.norm(matrices, "fro", axis=(1, 2)) ** 2))


def test_batched_solves_and_norms():
    matrices = well_conditioned(3, 4)
    check_grads(batched_systems, matrices, rng.standard_normal((4, 3, 2)),
                rng.standard_normal(3), order=2, modes=("rev", "fwd"))


# right-hand sides read from the module: their ranks are known only at run time
VECTORS = rng.standard_normal((5, 4))
COLUMNS = rng.standard_normal((5, 4, 6))


def solve_with_global_vectors(a):
    return np.linalg.solve(a, VECTORS[..., None])[..., 0]


def solve_with_global_columns(a):
    return np.linalg.solve(a, COLUMNS)


@pytest.mark.parametrize("fn", [solve_with_global_vectors, solve_with_global_columns])
def test_batched_solves_with_a_global_right_hand_side(fn):
    # the forward-mode rule tests a's rank only, which the argument fixes
    a = rng.standard_normal((5, 4, 4)) + 5.0 * np.eye(4)
    check_grads(fn, a, order=2, modes=("rev", "fwd"))


# --- 1-, inf-, -inf- and 0-norms: a robust fitting objective -----------------------------------


@s2sgrad.grad
def robust_objective(weights, inputs, target):
    residual = weights @ inputs - target
    worst = np.linalg.norm(residual, np.inf)
    best = np.linalg.norm(residual, ord=-np.inf)
    active = np.linalg.norm(residual, 0)  # the count of nonzero residuals: no gradient
    return (worst + 0.5 * np.linalg.norm(residual, 1) - 0.1 * best + active
            + np.linalg.norm(weights, np.inf) + np.linalg.norm(weights, -1))


def test_robust_objective_with_piecewise_linear_norms():
    weights, inputs, target = rng.standard_normal((4, 3)), rng.standard_normal(3), \
        rng.standard_normal(4)
    check_grads(robust_objective, weights, inputs, target, order=2, modes=("rev", "fwd"))
    residual = weights @ inputs - target
    top = np.argmax(np.abs(residual))
    gradient = s2sgrad.gradient(robust_objective, 2)(weights, inputs, target)
    # the largest residual alone moves the inf-norm (and the 1-norm moves every one)
    expected = -0.5 * np.sign(residual)
    expected[top] -= np.sign(residual[top])
    expected[np.argmin(np.abs(residual))] += 0.1 * np.sign(residual[np.argmin(np.abs(residual))])
    np.testing.assert_allclose(gradient, expected, rtol=1e-12)
    t = s2sgrad.tensor(weights, requires_grad=True)
    robust_objective(t, inputs, target).backward()
    np.testing.assert_allclose(np.asarray(t.grad),
                               s2sgrad.gradient(robust_objective)(weights, inputs, target),
                               rtol=1e-12)


def peak_responses(images, weights):
    # images (k, h, w): the largest row sum of |image| and the smallest column sum, per
    # image; the largest and smallest magnitude along one axis
    largest_rows = np.linalg.norm(images, np.inf, axis=(1, 2))
    peaks = np.linalg.norm(images, np.inf, axis=-1)
    floors = np.linalg.norm(images, ord=-np.inf, axis=0, keepdims=True)
    return np.sum(largest_rows ** 2) + np.sum(peaks * weights) + np.sum(floors ** 3)


def smallest_row_sums(images):
    return np.sum(np.linalg.norm(images, -np.inf, axis=(2, 1), keepdims=True))


def test_a_matrix_norm_of_a_computed_order_is_refused():
    """-np.inf is computed (a negation), so its value is not known when compiling, and a
    matrix order known only at run time may be one without a rule (2, -2, 'nuc')."""
    with pytest.raises(s2sgrad.TransformError, match="order known only at run time"):
        s2sgrad.gradient(smallest_row_sums)(rng.standard_normal((2, 3, 4)))


def test_inf_norms_of_a_stack_along_axes():
    images = rng.uniform(0.3, 2.0, (2, 3, 4)) * rng.choice([-1.0, 1.0], (2, 3, 4))
    check_grads(peak_responses, images, rng.standard_normal((2, 3)), order=2,
                modes=("rev", "fwd"))
    # the largest row of each image alone carries the inf-norm's gradient: sign(x) there
    gradient = s2sgrad.gradient(largest_row_sum)(images)
    for k in range(2):
        top = np.argmax(np.sum(np.abs(images[k]), axis=1))
        expected = np.zeros((3, 4))
        expected[top] = np.sign(images[k, top])
        np.testing.assert_array_equal(gradient[k], expected)


def largest_row_sum(images):
    return np.sum(np.linalg.norm(images, np.inf, axis=(1, 2)))


# --- an order that is not a constant of the source --------------------------------------------


def generalized_mean_pool(features, p):
    # the p-norm of each row, for a p passed in (known only when the code runs)
    pooled = np.linalg.norm(features, p, axis=1)
    return np.sum(pooled * np.arange(1.0, 4.0)) + np.linalg.norm(features[0], -p)


def test_norm_of_an_order_known_at_run_time():
    features = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    for p in (2.5, 1.0, np.inf):
        check_grads(generalized_mean_pool, features, p, wrt=0, order=2, modes=("rev", "fwd"))


# --- what is refused, and what to write instead ----------------------------------------------


def spectral_norm(a):
    return np.linalg.norm(a, 2)


def nuclear_norm_kept(a):
    return np.sum(np.linalg.norm(a, ord="nuc", keepdims=True))


def singular_value_norms(a, b):
    # the matrix norms of the singular values, as written: 'nuc', and 2 and -2 with the
    # matrix's axes in the call (of one matrix, and of a stack of them)
    stack = np.stack([a, a @ b, b.T])
    return (np.linalg.norm(a, "nuc") + np.linalg.norm(a @ b, ord=2, axis=(0, 1)) ** 2
            + np.linalg.norm(b, -2, (1, 0)) + np.sum(np.linalg.norm(stack, "nuc", axis=(1, 2)))
            + np.sum(np.linalg.norm(stack, 2, axis=(2, 1)) ** 2))


def test_matrix_norms_of_the_singular_values():
    check_grads(singular_value_norms, well_conditioned(3), well_conditioned(3), order=2,
                modes=("rev", "fwd"))


def truncated_pinv(a):
    return np.sum(np.linalg.pinv(a, rcond=1e-3))


def symmetric_pinv(a):
    return np.sum(np.linalg.pinv(a, hermitian=True))


@pytest.mark.parametrize("fn, words", [
    (spectral_norm, ["ord=2) of a matrix is a function of its singular values",
                     "names the matrix's axes (axis=(0, 1))",
                     "np.max (np.min) of the same for 2"]),
    (nuclear_norm_kept, ["ord='nuc') of a matrix",
                         "np.sum(np.linalg.svd(a, compute_uv=False), axis=-1)"]),
    (truncated_pinv, ["rcond=...) drops the singular values", "Leave out rcond="]),
    (symmetric_pinv, ["hermitian=True) reads only one triangle", "np.linalg.pinv(a)"]),
])
def test_refused_calls_say_what_to_write(fn, words):
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(fn)(well_conditioned(3))
    for text in words:
        assert text in str(info.value)


# --- SciPy: expm, sqrtm, solve_triangular, solve_sylvester ----------------------------------


def trajectory_loss(generator, start, targets):
    loss = 0.0
    for k in range(3):
        state = scipy.linalg.expm(generator * (0.5 * (k + 1))) @ start
        loss = loss + np.sum((state - targets[k]) ** 2)
    return loss


def flow_total(t, a):
    return np.sum(scipy.linalg.expm(t * a))


@needs_scipy
def test_linear_ode_with_expm():
    generator = rng.standard_normal((3, 3)) * 0.4
    check_grads(trajectory_loss, generator, rng.standard_normal(3),
                rng.standard_normal((3, 3)), order=2, modes=("rev", "fwd"))
    # the derivative of expm(t A) in t is A expm(t A)
    a = rng.standard_normal((3, 3)) * 0.4
    derivative = s2sgrad.gradient(flow_total, 0)(0.7, a)
    np.testing.assert_allclose(derivative, np.sum(a @ scipy.linalg.expm(0.7 * a)), rtol=1e-10)


def bures_distance(first, second):
    # the squared Bures-Wasserstein distance between two covariance matrices
    root = scipy.linalg.sqrtm(first)
    return np.trace(first + second - 2.0 * scipy.linalg.sqrtm(root @ second @ root))


@needs_scipy
def test_bures_distance_with_sqrtm():
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    first, second = a @ a.T + np.eye(3), b @ b.T + np.eye(3)
    check_grads(bures_distance, first, second, order=2, modes=("rev", "fwd"))


@s2sgrad.grad
def whitened_energy(covariance, samples):
    low = np.linalg.cholesky(covariance)
    energy = 0.0
    for sample in samples:
        white = scipy.linalg.solve_triangular(low, sample, lower=True)
        energy = energy + white @ white
    back = scipy.linalg.solve_triangular(low, samples.T, trans="T", lower=True)
    return energy + 0.1 * np.sum(back)


@needs_scipy
def test_whitening_with_solve_triangular():
    a = rng.standard_normal((3, 3))
    covariance, samples = a @ a.T + np.eye(3), rng.standard_normal((4, 3))
    check_grads(whitened_energy, covariance, samples, order=2, modes=("rev", "fwd"))
    t = s2sgrad.tensor(samples, requires_grad=True)
    whitened_energy(covariance, t).backward()
    np.testing.assert_allclose(np.asarray(t.grad),
                               numeric_gradient(whitened_energy, [covariance, samples], 1),
                               rtol=1e-6, atol=1e-8)


def factor_energy(covariance, samples):
    # the same Gaussian energy through the upper factor (the default) and the lower one
    upper = scipy.linalg.cholesky(covariance)
    low = scipy.linalg.cholesky(covariance, lower=True)
    white = scipy.linalg.solve_triangular(upper, samples.T, trans="T")
    return np.sum(white ** 2) + np.sum(np.log(np.diag(low))) + 0.1 * np.sum(upper * low.T)


@needs_scipy
def test_gaussian_energy_with_scipy_cholesky():
    a = rng.standard_normal((3, 3))
    covariance, samples = a @ a.T + np.eye(3), rng.standard_normal((4, 3))
    check_grads(factor_energy, covariance, samples, order=2, modes=("rev", "fwd"))
    # scipy.linalg.cholesky(a, lower=True) is np.linalg.cholesky(a), gradient included
    np.testing.assert_allclose(
        s2sgrad.gradient(lambda c: np.sum(np.sin(scipy.linalg.cholesky(c, lower=True))))(
            covariance),
        s2sgrad.gradient(lambda c: np.sum(np.sin(np.linalg.cholesky(c))))(covariance),
        rtol=1e-12)


def tridiagonal_smoother(diagonal, off, signal):
    # a smoothing spline's system: (I + D^T D) x = y with D the second difference, in the
    # tridiagonal band form scipy.linalg.solve_banded reads
    n = len(signal)
    ab = np.stack([np.concatenate([[0.0], off]), diagonal, np.concatenate([off, [0.0]])])
    smooth = scipy.linalg.solve_banded((1, 1), ab, signal)
    return np.sum((smooth - signal) ** 2) + np.sum(smooth[1:] * smooth[:-1]) / n


@needs_scipy
def test_tridiagonal_smoother_with_solve_banded():
    n = 6
    diagonal = 3.0 + rng.uniform(0.0, 1.0, n)
    off = rng.uniform(-1.0, 1.0, n - 1)
    check_grads(tridiagonal_smoother, diagonal, off, rng.standard_normal(n), order=2,
                modes=("rev", "fwd"))


def overwriting_banded(ab, b):
    return np.sum(scipy.linalg.solve_banded((1, 1), ab, b, overwrite_b=True))


def cholesky_of_a_computed_side(a, lower):
    return np.sum(scipy.linalg.cholesky(a, lower=lower))


@needs_scipy
def test_scipy_linalg_calls_the_rules_do_not_cover_say_what_to_write():
    ab = np.stack([np.ones(4), 3.0 * np.ones(4), np.ones(4)])
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(overwriting_banded)(ab, rng.standard_normal(4))
    assert "overwrite_b=True) may overwrite" in str(info.value)
    assert "Leave out overwrite_b=" in str(info.value)
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(cholesky_of_a_computed_side)(well_conditioned(3), np.bool_(True))
    assert "must be written as True or False" in str(info.value)


def lyapunov_cost(dynamics, noise):
    # the stationary covariance X of dx = A x dt + noise: A X + X A^T = -Q
    covariance = scipy.linalg.solve_sylvester(dynamics, dynamics.T, -noise @ noise.T)
    return np.trace(covariance) + np.sum(covariance ** 2)


@needs_scipy
def test_lyapunov_equation_with_solve_sylvester():
    dynamics = rng.standard_normal((3, 3)) * 0.3 - 1.5 * np.eye(3)
    check_grads(lyapunov_cost, dynamics, rng.standard_normal((3, 2)), order=2,
                modes=("rev", "fwd"))


@needs_scipy
def test_solve_triangular_overwriting_b_is_refused():
    def overwriting(a, b):
        return np.sum(scipy.linalg.solve_triangular(a, b, lower=True, overwrite_b=True))

    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(overwriting)(well_conditioned(3), rng.standard_normal(3))
    assert "overwrite_b=True) may overwrite b" in str(info.value)
    assert "Leave out overwrite_b=" in str(info.value)


def norm_of_order(x, order):
    return np.linalg.norm(x, ord=order) ** 2


@pytest.mark.parametrize("order", [1, 2, 3.5, np.inf, -np.inf, -1])
def test_a_vector_norm_whose_order_is_an_argument(order):
    """The order arrives at run time: every vector order is chosen there."""
    check_grads(norm_of_order, rng.standard_normal(5) + 0.1, order, wrt=0,
                modes=("rev", "fwd"))


@pytest.mark.parametrize("order", ["nuc", 2, "fro", 1])
def test_a_matrix_norm_whose_order_is_an_argument_is_refused(order):
    """Never a nan or a wrong number: the singular-value orders are differentiated only
    where the call writes them, and which one arrives is not known when compiling."""
    with pytest.raises(s2sgrad.TransformError, match="order known only at run time"):
        s2sgrad.gradient(norm_of_order)(rng.standard_normal((3, 3)), order)
