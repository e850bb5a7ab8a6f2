"""Straight-line Python + NumPy functions: the end-to-end catalogue of the compiler.

Plain code, no s2sgrad imports: tests/compiler/test_catalogue.py differentiates each function through
its source and compares with central finite differences. Every public function here must have
an entry in the test's table (a test checks it). Functions whose name starts with an
underscore are callees, reached only through the functions that call them.

The sections follow what they exercise: operators and broadcasting, reductions, elementwise
functions, products and shapes, math.* on floats, user callees, names and assignments,
in-place updates of fresh arrays, element assignment, non-differentiable values in the path,
creators, realistic losses; then in-place updates that NumPy would make visible through
another name (Python's result or a refusal), and small functions for the float32 checks.
"""

import functools
import math

import numpy
import numpy as np

from . import helpers
from .helpers import softplus

# Module-level constants read by the functions below.
SCALE = 3.0
BUFFER = np.zeros(3)  # written to by a function that must be refused
OFFSETS = np.array([0.5, -1.0, 2.0, 0.25])
EPS = 1e-5
WEIGHTS = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
AXES = (0, 2)
NEW_SHAPE = (2, 6)
activation = np.tanh  # a module-level alias of a NumPy function
rebindable_activation = np.tanh  # rebound by a test after a first gradient
# Module globals named like what the compiler generates.
unbroadcast = 5.0
saved = 0.5


# --- binary operators, with every broadcasting combination ---------------------------------
# The same function is called with floats, 0-d arrays, (3,1) x (4,), (2,3,4) x (4,), row x
# column and reversed operand orders (the table gives the shapes): each call is a separate
# specialisation, and each needs the contributions summed back to its operand's shape.


def add(a, b):
    return np.sum(np.sin(a + b))


def sub(a, b):
    return np.sum(np.tanh(a - b) * b)


def mul(a, b):
    return np.sum(np.cos(a * b))


def div(a, b):
    # b is kept away from zero.
    return np.sum(np.sin(a / b))


def matmul_op(a, b):
    return np.sum(np.tanh(a @ b))


def pow_const_exponent(x):
    # Integer, float and negative constant exponents of a positive base.
    return np.sum(x ** 2 + x ** 3 - 0.5 * x ** 2.5 + x ** -1.5)


def pow_const_base(x):
    return np.sum(2.0 ** x + 3 ** (x / 2.0))


def pow_both(a, b):
    # Differentiated base and exponent, broadcast against each other; a > 0.
    return np.sum(a ** b)


def neg(x):
    return np.sum(np.exp(-x) * -x) + np.sum(-(x * x))


def unary_plus(x):
    return np.sum(+x * +x)


def pow_negative_base(x):
    # Constant exponents of a base of any sign: the exponent's log(base) must not be needed.
    return np.sum(x ** 2 + x ** 3.0 + pow(x, 2) + np.power(x, 3))


def builtin_pow(a, b):
    # a > 0.
    return np.sum(pow(a, b))


def constants_both_sides(x):
    y = 2.0 * x - x / 3.0 + 1.5 - (4.0 - x) + 3.0 / (x * x + 1.0)
    z = 2 * x + x * 2 - 1 + 7 / (x * x + 2) + x / 2
    return np.sum(y * z)


def constant_array_operands(x):
    # Constant arrays on the left of -, / and @, a float minus an array; x (3, 4) > 0.
    a = np.sum(1.0 - x) * np.sum(x - 1.0) + np.sum(np.arange(4.0) - x)
    b = np.sum(np.arange(1.0, 5.0) / x) + np.sum(np.ones((2, 3)) @ x) + np.sum(x @ np.ones(4))
    return a + b


def exponent_arguments(x, n, p, q):
    # Exponents passed in: a Python int, a Python float, a 0-d array; x > 0.
    return np.sum(x ** n) + np.sum(x ** p) + np.sum(x ** q)


def divide_by_integers(x, n):
    # n is an integer array.
    return np.sum(x / n) + np.sum(n / (x * x + 1.0))


def negation_precedence(x):
    # -x ** 2 is -(x ** 2).
    return np.sum(-x ** 2) + np.sum((-x) ** 3)


def mod_op(a, b):
    # a % b == a - b * floor(a / b); the table keeps a / b away from integers.
    return np.sum((a % b) ** 2)


def ufunc_operators(a, b):
    # The ufunc spellings of the operators; b > 0.
    c = np.add(a, b) * np.subtract(a, b)
    d = np.multiply(c, np.divide(a, b)) + np.true_divide(c, b)
    e = np.power(b, a) + np.negative(d) + np.positive(a) + np.float_power(b, 2.0)
    return np.sum(e)


def fmod_remainder(a, b):
    return np.sum(np.fmod(a, b) * np.remainder(a, b))


# --- reductions: axis None / int / negative / tuple, keepdims, function and method forms ----


def sum_variants(x):
    # x has shape (2, 3, 4).
    s0 = np.sum(x)
    s1 = np.sum(x, axis=0)
    s2 = np.sum(x, axis=-1)
    s3 = np.sum(x, axis=(0, 2))
    s4 = np.sum(x, axis=1, keepdims=True)
    s5 = np.sum(x, axis=None, keepdims=True)
    s6 = np.sum(x, axis=(-1, -3), keepdims=True)
    return s0 * s0 + np.sum(s1 ** 2) + np.sum(np.sin(s2)) + np.sum(s3 * s3) + np.sum(
        x * s4) + np.sum(x / (1.0 + s5 * s5)) + np.sum(np.cos(x * s6))


def sum_methods(x):
    a = x.sum()
    b = x.sum(axis=1)
    c = x.sum(axis=-1, keepdims=True)
    d = x.sum((0, 1))
    e = x.sum(0)
    return a * a + np.sum(np.sin(b)) + np.sum(x * c) + np.sum(d ** 2) + np.sum(e ** 3)


def mean_variants(x):
    m0 = np.mean(x)
    m1 = np.mean(x, axis=1)
    m2 = np.mean(x, axis=-1, keepdims=True)
    m3 = np.mean(x, axis=(0, 2))
    m4 = x.mean()
    m5 = x.mean(axis=0, keepdims=True)
    m6 = x.mean(-2)
    return m0 ** 2 + np.sum(np.sin(m1)) + np.sum((x - m2) ** 2) + np.sum(m3 ** 3) + m4 * m0 \
        + np.sum(x * m5) + np.sum(np.cos(m6))


