"""Rules at the points where a formula would divide by zero, over empty axes, and the checks
that refuse a rule the compiler would misread.

A. Where the derivative exists (or PyTorch defines one) the gradient is that number, not nan:
   ``std`` of equal entries, ``x ** 0`` at 0, ``arctan2`` at the origin. Every convention in
   the table of docs/rules.md (``doc.CONVENTIONS``) has examples here, run through the
   compiler, compared with the value the table states and, when torch is installed, with
   torch's. At a kink finite differences do not apply; those tests say so and check a one-sided
   property instead. Away from the special points, the rewritten rules still match central
   finite differences.
B. Reductions over an empty axis: no exception and no division by zero in the adjoint; the
   gradient is an empty array of the input's shape.
C. Registration refuses, with the rule's name and file:line, what inlining would misread.
"""

from __future__ import annotations

import math
import operator
import re
import warnings

import numpy as np
import pytest

import s2sgrad
from s2sgrad import rules
from s2sgrad.rules import doc, registry
from s2sgrad.rules.check import RuleError, check_rule
from s2sgrad.testing import check_grads

try:
    import torch
except ImportError:  # the torch comparisons are skipped; the stated values are still checked
    torch = None

RNG = np.random.default_rng(7)
HERE = __file__


def strict_backward(fn, *args):
    """The gradients of scalar ``fn`` at ``args`` (all of them), computing the backward pass
    with every floating-point error and warning raised. The forward pass keeps NumPy's own
    warnings (a mean of an empty slice warns, as NumPy does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, pullback = s2sgrad.vjp(fn, *args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            return pullback(np.ones_like(out) if isinstance(out, np.ndarray) else 1.0)


def torch_grad(fn, *args):
    tensors = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in args]
    fn(*tensors).sum().backward()
    return [t.grad.numpy() for t in tensors]


# --- A. the functions a user writes at the special points ----------------------------------


def std_all(x):
    return np.std(x)


def std_method(x):
    return x.std()


def std_rows(x):
    return np.sum(np.std(x, axis=1))


def std_kept(x):
    return np.sum(np.std(x, axis=0, keepdims=True) * 2.0)


def std_ddof(x):
    return np.sum(x.std(axis=-1, ddof=1))


def var_rows(x):
    return np.sum(np.var(x, axis=1))


def var_rows_ddof(x):
    return np.sum(np.var(x, axis=1, ddof=1))


def std_rows_ddof(x):
    return np.sum(np.std(x, axis=1, ddof=1))


def pow_int0(x):
    return np.sum(x ** 0)


def pow_float0(x):
    return np.sum(x ** 0.0)


def np_power0(x):
    return np.sum(np.power(x, 0.0))


def float_power0(x):
    return np.sum(np.float_power(x, 0))


def builtin_pow0(x):
    return pow(x, 0)


def math_pow0(x):
    return math.pow(x, 0.0)


def pow1(x):
    return np.sum(x ** 1)


def pow2(x):
    return np.sum(x ** 2)


def pow3(x):
    return np.sum(x ** 3.0)


def pow_half(x):
    return np.sum(x ** 0.5)


def scalar_pow0(x):
    return x ** 0


def scalar_pow2(x):
    return x ** 2


def power_both(x, b):
    return np.sum(np.power(x, b))


def power_negative(x, b):
    return np.sum(x ** b)


def arctan2_both(y, x):
    return np.sum(np.arctan2(y, x))


def atan2_both(y, x):
    return math.atan2(y, x)


def hypot_both(y, x):
    return np.sum(np.hypot(y, x))


def sqrt_sum(x):
    return np.sum(np.sqrt(x))


def norm2(x):
    return np.linalg.norm(x)


def abs_sum(x):
    return np.sum(np.abs(x))


def maximum_sum(a, b):
    return np.sum(np.maximum(a, b))


def builtin_max(a, b):
    return max(a, b)


def max_all(x):
    return np.max(x)


def clip_sum(x):
    return np.sum(np.clip(x, 0.0, 1.0))


def prod_all(x):
    return np.prod(x)


def mean_rows(x):
    return np.sum(np.mean(x, axis=0))


T = torch  # examples name torch functions only when it is installed

# key of doc.CONVENTIONS -> (function, arguments, expected gradients, the same in torch or
# None). Values are exact: each is what the table states.
EXAMPLES = {
    "std-constant": [
        (std_all, [np.full(4, 1.5)], [np.zeros(4)],
         T and (lambda x: T.std(x, correction=0))),
        (std_method, [np.full((2, 3), -2.0)], [np.zeros((2, 3))],
         T and (lambda x: T.std(x, correction=0))),
        (std_rows, [np.array([[1.0], [2.0], [-3.0]])], [np.zeros((3, 1))],
         T and (lambda x: T.std(x, dim=1, correction=0))),
        (std_kept, [np.array([[0.5, 1.0]])], [np.zeros((1, 2))],
         T and (lambda x: 2.0 * T.std(x, dim=0, keepdim=True, correction=0))),
        (std_ddof, [np.array([[2.0, 2.0, 2.0], [1.0, 1.0, 1.0]])], [np.zeros((2, 3))],
         T and (lambda x: T.std(x, dim=-1, correction=1))),
        (var_rows, [np.array([[1.0], [2.0]])], [np.zeros((2, 1))],
         T and (lambda x: T.var(x, dim=1, correction=0))),
    ],
    "var-no-dof": [
        (var_rows_ddof, [np.array([[1.0], [2.0]])], [np.full((2, 1), np.nan)],
         T and (lambda x: T.var(x, dim=1, correction=1))),
        (std_rows_ddof, [np.array([[1.0], [2.0]])], [np.full((2, 1), np.nan)],
         T and (lambda x: T.std(x, dim=1, correction=1))),
    ],
    "pow-zero-exponent": [
        (pow_int0, [np.array([0.0, 1.5, -2.0])], [np.zeros(3)], T and (lambda x: x ** 0)),
        (pow_float0, [np.array([0.0, 1.5])], [np.zeros(2)], T and (lambda x: x ** 0.0)),
        (np_power0, [np.array([0.0, 0.0])], [np.zeros(2)],
         T and (lambda x: T.pow(x, 0.0))),
        (float_power0, [np.array([0.0, 3.0])], [np.zeros(2)],
         T and (lambda x: T.float_power(x, 0))),
        (builtin_pow0, [0.0], [0.0], T and (lambda x: x ** 0)),
        (math_pow0, [0.0], [0.0], T and (lambda x: x ** 0.0)),
        (scalar_pow0, [0.0], [0.0], T and (lambda x: x ** 0)),
        (power_both, [np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.0, 0.0])],
         [np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, math.log(2.0)])],
         T and (lambda x, b: x ** b)),
    ],
    "pow-zero-base": [
        (pow1, [np.array([0.0, 2.0])], [np.ones(2)], T and (lambda x: x ** 1)),
        (pow2, [np.array([0.0, 2.0])], [np.array([0.0, 4.0])], T and (lambda x: x ** 2)),
        (pow3, [np.array([0.0])], [np.array([0.0])], T and (lambda x: x ** 3.0)),
        (scalar_pow2, [0.0], [0.0], T and (lambda x: x ** 2)),
        (pow_half, [np.array([0.0, 4.0])], [np.array([np.inf, 0.25])],
         T and (lambda x: x ** 0.5)),
        (power_both, [np.array([0.0, 0.0]), np.array([2.0, 0.5])],
         [np.array([0.0, np.inf]), np.array([0.0, 0.0])], T and (lambda x, b: x ** b)),
    ],
    "pow-zero-base-negative": [
        # torch gives -inf to the exponent; ours is nan (documented), so compare the base only
        (power_negative, [np.array([0.0]), np.array([-1.0])],
         [np.array([-np.inf]), np.array([np.nan])], None),
    ],
    "arctan2-origin": [
        (arctan2_both, [np.array([0.0, 1.0]), np.array([0.0, 1.0])],
         [np.array([0.0, 0.5]), np.array([0.0, -0.5])], T and T.atan2),
        (atan2_both, [0.0, 0.0], [0.0, 0.0], T and T.atan2),
    ],
    "hypot-origin": [
        (hypot_both, [np.array([0.0]), np.array([0.0])],
         [np.array([np.nan]), np.array([np.nan])], T and T.hypot),
    ],
    "sqrt-zero": [
        (sqrt_sum, [np.array([0.0, 4.0])], [np.array([np.inf, 0.25])], T and T.sqrt),
    ],
    "norm-zero": [
        (norm2, [np.zeros(3)], [np.zeros(3)], T and (lambda x: T.linalg.norm(x))),
    ],
    "abs-zero": [
        (abs_sum, [np.array([0.0, -2.0])], [np.array([0.0, -1.0])], T and T.abs),
    ],
    "maximum-tie": [
        (maximum_sum, [np.array([1.0, 2.0]), np.array([1.0, 0.0])],
         [np.array([0.5, 1.0]), np.array([0.5, 0.0])], T and T.maximum),
    ],
    "builtin-max-tie": [
        (builtin_max, [1.5, 1.5], [1.0, 0.0], None),
    ],
    "extremum-tie": [
        (max_all, [np.array([1.0, 3.0, 3.0])], [np.array([0.0, 0.5, 0.5])],
         T and (lambda x: T.amax(x))),
    ],
    "clip-bound": [
        (clip_sum, [np.array([0.0, 1.0, 0.5, -1.0, 2.0])], [np.array([1.0, 1, 1, 0, 0])],
         T and (lambda x: T.clamp(x, 0.0, 1.0))),
    ],
    "prod-zeros": [
        (prod_all, [np.array([2.0, 0.0, 3.0])], [np.array([0.0, 6.0, 0.0])], T and T.prod),
    ],
    "empty-reduction": [
        (mean_rows, [np.zeros((0, 3))], [np.zeros((0, 3))],
         T and (lambda x: T.mean(x, dim=0))),
    ],
}


def test_every_convention_has_examples():
    keys = [c.key for c in doc.CONVENTIONS]
    assert len(set(keys)) == len(keys)
    assert set(keys) == set(EXAMPLES), "a convention without examples, or the reverse"


PARAMS = [pytest.param(key, *example, id=f"{key}-{example[0].__name__}")
          for key, examples in EXAMPLES.items() for example in examples]


@pytest.mark.parametrize("key, fn, args, expected, torch_fn", PARAMS)
def test_convention(key, fn, args, expected, torch_fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inf and nan values come with NumPy's warnings
        with np.errstate(all="ignore"):
            got = s2sgrad.vjp(fn, *args)[1](1.0)
    for g, want, x in zip(got, expected, args):
        assert np.shape(g) == np.shape(x)
        np.testing.assert_array_equal(g, want)  # nan equals nan here; 0.5 is exact
    if torch_fn is not None and torch is not None:
        theirs = torch_grad(torch_fn, *args)
        for k, (mine, t) in enumerate(zip(expected, theirs)):
            if key == "pow-zero-base-negative" and k == 1:
                continue
            np.testing.assert_allclose(np.asarray(mine, dtype=float), t, rtol=1e-12)


def test_the_conventions_table_is_in_the_docs():
    text = doc.DOC.read_text()
    assert doc.conventions() in text
    for c in doc.CONVENTIONS:
        assert c.point in text


@pytest.mark.parametrize("fn, x", [
    (std_all, np.full(5, 0.25)), (std_rows, np.ones((4, 1))), (std_kept, np.full((1, 3), 7.0)),
    (pow_int0, np.zeros(3)), (np_power0, np.zeros(2)), (scalar_pow0, 0.0),
    (builtin_pow0, 0.0), (math_pow0, 0.0),
], ids=lambda v: getattr(v, "__name__", ""))
def test_no_division_by_zero_in_the_backward_pass(fn, x):
    """These used to give nan with divide-by-zero warnings (or ZeroDivisionError)."""
    (g,) = strict_backward(fn, x)
    assert np.all(g == 0.0)


def test_std_of_equal_entries_is_a_subgradient():
    """std is a seminorm: at equal entries std(x + t v) = |t| std(v), a kink where finite
    differences do not apply. The one-sided derivative along v is std(v) >= 0 both ways, so
    a gradient G must satisfy <G, v> <= std(v) and <G, -v> <= std(v): 0 does (PyTorch's
    value), and it is the only choice that does for every v of zero mean and its negation
    symmetric. Check the one-sided derivative numerically too."""
    x = np.full(6, 0.75)
    (g,) = s2sgrad.vjp(std_all, x)[1](1.0)
    for _ in range(5):
        v = RNG.standard_normal(6)
        t = 1e-6
        one_sided = (np.std(x + t * v) - np.std(x)) / t
        np.testing.assert_allclose(one_sided, np.std(v), rtol=1e-6)
        assert np.sum(g * v) <= one_sided and np.sum(g * -v) <= one_sided
    np.testing.assert_array_equal(g, 0.0)


def test_std_of_entries_equal_up_to_rounding_is_finite():
    """[0.1] * 3 has a mean that rounds away from 0.1: std is tiny but not 0, and the
    gradient of the computed function is finite."""
    (g,) = strict_backward(std_all, np.full(3, 0.1))
    assert np.all(np.isfinite(g))


@pytest.mark.parametrize("fn, args", [
    (std_all, [RNG.standard_normal(5)]),
    (std_method, [RNG.standard_normal((3, 4))]),
    (std_rows, [RNG.standard_normal((3, 4))]),
    (std_kept, [RNG.standard_normal((3, 4))]),
    (std_ddof, [RNG.standard_normal((2, 5))]),
    (var_rows, [RNG.standard_normal((3, 4))]),
    (var_rows_ddof, [RNG.standard_normal((3, 4))]),
    (std_rows_ddof, [RNG.standard_normal((3, 4))]),
    (std_all, [np.array([1.0, 1.0, 1.0 + 1e-3])]),  # near equal: smooth, and steep
    (pow2, [RNG.standard_normal(4)]),
    (pow3, [RNG.standard_normal(4)]),
    (pow1, [np.zeros(3)]),  # x ** 1, x ** 2, x ** 3 and x ** 0 are smooth at 0
    (pow2, [np.zeros(3)]),
    (pow3, [np.zeros(3)]),
    (pow_int0, [np.zeros(3)]),
    (pow_half, [RNG.uniform(0.5, 2.0, 4)]),
    (scalar_pow2, [0.0]),
    (scalar_pow2, [1.3]),
    (power_both, [RNG.uniform(0.5, 2.0, 4), RNG.standard_normal(4)]),
    (power_both, [RNG.uniform(0.5, 2.0, 4), np.array([0.0, 1.0, 2.0, -1.5])]),
    (arctan2_both, [RNG.standard_normal(4), RNG.standard_normal(4)]),
    (atan2_both, [0.3, -1.2]),
    (atan2_both, [-0.7, 0.4]),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_rewritten_rules_match_finite_differences(fn, args):
    check_grads(fn, *args)


def test_power_at_zero_exponent_against_finite_differences_in_the_base():
    """x ** 0 is the constant 1 (0 ** 0 == 1 in NumPy), so its derivative at 0 is 0, and the
    central difference agrees: it is exact here."""
    for fn in (pow_int0, pow_float0, np_power0, float_power0):
        check_grads(fn, np.array([0.0, 0.0, 1.5]))
    check_grads(builtin_pow0, 0.0)
    check_grads(math_pow0, 0.0)


def test_arctan2_at_the_origin_is_zero_not_nan():
    """arctan2 is discontinuous at the origin: no finite difference applies. The gradient is
    PyTorch's 0 for both arguments, for arrays and for Python floats (math.atan2 used to raise
    ZeroDivisionError, np.arctan2 to give nan)."""
    gy, gx = strict_backward(arctan2_both, np.zeros(2), np.zeros(2))
    np.testing.assert_array_equal(gy, 0.0)
    np.testing.assert_array_equal(gx, 0.0)
    assert strict_backward(atan2_both, 0.0, 0.0) == (0.0, 0.0)


def test_templates_fold_a_constant_exponent():
    """b - (b != 0) folds to b - 1 for a constant b: the adjoint of x ** 2 stays 2 * x."""
    f = s2sgrad.grad(pow2)
    s2sgrad.gradient(f)(np.ones(3))
    source = f.adjoint_source
    assert "!=" not in source and "** 1" not in source, source


# --- B. reductions over empty axes -----------------------------------------------------------


def mean_fn_axis0(x):
    return np.sum(np.mean(x, axis=0))


def mean_fn_all(x):
    return np.mean(x)


def mean_method_axis1(x):
    return np.sum(x.mean(axis=1))


def mean_method_kept(x):
    return np.sum(x.mean(axis=0, keepdims=True))


def mean_tuple_axes(x):
    return np.sum(np.mean(x, axis=(0, 2)))


def std_fn_axis0(x):
    return np.sum(np.std(x, axis=0))


def std_method_all(x):
    return x.std()


def std_method_ddof(x):
    return np.sum(x.std(axis=0, ddof=1))


def var_fn_axis0(x):
    return np.sum(np.var(x, axis=0))


def var_method_kept(x):
    return np.sum(x.var(axis=1, keepdims=True))


def var_fn_all(x):
    return np.var(x)


def sum_axis0(x):
    return np.sum(np.sum(x, axis=0))


def sum_method_all(x):
    return x.sum()


def prod_axis0(x):
    return np.sum(np.prod(x, axis=0))


def prod_all_empty(x):
    return np.prod(x)


def max_axis1(x):
    return np.sum(np.max(x, axis=1))


def min_method_axis1(x):
    return np.sum(x.min(axis=1))


def cumsum_axis0(x):
    return np.sum(np.cumsum(x, axis=0))


def cumsum_flat(x):
    return np.sum(x.cumsum())


EMPTY = [
    (fn, shape)
    for fn in (mean_fn_axis0, mean_fn_all, mean_method_axis1, mean_method_kept, std_fn_axis0,
               std_method_all, std_method_ddof, var_fn_axis0, var_method_kept, var_fn_all,
               sum_axis0, sum_method_all, prod_axis0, prod_all_empty, cumsum_axis0, cumsum_flat)
    for shape in ((0, 3), (3, 0), (0, 0))
] + [(mean_tuple_axes, (0, 2, 3)), (mean_tuple_axes, (2, 3, 0)),
     (max_axis1, (0, 3)), (min_method_axis1, (0, 3))]


@pytest.mark.parametrize("fn, shape", EMPTY, ids=lambda v: getattr(v, "__name__", str(v)))
def test_reduction_over_an_empty_axis(fn, shape):
    """NumPy's mean of an empty slice is nan (with a warning); the gradient is an empty array
    of the input's shape, computed without an exception or a division by zero."""
    x = np.zeros(shape)
    (g,) = strict_backward(fn, x)
    assert isinstance(g, np.ndarray) and g.shape == shape and g.dtype == x.dtype
    g = s2sgrad.gradient(fn)(x)  # the ordinary path
    assert g.shape == shape


