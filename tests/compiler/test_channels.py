"""Every channel by which a value reaches a callee carries its gradient, or is refused.

A differentiated value reaches a function as a positional argument, a keyword argument,
through a ``*args`` or ``**kwargs`` spread, as the receiver of a method, as an attribute of
an object, through a closure cell or through a default. Whichever the channel:

1. to a callee without a derivative rule (a method of a value whose class is not known
   when compiling, an installed package's function or method, a scipy object's operator):
   refused when the function is transformed, at the user's file:line:col, for a keyword as
   for a positional argument; in a loop, through a helper, in a nested function, from its
   closure or its default, from an object's attribute or a container's item;
2. to a callee the compiler differentiates (a rule, the user's function, a nested function
   or lambda, a method of an object built here, a partial, a frozen distribution): the
   gradient of what Python computes. A nested function's or a lambda's defaults are the
   values they had where its ``def`` ran, a method's those its class was defined with; its
   free variables are read where it is called; arguments are evaluated in the call's order;
3. a class attribute read through an object built here is the class's value until the
   instance sets one (in ``__init__`` under a condition, in ``__init__`` from the class's
   value, later in a method, or in the function); ``obj.h += x`` updates the attribute's
   array in place, as NumPy does: refused where that array is the caller's or the class's;
4. a variable first assigned in one branch of an ``if`` and read after it holds its value
   on the path that assigned it (Python raises on the other).

An accepted variant is a ``@s2sgrad.grad`` function called on Tensors (``check``): its value
is the plain call's, the Tensors' gradients agree with central differences, so do the
derivatives in reverse and forward mode (``check_grads``, at second order where asked),
and the caller's arrays are unchanged. A refused variant (``check_refused``) raises a
TransformError at its line marked ``# <- refused``, in this file, with a hint, naming no
place inside s2sgrad and no name the compiler made.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads, numeric_gradient
from tests.located import assert_names_no_place_inside_s2sgrad, assert_points_at

try:
    import scipy.interpolate as si
    import scipy.stats as st
    from scipy import sparse
except ImportError:  # scipy is optional: its variants skip
    si = sparse = st = None

needs_scipy = pytest.mark.skipif(st is None, reason="scipy is not installed")

X = np.array([0.3, 0.6, 0.9])
Y = np.array([-0.4, 0.8, 1.1])
KNOTS = np.linspace(0.0, 1.0, 8)
DATA = np.array([0.1, 0.5, 0.9, 0.3, 0.7])


def check(fn, *args, order=1):
    """``fn`` (a ``@s2sgrad.grad`` function of float arrays, with a scalar result) on
    Tensors: the plain call's value, gradients that agree with central differences, the
    same in both modes and at ``order``, and the caller's arrays unchanged."""
    kept = [np.array(a, copy=True) for a in args]
    plain = fn.fn(*[np.array(a, copy=True) for a in args])
    tensors = [s2sgrad.tensor(np.array(a, copy=True), requires_grad=True) for a in args]
    out = fn(*tensors)
    assert np.array_equal(np.asarray(out.data), np.asarray(plain)), (
        f"{fn.fn.__name__}: the compiled forward gives {out.data!r}, Python {plain!r}")
    out.backward()
    for i, t in enumerate(tensors):
        expected = numeric_gradient(fn.fn, [np.array(a, copy=True) for a in args], i)
        np.testing.assert_allclose(t.grad.data, expected, rtol=1e-6, atol=1e-8,
                                   err_msg=f"{fn.fn.__name__}: gradient of argument {i}")
    check_grads(fn, *args, modes=("rev", "fwd"), order=order)
    for a, k in zip(args, kept, strict=True):
        assert np.array_equal(a, k), f"{fn.fn.__name__} changed the caller's array"