def max_min_variants(x):
    # The table draws x without ties.
    a = np.max(x)
    b = np.max(x, axis=0)
    c = np.min(x, axis=-1, keepdims=True)
    d = np.max(x, axis=(0, 2))
    e = np.min(x)
    f = np.amax(x, axis=1)
    g = np.amin(x, axis=(1, 2), keepdims=True)
    return a * e + np.sum(b ** 2) + np.sum(x * c) + np.sum(np.sin(d)) + np.sum(f ** 3) \
        + np.sum(x / (2.0 + g * g))


def max_min_methods(x):
    a = x.max()
    b = x.min(axis=1)
    c = x.max(axis=-1, keepdims=True)
    d = x.min(0)
    return a ** 2 + np.sum(np.sin(b)) + np.sum(np.exp(x - c)) + np.sum(d * d)


def prod_var_std(x):
    # x is positive and of shape (3, 4).
    p = np.prod(x, axis=1)
    v = np.var(x, axis=0)
    s = np.std(x)
    w = x.var(axis=-1, keepdims=True, ddof=1)
    q = x.prod()
    r = np.std(x, axis=1, keepdims=True)
    return np.sum(p) + np.sum(v) * s + np.sum(x * w) + q + np.sum(x / r)


def var_std_more(x):
    # Axis tuples with ddof, keepdims with axis None.
    return np.sum(np.var(x, axis=(0, 1), ddof=1)) + np.std(x, keepdims=True).sum() \
        + np.sum(x.std(axis=-1, ddof=1) ** 2)


def prod_with_zero(x):
    # x holds one exact zero: the rule must not divide by it.
    return np.prod(x) + np.sum(np.prod(x, axis=0) ** 2) + np.sum(x.prod(axis=1, keepdims=True))


def cumsum_reduce(x):
    c = np.cumsum(x, axis=1)
    d = np.cumsum(x)
    e = x.cumsum(axis=0)
    return np.sum(np.sin(c)) + np.sum(d * d) + np.sum(e ** 3)


def reduce_axis_argument(x, axis):
    # The axis is an (integer) argument, not a literal.
    s = np.sum(x, axis=axis)
    m = np.mean(x, axis=axis, keepdims=True)
    return np.sum(np.sin(s)) + np.sum((x - m) ** 2)


def mean_of_keepdims_chain(x):
    # Reductions of reductions, mixing keepdims.
    row = np.sum(x, axis=-1, keepdims=True)
    col = np.mean(row, axis=0)
    return np.sum(col * col) + np.max(row)


# --- elementwise functions in small expressions -------------------------------------------


def exp_log_family(x):
    # x > 0.
    return np.sum(np.exp(x) * np.log(x) + np.exp2(x) - np.log2(x) + np.log10(x) * np.expm1(x)
                  + np.log1p(x))


def sigmoid(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def softplus_inline(x):
    return np.sum(np.logaddexp(0.0, x) + np.logaddexp2(x, 1.0))


def trig_family(x):
    # |x| < 1.
    return np.sum(np.sin(x) * np.cos(x) + np.tan(x) + np.arcsin(x / 2.0) + np.arccos(x / 2.0)
                  * np.arctan(x))


def hyperbolic_family(x):
    # x > 1.2 keeps arccosh and arctanh(1 / x) inside their domains.
    return np.sum(np.sinh(x) / np.cosh(x) + np.tanh(x) ** 2 + np.arcsinh(x)
                  + np.arccosh(x) + np.arctanh(1.0 / x))


def roots_and_powers(x):
    # x > 0.
    return np.sum(np.sqrt(x) + np.cbrt(x) * np.square(x) + np.reciprocal(x))


def angles(x):
    return np.sum(np.sin(np.deg2rad(x * 30.0)) + np.rad2deg(x) / 90.0 + np.radians(x)
                  * np.degrees(x) / 100.0)


def abs_family(x):
    # |x| > 0.2: away from the kink.
    return np.sum(np.abs(x) * x + np.absolute(x) + np.fabs(x) ** 2 + abs(x) * 0.5)


def two_argument_ufuncs(a, b):
    # a, b > 0.
    return np.sum(np.arctan2(a, b) + np.hypot(a, b) * np.logaddexp(a, b))


def relu_mlp_unit(x, w):
    # x @ w is kept away from 0.
    return np.sum(np.maximum(x @ w, 0.0) ** 2)


def maximum_minimum(a, b):
    # a - b is kept away from 0 (both broadcast).
    return np.sum(np.maximum(a, b) * np.minimum(a, b) + np.maximum(a, 2.0 * b) ** 2)


def where_select(x, y):
    return np.sum(np.where(x > y, x * y, np.sin(y)) + np.where(x < 0.0, 0.0, x ** 2))


def where_constant_condition(x, y):
    return np.sum(np.where(True, x, y) * np.where(x > 0.0, 1.0, x))


def leaky_relu(x):
    return np.sum(np.where(x > 0, x, 0.01 * x) ** 2)


def clip_family(x, lo, hi):
    # x is away from lo and hi, and from -1 and 1; lo < hi.
    a = np.clip(x, -1.0, 1.0)
    b = np.clip(x, lo, hi)
    c = np.clip(x, None, 0.5)
    d = x.clip(-0.5, 0.5)
    e = np.clip(x, a_min=lo, a_max=None)
    return np.sum(a * x + b ** 2 + c * x + d * d + e)


def clip_bounds_numpy2(x, lo, hi):
    # NumPy 2 spells the bounds min= and max=.
    return np.sum(np.clip(x, min=lo, max=hi) ** 2)


def smooth_abs(x):
    return np.sum(np.sqrt(x * x + 1e-2))


def gelu_tanh(x):
    inner = np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)
    return np.sum(0.5 * x * (1.0 + np.tanh(inner)))


def swish(x, beta):
    return np.sum(x / (1.0 + np.exp(-beta * x)))


# --- products and shapes in every rank combination ----------------------------------------


def dot_ranks(a, b):
    # np.dot for 0-d, 1-d, 2-d and 3-d operands (the table gives the shapes).
    return np.sum(np.sin(np.dot(a, b)))


def dot_method(a, b):
    return np.sum(a.dot(b) ** 2)


def matmul_function(a, b):
    return np.sum(np.matmul(a, b) ** 2)


