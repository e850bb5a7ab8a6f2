"""Programs that use the rules of rules/stats.py and rules/signal.py as people write them: a
Student-t regression fitted by its likelihood, a Bayesian posterior with gamma and beta
priors, a Poisson GLM with censored counts, a Dirichlet-multinomial, a multivariate normal in
its mean and a covariance built from a factor, a robust regression with Cauchy, Laplace and
logistic noise and half-line priors, exponential and log-normal survival times with censoring,
a smoothed 1-d signal, a filtered image, a
finite-difference regulariser, a piecewise loss, a trimmed loss, and the calls the rules
refuse. Each is checked against finite differences in both modes, and to second order where
the function is smooth there.
"""

from __future__ import annotations

import numpy as np
import pytest

st = pytest.importorskip("scipy.stats")

import scipy.signal
from scipy.special import gammaln, softmax
from scipy.stats import multivariate_normal, norm

import s2sgrad
from s2sgrad.rules import registry
from s2sgrad.testing import check_grads, numeric_gradient

rng = np.random.default_rng(23)


# --- a regression with Gaussian and Student-t noise, fitted in mini-batches -----------------


def robust_regression_nll(w, log_scale, log_df, features, targets):
    scale, df = np.exp(log_scale), 1.0 + np.exp(log_df)
    total = 0.0
    for start in range(0, np.shape(features)[0], 4):  # mini-batches of four rows
        residual = targets[start:start + 4] - features[start:start + 4] @ w
        total = total - np.sum(st.t.logpdf(residual, df, scale=scale))
    # a Gaussian fit of the same data, by keyword, as a reference term
    gaussian = -np.sum(norm.logpdf(targets, loc=features @ w, scale=2.0 * scale))
    return total + 0.1 * gaussian + 0.5 * np.sum(w ** 2) + st.t.entropy(df, scale=scale)


def test_student_t_regression_in_mini_batches():
    features, w = rng.standard_normal((8, 3)), rng.standard_normal(3)
    targets = features @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.standard_t(4.0, 8)
    check_grads(robust_regression_nll, w, -0.3, 0.8, features, targets, order=2,
                modes=("rev", "fwd"))


def test_gradient_descent_on_the_gaussian_likelihood_finds_the_mean_and_scale():
    data = rng.normal(1.5, 0.7, 200)

    def nll(theta):
        return -np.mean(norm.logpdf(data, theta[0], np.exp(theta[1])))

    step = s2sgrad.gradient(nll)
    theta = np.array([0.0, 0.0])
    for _ in range(400):
        theta = theta - 0.2 * step(theta)
    np.testing.assert_allclose([theta[0], np.exp(theta[1])], [np.mean(data), np.std(data)],
                               rtol=1e-4)


# --- a Bayesian posterior: gamma and beta priors, tail probabilities ------------------------


@s2sgrad.grad
def log_posterior(params, waits, successes, trials):
    log_rate, logit_p = params[0], params[1]
    rate = np.exp(log_rate)
    p = 1.0 / (1.0 + np.exp(-logit_p))
    # priors, with the change of variables to the unconstrained parameters
    prior = (st.gamma.logpdf(rate, 2.0, scale=0.5) + log_rate
             + st.beta.logpdf(p, 2.0, 5.0) + np.log(p * (1.0 - p)))
    # exponential waiting times, right-censored past 3 (their log survival), and successes
    observed = np.sum(st.gamma.logpdf(waits, 1.0, scale=1.0 / rate))
    censored = 2.0 * st.gamma.logsf(3.0, 1.0, scale=1.0 / rate)
    likelihood = np.sum(successes * np.log(p) + (trials - successes) * np.log1p(-p))
    return prior + observed + censored + likelihood + 0.01 * st.chi2.logpdf(rate + 1.0, 3.0)


