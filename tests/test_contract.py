"""Tuple results and variadic operands, the way programs use them: decompositions unpacked
into their factors (QR least squares, an eigh-based PCA objective, SVD norms and low-rank
reconstructions, a slogdet likelihood), einsum products (attention, bilinear forms, batch
traces), arrays split and put back together, and a user's own rules for a function returning
a named tuple and for one taking ``*args``.

Eigenvectors and singular vectors are defined up to their signs: the programs use only what
does not depend on them (projections ``v @ v.T``, ``v * v``, reconstructions
``u @ diag(s) @ vh``). Each program is checked against central differences in both modes
(``check_grads``), the smooth ones at second order too; the refusals say what is not
differentiated and what to write instead.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import s2sgrad
from s2sgrad.rules.check import RuleError
from s2sgrad.testing import check_grads, numeric_gradient

try:
    from scipy.linalg import cho_factor, cho_solve
except ImportError:
    cho_factor = cho_solve = None

rng = np.random.default_rng(2024)


def numeric_jacobian(fn, x, eps=1e-6):
    """d fn / d x by central differences, of shape out.shape + x.shape."""
    out = np.asarray(fn(x))
    columns = []
    for unit in np.eye(x.size):
        step = eps * unit.reshape(x.shape)
        columns.append((np.asarray(fn(x + step)) - np.asarray(fn(x - step))) / (2 * eps))
    return np.moveaxis(np.stack(columns), 0, -1).reshape(out.shape + x.shape)


# --- QR: least squares ------------------------------------------------------------------------


def qr_least_squares(a, b):
    # min |a x - b|: a = q r, x = r^-1 q^T b; the residual, and a small ridge on x
    q, r = np.linalg.qr(a)
    x = np.linalg.solve(r, q.T @ b)
    residual = a @ x - b
    return np.sum(residual ** 2) + 0.1 * np.sum(x ** 2)


def test_qr_least_squares():
    a, b = rng.standard_normal((6, 3)), rng.standard_normal(6)
    check_grads(qr_least_squares, a, b, order=2, modes=("rev", "fwd"))
    # the residual is b's part outside the columns of a: the normal equations agree
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    assert np.isclose(qr_least_squares(a, b), np.sum((a @ x - b) ** 2) + 0.1 * x @ x)


def test_qr_factors_of_a_stack_read_as_fields_and_jacobian():
    def orthogonal_energy(a):
        res = np.linalg.qr(a)  # QRResult: fields read by name
        return np.sum(res.R ** 2 * np.arange(1.0, 4.0)) + np.sum(res.Q[..., :1] * res.Q)

    stack = rng.standard_normal((2, 4, 3))
    check_grads(orthogonal_energy, stack, order=2, modes=("rev", "fwd"))

    def factor_r(a):
        return np.linalg.qr(a)[1]

    a = rng.standard_normal((3, 4))  # more columns than rows
    expected = numeric_jacobian(factor_r, a)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(s2sgrad.jacobian(factor_r, mode=mode)(a), expected,
                                   rtol=1e-6, atol=1e-8)


# --- eigh: a PCA objective ---------------------------------------------------------------------


def top_components(covariance, k):
    w, v = np.linalg.eigh(covariance)  # ascending eigenvalues
    return w[-k:], v[:, -k:]


def pca_objective(data):
    centered = data - np.mean(data, axis=0)
    covariance = centered.T @ centered / len(data)
    variances, basis = top_components(covariance, 2)
    projected = centered @ basis @ basis.T  # independent of the eigenvectors' signs
    return np.sum((centered - projected) ** 2) - np.sum(np.log(variances))


def test_eigh_pca_objective_through_a_helper():
    data = rng.standard_normal((12, 4)) * np.array([3.0, 2.0, 1.0, 0.5])
    check_grads(pca_objective, data, order=2, modes=("rev", "fwd"))


def test_hessian_of_an_eigenvalue_objective():
    def spread(x):
        w, v = np.linalg.eigh(np.outer(x, x) + np.diag([1.0, 2.0, 3.0]))
        return np.sum(w ** 2) + np.sum((v * v)[0] * w)

    x = rng.standard_normal(3)
    gradient = s2sgrad.gradient(spread)
    np.testing.assert_allclose(s2sgrad.hessian(spread)(x), numeric_jacobian(gradient, x),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gradient(x), numeric_gradient(spread, [x], 0), rtol=1e-6,
                               atol=1e-8)


def test_eigvalsh_and_eig_in_a_loop():
    def spectra(mats):
        total = 0.0
        for m in mats:
            total = total + np.sum(np.linalg.eigvalsh(m @ m.T) ** 2)
            w, v = np.linalg.eig(m @ m.T + np.diag([0.0, 1.0, 2.0]))
            total = total + np.sum(w * np.sum(v * v * np.arange(3.0)[:, None], axis=0))
        return total

    check_grads(spectra, rng.standard_normal((2, 3, 3)), order=2, modes=("rev", "fwd"))


# --- SVD: nuclear norm, low-rank reconstruction ------------------------------------------------


@s2sgrad.grad
def nuclear_norm(a):
    return np.sum(np.linalg.svd(a, compute_uv=False))


def low_rank_error(a, k=2):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    approx = (u[:, :k] * s[:k]) @ vh[:k]
    return np.sum((a - approx) ** 2) + np.sum(np.sin(approx))


def test_svd_nuclear_norm_and_low_rank_reconstruction():
    a = rng.standard_normal((5, 3))
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(s2sgrad.gradient(nuclear_norm)(a), u @ vh, rtol=1e-10)
    check_grads(nuclear_norm, a, order=2, modes=("rev", "fwd"))
    check_grads(low_rank_error, a, order=2, modes=("rev", "fwd"))
    check_grads(low_rank_error, rng.standard_normal((3, 5)), modes=("rev", "fwd"))


def test_svd_full_matrices_of_a_square_stack():
    def energy(a):
        res = np.linalg.svd(a)
        return np.sum(res.U @ (res.S[..., None] ** 2 * res.Vh))

    check_grads(energy, rng.standard_normal((2, 3, 3)), order=2, modes=("rev", "fwd"))


def test_svd_full_matrices_of_a_non_square_matrix():
    a = rng.standard_normal((4, 2))

    def singular_values(a):
        _, s, _ = np.linalg.svd(a)  # U is 4 x 4: two columns any basis of a complement
        return np.sum(s ** 3)

    check_grads(singular_values, a, modes=("rev",))  # no gradient flows into U's columns

    def uses_u(a):
        u, _, _ = np.linalg.svd(a)
        return np.sum(u ** 3)

    with pytest.raises(ValueError, match="full_matrices=False"):
        s2sgrad.gradient(uses_u)(a)
    with pytest.raises(ValueError, match="full_matrices=False"):
        s2sgrad.jvp(singular_values, (a,), (a,))


# --- slogdet: a Gaussian log-likelihood ---------------------------------------------------------


def gaussian_log_likelihood(factor, points):
    covariance = factor @ factor.T + np.eye(3)
    sign, logdet = np.linalg.slogdet(covariance)
    quadratic = np.einsum("ni,ni->", points, np.linalg.solve(covariance, points.T).T)
    return -0.5 * (len(points) * logdet + quadratic) + 0.0 * sign


def test_slogdet_gaussian_likelihood_and_tensor_backward():
    factor, points = rng.standard_normal((3, 3)), rng.standard_normal((5, 3))
    check_grads(gaussian_log_likelihood, factor, points, order=2, modes=("rev", "fwd"))
    t = s2sgrad.tensor(factor, requires_grad=True)
    gaussian_log_likelihood(t, points).backward()
    np.testing.assert_allclose(np.asarray(t.grad),
                               numeric_gradient(gaussian_log_likelihood, [factor, points], 0),
                               rtol=1e-6, atol=1e-8)


def gp_log_marginal(log_scale, inputs, targets):
    # a Gaussian process's log marginal likelihood, through cho_factor's (c, lower)
    gaps = inputs[:, None] - inputs[None, :]
    kernel = np.exp(-gaps ** 2 * np.exp(-2.0 * log_scale)) + 0.1 * np.eye(len(inputs))
    factor = cho_factor(kernel, lower=True)
    alpha = cho_solve(factor, targets)
    return -0.5 * targets @ alpha - np.sum(np.log(np.diag(factor[0])))


@pytest.mark.skipif(cho_factor is None, reason="SciPy is not installed")
def test_cho_factor_and_cho_solve_likelihood():
    inputs, targets = np.linspace(0.0, 2.0, 5), rng.standard_normal(5)
    check_grads(gp_log_marginal, 0.3, inputs, targets, order=2, modes=("rev", "fwd"))


# --- einsum: attention, bilinear forms, batch traces -------------------------------------------


def attention(queries, keys, values):
    scores = np.einsum("qd,kd->qk", queries, keys) / np.sqrt(queries.shape[-1])
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    return np.einsum("qk,kd->qd", weights, values)


def test_einsum_attention_and_its_jacobian():
    q, k, v = (rng.standard_normal((3, 4)) for _ in range(3))

    def loss(q, k, v):
        return np.sum(attention(q, k, v) ** 2)

    check_grads(loss, q, k, v, order=2, modes=("rev", "fwd"))
    # the same gradient through tensors' backward(), keys and values moving too
    tq, tk = s2sgrad.tensor(q, requires_grad=True), s2sgrad.tensor(k, requires_grad=True)
    loss(tq, tk, v).backward()
    for t, i in ((tq, 0), (tk, 1)):
        np.testing.assert_allclose(np.asarray(t.grad), numeric_gradient(loss, [q, k, v], i),
                                   rtol=1e-6, atol=1e-8)
    expected = numeric_jacobian(lambda q: attention(q, k, v), q)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(s2sgrad.jacobian(attention, mode=mode)(q, k, v), expected,
                                   rtol=1e-6, atol=1e-8)


def test_einsum_bilinear_forms_and_batch_traces():
    def forms(x, a, y, stack):
        bilinear = np.einsum("i,ij,j->", x, a, y)
        traces = np.einsum("bii->b", stack)  # one trace per matrix
        diagonals = np.einsum("...ii->...i", stack)
        chained = np.einsum("bij,jk,bkl->bil", stack, a, stack)
        implicit = np.einsum("ij,jk", a, a)  # 'ik' implied
        return bilinear * np.sum(traces ** 2) + np.sum(diagonals * np.sin(chained[:, 0])) \
            + np.einsum("ii", implicit)

    x, y = rng.standard_normal(3), rng.standard_normal(3)
    check_grads(forms, x, rng.standard_normal((3, 3)), y, rng.standard_normal((2, 3, 3)),
                order=2, modes=("rev", "fwd"))


def test_einsum_broadcasting_and_a_hessian():
    def pairwise(points, weights):
        # '...' broadcasts a (1, n, d) against (m, 1, d); 'd' alone in points sums it
        gaps = points[None] - points[:, None]
        return np.sum((np.einsum("...d,d->...", gaps ** 2, weights) + 1.0) ** 0.5)

    points, weights = rng.standard_normal((3, 2)), rng.uniform(0.5, 1.5, 2)
    check_grads(pairwise, points + np.arange(3.0)[:, None], weights, modes=("rev", "fwd"))

    def quartic(x):
        return np.einsum("i,j,ij,k,k->", x, x, np.diag([1.0, 2.0, 3.0]), x, x)

    x = rng.standard_normal(3)
    np.testing.assert_allclose(s2sgrad.hessian(quartic)(x),
                               numeric_jacobian(s2sgrad.gradient(quartic), x),
                               rtol=1e-5, atol=1e-7)


# --- split and recombine -------------------------------------------------------------------------


def split_and_recombine(x, weights):
    parts = np.split(x, 3)
    total = 0.0
    for i, part in enumerate(parts):
        total = total + weights[i] * np.sum(np.sin(part))
    head, rest = np.array_split(x, [2])
    swapped = np.concatenate([parts[2], parts[0] * 2.0, parts[1]])
    columns = np.hsplit(np.atleast_2d(x, weights)[0].reshape(2, 3), [1])
    return total + np.sum(swapped * x) + np.sum(head) * np.sum(rest ** 2) \
        + np.sum(columns[1] ** 2)


def test_split_and_recombine_in_a_loop():
    check_grads(split_and_recombine, rng.standard_normal(6), rng.standard_normal(3), order=2,
                modes=("rev", "fwd"))

    def rows_and_layers(x):
        return np.vsplit(x, [1])[1] * np.dsplit(x[..., None], 1)[0][1:, :, 0]

    x = rng.standard_normal((3, 2))
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(s2sgrad.jacobian(rows_and_layers, mode=mode)(x),
                                   numeric_jacobian(rows_and_layers, x), rtol=1e-6, atol=1e-8)


# --- a user's rules: a named tuple result, and *args ------------------------------------------

Polar = namedtuple("Polar", "radius angle")


def polar(x, y):
    return Polar(np.hypot(x, y), np.arctan2(y, x))


@s2sgrad.vjp_rule(polar, shape="tuple", items=lambda static, ndim: (ndim("x"), ndim("x")),
                  fields=Polar._fields)
def polar_vjp(g, ans, x, y):
    # d radius = (x dx + y dy) / radius, d angle = (x dy - y dx) / radius^2
    g_radius, g_angle = g
    radius = ans[0]
    return (g_radius * x / radius - g_angle * y / radius ** 2,
            g_radius * y / radius + g_angle * x / radius ** 2)


@s2sgrad.jvp_rule(polar)
def polar_jvp(g, ans, x, y):
    radius = ans.radius
    return (g * x / radius, -g * y / radius ** 2), (g * y / radius, g * x / radius ** 2)


def hadamard(*factors):
    out = factors[0]
    for f in factors[1:]:
        out = out * f
    return out


@s2sgrad.vjp_rule(hadamard, shape="elementwise", each="k")
def hadamard_vjp(g, ans, *factors, k=0):
    return g * ans / factors[k]  # the product of the others (factors are nonzero)


@s2sgrad.jvp_rule(hadamard)
def hadamard_jvp(g, ans, *factors, k=0):
    return g * ans / factors[k]


def test_a_user_rule_returning_a_named_tuple():
    def spiral(x, y):
        coords = polar(x, y)
        radius, angle = coords
        return np.sum(radius * np.cos(coords.angle) ** 2 + angle)

    x, y = rng.uniform(0.5, 2.0, 4), rng.uniform(0.5, 2.0, 4)
    check_grads(spiral, x, y, order=2, modes=("rev", "fwd"))


def test_a_user_rule_for_args():
    def energy(a, b, c):
        return np.sum(hadamard(a, b) ** 2) + np.sum(hadamard(a, c, b) * c)

    a, b = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, 3)  # b broadcast
    check_grads(energy, a, b, rng.uniform(0.5, 2.0, (2, 3)), order=2, modes=("rev", "fwd"))


# --- refusals ------------------------------------------------------------------------------


def test_refusals_at_transform_time():
    a = rng.standard_normal((3, 3))

    def r_only(a):
        return np.sum(np.linalg.qr(a, mode="r") ** 2)

    def interleaved(a):  # sublists computed: not literals the compiler can read
        rows = [0, 1]
        return np.sum(np.einsum(a, rows, a, [1, 2]))

    def hermitian(a):
        return np.sum(np.linalg.svd(a @ a.T, hermitian=True)[1])

    def field_elsewhere(res):
        return np.sum(res.Q)

    def through_helper(a):  # a plain tuple: which item is .Q cannot be told
        return field_elsewhere((a, a.T))

    for fn, words in ((r_only, "mode='reduced'"), (interleaved, "interleaved"),
                      (hermitian, "hermitian=True"), (through_helper, "q, r = np.linalg.qr")):
        with pytest.raises(s2sgrad.TransformError, match=words.replace("(", r"\(")):
            s2sgrad.gradient(fn)(a)


def test_refusals_when_the_rule_runs():
    def complete(a):
        q, r = np.linalg.qr(a, mode="complete")
        return np.sum(q ** 2) + np.sum(r ** 2)

    with pytest.raises(ValueError, match="mode='reduced'"):
        s2sgrad.gradient(complete)(rng.standard_normal((4, 2)))
    check_grads(complete, rng.standard_normal((2, 4)), modes=("rev", "fwd"))  # wide: fine

    def rotation_spectrum(t):
        w, _ = np.linalg.eig(np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]))
        return np.sum(w.real)

    with pytest.raises(ValueError, match="complex eigenvalues"):
        s2sgrad.gradient(rotation_spectrum)(0.3)


def test_rule_registration_refusals():
    def pair(x):
        return np.sin(x), np.cos(x)

    with pytest.raises(RuleError, match="shape='tuple'"):
        @s2sgrad.vjp_rule(pair)
        def pair_vjp(g, ans, x):
            g_sin, g_cos = g
            return g_sin * np.cos(x) - g_cos * np.sin(x)

    def total(*xs):
        return sum(xs)

    with pytest.raises(RuleError, match="each='k'"):
        @s2sgrad.vjp_rule(total)
        def total_vjp(g, ans, *xs):
            return g, g

    with pytest.raises(TypeError, match="keyword-only parameter k"):
        @s2sgrad.vjp_rule(total, each="k")
        def total_each(g, ans, *xs):
            return g
