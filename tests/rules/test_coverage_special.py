"""Programs that use the rules of rules/special.py as people write them: a logistic regression,
a softmax classifier, beta and gamma likelihoods, a Wishart normaliser, von Mises and Bessel
models, a gamma CDF fit, a probit regression with ndtr, log_ndtr, ndtri and erfcx, softplus,
rgamma, betainc and gammasgn in one model, Gaussian tail probabilities, and the calls the rules
refuse. Each is
checked against finite differences in both modes, and to second order where the function is
smooth there (a second derivative differentiates the derivatives, which are special functions
again: digamma, polygamma, the neighbouring Bessel orders).
"""

from __future__ import annotations

import numpy as np
import pytest

special = pytest.importorskip("scipy.special")

import scipy
from scipy.special import digamma, gammaln, log_softmax, logsumexp, polygamma

import s2sgrad
from s2sgrad.rules import registry
from s2sgrad.testing import check_grads, numeric_gradient

rng = np.random.default_rng(11)


# --- the logistic function: a regularised logistic regression --------------------------------


@s2sgrad.grad
def logistic_loss(w, features, labels):
    z = features @ w
    # log s(z) for the positives, log s(-z) = log(1 - s(z)) for the negatives
    nll = -np.sum(labels * special.log_expit(z) + (1.0 - labels) * special.log_expit(-z))
    p = special.expit(z)
    calibration = np.sum((special.logit(0.25 + 0.5 * p) - z) ** 2)
    return nll + 0.1 * calibration + 0.01 * np.sum(w ** 2)


def logistic_nll(w, features, labels):
    z = features @ w
    return -np.sum(labels * special.log_expit(z) + (1.0 - labels) * special.log_expit(-z))


def test_logistic_regression():
    features, w = rng.standard_normal((6, 3)), rng.standard_normal(3)
    labels = (rng.uniform(size=6) < 0.5).astype(float)
    check_grads(logistic_loss, w, features, labels, order=2, modes=("rev", "fwd"))
    # the same gradient through a tensor's backward()
    t = s2sgrad.tensor(w, requires_grad=True)
    logistic_loss(t, features, labels).backward()
    np.testing.assert_allclose(t.grad, numeric_gradient(logistic_loss, [w, features, labels], 0),
                               rtol=1e-6, atol=1e-8)
    # the Hessian of the negative log-likelihood is X^T diag(p (1 - p)) X
    p = special.expit(features @ w)
    np.testing.assert_allclose(s2sgrad.hessian(logistic_nll)(w, features, labels),
                               features.T @ (features * (p * (1.0 - p))[:, None]), rtol=1e-10)


# --- softmax, log_softmax and logsumexp: a classifier with a temperature ----------------------


def cross_entropy(logits, onehot):
    return -np.sum(onehot * log_softmax(logits, axis=1))


def classifier_loss(weights, temperature, inputs, onehot):
    logits = inputs @ weights / temperature
    # free energy of each example, kept as a column, and the mean probability of each class
    energy = scipy.special.logsumexp(logits, axis=1, keepdims=True)
    mean_probability = np.mean(special.softmax(logits, axis=1), axis=0)
    return (cross_entropy(logits, onehot) + 0.1 * np.sum(energy ** 2)
            - np.sum(special.xlogy(mean_probability, mean_probability))
            + logsumexp(logits))


def test_softmax_classifier_through_a_helper():
    inputs, weights = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    onehot = np.eye(4)[[0, 2, 1, 3, 2]]
    check_grads(classifier_loss, weights, 1.5, inputs, onehot, order=2, modes=("rev", "fwd"))


def attention_pool(query, keys):
    # softmax over every entry of each (2, 3) block: a tuple axis
    scores = keys @ query
    weights = special.softmax(scores, axis=(1, 2))
    return np.sum(weights * scores) + np.sum(log_softmax(scores) ** 2)


def test_softmax_over_several_axes():
    check_grads(attention_pool, rng.standard_normal(4), rng.standard_normal((3, 2, 3, 4)),
                order=2, modes=("rev", "fwd"))


# --- gamma and beta functions: likelihoods fitted by their parameters ---------------------------


def beta_log_likelihood(log_a, log_b, data):
    a, b = np.exp(log_a), np.exp(log_b)
    total = 0.0
    for batch in data:  # a sum over batches in a loop
        total = total + np.sum(special.xlogy(a - 1.0, batch) + special.xlog1py(b - 1.0, -batch))
        total = total - np.shape(batch)[0] * special.betaln(a, b)
    # the same normaliser, written with gamma functions, as a check on the data's scale
    return total + np.log(special.beta(a, b)) - gammaln(a) - gammaln(b) + gammaln(a + b)


def test_beta_likelihood_in_a_loop():
    data = rng.uniform(0.1, 0.9, (3, 4))
    check_grads(beta_log_likelihood, 0.3, -0.2, data, order=2, modes=("rev", "fwd"))


