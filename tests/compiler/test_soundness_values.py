"""Soundness: the compiler differentiates only what it has identified.

Each family of values whose meaning the compiler once guessed (decorated functions, gradients
of gradients, functions passed as values, tuple and list operators, objects that only look
like indexing, values whose kind changes along the way, views, dtypes, complex numbers) is
tested on the variants users write: each is either right (its compiled forward equals the
plain call and its gradient matches central finite differences in random directions), or
refused at transform time with the file, line and column of the user's code and a hint.
"""

import functools
import math

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import TransformError
from tests.cases import soundness as cases
from tests.located import assert_points_at

rng = np.random.default_rng(7)
X = rng.standard_normal(4)
M = rng.standard_normal((3, 4))


def check(fn, *args, wrt=None):
    """The compiled forward computes the plain call's value, and the gradient with respect
    to every float argument (or those named) matches finite differences."""
    expected = fn(*args)
    positions = [i for i, a in enumerate(args) if isinstance(a, float) or (
        isinstance(a, np.ndarray) and a.dtype.kind == "f")] if wrt is None else wrt
    for i in positions:
        value, _ = s2sgrad.value_and_grad(fn, i)(*args)
        assert np.allclose(value, expected, rtol=1e-12, atol=1e-12), (value, expected)
    s2sgrad.testing.check_grads(fn, *args, wrt=positions)


def refused(fn, args, token, words, wrt=0):
    """The gradient is refused at transform time, pointing at the marked line of the
    user's code (never at s2sgrad's), with a message and a hint."""
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn, wrt)(*args)
    assert words in str(info.value), str(info.value)
    assert_points_at(info.value, fn, token, cases.__file__)


# --- decorators -------------------------------------------------------------------------


def test_decorator_code_is_differentiated():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(s2sgrad.gradient(cases.penalised)(x), [3.0, 6.0])
    check(cases.penalised, X)


@pytest.mark.parametrize("fn", [cases.scaled_loss, cases.doubled_input, cases.two_decorators,
                                cases.calls_decorated, cases.twice_cubed],
                         ids=lambda f: getattr(f, "__name__", type(f).__name__))
def test_decorated_functions(fn):
    check(fn, X)


def test_star_args_wrapper_with_keywords():
    def loss(x):
        return cases.scaled_loss(x, power=3.0) + cases.scaled_loss(x)
    check(loss, X)
    check(lambda_free_call, X)


def lambda_free_call(x):
    return cases.scaled_loss(x, 4.0)


def test_class_based_decorator_uses_its_own_code():
    g = s2sgrad.gradient(cases.twice_cubed)(X)
    np.testing.assert_allclose(g, 2.0 * 3 * X ** 2 + 1.0)


def test_lru_cache_is_transparent():
    check(cases.calls_cached, 0.7)
    check(cases.cached_cube, 0.3)


def test_static_and_class_methods():
    check(cases.Ops().apply, X)


def test_grad_over_decorated_function_on_tensors():
    t = s2sgrad.tensor(np.array([1.0, 2.0]), requires_grad=True)
    cases.grad_over_decorated(t).backward()
    np.testing.assert_allclose(t.grad.data if hasattr(t.grad, "data") else t.grad, [3.0, 6.0])


# --- gradients of gradients -------------------------------------------------------------


@pytest.mark.parametrize("transform, expected", [
    (lambda f: s2sgrad.gradient(s2sgrad.gradient(f)), lambda x: 6.0 * x),
    (lambda f: s2sgrad.value_and_grad(s2sgrad.gradient(f)), lambda x: (3.0 * x ** 2, 6.0 * x)),
    (lambda f: s2sgrad.gradient(s2sgrad.grad(s2sgrad.gradient(f))), lambda x: 6.0 * x),
    (lambda f: s2sgrad.gradient(s2sgrad.gradient(s2sgrad.gradient(f))), lambda x: 6.0),
], ids=["grad-grad", "value_and_grad-grad", "grad-Function-grad", "grad-grad-grad"])
def test_gradient_of_gradient(transform, expected):
    """A gradient of a gradient is the second derivative (higher.py), not a refusal."""
    got = transform(cases.cube)(1.5)
    np.testing.assert_allclose(got, expected(1.5), rtol=1e-12)
    check(s2sgrad.gradient(cases.cube), 1.5)


def test_gradient_of_a_tuple_valued_derivative_is_a_type_error():
    with pytest.raises(TypeError, match="must return a"):
        s2sgrad.gradient(s2sgrad.value_and_grad(cases.cube))(1.5)