def matmul_chain(a, b, c):
    # (a @ b) @ c and a @ (b @ c): same value, different operand ranks inside.
    return np.sum((a @ b) @ c) + np.sum(np.tanh(a @ (b @ c)))


def outer_product(a, b):
    return np.sum(np.outer(a, b) ** 2) + np.sum(np.sin(np.outer(b, a)))


def trace_variants(a):
    # a has shape (3, 3).
    return np.trace(a) ** 2 + a.trace() + np.trace(a @ a, offset=1) + np.trace(a.T @ a)


def trace_batched(a):
    # a has shape (2, 3, 3): the trace of each matrix of the stack.
    return np.sum(np.trace(a, axis1=1, axis2=2) ** 2)


def transpose_2d(a, b):
    return np.sum(a.T @ b) + np.sum(np.transpose(a) * a.transpose()) + np.sum(a.T ** 3)


def transpose_3d(x):
    # x has shape (2, 3, 4).
    a = np.transpose(x, (2, 0, 1))
    b = x.transpose(1, 0, 2)
    c = x.transpose((0, 2, 1))
    d = np.transpose(x, (-1, 0, 1))
    e = x.T
    return np.sum(np.sin(a) * d) + np.sum(b ** 2) + np.sum(np.cos(c)) + np.sum(e * e * e)


def reshape_variants(x):
    # x has shape (3, 4).
    a = x.reshape(4, 3)
    b = x.reshape((2, -1))
    c = np.reshape(x, (-1,))
    d = x.reshape(-1)
    e = np.ravel(x)
    f = x.flatten()
    return np.sum(np.sin(a)) + np.sum(b ** 2) + np.sum(c * d) + np.sum(e ** 3) + np.sum(f * e)


def reshape_then_matmul(x, w):
    # x (2, 3, 4) -> (6, 4) @ w (4, 5) -> (2, 3, 5).
    h = x.reshape(6, 4) @ w
    return np.sum(np.tanh(h.reshape(2, 3, 5)))


def axis_moves(x):
    # x has shape (2, 3, 4).
    a = np.swapaxes(x, 0, 2)
    b = x.swapaxes(1, 2)
    c = np.moveaxis(x, 0, -1)
    d = np.flip(x, axis=1)
    e = np.expand_dims(x, 1)
    f = np.squeeze(e, axis=1)
    return np.sum(np.sin(a) ** 2) + np.sum(b * np.swapaxes(x, -1, -2)) + np.sum(c ** 3) \
        + np.sum(d * x) + np.sum(f * np.squeeze(e))


def squeeze_singletons(x):
    # x has shape (3, 1, 4).
    return np.sum(np.sin(np.squeeze(x)) + x.squeeze() ** 2)


def linalg_inverse_det(a):
    # a is well-conditioned (3, 3).
    return np.sum(np.linalg.inv(a) ** 2) + np.log(np.abs(np.linalg.det(a)))


def swapaxes_broadcast(x, y):
    # x (1, 3) becomes (3, 1), then broadcasts against y (4,).
    return np.sum(np.swapaxes(x, 0, 1) * y)


def moveaxis_broadcast(x, y):
    return np.sum(np.moveaxis(x, 0, -1) * y)


def matrix_transpose_broadcast(x, y):
    return np.sum(np.matrix_transpose(x) * y) + np.sum(x.mT * y)


def reshape_minus_one_broadcast(x, y):
    # x (1, 1) becomes (1,) and broadcasts against y (4,).
    return np.sum(np.reshape(x, -1) * y) + np.sum(x.reshape(-1) * y)


def reshape_size_one_broadcast(x, y):
    # The same through spellings whose size-1 facts are right.
    return np.sum(x.reshape((-1,)) * y) + np.sum(np.ravel(x) * y) + np.sum(np.squeeze(x) * y)


def shape_variants_more(x):
    # x has shape (1, 3, 1); axis tuples, order="F", flips, empty axes.
    a = np.squeeze(x, axis=(0, 2))
    b = np.expand_dims(x, (0, 1))
    c = x.reshape(3, 1, order="F")
    d = np.flip(x, axis=(0, 1))
    e = np.sum(x, axis=())
    return np.sum(a ** 2) + np.sum(b ** 3) + np.sum(np.sin(c)) + np.sum(d * x) + np.sum(e * e)


def squeeze_then_matmul(x, w):
    # The rank after squeeze is not known statically.
    return np.sum(np.tanh(np.squeeze(x) @ w))


def _matvec(a, b):
    return np.tanh(a @ b)


def _reduce_rows(a):
    return np.sum(np.mean(a, axis=-1, keepdims=True) * a, axis=0) + np.max(a, axis=-1).sum()


def callee_unknown_rank(x, w):
    # The callee is compiled for an argument whose rank is unknown (after squeeze).
    return np.sum(_matvec(np.squeeze(x), w)) + np.sum(_reduce_rows(np.squeeze(x)) ** 2)


def unknown_rank_everything(x, y):
    # Every rule on operands of unknown rank: the rank tests stay in the generated code.
    a = np.squeeze(x)
    b = np.squeeze(y)
    c = a * b + a
    d = np.dot(a, b.T)
    e = np.transpose(a)
    f = np.sum(c, axis=0, keepdims=True) / np.var(a, axis=-1, keepdims=True)
    return np.sum(d ** 2) + np.sum(e * a.T) + np.sum(f) + np.sum(np.cumsum(c, axis=1)) \
        + np.trace(a @ b.T)


def reshape_to_argument(x, w, shape):
    # The new shape is an argument: the rank is only known at run time.
    return np.sum(np.tanh(np.reshape(x, shape) @ w))


def same_operand_twice(x):
    return np.sum(np.dot(x, x) + np.outer(x, x)) + np.sum(x @ x) + np.sum(np.maximum(x, x))


def method_on_temporaries(x, w):
    return (x @ w).sum(axis=0).dot(w.T.sum(axis=0)) + x.T.dot(x).trace()


def trivial_powers(x, y):
    return np.sum(x ** 0 * y + x ** 1 + x ** 1.0 * y ** 2)


def indexing(x):
    # Rows, columns, slices and new axes.
    return np.sum(x[0] * x[1]) + np.sum(x[:, 1] * x[:, -1]) + x[2, 3] \
        + np.sum(x[1:, :2] ** 2) + np.sum(x[:, None, :] * x[None])


