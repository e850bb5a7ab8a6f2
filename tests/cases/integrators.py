"""Helpers that take functions, in a module of their own: the integrators and combinators
the tests of function values (tests/compiler/test_function_values.py) pass nested functions
and lambdas to, from another module than the one that defines them."""

import numpy as np


def euler(rhs, y, t0, t1, n):
    h = (t1 - t0) / n
    for k in range(n):
        y = y + h * rhs(t0 + k * h, y)
    return y


def apply_twice(f, x):
    return f(f(x))


def summed(f, x):
    return np.sum(f(x))


def through_two(f, x):
    """A callback passed on through a second helper."""
    return summed(f, x) + 1.0