def test_vjp_pullback_is_not_differentiated():
    _, pullback = s2sgrad.vjp(cases.cube, 1.0)
    with pytest.raises(TransformError, match="higher order"):
        s2sgrad.gradient(lambda_pullback(pullback))(1.0)


def lambda_pullback(pullback):
    def through(s):
        return pullback(s)[0]
    return through


@pytest.mark.parametrize("fn", [cases.uses_gradient_inside, cases.uses_global_gradient])
def test_gradient_inside(fn):
    """slope * x with slope = 3 x^2: the derivative 9 x^2 needs the derivative of the
    gradient inside."""
    np.testing.assert_allclose(s2sgrad.gradient(fn)(1.5), 9.0 * 1.5 ** 2, rtol=1e-12)
    check(fn, 1.5)


# --- function values --------------------------------------------------------------------


def test_function_made_from_a_differentiated_value_is_followed():
    """A factory's closure over a differentiated value: the gradient flows back through
    what it closes over."""
    check(cases.calls_made_function, 2.0)


@pytest.mark.parametrize("fn", [np.tanh, np.square, np.sin, cases.softplus, math.sin,
                                s2sgrad.grad(cases.softplus)],
                         ids=["tanh", "square", "sin", "user", "math.sin", "grad-function"])
def test_function_passed_as_argument(fn):
    a = 0.7 if fn is math.sin else X
    check(cases.apply, fn, a, wrt=[1])


def test_specialised_on_the_function_passed():
    # the same code with another function is another compiled pair
    g1 = s2sgrad.gradient(cases.apply, 1)(np.tanh, X)
    g2 = s2sgrad.gradient(cases.apply, 1)(np.sin, X)
    np.testing.assert_allclose(g1, np.tanh(X) + X * (1 - np.tanh(X) ** 2))
    np.testing.assert_allclose(g2, np.sin(X) + X * np.cos(X))


@pytest.mark.parametrize("name", ["tanh", "softplus", "sin"])
def test_dict_of_activations_by_name(name):
    check(cases.activation_by_name, X, name, wrt=[0])


def test_dict_of_functions_passed_in():
    acts = {"a": np.cos, "b": cases.softplus}
    check(cases.activation_from_dict, X, acts, "a", wrt=[0])
    check(cases.activation_from_dict, X, acts, "b", wrt=[0])


def test_function_attribute_of_an_object():
    check(cases.Layer(np.tanh).forward, X)
    check(cases.Layer(cases.softplus).forward, X)


def test_swapped_function_attribute_recompiles():
    g = s2sgrad.gradient(cases.reads_global_attribute)
    np.testing.assert_allclose(g(X), 1 - np.tanh(X) ** 2)
    cases.SETTINGS.act = np.sin
    try:
        np.testing.assert_allclose(g(X), np.cos(X))
    finally:
        cases.SETTINGS.act = np.tanh


def test_replaced_method_recompiles():
    s = cases.Scaler(2.0)
    np.testing.assert_allclose(s2sgrad.gradient(cases.calls_method, 1)(s, X), np.full(4, 2.0))
    original = cases.Scaler.method
    cases.Scaler.method = lambda_free_method
    try:
        np.testing.assert_allclose(s2sgrad.gradient(cases.calls_method, 1)(s, X), 2 * X)
    finally:
        cases.Scaler.method = original


def lambda_free_method(self, x):
    return x * x


def test_partial_is_refused():
    refused(cases.apply_partial, (functools.partial(np.power, 2.0), X), "fn(x)",
            "functools.partial", wrt=1)


def test_operators_of_user_classes():
    check(cases.user_operators, X, cases.Poly(1.5), wrt=[0])


# --- container operators ----------------------------------------------------------------


@pytest.mark.parametrize("fn", [cases.tuple_concat, cases.list_concat, cases.list_repeat_left,
                                cases.concat_of_items])
def test_concatenation_and_repetition(fn):
    check(fn, X, X[::-1] * 0.5)


def test_tuple_repetition():
    np.testing.assert_allclose(s2sgrad.gradient(cases.tuple_repeat)(X), 6 * X)
    check(cases.tuple_repeat, X)


def test_tuple_concatenation_gradient():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_allclose(s2sgrad.gradient(cases.tuple_concat)(a, b), 4 * a)


def test_concatenation_in_a_loop():
    check(cases.concat_in_loop, X)


def test_extend_is_refused():
    refused(cases.extends_list, (X, X), "xs.extend([b])", "changes the list in place")


def test_sum_of_lists_is_refused():
    refused(cases.sums_lists, (X, X), "sum([[a], [b]], [])", "concatenates")


# --- index tricks -----------------------------------------------------------------------