def gamma_fit(shape, rate, x):
    # the gamma log-density, and its entropy, which holds digamma
    log_density = (shape * np.log(rate) - special.gammaln(shape) + special.xlogy(shape - 1.0, x)
                   - rate * x)
    entropy = shape - np.log(rate) + special.gammaln(shape) + (1.0 - shape) * special.psi(shape)
    return np.sum(log_density) + entropy + np.log(special.gamma(shape))


def test_gamma_fit_with_digamma_in_the_loss():
    # the gradient holds polygamma(1, .), the second derivatives polygamma(2, .)
    check_grads(gamma_fit, 2.3, 1.7, rng.uniform(0.2, 3.0, 6), order=2, modes=("rev", "fwd"))


def newton_step(shape, mean_log):
    # one Newton step of the gamma shape's maximum-likelihood equation
    # log(a) - digamma(a) = c, whose derivative is 1 / a - polygamma(1, a)
    residual = np.log(shape) - digamma(shape) - mean_log
    return shape - residual / (1.0 / shape - polygamma(1, shape))


def test_newton_step_with_polygamma():
    check_grads(newton_step, np.array([1.5, 3.0]), np.array([0.3, 0.1]), order=2,
                modes=("rev", "fwd"))


def wishart_log_normaliser(dof, scale):
    # log of the Wishart normaliser for 3 x 3 matrices: multigammaln with d = 3
    logdet = np.log(np.linalg.det(scale))
    return (0.5 * dof * 3 * np.log(2.0) + 0.5 * dof * logdet
            + special.multigammaln(0.5 * dof, 3))


def test_wishart_normaliser_with_multigammaln():
    scale = np.eye(3) * 1.5 + 0.2
    check_grads(wishart_log_normaliser, 5.5, scale, order=2, modes=("rev", "fwd"))
    # d/d dof of multigammaln(dof / 2, 3) is the mean of digamma over the three shifts
    got = s2sgrad.gradient(half_multigammaln)(5.5)
    np.testing.assert_allclose(got, 0.5 * np.sum(digamma(2.75 - 0.5 * np.arange(3))),
                               rtol=1e-12)


def half_multigammaln(dof):
    return special.multigammaln(0.5 * dof, 3)


# --- error functions: Gaussian probabilities and quantiles ---------------------------------------


def gaussian_tails(mu, sigma, x):
    z = (x - mu) / (sigma * np.sqrt(2.0))
    cdf = 0.5 * (1.0 + special.erf(z))
    upper = 0.5 * special.erfc(z)
    # quantiles back from the probabilities: erfinv and erfcinv undo erf and erfc
    back = special.erfinv(2.0 * cdf - 1.0) + special.erfcinv(2.0 * upper)
    return np.sum(np.log(cdf) + np.log(upper)) + np.sum(back ** 2)


def test_gaussian_tails():
    check_grads(gaussian_tails, 0.2, 1.3, rng.standard_normal(5), order=2,
                modes=("rev", "fwd"))


# --- Bessel functions: von Mises likelihood, a drum's modes ----------------------------------


def von_mises_nll(kappa, mu, angles):
    # log I0(kappa) = log(i0e(kappa)) + kappa, stable for large kappa
    log_norm = np.log(2.0 * np.pi * special.i0e(kappa)) + kappa
    mean_resultant = special.i1(kappa) / special.i0(kappa)
    return (np.shape(angles)[0] * log_norm - kappa * np.sum(np.cos(angles - mu))
            + (mean_resultant - special.ive(1, kappa) / special.i0e(kappa)) ** 2
            + special.i1e(kappa) + special.iv(2, kappa))


def test_von_mises_likelihood():
    check_grads(von_mises_nll, 2.5, 0.3, rng.uniform(-1.0, 1.0, 7), order=2,
                modes=("rev", "fwd"))


def drum_displacement(radius, amplitudes, r):
    # the radial modes J_n(k r) of a drum, summed in a loop over orders; k is fixed by the
    # radius through the first zero of J_0
    k = 2.404825557695773 / radius
    total = special.j0(k * r) * amplitudes[0]
    for n in range(1, 3):
        total = total + special.jv(n, k * r) * amplitudes[n]
    # the outside field: Bessel functions of the second kind
    outside = special.y0(r + 1.0) + special.y1(r + 1.0) + special.yn(2, r + 1.0) \
        + special.yv(1.5, r + 1.0) + special.j1(r) + special.jv(0.5, r + 0.1)
    return np.sum(total ** 2 + outside)


def test_drum_modes_in_a_loop():
    r = rng.uniform(0.1, 0.9, 5)
    check_grads(drum_displacement, 1.2, rng.standard_normal(3), r, order=2,
                modes=("rev", "fwd"))


# --- incomplete gamma functions: fitting a CDF in its scale ----------------------------------