def test_posterior_with_gamma_and_beta_priors():
    waits = rng.exponential(0.8, 6)
    successes, trials = np.array([3.0, 1.0, 4.0]), np.array([10.0, 6.0, 9.0])
    params = np.array([0.2, -0.7])
    check_grads(log_posterior, params, waits, successes, trials, order=2,
                modes=("rev", "fwd"))
    # the same gradient through a tensor's backward()
    t = s2sgrad.tensor(params, requires_grad=True)
    log_posterior(t, waits, successes, trials).backward()
    np.testing.assert_allclose(
        t.grad, numeric_gradient(log_posterior, [params, waits, successes, trials], 0),
        rtol=1e-6, atol=1e-8)


def prior_probabilities(a, b, x):
    # distribution functions in x and in the loc and scale of each prior
    inside = st.beta.cdf(x, 2, 3, loc=a, scale=b) + st.beta.logsf(x, 3, 2, a, b)
    tails = st.gamma.cdf(x, 2, scale=b) * st.gamma.logcdf(x + 1.0, 3, loc=a)
    return np.sum(inside + tails + st.chi2.sf(x, 3, scale=b) + st.chi2.logcdf(x, 4, a))


def test_distribution_functions_of_the_priors():
    check_grads(prior_probabilities, -0.1, 1.3, rng.uniform(0.1, 1.0, 5), order=2,
                modes=("rev", "fwd"))


# --- a Poisson GLM: log link, exposures, censored counts ------------------------------------


def poisson_glm_nll(beta, features, counts, exposure, capped):
    rate = exposure * np.exp(features @ beta)
    exact = np.sum(st.poisson.logpmf(counts, rate))
    # counts recorded as "at least c": log P(N >= c) = logsf(c - 1)
    at_least = np.sum(st.poisson.logsf(capped - 1, rate[:2]))
    # and as "at most c": log P(N <= c)
    at_most = np.sum(st.poisson.logcdf(capped, rate[2:4]))
    mass = np.sum(st.poisson.pmf(counts, rate) + st.poisson.cdf(capped[0], rate)
                  - st.poisson.sf(capped[1], mu=rate))
    return -(exact + at_least + at_most) + 0.1 * mass


def test_poisson_glm_in_the_rate():
    features = rng.standard_normal((6, 2)) * 0.5
    counts = rng.poisson(2.0, 6)
    check_grads(poisson_glm_nll, np.array([0.3, -0.2]), features, counts,
                rng.uniform(1.0, 2.0, 6), np.array([2, 3]), order=2, modes=("rev", "fwd"))


# --- a Dirichlet-multinomial: a Dirichlet prior on softmax probabilities -----------------------


def dirichlet_multinomial(logits, log_alpha, counts):
    p = softmax(logits)
    alpha = np.exp(log_alpha)
    # the prior on the whole probability vector, and on all but its last component (scipy
    # completes it), the multinomial likelihood, and the prior's entropy
    return (st.dirichlet.logpdf(p, alpha) + st.dirichlet.pdf(p[:-1], alpha)
            + np.sum(counts * np.log(p)) + gammaln(np.sum(counts) + 1.0)
            - np.sum(gammaln(counts + 1.0)) + 0.1 * st.dirichlet.entropy(alpha))


def test_dirichlet_multinomial():
    check_grads(dirichlet_multinomial, rng.standard_normal(4), rng.uniform(-0.2, 0.8, 4),
                np.array([3.0, 0.0, 5.0, 2.0]), order=2, modes=("rev", "fwd"))


def dirichlet_of_samples(logits, alpha):
    # several points at once: the components along the first axis, the samples along the next
    points = softmax(logits, axis=0)
    return np.sum(st.dirichlet.logpdf(points, alpha) ** 2)


def test_dirichlet_of_several_samples():
    check_grads(dirichlet_of_samples, rng.standard_normal((3, 5)), rng.uniform(1.0, 3.0, 3),
                order=2, modes=("rev", "fwd"))


# --- a multivariate normal in its mean and covariance ----------------------------------------


