"""Control flow the compiler must refuse, each with its offending construct on the line marked
`# <- refused`. tests/compiler/test_control_flow.py names the token the caret must point at."""

import numpy as np


def return_in_for(x):
    for i in range(3):
        if x > i:
            return x * i  # <- refused
    return x


def return_in_while(x):
    while x > 1.0:
        x = x * 0.5
        return x  # <- refused
    return x


def return_in_inner_loop(x, n):
    for i in range(n):
        for j in range(n):
            if x > i + j:
                return x * j  # <- refused
    return x


def return_in_loop_in_branch(x):
    if x > 0:
        for i in range(3):
            x = x * 0.5
            return x  # <- refused
    return x


def subscript_loop_target(x):
    y = np.zeros(3)
    for y[0] in range(3):  # <- refused
        x = x * 2.0
    return x


def yield_in_loop(x):
    for i in range(3):
        yield x * i  # <- refused


def inplace_on_argument_in_loop(x, y):
    for _ in range(3):
        x += y  # <- refused
    return np.sum(x)


def inplace_on_alias_in_branch(x, y):
    h = x
    if np.sum(y) > 0:
        h += y  # <- refused
    return np.sum(h * x)


def inplace_on_row_in_loop(xs):
    acc = 0.0
    for row in xs:
        row *= 2.0  # <- refused
        acc = acc + np.sum(row)
    return acc