def check_refused(fn, *args, token, words, where=None):
    """``fn`` on Tensors raises at the line marked ``# <- refused`` of ``where`` (``fn``
    itself unless told), at ``token``, saying ``words``."""
    tensors = [s2sgrad.tensor(np.array(a, copy=True), requires_grad=True)
               if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(s2sgrad.TransformError) as info:
        fn(*tensors)
    error = info.value
    assert words in error.reason, error.reason
    assert_points_at(error, getattr(where, "fn", where) or fn.fn, token)
    assert_names_no_place_inside_s2sgrad(str(error))
    assert not re.search(r"\b_t\d+\b|_bar\b", error.reason), error.reason
    return error


# --- 1. to a callee without a rule: refused, whatever the channel ----------------------------


@s2sgrad.grad
def normal_by_keyword(x):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(loc=x))  # <- refused


@s2sgrad.grad
def normal_by_position(x):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(x))  # <- refused


@s2sgrad.grad
def exponential_by_keyword(s):
    gen = np.random.default_rng(1)
    return np.sum(gen.exponential(scale=s))  # <- refused


@s2sgrad.grad
def second_parameter_by_keyword(x):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(0.0, scale=x))  # <- refused


@s2sgrad.grad
def keyword_result_unused(x):
    rng = np.random.default_rng(0)
    rng.normal(loc=x)  # <- refused
    return np.sum(x)


@s2sgrad.grad
def keyword_in_a_loop(x):
    rng = np.random.default_rng(0)
    total = 0.0
    for i in range(3):
        total = total + rng.normal(loc=x[i])  # <- refused
    return total


def draw_around(m):
    rng = np.random.default_rng(0)
    return rng.normal(loc=m)  # <- refused


@s2sgrad.grad
def keyword_through_a_callee(x):
    return np.sum(draw_around(x * 2.0))


@s2sgrad.grad
def keyword_in_a_nested_function(x):
    rng = np.random.default_rng(0)

    def draw(m):
        return rng.normal(loc=m)  # <- refused
    return np.sum(draw(x))


@s2sgrad.grad
def keyword_from_a_closure(x):
    rng = np.random.default_rng(0)

    def draw():
        return rng.normal(loc=x)  # <- refused
    return np.sum(draw())


@s2sgrad.grad
def keyword_from_a_default(x):
    rng = np.random.default_rng(0)

    def draw(m=x * 2.0):
        return rng.normal(loc=m)  # <- refused
    return np.sum(draw())


@s2sgrad.grad
def keyword_from_a_lambda_default(x):
    rng = np.random.default_rng(0)
    draw = lambda m=x: rng.normal(loc=m)  # <- refused
    return np.sum(draw())


class Location:
    def __init__(self, mu):
        self.mu = mu


@s2sgrad.grad
def keyword_from_an_attribute(x):
    rng = np.random.default_rng(0)
    where = Location(x * 2.0)
    return np.sum(rng.normal(loc=where.mu))  # <- refused


@s2sgrad.grad
def keyword_from_a_container(x):
    rng = np.random.default_rng(0)
    params = {"mu": x, "sigma": 1.0}
    return np.sum(rng.normal(loc=params["mu"], scale=params["sigma"]))  # <- refused


@s2sgrad.grad
def starred_arguments(x):
    rng = np.random.default_rng(0)
    args = (x, 1.0)
    return np.sum(rng.normal(*args))  # <- refused


@s2sgrad.grad
def spread_keywords(x):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(**{"loc": x}))  # noqa: PIE804  # <- refused


REFUSED = [
    (normal_by_keyword, "rng.normal", "receives a differentiated value", None),
    (normal_by_position, "rng.normal", "receives a differentiated value", None),
    (exponential_by_keyword, "gen.exponential", "receives a differentiated value", None),
    (second_parameter_by_keyword, "rng.normal", "receives a differentiated value", None),
    (keyword_result_unused, "rng.normal", "may change the array in place", None),
    (keyword_in_a_loop, "rng.normal", "receives a differentiated value", None),
    (keyword_through_a_callee, "rng.normal", "receives a differentiated value", draw_around),
    (keyword_in_a_nested_function, "rng.normal", "receives a differentiated value", None),
    (keyword_from_a_closure, "rng.normal", "receives a differentiated value", None),
    (keyword_from_a_default, "rng.normal", "receives a differentiated value", None),
    (keyword_from_a_lambda_default, "rng.normal", "receives a differentiated value", None),
    (keyword_from_an_attribute, "rng.normal", "receives a differentiated value", None),
    (keyword_from_a_container, "rng.normal", "receives a differentiated value", None),
    (starred_arguments, "rng.normal", "receives a differentiated value", None),
    (spread_keywords, "rng.normal", "receives a differentiated value", None),
]