@pytest.mark.parametrize("fn", [cases.uses_r_, cases.uses_c_])
def test_index_tricks_are_concatenations(fn):
    check(fn, X, X)


def test_index_trick_directives_are_refused():
    refused(cases.uses_r_directive, (X, X), '"0,2"', "a directive")


def test_index_expressions_as_indices():
    check(cases.uses_s_, X)


def test_user_getitem_is_differentiated():
    check(cases.uses_getitem, X, cases.Table(1.5), wrt=[0])


# --- values whose kind changes ----------------------------------------------------------


@pytest.mark.parametrize("fn", [cases.none_then_array, cases.zero_then_array,
                                cases.none_then_list, cases.float_then_array])
def test_kinds_joined_across_iterations(fn):
    check(fn, X)
    check(fn, M)


def test_none_then_array_gradient():
    np.testing.assert_allclose(s2sgrad.gradient(cases.none_then_array)(X), 1.75 * np.cos(X))


@pytest.mark.parametrize("flag", [True, False])
def test_none_or_array_in_a_branch(flag):
    check(cases.none_or_array_in_branch, X, flag, wrt=[0])


# --- views, dtypes, complex, matrices ---------------------------------------------------


@pytest.mark.parametrize("fn,token", [(cases.writes_through_fliplr, "z[0, 0]"),
                                      (cases.writes_through_rot90, "z[0, 0]"),
                                      (cases.writes_through_split, "a[0]")])
def test_writes_through_views_are_refused(fn, token):
    arg = M[:2, :2].copy() if fn is not cases.writes_through_split else X
    # (np.split's pieces are items of its list: an update of one is refused as such)
    with pytest.raises(TransformError, match="shares|memory|put into a tuple, list") as info:
        s2sgrad.gradient(fn)(arg)
    assert info.value.filename == cases.__file__
    assert info.value.hint


@pytest.mark.parametrize("fn", [cases.writes_through_flip, cases.writes_through_moveaxis,
                                cases.writes_through_reshape_method])
def test_writes_through_views_with_rules_are_refused(fn):
    with pytest.raises(TransformError, match="shares memory|memory that the argument") as info:
        s2sgrad.gradient(fn)(M[:2, :2].copy())
    assert info.value.filename == cases.__file__ and info.value.hint


def test_writes_into_fresh_arrays_are_differentiated():
    check(cases.writes_into_fresh, X)


def test_cast_to_the_dtype_of_an_integer_array():
    np.testing.assert_allclose(s2sgrad.gradient(cases.cast_to_dtype_of)(X, np.array([1])),
                               X.astype(int))
    check(cases.cast_to_dtype_of, X, np.array([1.0]), wrt=[0])


@pytest.mark.parametrize("dtype", [np.float64, float, "float64", np.dtype("float32")])
def test_cast_to_a_float_dtype_parameter(dtype):
    g = s2sgrad.gradient(cases.cast_to_dtype_param)(X, dtype)
    np.testing.assert_allclose(g, 2 * X.astype(dtype), rtol=1e-6)


@pytest.mark.parametrize("dtype", [int, np.int32, "int64", bool])
def test_cast_to_an_integer_dtype_parameter(dtype):
    np.testing.assert_allclose(s2sgrad.gradient(cases.cast_to_dtype_param)(X, dtype),
                               X.astype(dtype))


@pytest.mark.parametrize("dtype", [np.int64, np.float32, float])
def test_cast_to_a_dtype_an_object_holds(dtype):
    # the compiled code is specialised on what the object's attributes hold: the dtype too
    g = s2sgrad.gradient(cases.cast_to_held_dtype)(X, cases.Holder(dtype))
    np.testing.assert_allclose(g, s2sgrad.gradient(cases.cast_to_dtype_param)(X, dtype),
                               rtol=1e-12)


def test_cast_to_an_unknown_dtype_is_refused():
    refused(cases.cast_to_unknown_dtype, (X, cases.ComputedHolder(np.int64)),
            "x.astype(holder.dtype)", "dtype that is not known")


def test_complex_intermediates_of_real_inputs_have_real_gradients():
    # |x + iy| = hypot(x, y)
    grads = s2sgrad.gradient(cases.complex_intermediate, wrt=(0, 1))(3.0, 4.0)
    assert all(type(g) is not complex and np.isrealobj(g) for g in grads)
    np.testing.assert_allclose(grads, (0.6, 0.8))


def test_a_rule_for_real_numbers_on_a_complex_value_is_refused():
    # np.maximum orders complex numbers by their real parts first: its rule is for reals
    refused(cases.complex_maximum, (X,), "np.maximum(z, 0.5)", "holds for real numbers only")


