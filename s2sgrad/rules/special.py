"""Rules for ``scipy.special``: the logistic function and ``softplus``, gamma and beta
functions and their logarithms, ``rgamma``, error functions and ``erfcx``, the standard normal
distribution function ``ndtr``, its logarithm ``log_ndtr`` and its inverse ``ndtri``,
``xlogy``, Bessel functions, incomplete gamma functions, the regularized incomplete beta
function ``betainc``, and ``logsumexp``, ``softmax``, ``log_softmax``; ``gammasgn`` is
nondifferentiable.

scipy is optional: without it this module registers nothing. The derivatives are special
functions again (``gammaln' = digamma``, ``digamma' = polygamma(1, .)``, ``j0' = -j1``), each
with a rule of its own, so second derivatives follow. A Bessel function's order (``v``, ``n``),
``polygamma``'s ``n``, ``multigammaln``'s dimension ``d``, the incomplete gamma functions'
shape parameter ``a`` and ``betainc``'s ``a`` and ``b`` get no gradient: the rules
differentiate in ``x`` only, and a call where one of them depends on a differentiated input is
refused (``held``). ``logsumexp`` takes weights ``b`` (differentiated too), and no
``return_sign``: such calls are refused. ``gammasgn``, the sign of the gamma function, is
piecewise constant: its derivative is zero wherever it exists. ``rgamma = 1 / gamma`` has the
derivative ``-rgamma digamma``, which is nan at the poles of gamma (0, -1, -2, ...), where
``rgamma`` is 0.
"""

import math

import numpy as np

from ..runtime.unbroadcast import unbroadcast
from .registry import jvp_rule, nondifferentiable, vjp_rule

try:
    from scipy import special
except ImportError:  # scipy is an optional dependency: without it there is nothing to register
    special = None


def scipy_rule(*names, shape=None, requires=None, held=()):
    """``vjp_rule`` for the ``scipy.special`` functions named, or no registration at all
    without scipy (the template is left as it is)."""
    if special is None:
        return lambda template: template
    return vjp_rule(*(getattr(special, name) for name in names), shape=shape,
                    requires=requires, held=held)


def scipy_jvp(*names):
    """``jvp_rule`` for the ``scipy.special`` functions named, or nothing without scipy."""
    if special is None:
        return lambda template: template
    return jvp_rule(*(getattr(special, name) for name in names))


# --- the logistic function ------------------------------------------------------------------


@scipy_rule("expit", shape="elementwise")
def expit(g, ans, x):
    # s' = s (1 - s)
    return g * ans * (1.0 - ans)


@scipy_rule("log_expit", shape="elementwise")
def log_expit(g, ans, x):
    # d log s(x) = 1 - s(x) = s(-x)
    return g * special.expit(-x)


@scipy_rule("softplus", shape="elementwise")
def softplus(g, ans, x):
    # log(1 + exp(x)) has derivative s(x)
    return g * special.expit(x)


@scipy_rule("logit", shape="elementwise")
def logit(g, ans, x):
    # logit(x) = log(x) - log(1 - x)
    return g / (x * (1.0 - x))


# --- gamma and beta functions ---------------------------------------------------------------


@scipy_rule("gamma", shape="elementwise")
def gamma(g, ans, x):
    # Gamma' = Gamma digamma
    return g * ans * special.digamma(x)


@scipy_rule("gammaln", shape="elementwise")
def gammaln(g, ans, x):
    # log|Gamma(x)| has derivative digamma(x) on both sides of the poles.
    return g * special.digamma(x)


@scipy_rule("rgamma", shape="elementwise")
def rgamma(g, ans, x):
    # (1 / Gamma)' = -Gamma' / Gamma^2 = -rgamma digamma
    return -g * ans * special.digamma(x)


@scipy_rule("digamma", shape="elementwise")  # scipy.special.psi is the same function
def digamma(g, ans, x):
    return g * special.polygamma(1, x)


@scipy_rule("polygamma", shape="elementwise", held=("n",))
def polygamma(g, ans, n, x):
    # The n-th derivative of digamma: its derivative in x is the next one. The order n is an
    # integer and gets no gradient.
    return None, g * special.polygamma(n + 1, x)


@scipy_rule("multigammaln", shape="elementwise", held=("d",))
def multigammaln(g, ans, a, d):
    # log Gamma_d(a) = d (d - 1) / 4 log(pi) + sum_{j < d} gammaln(a - j / 2): its derivative
    # sums digamma over the same points, along an axis of length d added last. The dimension d
    # is an integer and gets no gradient.
    shifted = np.expand_dims(a, -1) - 0.5 * np.arange(d)
    return g * np.sum(special.digamma(shifted), axis=-1), None


