"""Functions the API tests differentiate (the compiler reads their source from this file)."""

import math

import numpy as np

SCALE = 2.0


def tanh_regression(w, x, y):
    h = np.tanh(x @ w)
    return np.mean((h - y) ** 2)


def scaled(x):
    return SCALE * np.sum(x * x)


def make_scaled_by(factor):
    def scaled_by(x):
        return factor * np.sum(x * x)
    return scaled_by


def scalar_chain(a, b):
    c = a * b + math.sin(a)
    c = c / b
    return c ** 2


def mutating_free(x, y):
    z = x * y
    z = z + 1.0
    return np.sum(z * x)


def with_defaults(x, scale=3.0, power=2):
    return np.sum(scale * x ** power)


def helper(u, v):
    return u * np.exp(v)


def uses_helper(x, y):
    return np.sum(helper(x, y) + helper(y, 0.5))


def straight_through(x):
    """A rounding whose gradient is defined by a registered rule (straight-through)."""
    return np.round(x * 4.0) / 4.0


def uses_straight_through(x):
    return np.sum(straight_through(x) * x)


def stopped(x):
    return x * 1.0


def uses_stopped(x):
    return np.sum(stopped(x) * x)


def fails_in_backward(x):
    return np.sum(np.log(x))


class Model:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        return self.scale * np.sum(np.sin(x))


def combine(*parts, weight=1.0):
    total = 0.0
    for p in parts:
        total = total + np.sum(p ** 2)
    return total * weight


def uses_varargs(x, y):
    return combine(x, y * 2.0, weight=0.5) + combine(x)