@pytest.mark.parametrize("value", [np.matrix(np.eye(2)), np.ma.masked_array(np.ones(2))],
                         ids=["matrix", "masked"])
def test_array_subclasses_with_other_operators_are_refused(value):
    def square(x):
        return np.sum(x * x)
    with pytest.raises(TypeError, match="not supported"):
        s2sgrad.gradient(square)(value)


def test_builtin_sum_of_an_array():
    check(cases.builtin_sum_of_array, X)
    check(cases.builtin_sum_of_matrix, M)


# --- more function values, list updates, rules registered later, edited files -----------


@pytest.mark.parametrize("fn,args,token", [
    (cases.loops_over_functions, (X,), "fn(x)"),
    (cases.picks_function_by_flag, (X, True), "fn(x)"),
])
def test_functions_chosen_at_run_time_are_refused(fn, args, token):
    refused(fn, args, token, "not known when the code is compiled")


@pytest.mark.parametrize("act", [np.tanh, cases.softplus])
def test_callable_object_passed_in(act):
    check(cases.calls_object_argument, X, cases.Affine(1.5, act), wrt=[0])
    check(cases.Affine(0.5, act), X)


def test_list_grown_in_place():
    check(cases.grows_list_in_place, X)


def test_list_update_seen_through_an_alias_is_refused():
    refused(cases.list_alias_sees_update, (X, X), "np.stack(ys)", "shares memory")


def test_list_argument_updated_in_place_is_refused():
    refused(cases.updates_list_argument, ([X], X), "xs += [b]", "caller's list", wrt=1)


def test_rule_registered_after_a_compile_is_used():
    g = s2sgrad.gradient(cases.uses_snap)
    np.testing.assert_allclose(g(X), cases.snap(X))  # round: no gradient through it

    def straight_through(g, ans, x):
        return g

    registry = s2sgrad.rules.registry
    before = registry.lookup(cases.snap)
    s2sgrad.vjp_rule(cases.snap)(straight_through)
    try:
        np.testing.assert_allclose(g(X), cases.snap(X) + X)
    finally:
        registry._RULES.pop(registry._key(cases.snap), None)
        registry._changed()
    assert before is None
    np.testing.assert_allclose(g(X), cases.snap(X))


def test_source_edited_after_import_is_refused(tmp_path, monkeypatch):
    import importlib
    import sys
    path = tmp_path / "edited_module.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(x * 2.0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_module")
    try:
        path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(x * 3.0)\n")
        with pytest.raises(TransformError, match="source file has changed") as info:
            s2sgrad.gradient(module.f)(X)
        assert info.value.filename == str(path) and info.value.hint
        importlib.reload(module)
        np.testing.assert_allclose(s2sgrad.gradient(module.f)(X), np.full(4, 3.0))
    finally:
        sys.modules.pop("edited_module", None)


def test_families_on_tensors():
    a = s2sgrad.tensor(X.copy(), requires_grad=True)
    b = s2sgrad.tensor(X[::-1] * 0.5, requires_grad=True)
    s2sgrad.grad(cases.tuple_concat)(a, b).backward()
    ga, gb = s2sgrad.gradient(cases.tuple_concat, (0, 1))(X, X[::-1] * 0.5)
    np.testing.assert_allclose(a.grad.data if hasattr(a.grad, "data") else a.grad, ga)
    np.testing.assert_allclose(b.grad.data if hasattr(b.grad, "data") else b.grad, gb)
    t = s2sgrad.tensor(X.copy(), requires_grad=True)
    s2sgrad.grad(cases.apply)(np.tanh, t).backward()
    expected = s2sgrad.gradient(cases.apply, 1)(np.tanh, X)
    np.testing.assert_allclose(t.grad.data if hasattr(t.grad, "data") else t.grad, expected)


def test_function_as_a_default_argument():
    check(cases.uses_default_function, X)
    s2sgrad.testing.check_grads(cases.layer_with_default, X, wrt=0)


# --- arguments changed before they are passed on; calls that may mutate ----------------


def test_kwargs_changed_before_passing_on_are_refused():
    refused(cases.scaled_sum, (X,), "kwargs)", "passes its own **kwargs on unchanged")
    refused(cases.updates_kwargs, (X,), "kw)", "passes its own **kwargs on unchanged")
    refused(cases.sets_kwargs_item, (X,), "kw)", "passes its own **kwargs on unchanged")


def test_kwargs_passed_on_unchanged():
    value, g = s2sgrad.value_and_grad(cases.passes_kwargs_on)(X, s=2.0)
    assert value == cases.passes_kwargs_on(X, s=2.0)
    np.testing.assert_allclose(g, np.full(4, 2.0))


