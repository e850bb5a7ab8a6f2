"""Rules for the densities and distribution functions (``pdf``, ``logpdf``, ``cdf``,
``logcdf``, ``sf``, ``logsf``) of more of ``scipy.stats``'s location-scale families: the
Cauchy, Laplace and logistic distributions on the whole line, the half-Cauchy, half-normal and
exponential distributions from ``loc`` on, and the log-normal distribution in its shape ``s``.

They follow stats.py's conventions (registered once ``scipy.stats`` is imported, nothing
without scipy): the primitives are the methods of scipy's distribution objects, called with
``loc=`` and ``scale=`` by position or by name, and with ``y = np.subtract(x, loc) / scale``
every derivative comes from the standard distribution's in ``y``. Every parameter is
differentiated, the log-normal's ``s`` too (its distribution functions are ``Phi(log(y) /
s)``). Below the support of the half-line families the distribution functions are constant
and get zero derivatives; the Laplace density has a kink at ``loc``, where its derivative is
the mean of the two sides.
"""

import math

import numpy as np

from .stats import special, stats_rule

# --- location-scale families of the whole line: Cauchy, Laplace, logistic -------------------
# y = np.subtract(x, loc) / scale and the density p(y) / scale, as in stats.py. With s the
# derivative of log p in y, the log-density gets s / scale in x, -s / scale in loc and
# -(1 + y s) / scale in scale (the density the same, times itself); a distribution function
# F(y) gets p(y) / scale in x, minus that in loc and minus that times y in scale (its
# logarithm divides by the value, exp(log p - ans)). Cauchy: p = 1 / (pi (1 + y^2)), s = -2 y / (1 + y^2). Laplace:
# p = exp(-|y|) / 2, s = -sign(y) (the mean of the two sides at y = 0). Logistic:
# p = expit(y) expit(-y), s = 1 - 2 expit(y), F = expit(y), log F = log_expit(y).


@stats_rule("cauchy.pdf")  # and the half-Cauchy's: the same density, times 2 (its
@stats_rule("halfcauchy.pdf")  # ans, 0 below the support, keeps the contributions there 0)
def cauchy_pdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = -2.0 * y / (1.0 + y * y)
    h = g * ans
    return h * s / scale, -h * s / scale, -h * (1.0 + y * s) / scale


@stats_rule("cauchy.logpdf")  # the half-Cauchy's too: log 2 more, the same derivative
@stats_rule("halfcauchy.logpdf")
def cauchy_logpdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = -2.0 * y / (1.0 + y * y)
    return g * s / scale, -g * s / scale, -g * (1.0 + y * s) / scale


@stats_rule("cauchy.cdf")
def cauchy_cdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g / (math.pi * (1.0 + y * y)) / scale
    return p, -p, -p * y


@stats_rule("cauchy.logcdf")
def cauchy_logcdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g * np.exp(-np.log1p(y * y) - math.log(math.pi) - ans) / scale
    return p, -p, -p * y


@stats_rule("cauchy.sf")
def cauchy_sf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g / (math.pi * (1.0 + y * y)) / scale
    return -p, p, p * y


@stats_rule("cauchy.logsf")
def cauchy_logsf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g * np.exp(-np.log1p(y * y) - math.log(math.pi) - ans) / scale
    return -p, p, p * y


@stats_rule("laplace.pdf")
def laplace_pdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = -np.sign(y)
    h = g * ans
    return h * s / scale, -h * s / scale, -h * (1.0 + y * s) / scale


@stats_rule("laplace.logpdf")
def laplace_logpdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = -np.sign(y)
    return g * s / scale, -g * s / scale, -g * (1.0 + y * s) / scale


@stats_rule("laplace.cdf")
def laplace_cdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g * 0.5 * np.exp(-np.abs(y)) / scale
    return p, -p, -p * y


@stats_rule("laplace.logcdf")
def laplace_logcdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g * np.exp(-np.abs(y) - math.log(2.0) - ans) / scale
    return p, -p, -p * y


@stats_rule("laplace.sf")
def laplace_sf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g * 0.5 * np.exp(-np.abs(y)) / scale
    return -p, p, p * y


@stats_rule("laplace.logsf")
def laplace_logsf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g * np.exp(-np.abs(y) - math.log(2.0) - ans) / scale
    return -p, p, p * y


