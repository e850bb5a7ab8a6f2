"""Refused constructs: a TransformError at transform time, pointing at the construct.

Each case names the token the caret must sit under on the line marked `# <- refused`, and
words the message must contain. An error must also say what to do instead (its hint).
"""

import traceback

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import TransformError
from tests.cases import refused
from tests.located import assert_points_at, marked_line

X = np.linspace(0.5, 1.5, 3)

CASES = [
    ("uses_try", "except", "more than one except clause"),
    ("uses_with", "open(", "context manager open(...) is not known"),
    ("uses_yield", "yield", "generators"),
    ("uses_global", "global", "'global'"),
    ("uses_del", "y", "is read after `del y`"),
    ("uses_exec", "eval(", "eval() is not supported"),
    ("uses_attribute_store", "obj.value", "assigning to an attribute"),
    ("write_into_argument", "x[0]", "assignment to an element of 'x', the caller's array"),
    ("view_read_after_write", "row * x[1]", "'row' shares memory with an array updated in place"),
    ("uses_import", "import", "an import inside a block"),
    ("passes_lambda", "f)", "the nested function 'f' is used other than by calling it"),
    ("calls_a_library_with_a_closure", "rhs,",
     "the nested function 'rhs' is used other than by calling it"),
    ("uses_starred", "*x[:2]", "not known when compiling"),
    ("no_rule", "np.ediff1d(x)", "no derivative rule for numpy.ediff1d"),
    ("no_rule_method", "np.unwrap(x)", "no derivative rule for numpy.unwrap"),
    ("unknown_keyword", "np.cumsum(x, initial=1.0)", "keyword argument 'initial'"),
    ("uses_undefined", "undefined_name", "'undefined_name' is not defined"),
    ("inplace_on_alias", "h += y", "memory that the argument 'x' shares"),
    ("inplace_on_argument", "x *= y", "in-place update of the argument 'x'"),
    ("return_in_loop", "return", "'return' inside a loop is not supported yet"),
    ("norm_of_other_order", "np.linalg.norm(np.outer(x, x), ord=2)",
     "differentiated where the call names the matrix's axes"),
    ("scatter_maximum_at", "np.maximum.at",
     "only np.add.at and np.subtract.at are differentiated"),
]


def _function(name):
    fn = getattr(refused, name)
    return fn


def _call(name):
    fn = _function(name)
    args = {"uses_attribute_store": (X, object()),
            "inplace_on_alias": (X, X), "inplace_on_argument": (X, X),
            "return_in_loop": (1.5,),
            "view_read_after_write": (np.ones((2, 3)),),
            "scatter_maximum_at": (X, np.array([0, 0, 1, 2])[:len(X)])}.get(name, (X,))
    return s2sgrad.gradient(fn)(*args)


@pytest.mark.parametrize("name,token,words", CASES, ids=[c[0] for c in CASES])
def test_refused_with_location(name, token, words):
    with pytest.raises(TransformError) as info:
        _call(name)
    assert words in info.value.reason
    assert_points_at(info.value, _function(name), token, refused.__file__)


def test_traceback_shows_line_and_caret():
    with pytest.raises(TransformError) as info:
        _call("uses_with")
    text = "".join(traceback.format_exception_only(info.value))
    _, line = marked_line(refused.uses_with)
    assert line.strip() in text
    caret_line = text.splitlines()[text.splitlines().index(next(
        t for t in text.splitlines() if line.strip() in t)) + 1]
    assert caret_line.strip() == "^"


def test_nonlocal_in_closure():
    inner = refused.uses_nonlocal_factory()
    with pytest.raises(TransformError, match="'nonlocal'"):
        s2sgrad.gradient(inner)(X)


def test_async_function():
    with pytest.raises(TransformError, match="async functions"):
        s2sgrad.gradient(refused.uses_async)(X)


def test_no_rule_is_fine_on_constants():
    s2sgrad.testing.check_grads(refused.no_rule_ok_when_inactive, X)


def test_builtin_without_source():
    # a library function without a rule (one with a rule is differentiated by it)
    with pytest.raises(TransformError, match="not a Python function with source"):
        s2sgrad.gradient(np.spacing)(X)


def test_function_without_source_file():
    namespace = {}
    exec("def f(x):\n    return x * 2\n", namespace)
    with pytest.raises(TransformError, match="cannot read the source") as info:
        s2sgrad.gradient(namespace["f"])(1.0)
    assert "define the function in a .py file" in info.value.hint


def test_a_lambda_without_source_is_refused():
    f = eval("lambda x: x * 2")  # no file holds its source
    with pytest.raises(TransformError, match="source"):
        s2sgrad.gradient(f)(1.0)


@pytest.mark.parametrize("value", [3, np.arange(3), np.array([True, False])],
                         ids=["int", "int-array", "bool-array"])
def test_integer_inputs_are_refused(value):
    def square(x):
        return np.sum(x * x)
    with pytest.raises(TypeError, match="only floating-point inputs can be differentiated"):
        s2sgrad.gradient(square)(value)


def test_nonscalar_output_needs_vjp():
    def double(x):
        return x * 2.0
    with pytest.raises(TypeError, match=r"must return a scalar.*shape \(3,\)"):
        s2sgrad.gradient(double)(X)


def test_wrt_out_of_range():
    def add(x, y):
        return np.sum(x + y)
    with pytest.raises(ValueError, match="wrt=2 is out of range"):
        s2sgrad.gradient(add, wrt=2)(X, X)


def test_vjp_seed_shape_mismatch():
    def double(x):
        return x * 2.0
    _, pullback = s2sgrad.vjp(double, X)
    with pytest.raises(ValueError, match="Mismatch in shape"):
        pullback(np.ones(4))


def test_in_place_update_of_a_fresh_array_is_differentiated():
    s2sgrad.testing.check_grads(refused.inplace_on_fresh_array_is_fine, X, X + 1.0)


def test_in_place_update_of_a_python_float_is_fine():
    def accumulate(a, b):
        c = a
        c += b
        return c * a
    assert s2sgrad.gradient(accumulate)(2.0, 3.0) == 2 * 2.0 + 3.0
