"""Reads of an array, under another name, after it was updated in place.

``k = h; h += x; use(k)``: NumPy updates the one array both names hold, so ``use`` sees the
new values. Where the other name certainly holds that array (a chain of copies) and the
update certainly runs before the read, the compiled code reads the updated version there,
and the gradient follows the update. An array made anew in every iteration of a loop and
written there is not the array another name holds from an earlier iteration (``u_prev, u =
u, u_next`` after ``u_next = np.zeros(n); u_next[1:] = ...``): those reads are not stale. Each program is checked as users write it: the
compiled forward equals the plain call, gradients agree with central differences in both
modes and at second order, on arrays and on Tensors, and the caller's arrays are
unchanged. Reads that are not certainly after the update (in a later iteration of a loop,
after an update made in one branch) stay refused at the user's line.
"""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import TransformError
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(5)
X = rng.uniform(0.2, 0.9, 4)


def read_the_old_name(x):
    h = np.tanh(x) * 1.0
    k = h
    h += x
    return np.sum(k * x)


def write_through_the_other_name(x):
    h = x * 2.0
    k = h
    k[0] = x[1] ** 2
    return np.sum(np.sin(h))


def chain_of_copies(x):
    h = np.sin(x)
    a = h
    b = a
    b *= x
    return np.sum(h ** 2) + np.sum(a * x)


def several_operators(x):
    h = np.exp(x) * 1.0
    k = h
    h -= x ** 2
    s = np.sum(k)
    h *= 1.5
    s = s + np.sum(k * x)
    h /= 2.0
    return s + np.sum(np.cos(k))


def read_in_a_branch_after_the_update(x):
    h = np.cos(x) * 1.0
    k = h
    h += x
    if np.sum(x) > 0.0:
        out = np.sum(k * 3.0)
    else:
        out = np.sum(k)
    return out


def update_then_update_through_the_first_name(x):
    h = x * 1.0
    k = h
    h += np.sin(x)
    k *= x
    return np.sum(h) + np.sum(k ** 2)


def read_in_a_later_loop(x):
    h = x * 1.0
    k = h
    h += 0.5 * x
    total = 0.0
    for i in range(3):
        total = total + np.sum(k * i)
    return total


def inside_one_iteration(x):
    total = 0.0
    for i in range(3):
        h = x * (i + 1.0)
        k = h
        h += np.tanh(x)
        total = total + np.sum(k * x)
    return total


def returned_directly(x):
    h = np.sinh(x)
    k = h
    k[1:3] = x[1:3] ** 3
    return np.sum(h * h)


def helper_updates_its_copy(x):
    def bump(v):
        w = v
        w += 1.0
        return np.sum(v)

    return bump(x * 2.0) * np.sum(x)


def leapfrog_rotation(x):
    # the next step's array is made anew in every iteration, then written into, then
    # takes the current one's name: the names read hold earlier iterations' arrays
    u_prev = x.copy()
    u = x * 1.1
    for _ in range(3):
        u_next = np.zeros(len(x))
        u_next[1:] = u[1:] * 1.5 - u_prev[1:] * 0.5
        u_next[0] = u[0]
        u_prev, u = u, u_next
    return np.sum(u ** 2) + np.sum(u_prev * x)


def verlet_forces(x):
    def forces(p):
        f = np.zeros_like(p)
        d = p[1:] - p[:-1]
        f[:-1] += d
        f[1:] -= d
        return f

    pos = x * 1.0
    acc = forces(pos)
    energy = 0.0
    for _ in range(3):
        pos = pos + 0.1 * acc
        acc_new = forces(pos)
        energy = energy + np.sum((acc + acc_new) * pos)
        acc = acc_new
    return energy


def alias_of_this_iterations_array(x):
    total = 0.0
    for i in range(3):
        buf = np.zeros(len(x)) + x
        alias = buf
        buf[0] = x[i] ** 2
        total = total + np.sum(alias * x)
    return total


def read_before_the_write_each_iteration(x):
    total = 0.0
    for i in range(3):
        buf = np.sin(x) * (i + 1.0)
        alias = buf
        total = total + np.sum(alias * x)
        buf[1] = x[0] * x[2]
        total = total + np.sum(buf)
    return total


PROGRAMS = [read_the_old_name, write_through_the_other_name, chain_of_copies,
            several_operators, read_in_a_branch_after_the_update,
            update_then_update_through_the_first_name, read_in_a_later_loop,
            inside_one_iteration, returned_directly, helper_updates_its_copy,
            leapfrog_rotation, verlet_forces, alias_of_this_iterations_array,
            read_before_the_write_each_iteration]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_the_read_sees_the_update(fn):
    kept = X.copy()
    value, _ = s2sgrad.value_and_grad(fn)(X)
    assert np.array_equal(value, fn(X.copy())), (value, fn(X.copy()))
    check_grads(fn, X, modes=("rev", "fwd"), order=2)
    assert np.array_equal(X, kept)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_on_tensors(fn):
    t = s2sgrad.tensor(X.copy(), requires_grad=True)
    out = s2sgrad.grad(fn)(t)
    assert np.array_equal(np.asarray(out.data), fn(X.copy()))
    out.backward()
    np.testing.assert_allclose(t.grad.data, s2sgrad.gradient(fn)(X), rtol=1e-12)
    assert np.array_equal(t.data, X)


def test_the_generated_code_reads_the_updated_version():
    decorated = s2sgrad.grad(read_the_old_name)
    decorated(s2sgrad.tensor(X, requires_grad=True))
    source = decorated.forward_source
    assert "= k * x" not in source and "= h_1 * x" in source, source


def read_in_a_later_iteration(x):
    h = x * 1.0
    k = h
    total = 0.0
    for i in range(3):
        total = total + np.sum(k * x)  # <- refused
        h += 0.1 * x
    return total


def update_in_one_branch(x):
    h = x * 1.0
    k = h
    if np.sum(x) > 0.0:
        h += x
    return np.sum(k * x)  # <- refused


def array_kept_across_iterations(x):
    buf = np.zeros(len(x))
    kept = buf
    total = 0.0
    for i in range(3):
        total = total + np.sum(kept * x)  # <- refused
        buf[i] = x[i] ** 2
    return total


def view_of_the_updated_array(x):
    h = x * 1.0
    v = h[1:3]
    h += x
    return np.sum(v * 2.0)  # <- refused


@pytest.mark.parametrize("fn,token", [(read_in_a_later_iteration, "k * x"),
                                      (update_in_one_branch, "k * x"),
                                      (array_kept_across_iterations, "kept * x"),
                                      (view_of_the_updated_array, "v * 2.0")],
                         ids=lambda v: getattr(v, "__name__", v))
def test_reads_not_certainly_after_the_update_stay_refused(fn, token):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(X)
    assert "shares memory with an array updated in place" in str(info.value)
    assert_points_at(info.value, fn, token, __file__)