@pytest.mark.parametrize("fn,token", [(cases.sorts_in_place, "y.sort()"),
                                      (cases.copies_into, "np.copyto(y, 3.0)"),
                                      (cases.appends_in_expression, "out.append("),
                                      (cases.reverses_unbound, "list.reverse(lst)")])
def test_calls_that_may_change_a_differentiated_value_are_refused(fn, token):
    words = "append() changes the list" if "append" in token else "may change its arguments"
    refused(fn, (X,), token, words)


@pytest.mark.parametrize("fn", [cases.array_times_list, cases.dot_with_list])
def test_lists_where_rules_take_arrays_are_converted_as_numpy_does(fn):
    check(fn, X)


def test_asarray_of_a_list_has_the_array_rank():
    check(cases.asarray_of_list, X, [1.0, 2.0, 3.0], wrt=[0])


@pytest.mark.parametrize("fn,args", [(cases.loops_over_argument, (X, {1.0, 2.0})),
                                     (cases.loops_over_argument, (X, cases.Schedule([1., 2.])))],
                         ids=["set", "object-with-iter"])
def test_loops_over_what_is_not_a_sequence_are_refused(fn, args):
    refused(fn, args, "items", "a loop over")


def test_loops_over_sequences_and_dicts():
    check(cases.loops_over_argument, X, [1.0, 2.0], wrt=[0])
    check(cases.loops_over_argument, X, (1.0, 2.0), wrt=[0])
    check(cases.loops_over_argument, X, np.array([1.0, 2.0]), wrt=[0])
    check(cases.loops_over_dict, X)  # its keys, 0 and 1, known when compiling
    check(cases.loops_over_argument, X, {3.0: "c", 2.0: "b"}, wrt=[0])  # keys when it runs


def test_return_of_a_nested_def_inside_a_loop():
    check(cases.nested_def_in_loop, X)


def test_changed_defaults_recompile():
    def scaled(x, k=2.0):
        return np.sum(x) * k

    def loss(x):
        return scaled(x)

    f = s2sgrad.value_and_grad(loss)
    assert f(X)[0] == np.sum(X) * 2.0
    scaled.__defaults__ = (11.0,)
    value, g = f(X)
    assert value == np.sum(X) * 11.0
    np.testing.assert_allclose(g, np.full(4, 11.0))
    scaled.__defaults__ = (3.0,)
    np.testing.assert_allclose(s2sgrad.gradient(scaled)(X), np.full(4, 3.0))


def test_strings_specialise_only_code_that_reads_their_value():
    spec = s2sgrad.compiler.function.specialiser(cases.activation_by_name)
    for name in ("tanh", "sin", "tanh", "softplus"):
        check(cases.activation_by_name, X, name, wrt=[0])
    assert sum(1 for c in spec.cache.values() if c is not s2sgrad.compiler.function.BY_STRING_VALUE) == 3

    def labelled(x, label):
        return np.sum(x ** 2) if label != "skip" else 0.0 * np.sum(x)
    for k in range(5):
        np.testing.assert_allclose(s2sgrad.gradient(labelled)(X, f"step {k}"), 2 * X)
    np.testing.assert_allclose(s2sgrad.gradient(labelled)(X, "skip"), 0 * X)
    assert len(s2sgrad.compiler.function.specialiser(labelled).cache) == 1  # one pair for every label


# --- output arrays by position, writes into integer arrays, conventions -----------------


@pytest.mark.parametrize("fn,token", [(cases.clips_into_itself, "y)"),
                                      (cases.sums_into, "o)")])
def test_output_arrays_by_position_are_refused(fn, token):
    refused(fn, (X,), token, "output array passed by position")


def test_ufunc_output_by_position_is_an_element_write():
    # np.floor(y, y) writes into y, as y[...] = np.floor(y) does
    check(cases.floors_into_itself, np.array([0.2, -0.7, 1.2, 0.4]))


def test_output_array_by_position_on_tensors():
    y = s2sgrad.tensor(X.copy(), requires_grad=True) * 2.0
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        np.clip(y, 0.0, 1.0, y)


@pytest.mark.parametrize("fn", [cases.writes_into_int_zeros, cases.writes_into_arange,
                                cases.adds_into_bool, cases.writes_into_float_zeros])
def test_writes_into_integer_arrays_truncate(fn):
    x = np.array([0.7, -1.3, 2.2, 1.6])  # away from integers: the truncation is flat there
    check(fn, x)


def test_write_into_a_copy_of_an_integer_argument():
    x = np.array([0.7, -1.3, 2.2, 1.6])
    g = s2sgrad.gradient(cases.writes_into_int_argument_copy)(x, np.zeros(4, dtype=int))
    np.testing.assert_allclose(g, x.astype(int))


