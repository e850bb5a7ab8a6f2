"""Rules for ``scipy.stats``: the densities, distribution functions and entropies of the
normal, Student t, chi-squared, gamma and beta distributions, the Poisson distribution in its
rate, the Dirichlet distribution and the multivariate normal (and, in distributions.py, the
densities and distribution functions of more location-scale families).

scipy is optional: without it this module registers nothing. The primitives are the methods of
scipy's distribution objects (``scipy.stats.norm.logpdf``, ``scipy.stats.t.cdf``), called with
the distribution's parameters by position or by name (``loc=``, ``scale=``, ``df=``); a frozen
distribution (``scipy.stats.norm(loc, scale).logpdf(x)``) is not differentiated.

The continuous distributions take ``loc`` and ``scale``: with ``y = np.subtract(x, loc) / scale`` the
density is ``p(y) / scale``, so every derivative comes from the standard one's in ``y``. The
derivative of a distribution function (``cdf``, ``sf`` and their logarithms) in ``x``,
``loc`` and ``scale`` is the density; in a shape parameter (the ``df`` of ``t`` and ``chi2``,
the ``a`` of ``gamma``, the ``a`` and ``b`` of ``beta``) it needs the derivative of an
incomplete gamma or beta function in its parameter, which has no rule: those parameters are
named in ``held``, and a call where one depends on a differentiated input is refused. The
densities and entropies are differentiated in every parameter, through ``gammaln``,
``digamma`` and ``polygamma``, which have rules, so second derivatives follow. Outside the
support of ``chi2``, ``gamma`` and ``beta`` the distribution functions are constant and get
zero derivatives.

The Poisson ``pmf``, ``logpmf``, ``cdf``, ``logcdf``, ``sf`` and ``logsf`` are differentiated
in the rate ``mu``; the count ``k`` and the shift ``loc`` are integers (held). ``dirichlet``
takes ``x`` with the components along its first axis, all of them or all but the last (which
is then one minus the sum of the others). ``multivariate_normal`` takes a full covariance
matrix ``cov`` (a scalar or a vector of variances is refused: write ``s * np.eye(d)`` or
``np.diag(v)``) without ``allow_singular=True``; scipy reads the lower triangle of ``cov``, so
its derivative is the lower triangle's, and for a symmetric ``cov`` built from parameters
(``L @ L.T``) that is the derivative along every symmetric move.
"""

import math

import numpy as np

from .registry import jvp_rule, vjp_rule

try:
    import scipy.stats
    from scipy import special
except ImportError:  # scipy is an optional dependency: without it there is nothing to register
    scipy = None
    special = None


def stats_rule(method, shape="elementwise", requires=None, held=()):
    """``vjp_rule`` for the method named ``"distribution.method"`` of ``scipy.stats``, or no
    registration at all without scipy (the template is left as it is)."""
    if scipy is None:
        return lambda template: template
    distribution, name = method.split(".")
    return vjp_rule(getattr(getattr(scipy.stats, distribution), name), shape=shape,
                    requires=requires, held=held)


def stats_jvp(method):
    """``jvp_rule`` for a ``scipy.stats`` method named as in ``stats_rule``."""
    if scipy is None:
        return lambda template: template
    distribution, name = method.split(".")
    return jvp_rule(getattr(getattr(scipy.stats, distribution), name))


# --- the normal distribution ----------------------------------------------------------------
# z = np.subtract(x, loc) / scale; log pdf = -z^2 / 2 - log(scale) - log(2 pi) / 2. The distribution
# functions Phi(z), 1 - Phi(z) have derivative +-phi(z) in z; their logarithms divide it by
# the value, exp(log phi - ans).


