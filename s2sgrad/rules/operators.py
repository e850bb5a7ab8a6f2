"""Rules for Python's arithmetic operators and the NumPy ufuncs that spell the same operation.

``a + b`` reaches the reverse pass as ``operator.add`` and ``np.add(a, b)`` as the ufunc; both
share one template. These rules are elementwise: a contribution is shaped like the broadcast
output and the engine sums it back to each operand's shape, so the same template serves
floats, 0-d arrays and broadcasting arrays alike. Those of +, -, *, /, ** and negation hold
for complex operands as they stand (``complex=True``: see registry.py's convention).
"""

import operator

import numpy as np

from .registry import vjp_rule


@vjp_rule(operator.add, np.add, shape="elementwise", complex=True)
def add(g, ans, a, b):
    return g, g


@vjp_rule(operator.sub, np.subtract, shape="elementwise", complex=True)
def subtract(g, ans, a, b):
    return g, -g


@vjp_rule(operator.mul, np.multiply, shape="elementwise", complex=True)
def multiply(g, ans, a, b):
    return g * b, g * a


@vjp_rule(operator.truediv, np.true_divide, shape="elementwise", complex=True)
def divide(g, ans, a, b):
    # d(a/b)/db = -a/b**2 = -ans/b: reuses the output instead of squaring b.
    return g / b, -g * ans / b


@vjp_rule(operator.pow, np.power, np.float_power, shape="elementwise", complex=True)
def power(g, ans, a, b):
    # d a**b / da = b * a**(b - 1), which is 0 for b == 0 even at a == 0 (as in PyTorch):
    # there the exponent b - (b != 0) is 0 rather than -1, so 0 * 0**-1 = 0 * inf = nan never
    # arises. For a constant b it folds to b - 1 (x ** 2 gives 2 * x).
    # 0 ** b has no logarithm but its derivative in b is 0 (for b > 0): log(1) gives that.
    # The logarithm is taken in the result's dtype (a Python float base stays weak): ones
    # like ans give it, where a cast to a dtype known only at run time (np.log's dtype=)
    # would leave this code without a derivative of its own (a second derivative).
    return (g * b * a ** (b - (b != 0)),
            g * ans * np.log(np.where(a == 0, np.ones_like(ans), a)))


@vjp_rule(pow, shape="elementwise")
def builtin_pow(g, ans, base, exp, mod=None):
    return (g * exp * base ** (exp - (exp != 0)),
            g * ans * np.log(np.where(base == 0, 1.0, base)))


@vjp_rule(operator.neg, np.negative, shape="elementwise", complex=True)
def negative(g, ans, x):
    return -g


@vjp_rule(operator.pos, np.positive, shape="elementwise", complex=True)
def positive(g, ans, x):
    return g


@vjp_rule(operator.mod, np.remainder, shape="elementwise")
def remainder(g, ans, a, b):
    # a % b == a - b * floor(a / b), and the floor is piecewise constant.
    return g, -g * (a // b)


@vjp_rule(np.fmod, shape="elementwise")
def fmod(g, ans, a, b):
    # fmod rounds the quotient toward zero where % rounds it down.
    return g, -g * np.trunc(a / b)