def test_changed_keyword_defaults_and_code_recompile():
    def loss(x, *, act=np.sin):
        return np.sum(act(x))

    def caller(x):
        return loss(x)

    np.testing.assert_allclose(s2sgrad.gradient(caller)(X), np.cos(X))
    np.testing.assert_allclose(s2sgrad.gradient(loss)(X), np.cos(X))
    loss.__kwdefaults__["act"] = np.cos  # changed in place
    np.testing.assert_allclose(s2sgrad.gradient(caller)(X), -np.sin(X))
    np.testing.assert_allclose(s2sgrad.gradient(loss)(X), -np.sin(X))

    def helper(x):
        return np.sin(x)

    def uses_helper(x):
        return np.sum(helper(x))

    def replacement(x):
        return 3.0 * np.cos(x)

    np.testing.assert_allclose(s2sgrad.gradient(uses_helper)(X), np.cos(X))
    helper.__code__ = replacement.__code__  # what a module reloader may do
    value, g = s2sgrad.value_and_grad(uses_helper)(X)
    assert np.isclose(value, np.sum(3.0 * np.cos(X)))
    np.testing.assert_allclose(g, -3.0 * np.sin(X))


def test_positional_default_function_rebound_at_the_top():
    def dflt(x, act=np.sin):
        return np.sum(act(x))

    np.testing.assert_allclose(s2sgrad.gradient(dflt)(X), np.cos(X))
    dflt.__defaults__ = (np.cos,)
    np.testing.assert_allclose(s2sgrad.gradient(dflt)(X), -np.sin(X))


def test_infinite_cotangent_through_maximum_and_clip_is_not_nan():
    # PyTorch's convention: the side maximum/clamp did not select gets 0, even where the
    # cotangent is inf (sqrt at 0); finite differences do not apply at the kink.
    x = np.array([0.7, -1.3, 0.0, 2.2])
    g = s2sgrad.gradient(cases.sqrt_of_relu)(x)
    assert not np.any(np.isnan(g))
    np.testing.assert_allclose(g[[0, 1, 3]], [1 / np.sqrt(0.7), 0.0, 1 / np.sqrt(2.2)])
    check(cases.sqrt_of_relu, np.array([0.7, -1.3, 0.4, 2.2]))


@pytest.mark.parametrize("a,b,expected", [(1.0, float("nan"), (3.0, 0.0)),
                                          (2.0, 1.0, (2.0, 1.0)), (1.0, 1.0, (3.0, 0.0))])
def test_builtin_max_and_min_follow_python(a, b, expected):
    # max(a, b) is a unless b > a, min(a, b) is a unless b < a: with a nan or a tie, a
    assert s2sgrad.gradient(cases.builtin_max_min, (0, 1))(a, b) == expected


# --- values that may be None, swaps in loops, retstep ----------------------------------


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_axis_read_from_an_object(axis):
    check(cases.reduces_over_attribute_axis, M, cases.AxisHolder(axis), wrt=[0])


@pytest.mark.parametrize("flag", [True, False])
def test_axis_none_on_one_path(flag):
    check(cases.reduces_over_axis_or_none, M, flag, wrt=[0])


def test_swaps_inside_nested_loops():
    x = np.array([3.0, 1.0, 4.0, 2.0])
    np.testing.assert_allclose(s2sgrad.gradient(cases.bubble_sort_weighted)(x), [2, 0, 3, 1])
    check(cases.bubble_sort_weighted, x)


def test_linspace_with_step_is_refused():
    refused(cases.linspace_with_step, (2.0,), "np.linspace(0.0, a, 5, retstep=True)",
            "retstep=True")


def test_concatenate_flattening():
    check(cases.concatenates_flat, X, M)


# --- writes into arrays from outside the function -----------------------------------------


@pytest.mark.parametrize("fn,token,words", [
    (cases.writes_into_global, "w[0]", "memory of 'WORKSPACE'"),
    (cases.writes_into_global_row, "r[1]", "memory of 'GRID'"),
])
def test_writes_into_globals_through_a_local_name_are_refused(fn, token, words):
    refused(fn, (X,), token, words)


@pytest.mark.parametrize("fn,token", [(cases.writes_into_attribute, "out[0]"),
                                      (cases.accumulates_into_object, "t[0]")])
def test_writes_into_an_objects_arrays_are_refused(fn, token):
    with pytest.raises(TransformError, match="memory that the argument") as info:
        s2sgrad.gradient(fn)(X, cases.Buffer())
    assert info.value.filename == cases.__file__ and info.value.hint