@stats_rule("norm.pdf")
def norm_pdf(g, ans, x, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    d = g * ans * z / scale
    return -d, d, g * ans * (z * z - 1.0) / scale


@stats_rule("norm.logpdf")
def norm_logpdf(g, ans, x, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    d = g * z / scale
    return -d, d, g * (z * z - 1.0) / scale


@stats_rule("norm.cdf")
def norm_cdf(g, ans, x, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    p = g * np.exp(-0.5 * z * z - 0.5 * math.log(2.0 * math.pi)) / scale
    return p, -p, -p * z


@stats_rule("norm.logcdf")
def norm_logcdf(g, ans, x, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    p = g * np.exp(-0.5 * z * z - 0.5 * math.log(2.0 * math.pi) - ans) / scale
    return p, -p, -p * z


@stats_rule("norm.sf")
def norm_sf(g, ans, x, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    p = g * np.exp(-0.5 * z * z - 0.5 * math.log(2.0 * math.pi)) / scale
    return -p, p, p * z


@stats_rule("norm.logsf")
def norm_logsf(g, ans, x, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    p = g * np.exp(-0.5 * z * z - 0.5 * math.log(2.0 * math.pi) - ans) / scale
    return -p, p, p * z


@stats_rule("norm.entropy")
def norm_entropy(g, ans, loc=0, scale=1):
    # log(2 pi e) / 2 + log(scale)
    return None, g / scale


# --- Student's t ----------------------------------------------------------------------------
# log pdf = gammaln((df + 1) / 2) - gammaln(df / 2) - log(pi df) / 2 - log(scale)
#           - (df + 1) / 2 log(1 + z^2 / df),
# whose derivative in z is -w, w = (df + 1) z / (df + z^2).


@stats_rule("t.pdf")
def t_pdf(g, ans, x, df, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    w = (df + 1.0) * z / (df + z * z)
    h = g * ans
    g_df = h * 0.5 * (special.digamma(0.5 * (df + 1.0)) - special.digamma(0.5 * df) - 1.0 / df
                      - np.log1p(z * z / df) + z * w / df)
    return -h * w / scale, g_df, h * w / scale, h * (z * w - 1.0) / scale


@stats_rule("t.logpdf")
def t_logpdf(g, ans, x, df, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    w = (df + 1.0) * z / (df + z * z)
    g_df = g * 0.5 * (special.digamma(0.5 * (df + 1.0)) - special.digamma(0.5 * df) - 1.0 / df
                      - np.log1p(z * z / df) + z * w / df)
    return -g * w / scale, g_df, g * w / scale, g * (z * w - 1.0) / scale


@stats_rule("t.cdf", held=("df",))
def t_cdf(g, ans, x, df, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    p = g * np.exp(special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df)
                   - 0.5 * np.log(math.pi * df) - 0.5 * (df + 1.0) * np.log1p(z * z / df)) / scale
    return p, None, -p, -p * z


@stats_rule("t.logcdf", held=("df",))
def t_logcdf(g, ans, x, df, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    p = g * np.exp(special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df)
                   - 0.5 * np.log(math.pi * df) - 0.5 * (df + 1.0) * np.log1p(z * z / df)
                   - ans) / scale
    return p, None, -p, -p * z


@stats_rule("t.sf", held=("df",))
def t_sf(g, ans, x, df, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    p = g * np.exp(special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df)
                   - 0.5 * np.log(math.pi * df) - 0.5 * (df + 1.0) * np.log1p(z * z / df)) / scale
    return -p, None, p, p * z


@stats_rule("t.logsf", held=("df",))
def t_logsf(g, ans, x, df, loc=0, scale=1):
    z = np.subtract(x, loc) / scale
    p = g * np.exp(special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df)
                   - 0.5 * np.log(math.pi * df) - 0.5 * (df + 1.0) * np.log1p(z * z / df)
                   - ans) / scale
    return -p, None, p, p * z


@stats_rule("t.entropy")
def t_entropy(g, ans, df, loc=0, scale=1):
    # h = (df + 1) / 2 (digamma((df + 1) / 2) - digamma(df / 2)) + log(sqrt(df) B(df / 2, 1 / 2))
    #     + log(scale); the digamma terms of its derivative in df cancel.
    g_df = g * (0.25 * (df + 1.0) * (special.polygamma(1, 0.5 * (df + 1.0))
                                     - special.polygamma(1, 0.5 * df)) + 0.5 / df)
    return g_df, None, g / scale


# --- chi-squared ----------------------------------------------------------------------------
# y = np.subtract(x, loc) / scale; log p(y) = (df / 2 - 1) log y - y / 2 - df / 2 log 2 - gammaln(df / 2),
# with derivative s = (df / 2 - 1) / y - 1 / 2 in y. The distribution functions get the
# density where y > 0 and 0 elsewhere, where they are constant; the entries outside the
# support are replaced by 1 before the logarithms, which keeps nan out of the unselected side.


@stats_rule("chi2.pdf")
def chi2_pdf(g, ans, x, df, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    ys = np.where(y > 0.0, y, 1.0)
    s = (0.5 * df - 1.0) / ys - 0.5
    h = g * ans
    return (h * s / scale, h * 0.5 * (np.log(0.5 * ys) - special.digamma(0.5 * df)),
            -h * s / scale, -h * (1.0 + y * s) / scale)


@stats_rule("chi2.logpdf")
def chi2_logpdf(g, ans, x, df, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = (0.5 * df - 1.0) / y - 0.5
    return (g * s / scale, g * 0.5 * (np.log(0.5 * y) - special.digamma(0.5 * df)),
            -g * s / scale, -g * (1.0 + y * s) / scale)


@stats_rule("chi2.cdf", held=("df",))
def chi2_cdf(g, ans, x, df, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    logp = (special.xlogy(0.5 * df - 1.0, ys) - 0.5 * ys - 0.5 * df * math.log(2.0)
            - special.gammaln(0.5 * df))
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return p, None, -p, -p * y


@stats_rule("chi2.logcdf", held=("df",))
def chi2_logcdf(g, ans, x, df, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    logp = (special.xlogy(0.5 * df - 1.0, ys) - 0.5 * ys - 0.5 * df * math.log(2.0)
            - special.gammaln(0.5 * df) - np.where(inside, ans, 0.0))
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return p, None, -p, -p * y


@stats_rule("chi2.sf", held=("df",))
def chi2_sf(g, ans, x, df, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    logp = (special.xlogy(0.5 * df - 1.0, ys) - 0.5 * ys - 0.5 * df * math.log(2.0)
            - special.gammaln(0.5 * df))
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return -p, None, p, p * y


@stats_rule("chi2.logsf", held=("df",))
def chi2_logsf(g, ans, x, df, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    logp = (special.xlogy(0.5 * df - 1.0, ys) - 0.5 * ys - 0.5 * df * math.log(2.0)
            - special.gammaln(0.5 * df) - np.where(inside, ans, 0.0))
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return -p, None, p, p * y


@stats_rule("chi2.entropy")
def chi2_entropy(g, ans, df, loc=0, scale=1):
    # h = df / 2 + log(2 Gamma(df / 2)) + (1 - df / 2) digamma(df / 2) + log(scale)
    return g * (0.5 + 0.5 * (1.0 - 0.5 * df) * special.polygamma(1, 0.5 * df)), None, g / scale


# --- gamma ----------------------------------------------------------------------------------
# log p(y) = (a - 1) log y - y - gammaln(a), with derivative s = (a - 1) / y - 1 in y and
# log y - digamma(a) in a.


@stats_rule("gamma.pdf")
def gamma_pdf(g, ans, x, a, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    ys = np.where(y > 0.0, y, 1.0)
    s = (a - 1.0) / ys - 1.0
    h = g * ans
    return (h * s / scale, h * (np.log(ys) - special.digamma(a)), -h * s / scale,
            -h * (1.0 + y * s) / scale)


@stats_rule("gamma.logpdf")
def gamma_logpdf(g, ans, x, a, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = (a - 1.0) / y - 1.0
    return (g * s / scale, g * (np.log(y) - special.digamma(a)), -g * s / scale,
            -g * (1.0 + y * s) / scale)


@stats_rule("gamma.cdf", held=("a",))
def gamma_cdf(g, ans, x, a, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    p = g * np.where(inside, np.exp(special.xlogy(a - 1.0, ys) - ys - special.gammaln(a)),
                     0.0) / scale
    return p, None, -p, -p * y


@stats_rule("gamma.logcdf", held=("a",))
def gamma_logcdf(g, ans, x, a, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    logp = special.xlogy(a - 1.0, ys) - ys - special.gammaln(a) - np.where(inside, ans, 0.0)
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return p, None, -p, -p * y


@stats_rule("gamma.sf", held=("a",))
def gamma_sf(g, ans, x, a, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    p = g * np.where(inside, np.exp(special.xlogy(a - 1.0, ys) - ys - special.gammaln(a)),
                     0.0) / scale
    return -p, None, p, p * y


@stats_rule("gamma.logsf", held=("a",))
def gamma_logsf(g, ans, x, a, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    logp = special.xlogy(a - 1.0, ys) - ys - special.gammaln(a) - np.where(inside, ans, 0.0)
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return -p, None, p, p * y


@stats_rule("gamma.entropy")
def gamma_entropy(g, ans, a, loc=0, scale=1):
    # h = a + gammaln(a) + (1 - a) digamma(a) + log(scale)
    return g * (1.0 + (1.0 - a) * special.polygamma(1, a)), None, g / scale


# --- beta -----------------------------------------------------------------------------------
# log p(y) = (a - 1) log y + (b - 1) log(1 - y) - betaln(a, b) on 0 < y < 1, with derivative
# s = (a - 1) / y - (b - 1) / (1 - y) in y.


@stats_rule("beta.pdf")
def beta_pdf(g, ans, x, a, b, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    ys = np.where((y > 0.0) & (y < 1.0), y, 0.5)
    s = (a - 1.0) / ys - (b - 1.0) / (1.0 - ys)
    both = special.digamma(a + b)
    h = g * ans
    return (h * s / scale, h * (np.log(ys) - special.digamma(a) + both),
            h * (np.log1p(-ys) - special.digamma(b) + both), -h * s / scale,
            -h * (1.0 + y * s) / scale)


@stats_rule("beta.logpdf")
def beta_logpdf(g, ans, x, a, b, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = (a - 1.0) / y - (b - 1.0) / (1.0 - y)
    both = special.digamma(a + b)
    return (g * s / scale, g * (np.log(y) - special.digamma(a) + both),
            g * (np.log1p(-y) - special.digamma(b) + both), -g * s / scale,
            -g * (1.0 + y * s) / scale)


@stats_rule("beta.cdf", held=("a", "b"))
def beta_cdf(g, ans, x, a, b, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = (y > 0.0) & (y < 1.0)
    ys = np.where(inside, y, 0.5)
    logp = special.xlogy(a - 1.0, ys) + special.xlog1py(b - 1.0, -ys) - special.betaln(a, b)
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return p, None, None, -p, -p * y


@stats_rule("beta.logcdf", held=("a", "b"))
def beta_logcdf(g, ans, x, a, b, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = (y > 0.0) & (y < 1.0)
    ys = np.where(inside, y, 0.5)
    logp = (special.xlogy(a - 1.0, ys) + special.xlog1py(b - 1.0, -ys) - special.betaln(a, b)
            - np.where(inside, ans, 0.0))
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return p, None, None, -p, -p * y


@stats_rule("beta.sf", held=("a", "b"))
def beta_sf(g, ans, x, a, b, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = (y > 0.0) & (y < 1.0)
    ys = np.where(inside, y, 0.5)
    logp = special.xlogy(a - 1.0, ys) + special.xlog1py(b - 1.0, -ys) - special.betaln(a, b)
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return -p, None, None, p, p * y


@stats_rule("beta.logsf", held=("a", "b"))
def beta_logsf(g, ans, x, a, b, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = (y > 0.0) & (y < 1.0)
    ys = np.where(inside, y, 0.5)
    logp = (special.xlogy(a - 1.0, ys) + special.xlog1py(b - 1.0, -ys) - special.betaln(a, b)
            - np.where(inside, ans, 0.0))
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return -p, None, None, p, p * y


@stats_rule("beta.entropy")
def beta_entropy(g, ans, a, b, loc=0, scale=1):
    # h = betaln(a, b) - (a - 1) digamma(a) - (b - 1) digamma(b) + (a + b - 2) digamma(a + b)
    #     + log(scale); the digamma terms of its derivatives cancel.
    both = (a + b - 2.0) * special.polygamma(1, a + b)
    return (g * (both - (a - 1.0) * special.polygamma(1, a)),
            g * (both - (b - 1.0) * special.polygamma(1, b)), None, g / scale)


# --- Poisson, in the rate -------------------------------------------------------------------
# pmf(k) = mu^k exp(-mu) / k!, with k shifted by loc: d log pmf / d mu = k / mu - 1. The
# distribution function at k is the regularized gammaincc(floor(k) + 1, mu), whose derivative
# in mu is -pmf(floor(k)); below 0 it is constant. The count and the shift are integers.


@stats_rule("poisson.pmf", held=("k", "loc"))
def poisson_pmf(g, ans, k, mu, loc=0):
    return None, g * ans * (np.subtract(k, loc) / mu - 1.0), None


@stats_rule("poisson.logpmf", held=("k", "loc"))
def poisson_logpmf(g, ans, k, mu, loc=0):
    return None, g * (np.subtract(k, loc) / mu - 1.0), None


@stats_rule("poisson.cdf", held=("k", "loc"))
def poisson_cdf(g, ans, k, mu, loc=0):
    counts = np.floor(np.subtract(k, loc))
    inside = counts >= 0
    n = np.where(inside, counts, 0.0)
    p = np.where(inside, np.exp(special.xlogy(n, mu) - mu - special.gammaln(n + 1.0)), 0.0)
    return None, -g * p, None


@stats_rule("poisson.logcdf", held=("k", "loc"))
def poisson_logcdf(g, ans, k, mu, loc=0):
    counts = np.floor(np.subtract(k, loc))
    inside = counts >= 0
    n = np.where(inside, counts, 0.0)
    logp = special.xlogy(n, mu) - mu - special.gammaln(n + 1.0) - np.where(inside, ans, 0.0)
    return None, -g * np.where(inside, np.exp(logp), 0.0), None


@stats_rule("poisson.sf", held=("k", "loc"))
def poisson_sf(g, ans, k, mu, loc=0):
    counts = np.floor(np.subtract(k, loc))
    inside = counts >= 0
    n = np.where(inside, counts, 0.0)
    p = np.where(inside, np.exp(special.xlogy(n, mu) - mu - special.gammaln(n + 1.0)), 0.0)
    return None, g * p, None


@stats_rule("poisson.logsf", held=("k", "loc"))
def poisson_logsf(g, ans, k, mu, loc=0):
    counts = np.floor(np.subtract(k, loc))
    inside = counts >= 0
    n = np.where(inside, counts, 0.0)
    logp = special.xlogy(n, mu) - mu - special.gammaln(n + 1.0) - ans
    return None, g * np.where(inside, np.exp(logp), 0.0), None


# --- Dirichlet ------------------------------------------------------------------------------
# log p(x) = sum_i (alpha_i - 1) log x_i - sum_i gammaln(alpha_i) + gammaln(sum_i alpha_i),
# with the components along x's first axis (scipy's layout) and the samples along the others.
# When x holds one component fewer than alpha, the last is 1 - sum(x): it is appended (the
# slice [:1] of it, or [:0] when x holds all of them), and its derivative is subtracted from
# the others'. The output is squeezed, so g is reshaped to the samples' axes.


@stats_rule("dirichlet.logpdf", shape=None)
def dirichlet_logpdf(g, ans, x, alpha):
    n = np.shape(x)[0]
    last = 1.0 - np.sum(x, axis=0, keepdims=True)
    full = np.concatenate((x, last[:np.shape(alpha)[0] - n]), axis=0)
    w = np.expand_dims(np.reshape(g, np.shape(x)[1:]), 0)
    per = np.transpose(np.transpose(w) * (alpha - 1.0) / np.transpose(full))
    g_alpha = (np.sum(g) * (special.digamma(np.sum(alpha)) - special.digamma(alpha))
               + np.sum(np.reshape(w * np.log(full), (np.shape(alpha)[0], -1)), axis=1))
    return per[:n] - np.sum(per[n:], axis=0), g_alpha


@stats_rule("dirichlet.pdf", shape=None)
def dirichlet_pdf(g, ans, x, alpha):
    # the log-density's contributions, for the cotangent g * pdf of the log-density
    n = np.shape(x)[0]
    last = 1.0 - np.sum(x, axis=0, keepdims=True)
    full = np.concatenate((x, last[:np.shape(alpha)[0] - n]), axis=0)
    w = np.expand_dims(np.reshape(g * ans, np.shape(x)[1:]), 0)
    per = np.transpose(np.transpose(w) * (alpha - 1.0) / np.transpose(full))
    g_alpha = (np.sum(g * ans) * (special.digamma(np.sum(alpha)) - special.digamma(alpha))
               + np.sum(np.reshape(w * np.log(full), (np.shape(alpha)[0], -1)), axis=1))
    return per[:n] - np.sum(per[n:], axis=0), g_alpha


@stats_rule("dirichlet.entropy", shape="scalar")
def dirichlet_entropy(g, ans, alpha):
    # h = log B(alpha) + (a0 - K) digamma(a0) - sum_j (alpha_j - 1) digamma(alpha_j), a0 the
    # sum of alpha: the digamma terms of its derivative cancel.
    a0 = np.sum(alpha)
    return g * ((a0 - np.size(alpha)) * special.polygamma(1, a0)
                - (alpha - 1.0) * special.polygamma(1, alpha))


@stats_jvp("dirichlet.logpdf")
def dirichlet_logpdf_jvp(g, ans, x, alpha):
    n = np.shape(x)[0]
    last = 1.0 - np.sum(x, axis=0, keepdims=True)
    full = np.concatenate((x, last[:np.shape(alpha)[0] - n]), axis=0)
    moved = np.concatenate((g, -np.sum(g, axis=0, keepdims=True)[:np.shape(alpha)[0] - n]),
                           axis=0)
    t_x = np.sum(np.transpose((alpha - 1.0) * np.transpose(moved / full)), axis=0)
    t_alpha = (np.sum(g * (special.digamma(np.sum(alpha)) - special.digamma(alpha)))
               + np.sum(np.transpose(np.transpose(np.log(full)) * g), axis=0))
    return np.reshape(t_x, np.shape(ans)), np.reshape(t_alpha, np.shape(ans))


@stats_jvp("dirichlet.pdf")
def dirichlet_pdf_jvp(g, ans, x, alpha):
    n = np.shape(x)[0]
    last = 1.0 - np.sum(x, axis=0, keepdims=True)
    full = np.concatenate((x, last[:np.shape(alpha)[0] - n]), axis=0)
    moved = np.concatenate((g, -np.sum(g, axis=0, keepdims=True)[:np.shape(alpha)[0] - n]),
                           axis=0)
    t_x = np.sum(np.transpose((alpha - 1.0) * np.transpose(moved / full)), axis=0)
    t_alpha = (np.sum(g * (special.digamma(np.sum(alpha)) - special.digamma(alpha)))
               + np.sum(np.transpose(np.transpose(np.log(full)) * g), axis=0))
    return ans * np.reshape(t_x, np.shape(ans)), ans * np.reshape(t_alpha, np.shape(ans))


@stats_jvp("dirichlet.entropy")
def dirichlet_entropy_jvp(g, ans, alpha):
    a0 = np.sum(alpha)
    return np.sum(g * ((a0 - np.size(alpha)) * special.polygamma(1, a0)
                       - (alpha - 1.0) * special.polygamma(1, alpha)))


# --- the multivariate normal ----------------------------------------------------------------
# log p(x) = -(d log(2 pi) + log det S + r^T S^-1 r) / 2, r = x - mean, for each sample: x is
# (d,) or (..., d) (for d = 1 also (n,), n samples), and the output is squeezed; the samples
# are the rows of x reshaped to (-1, d), and g is flattened to match. S is the symmetric
# matrix scipy reads off the lower triangle of cov, S = tril(cov) + tril(cov, -1)^T: a
# cotangent G of S is tril(G) + tril(G^T, -1) for cov, and a tangent E of cov moves S by
# tril(E) + tril(E, -1)^T. The derivatives in S are (S^-1 r r^T S^-1 - S^-1) / 2 per sample.


def _full_covariance(static, ndim):
    if static.get("allow_singular", False) is not False:
        return ("scipy.stats.multivariate_normal with allow_singular=True is not "
                "differentiated: the rule covers a nonsingular cov, where allow_singular "
                "changes nothing; drop allow_singular=True")
    if ndim("cov") not in (2, None):
        return ("scipy.stats.multivariate_normal with a scalar or 1-d cov is not "
                "differentiated: the rule takes the covariance matrix; write s * np.eye(d) "
                "for a scalar s, np.diag(v) for a vector of variances v")
    return None


@stats_rule("multivariate_normal.logpdf", shape=None, requires=_full_covariance)
def multivariate_normal_logpdf(g, ans, x, mean=None, cov=1, allow_singular=False):
    d = np.shape(cov)[-1]
    sigma = np.tril(cov) + np.transpose(np.tril(cov, -1))
    if mean is None:
        r = np.reshape(x, (-1, d))
    else:
        r = np.reshape(x, (-1, d)) - np.reshape(mean, (d,))
    w = np.reshape(g, (-1, 1))
    sol = np.transpose(np.linalg.solve(sigma, np.transpose(r)))
    grad_sigma = 0.5 * (np.transpose(sol) @ (w * sol) - np.sum(g) * np.linalg.inv(sigma))
    if mean is None:
        g_mean = None
    else:
        g_mean = np.reshape(np.sum(w * sol, axis=0), np.shape(mean))
    return (np.reshape(-w * sol, np.shape(x)), g_mean,
            np.tril(grad_sigma) + np.tril(np.transpose(grad_sigma), -1))


@stats_rule("multivariate_normal.pdf", shape=None, requires=_full_covariance)
def multivariate_normal_pdf(g, ans, x, mean=None, cov=1, allow_singular=False):
    # the log-density's contributions, for the cotangent g * pdf of the log-density
    d = np.shape(cov)[-1]
    sigma = np.tril(cov) + np.transpose(np.tril(cov, -1))
    if mean is None:
        r = np.reshape(x, (-1, d))
    else:
        r = np.reshape(x, (-1, d)) - np.reshape(mean, (d,))
    w = np.reshape(g * ans, (-1, 1))
    sol = np.transpose(np.linalg.solve(sigma, np.transpose(r)))
    grad_sigma = 0.5 * (np.transpose(sol) @ (w * sol) - np.sum(g * ans) * np.linalg.inv(sigma))
    if mean is None:
        g_mean = None
    else:
        g_mean = np.reshape(np.sum(w * sol, axis=0), np.shape(mean))
    return (np.reshape(-w * sol, np.shape(x)), g_mean,
            np.tril(grad_sigma) + np.tril(np.transpose(grad_sigma), -1))


@stats_rule("multivariate_normal.entropy", shape="scalar", requires=_full_covariance)
def multivariate_normal_entropy(g, ans, mean=None, cov=1):
    # h = (d log(2 pi e) + log det S) / 2
    sigma = np.tril(cov) + np.transpose(np.tril(cov, -1))
    grad_sigma = 0.5 * g * np.linalg.inv(sigma)
    return None, np.tril(grad_sigma) + np.tril(np.transpose(grad_sigma), -1)


@stats_jvp("multivariate_normal.logpdf")
def multivariate_normal_logpdf_jvp(g, ans, x, mean=None, cov=1, allow_singular=False):
    d = np.shape(cov)[-1]
    sigma = np.tril(cov) + np.transpose(np.tril(cov, -1))
    if mean is None:
        r = np.reshape(x, (-1, d))
    else:
        r = np.reshape(x, (-1, d)) - np.reshape(mean, (d,))
    sol = np.transpose(np.linalg.solve(sigma, np.transpose(r)))
    if mean is None:
        t_mean = None
    else:
        t_mean = np.reshape(np.sum(sol * np.reshape(g, (d,)), axis=-1), np.shape(ans))
    moved = np.tril(g) + np.transpose(np.tril(g, -1))
    t_cov = (0.5 * np.sum((sol @ moved) * sol, axis=-1)
             - 0.5 * np.sum(np.linalg.inv(sigma) * moved))
    return (np.reshape(-np.sum(sol * np.reshape(g, (-1, d)), axis=-1), np.shape(ans)), t_mean,
            np.reshape(t_cov, np.shape(ans)))


@stats_jvp("multivariate_normal.pdf")
def multivariate_normal_pdf_jvp(g, ans, x, mean=None, cov=1, allow_singular=False):
    d = np.shape(cov)[-1]
    sigma = np.tril(cov) + np.transpose(np.tril(cov, -1))
    if mean is None:
        r = np.reshape(x, (-1, d))
    else:
        r = np.reshape(x, (-1, d)) - np.reshape(mean, (d,))
    sol = np.transpose(np.linalg.solve(sigma, np.transpose(r)))
    if mean is None:
        t_mean = None
    else:
        t_mean = ans * np.reshape(np.sum(sol * np.reshape(g, (d,)), axis=-1), np.shape(ans))
    moved = np.tril(g) + np.transpose(np.tril(g, -1))
    t_cov = (0.5 * np.sum((sol @ moved) * sol, axis=-1)
             - 0.5 * np.sum(np.linalg.inv(sigma) * moved))
    return (ans * np.reshape(-np.sum(sol * np.reshape(g, (-1, d)), axis=-1), np.shape(ans)),
            t_mean, ans * np.reshape(t_cov, np.shape(ans)))


@stats_jvp("multivariate_normal.entropy")
def multivariate_normal_entropy_jvp(g, ans, mean=None, cov=1):
    sigma = np.tril(cov) + np.transpose(np.tril(cov, -1))
    return None, 0.5 * np.sum(np.linalg.inv(sigma) * (np.tril(g) + np.transpose(np.tril(g, -1))))