@stats_rule("logistic.pdf")
def logistic_pdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = 1.0 - 2.0 * special.expit(y)
    h = g * ans
    return h * s / scale, -h * s / scale, -h * (1.0 + y * s) / scale


@stats_rule("logistic.logpdf")
def logistic_logpdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    s = 1.0 - 2.0 * special.expit(y)
    return g * s / scale, -g * s / scale, -g * (1.0 + y * s) / scale


@stats_rule("logistic.cdf")
def logistic_cdf(g, ans, x, loc=0, scale=1):
    # F = expit(y): F' = F (1 - F)
    y = np.subtract(x, loc) / scale
    p = g * ans * (1.0 - ans) / scale
    return p, -p, -p * y


@stats_rule("logistic.logcdf")
def logistic_logcdf(g, ans, x, loc=0, scale=1):
    # log_expit(y)' = expit(-y)
    y = np.subtract(x, loc) / scale
    p = g * special.expit(-y) / scale
    return p, -p, -p * y


@stats_rule("logistic.sf")
def logistic_sf(g, ans, x, loc=0, scale=1):
    # S = expit(-y): S' = -S (1 - S)
    y = np.subtract(x, loc) / scale
    p = g * ans * (1.0 - ans) / scale
    return -p, p, p * y


@stats_rule("logistic.logsf")
def logistic_logsf(g, ans, x, loc=0, scale=1):
    # log_expit(-y)' = -expit(y)
    y = np.subtract(x, loc) / scale
    p = g * special.expit(y) / scale
    return -p, p, p * y


# --- location-scale families from loc on: half-Cauchy, half-normal, exponential -------------
# The same derivatives on y >= 0; below it the density is 0 and the distribution functions are
# constant, with zero derivatives (the exponentials are taken of y >= 0 only, y replaced by 0
# elsewhere, which keeps overflow out of the unselected side). Half-Cauchy: p = 2 / (pi (1 +
# y^2)). Half-normal: p = sqrt(2 / pi) exp(-y^2 / 2), s = -y. Exponential: p = exp(-y), s = -1,
# and log sf = -y on y >= 0.


@stats_rule("halfcauchy.cdf")
def halfcauchy_cdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g * np.where(y > 0.0, 2.0 / (math.pi * (1.0 + y * y)), 0.0) / scale
    return p, -p, -p * y


@stats_rule("halfcauchy.logcdf")
def halfcauchy_logcdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    logp = math.log(2.0 / math.pi) - np.log1p(y * y) - np.where(inside, ans, 0.0)
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return p, -p, -p * y


@stats_rule("halfcauchy.sf")
def halfcauchy_sf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = g * np.where(y > 0.0, 2.0 / (math.pi * (1.0 + y * y)), 0.0) / scale
    return -p, p, p * y


@stats_rule("halfcauchy.logsf")
def halfcauchy_logsf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    logp = math.log(2.0 / math.pi) - np.log1p(y * y) - ans
    p = g * np.where(y > 0.0, np.exp(logp), 0.0) / scale
    return -p, p, p * y


@stats_rule("halfnorm.pdf")
def halfnorm_pdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    d = g * ans * y / scale
    return -d, d, g * ans * (y * y - 1.0) / scale


@stats_rule("halfnorm.logpdf")
def halfnorm_logpdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    d = g * y / scale
    return -d, d, g * (y * y - 1.0) / scale


@stats_rule("halfnorm.cdf")
def halfnorm_cdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 0.0)
    p = g * np.where(inside, np.exp(-0.5 * ys * ys + 0.5 * math.log(2.0 / math.pi)), 0.0) / scale
    return p, -p, -p * y


@stats_rule("halfnorm.logcdf")
def halfnorm_logcdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 0.0)
    logp = -0.5 * ys * ys + 0.5 * math.log(2.0 / math.pi) - np.where(inside, ans, 0.0)
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return p, -p, -p * y


@stats_rule("halfnorm.sf")
def halfnorm_sf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 0.0)
    p = g * np.where(inside, np.exp(-0.5 * ys * ys + 0.5 * math.log(2.0 / math.pi)), 0.0) / scale
    return -p, p, p * y