def trace_offsets(x):
    # x has shape (3, 4).
    return np.trace(x, offset=-1) ** 2 + np.trace(x, 1) + np.trace(x.T @ x, 0, 1, 0)


def linalg_batched(a):
    # a (2, 3, 3), well-conditioned.
    return np.sum(np.linalg.inv(a) ** 2) + np.sum(np.linalg.det(a) ** 2)


def indexing_more(x):
    # Ellipsis, negative steps, repeated fancy indices, boolean masks, np.newaxis.
    return np.sum(x[..., 0] ** 2) + np.sum(x[::-1] * x) + np.sum(x[[0, 0, 1]] ** 2) \
        + np.sum(x[x > 0.0] ** 3) + np.sum(x[np.newaxis, :, 1])


def method_spellings(x):
    # x (2, 3, 3): method forms not used elsewhere.
    return np.sum(x.ravel() ** 2) + np.sum(np.linalg.matrix_transpose(x) * x) \
        + np.sum(np.true_divide(x, 2.0))


def trace_any_axes(x, y):
    # x (3, 5): offsets and swapped axes; y (3, 2, 4): traces of a stack.
    a = np.trace(x, 1, 1, 0) ** 2 + np.trace(x, -1, axis1=1, axis2=0) + np.trace(x, offset=2)
    b = np.sum(np.trace(y, 1, 0, 2) ** 2) + np.sum(np.trace(y, axis1=2, axis2=1) ** 2)
    return a + b


def transpose_of_vector(x):
    return x.T @ x + np.sum(np.transpose(x) * x)


def asarray_and_array(x):
    # The usual first line of a NumPy function, and explicit copies/conversions.
    x = np.asarray(x)
    y = np.array(x * 2.0)
    z = np.ascontiguousarray(y.T)
    return np.sum(np.sin(y) * x) + np.sum(z ** 2)


def copy_astype(x):
    return np.sum(np.copy(x) * x.copy() * x.astype(np.float64))


# --- math.* on Python floats, mixed with 0-d arrays ---------------------------------------


def math_trig(a, b):
    # |a|, |b| < 0.9.
    return math.sin(a) * math.cos(b) + math.tan(a) + math.asin(b) - math.acos(a) \
        + math.atan(a * b) + math.atan2(a, b + 2.0)


def math_exp_log(a, b):
    # b > 1; math.log with a base, constant and differentiated.
    base_two = math.log(b, 2.0)  # noqa: FURB163
    return math.exp(a) * math.log(b) + base_two + math.log2(b) - math.log10(b) \
        + math.log1p(b) * math.expm1(a) + math.log(b + 5.0, b)


def math_roots_powers(a, b):
    # a > 0.
    return math.sqrt(a) + math.pow(a, b) + math.pow(a, 2.0) + a ** b + pow(a, 1.5) \
        + math.hypot(a, b) + math.cbrt(a) + math.exp2(b)


def math_hyperbolic(a):
    # 1.2 < a.
    return math.sinh(a) * math.cosh(a) + math.tanh(a) + math.asinh(a) + math.acosh(a) \
        + math.atanh(1.0 / a)


def math_misc(a, b):
    # |a|, |b| > 0.2.
    return math.erf(a) * math.erfc(b) + math.fabs(a) * abs(b) + math.degrees(a) / 60.0 \
        + math.radians(b) * a


def math_with_constants(a):
    return math.pi * a * a + math.e ** a - math.sqrt(2.0) * a + math.tau / a


def math_on_arrays_reduced(x, b):
    # math.* of NumPy scalars and 0-d arrays; a logarithm with a 0-d base.
    s = float(np.sum(x ** 2))
    return math.sqrt(s) + math.sin(np.sum(x)) * 2.0 + math.log(s + 1.0, b)


def builtin_max_min(a, b):
    # Python's max and min of two floats; |a - b| and |a|, |b| are kept away from 0.
    return max(a, b) * min(a, 0.0) + max(b, 0.0) ** 2 + min(a * b, b)


def float_and_0d(a, x):
    # a is a Python float, x a 0-d array: they mix in operators, np.* and math.*.
    y = a * x + np.exp(x) * a
    z = math.sin(a) * np.sin(x) + float(x) * a
    return y * z + math.cos(float(x))


def math_of_0d_then_sum(x):
    # math.sin of a 0-d array is a Python float, then reduced by NumPy.
    y = math.sin(x)
    return np.sum(y) * 2.0


def float_of_0d_then_mean(x):
    y = float(x)
    return np.mean(y ** 2) + np.sum(np.reshape(math.exp(x), (1,)))


def float_and_array(a, x):
    # A Python float through math.*, broadcast against an array.
    return np.sum(math.exp(a) * x + math.sin(a) / (1.0 + x * x))


def float_only_numpy(a, b):
    # np.* on Python floats returns NumPy scalars.
    return np.exp(a) * np.sin(b) + np.sqrt(a * a + 1.0) * b


def numpy_scalar_input(x, a):
    # x is an np.float64 scalar.
    return np.sin(x) * a + x * x


# --- user callees -------------------------------------------------------------------------


def _affine(v, s):
    return v * s + s


def _scaled(v, scale=2.0, shift=0.0):
    return v * scale + shift


def _inner(v):
    return np.sin(v) * v


def _middle(v, w):
    return _inner(v * w) + w


def _outer(v, w):
    return np.sum(_middle(v, w) ** 2)


def _expensive(v):
    return np.exp(v) @ np.exp(v).T


def _poly(v, c):
    return c * v ** 3 + v * c * c


def _constant_result(v):
    return 1.0


def _identity(v):
    return v


def _keyword_only(v, *, scale, shift=0.0):
    return v * scale + shift


def _ignores_second(v, w):
    return v * 2.0


def _scale(v):
    return v * 3.0


