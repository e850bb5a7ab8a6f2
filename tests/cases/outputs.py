"""Functions for tests/compiler/test_soundness_outputs.py: the NumPy calls that write into an
array they are given (``out=``, a ufunc's output by position, ``np.add.at``) and calls whose
value is dropped, as users write them. A function the compiler must refuse marks the
offending line with `# <- refused`; the test names the token the caret must sit under."""

import numpy as np

import s2sgrad

IDX = np.array([0, 2, 0, 1, 0])


# --- np.add.at / np.subtract.at ------------------------------------------------------------


def add_at_zeros(x):
    # x (5,): every repeated position adds
    idx = np.array([0, 2, 0, 1, 0])
    y = np.zeros(3)
    np.add.at(y, idx, x)
    return np.sum(y ** 2)


def add_at_list_index(x):
    y = np.zeros(2)
    np.add.at(y, [0, 1, 0, 0, 1], x * x)
    return np.sum(np.sin(y))


def add_at_into_computed(x):
    # the array added into is itself differentiated
    idx = np.array([0, 2, 0, 1, 0])
    y = x[:3] * 2.0
    np.add.at(y, idx, np.cos(x))
    return np.sum(y * y)


def add_at_scalar(x):
    # one value broadcast to every position
    idx = np.array([0, 2, 0, 1, 0])
    y = x[:3] ** 2
    np.add.at(y, idx, x[4])
    return np.sum(y ** 3)


def add_at_rows(x):
    # x (5,): rows of a matrix, a tuple index of two arrays
    m = np.outer(x[:3], x[1:4])
    y = np.zeros((2, 3))
    np.add.at(y, ([0, 1, 1, 0], [2, 2, 0, 2]), x[:4] * np.sum(m))
    return np.sum(y ** 2)


def add_at_slice_rows(x):
    # a slice and an array in the index: whole columns added at repeated positions
    m = np.reshape(x[:4], (2, 2))
    y = np.ones((2, 3))
    np.add.at(y, (slice(None), [0, 2, 0]), np.concatenate([m, m[:, :1]], axis=1))
    return np.sum(y * y * y)


def subtract_at(x):
    idx = np.array([0, 2, 0, 1, 0])
    y = x[:3] * 1.0
    np.subtract.at(y, idx, x * x[1])
    return np.sum(y ** 2)


def add_at_in_loop(x):
    idx = np.array([0, 2, 0, 1, 0])
    y = np.zeros(3)
    for k in range(3):
        np.add.at(y, idx[k:k + 3], x[k:k + 3] * (k + 1))
    return np.sum(y ** 2)


def add_at_in_branch(x):
    idx = np.array([0, 2, 0, 1, 0])
    y = x[:3] * 1.0
    if np.sum(x) > 0:
        np.add.at(y, idx, x)
    else:
        np.subtract.at(y, idx, x ** 2)
    return np.sum(y ** 2)


def add_at_through_helper(x):
    return _histogram(x * 2.0, IDX) + np.sum(x)


def _histogram(v, idx):
    h = np.zeros(3)
    np.add.at(h, idx, v)
    return np.sum(h ** 2)


def add_at_into_container(x):
    # the dict holds the array too: it would show the additions
    idx = np.array([0, 2, 0, 1, 0])
    d = {"acc": np.zeros(3)}
    acc = d["acc"]
    np.add.at(acc, idx, x)  # <- refused
    return np.sum(acc ** 2)


def add_at_read_through_alias(x):
    # k is the same array: it shows the additions
    idx = np.array([0, 2, 0, 1, 0])
    y = np.zeros(3)
    k = y
    np.add.at(y, idx, x)
    return np.sum(k * y)


def add_at_on_argument(x):
    np.add.at(x, [0, 0], 1.0)  # <- refused
    return np.sum(x ** 2)


def add_at_of_view(x):
    y = np.zeros((2, 3))
    row = y[0]
    np.add.at(row, IDX, x)
    return np.sum(y ** 2)  # <- refused


def maximum_at(x):
    y = np.zeros(3)
    np.maximum.at(y, IDX, x)  # <- refused
    return np.sum(y ** 2)


def add_at_on_list(x):
    y = [0.0, 0.0, 0.0]
    np.add.at(y, IDX, x)  # <- refused
    return y[0]


# --- out= and a ufunc's output by position ---------------------------------------------------


def out_keyword(x):
    y = np.empty_like(x)
    np.multiply(x, x, out=y)
    return np.sum(y)


def out_is_the_value(x):
    y = np.zeros_like(x)
    z = np.exp(x, out=y)
    return np.sum(z * y)


def out_into_operand(x):
    a = x * 2.0
    np.add(a, x, out=a)
    np.sin(a, out=a)
    return np.sum(a ** 2)


def out_by_position(x):
    y = x * 2.0
    z = np.floor(y, y)
    return np.sum(y * x) + np.sum(z)


def out_tuple(x):
    y = np.empty(4)
    np.tanh(x, out=(y,))
    return np.sum(y * x)


def out_of_reduction(x):
    # x (5,): a reduction's out= of another shape than its operand
    m = np.reshape(x[:4], (2, 2))
    s = np.zeros(2)
    np.sum(m ** 2, axis=0, out=s)
    return np.sum(s * s)