def gaussian_nll(mean, factor, data):
    # the covariance from an unconstrained factor: L L^T + eps I is symmetric positive definite
    lower = np.tril(factor)
    cov = lower @ lower.T + 0.1 * np.eye(np.shape(factor)[0])
    nll = -np.sum(multivariate_normal.logpdf(data, mean, cov))
    density = multivariate_normal.pdf(data[0], mean=mean, cov=cov)
    centred = -np.sum(st.multivariate_normal.logpdf(data - mean, cov=cov))
    return nll + density + 0.5 * centred + multivariate_normal.entropy(cov=cov)


def test_multivariate_normal_in_the_mean_and_covariance():
    data = rng.standard_normal((7, 3)) + np.array([0.5, -0.2, 1.0])
    factor = np.eye(3) + 0.2 * rng.standard_normal((3, 3))
    check_grads(gaussian_nll, rng.standard_normal(3) * 0.3, factor, data, order=2,
                modes=("rev", "fwd"))


def test_multivariate_normal_maximum_likelihood_mean():
    data = rng.standard_normal((50, 2)) + np.array([1.0, -1.0])
    cov = np.array([[1.0, 0.3], [0.3, 0.8]])

    def nll(mean):
        return -np.sum(multivariate_normal.logpdf(data, mean, cov))

    # the gradient is -sum_k cov^-1 (x_k - mean): zero at the sample mean
    got = s2sgrad.gradient(nll)(np.zeros(2))
    np.testing.assert_allclose(got, -np.linalg.solve(cov, np.sum(data, axis=0)), rtol=1e-10)
    np.testing.assert_allclose(s2sgrad.gradient(nll)(np.mean(data, axis=0)), 0.0, atol=1e-10)


# --- signals: a 1-d smoother and a 2-d filter -------------------------------------------------


def smoothing_objective(signal, kernel, noisy):
    kernel = kernel / np.sum(kernel)  # a normalised kernel, learned too
    smooth = np.convolve(signal, kernel, mode="same")
    # the data term through the full convolution's middle, and a roughness penalty
    fit = np.sum((smooth - noisy) ** 2)
    rough = np.sum(np.convolve(signal, np.array([1.0, -2.0, 1.0]), "valid") ** 2)
    return fit + 0.5 * rough + np.sum(np.convolve(kernel, kernel) ** 2)


def test_signal_smoothing_with_np_convolve():
    t = np.linspace(0.0, 3.0, 12)
    noisy = np.sin(t) + 0.1 * rng.standard_normal(12)
    check_grads(smoothing_objective, noisy.copy(), rng.uniform(0.5, 1.5, 3), noisy, order=2,
                modes=("rev", "fwd"))


def image_filter_loss(image, weights, target):
    blurred = scipy.signal.convolve(image, weights, mode="same")
    edges = scipy.signal.convolve(blurred, np.array([[1.0, 0.0, -1.0]]), "valid",
                                  method="direct")
    # a filter fitted to a target, in a loop over two passes of the same filter
    out = image
    for _ in range(2):
        out = scipy.signal.convolve(out, weights, "same", method="fft")
    return np.sum((out - target) ** 2) + 0.1 * np.sum(edges ** 2) + np.sum(
        scipy.signal.convolve(weights, weights) ** 2)


def test_image_filter_with_scipy_signal_convolve():
    image, target = rng.standard_normal((6, 7)), rng.standard_normal((6, 7))
    check_grads(image_filter_loss, image, rng.standard_normal((3, 2)) * 0.5, target, order=2,
                modes=("rev", "fwd"))


# --- a finite-difference regulariser with np.gradient -------------------------------------------


def smoothed_total_variation(u, weight):
    # sqrt(|grad u|^2 + eps), the gradient taken along each axis in a loop, second-order at
    # the edges, with the grid spacing written in the call
    squared = 0.0
    for axis in range(2):
        squared = squared + np.gradient(u, 0.5, axis=axis, edge_order=2) ** 2
    profile = np.gradient(np.sum(u, axis=0))  # a 1-d array needs no axis
    return weight * np.sum(np.sqrt(squared + 1e-2)) + np.sum(profile ** 2)