def _passthrough(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@_passthrough
def _decorated(v):
    return v * 3.0 + np.sin(v)


class _Ops:
    @staticmethod
    def square(v):
        return v * v


def callee_twice(x, s):
    # Once with an array, once with a float (two specialisations of one callee).
    return np.sum(_affine(x, s) ** 2) + _affine(s, 2.0) * _affine(s, s)


def callee_keywords(x, s):
    a = _scaled(x)
    b = _scaled(x, shift=s)
    c = _scaled(x, 3.0, shift=s)
    d = _scaled(shift=x, v=s, scale=s)
    e = _scaled(v=x, scale=s)
    return np.sum(a * b + c * d + e ** 2)


def callee_nested(x, w):
    # _outer calls _middle calls _inner.
    return _outer(x, w) + np.sum(_inner(w))


def callee_unused(x, y):
    # The callee's result does not reach the output.
    junk = _expensive(x)
    unused = _scaled(y, shift=x)
    return np.sum(np.sin(x) * y)


def callee_constant_argument(x):
    return np.sum(_poly(x, 3.0) + _poly(2.0, x) + _affine(1.5, x))


def callee_other_module(x, z):
    # z has shape (3, 4).
    return np.sum(softplus(x)) + np.sum(helpers.logsumexp(z)) + np.sum(helpers.tempered(x))


def callee_other_module_keywords(z):
    return np.sum(helpers.logsumexp(z, axis=0) ** 2) + np.sum(helpers.logsumexp(z=z, axis=1))


def _rebindable(v):
    return v * 2.0


def _rebindable_alternative(v):
    return np.sin(v) * 3.0


def callee_rebound(x):
    # Its own test rebinds _rebindable after a first gradient and expects the new callee.
    return np.sum(_rebindable(x) ** 2)


def callee_constant_result(x):
    # The callee's result does not depend on its differentiated argument.
    return np.sum(x) + _constant_result(x)


def callee_identity(x):
    y = _identity(x)
    return np.sum(y * y)


def callee_keyword_only(x, s):
    return np.sum(_keyword_only(x, scale=s) ** 2 + _keyword_only(x, shift=s, scale=2.0))


def callee_ignores_argument(x, y):
    # y is passed but the callee does not use it: a zero gradient.
    return np.sum(_ignores_second(x, y) ** 2)


def callee_same_argument_twice(x):
    return np.sum(_ignores_second(x, x) * _keyword_only(x, scale=x) + _affine(x, x))


def callee_same_name_other_module(x):
    # helpers._scale and _scale have the same name and differ.
    return np.sum(_scale(x) * helpers._scale(x))


def callee_decorated(x):
    # A callee behind a functools.wraps decorator.
    return np.sum(_decorated(x) ** 2)


def callee_staticmethod(x):
    return np.sum(_Ops.square(x) * x)


def function_aliases(x):
    # A module-level alias of np.tanh; locals that shadow builtins.
    abs = np.sin(x)
    len = 3.0
    return np.sum(activation(x) * abs) * len


def local_function_alias(x):
    f = np.tanh
    return np.sum(f(x))


def alias_rebound(x):
    # Its own test rebinds rebindable_activation after a first gradient.
    return np.sum(rebindable_activation(x) * x)


def module_attribute_rebound(x):
    # Its own test rebinds helpers.rebindable after a first gradient.
    return np.sum(helpers.rebindable(x) ** 2)


def _mean_and_var(v):
    m = np.mean(v, axis=-1, keepdims=True)
    return m, np.mean((v - m) ** 2, axis=-1, keepdims=True)


def callee_returns_tuple(x):
    m, v = _mean_and_var(x)
    return np.sum((x - m) / np.sqrt(v + 1e-5) * x)


def callee_tuple_partly_used(x):
    # Only the first item of the callee's result reaches the output.
    m, _unused = _mean_and_var(x)
    return np.sum(m ** 2)


def callee_result_reused(x):
    h = _inner(x)
    return np.sum(h * h + h)


# --- names, assignments, and values that do not reach the output ---------------------------


def repeated_use(x):
    return np.sum(x * x + x * np.sin(x) - x / (x * x + 1.0))


def reassignment(x, w):
    h = x * 2
    h = np.tanh(h @ w)
    h = h * 2
    h = h + np.sum(h)
    return np.sum(h ** 2)


def parameter_reassigned(x, y):
    z = x
    x = x * 3.0
    y = y + x
    return np.sum(x * z * y)


def local_named_np(x):
    # A local called np: the generated code must find NumPy under another name.
    np = numpy.sin(x)
    return numpy.sum(np * x)


def augmented_assignment(x, y):
    h = x * 1.0
    h += y
    h *= y
    h -= 0.5
    h /= 2.0
    h **= 2
    return np.sum(h)


def augmented_parameter(a, b):
    # Augmented assignment to Python float parameters.
    a += b
    a *= a
    b -= a
    b /= 3.0
    return a * b


def tuples_and_lists(a, b):
    # Tuples and lists of differentiated values, indexed, stacked and concatenated.
    t = (a, b * 2.0)
    items = [a, b, a * b]
    s = np.stack([a, b * 2.0, a * b])
    c = np.concatenate([a, b])
    return np.sum(t[0] * t[1]) + np.sum((items[0] + items[1] + items[2]) ** 2) \
        + np.sum(s ** 2) + np.sum(np.sin(c))


def tuple_swap(a, b):
    a, b = b, a
    a, b = a * 2.0, b + a
    return np.sum(a * np.sin(b))


def chained_and_annotated(x):
    "A docstring is not an operation."
    a = b = x * 2.0
    c: float = np.sum(a * b)
    pass  # noqa: PIE790
    return c + np.sum(b)


def unused_variables(x, y):
    junk = np.exp(x) * y
    other = np.sum(junk) + 1.0
    return np.sum(np.sin(x) * 3.0)


def independent_of_some_inputs(x, y, s):
    # The gradient in y and s is zero, shaped like y and like the float s.
    t = y * s
    return np.sum(x ** 2)


def returns_constant(x):
    return 3.0


def generated_looking_names(x, x_bar, out_bar):
    # User names that look like the compiler's own (cotangents, temporaries, saved values).
    _t1 = x * x_bar
    saved = _t1 + out_bar
    h_1 = np.sum(saved * x)
    _g_kept = h_1 * 2.0
    x_bar_bar = _g_kept + np.sum(x_bar)
    return x_bar_bar * np.sum(out_bar)


def names_of_rule_parameters(a, b):
    # User names equal to the rules' parameter names, passed in the other order.
    return np.sum(np.maximum(b, a) * 2.0 + np.arctan2(b, a) + np.hypot(b, a) + b / a
                  + np.power(b, a))


def names_of_rule_locals(hits, g, ans, share):
    # User names equal to the rules' parameters and locals (g, ans, hits, share, zeros...).
    zeros = hits * g
    nonzero = np.max(zeros, axis=0) * ans
    others = np.prod(share, axis=0)
    return np.sum(nonzero) + np.sum(others * np.maximum(hits, g)) \
        + np.sum(np.where(hits > g, g, ans) * np.clip(g, -1.5, 1.5))


def independent_of_all_inputs(x):
    # The output does not depend on x at all: a zero gradient of x's shape.
    c = np.ones(3)
    return np.sum(c * 2.0)


def identity(x):
    return x


def identity_through_copies(x):
    y = x
    z = y
    return z


def returns_array(x, y):
    # A non-scalar output: only checked through vjp with a random seed.
    return np.sin(x) * y


def returns_parameter_unchanged_other(x, y):
    # Returns x itself; y is read but does not matter.
    junk = y * 2.0
    return x


def module_globals(x):
    # SCALE is a float, OFFSETS a (4,) array broadcast against x (3, 4).
    return np.sum(SCALE * x ** 2 + np.sin(x + OFFSETS)) / SCALE + EPS * np.sum(x)


def module_global_arrays(x):
    # A global matrix, and global axes and shape (their values are only known at run time).
    a = np.sum(np.tanh(x @ WEIGHTS)) + np.sum(WEIGHTS.T @ x.T)
    return a + np.sum(np.sum(x.reshape(NEW_SHAPE), axis=0) ** 2) * saved * unbroadcast


def global_axes(x):
    return np.sum(np.sum(x, axis=AXES) ** 2) + np.sum(np.reshape(x, NEW_SHAPE) ** 3)


def _make_closure(c, w):
    # The returned function reads c (a float) and w (an array) from its closure.
    def closure_loss(x):
        return np.sum(np.tanh(x @ w) * c)

    return closure_loss


closure_loss = _make_closure(1.5, np.linspace(-1.0, 1.0, 12).reshape(4, 3))


def shape_arithmetic(x):
    # Integers from x.shape used in arithmetic.
    n = x.shape[0]
    m = x.shape[1]
    k = x.shape[-2]
    total = x.size
    d = x.ndim
    scale = 1.0 / (n * m) + k / total + len(x) * 0.5 + d
    return np.sum(x ** 2) * scale + np.sum(x) / np.sqrt(m)


def shape_unpacking(x):
    n, m = x.shape
    return np.sum(x ** 2) / (n * m)


def shape_into_creator(x):
    n = x.shape[-1]
    w = np.arange(n) / n
    return np.sum(x * w) + np.sum(np.ones((n,)) * x ** 2)


def keyword_arguments(x):
    a = np.sum(x, axis=0, keepdims=True)
    b = np.clip(x, a_min=-3.0, a_max=3.0)
    c = np.mean(a=x, axis=-1)
    return np.sum(a * b) + np.sum(c ** 2)


def top_level_defaults(x, scale=2.0, shift=None, lo=-1.0):
    # Called without the defaulted arguments: None reaches np.clip as a missing bound.
    return np.sum(np.clip(x * scale, lo, shift) ** 2)


def keyword_only_parameter(x, *, scale, power=2):
    # Only callable with keywords: its own test passes them at the call.
    return np.sum(np.sin(x * scale) ** power)


def integer_and_boolean_inputs(x, counts, mask):
    return np.sum(x * counts) + np.sum(np.where(mask, x, 0.0) ** 2)


def empty_arrays(x, w):
    # Zero-size axes: the gradients are empty or zero.
    return np.sum(np.tanh(x @ w)) + np.sum(x * 2.0) + np.sum(w[:0])


def size_one_axes(x, y):
    # x (3, 1), y (1, 4): reductions over size-1 and broadcast axes.
    z = x * y
    a = np.sum(z, axis=1)
    b = np.mean(x, axis=1, keepdims=True)
    c = np.sum(y, axis=0)
    d = np.max(x * 1.0, axis=-1)
    return np.sum(a * a) + np.sum(b * z) + np.sum(c ** 2) + np.sum(d)


def chained_methods(x):
    # x (2, 3)
    return x.T.T.reshape(2, -1).T.sum(axis=0).dot(np.ones(2)) + x.reshape(-1).sum()


def sum_with_dtype(x):
    return np.sum(x ** 2, axis=0, dtype=np.float64).sum()


def print_statements(x):
    # Calls kept for their effect, with no array changing: the gradient is unaffected.
    print("catalogue print_statements", x.shape)
    y = np.sin(x)
    print(y.sum())
    return np.sum(y * x)


def assert_statement(x):
    assert x.ndim == 2
    return np.sum(x ** 2)


# --- in-place updates of fresh arrays: NumPy updates them, the gradient follows ----------


def inplace_old_value_needed(x, y):
    # The adjoint of z = h * h reads h from before h *= y.
    h = x * 2.0
    z = h * h
    h *= y
    return np.sum(z + h * x)


def inplace_softmax(x):
    h = np.exp(x)
    h /= np.sum(h)
    return np.sum(h * np.arange(4.0))


def inplace_power(x):
    h = x * 1.0
    h **= 3
    return np.sum(h * x)


def inplace_accumulate(x):
    acc = np.zeros(3)
    acc += x
    acc += x * x
    acc -= np.sin(x)
    return np.sum(acc * acc)


def inplace_callee_result(x):
    h = _double(x)
    h += 1.0
    return np.sum(h * x)


def inplace_then_view(x):
    h = x * 1.0
    h *= 3.0
    v = h[1:]
    return np.sum(v * x[1:])


def inplace_two_names_one_array(x, y):
    # k and h are one array; h is not read after the updates.
    h = x * 1.0
    k = h
    k += y
    k *= y
    return np.sum(k * x)


def inplace_matmul_broadcast(x, w, y):
    # x (2, 3), w (3, 3), y (3,).
    h = x * 1.0
    h @= w
    h += y
    h *= y
    return np.sum(h * h)


# --- element assignment: y[i] = v, y[1:3] = v, y[idx] += v -----------------------------------


def element_assignment(x):
    # x (4,): writes into a fresh array, read afterwards.
    y = np.zeros(4)
    y[0] = x[1] * 2.0
    y[1:3] = x[:2] ** 2
    return np.sum(y * x)


def element_overwrite(x):
    y = x * 1.0
    y[0] = 0.0
    return np.sum(y * x)


def element_repeated_index_add(x):
    # NumPy's buffered +=: with index [0, 0, 1] only the last write to y[0] counts.
    y = np.zeros(3)
    y[[0, 0, 1]] += x
    return np.sum(y * y)


def element_mask_assign(x):
    y = x * 1.0
    y[y < 0.0] = 0.0
    return np.sum(y * x)


def element_column_assign(x):
    # x (3, 3).
    y = x * 2.0
    y[:, 0] = x[:, 1] ** 2
    return np.sum(y * x)


def element_float_into_row(x, s):
    # A differentiated float broadcast into a row.
    y = x * 1.0
    y[0] = s
    return np.sum(y ** 2)


def element_write_then_read(x):
    y = x * 1.0
    y[0] = x[0] * 2.0
    z = y[0] * y[1]
    y[1] = 5.0
    return z + np.sum(y * x)


def element_overwrite_twice(x, a, b):
    # Only b reaches the output through y[0].
    y = x * 1.0
    y[0] = a
    y[0] = b
    return np.sum(y * y)


def element_overlapping_add(x):
    y = x * 1.0
    y[1:] += y[:-1]
    return np.sum(y * x)


def element_full_overwrite(x):
    y = np.empty(3)
    y[:] = x * 2.0
    z = x * 1.0
    z[...] = np.sin(x)
    return np.sum(y * x) + np.sum(z * x)


def element_write_into_callee_result(x):
    y = _double(x)
    y[0] = 0.0
    return np.sum(y * x)


def _double(v):
    return v * 2.0


# --- non-differentiable functions in the path --------------------------------------------


def floor_sign_round(x):
    # x is away from integers (floor, round) and from 0 (sign).
    return np.sum(np.floor(x) * x + np.sign(x) * x ** 2 + np.round(x) * np.ceil(x) * x
                  + np.trunc(x) + (x // 1.0) * x)


def comparisons_as_masks(x, y):
    mask = x > y
    return np.sum(mask * x) + np.sum(np.where(mask, y, 0.0) ** 2) + np.sum((x <= 0.0) * y)


def boolean_mask_operators(x, y):
    # Masks combined with &, | and ~.
    m = (x > 0) & (y > 0)
    n = ~m | (x < -1.0)
    return np.sum(np.where(m, x * y, 0.0)) + np.sum(n * x) + np.sum(np.logical_xor(m, n) * y)


def inverted_mask(x):
    return np.sum(~(x > 0) * x) + np.sum(np.logical_not(x < 0.5) * x ** 2)


def argmax_selects(x):
    # The index is a constant; no ties in x.
    i = np.argmax(x)
    return np.sum(x * i) + np.sum(x ** 2) * np.argmin(x)


def floordiv_float(a, b):
    # a / b away from integers.
    return (a // b) * a * b


def integer_casts(x):
    # astype(int) is piecewise constant: no gradient through it; x is away from integers.
    return np.sum(x.astype(int) * x) + np.sum(np.array(x, dtype=int) * x ** 2)


def isfinite_guard(x):
    ok = np.isfinite(x)
    return np.sum(np.where(ok, x, 0.0) ** 2)


# --- creators combined with inputs --------------------------------------------------------


def creators(x):
    # x has shape (3, 3).
    a = np.ones_like(x) * x
    b = np.zeros((3, 3)) + x
    c = np.arange(3) * x
    d = np.eye(3) * x
    e = np.zeros_like(x) - x
    f = np.ones(3) @ x
    g = np.arange(9.0).reshape(3, 3) * x
    return np.sum(a * b) + np.sum(c ** 2) + np.trace(d) + np.sum(e * x) + np.sum(f ** 2) \
        + np.sum(g)


def full_creators(x, s):
    a = np.full_like(x, s) * x
    b = np.full((3,), s) + s
    return np.sum(a ** 2) + np.sum(b * b)


def linspace_endpoints(a, b):
    t = np.linspace(a, b, 5)
    return np.sum(t ** 2)


def plain_sum(x):
    return np.sum(x)


def linear_penalty(x, w):
    # w reaches the output only through a sum: its gradient is the broadcast seed.
    return np.sum(x * 2.0) + 0.1 * np.sum(w)


# --- realistic losses ---------------------------------------------------------------------


def least_squares(w, x, y):
    r = x @ w - y
    return 0.5 * np.sum(r ** 2)


def ridge(w, b, x, y, lam):
    r = x @ w + b - y
    return np.mean(r ** 2) + lam * np.sum(w * w)


def logistic_regression(w, b, x, y):
    # y in {-1, +1}; log(1 + exp(-margin)) without overflow.
    margin = y * (x @ w + b)
    return np.mean(np.logaddexp(0.0, -margin))


def logistic_regression_sigmoid(w, x, t):
    # t in {0, 1}; the textbook form through the sigmoid.
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return -np.mean(t * np.log(p) + (1.0 - t) * np.log(1.0 - p))


def softmax_cross_entropy_int_labels(logits, labels):
    # Integer labels picked by fancy indexing with two index arrays.
    n = logits.shape[0]
    z = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(n), labels])


def softmax_cross_entropy(logits, labels):
    # labels: one-hot (n, k). Max-subtracted for stability.
    z = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(labels * log_probs) / logits.shape[0]


def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.mean((out - y) ** 2)


def gaussian_nll(mu, log_var, x):
    # A learned log-variance per feature.
    return 0.5 * np.sum(log_var + (x - mu) ** 2 / np.exp(log_var) + math.log(2.0 * math.pi))


def huber(pred, target, delta):
    # |pred - target| is kept away from delta.
    r = pred - target
    small = np.abs(r) <= delta
    return np.sum(np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta)))