@scipy_rule("beta", shape="elementwise")
def beta(g, ans, a, b):
    # B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)
    both = special.digamma(a + b)
    return g * ans * (special.digamma(a) - both), g * ans * (special.digamma(b) - both)


@scipy_rule("betaln", shape="elementwise")
def betaln(g, ans, a, b):
    both = special.digamma(a + b)
    return g * (special.digamma(a) - both), g * (special.digamma(b) - both)


# --- error functions ------------------------------------------------------------------------


@scipy_rule("erf", shape="elementwise")
def erf(g, ans, x):
    return g * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x)


@scipy_rule("erfc", shape="elementwise")
def erfc(g, ans, x):
    return -g * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x)


@scipy_rule("erfinv", shape="elementwise")
def erfinv(g, ans, x):
    # erf(y) = x gives 2 / sqrt(pi) exp(-y^2) dy = dx.
    return g * (0.5 * math.sqrt(math.pi)) * np.exp(ans * ans)


@scipy_rule("erfcinv", shape="elementwise")
def erfcinv(g, ans, x):
    # erfc(y) = x gives -2 / sqrt(pi) exp(-y^2) dy = dx.
    return -g * (0.5 * math.sqrt(math.pi)) * np.exp(ans * ans)


@scipy_rule("erfcx", shape="elementwise")
def erfcx(g, ans, x):
    # erfcx(x) = exp(x^2) erfc(x): 2 x erfcx(x) - 2 / sqrt(pi)
    return g * (2.0 * x * ans - 2.0 / math.sqrt(math.pi))


# --- the standard normal distribution function ---------------------------------------------
# ndtr' = phi, the density exp(-x^2 / 2) / sqrt(2 pi); log_ndtr' = phi / ndtr, written
# exp(log phi - log_ndtr) to stay finite far in the lower tail; ndtr(y) = p gives
# phi(y) dy = dp.


@scipy_rule("ndtr", shape="elementwise")
def ndtr(g, ans, x):
    return g * np.exp(-0.5 * x * x - 0.5 * math.log(2.0 * math.pi))


@scipy_rule("log_ndtr", shape="elementwise")
def log_ndtr(g, ans, x):
    return g * np.exp(-0.5 * x * x - 0.5 * math.log(2.0 * math.pi) - ans)


@scipy_rule("ndtri", shape="elementwise")
def ndtri(g, ans, y):
    return g * np.exp(0.5 * ans * ans + 0.5 * math.log(2.0 * math.pi))


# --- x log y --------------------------------------------------------------------------------


@scipy_rule("xlogy", shape="elementwise")
def xlogy(g, ans, x, y):
    return g * np.log(y), g * x / y


@scipy_rule("xlog1py", shape="elementwise")
def xlog1py(g, ans, x, y):
    return g * np.log1p(y), g * x / (1.0 + y)


# --- Bessel functions -----------------------------------------------------------------------
# C_v' = (C_{v-1} - C_{v+1}) / 2 for C = J, Y; I_v' = (I_{v-1} + I_{v+1}) / 2. The order gets
# no gradient. The exponentially scaled ive(v, x) = iv(v, x) exp(-|x|) adds -sign(x) ive.


@scipy_rule("j0", shape="elementwise")
def j0(g, ans, x):
    return -g * special.j1(x)


@scipy_rule("j1", shape="elementwise")
def j1(g, ans, x):
    return g * 0.5 * (special.j0(x) - special.jv(2, x))


@scipy_rule("y0", shape="elementwise")
def y0(g, ans, x):
    return -g * special.y1(x)


@scipy_rule("y1", shape="elementwise")
def y1(g, ans, x):
    return g * 0.5 * (special.y0(x) - special.yn(2, x))


@scipy_rule("jv", shape="elementwise", held=("v",))
def jv(g, ans, v, x):
    return None, g * 0.5 * (special.jv(v - 1, x) - special.jv(v + 1, x))


@scipy_rule("yv", shape="elementwise", held=("v",))
def yv(g, ans, v, x):
    return None, g * 0.5 * (special.yv(v - 1, x) - special.yv(v + 1, x))


@scipy_rule("yn", shape="elementwise", held=("n",))
def yn(g, ans, n, x):
    return None, g * 0.5 * (special.yn(n - 1, x) - special.yn(n + 1, x))


@scipy_rule("iv", shape="elementwise", held=("v",))
def iv(g, ans, v, x):
    return None, g * 0.5 * (special.iv(v - 1, x) + special.iv(v + 1, x))


@scipy_rule("ive", shape="elementwise", held=("v",))
def ive(g, ans, v, x):
    # exp(-|x|) has a kink at 0, where sign(0) = 0 gives the mean of the two sides.
    return None, g * (0.5 * (special.ive(v - 1, x) + special.ive(v + 1, x)) - np.sign(x) * ans)