def test_finite_difference_regulariser():
    check_grads(smoothed_total_variation, rng.standard_normal((4, 5)), 0.7, order=2,
                modes=("rev", "fwd"))


def test_np_gradient_adjoint_matches_its_matrix():
    # np.gradient is a linear map: its vjp is the transposed matrix, column by column
    n = 6
    for edge_order in (1, 2):
        matrix = np.gradient(np.eye(n), 0.5, axis=0, edge_order=edge_order)
        g = rng.standard_normal(n)
        _, pullback = s2sgrad.vjp(
            lambda f, e=edge_order: np.gradient(f, 0.5, edge_order=e), rng.standard_normal(n))
        np.testing.assert_allclose(pullback(g)[0], matrix.T @ g, rtol=1e-12, atol=1e-12)


# --- selections: a piecewise loss with np.select, a trimmed loss with np.partition ---------------


def piecewise_loss(residual, slope):
    # quadratic in the middle, linear tails with a learned slope, joined continuously
    return np.sum(np.select([residual < -1.0, residual > 1.0],
                            [slope * (-residual - 1.0) + 1.0, slope * (residual - 1.0) + 1.0],
                            residual ** 2))


def test_piecewise_loss_with_np_select():
    residual = np.array([-2.5, -1.4, -0.6, 0.1, 0.8, 1.3, 2.2])
    check_grads(piecewise_loss, residual, 1.7, order=2, modes=("rev", "fwd"))


def trimmed_squares(w, features, targets):
    # least trimmed squares: the sum of the 5 smallest squared residuals
    squared = (targets - features @ w) ** 2
    smallest = np.partition(squared, 4)[:5]
    per_column = np.partition(features * w, 1, axis=0)[0]
    return np.sum(smallest) + np.sum(per_column ** 2)


def test_trimmed_loss_with_np_partition():
    features = rng.standard_normal((8, 3))
    targets = rng.standard_normal(8)
    check_grads(trimmed_squares, rng.standard_normal(3), features, targets, order=2,
                modes=("rev", "fwd"))


# --- heavy tails, half-line priors and survival times ------------------------------------------


def robust_regression(w, log_scale, features, targets):
    # Cauchy, Laplace and logistic likelihoods of the residuals, half-Cauchy and half-normal
    # priors on the scale
    scale = np.exp(log_scale)
    mean = features @ w
    return (-np.sum(st.cauchy.logpdf(targets, loc=mean, scale=scale))
            - np.sum(st.laplace.logpdf(targets, mean, 2.0 * scale))
            - np.sum(st.logistic.logpdf(targets, loc=mean, scale=scale))
            - st.halfcauchy.logpdf(scale, scale=2.5) - st.halfnorm.logpdf(scale, 0.0, 1.5)
            + np.sum(st.cauchy.cdf(targets, mean) * st.laplace.sf(targets, mean, scale)
                     + st.logistic.logcdf(targets, mean)))


def test_robust_regression_with_heavy_tails():
    features, targets = rng.standard_normal((6, 2)), rng.standard_normal(6)
    check_grads(robust_regression, rng.standard_normal(2), 0.2, features, targets, order=2,
                modes=("rev", "fwd"))


def survival_log_likelihood(log_rate, sigma, times, censored):
    # exponential and log-normal survival: the density of an event, the survival function
    # of a censored time
    rate = np.exp(log_rate)
    exponential = np.where(censored, st.expon.logsf(times, scale=1.0 / rate),
                           st.expon.logpdf(times, scale=1.0 / rate))
    lognormal = np.where(censored, st.lognorm.logsf(times, sigma, scale=1.0 / rate),
                         st.lognorm.logpdf(times, sigma, scale=1.0 / rate))
    return (np.sum(exponential + lognormal) + np.sum(st.lognorm.cdf(times, sigma))
            + np.sum(st.halfnorm.sf(times, scale=sigma) + st.expon.cdf(times - 0.5)))