SHAPE = 2.5  # the shape parameter a is held fixed: the rules differentiate in x only


def gamma_cdf_fit(scale, times, observed):
    predicted = special.gammainc(SHAPE, times / scale)
    survival = special.gammaincc(3, times / scale)
    return np.sum((predicted - observed) ** 2) + np.sum(np.log(survival))


def test_gamma_cdf_fit_in_the_scale():
    times = rng.uniform(0.5, 4.0, 6)
    observed = rng.uniform(0.1, 0.9, 6)
    check_grads(gamma_cdf_fit, 1.8, times, observed, order=2, modes=("rev", "fwd"))


# --- the normal distribution function, its logarithm and inverse: a probit model -------------


def probit_loss(w, features, labels, levels):
    z = features @ w
    nll = -np.sum(labels * special.log_ndtr(z) + (1.0 - labels) * special.log_ndtr(-z))
    # quantiles of the predicted probabilities, and the scaled complementary error function
    # of the margins (a Mills ratio)
    quantiles = special.ndtri(0.05 + 0.9 * special.ndtr(z))
    mills = special.erfcx(np.abs(z) / np.sqrt(2.0))
    return nll + 0.1 * np.sum((quantiles - levels) ** 2) + 0.01 * np.sum(mills)


def test_probit_regression():
    features, w = rng.standard_normal((6, 3)), 0.5 * rng.standard_normal(3)
    labels = (rng.uniform(size=6) < 0.5).astype(float)
    check_grads(probit_loss, w, features, labels, rng.standard_normal(6), order=2,
                modes=("rev", "fwd"))


def test_log_ndtr_far_in_the_lower_tail():
    # phi(x) / Phi(x) is about -x there, where ndtr itself is 0 in floating point
    x = np.array([-30.0, -45.0])
    got = s2sgrad.gradient(lambda t: np.sum(special.log_ndtr(t)))(x)
    np.testing.assert_allclose(got, -x, rtol=2e-3)


# --- softplus, rgamma, betainc and gammasgn ---------------------------------------------------


def beta_binomial_terms(rate, x):
    # a softplus rate, the reciprocal gamma of a shifted rate, and a beta CDF of fixed shapes
    r = special.softplus(rate)
    return (np.sum(special.rgamma(r + 0.5) * special.gammasgn(r - 2.5))
            + np.sum(special.betainc(2.0, 3, x * special.expit(rate))))


def test_softplus_rgamma_and_betainc_in_a_model():
    rate, x = rng.standard_normal(4), rng.uniform(0.1, 0.9, 4)
    check_grads(beta_binomial_terms, rate, x, order=2, modes=("rev", "fwd"))


def test_gammasgn_is_piecewise_constant():
    assert registry.is_nondifferentiable(special.gammasgn)
    np.testing.assert_array_equal(
        s2sgrad.gradient(lambda x: np.sum(special.gammasgn(x) * x))(np.array([-1.5, 0.5])),
        [1.0, 1.0])


def betainc_in_shape(a, x):
    return np.sum(special.betainc(a, 2.0, x))


def test_betainc_in_its_shapes_is_refused():
    with pytest.raises(s2sgrad.TransformError,
                       match=r"betainc\(\) is not differentiated with respect to its "
                             r"argument 'a'"):
        s2sgrad.gradient(betainc_in_shape)(1.5, rng.uniform(0.1, 0.9, 3))
    check_grads(betainc_in_shape, 2, rng.uniform(0.1, 0.9, 3), wrt=1, order=2,
                modes=("rev", "fwd"))


# --- the functions a user reaches the rules by ------------------------------------------------


def test_rules_are_found_however_the_function_is_imported():
    from scipy.special import softmax as imported_softmax

    assert registry.lookup(logsumexp) is registry.lookup(scipy.special.logsumexp)
    assert registry.lookup(imported_softmax) is not None
    assert registry.lookup(special.psi) is registry.lookup(special.digamma)
    assert registry.jvp_lookup(scipy.special.logsumexp) is not None


# --- what the rules refuse -------------------------------------------------------------------


def weighted_logsumexp(a, b):
    # a mixture's log-likelihood: weights b, differentiated too
    return logsumexp(a, b=b) + np.sum(logsumexp(np.outer(a, b), axis=1, b=b[::-1]) ** 2)


def test_logsumexp_with_weights():
    a, b = rng.standard_normal(4), rng.uniform(0.5, 2.0, 4)
    check_grads(weighted_logsumexp, a, b, order=2, modes=("rev", "fwd"))


def signed_logsumexp(a):
    value, sign = scipy.special.logsumexp(a, axis=0, return_sign=True)
    return np.sum(value * sign)


def test_logsumexp_with_its_sign_is_refused():
    with pytest.raises(s2sgrad.TransformError, match=r"return_sign=True.*drop return_sign"):
        s2sgrad.gradient(signed_logsumexp)(rng.standard_normal((3, 2)))