@scipy_rule("i0", shape="elementwise")
def i0(g, ans, x):
    return g * special.i1(x)


@scipy_rule("i1", shape="elementwise")
def i1(g, ans, x):
    return g * 0.5 * (special.i0(x) + special.iv(2, x))


@scipy_rule("i0e", shape="elementwise")
def i0e(g, ans, x):
    return g * (special.i1e(x) - np.sign(x) * ans)


@scipy_rule("i1e", shape="elementwise")
def i1e(g, ans, x):
    return g * (0.5 * (special.i0e(x) + special.ive(2, x)) - np.sign(x) * ans)


# --- incomplete gamma functions -------------------------------------------------------------
# The regularized P(a, x) = gamma(a, x) / Gamma(a) has d/dx = x^(a-1) exp(-x) / Gamma(a), and
# Q = 1 - P its negative. The shape a gets no gradient: its derivative is not a closed form
# of special functions, so the rules differentiate in x only. xlogy makes x^(a-1) at x = 0
# right for a = 1 (0 * log 0 is 0 there).


@scipy_rule("gammainc", shape="elementwise", held=("a",))
def gammainc(g, ans, a, x):
    return None, g * np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a))


@scipy_rule("gammaincc", shape="elementwise", held=("a",))
def gammaincc(g, ans, a, x):
    return None, -g * np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a))


# The regularized incomplete beta function I_x(a, b) has d/dx = x^(a-1) (1-x)^(b-1) / B(a, b).
# Its derivatives in a and b are not closed forms of special functions: they are held.


@scipy_rule("betainc", shape="elementwise", held=("a", "b"))
def betainc(g, ans, a, b, x):
    return None, None, g * np.exp(special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x)
                                  - special.betaln(a, b))


# --- logsumexp, softmax, log_softmax --------------------------------------------------------


def _signless(static, ndim):
    """The logsumexp rule gives its value alone, with weights b or without."""
    if static.get("return_sign", False) is not False:
        return ("scipy.special.logsumexp(..., return_sign=True) is not differentiated: it "
                "returns the sign too; where the weighted sum is positive (weights b >= 0), "
                "drop return_sign")
    return None


@scipy_rule("logsumexp", shape="reduce", requires=_signless)
def logsumexp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    # d lse(a) = sum softmax(a) da: the weights exp(a - lse) over the reduced axes, which are
    # put back (unless keepdims kept them) so that the weights broadcast over them. With
    # weights b, lse = log sum b exp(a): a gets b exp(a - lse), and b gets exp(a - lse),
    # each summed back to its own shape where a and b broadcast.
    if axis is None or keepdims:
        g_kept = g
        ans_kept = ans
    else:
        g_kept = np.expand_dims(g, axis)
        ans_kept = np.expand_dims(ans, axis)
    if b is None:
        g_a = g_kept * np.exp(a - ans_kept)
        g_b = None
    else:
        share = g_kept * np.exp(a - ans_kept)
        g_a = unbroadcast(share * b, np.shape(a))
        g_b = unbroadcast(share, np.shape(b))
    return g_a, None, g_b


@scipy_rule("softmax", shape="same")
def softmax(g, ans, x, axis=None):
    # The Jacobian is diag(s) - s s^T over each slice along axis (all entries for None).
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


@scipy_rule("log_softmax", shape="same")
def log_softmax(g, ans, x, axis=None):
    # log_softmax(x) = x - lse(x): the Jacobian is I - 1 s^T, s = exp(ans).
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)


# --- forward mode: g is the tangent of the first argument ------------------------------------
# (The elementwise rules above are their own forward-mode rules.)


@scipy_jvp("logsumexp")
def logsumexp_jvp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    # a's tangent weighted by b exp(a - lse), b's by exp(a - lse)
    if axis is None or keepdims:
        ans_kept = ans
    else:
        ans_kept = np.expand_dims(ans, axis)
    if b is None:
        scale = g
    else:
        scale = g * b
    return (np.sum(scale * np.exp(a - ans_kept), axis=axis, keepdims=keepdims), None,
            np.sum(g * np.exp(a - ans_kept), axis=axis, keepdims=keepdims))


@scipy_jvp("softmax")
def softmax_jvp(g, ans, x, axis=None):
    # The Jacobian is symmetric: the same product as the vjp rule's, applied to a tangent.
    return ans * (g - np.sum(ans * g, axis=axis, keepdims=True))


@scipy_jvp("log_softmax")
def log_softmax_jvp(g, ans, x, axis=None):
    return g - np.sum(np.exp(ans) * g, axis=axis, keepdims=True)


if special is not None:
    nondifferentiable(special.gammasgn, why="piecewise constant: the derivative is zero "
                      "wherever it exists")