@pytest.mark.parametrize("fn,token,words,where", REFUSED,
                         ids=[case[0].fn.__name__ for case in REFUSED])
def test_refused_by_every_channel(fn, token, words, where):
    check_refused(fn, X, token=token, words=words, where=where)


def test_a_keyword_is_refused_as_the_same_argument_by_position_is():
    by_keyword = check_refused(normal_by_keyword, X, token="rng.normal",
                               words="receives a differentiated value")
    by_position = check_refused(normal_by_position, X, token="rng.normal",
                                words="receives a differentiated value")
    assert by_keyword.reason == by_position.reason and by_keyword.hint == by_position.hint


def test_a_keyword_is_refused_at_second_order_too():
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(s2sgrad.gradient(lambda v: normal_by_keyword.fn(v) * 2.0))(X)
    assert_points_at(info.value, normal_by_keyword.fn, "rng.normal")


# scipy objects: built inside, or passed in (their methods are the package's, called, never
# entered: the refusal is at the user's call, not inside scipy)


@s2sgrad.grad
def spline_integral_by_keyword(x):
    spline = si.UnivariateSpline(KNOTS, KNOTS ** 2, s=0)
    return spline.integral(a=x[0], b=x[1])  # <- refused


@s2sgrad.grad
def spline_passed_in_by_keyword(x, spline):
    return spline.integral(a=x[0], b=x[1])  # <- refused


@s2sgrad.grad
def spline_passed_in_by_position(x, spline):
    return spline.integral(x[0], x[1])  # <- refused


@s2sgrad.grad
def spline_passed_in_called(x, spline):
    return np.sum(spline(x))  # <- refused


@s2sgrad.grad
def kde_logpdf_by_keyword(x):
    kde = st.gaussian_kde(DATA)
    return np.sum(kde.logpdf(x=x))  # <- refused


@s2sgrad.grad
def sparse_product(x, a):
    return np.sum(a @ x)  # <- refused


@s2sgrad.grad
def sparse_reflected_product(x, a):
    return np.sum(x * a)  # <- refused


@needs_scipy
@pytest.mark.parametrize("fn,token,words,passed", [
    (spline_integral_by_keyword, "spline.integral", "receives a differentiated value", None),
    (spline_passed_in_by_keyword, "spline.integral", "no derivative rule", "spline"),
    (spline_passed_in_by_position, "spline.integral", "no derivative rule", "spline"),
    (spline_passed_in_called, "spline(x)", "no derivative rule", "spline"),
    (kde_logpdf_by_keyword, "kde.logpdf", "receives a differentiated value", None),
    (sparse_product, "a @ x", "installed package", "sparse"),
    (sparse_reflected_product, "x * a", "a csr_matrix", "sparse"),
], ids=lambda v: getattr(getattr(v, "fn", None), "__name__", None))
def test_refused_scipy_objects(fn, token, words, passed):
    extra = {None: (), "spline": (si.UnivariateSpline(KNOTS, KNOTS ** 2, s=0),),
             "sparse": (sparse.csr_matrix(np.eye(3)[::-1]),)}[passed]
    check_refused(fn, X, *extra, token=token, words=words)


# --- 2. to a callee the compiler differentiates: the gradient of what Python computes --------


def weighted(v, w=1.0, shift=0.0):
    return v * w + shift


@s2sgrad.grad
def keywords_to_a_helper(x, y):
    return np.sum(weighted(shift=y, v=x, w=x[0]) ** 2)