def out_broadcast(x):
    # the result broadcast into a larger out, as NumPy does for a ufunc
    y = np.zeros((2, 5))
    np.multiply(x, 3.0, out=y)
    return np.sum(y ** 2)


def out_in_loop(x):
    acc = np.zeros_like(x)
    for k in range(3):
        np.add(acc, x ** (k + 1), out=acc)
    return np.sum(acc ** 2)


def out_through_alias(x):
    y = np.zeros_like(x)
    view = y
    np.multiply(x, 2.0, out=y)
    return np.sum(view * x)


def out_into_argument(x):
    np.multiply(x, 2.0, out=x)  # <- refused
    return np.sum(x)


def out_into_int_array(x):
    y = np.zeros(5, dtype=int)
    np.multiply(x, 2.0, out=y)  # <- refused
    return np.sum(y * x)


def out_with_where(x):
    y = np.zeros_like(x)
    np.multiply(x, 2.0, out=y, where=x > 0)  # <- refused
    return np.sum(y * x)


# --- calls whose value is dropped ------------------------------------------------------------


def dropped_sum(x):
    y = x * 2
    np.sum(y)
    return np.sum(y ** 2)


def dropped_calls(x):
    y = x * 2
    np.dot(y, y)
    np.linalg.norm(y)
    np.exp(y)
    return np.sum(np.tanh(y))


def dropped_call_of_nested_value(x):
    # the argument is still computed: its own calls may matter
    out = []

    def appended(v):
        out.append(v * 3.0)
        return v

    np.sum(appended(x))
    return np.sum(out[0] ** 2)


def dropped_sort_method(x):
    y = x * 2
    y.sort()  # <- refused
    return np.sum(y * x)


def dropped_fill_diagonal(x):
    k = np.outer(x, x)
    np.fill_diagonal(k, 0.0)  # <- refused
    return np.sum(k)


@s2sgrad.grad
def decorated_add_at(x):
    y = np.zeros(3)
    np.add.at(y, IDX, x)
    z = np.empty(3)
    np.square(y, out=z)
    return np.sum(z)


# --- methods of ufuncs -------------------------------------------------------------------


def ufunc_reductions(x):
    # x (5,)
    m = np.reshape(x[:4], (2, 2)) * x[4]
    return (np.add.reduce(x ** 2) + np.multiply.reduce(x[:3])
            + np.sum(np.maximum.reduce(m) * np.minimum.reduce(m, axis=1, keepdims=True)))


def ufunc_accumulations(x):
    m = np.outer(x[:2], x[2:])
    return np.sum(np.multiply.accumulate(x) ** 2) + np.sum(np.add.accumulate(m, 1) * m)


def ufunc_outers(x):
    d = np.subtract.outer(x, x)
    return np.sum(d ** 2) + np.sum(np.multiply.outer(x[:2], d) ** 2) + np.sum(
        np.add.outer(x[0], x) ** 3)


def ufunc_method_out(x):
    s = np.zeros(())
    np.add.reduce(x ** 2, out=s)
    c = np.empty(5)
    np.add.accumulate(x, out=c)
    return s * np.sum(c ** 2)


def ufunc_method_in_loop(x):
    total = 0.0
    for k in range(1, 4):
        total = total + np.add.reduce(np.multiply.outer(x[:k], x) ** 2, axis=None)
    return total


# --- reductions with where= and initial= ----------------------------------------------------


def masked_reductions(x):
    # x (5,): a mask computed from the values (no gradient through it)
    return np.sum(x, where=x > 0.1) + np.max(x, initial=0.0) + np.min(x ** 2, initial=0.5)


def masked_matrix_reductions(x):
    m = np.outer(x[:2], x[2:])
    keep = np.reshape(np.arange(6) % 4 != 1, (2, 3))
    return (np.sum(np.sum(m ** 2, axis=1, where=keep, initial=1.5) ** 2)
            + np.sum(np.mean(m, axis=0, where=keep) ** 3) + np.mean(m ** 2, where=keep)
            + np.sum(np.max(m, axis=1, initial=-5.0, where=keep, keepdims=True) ** 2)
            + np.sum(np.prod(m, axis=1, where=keep, initial=2.0) ** 2)
            + m.sum(axis=1, initial=2.0, where=keep).sum() ** 2)


def masked_in_loop(x):
    total = 0.0
    for k in range(3):
        total = total + np.max(x * (k + 1), where=x < k * 0.5, initial=-1.0) ** 2
    return total


# --- np.einsum's interleaved form --------------------------------------------------------------


def einsum_interleaved(x):
    a = np.outer(x[:3], x[2:])
    b = np.reshape(np.arange(12.0), (3, 4)) * x[0]
    return (np.einsum(a, [0, 1], a, [1, 2]).sum() + np.einsum(a, [1, 0], b, [0, 2], [2, 1]).sum()
            + np.einsum(x, [0], x, [0]) + np.sum(np.einsum(a, [..., 0], x[:3], [0], [...]) ** 2)
            + np.einsum(a, (3, 3)) + np.sum(np.einsum(a, [5, 7], b, [5, 9], optimize=True) ** 2)
            + np.sum(np.einsum(a, [Ellipsis, 2], [Ellipsis]) ** 2))


def dropped_call_that_writes_into_its_input(x):
    y = x * np.array([1.0, np.inf, 1.0, 1.0, 1.0])
    np.nan_to_num(y, copy=False)  # <- refused
    return np.sum(y * x)
