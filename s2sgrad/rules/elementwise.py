"""Rules for NumPy's elementwise functions: exponentials, logarithms, trigonometry, ``abs``,
``maximum``/``minimum``, ``where`` and ``clip``.

The rules of the holomorphic functions (exponentials, logarithms, square roots, powers,
trigonometric and hyperbolic functions) hold for complex values as they stand, in the
convention registry.py describes (``complex=True``); ``abs`` spells its complex case out.

Each contribution is shaped like the broadcast output; the engine reduces it to the operand's
shape. Where the derivative is not defined at a point the rules follow PyTorch: ``abs'(0) = 0``,
``maximum``/``minimum`` split the gradient half and half at ties, and ``clip`` passes the
gradient where the input lies within its bounds (bounds included) and gives it to the bound
elsewhere.
"""

import math

import numpy as np

from .registry import jvp_rule, vjp_rule


@vjp_rule(np.exp, shape="elementwise", complex=True)
def exp(g, ans, x):
    return g * ans


@vjp_rule(np.exp2, shape="elementwise", complex=True)
def exp2(g, ans, x):
    return g * ans * math.log(2.0)


@vjp_rule(np.expm1, shape="elementwise", complex=True)
def expm1(g, ans, x):
    return g * (ans + 1.0)


@vjp_rule(np.log, shape="elementwise", complex=True)
def log(g, ans, x):
    return g / x


@vjp_rule(np.log2, shape="elementwise", complex=True)
def log2(g, ans, x):
    return g / (x * math.log(2.0))


@vjp_rule(np.log10, shape="elementwise", complex=True)
def log10(g, ans, x):
    return g / (x * math.log(10.0))


@vjp_rule(np.log1p, shape="elementwise", complex=True)
def log1p(g, ans, x):
    return g / (1.0 + x)


@vjp_rule(np.sqrt, shape="elementwise", complex=True)
def sqrt(g, ans, x):
    return g / (2.0 * ans)


@vjp_rule(np.cbrt, shape="elementwise")
def cbrt(g, ans, x):
    return g / (3.0 * ans * ans)


@vjp_rule(np.square, shape="elementwise", complex=True)
def square(g, ans, x):
    return g * 2.0 * x


@vjp_rule(np.reciprocal, shape="elementwise", complex=True)
def reciprocal(g, ans, x):
    return -g * ans * ans


@vjp_rule(np.sin, shape="elementwise", complex=True)
def sin(g, ans, x):
    return g * np.cos(x)


@vjp_rule(np.cos, shape="elementwise", complex=True)
def cos(g, ans, x):
    return -g * np.sin(x)


@vjp_rule(np.tan, shape="elementwise", complex=True)
def tan(g, ans, x):
    return g * (1.0 + ans * ans)


@vjp_rule(np.arcsin, shape="elementwise")
def arcsin(g, ans, x):
    return g / np.sqrt(1.0 - x * x)


@vjp_rule(np.arccos, shape="elementwise")
def arccos(g, ans, x):
    return -g / np.sqrt(1.0 - x * x)


@vjp_rule(np.arctan, shape="elementwise")
def arctan(g, ans, x):
    return g / (1.0 + x * x)


@vjp_rule(np.sinh, shape="elementwise", complex=True)
def sinh(g, ans, x):
    return g * np.cosh(x)


@vjp_rule(np.cosh, shape="elementwise", complex=True)
def cosh(g, ans, x):
    return g * np.sinh(x)


@vjp_rule(np.tanh, shape="elementwise", complex=True)
def tanh(g, ans, x):
    return g * (1.0 - ans * ans)


@vjp_rule(np.arcsinh, shape="elementwise")
def arcsinh(g, ans, x):
    return g / np.sqrt(x * x + 1.0)


@vjp_rule(np.arccosh, shape="elementwise")
def arccosh(g, ans, x):
    return g / np.sqrt(x * x - 1.0)


