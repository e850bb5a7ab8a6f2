"""Constructs the compiler does not differentiate yet, written the way users write them:
lists/tuples/dicts of differentiated values, comprehensions, closures and lambdas, recursion
on a depth argument, methods of user objects, builtins on arrays."""

import numpy as np

# --- lists, tuples and dicts of differentiated values -----------------------------------------


def append_then_stack(x, n):
    ys = []
    for i in range(n):
        ys.append(np.sin(x * (i + 1)))
    return np.sum(np.stack(ys) ** 2)


def append_then_array(x):
    vals = []
    for v in x:
        vals.append(v * v)
    return np.sum(np.array(vals) * np.arange(len(x)))


def append_then_concatenate(xs):
    parts = []
    for row in xs:
        parts.append(np.tanh(row))
    return np.sum(np.concatenate(parts) ** 2)


def rnn_collect_states(w, xs):
    h = np.zeros(w.shape[0])
    states = []
    for x in xs:
        h = np.tanh(w @ h + x)
        states.append(h)
    return np.sum(np.stack(states) ** 2)


def tuple_of_values(x):
    pair = (x * 2.0, np.sin(x))
    return np.sum(pair[0] * pair[1])


def concatenate_tuple(x, y):
    return np.sum(np.concatenate((x, y * 2.0)) ** 2)


def list_argument(xs):
    return np.sum(xs[0] * xs[1]) + np.sum(xs[2])


def tuple_argument(params, x):
    w, b = params
    return np.sum(np.tanh(x @ w + b))


def dict_argument(params, x):
    return np.sum(np.tanh(x @ params["w"] + params["b"]))


def dict_built_inside(x):
    d = {"a": x * 2.0, "b": np.cos(x)}
    return np.sum(d["a"] * d["b"])


def returns_tuple(x):
    return np.sum(x * x), np.sum(np.sin(x))


def lstm_like(w, xs):
    n = w.shape[0] // 4
    h = np.zeros(n)
    c = np.zeros(n)
    for x in xs:
        gates = w @ np.concatenate((h, x))
        i = 1.0 / (1.0 + np.exp(-gates[:n]))
        f = 1.0 / (1.0 + np.exp(-gates[n:2 * n]))
        o = 1.0 / (1.0 + np.exp(-gates[2 * n:3 * n]))
        g = np.tanh(gates[3 * n:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return np.sum(h)


def gram_schmidt(a):
    qs = []
    for col in a.T:
        v = col
        for q in qs:
            v = v - (q @ col) * q
        qs.append(v / np.linalg.norm(v))
    return np.sum(np.stack(qs) ** 3)


# --- comprehensions -------------------------------------------------------------------------------


def list_comprehension_stack(x, n):
    return np.sum(np.stack([np.sin(x * k) for k in range(n)]) ** 2)


def generator_in_np_sum(x):
    return np.sum(np.array([v * v for v in x]))


def builtin_sum_of_generator(x, n):
    return sum(np.sum(np.cos(x * k)) for k in range(n))


def comprehension_with_condition(x):
    return np.sum(np.array([v * 2.0 for v in x if v > 0]))


# --- closures and lambdas ----------------------------------------------------------------------------


def nested_def(x, w):
    def layer(h):
        return np.tanh(h @ w)
    return np.sum(layer(layer(x)))


def closure_over_scale(x, s):
    def scaled(v):
        return v * s
    return np.sum(np.sin(scaled(x)))


def lambda_activation(x):
    act = lambda v: v / (1.0 + np.abs(v))
    return np.sum(act(x) ** 2)


def lambda_in_loop(x, n):
    f = lambda v: np.tanh(v) * 1.5
    for _ in range(n):
        x = f(x)
    return np.sum(x)


# --- recursion on a non-differentiable depth -----------------------------------------------------------


def recursive_power(x, depth):
    if depth == 0:
        return np.sum(x ** 2)
    return recursive_power(np.tanh(x) * 1.5, depth - 1)


def recursive_tree(x, depth):
    if depth <= 0:
        return np.sum(x * x)
    return recursive_tree(x * 0.5, depth - 1) + recursive_tree(np.sin(x), depth - 1)


# --- methods of user objects ------------------------------------------------------------------------------


class Linear:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return x @ self.w + self.b

    def apply(self, x):
        return np.tanh(x @ self.w)


def calls_object_method(x, w):
    layer = Linear(w, 0.1)
    return np.sum(layer.apply(x))


def calls_object(x, w, b):
    return np.sum(np.tanh(Linear(w, b)(x)))


def method_on_argument(layer, x):
    return np.sum(layer.apply(x) ** 2)


# --- builtins on arrays --------------------------------------------------------------------------------


def builtin_sum_of_array(x):
    return sum(x * x)


def builtin_abs_of_array(x):
    return np.sum(abs(x) * x)


def builtin_max_of_array(x):
    return max(x) * 2.0 + min(x)


def builtin_max_of_two(a, b):  # two floats
    return max(a, b) * min(a, b)


# --- loops over containers --------------------------------------------------------------------------


def loop_over_list_of_inputs(x, y):
    acc = 0.0
    for v in [x, y]:
        acc = acc + np.sum(v * v)
    return acc


def loop_over_generator(x):
    acc = 0.0
    for v in (x * k for k in range(3)):
        acc = acc + np.sum(v)
    return acc