def test_max_over_an_empty_axis_fails_in_numpy_first():
    """np.max has no value over an empty axis: NumPy raises in the forward pass."""
    with pytest.raises(ValueError, match="zero-size array"):
        s2sgrad.gradient(max_axis1)(np.zeros((3, 0)))


@pytest.mark.parametrize("primitive", [np.mean, np.ndarray.mean, np.var, np.ndarray.var,
                                       np.std, np.ndarray.std, np.sum, np.prod],
                         ids=doc.name)
@pytest.mark.parametrize("kwargs", [{"axis": 0}, {"axis": 1}, {}, {"axis": 0, "keepdims": True},
                                    {"axis": (0, 1)}])
def test_reduction_rules_over_empty_axes_as_plain_python(primitive, kwargs):
    """The rule itself, called as a function with the output's cotangent."""
    rule = registry.lookup(primitive).template
    a = np.zeros((0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ans = primitive(a, **kwargs)
    g = np.ones_like(ans) if isinstance(ans, np.ndarray) else 1.0
    with np.errstate(all="raise"):
        got = rule(g, ans, a, **kwargs)
    assert np.shape(got) == a.shape


# --- C. what registration refuses --------------------------------------------------------------


def pair_product(x, y):
    return x * y


def helper(g, x, y):
    return g * y, g * x


def line_of(fn_name):
    """The line of ``def fn_name`` in this file."""
    with open(HERE) as f:
        for k, line in enumerate(f, 1):
            if re.match(rf"\s*def {fn_name}\(", line):
                return k
    raise LookupError(fn_name)


def refused(match):
    return pytest.raises(RuleError, match=match)


def test_a_call_result_in_a_rule_of_two_inputs_is_refused():
    with refused(r"rule product_rule \(.*test_soundness_rules\.py:\d+\) returns "
                 r"helper\(g, x, y\): the result of a call to helper\(\.\.\.\), and how many "
                 r"contributions it holds cannot be known") as info:
        @s2sgrad.vjp_rule(pair_product, shape="elementwise")
        def product_rule(g, ans, x, y):
            return helper(g, x, y)
    assert f"test_soundness_rules.py:{line_of('product_rule') + 1}" in str(info.value)
    assert "return c_x, c_y" in str(info.value)
    assert registry.lookup(pair_product) is None  # nothing was registered


def scaled_cotangent(g, x) -> np.ndarray:
    return g * 2.0


def cotangent_pair(g, x) -> tuple[np.ndarray, np.ndarray]:
    return g, g


def rescale(x, k):
    return 2.0 * x + 0.0 * k


def test_a_helper_annotated_to_return_one_array_counts_as_one():
    """A helper's return annotation says how many values it returns: -> np.ndarray is one
    (rescale's k then gets no contribution); -> tuple[...] cannot be read as one."""

    @s2sgrad.vjp_rule(rescale, shape="elementwise")
    def rescale_rule(g, ans, x, k):
        return scaled_cotangent(g, x)

    def f(x):
        return np.sum(rescale(x, 3.0) * x)

    check_grads(f, RNG.standard_normal(3))
    with refused(r"rule rescale_pair \(.*\) returns cotangent_pair\(g, x\): the result of "
                 r"cotangent_pair\(\.\.\.\), annotated to return a tuple"):
        @s2sgrad.vjp_rule(rescale, shape="elementwise")
        def rescale_pair(g, ans, x, k):
            return cotangent_pair(g, x)


def test_refused_rule_for_numpy_keeps_the_library_rule():
    before = registry.lookup(np.multiply)
    with refused("rule multiply_rule"):
        @s2sgrad.vjp_rule(np.multiply, shape="elementwise")
        def multiply_rule(g, ans, x1, x2):
            return helper(g, x1, x2)
    assert registry.lookup(np.multiply) is before


def test_the_same_helper_unpacked_in_the_rule_works():
    def product(x, y):
        return x * y

    @s2sgrad.vjp_rule(product, shape="elementwise")
    def product_rule(g, ans, x, y):
        g_x, g_y = helper(g, x, y)
        return g_x, g_y

    def f(x, y):
        return np.sum(product(x, y) * x)

    check_grads(f, RNG.standard_normal(3), RNG.standard_normal(3))


def twice(g):
    return 2.0 * g


def test_a_call_result_in_a_rule_of_one_input_is_its_contribution():
    def double(x, axis=None):
        return 2.0 * x

    with refused("rule double_rule .* returns twice"):  # axis could receive one
        @s2sgrad.vjp_rule(double, shape="elementwise")
        def double_rule(g, ans, x, axis=None):
            return twice(g)

    @s2sgrad.vjp_rule(double, shape="elementwise")
    def double_rule_ok(g, ans, x, axis=None):
        return (twice(g),)  # a tuple written in the return: the first parameter's alone

    def f(x):
        return np.sum(double(x) ** 2)

    check_grads(f, RNG.standard_normal(4))

    def halve(x):
        return 0.5 * x

    @s2sgrad.vjp_rule(halve, shape="elementwise")
    def halve_rule(g, ans, x):  # one parameter: one contribution, whatever the call
        return twice(g) / 4.0 + twice(g) * 0.0

    def h(x):
        return np.sum(halve(x) * x)

    check_grads(h, RNG.standard_normal(4))


@pytest.mark.parametrize("source, match", [
    ("def r(g, ans, x, y):\n    pair = (g * y, g * x)\n    return pair",
     r"returns pair, pair is a tuple, which is not written as a tuple in the return"),
    ("def r(g, ans, x, y):\n    return (g * y, g * x) if x is None else (g, g)",
     r"not written as a tuple in the return"),
    ("def r(g, ans, x, y):\n    return np.divmod(g, x)",
     r"the result of a call to np.divmod\(\.\.\.\)"),
    ("def r(g, ans, x, y):\n    return np.where(g)",
     r"the result of a call to np.where\(\.\.\.\)"),
    ("def r(g, ans, x, y):\n    c = tuple([g, g])\n    return c",
     r"the result of a call to tuple\(\.\.\.\)"),
    ("def r(g, ans, x, y):\n    if x is None:\n        return g\n    return g, g",
     r"returns 1 contribution at line \d+ but 2 contributions at line \d+"),
    ("def r(g, ans, x):\n    return",
     r"returns nothing"),
    ("def r(g, ans, x, y):\n    rest = (g,)\n    return (g, *rest)",
     r"unpacks with \* in its return"),
    ("def r(g, ans, x):\n    return g, g",
     r"returns 2 contributions for 1 parameter"),
    ("def r(g, ans, subscripts, *operands):\n    return None, g",
     r"only 1 of its parameters can receive one: \*operands collects the remaining arguments"),
    ("def r(g, ans, x, **options):\n    return g",
     r"takes \*\*options"),
    ("def r(g, ans, x):\n    return np.sum([g * t for t in x])",
     r"uses a list comprehension"),
    ("def r(g, ans, x):\n    f = lambda t: t * g\n    return f(x)",
     r"uses a lambda"),
    ("def r(g, ans, x):\n    return (y := g * 2.0)",
     r"uses an assignment expression"),
    ("def r(g, ans, x):\n    x = 2.0",
     r"has no return"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None)
def test_refused_shapes(tmp_path, source, match):
    """Each rule is written to a file (a rule's source must be readable) and registered."""
    path = tmp_path / "user_rules.py"
    path.write_text("import numpy as np\nimport s2sgrad\n\n\ndef prim(*args):\n"
                    "    return args[0]\n\n\n@s2sgrad.vjp_rule(prim)\n" + source + "\n")
    code = compile(path.read_text(), str(path), "exec")
    with refused(rf"rule r \({re.escape(str(path))}:1[0-9]\) .*{match}"):
        exec(code, {"__name__": "user_rules"})


def test_refused_rule_from_a_closure():
    scale = 3.0

    def tripled(x):
        return scale * x

    with refused(r"rule tripled_rule .* reads scale from an enclosing function"):
        @s2sgrad.vjp_rule(tripled)
        def tripled_rule(g, ans, x):
            return g * scale


def test_refused_rule_without_source_or_def():
    def prim(x):
        return x

    with refused(r"is not a def"):
        s2sgrad.vjp_rule(prim)(lambda g, ans, x: g)
    namespace = {}
    exec("def r(g, ans, x):\n    return g\n", namespace)
    with refused(r"rule r \(<string>:1\) has no readable source"):
        s2sgrad.vjp_rule(prim)(namespace["r"])


def scale_all(x, *factors):
    return x * np.prod(factors)


def test_a_star_args_parameter_for_static_arguments_works():
    """*args collects arguments that get no contribution, as x.transpose(*axes) does."""

    @s2sgrad.vjp_rule(scale_all, shape="elementwise")
    def scale_all_rule(g, ans, x, *factors):
        return g * np.prod(factors)

    def f(x):
        return np.sum(scale_all(x, 2.0, 3.0) * x)

    x = RNG.standard_normal(3)
    np.testing.assert_allclose(s2sgrad.gradient(f)(x), 12.0 * x)
    check_grads(f, x)


def test_an_einsum_rule_with_star_operands_is_refused_with_a_way_out():
    library = registry.lookup(np.einsum)
    with refused(r"rule einsum \(.*\) returns 2 contributions, but only 1 of its parameters "
                 r"can receive one: \*operands .*def einsum\(g, ans, subscripts, a, b\)"):
        @s2sgrad.vjp_rule(np.einsum)
        def einsum(g, ans, subscripts, *operands):
            return None, np.einsum("ij,j->i", g, operands[1])
    assert registry.lookup(np.einsum) is library  # nothing was registered over the library's


def outer_sum(subscripts, a, b):
    return np.einsum(subscripts, a, b)


def test_an_einsum_rule_with_named_operands_works():
    @s2sgrad.vjp_rule(outer_sum)
    def outer_sum_rule(g, ans, subscripts, a, b):
        return None, np.sum(g * b, axis=1), np.sum(g * a[:, None], axis=0)

    def f(a, b):
        return np.sum(outer_sum("i,j->ij", a, b) ** 2)

    check_grads(f, RNG.standard_normal(2), RNG.standard_normal(3))


# --- C. what inlining refuses at the first call ------------------------------------------------


def branchy(x, flag=None):
    return 2.0 * x


def test_a_local_read_before_it_is_assigned_is_refused_at_the_call():
    @s2sgrad.vjp_rule(branchy, shape="elementwise")
    def branchy_rule(g, ans, x, flag=None):
        if flag is None:
            scale = 2.0
        return g * scale

    def ok(x):
        return np.sum(branchy(x))

    def bad(x):
        return np.sum(branchy(x, flag=1))

    np.testing.assert_allclose(s2sgrad.gradient(ok)(np.ones(2)), 2.0)
    with refused(r"rule branchy_rule \(.*test_soundness_rules\.py:\d+\) reads scale before "
                 r"assigning it"):
        s2sgrad.gradient(bad)(np.ones(2))


def shifted(x, k):
    return x + k


def test_a_rule_reading_an_undefined_name_is_refused_at_the_call():
    @s2sgrad.vjp_rule(shifted, shape="elementwise")
    def shifted_rule(g, ans, x, k):
        return g * not_defined_anywhere, None  # noqa: F821

    def f(x):
        return np.sum(shifted(x, 1.0))

    with refused(r"rule shifted_rule .* reads not_defined_anywhere, which is neither"):
        s2sgrad.gradient(f)(np.ones(2))


def gathered(x, *idx):
    return x[list(idx)]


def test_a_star_args_rule_that_would_be_called_is_refused():
    """A test on run-time values makes the call site call the rule; a call cannot pass a
    *args parameter as the rule declares it, so the rule is refused instead."""

    @s2sgrad.vjp_rule(gathered)
    def gathered_rule(g, ans, x, *idx):
        if np.sum(g) > 0:
            out = np.zeros(np.shape(x))
        else:
            out = np.zeros(np.shape(x))
        return out

    def f(x):
        return np.sum(gathered(x, 0, 1))

    with refused(r"rule gathered_rule .* cannot be decided at transform time.*\*idx"):
        s2sgrad.gradient(f)(np.ones(3))


def doubled(x):
    return 2.0 * x


def test_chained_assignment_binds_every_name():
    @s2sgrad.vjp_rule(doubled, shape="elementwise")
    def doubled_rule(g, ans, x):
        a = b = g * 2.0
        return a * 0.5 + b * 0.5

    def f(x):
        return np.sum(doubled(x) * x)

    check_grads(f, RNG.standard_normal(3))


def clipped(x):
    return np.minimum(np.abs(x), 1.0)


def test_builtins_in_a_rule_are_bound_by_name():
    """A rule calling a builtin keeps meaning the builtin where the differentiated function
    has a variable of the same name."""

    @s2sgrad.vjp_rule(clipped, shape="elementwise")
    def clipped_rule(g, ans, x):
        return g * np.sign(x) * (abs(x) < 1.0)

    def f(x):
        abs = 3.0
        return np.sum(clipped(x) * abs)

    x = np.array([0.5, -0.3, 2.0])
    np.testing.assert_allclose(s2sgrad.gradient(f)(x), [3.0, -3.0, 0.0])
    check_grads(f, x)


# --- the library's own rules --------------------------------------------------------------


@pytest.mark.parametrize("template", sorted({r.template for r in rules.LIBRARY_RULES},
                                            key=lambda t: (t.__module__, t.__name__)),
                         ids=lambda t: f"{t.__module__.rsplit('.', 1)[-1]}.{t.__name__}")
def test_library_rules_pass_the_registration_checks(template):
    check_rule(template)


def test_registration_checks_the_library_when_first_inlined():
    from s2sgrad.compiler.templates import template_of
    for rule in rules.LIBRARY_RULES:
        template_of(rule)  # parses and checks each library rule; raises on a bad one


def test_operator_pow_rule_as_plain_python_at_zero():
    rule = registry.lookup(operator.pow).template
    with np.errstate(all="raise"):
        ga, gb = rule(1.0, 1.0, np.array(0.0), 0)
        assert ga == 0.0 and gb == 0.0
        ga, gb = rule(1.0, 1.0, 0.0, 0.0)
        assert ga == 0.0 and gb == 0.0


# --- D. a parameter whose derivative a rule does not give is never taken as constant --------


def power_of(x, p):
    return np.abs(x) ** p


@pytest.fixture
def held_power():
    """power_of's rule differentiates in x only: p is held (its derivative exists, the rule
    does not give it), so a differentiated p is refused, never a gradient of zero."""
    previous = registry.lookup(power_of)

    @s2sgrad.vjp_rule(power_of, shape="elementwise", held=("p",))
    def power_of_rule(g, ans, x, p):
        return g * p * np.abs(x) ** (p - 1.0) * np.sign(x), None

    s2sgrad.jvp_rule(power_of)(power_of_rule)
    yield
    assert previous is None
    registry._RULES.pop(power_of, None)
    registry._JVP.pop(power_of, None)
    registry._changed()


def held_direct(x, p):
    return np.sum(power_of(x, p))


def _exponent(p):
    return p * 2.0


def held_through_helper(x, p):
    return np.sum(power_of(x, _exponent(p)))


def held_in_a_loop(x, p):
    total = 0.0
    for k in range(3):
        total = total + np.sum(power_of(x, p + k))
    return total


@s2sgrad.grad
def held_decorated(x, p):
    return np.sum(power_of(x, p))


def held_from_x(x):
    return np.sum(power_of(x, np.mean(x) + 2.0))  # p depends on the differentiated x


HELD = [(held_direct, (1,)), (held_through_helper, (1,)), (held_in_a_loop, (1,)),
        (held_decorated, (1,)), (held_direct, (0, 1))]


@pytest.mark.parametrize("fn, wrt", HELD, ids=lambda v: getattr(v, "__name__", str(v)))
def test_a_held_parameter_that_is_differentiated_is_refused(held_power, fn, wrt):
    x = np.abs(RNG.standard_normal(3)) + 0.5
    with pytest.raises(s2sgrad.TransformError, match="not differentiated with respect to its "
                       "argument 'p'") as info:
        s2sgrad.gradient(fn, wrt)(x, 1.7)
    assert HERE in str(info.value)
    with pytest.raises(s2sgrad.TransformError, match="argument 'p'"):
        s2sgrad.jvp(fn, (x, 1.7), (None, 1.0))


def test_a_held_parameter_computed_from_the_differentiated_input_is_refused(held_power):
    x = np.abs(RNG.standard_normal(3)) + 0.5
    with pytest.raises(s2sgrad.TransformError, match="argument 'p'"):
        s2sgrad.gradient(held_from_x)(x)
    t = s2sgrad.tensor(x, requires_grad=True)
    with pytest.raises(s2sgrad.TransformError, match="argument 'p'"):
        s2sgrad.grad(held_from_x)(t).backward()


@pytest.mark.parametrize("fn", [held_direct, held_through_helper, held_in_a_loop,
                                held_decorated], ids=lambda f: f.__name__)
def test_a_held_parameter_that_is_not_differentiated_is_free(held_power, fn):
    x = np.abs(RNG.standard_normal(3)) + 0.5
    check_grads(fn, x, 1.7, wrt=0, modes=("rev", "fwd"))


def test_held_names_a_parameter_of_the_rule():
    with pytest.raises(TypeError, match="has no parameter 'q'"):
        @s2sgrad.vjp_rule(power_of, held=("q",))
        def power_of_rule(g, ans, x, p):
            return g * p * np.abs(x) ** (p - 1.0) * np.sign(x), None
    assert registry.lookup(power_of) is None


def scaled_by(x, factor=1.0):
    return x * factor


@pytest.fixture
def fixed_factor():
    """scaled_by's rule returns one contribution: factor is a fixed setting."""

    @s2sgrad.vjp_rule(scaled_by, shape="elementwise")
    def scaled_by_rule(g, ans, x, factor=1.0):
        return g * factor

    s2sgrad.jvp_rule(scaled_by)(scaled_by_rule)
    yield
    registry._RULES.pop(scaled_by, None)
    registry._JVP.pop(scaled_by, None)
    registry._changed()


def factor_direct(x, s):
    return np.sum(scaled_by(x, factor=s * 2.0))


def _factor_of(s):
    return s + 1.0


def factor_through_helper(x, s):
    return np.sum(scaled_by(x, _factor_of(s)))


def factor_in_a_loop(x, s):
    total = 0.0
    for k in range(2):
        total = total + np.sum(scaled_by(x, factor=s * k))
    return total


@s2sgrad.grad
def factor_decorated(x, s):
    return np.sum(scaled_by(x, factor=s))


def fill_from_input(x, s):
    return np.sum(np.nan_to_num(x, nan=s) ** 2)  # a library rule: nan is differentiated


@pytest.mark.parametrize("fn", [factor_direct, factor_through_helper, factor_in_a_loop,
                                factor_decorated], ids=lambda f: f.__name__)
def test_a_fixed_setting_that_is_differentiated_is_refused(fixed_factor, fn):
    """A differentiated value in a parameter the rule returns nothing for is refused, in
    both modes, never given a gradient of zero; the other arguments still differentiate."""
    x = RNG.standard_normal(3)
    with pytest.raises(s2sgrad.TransformError, match="takes 'factor' as a fixed setting") \
            as info:
        s2sgrad.gradient(fn, (0, 1))(x, 0.5)
    assert HERE in str(info.value)
    with pytest.raises(s2sgrad.TransformError, match="'factor'"):
        s2sgrad.jvp(fn, (x, 0.5), (None, 1.0))
    check_grads(fn, x, 0.5, wrt=0, modes=("rev", "fwd"))


def test_a_library_setting_with_a_rule_of_its_own_is_differentiated():
    x = np.array([0.5, np.nan, -1.2])
    check_grads(fill_from_input, x, 0.3, modes=("rev", "fwd"))


def scaled_by_all(x, *weights):
    return x * sum(weights)


@pytest.fixture
def starred_weights():
    """scaled_by_all's rule returns x's contribution only: the *weights are fixed settings."""

    @s2sgrad.vjp_rule(scaled_by_all, shape="elementwise")
    def scaled_by_all_rule(g, ans, x, *weights):
        return g * sum(weights)

    yield
    registry._RULES.pop(scaled_by_all, None)
    registry._changed()


def weights_direct(x, w):
    return np.sum(scaled_by_all(x, w, 2.0))


def weights_in_a_loop(x, w):
    total = 0.0
    for k in range(2):
        total = total + np.sum(scaled_by_all(x, 1.0, w * k))
    return total


@pytest.mark.parametrize("fn", [weights_direct, weights_in_a_loop], ids=lambda f: f.__name__)
def test_a_differentiated_value_in_star_settings_is_refused(starred_weights, fn):
    """The atoms a *args setting collects are checked one by one: a differentiated one is
    refused, never given a gradient of zero."""
    x = RNG.standard_normal(3)
    with pytest.raises(s2sgrad.TransformError, match="takes 'weights' as a fixed setting"):
        s2sgrad.gradient(fn, (0, 1))(x, 0.5)
    check_grads(fn, x, 0.5, wrt=0)