@vjp_rule(np.arctanh, shape="elementwise")
def arctanh(g, ans, x):
    return g / (1.0 - x * x)


@vjp_rule(np.deg2rad, np.radians, shape="elementwise")
def deg2rad(g, ans, x):
    return g * (np.pi / 180.0)


@vjp_rule(np.rad2deg, np.degrees, shape="elementwise")
def rad2deg(g, ans, x):
    return g * (180.0 / np.pi)


@vjp_rule(np.absolute, np.fabs, abs, shape="elementwise", complex="real")
def absolute(g, ans, x):
    if np.iscomplexobj(x):
        # d|z| = Re(conj(z) dz) / |z|: z gets g * conj(z) / |z| (registry.py's convention),
        # and 0 at z = 0, as a real x does
        g_x = g * np.conjugate(x) / (ans + (ans == 0))
    else:
        # sign(0) == 0, so the kink at zero gets the zero subgradient.
        g_x = g * np.sign(x)
    return g_x


@vjp_rule(np.arctan2, shape="elementwise")
def arctan2(g, ans, y, x):
    # At the origin both contributions are 0, as in PyTorch (x / r2 would be 0 / 0 there):
    # adding (r2 == 0) divides by 1 at the origin and changes nothing elsewhere.
    r2 = x * x + y * y
    nonzero_r2 = r2 + (r2 == 0)
    return g * x / nonzero_r2, -g * y / nonzero_r2


@vjp_rule(np.hypot, shape="elementwise")
def hypot(g, ans, a, b):
    return g * a / ans, g * b / ans


@vjp_rule(np.logaddexp, shape="elementwise")
def logaddexp(g, ans, a, b):
    # exp(a - ans) == exp(a) / (exp(a) + exp(b)), without overflow.
    return g * np.exp(a - ans), g * np.exp(b - ans)


@vjp_rule(np.logaddexp2, shape="elementwise")
def logaddexp2(g, ans, a, b):
    return g * np.exp2(a - ans), g * np.exp2(b - ans)


@vjp_rule(np.maximum, shape="elementwise")
def maximum(g, ans, a, b):
    # Ties split the gradient half and half, so maximum(x, x) has gradient 1 in x. np.where
    # rather than products with masks: an inf in g stays out of the side not selected.
    tie = np.where(a == b, 0.5 * g, 0.0)
    return np.where(a > b, g, tie), np.where(b > a, g, tie)


@vjp_rule(np.minimum, shape="elementwise")
def minimum(g, ans, a, b):
    tie = np.where(a == b, 0.5 * g, 0.0)
    return np.where(a < b, g, tie), np.where(b < a, g, tie)


@vjp_rule(np.where, shape="elementwise", complex=True)
def where(g, ans, condition, x=None, y=None):
    # np.where rather than g * condition: an inf or nan in g stays out of the unselected side.
    return None, np.where(condition, g, 0.0), np.where(condition, 0.0, g)


@vjp_rule(np.clip, shape="elementwise")
def clip(g, ans, a, a_min=None, a_max=None, out=None, min=None, max=None):
    # Comparing with the output needs no case for a missing (None) bound: the input passes
    # where it came through unchanged, and a bound gets the gradient where it replaced it.
    # NumPy 2 also takes the bounds as min=/max=; they get the same contributions.
    low = np.where(ans > a, g, 0.0)
    high = np.where(ans < a, g, 0.0)
    return np.where(ans == a, g, 0.0), low, high, None, low, high


@vjp_rule(np.ndarray.clip, shape="elementwise")
def clip_method(g, ans, a, min=None, max=None, out=None):
    return np.where(ans == a, g, 0.0), np.where(ans > a, g, 0.0), np.where(ans < a, g, 0.0)


@jvp_rule(np.absolute, np.fabs, abs)
def absolute_jvp(g, ans, x):
    if np.iscomplexobj(x):
        t = np.real(np.conjugate(x) * g) / (ans + (ans == 0))
    else:
        t = g * np.sign(x)
    return t