def test_writes_into_a_copy_of_an_objects_array():
    check(cases.writes_into_copy_of_attribute, X, cases.Buffer(), wrt=[0])


# --- a backward that runs later: what the forward read stays what it was -------------------


def _grad_of(t):
    return t.grad.data if hasattr(t.grad, "data") else t.grad


def test_global_array_changed_before_backward():
    w = s2sgrad.tensor(X.copy(), requires_grad=True)
    loss = cases.weighted_by_global(w)
    saved = cases.WEIGHTS.copy()
    cases.WEIGHTS[:] = 100.0
    try:
        loss.backward()
    finally:
        cases.WEIGHTS[:] = saved
    np.testing.assert_allclose(_grad_of(w), 2 * saved * X)


def test_global_number_rebound_before_backward():
    w = s2sgrad.tensor(X.copy(), requires_grad=True)
    loss = cases.scaled_by_global(w)
    cases.COEFFICIENT = 10.0
    try:
        loss.backward()
    finally:
        cases.COEFFICIENT = 2.0
    np.testing.assert_allclose(_grad_of(w), 4 * X)


def test_reused_input_buffer_with_one_backward():
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((32, 4)), rng.standard_normal(32)
    w = s2sgrad.tensor(X.copy(), requires_grad=True)
    xbuf, ybuf, total = np.empty((8, 4)), np.empty(8), 0.0
    for k in range(4):  # micro-batches loaded into one buffer, one backward at the end
        xbuf[:], ybuf[:] = xs[8 * k:8 * k + 8], ys[8 * k:8 * k + 8]
        total = total + cases.batch_loss(w, xbuf, ybuf) / 4
    total.backward()
    expected = s2sgrad.gradient(lambda_free_batch)(X, xs, ys)
    np.testing.assert_allclose(_grad_of(w), expected)


def lambda_free_batch(w, xs, ys):
    total = 0.0
    for k in range(4):
        total = total + np.mean((xs[8 * k:8 * k + 8] @ w - ys[8 * k:8 * k + 8]) ** 2) / 4
    return total


def test_module_attribute_changed_before_backward():
    m = cases.Masked()
    loss = m(X)
    m.mask[1] = 1.0
    loss.backward()
    np.testing.assert_allclose(_grad_of(m.W), X * [1.0, 0.0, 1.0, 1.0])


def test_vjp_pullback_after_its_arguments_change():
    x, y = X.copy(), X[::-1].copy()
    _, pullback = s2sgrad.vjp(cases.sin_times, x, y)
    expected = np.cos(X) * X[::-1]
    y *= 3.0
    x += 1.0
    np.testing.assert_allclose(pullback(1.0)[0], expected)


def test_eager_operand_changed_before_backward():
    c = X[::-1].copy()
    w = s2sgrad.tensor(X.copy(), requires_grad=True)
    loss = (w * c).sum()
    c[:] = 0.0
    loss.backward()
    np.testing.assert_allclose(_grad_of(w), X[::-1])


def test_boolean_scalar_index_is_refused():
    refused(cases.boolean_scalar_index, (X,), "y[True] * 3.0", "scalar True/False as an index")


def test_a_renamed_lambda_is_found_by_its_code():
    # given another __name__, it is still the lambda on its line (tests/compiler/test_lambdas.py)
    np.testing.assert_allclose(s2sgrad.gradient(cases.RENAMED)(X), 2 * X)


def test_messages_name_what_the_user_wrote():
    check(cases.method_of_object_made_inside, X)  # once refused; now inlined
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(cases.norm_of_unknown_order)(np.outer(X, X), "nuc")
    assert "object at 0x" not in str(info.value) and info.value.hint


def test_np_array_without_copy_is_a_view():
    with pytest.raises(TransformError, match="shares memory"):
        s2sgrad.gradient(cases.writes_into_array_without_copy)(X)
    check(cases.writes_into_array_copy, X)


def test_rows_saved_by_a_loop_are_the_forwards():
    w, rows = np.array([0.5, 1.0]), np.arange(6.0).reshape(3, 2) * 0.3
    expected = s2sgrad.gradient(cases.sums_rows_in_a_loop)(w, rows.copy())
    _, pullback = s2sgrad.vjp(cases.sums_rows_in_a_loop, w, rows)
    rows[:] = 7.0  # the argument refilled before the pullback runs
    np.testing.assert_allclose(pullback(1.0)[0], expected)
    rows = np.arange(6.0).reshape(3, 2) * 0.3
    t = s2sgrad.tensor(w.copy(), requires_grad=True)
    loss = s2sgrad.grad(cases.sums_rows_in_a_loop)(t, rows)
    rows[:] = 7.0
    loss.backward()
    np.testing.assert_allclose(_grad_of(t), expected)