@s2sgrad.grad
def keywords_to_rules(x, y):
    return np.sum(np.clip(x, a_min=0.2, a_max=None) * np.sum(a=y * x, axis=0))


@s2sgrad.grad
def keywords_to_a_nested_function(x, y):
    def affine(v, w, b=0.0):
        return v * w + b
    return np.sum(affine(b=y, w=np.tanh(x), v=x))


@s2sgrad.grad
def keywords_evaluated_in_the_call_s_order(x):
    def product(v, k):
        return v * k
    return np.sum(product(k=(c := np.sin(x)), v=c))


class Affine:
    def __init__(self, w, b=0.0):
        self.w = w
        self.b = b

    def forward(self, v, scale=1.0):
        return (v * self.w + self.b) * scale


@s2sgrad.grad
def keywords_to_methods(x, y):
    layer = Affine(b=y, w=x[0])
    return np.sum(layer.forward(scale=2.0, v=x) ** 2)


@s2sgrad.grad
def keywords_through_a_partial(x, y):
    f = functools.partial(weighted, w=y[0])
    return np.sum(f(x, shift=y) ** 2)


@s2sgrad.grad
def keywords_in_a_loop(x, y):
    total = 0.0
    for i in range(3):
        total = total + weighted(v=x[i], w=y[i], shift=0.5) ** 2
    return total


@s2sgrad.grad
def keywords_through_a_container(x, y):
    params = {"w": y, "shift": x[1]}
    return np.sum(weighted(x, w=params["w"], shift=params["shift"]) ** 2)


@s2sgrad.grad
def keywords_to_a_frozen_distribution(x, m):
    return np.sum(st.norm(loc=m[0], scale=1.5).logpdf(x=x))


@pytest.mark.parametrize("fn,order", [
    (keywords_to_a_helper, 2),
    (keywords_to_rules, 1),
    (keywords_to_a_nested_function, 2),
    (keywords_evaluated_in_the_call_s_order, 1),
    (keywords_to_methods, 1),
    (keywords_through_a_partial, 1),
    (keywords_in_a_loop, 2),
    (keywords_through_a_container, 1),
    pytest.param(keywords_to_a_frozen_distribution, 1, marks=needs_scipy),
], ids=lambda v: getattr(getattr(v, "fn", None), "__name__", None))
def test_keywords_carry_gradients(fn, order):
    check(fn, *(X, Y)[:fn.fn.__code__.co_argcount], order=order)


# defaults where Python evaluates them, closure cells where the call reads them

@s2sgrad.grad
def default_evaluated_at_the_def(x):
    c = 2.0

    def scaled(v, k=c):
        return v * k
    c = 5.0
    return np.sum(scaled(x) * c)


@s2sgrad.grad
def differentiated_default(x):
    c = np.sin(x)

    def scaled(v, k=c):
        return v * k
    c = np.cos(x)
    return np.sum(scaled(x) * c)


@s2sgrad.grad
def default_overridden_by_keyword(x):
    c = x * 2.0

    def scaled(v, k=c):
        return v * k
    c = np.exp(-x)
    return np.sum(scaled(x, k=c) + scaled(np.tanh(x)))


@s2sgrad.grad
def lambda_default(x):
    c = np.tanh(x)
    scaled = lambda v, k=c: v * k
    c = x * 3.0
    return np.sum(scaled(x) * c)


@s2sgrad.grad
def lambda_called_where_written(x):
    c = np.exp(-x)
    return np.sum((lambda v, k=c: v * k)(x) * c)  # noqa: PLC3002


@s2sgrad.grad
def closure_read_at_the_call(x):
    c = x * 2.0

    def scaled(v):
        return v * c
    c = np.sin(x)
    return np.sum(scaled(x))


@s2sgrad.grad
def default_and_closure(x):
    c = x

    def scaled(v, k=c):
        return v * k * c
    c = x * 3.0
    return np.sum(scaled(x))


