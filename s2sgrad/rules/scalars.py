"""Rules for the ``math`` module and the ``float`` conversion: functions of Python scalars.

The templates compute with ``math`` so a derivative of floats stays a float. Like the primal
functions they raise rather than return inf or nan where the derivative does not exist: the
gradient of ``math.sqrt`` at 0 is a ``ZeroDivisionError``, of ``math.pow(x, y)`` in ``y`` for a
negative ``x`` a ``ValueError``. Where PyTorch defines a value they give it instead:
``math.atan2`` at the origin has gradient 0, ``math.pow(x, 0.0)`` has derivative 0 in ``x``.
"""

import math

import numpy as np

from .registry import vjp_rule


@vjp_rule(math.exp, shape="scalar")
def exp(g, ans, x):
    return g * ans


@vjp_rule(math.expm1, shape="scalar")
def expm1(g, ans, x):
    return g * (ans + 1.0)


@vjp_rule(math.log, shape="scalar")
def log(g, ans, x, base=math.e):
    # log(x, base) == log(x) / log(base); log(e) == 1.0 exactly, so the default costs nothing.
    log_base = math.log(base)
    return g / (x * log_base), -g * ans / (base * log_base)


@vjp_rule(math.log2, shape="scalar")
def log2(g, ans, x):
    return g / (x * math.log(2.0))


@vjp_rule(math.log10, shape="scalar")
def log10(g, ans, x):
    return g / (x * math.log(10.0))


@vjp_rule(math.log1p, shape="scalar")
def log1p(g, ans, x):
    return g / (1.0 + x)


@vjp_rule(math.sqrt, shape="scalar")
def sqrt(g, ans, x):
    return g / (2.0 * ans)


@vjp_rule(math.pow, shape="scalar")
def pow(g, ans, x, y):
    # 0 ** y has no logarithm but its derivative in y is 0 (for y > 0): x + (x == 0) takes
    # the log of 1 there, and is x elsewhere. The derivative in x is 0 for y == 0, also at
    # x == 0: the exponent y - (y != 0) is then 0, not -1. (No test on x: a rule tested at
    # run time is called rather than inlined, and a call is not differentiated again.)
    return g * y * math.pow(x, y - (y != 0)), g * ans * math.log(x + (x == 0))


@vjp_rule(math.sin, shape="scalar")
def sin(g, ans, x):
    return g * math.cos(x)


@vjp_rule(math.cos, shape="scalar")
def cos(g, ans, x):
    return -g * math.sin(x)


@vjp_rule(math.tan, shape="scalar")
def tan(g, ans, x):
    return g * (1.0 + ans * ans)


@vjp_rule(math.asin, shape="scalar")
def asin(g, ans, x):
    return g / math.sqrt(1.0 - x * x)


@vjp_rule(math.acos, shape="scalar")
def acos(g, ans, x):
    return -g / math.sqrt(1.0 - x * x)


@vjp_rule(math.atan, shape="scalar")
def atan(g, ans, x):
    return g / (1.0 + x * x)


@vjp_rule(math.atan2, shape="scalar")
def atan2(g, ans, y, x):
    # At the origin both contributions are 0, as in PyTorch: r2 + (r2 == 0) is 1 there.
    r2 = x * x + y * y
    nonzero_r2 = r2 + (r2 == 0)
    return g * x / nonzero_r2, -g * y / nonzero_r2


@vjp_rule(math.hypot, shape="scalar")
def hypot(g, ans, x, y):
    # Two coordinates only: math.hypot(x, y, z) does not bind to this rule.
    return g * x / ans, g * y / ans


@vjp_rule(math.sinh, shape="scalar")
def sinh(g, ans, x):
    return g * math.cosh(x)


@vjp_rule(math.cosh, shape="scalar")
def cosh(g, ans, x):
    return g * math.sinh(x)


@vjp_rule(math.tanh, shape="scalar")
def tanh(g, ans, x):
    return g * (1.0 - ans * ans)


@vjp_rule(math.asinh, shape="scalar")
def asinh(g, ans, x):
    return g / math.sqrt(x * x + 1.0)


@vjp_rule(math.acosh, shape="scalar")
def acosh(g, ans, x):
    return g / math.sqrt(x * x - 1.0)


@vjp_rule(math.atanh, shape="scalar")
def atanh(g, ans, x):
    return g / (1.0 - x * x)


@vjp_rule(math.erf, shape="scalar")
def erf(g, ans, x):
    return g * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@vjp_rule(math.erfc, shape="scalar")
def erfc(g, ans, x):
    return -g * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@vjp_rule(math.fabs, shape="scalar")
def fabs(g, ans, x):
    # abs'(0) == 0, as for np.abs; math.copysign would give 1 at 0.
    return g * np.sign(x)


@vjp_rule(math.degrees, shape="scalar")
def degrees(g, ans, x):
    return g * (180.0 / math.pi)


@vjp_rule(math.radians, shape="scalar")
def radians(g, ans, x):
    return g * (math.pi / 180.0)


@vjp_rule(float, shape="scalar")
def to_float(g, ans, x=0.0):
    return g


if hasattr(math, "exp2"):  # Python 3.11+

    @vjp_rule(math.exp2, shape="scalar")
    def exp2(g, ans, x):
        return g * ans * math.log(2.0)


if hasattr(math, "cbrt"):  # Python 3.11+

    @vjp_rule(math.cbrt, shape="scalar")
    def cbrt(g, ans, x):
        return g / (3.0 * ans * ans)


@vjp_rule(max, shape="elementwise")
def builtin_max(g, ans, a, b):
    # max(a, b) is a unless b > a: on a tie (or a nan) Python returns a, which takes the
    # gradient.
    g_a = g * (1.0 - (b > a))
    return g_a, g - g_a


@vjp_rule(min, shape="elementwise")
def builtin_min(g, ans, a, b):
    g_a = g * (1.0 - (b < a))
    return g_a, g - g_a