# --- dict.get: a container method with a rule -----------------------------------------------


@pytest.mark.parametrize("fn", [cases.get_in_dict, cases.get_missing_default, cases.get_by_name,
                                cases.get_in_loop, cases.get_tuple_item, cases.get_decorated,
                                cases.get_tuple_default],
                         ids=lambda f: f.__name__)
def test_dict_get(fn):
    check(fn, X, np.abs(X) + 0.5)


def test_dict_get_by_name_passed_in():
    for name in ("w", "b"):  # the pair is specialised on the string's value
        check(cases.get_by_name, X, X + 1.0, name)


def test_dict_get_of_an_argument():
    p = {"w": X.copy(), "b": M[0].copy()}
    grad = s2sgrad.gradient(cases.get_from_argument)(p)
    assert set(grad) == {"w", "b"}
    for key in ("w", "b"):
        def of_item(v, key=key):
            return cases.get_from_argument({**p, key: v})
        s2sgrad.testing.assert_gradient_matches(of_item, [p[key]], 0, grad[key], rng)
    # without the key, the default gets nothing to differentiate, and the item none
    grad = s2sgrad.gradient(cases.get_from_argument)({"w": X.copy()})
    s2sgrad.testing.assert_gradient_matches(
        lambda v: cases.get_from_argument({"w": v}), [X.copy()], 0, grad["w"], rng)


# --- an item handed back is still inside its container -------------------------------------


@pytest.mark.parametrize("fn,token", [
    (cases.write_into_got, "w[0]"), (cases.add_into_got, "w += 1.0"),
    (cases.write_into_first_of, "w[0]"), (cases.add_into_item_by_key, "w += 1.0"),
    (cases.add_into_got_by_helper, "w += 1.0"), (cases.write_into_nested_item, "w[0]"),
    (cases.write_into_item_in_loop, "w[0]")], ids=lambda v: getattr(v, "__name__", v))
def test_update_of_an_item_handed_back_is_refused(fn, token):
    """d.get(k), or a helper returning an item of what it was given, hands back memory the
    container (and the caller's array in it) still holds: an update of it is refused."""
    x = X.copy()
    refused(fn, (x,), token, "put into a tuple, list or dict")
    assert np.array_equal(x, X)


@pytest.mark.parametrize("fn", [cases.fresh_through_helper, cases.copy_of_item_written],
                         ids=lambda f: f.__name__)
def test_new_memory_through_a_helper_is_differentiated(fn):
    check(fn, X)


@pytest.mark.parametrize("cls,scale", [(cases.Scaling, 3.0), (cases.Plain, 1.0), (dict, 1.0)],
                         ids=lambda v: getattr(v, "__name__", None))
def test_a_dict_subclass_reads_as_its_class_does(cls, scale):
    """d["a"] and d.get("a") of a subclass that defines __getitem__ run its __getitem__
    (get is dict's own, which does not call it); a subclass that defines no read is a dict."""
    a = X.copy()
    grad = s2sgrad.gradient(cases.reads_by_key)(cls(a=a))
    np.testing.assert_allclose(grad["a"], 2.0 * scale * scale * a + 1.0)
    s2sgrad.testing.assert_gradient_matches(lambda v: cases.reads_by_key(cls(a=v)), [a], 0,
                                            grad["a"], rng)


def test_a_dict_subclass_with_its_own_get_runs_its_get():
    d = cases.Doubling(a=X.copy())
    grad = s2sgrad.gradient(cases.reads_doubling)(d)
    np.testing.assert_allclose(grad["a"], 8.0 * X)  # d/da of sum((2a)^2)
    np.testing.assert_allclose(s2sgrad.gradient(cases.reads_doubling)({"a": X.copy()})["a"],
                               2.0 * X)  # a plain dict, after: another specialisation


@pytest.mark.parametrize("fn,token,name", [
    (cases.bound_sum, "x.sum", "'x.sum'"), (cases.bound_get, "d.get", "'d.get'"),
    (cases.bound_method_of_a_temporary, "(x * 2.0).sum", "'(...).sum'")],
    ids=lambda v: getattr(v, "__name__", None))
def test_a_method_read_without_a_call_is_refused(fn, token, name):
    """Named as the user wrote it, never by a temporary of the compiler's."""
    refused(fn, (X,), token, f"{name} reads a method without calling it")


def test_a_method_of_a_constant_read_without_a_call():
    check(cases.bound_method_of_constant, X[:3])