@s2sgrad.grad
def default_in_a_loop(x):
    total = 0.0
    for i in range(3):
        c = x[i] * 2.0

        def scaled(v, k=c):
            return v * k
        c = c + 1.0
        total = total + np.sum(scaled(x))
    return total


@s2sgrad.grad
def default_read_after_the_loop(x):
    c = 0.5
    for i in range(3):
        c = x[i] * c + 1.0

        def scaled(v, k=c):
            return v * k
        c = c * 2.0
    return np.sum(scaled(x)) + c


@s2sgrad.grad
def default_through_a_nested_callee(x):
    c = np.sin(x)

    def inner(v, k=c):
        return v * k

    def outer(v):
        return inner(v) + inner(v, k=1.0)
    c = x
    return np.sum(outer(x))


@s2sgrad.grad
def default_of_a_nested_def_in_a_nested_def(x):
    def outer(v, s=x):
        def inner(w, k=s * 2.0):
            return w * k
        return inner(v)
    return np.sum(outer(x) + outer(x, s=np.cos(x)))


@s2sgrad.grad
def default_in_a_branch(x):
    c = x * 0.5
    if x[0] > 0.0:
        def scaled(v, k=c):
            return v * k
        c = np.sin(x)
        y = scaled(x) + c
    else:
        y = x
    return np.sum(y)


K = 2.0
WEIGHTS = np.array([0.5, -1.0, 2.0])


class Dense:
    def __init__(self, w, shift=(0.5, 1.0)):
        self.w = w
        self.shift = shift[0]

    def forward(self, v, k=K, w0=WEIGHTS):
        return v * self.w * k * w0 + self.shift


@s2sgrad.grad
def method_defaults_are_the_class_s(x):
    K = 5.0  # locals named as the module's names the method's defaults read
    WEIGHTS = x
    layer = Dense(1.5)
    return np.sum(layer.forward(x) * K * WEIGHTS)


@pytest.mark.parametrize("fn,order", [
    (default_evaluated_at_the_def, 2),
    (differentiated_default, 2),
    (default_overridden_by_keyword, 1),
    (lambda_default, 1),
    (lambda_called_where_written, 1),
    (closure_read_at_the_call, 1),
    (default_and_closure, 2),
    (default_in_a_loop, 2),
    (default_read_after_the_loop, 1),
    (default_through_a_nested_callee, 1),
    (default_of_a_nested_def_in_a_nested_def, 1),
    (default_in_a_branch, 1),
    (method_defaults_are_the_class_s, 2),
], ids=lambda v: getattr(getattr(v, "fn", None), "__name__", None))
def test_defaults_and_closures_are_read_when_python_reads_them(fn, order):
    check(fn, X, order=order)


def test_default_in_a_branch_not_taken():
    check(default_in_a_branch, -X)


def test_a_default_is_bound_where_the_def_runs():
    check(default_evaluated_at_the_def, X)
    lines = [line.strip() for line in default_evaluated_at_the_def.forward_source.splitlines()]
    bound = lines.index("k_scaled_default = c")
    assert bound < lines.index("c_1 = 5.0") < lines.index("k_scaled = k_scaled_default")


# --- 3. class attributes through objects built here ------------------------------------------


class Scale:
    factor = 2.0

    def __init__(self):
        pass


class MaybeScaled:
    factor = 2.0

    def __init__(self, flag):
        if flag:
            self.factor = 3.0


class SelfScaled:
    factor = 2.0

    def __init__(self, w):
        self.factor = self.factor * w


class ReadsInInit:
    factor = 2.0

    def __init__(self, w):
        self.w = w * self.factor

    def apply(self, v):
        return v * self.w * self.factor


class SetLater:
    factor = 2.0

    def __init__(self):
        pass

    def bump(self, by):
        self.factor = self.factor + by


@s2sgrad.grad
def class_attribute_of_a_new_object(x):
    return np.sum(x * Scale().factor)


@s2sgrad.grad
def class_attribute_through_a_name(x):
    obj = Scale()
    return np.sum(obj.factor * x)