@stats_rule("halfnorm.logsf")
def halfnorm_logsf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 0.0)
    logp = -0.5 * ys * ys + 0.5 * math.log(2.0 / math.pi) - ans
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return -p, p, p * y


@stats_rule("expon.pdf")
def expon_pdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    h = g * ans
    return -h / scale, h / scale, h * (y - 1.0) / scale


@stats_rule("expon.logpdf")
def expon_logpdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    return -g / scale, g / scale, g * (y - 1.0) / scale


@stats_rule("expon.cdf")
def expon_cdf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    p = g * np.where(inside, np.exp(-np.where(inside, y, 0.0)), 0.0) / scale
    return p, -p, -p * y


@stats_rule("expon.logcdf")
def expon_logcdf(g, ans, x, loc=0, scale=1):
    # exp(-y) / (1 - exp(-y))
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    logp = -np.where(inside, y, 0.0) - np.where(inside, ans, 0.0)
    p = g * np.where(inside, np.exp(logp), 0.0) / scale
    return p, -p, -p * y


@stats_rule("expon.sf")
def expon_sf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    p = g * np.where(inside, np.exp(-np.where(inside, y, 0.0)), 0.0) / scale
    return -p, p, p * y


@stats_rule("expon.logsf")
def expon_logsf(g, ans, x, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    p = np.where(y > 0.0, g, 0.0) / scale
    return -p, p, p * y


# --- log-normal -----------------------------------------------------------------------------
# y = np.subtract(x, loc) / scale > 0, z = log(y) / s: log p(y) = -z^2 / 2 - log(s y) - log(2 pi)
# / 2, with derivative w = -(z / s + 1) / y in y and (z^2 - 1) / s in s. The distribution
# functions Phi(z), 1 - Phi(z) have derivative +-phi(z) / (s y) in y and -+phi(z) z / s in s;
# below the support they are constant (y is replaced by 1 there before the logarithm).


@stats_rule("lognorm.pdf")
def lognorm_pdf(g, ans, x, s, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    ys = np.where(y > 0.0, y, 1.0)
    z = np.log(ys) / s
    w = -(z / s + 1.0) / ys
    h = g * ans
    return h * w / scale, h * (z * z - 1.0) / s, -h * w / scale, -h * (1.0 + y * w) / scale


@stats_rule("lognorm.logpdf")
def lognorm_logpdf(g, ans, x, s, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    z = np.log(y) / s
    w = -(z / s + 1.0) / y
    return g * w / scale, g * (z * z - 1.0) / s, -g * w / scale, -g * (1.0 + y * w) / scale


@stats_rule("lognorm.cdf")
def lognorm_cdf(g, ans, x, s, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    z = np.log(ys) / s
    phi = g * np.where(inside, np.exp(-0.5 * z * z - 0.5 * math.log(2.0 * math.pi)), 0.0)
    p = phi / (s * ys * scale)
    return p, -phi * z / s, -p, -p * y


@stats_rule("lognorm.logcdf")
def lognorm_logcdf(g, ans, x, s, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    z = np.log(ys) / s
    logp = -0.5 * z * z - 0.5 * math.log(2.0 * math.pi) - np.where(inside, ans, 0.0)
    phi = g * np.where(inside, np.exp(logp), 0.0)
    p = phi / (s * ys * scale)
    return p, -phi * z / s, -p, -p * y


@stats_rule("lognorm.sf")
def lognorm_sf(g, ans, x, s, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    z = np.log(ys) / s
    phi = g * np.where(inside, np.exp(-0.5 * z * z - 0.5 * math.log(2.0 * math.pi)), 0.0)
    p = phi / (s * ys * scale)
    return -p, phi * z / s, p, p * y


@stats_rule("lognorm.logsf")
def lognorm_logsf(g, ans, x, s, loc=0, scale=1):
    y = np.subtract(x, loc) / scale
    inside = y > 0.0
    ys = np.where(inside, y, 1.0)
    z = np.log(ys) / s
    logp = -0.5 * z * z - 0.5 * math.log(2.0 * math.pi) - ans
    phi = g * np.where(inside, np.exp(logp), 0.0)
    p = phi / (s * ys * scale)
    return -p, phi * z / s, p, p * y