def test_survival_with_censored_times():
    times = rng.uniform(0.2, 3.0, 6)
    censored = np.array([True, False, False, True, False, True])
    check_grads(survival_log_likelihood, 0.3, 0.8, times, censored, order=2,
                modes=("rev", "fwd"))


# --- the functions a user reaches the rules by ---------------------------------------------------


def test_rules_are_found_on_the_distribution_objects():
    assert registry.lookup(norm.logpdf) is registry.lookup(st.norm.logpdf)
    assert registry.lookup(st.t.cdf).held == ("df",)
    assert registry.lookup(st.norm.pdf) is not registry.lookup(st.t.pdf)
    assert registry.jvp_lookup(multivariate_normal.logpdf) is not None


# --- what the rules refuse -------------------------------------------------------------------


def t_cdf_in_df(df, x):
    return np.sum(st.t.cdf(x, df))


def beta_cdf_in_shape(a, x):
    return np.sum(st.beta.sf(x, a, 2.0))


def image_gradient(u):
    gy, gx = np.gradient(u)
    return np.sum(gy ** 2 + gx ** 2)


def gradient_with_computed_spacing(f, h):
    return np.sum(np.gradient(f, h) ** 2)


def frozen_logpdf(loc, x):
    return np.sum(norm(loc, 2.0).logpdf(x))


def singular_allowed(mean, x):
    return np.sum(multivariate_normal.logpdf(x, mean, np.eye(2), allow_singular=True))


def test_shape_parameters_of_distribution_functions_are_refused():
    x = rng.standard_normal(4)
    with pytest.raises(s2sgrad.TransformError, match=r"cdf\(\) is not differentiated with "
                       r"respect to its argument 'df'"):
        s2sgrad.gradient(t_cdf_in_df)(3.0, x)
    with pytest.raises(s2sgrad.TransformError, match=r"sf\(\) is not differentiated with "
                       r"respect to its argument 'a'"):
        s2sgrad.gradient(beta_cdf_in_shape)(1.5, rng.uniform(0.1, 0.9, 3))
    # in x the same calls are differentiated
    check_grads(t_cdf_in_df, 3, x, modes=("rev", "fwd"))


def test_np_gradient_of_an_image_without_axis_is_refused():
    with pytest.raises(s2sgrad.TransformError,
                       match=r"returns a list of arrays.*np.gradient\(f, axis=k\)"):
        s2sgrad.gradient(image_gradient)(rng.standard_normal((3, 4)))
    with pytest.raises(s2sgrad.TransformError, match=r"np.gradient\(f, axis=k\) / h"):
        s2sgrad.gradient(gradient_with_computed_spacing)(rng.standard_normal(5), 0.1)


def test_frozen_distributions_are_their_methods_and_singular_covariances_are_refused():
    x = rng.standard_normal(3)
    # a frozen distribution built here is the distribution's method with its parameters
    check_grads(frozen_logpdf, 0.5, x, modes=("rev", "fwd"))
    with pytest.raises(s2sgrad.TransformError, match="drop allow_singular=True"):
        s2sgrad.gradient(singular_allowed)(np.zeros(2), rng.standard_normal((3, 2)))


def test_stats_rules_name_the_parameters_as_the_distribution_does():
    # scipy's methods take (x, *args, **kwds): the shapes, then loc (and scale), by name
    import inspect
    checked = 0
    for rule in registry.all_rules():
        owner = getattr(rule.primitive, "__self__", None)
        shapes = getattr(owner, "shapes", None)
        if not isinstance(owner, (st.rv_continuous, st.rv_discrete)):
            continue
        names = [s.strip() for s in shapes.split(",")] if shapes else []
        names += ["loc", "scale"] if isinstance(owner, st.rv_continuous) else ["loc"]
        params = list(inspect.signature(rule.template).parameters)[2:]
        if params and params[0] in ("x", "k"):
            params = params[1:]
        assert params == names, (rule.name, params, names)
        checked += 1
    assert checked >= 40
