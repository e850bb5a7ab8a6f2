"""Python that people write inside differentiated functions: containers built with builtins,
dict views in loops, unpacking into nested targets and elements, the walrus operator,
functools.partial, map and zip into lists, max of a list, starred arguments, x.real of a real array, a size-1 output, and a container built after an update.
Each construct is checked as users combine it (in a loop, through a helper, decorated, on a
Tensor), against finite differences; what stays refused is refused at the user's line."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads, numeric_gradient

rng = np.random.default_rng(3)
X = rng.standard_normal(5)
W = rng.standard_normal((5, 4))


# --- builtins that build containers ----------------------------------------------------------


def builtins_build(x):
    pair = (x, x * 2.0)
    items = [np.sin(x), pair[1]]
    d = {"a": x, "b": items[0]}
    return np.sum(pair[0] * items[1]) + np.sum(d["a"] * d.get("b"))


def mapped(x):
    parts = list(map(np.tanh, [x, 2.0 * x]))
    scaled = list(map(lambda a, s: a * s, parts, [1.0, 3.0]))
    return np.sum(scaled[0] + scaled[1])


def zipped(x, w):
    pairs = list(zip([x, x ** 2], [w[0], w[1]]))
    return sum(np.sum(a * b) for a, b in pairs)


def maxima(x):
    a, b, c = np.sum(x), np.sum(x ** 2), np.sum(np.sin(x))
    return max([a, b, c]) + min(a, b, c) + max(a, 0.5)


def generator_of_list(x):
    return np.sum(np.stack([v * k for k, v in enumerate([x, x, x])]))


# --- dict views ----------------------------------------------------------------------------


def dict_views(x):
    d = {"a": x, "b": x * 3.0, "c": np.cos(x)}
    return dict_loops(x) + sum(np.sum(v * v) for v in d.values())


def dict_loops(x):
    d = {"a": x, "b": x * 3.0, "c": np.cos(x)}
    total = 0.0
    for k, v in d.items():
        total = total + np.sum(v) * (2.0 if k == "a" else 1.0)
    for i, (k, v) in enumerate(d.items()):
        total = total + i * np.sum(v ** 2)
    for v in d.values():
        total = total + np.sum(np.tanh(v))
    return total


def params_dict(params, x):
    h = x
    for name, w in params.items():
        h = np.tanh(h @ w) if name.startswith("w") else h + w
    return np.sum(h ** 2)


# --- unpacking -----------------------------------------------------------------------------


def swapped(x):
    y = x * 1.0
    y[0], y[1] = y[1], y[0]
    return np.sum(y * np.arange(1.0, 6.0))


def nested_targets(x):
    (p, q), r = (x, x * 2.0), np.sin(x)
    [a, (b, c)] = [p * q, (r, q)]
    return np.sum(a * b + c)


def into_elements(x):
    out = np.zeros((2, 5))
    out[0], (out[1], s) = np.sin(x), (np.cos(x), np.sum(x))
    return np.sum(out * out) + s


def walrus(x):
    total = 0.0
    if (n := np.sum(x * x)) > 0.1:
        total = n * 2.0
    k = 0
    while (k := k + 1) < 4:
        total = total + k * np.sum(x)
    return total + n


def enumerated_pairs(xs, ys):
    acc = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        acc = acc + i * np.sum(a * b)
    for i, (a, b) in enumerate(zip(xs, ys), 2):
        acc = acc + i * np.sum(np.sin(a) * b)
    return acc


def walrus_in_while(x):
    while (y := x * 0.5) > 1.0:
        x = y
    return x


# --- functions as values --------------------------------------------------------------------


def with_partial(x, w):
    project = functools.partial(np.dot, x)
    pooled = functools.partial(np.sum, axis=0)
    return np.sum(np.tanh(project(w))) + np.sum(pooled(w * w))


def _layer(x, w, scale=1.0):
    return np.tanh(x @ w) * scale


def partial_of_a_helper(x, w):
    layer = functools.partial(_layer, scale=2.0)
    return np.sum(layer(x, w=w) ** 2)


def _act(v):
    return v * np.tanh(v)


def partial_of_a_local(x):
    def scaled(v, s):
        return _act(v) * s
    double = functools.partial(scaled, s=2.0)
    return np.sum(double(x))


# --- values that carry no gradient, and real parts -------------------------------------------


def starred_noise(x):
    rs = np.random.RandomState(0)
    noise = rs.randn(*x.shape)
    n, = x.shape
    return np.sum(x * noise) + np.sum(np.reshape(x, np.zeros(*x.shape).shape) ** 2) + n


def starred_differentiated(x):
    parts = (x, x)
    return np.sum(np.multiply(*parts))


def real_parts(x):
    return np.sum(x.real * 2.0 + x.imag + np.real(x) ** 2)


def built_after_update(x):
    s = x * 1.0
    s2 = s.copy()
    s2[0] = 3.0
    pair = (s2, s * 2.0)
    return np.sum(pair[0] * pair[1])


CASES = {
    "builtins": (builtins_build, (X,)),
    "map": (mapped, (X,)),
    "zip": (zipped, (X, rng.standard_normal((2, 5)))),
    "max of a list": (maxima, (X,)),
    "list of a generator": (generator_of_list, (X,)),
    "dict views": (dict_views, (X,)),
    "dict loops": (dict_loops, (X,)),
    "swap": (swapped, (X,)),
    "nested targets": (nested_targets, (X,)),
    "into elements": (into_elements, (X,)),
    "walrus": (walrus, (X,)),
    "walrus in a while test": (walrus_in_while, (7.5,)),
    "enumerate of zip": (enumerated_pairs, (W[:3], W[1:4])),
    "partial": (with_partial, (X, W)),
    "partial of a helper": (partial_of_a_helper, (X, W)),
    "partial of a local": (partial_of_a_local, (X,)),
    "starred": (starred_noise, (X,)),
    "starred differentiated": (starred_differentiated, (X,)),
    "real parts": (real_parts, (X,)),
    "container after an update": (built_after_update, (X,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_construct_gradients_match_finite_differences(name):
    fn, args = CASES[name]
    check_grads(fn, *args, modes=("rev", "fwd"))


@pytest.mark.parametrize("name", ["builtins", "dict loops", "nested targets", "walrus",
                                  "partial"])
def test_constructs_at_second_order(name):
    fn, args = CASES[name]
    check_grads(fn, *args, order=2, modes=("rev",))


def test_a_dict_of_parameters_looped_over_by_items():
    params = {"w1": rng.standard_normal((5, 4)), "b1": rng.standard_normal(4),
              "w2": rng.standard_normal((4, 3))}
    grads = s2sgrad.gradient(params_dict)(params, X)
    assert list(grads) == list(params)
    for key, value in params.items():
        def moved(p, key=key):
            return params_dict({**params, key: p}, X)
        np.testing.assert_allclose(grads[key], numeric_gradient(moved, [value], 0),
                                   rtol=1e-6, atol=1e-8)


def test_constructs_on_the_tensor_path():
    x = s2sgrad.tensor(X, requires_grad=True)
    s2sgrad.grad(dict_views)(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(dict_views)(X))
    x.grad = None
    s2sgrad.grad(walrus)(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), s2sgrad.gradient(walrus)(X))


def test_a_size_one_output_is_a_scalar_loss():
    def loss(x):
        return np.sum(x ** 2, keepdims=True)
    g = s2sgrad.gradient(loss)(X)
    np.testing.assert_allclose(g, 2 * X)
    value, g = s2sgrad.value_and_grad(lambda x: np.reshape(np.sum(np.sin(x)), (1, 1)))(X)
    assert value.shape == (1, 1)
    np.testing.assert_allclose(g, np.cos(X))
    with pytest.raises(TypeError, match="must return a scalar"):
        s2sgrad.gradient(lambda x: x[:2])(X)


# --- what stays refused, at the user's line ------------------------------------------------


def function_in_branches(x, c):
    if c > 0:
        h = lambda v: v * 2.0
    else:
        h = lambda v: v * 3.0
    return h(x)


def function_rebound_in_a_loop(x):
    h = functools.partial(np.multiply, 2.0)
    for _ in range(2):
        x = h(x)
        h = functools.partial(np.multiply, 3.0)
    return np.sum(x)


def update_after_packing(x):
    s = x * 1.0
    pair = (s, 2.0)
    s[0] = 3.0
    return np.sum(pair[0])


def update_in_a_loop_after_append(x):
    s = x * 1.0
    out = []
    for i in range(3):
        s[i] = 3.0 * x[i]
        out.append(s)
    return np.sum(out[0])


@pytest.mark.parametrize("fn, args, message", [
    (function_in_branches, (X, 1.0), "bound again elsewhere"),
    (function_rebound_in_a_loop, (X,), "bound again elsewhere"),
    (update_after_packing, (X,), "put into a tuple, list or dict \\('s'\\)"),
    (update_in_a_loop_after_append, (X,), "put into a tuple, list or dict \\('s'\\)"),
])
def test_refusals_name_the_line(fn, args, message):
    with pytest.raises(TransformError, match=message) as info:
        s2sgrad.gradient(fn)(*args)
    assert info.value.filename == __file__
    first, last = fn.__code__.co_firstlineno, fn.__code__.co_firstlineno + 8
    assert first <= info.value.lineno <= last


# --- a value each loop iteration makes anew may change shape (layers of different widths) ---


def _init(sizes, rs=np.random.RandomState(0)):
    return [(0.3 * rs.randn(m, n), 0.1 * rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def layers_of_widths(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return np.sum(outputs ** 2)


def layers_from_a_dict(weights, x):
    h = x
    for name in ("w0", "w1"):
        pre = h @ weights[name]
        h = np.sin(pre)
    return np.sum(pre * h)


def layers_by_formatted_key(weights, x):
    h = x
    for k in range(len(weights)):
        h = np.sin(h @ weights[f"w{k}"])
        tag = f"layer {k}: {np.sum(h):.3f} {h.shape!r}"
    return np.sum(h ** 2) + len(tag)


def test_f_strings_are_text_without_gradient():
    weights = {"w0": rng.standard_normal((4, 6)), "w1": rng.standard_normal((6, 2))}
    inputs = rng.standard_normal((5, 4))
    check_grads(layers_by_formatted_key, weights, inputs, modes=("rev", "fwd"))
    check_grads(lambda x: layers_by_formatted_key(weights, x), inputs, order=2)
    x = s2sgrad.tensor(inputs, requires_grad=True)
    s2sgrad.grad(layers_by_formatted_key)(weights, x).backward()
    np.testing.assert_allclose(x.grad.numpy(),
                               s2sgrad.gradient(layers_by_formatted_key, 1)(weights, inputs))


def test_loop_values_that_change_shape_between_iterations():
    params = _init([4, 6, 3, 2])
    inputs = rng.standard_normal((5, 4))
    grads = s2sgrad.gradient(layers_of_widths)(params, inputs)
    for k, (w, b) in enumerate(params):
        for j, value in enumerate((w, b)):
            def moved(p, k=k, j=j):
                layer = list(params[k])
                layer[j] = p
                return layers_of_widths(params[:k] + [tuple(layer)] + params[k + 1:], inputs)
            np.testing.assert_allclose(grads[k][j], numeric_gradient(moved, [value], 0),
                                       rtol=1e-6, atol=1e-8)
    check_grads(layers_of_widths, params, inputs, wrt=1)
    weights = {"w0": rng.standard_normal((4, 7)), "w1": rng.standard_normal((7, 2))}
    g = s2sgrad.gradient(layers_from_a_dict, 1)(weights, inputs)
    np.testing.assert_allclose(
        g, numeric_gradient(lambda x: layers_from_a_dict(weights, x), [inputs], 0),
        rtol=1e-6, atol=1e-8)


# --- unpacking counts ------------------------------------------------------------------------


def unpacks_three_into_two(x):
    t = (x, x * 2.0, x * 3.0)
    a, b = t
    return np.sum(a * b)


def unpacks_a_shape_wrongly(x):
    n, _m = x.shape  # x is 1-d here
    return np.sum(x) * n


def unpacks_a_rule_result(x):
    q, r = np.linalg.qr(np.outer(x, x) + np.eye(5))
    return np.sum(q * r)


def test_a_wrong_unpacking_count_is_refused_where_known():
    for f in (unpacks_three_into_two, unpacks_a_shape_wrongly):
        with pytest.raises(TransformError, match="Python raises a ValueError"):
            s2sgrad.gradient(f)(X)
    check_grads(unpacks_a_rule_result, X)