def cosine_similarity(a, b):
    return np.dot(a, b) / (np.sqrt(np.sum(a * a)) * np.sqrt(np.sum(b * b)))


def rbf_kernel_sum(x, z, gamma):
    # x (n, d), z (m, d): pairwise squared distances by broadcasting.
    diff = x[:, None, :] - z[None, :, :]
    d2 = np.sum(diff ** 2, axis=-1)
    return np.sum(np.exp(-gamma * d2))


def rbf_kernel_expand_dims(x, z, gamma):
    diff = np.expand_dims(x, 1) - np.expand_dims(z, 0)
    return np.sum(np.exp(-gamma * np.sum(diff ** 2, axis=-1)))


def rbf_kernel_expanded(x, z, gamma):
    # The same kernel with |x|^2 + |z|^2 - 2 x.z, no indexing.
    xx = np.sum(x * x, axis=1, keepdims=True)
    zz = np.sum(z * z, axis=1)
    d2 = xx + zz - 2.0 * x @ z.T
    return np.sum(np.exp(-gamma * d2))


def layer_norm(x, gamma, beta):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + EPS) * gamma + beta
    return np.sum(y * np.sin(y))


def attention_score(q, k, v):
    # softmax(q @ k.T / sqrt(d)) @ v, reduced to a scalar.
    s = q @ k.T / q.shape[-1] ** 0.5
    s = s - np.max(s, axis=-1, keepdims=True)
    p = np.exp(s)
    p = p / np.sum(p, axis=-1, keepdims=True)
    return np.sum((p @ v) ** 2)