@s2sgrad.grad
def class_or_instance_attribute(x):
    obj = MaybeScaled(x[0] > 0.0)
    return np.sum(obj.factor * x)


@s2sgrad.grad
def class_attribute_read_to_set_it(x):
    obj = SelfScaled(x[0])
    return np.sum(obj.factor * x)


@s2sgrad.grad
def class_attribute_read_in_init(x):
    obj = ReadsInInit(x[1])
    return np.sum(obj.apply(x))


@s2sgrad.grad
def class_attribute_shadowed_later(x):
    obj = SetLater()
    y = obj.factor * x
    obj.bump(x[0])
    return np.sum(y * obj.factor)


@s2sgrad.grad
def class_attribute_set_by_the_function(x):
    obj = Scale()
    y = obj.factor * x
    obj.factor = np.sum(x)
    return np.sum(y * obj.factor)


@s2sgrad.grad
def class_attribute_in_a_loop(x):
    obj = SetLater()
    total = 0.0
    for i in range(3):
        total = total + np.sum(obj.factor * x)
        obj.bump(x[i])
    return total


@s2sgrad.grad
def class_attribute_in_a_branch(x):
    obj = SetLater()
    if x[0] > 0.0:
        obj.bump(x[1])
    return np.sum(obj.factor * x)


class Holds:
    def __init__(self, w):
        self.w = w


@s2sgrad.grad
def fresh_attribute_updated_in_place(x):
    obj = Holds(np.zeros(3))
    obj.w += x
    obj.w *= x
    return np.sum(obj.w)


@pytest.mark.parametrize("fn", [
    class_attribute_of_a_new_object, class_attribute_through_a_name,
    class_or_instance_attribute, class_attribute_read_to_set_it,
    class_attribute_read_in_init, class_attribute_shadowed_later,
    class_attribute_set_by_the_function, class_attribute_in_a_loop,
    class_attribute_in_a_branch, fresh_attribute_updated_in_place,
], ids=lambda v: v.fn.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus_x"])
def test_class_attributes_read_as_python_reads_them(fn, x):
    check(fn, x)
    assert (Scale.factor, MaybeScaled.factor, SetLater.factor) == (2.0, 2.0, 2.0)


class Buffer:
    data = np.zeros(3)

    def __init__(self):
        pass


@s2sgrad.grad
def class_array_updated_in_place(x):
    obj = Buffer()
    obj.data += x  # <- refused
    return np.sum(obj.data * x)


@s2sgrad.grad
def argument_array_updated_in_place(x, w):
    obj = Holds(w)
    obj.w += x  # <- refused
    return np.sum(obj.w * x)


def test_an_attribute_s_in_place_update_of_outside_memory_is_refused():
    check_refused(class_array_updated_in_place, X, token="obj.data",
                  words="a variable from outside the function")
    assert not Buffer.data.any()
    check_refused(argument_array_updated_in_place, X, Y, token="obj.w",
                  words="the argument 'w'")


# --- 4. a variable assigned in one branch ----------------------------------------------------


@s2sgrad.grad
def assigned_in_one_branch(x):
    if x[0] > 0.0:
        b = np.sin(x)
    return np.sum(b * x)


class MaybeHolds:
    def __init__(self, w, flag):
        self.w = w
        if flag:
            self.b = w * 3.0


@s2sgrad.grad
def attribute_set_in_one_branch(x):
    obj = MaybeHolds(x[0], x[1] > 0.0)
    return np.sum(obj.b * x + obj.w)


@pytest.mark.parametrize("fn", [assigned_in_one_branch, attribute_set_in_one_branch],
                         ids=lambda v: v.fn.__name__)
def test_a_variable_assigned_in_one_branch(fn):
    check(fn, X, order=2)
    with pytest.raises((NameError, AttributeError)):
        fn.fn(-X)  # Python raises on the other path; so does the compiled code
    with pytest.raises(Exception):  # noqa: B017 (which error depends on the operation)
        s2sgrad.value_and_grad(fn.fn)(-X)
