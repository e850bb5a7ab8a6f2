"""Programs that use the rules of rules/products.py as people write them: cross products over
a mesh and along a trajectory, a convolution filter, survival curves with cumprod, Kronecker
covariances, inner-product attention, NaN-aware bounds with fmax/fmin, sinc interpolation and
nan_to_num filling of missing data. Each is checked against finite differences in both modes,
and to second order where the function is smooth there.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads, numeric_gradient

rng = np.random.default_rng(7)


# --- cross: triangle areas of a mesh, angular momentum along a trajectory ---------------------


def triangle_normals(vertices, faces):
    edge1 = vertices[faces[:, 1]] - vertices[faces[:, 0]]
    edge2 = vertices[faces[:, 2]] - vertices[faces[:, 0]]
    return np.cross(edge1, edge2)


def mesh_area(vertices, faces):
    return 0.5 * np.sum(np.linalg.norm(triangle_normals(vertices, faces), axis=1))


def test_mesh_area_through_a_helper():
    vertices = rng.standard_normal((5, 3))
    faces = np.array([[0, 1, 2], [0, 2, 3], [1, 3, 4], [2, 4, 0]])
    check_grads(mesh_area, vertices, faces, order=2, modes=("rev", "fwd"))


def angular_momentum(positions, velocities, masses, dt):
    # positions and velocities are (3, n): one column per particle, the vectors along axis 0
    total = np.zeros(3)
    for _ in range(4):
        positions = positions + dt * velocities
        velocities = velocities - dt * positions
        momentum = np.cross(positions, masses * velocities, axis=0)
        total = total + np.sum(momentum, axis=1)
    return np.sum(total * np.array([1.0, -2.0, 0.5]))


def test_angular_momentum_in_a_loop():
    args = (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.uniform(0.5, 2.0, 4))
    check_grads(angular_momentum, *args, 0.1, order=2, modes=("rev", "fwd"))


# --- convolve: a learned smoothing filter --------------------------------------------------


@s2sgrad.grad
def filter_loss(logits, signal, target):
    kernel = np.exp(logits) / np.sum(np.exp(logits))
    smoothed = np.convolve(signal, kernel, mode="same")
    trend = np.convolve(smoothed, np.array([0.25, 0.5, 0.25]), "valid")
    return np.mean((smoothed - target) ** 2) + 0.1 * np.sum(trend ** 2)


def test_smoothing_filter_with_convolve():
    logits, signal = rng.standard_normal(3), rng.standard_normal(12)
    target = np.sin(np.linspace(0.0, 3.0, 12))
    check_grads(filter_loss, logits, signal, target, order=2, modes=("rev", "fwd"))


# --- cumprod: survival curves, and discounts that end an episode ----------------------------


def survival_log_likelihood(z, events):
    hazard = 1.0 / (1.0 + np.exp(-z))
    survival = np.cumprod(1.0 - hazard, axis=1)
    alive = np.concatenate((np.ones((np.shape(z)[0], 1)), survival[:, :-1]), axis=1)
    return np.sum(events * np.log(alive * hazard) + (1.0 - events) * np.log(survival))


def test_survival_curves_with_cumprod():
    z = rng.standard_normal((3, 5))
    events = (rng.uniform(size=(3, 5)) < 0.3).astype(float)
    check_grads(survival_log_likelihood, z, events, order=2, modes=("rev", "fwd"))


def discounted_return(discounts, rewards):
    # a discount of 0 ends an episode: later rewards count for nothing, but the gradient in
    # that discount is what they would have added
    weights = np.cumprod(discounts, axis=-1)
    return np.sum(weights * rewards) + np.sum(discounts.cumprod() ** 2)


def test_cumprod_through_zeros():
    discounts = np.array([[0.9, 0.0, 0.8, 0.95], [0.0, 0.7, 0.0, 0.9], [0.99, 0.9, 0.85, 0.0]])
    rewards = rng.standard_normal((3, 4))
    check_grads(discounted_return, discounts, rewards, order=2, modes=("rev", "fwd"))
    # the same gradient through a tensor's backward()
    d = s2sgrad.tensor(discounts, requires_grad=True)
    s2sgrad.grad(discounted_return)(d, rewards).backward()
    np.testing.assert_allclose(d.grad, numeric_gradient(discounted_return, [discounts, rewards],
                                                        0), rtol=1e-6, atol=1e-8)


# --- kron and inner: structured covariances, attention scores ------------------------------


def kron_quadratic_form(a, b, v):
    covariance = np.kron(a @ a.T, b @ b.T) + np.eye(6)
    return v @ covariance @ v + np.sum(np.kron(np.diag(a), v[:2]))


def test_kronecker_covariance():
    check_grads(kron_quadratic_form, rng.standard_normal((2, 2)), rng.standard_normal((3, 3)),
                rng.standard_normal(6), order=2, modes=("rev", "fwd"))


def attend(queries, keys, values):
    scores = np.inner(queries, keys) / np.sqrt(np.shape(keys)[-1])
    weights = np.exp(scores - np.max(scores, axis=1, keepdims=True))
    weights = weights / np.sum(weights, axis=1, keepdims=True)
    return np.sum(np.tanh(weights @ values)) + np.inner(queries[0], keys[1])


def test_inner_attention_scores():
    check_grads(attend, rng.standard_normal((2, 4)), rng.standard_normal((3, 4)),
                rng.standard_normal((3, 2)), order=2, modes=("rev", "fwd"))


# --- fmax/fmin: bounds where a NaN means "no bound" -----------------------------------------


def bounded_penalty(x, lower, upper):
    clipped = np.fmin(np.fmax(x, lower), upper)
    return np.sum(clipped ** 2 + np.fmax(x, 0.0) * x)


def test_fmax_fmin_with_missing_bounds():
    x = np.array([-1.3, 0.4, 2.2, -0.2, 1.1])
    lower = np.array([-1.0, np.nan, 0.0, np.nan, -2.0])
    upper = np.array([np.nan, 1.0, 2.0, np.nan, 0.5])
    check_grads(bounded_penalty, x, lower, upper, order=2, modes=("rev", "fwd"))
    # a NaN bound is no bound at all: x gets its gradient there, the bound none
    gx, glower, gupper = s2sgrad.gradient(bounded_penalty, (0, 1, 2))(x, lower, upper)
    np.testing.assert_allclose(gx[3], 2.0 * x[3])
    assert glower[3] == 0.0 and gupper[3] == 0.0 and glower[1] == 0.0


def weighted_fmax_of_itself(x):
    return np.sum(np.fmax(x, x) * np.array([1.0, 2.0, 3.0]))


def fmax_times_fmin(a, b):
    return np.sum(np.fmax(a, b) * np.fmin(a, b) ** 2)


def maximum_times_minimum(a, b):
    return np.sum(np.maximum(a, b) * np.minimum(a, b) ** 2)


def test_fmax_splits_ties_like_maximum():
    x = np.array([0.5, -1.0, 2.0])
    # fmax(x, x) is x: the two halves of a tie add up to the whole gradient
    np.testing.assert_allclose(s2sgrad.gradient(weighted_fmax_of_itself)(x), [1.0, 2.0, 3.0])
    y = np.array([0.5, 1.0, -2.0])  # a tie, then no tie either way
    for wrt in (0, 1):
        np.testing.assert_allclose(s2sgrad.gradient(fmax_times_fmin, wrt)(x, y),
                                   s2sgrad.gradient(maximum_times_minimum, wrt)(x, y))


# --- sinc: band-limited interpolation, at the samples themselves -----------------------------


def interpolate(samples, times):
    # Whittaker-Shannon: at an integer time t the sinc of (t - k) is 1 at k and 0 elsewhere
    k = np.arange(np.shape(samples)[0])
    return np.sum(np.sinc(times[:, None] - k) * samples, axis=1)


def interpolated_sum(samples, times):
    return np.sum(interpolate(samples, times))


def test_sinc_interpolation_through_its_samples():
    samples = rng.standard_normal(6)
    times = np.array([0.0, 2.0, 2.5, 3.3, 5.0])  # three of them where sinc's argument is 0
    check_grads(interpolate, samples, times, order=2, modes=("rev", "fwd"))
    # at t = 2 only sample 2 moves the value, and the slope in t is the sum of sinc'(2 - k)
    dt = s2sgrad.gradient(interpolated_sum, 1)(samples, times)
    k = np.arange(6)
    slope = np.sum(samples * np.where(k == 2, 0.0, (np.cos(np.pi * (2.0 - k)) - np.sinc(
        2.0 - k)) / np.where(k == 2, 1.0, 2.0 - k)))
    np.testing.assert_allclose(dt[1], slope, rtol=1e-12)


# --- nan_to_num: missing data filled with a learned value ------------------------------------


def filled_regression(weights, fill, features, observed, target):
    data = np.where(observed, features, np.nan)
    filled = np.nan_to_num(data, nan=fill, posinf=2.0 * fill)
    return np.sum((np.tanh(filled @ weights) - target) ** 2)


def test_nan_to_num_with_a_learned_fill():
    features = rng.standard_normal((5, 3))
    observed = rng.uniform(size=(5, 3)) > 0.3
    args = (rng.standard_normal(3), 0.4, features, observed, rng.standard_normal(5))
    check_grads(filled_regression, *args, order=2, modes=("rev", "fwd"))
    w = s2sgrad.tensor(args[0], requires_grad=True)
    fill = s2sgrad.tensor(0.4, requires_grad=True)
    s2sgrad.grad(filled_regression)(w, fill, *args[2:]).backward()
    for i, t in enumerate((w, fill)):
        np.testing.assert_allclose(t.grad, numeric_gradient(filled_regression, list(args), i),
                                   rtol=1e-6, atol=1e-8)


def fill_in_place(x):
    return np.sum(np.nan_to_num(x, copy=False) ** 2)


def test_nan_to_num_in_place_is_refused():
    x = np.array([1.0, np.nan, 2.0])
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(fill_in_place)(x)
    message = str(info.value)
    assert "copy=False" in message and "leave copy at its default, True" in message


# --- several directions at once: Jacobians and Hessians ------------------------------------


def products_of(a, b):
    return np.sum(np.cumprod(np.cross(a, b), axis=1) ** 2) + np.sum(np.kron(a, b[:1]) ** 2)


WEIGHTS = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.6]])


def products_of_one(a):
    # one operand of each product moves
    rows = np.inner(a, WEIGHTS) + np.sum(np.cross(a, WEIGHTS[0]), axis=1)
    smooth = np.convolve(np.sinc(a[0]), WEIGHTS[1], "same") + np.cumprod(a[1] + 2.0)
    return rows * np.sum(np.kron(WEIGHTS, np.nan_to_num(smooth)))


def running_products(a):
    return np.cumprod(np.sinc(a), axis=1) * np.fmax(a, 0.3) - np.fmin(a[0], a[1])


def test_jacobians_and_hessians_of_products():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    # a Hessian takes several tangents at once where it can, one at a time where not
    hessian = s2sgrad.hessian(products_of)(a, b)
    grad_a = s2sgrad.gradient(products_of)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(hessian[i, j], numeric_gradient(
                lambda x, i=i, j=j: grad_a(x, b)[i, j], [a], 0), rtol=1e-5, atol=1e-7)
    for mode in ("fwd", "rev"):
        jacobian = s2sgrad.jacobian(products_of_one, mode=mode)(a)
        for i in range(2):
            for j in range(2):
                np.testing.assert_allclose(jacobian[i, j], numeric_gradient(
                    lambda x, i=i, j=j: products_of_one(x)[i, j], [a], 0), rtol=1e-6,
                    atol=1e-8)
    # rows of tangents through cumprod's forward-mode rule and the elementwise ones
    check_grads(running_products, a, modes=("rev", "fwd", "batch"))
