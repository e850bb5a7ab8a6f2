"""Functions the compiler must refuse, each with its offending construct on the line marked
`# <- refused`. tests/test_errors.py names the token the caret must point at."""

import numpy as np

COUNTER = 0


def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    except TypeError:  # <- refused
        y = -x
    return y


def uses_with(x):
    with open("f") as fh:  # <- refused
        y = x * len(fh.read())
    return y


def uses_yield(x):
    yield x * 2  # <- refused


async def uses_async(x):
    return x


def uses_global(x):
    global COUNTER  # <- refused
    COUNTER = 1
    return x * 2


def uses_nonlocal_factory():
    total = 0.0

    def inner(x):
        nonlocal total  # <- refused
        total = x
        return x * 2
    return inner


def uses_del(x):
    y = x * 2
    del y
    return y  # noqa: F821  # <- refused


def uses_exec(x):
    y = eval("x * 2")  # <- refused
    return y


def uses_attribute_store(x, obj):
    obj.value = x  # <- refused
    return x * 2


def write_into_argument(x):
    x[0] = 1.0  # <- refused
    return np.sum(x)


def view_read_after_write(x):
    y = x * 1.0
    row = y[0]
    y[0, 1] = 3.0
    return np.sum(row * x[1])  # <- refused


def uses_import(x):
    for _ in range(2):
        import math  # <- refused
        x = math.sin(x)
    return x


def passes_lambda(x):
    f = lambda v: v * 2
    return np.sum(np.vectorize(f)(x))  # <- refused


def calls_a_library_with_a_closure(k):
    import scipy.optimize

    def rhs(v):
        return (v - k) ** 2

    return scipy.optimize.minimize_scalar(rhs, bracket=(0.0, 1.0)).x * k  # <- refused


def uses_starred(x):
    return np.sum(np.hypot(*x[:2]) * x)  # <- refused


def no_rule(x):
    y = np.ediff1d(x)  # <- refused
    return np.sum(np.abs(y))


def no_rule_method(x):
    y = np.unwrap(x) * 2.0  # <- refused
    return np.sum(y * y)


def unknown_keyword(x):
    return np.cumsum(x, initial=1.0)  # <- refused


def uses_undefined(x):
    return x * undefined_name  # <- refused  # noqa: F821


def no_rule_ok_when_inactive(x):
    """np.sort has no rule, but it is applied to a constant: fine."""
    order = np.sort(np.arange(3.0))
    return np.sum(x * order)


def inplace_on_alias(x, y):
    h = x
    h += y  # <- refused
    return np.sum(h * x)


def inplace_on_argument(x, y):
    x *= y  # <- refused
    return np.sum(x)


def inplace_on_fresh_array_is_fine(x, y):
    h = x * 2.0
    h += y
    return np.sum(h * x)


def return_in_loop(x):
    for i in range(3):
        if x > i:
            return x * i  # <- refused
    return x


def norm_of_other_order(x):
    return np.linalg.norm(np.outer(x, x), ord=2)  # <- refused


def scatter_maximum_at(x, idx):
    y = np.zeros(3)
    np.maximum.at(y, idx, x)  # <- refused
    return np.sum(y ** 2)
