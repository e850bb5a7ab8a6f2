"""Where each value comes from: the origins aliasing derives from normalized code.

normalize records facts about versions only (which variable each version stands for, which
statements update which version); aliasing derives from them whether a value is an
argument's memory ('param'), may share another value's ('alias') or is new ('fresh'), and
refuses the in-place updates of arguments, and element writes into values that are not
arrays where those values are fresh.
"""

import inspect

import numpy as np
import pytest

import s2sgrad
import tests.cases
import tests.catalogue
import tests.catalogue_cf
from s2sgrad.compiler.aliasing import origins
from s2sgrad.compiler.fence import fence
from s2sgrad.compiler.normalize import normalize
from s2sgrad.compiler.parse import parse
from s2sgrad.errors import TransformError
from tests import corpus

X = np.linspace(0.5, 1.5, 3)


def _origins(fn):
    found = origins(normalize(fence(parse(fn))))
    return lambda name: found.get(name, "fresh")


# --- the origin of each kind of assignment -----------------------------------------------


def kinds(x, n):
    item = x[0:2]
    copy = item
    view = x.reshape(3)
    transposed = x.T
    shape = x.shape
    new = x * 2.0
    made = [x, n]
    a, b = [x, x], x
    return item, copy, view, transposed, shape, new, made, a, b


def test_parameters_items_views_and_copies_of_other_variables():
    origin = _origins(kinds)
    assert origin("x") == origin("n") == "param"
    assert origin("item") == origin("view") == origin("transposed") == "alias"
    assert origin("copy") == "alias"  # another variable's value
    assert origin("b") == "alias"  # unpacked from a tuple: a copy of x
    assert origin("shape") == origin("new") == origin("made") == "fresh"
    assert origin("a") == "fresh"  # a temporary's value: the list display's own


def merged(x, c):
    if c > 0:
        x = x * 2.0
    y = x * 3.0
    if c > 1:
        y = x
    return x, y


def test_a_merge_has_the_worst_origin_of_its_branches():
    origin = _origins(merged)
    assert origin("x_1") == "fresh"
    assert origin("x_2") == "param"  # x_1 on one path, the argument on the other
    assert origin("y_2") == "alias"  # y_1 = x_2: a copy of another variable


def carried(x, n):
    h = x * 1.0
    for _ in range(n):
        h[0] = h[1]
        h = h  # noqa: PLW0127 (a copy between versions of h)
    ys = []
    for _ in range(n):
        ys.append(x)
    return h, ys


def test_versions_of_one_variable_keep_its_origin_around_a_loop():
    normalized = normalize(fence(parse(carried)))
    origin = origins(normalized)
    versions = {v for v, name in normalized.variable_of.items() if name == "h"}
    assert versions and all(origin.get(v, "fresh") == "fresh" for v in versions)
    lists = {v for v, name in normalized.variable_of.items() if name == "ys"}
    assert lists and all(origin.get(v, "fresh") == "fresh" for v in lists)


def updated_argument(x, n):
    y = x
    for _ in range(n):
        x[0] = 1.0
    return y


def test_an_element_write_keeps_the_origin_of_the_version_it_updates():
    normalized = normalize(fence(parse(updated_argument)))
    origin = origins(normalized)
    assert [origin[v] for v, name in normalized.variable_of.items() if name == "x"] == [
        "param"] * 4  # the argument, its loop version, the copy at the start, the write


# --- what normalize records --------------------------------------------------------------


@pytest.mark.parametrize("fn", corpus.functions(tests.cases, tests.catalogue, tests.catalogue_cf))
def test_updates_are_recorded_with_the_variable_and_the_version_they_update(fn):
    try:
        normalized = normalize(fence(parse(fn)))
    except TransformError:
        return
    variable_of = normalized.variable_of
    assert all(variable_of[p] == p for p in normalized.parsed.params)
    for table in (normalized.augmented, normalized.writes):
        for name, previous in table.values():
            assert variable_of[previous] == name


# --- refusals ----------------------------------------------------------------------------


def self_copy_then_augmented(x):
    x = x  # noqa: PLW0127 (the construct under test)
    x += 1.0
    return np.sum(x)


def self_copy_then_write(x):
    x = x  # noqa: PLW0127 (the construct under test)
    x[0] = 1.0
    return np.sum(x)


def loop_index_then_augmented(i, x):
    for i in range(3):  # noqa: PLR1704 (the construct under test)
        x = x * 2.0
    i += 1.0
    return np.sum(x * i)


@pytest.mark.parametrize("fn, words", [
    (self_copy_then_augmented, "in-place update of the argument 'x'"),
    (self_copy_then_write, "assignment to an element of 'x', the caller's array"),
    # the loop may run zero times: i is then still the caller's array
    (loop_index_then_augmented, "in-place update of the argument 'i'"),
])
def test_a_copy_of_an_argument_to_itself_is_the_argument(fn, words):
    count = len(inspect.signature(fn).parameters)
    with pytest.raises(TransformError, match=words):
        s2sgrad.gradient(fn, wrt=count - 1)(*[X] * count)


def list_write(x):
    a = [x, x]
    a[0] = x * 2.0
    return np.sum(a[0])


def list_write_unpacked(x):
    a, b = [x, x], x
    a[0] = x * 2.0
    return np.sum(a[0] * b)


def list_write_through_a_copy(x):
    a = [x, x]
    b = a
    b[0] = x * 2.0
    return np.sum(b[0])


def list_write_through_a_chained_copy(x):
    a = b = [x, x]  # the construct under test
    b[0] = x * 2.0
    return np.sum(b[0])


@pytest.mark.parametrize("fn", [list_write, list_write_unpacked])
def test_an_element_write_into_a_new_list_replaces_the_item(fn):
    s2sgrad.testing.check_grads(fn, X)


@pytest.mark.parametrize("fn", [list_write_through_a_copy, list_write_through_a_chained_copy])
def test_a_chained_assignment_copies_like_an_assignment(fn):
    s2sgrad.testing.check_grads(fn, X)


def list_write_after_a_loop(x, n):
    ys = [x, x]
    for k in range(n):
        zs = [x * k, x]
        ys = zs
    ys[0] = x * 3.0
    return np.sum(ys[0])


def list_write_after_a_loop_of_conditional_lists(x, n):
    ys = [x, x]
    for k in range(n):
        ys = [x, x] if k > 0 else [x * 2.0, x]
    ys[0] = x * 3.0
    return np.sum(ys[0])


def list_rebound_in_a_loop(x, n):
    ys = [x, x]
    for k in range(n):
        zs = [x * k, ys[1]]
        ys = zs
    return np.sum(ys[0] * ys[1])


def tuple_rebound_in_a_loop(x, n):
    pair = (x, x)
    for k in range(n):
        fresh = (np.sin(x) * k, pair[0])
        pair = fresh
    return np.sum(pair[0] + pair[1])


def dict_rebound_in_nested_loops(x, n):
    d = {"a": x, "b": x}
    for k in range(n):
        for j in range(2):
            e = {"a": x * (k + j), "b": d["a"]}
            d = e
    return np.sum(d["a"] * d["b"])


@pytest.mark.parametrize("fn", [list_write_after_a_loop,
                                list_write_after_a_loop_of_conditional_lists,
                                list_rebound_in_a_loop, tuple_rebound_in_a_loop,
                                dict_rebound_in_nested_loops])
def test_a_container_a_loop_carries(fn):
    """A loop version whose cotangent is used up in an iteration starts the earlier
    iteration from zeros of its own structure (a list, a tuple, a dict)."""
    s2sgrad.testing.check_grads(fn, X, 2, wrt=0)