def batched_attention(q, k):
    # q, k (b, t, d): batched matmul with a swapped key stack.
    s = q @ np.swapaxes(k, -1, -2)
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    p = e / np.sum(e, axis=-1, keepdims=True)
    return np.sum(p * s)


def kl_divergence(p_logits, q_logits):
    lp = p_logits - helpers.logsumexp(p_logits)
    lq = q_logits - helpers.logsumexp(q_logits)
    return np.sum(np.exp(lp) * (lp - lq))


def squared_hinge(w, x, y):
    # 1 - y * (x @ w) kept away from 0.
    return np.sum(np.maximum(0.0, 1.0 - y * (x @ w)) ** 2)


def poisson_nll(w, x, counts):
    rate = x @ w
    return np.sum(np.exp(rate) - counts * rate)


def elastic_net(w, x, y, l1, l2):
    # w is away from 0.
    r = x @ w - y
    return np.sum(r ** 2) / x.shape[0] + l1 * np.sum(np.abs(w)) + l2 * np.sum(w ** 2)


def residual_block(x, w1, w2):
    h = np.maximum(x @ w1, 0.0)
    out = x + h @ w2
    return np.sum(out * out)


# --- in-place updates: NumPy's semantics, or a clear refusal -----------------------------
# `h += y` on an array updates it in place, visible through every name that refers to it.
# The compiler must either give Python's value and gradient or refuse the function; these
# functions have their own test (the arguments are copied for every call).


def _view(v):
    return v.T


def inplace_through_alias(x, y):
    h = x
    h += y
    return np.sum(h * x)


def inplace_on_argument(x, y):
    x *= y
    return np.sum(x * y)


def inplace_through_view(x, y):
    # x (3, 3): h is a view of x.
    h = x.T
    h += y
    return np.sum(h * x)


def inplace_through_reshape(x):
    h = x.reshape(-1)
    h += 1.0
    return np.sum(x ** 2)


def inplace_through_callee_view(x, y):
    h = _view(x)
    h += y
    return np.sum(h * x)


def inplace_through_tuple_unpack(x, y):
    h, k = x, y
    h += k
    return np.sum(h * x)


def inplace_through_chained_assignment(x, y):
    h = g = x
    g += y
    return np.sum(g * x + h)


def inplace_on_fresh_array_shared(x, y):
    h = x * 1.0
    k = h
    h += y
    return np.sum(k * x)


def inplace_through_astype(x, y):
    h = x.astype(np.float64, copy=False)
    h += y
    return np.sum(h * x)


def inplace_on_fresh_array(x, y):
    # No other name refers to h: differentiated as h = h + y.
    h = x * 2.0
    h += y
    return np.sum(h * x)


def inplace_callee_returns_argument(x):
    h = _identity(x)
    h += 1.0
    return np.sum(h * x)


def inplace_read_view_after_update(x):
    h = x * 1.0
    k = h[0:2]
    h += 1.0
    return np.sum(k * x[0:2])


def inplace_update_through_slice(x):
    h = x * 1.0
    v = h[1:]
    v += 1.0
    return np.sum(h * x)


def inplace_update_through_reshape(x):
    # x (2, 2).
    h = x * 1.0
    v = h.reshape(-1)
    v *= 2.0
    return np.sum(h * x)


def out_argument(x):
    np.clip(x, -1.0, 1.0, out=x)
    return np.sum(x * x)


def out_argument_fresh(x):
    h = x * 1.0
    c = np.clip(h, -1.0, 1.0, out=h)
    return np.sum(c * h)


def fill_diagonal_then_sum(x):
    # x (3, 2): k changes in place.
    k = x @ x.T
    np.fill_diagonal(k, 0.0)
    return np.sum(k)


def sort_in_place(x, w):
    x.sort()
    return np.sum(x * w)


def fill_in_place(x):
    h = x * 2.0
    h.fill(1.0)
    return np.sum(h * x)


def copy_into(x, y):
    h = x * 1.0
    np.copyto(h, y)
    return np.sum(h * x)


def _tail(v):
    return v[1:]


def element_write_through_copy(x):
    y = x * 1.0
    z = y
    z[0] = 5.0
    return np.sum(y * x)


def element_write_through_reshape(x):
    # x (2, 2).
    y = x * 1.0
    flat = y.reshape(-1)
    flat[0] = 7.0
    return np.sum(y * x)


def element_write_through_slice(x):
    y = x * 1.0
    v = y[1:]
    v[0] = 9.0
    return np.sum(y * x)


def element_write_after_view(x):
    y = x * 1.0
    row = y[0:2]
    y[0] = 3.0
    return np.sum(row * x[0:2])


def element_write_into_global(x):
    BUFFER[0] = x[0]
    return np.sum(BUFFER * x)


def element_write_into_global_alias(x):
    b = BUFFER
    b[0] = x[0]
    return np.sum(b * x)


def element_write_through_tuple_alias(x):
    y = x * 1.0
    a, b = y, x
    a[0] = 1.0
    return np.sum(y * b)


def element_write_through_chained_alias(x):
    y = x * 1.0
    a = b = y
    b[0] = 1.0
    return np.sum(a * x)


def element_write_through_callee_view(x):
    y = x * 1.0
    v = _tail(y)
    v[0] = 1.0
    return np.sum(y * x)


# --- float32 inputs: small functions whose gradient must keep the input's dtype -------------


def max_of_array(x):
    return np.max(x) + np.sum(np.min(x, axis=0))


def maximum_of_arrays(x, y):
    return np.sum(np.maximum(x, y) + np.minimum(x, 0.5 * y))


def log2_log10_exp2(x):
    return np.sum(np.log2(x) + np.log10(x) + np.exp2(x))


def float_base_power(x):
    return np.sum(2.0 ** x)


def trace_of_matrix(x):
    return np.trace(x)
