"""Functions for the soundness tests (tests/compiler/test_soundness_values.py): the code users write
around decorators, function values, containers, index tricks, values whose kind changes,
views and dtypes. A function the compiler must refuse marks the offending line with
`# <- refused`; the test names the token the caret must sit under."""

import functools
import math

import numpy as np

import s2sgrad

# --- decorators -------------------------------------------------------------------------


def with_l2(lam):
    def deco(f):
        @functools.wraps(f)
        def wrapper(x):
            return f(x) + lam * np.sum(x ** 2)
        return wrapper
    return deco


@with_l2(0.5)
def penalised(x):
    return np.sum(x ** 2)


def scaled(c):
    def deco(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            return c * f(*args, **kwargs)
        return wrapper
    return deco


@scaled(3.0)
def scaled_loss(x, power=2.0):
    return np.sum(np.abs(x) ** power)


def without_wraps(f):
    def wrapper(x):
        return f(x * 2.0)
    return wrapper


@without_wraps
def doubled_input(x):
    return np.sum(np.sin(x))


@with_l2(0.25)
@scaled(2.0)
def two_decorators(x):
    return np.sum(np.tanh(x))


class Twice:
    """A class-based decorator: the instance is what gets called."""

    def __init__(self, f):
        self.f = f
        functools.update_wrapper(self, f)

    def __call__(self, x):
        return 2.0 * self.f(x) + np.sum(x)


@Twice
def twice_cubed(x):
    return np.sum(x ** 3)


@functools.cache
def cached_cube(t):
    return t ** 3 + math.sin(t)


class Ops:
    scale = 3.0

    @staticmethod
    def square(v):
        return v * v

    @classmethod
    def tripled(cls, v):
        return cls.scale * v

    def apply(self, x):
        return np.sum(self.square(x) + Ops.square(x) + Ops.tripled(x))


def calls_decorated(x):
    return penalised(x) * 2.0 + scaled_loss(x, power=3.0)


def calls_cached(t):
    return cached_cube(t) * 2.0


@s2sgrad.grad
@with_l2(0.5)
def grad_over_decorated(x):
    return np.sum(x ** 2)


# --- higher order (refused until it is supported) ---------------------------------------


def cube(x):
    return x ** 3


def uses_gradient_inside(x):
    slope = s2sgrad.gradient(cube)(x)
    return slope * x


DCUBE = s2sgrad.gradient(cube)


def uses_global_gradient(x):
    return DCUBE(x) * x


# --- function values --------------------------------------------------------------------


def make_step(a):
    return lambda x: x - 0.05 * (x ** 2 - a)


def calls_made_function(a):
    return make_step(a)(1.0)


def apply(fn, a):
    return np.sum(fn(a) * a)


def softplus(v):
    return np.log1p(np.exp(v))


ACTIVATIONS = {"tanh": np.tanh, "softplus": softplus, "sin": np.sin}


def activation_by_name(x, name):
    return np.sum(ACTIVATIONS[name](x) ** 2)


def activation_from_dict(x, acts, name):
    return np.sum(acts[name](x))


def apply_partial(fn, x):
    return np.sum(fn(x))  # <- refused


class Layer:
    def __init__(self, act):
        self.act = act
        self.scale = 2.0

    def forward(self, x):
        return np.sum(self.act(x) * self.scale)


class Settings:
    pass


SETTINGS = Settings()
SETTINGS.act = np.tanh


def reads_global_attribute(x):
    return np.sum(SETTINGS.act(x))


class Poly:
    def __init__(self, c):
        self.c = c

    def __mul__(self, x):
        return self.c * x * x

    def __rmul__(self, x):
        return self.c * x * x * x


def user_operators(x, p):
    return np.sum(p * x) + np.sum(2.0 * p)


class Scaler:
    def __init__(self, k):
        self.k = k

    def method(self, x):
        return x * self.k


def calls_method(s, x):
    return np.sum(s.method(x))


# --- container operators ----------------------------------------------------------------


def tuple_concat(a, b):
    return np.sum(np.stack((a, b) + (a,)) ** 2)


def list_concat(a, b):
    return np.sum(np.stack([a] + [b * 2.0]) ** 2)


def tuple_repeat(a):
    return np.sum(np.stack((a,) * 3) ** 2)


def list_repeat_left(a, b):
    return np.sum(np.stack(2 * [a, b]) * np.stack([a, b, b, a]))


def concat_in_loop(a):
    xs = [a]
    for k in range(3):
        xs = xs + [xs[-1] * 0.5 + np.sin(a)]
    return np.sum(np.stack(xs) ** 2)


def concat_of_items(a, b):
    pair = (a, b)
    more = pair + (a * b,)
    first, second, third = more
    return np.sum(first * second + third)


def extends_list(a, b):
    xs = [a]
    xs.extend([b])  # <- refused
    return np.sum(np.stack(xs))


def sums_lists(a, b):
    return np.sum(np.stack(sum([[a], [b]], [])))  # <- refused


# --- index tricks -----------------------------------------------------------------------


def uses_r_(x, y):
    return np.sum(np.r_[x, 0.5, y, 0:2] ** 2)


def uses_c_(x, y):
    return np.sum(np.c_[x, y, np.ones(np.shape(x))] ** 2)


def uses_r_directive(x, y):
    return np.sum(np.r_["0,2", x, y] ** 2)  # <- refused


def uses_s_(x):
    return np.sum(x[np.s_[1:3]] ** 2) + np.sum(x[np.index_exp[::2]])


class Table:
    def __init__(self, w):
        self.w = w

    def __getitem__(self, x):
        return self.w * x


def uses_getitem(x, table):
    return np.sum(table[x] ** 2)


# --- values whose kind changes ----------------------------------------------------------


def none_then_array(x):
    best = None
    for k in range(3):
        best = np.sin(x) if best is None else best * 0.5 + np.sin(x)
    return np.sum(best)


def zero_then_array(x):
    acc = 0
    for k in range(3):
        acc = acc + np.cos(x * k)
    return np.sum(acc * x)


def none_then_list(x):
    parts = None
    for k in range(2):
        parts = [x * k] if parts is None else parts + [x * x]
    return np.sum(np.stack(parts))


def none_or_array_in_branch(x, flag):
    extra = None
    if flag:
        extra = x * 3.0
    total = np.sum(x ** 2)
    if extra is not None:
        total = total + np.sum(extra)
    return total


def float_then_array(x):
    acc = 0.0
    for k in range(2):
        acc = acc + x * k
    return np.sum(acc)


# --- views, dtypes, complex -------------------------------------------------------------


def writes_through_fliplr(x):
    y = x.copy()
    z = np.fliplr(y)
    z[0, 0] = 0.0  # <- refused
    return np.sum(y * 2.0)


def writes_through_rot90(x):
    y = x * 1.0
    z = np.rot90(y)
    z[0, 0] = 0.0  # <- refused
    return np.sum(y)


def writes_through_split(x):
    y = x * 1.0
    a = np.split(y, 2)[0]
    a[0] = 0.0  # <- refused
    return np.sum(y ** 2)


def writes_through_flip(x):
    y = x * 1.0
    z = np.flip(y)
    z[0, 0] = 0.0
    return np.sum(y ** 2)


def writes_through_moveaxis(x):
    y = x * 1.0
    z = np.moveaxis(y, 0, 1)
    z[0, 1] = 0.0
    return np.sum(y ** 2)


def writes_through_reshape_method(x):
    y = x * 1.0
    z = y.reshape(-1)
    z[0] = 0.0
    return np.sum(y ** 2)


def writes_into_fresh(x):
    y = np.zeros_like(x)
    y[0] = x[1] * 2.0
    z = np.sin(x)
    z[1] = 0.0
    return np.sum(y + z)


def cast_to_dtype_of(x, idx):
    return np.sum(x.astype(idx.dtype) * x)


def cast_to_dtype_param(x, dtype):
    return np.sum(x.astype(dtype) * x)


class Holder:
    def __init__(self, dtype):
        self.dtype = dtype


class ComputedHolder:
    """Its attributes are computed at each read (``__getattr__``): not known when compiling."""

    def __init__(self, dtype):
        self._held = dtype

    def __getattr__(self, name):
        if name == "dtype":
            return self._held
        raise AttributeError(name)


def cast_to_held_dtype(x, holder):
    return np.sum(x.astype(holder.dtype) * x)


def cast_to_unknown_dtype(x, holder):
    return np.sum(x.astype(holder.dtype) * x)  # <- refused


def complex_intermediate(x, y):
    return abs(x + 1j * y)


def complex_maximum(x):
    z = np.fft.fft(x)
    return np.real(np.sum(np.maximum(z, 0.5)))  # <- refused


def builtin_sum_of_array(x):
    return sum(x * 2.0) + sum(np.sin(x))


def builtin_sum_of_matrix(m):
    return np.sum(sum(m ** 2))


# --- more function values and list updates ----------------------------------------------

FUNCTIONS = [np.sin, np.cos]  # a list may change after the compile: not unrolled


def loops_over_functions(x):
    for fn in FUNCTIONS:
        x = fn(x)  # <- refused
    return np.sum(x)


def picks_function_by_flag(x, flag):
    fn = np.sin if flag else np.cos
    return np.sum(fn(x))  # <- refused


def calls_object_argument(x, layer):
    return layer(x) * 2.0


class Affine:
    def __init__(self, w, act):
        self.w = w
        self.act = act

    def __call__(self, x):
        return np.sum(self.act(x * self.w))


def grows_list_in_place(a):
    xs = [a]
    for k in range(3):
        xs += [xs[-1] * 0.5 + a]
    return np.sum(np.stack(xs))


def list_alias_sees_update(a, b):
    xs = [a]
    ys = xs
    xs += [b]
    return np.sum(np.stack(ys))  # <- refused


def updates_list_argument(xs, b):
    xs += [b]  # <- refused
    return np.sum(np.stack(xs))


def snap(x):
    return np.round(x * 4.0) / 4.0


def uses_snap(x):
    return np.sum(snap(x) * x)


def layer_with_default(x, act=np.tanh):
    return act(x) * 2.0


def uses_default_function(x):
    return np.sum(layer_with_default(x)) + np.sum(layer_with_default(x, act=np.sin))


# --- arguments changed before they are passed on; calls that may mutate ----------------


def default_scale(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        kwargs.setdefault("scale", 7.0)
        return fn(*args, **kwargs)  # <- refused
    return wrapper


@default_scale
def scaled_sum(x, scale=1.0):
    return np.sum(x) * scale


def inner_scaled(x, s=1.0):
    return np.sum(x) * s


def updates_kwargs(x, **kw):
    kw.update(s=5.0)
    return inner_scaled(x, **kw)  # <- refused


def passes_kwargs_on(x, **kw):
    return inner_scaled(x, **kw)


def sorts_in_place(x):
    y = x * 1.0
    _ = y.sort()  # <- refused
    return np.sum(y * np.arange(4))


def copies_into(x):
    y = x * 1.0
    done = np.copyto(y, 3.0)  # <- refused
    return np.sum(y ** 2) + np.sum(x) + (0.0 if done is None else 1.0)


def appends_in_expression(x):
    out = []
    for i in range(3):
        _ = out.append(x[i] * (i + 1))  # <- refused
    return sum(out)


def reverses_unbound(x):
    lst = [x, 2 * x]
    list.reverse(lst)  # <- refused
    return np.sum(lst[0])


def array_times_list(x):
    return np.sum(x * [1.0, 2.0, 3.0, 4.0])


def dot_with_list(x):
    return np.dot(x, [1.0, 2.0, 3.0, 4.0])


def asarray_of_list(x, weights):
    w = np.asarray(weights)
    return np.sum(x * w[0])


def loops_over_dict(x):
    weights = {0: 10.0, 1: 20.0}
    s = 0.0
    for k in weights:  # its keys, as Python goes through them
        s = s + np.sum(x) * k
    return s


def loops_over_argument(x, items):
    s = 0.0
    for k in items:  # <- refused
        s = s + np.sum(x) * k
    return s


class Schedule:
    def __init__(self, w):
        self.w = w

    def __iter__(self):
        return iter(self.w)

    def __len__(self):
        return len(self.w)

    def __getitem__(self, i):
        return self.w[::-1][i]


def nested_def_in_loop(x):
    s = 0.0
    for i in range(2):
        def g(t):
            return t * i
        s = s + np.sum(g(x))
    return s


# --- output arrays by position, writes into integer arrays -------------------------------


def clips_into_itself(x):
    y = x * 2.0
    z = np.clip(y, 0.0, 1.0, y)  # <- refused
    return np.sum(y * x) + np.sum(z)


def floors_into_itself(x):
    y = x * 2.0
    z = np.floor(y, y)
    return np.sum(y * x) + np.sum(z)


def sums_into(x):
    y = x * 2.0
    o = np.zeros(())
    z = y.sum(0, None, o)  # <- refused
    return np.sum(o * 3.0) + z


def writes_into_int_zeros(x):
    y = np.zeros(4, dtype=int)
    y[:] = x
    return np.sum(y * x)


def writes_into_arange(x):
    y = np.arange(4)
    for i in range(4):
        y[i] = x[i]
    return np.sum(y * x)


def adds_into_bool(x):
    y = np.zeros_like(x, dtype=bool)
    y[1] += x[1]
    return np.sum(y * x)


def writes_into_int_argument_copy(x, idx):
    y = idx.copy()
    y[:] = x
    return np.sum(y * x)


def writes_into_float_zeros(x):
    y = np.zeros(4)
    y[:] = x
    return np.sum(y * x)


def sqrt_of_relu(x):
    return np.sum(np.sqrt(np.maximum(x, 0.0))) + np.sum(np.sqrt(np.clip(x, 0.0, None)))


def builtin_max_min(a, b):
    return max(a, b) * 2.0 + min(a, b)


# --- values that may be None, swaps in loops, retstep ----------------------------------


class AxisHolder:
    def __init__(self, axis):
        self.axis = axis


def reduces_over_attribute_axis(x, holder):
    return np.sum(np.max(x, axis=holder.axis) ** 2)


def reduces_over_axis_or_none(x, flag):
    axis = None if flag else 0
    return np.sum(np.max(x, axis=axis) ** 2)


def bubble_sort_weighted(x):
    y = x * 1.0
    n = 4
    for i in range(n):
        for j in range(n - 1 - i):
            if y[j] > y[j + 1]:
                t = y[j]
                y[j] = y[j + 1]
                y[j + 1] = t
    return np.sum(y * np.arange(4))


def linspace_with_step(a):
    samples, step = np.linspace(0.0, a, 5, retstep=True)  # <- refused
    return np.sum(samples) * step


def concatenates_flat(x, m):
    return np.sum(np.concatenate([x, m], axis=None) ** 2)


# --- writes into arrays from outside the function -----------------------------------------

WORKSPACE = np.zeros(4)
GRID = np.zeros((2, 4))


class Buffer:
    def __init__(self):
        self.out = np.zeros(4)

    def add(self, v):
        t = self.out
        t[0] = t[0] + v[0]  # <- refused
        return v


def writes_into_global(x):
    w = WORKSPACE
    w[0] = x[0] * x[1]  # <- refused
    return WORKSPACE[0]


def writes_into_global_row(x):
    r = GRID[0]
    r[1] = x[0] * x[0]  # <- refused
    return GRID[0, 1] + r[1]


def writes_into_attribute(x, buf):
    out = buf.out
    out[0] = x[0] * x[0]  # <- refused
    return buf.out[0]


def accumulates_into_object(x, buf):
    for i in range(3):
        u = buf.add(x * i)
    return buf.out[0]


def writes_into_copy_of_attribute(x, buf):
    out = buf.out.copy()
    out[0] = x[0] * x[0]
    return np.sum(out)


# --- a backward that runs later: what the forward read stays what it was -------------------

WEIGHTS = np.array([1.0, 2.0, 3.0, 4.0])
COEFFICIENT = 2.0


@s2sgrad.grad
def weighted_by_global(w):
    return np.sum(WEIGHTS * w ** 2)


@s2sgrad.grad
def scaled_by_global(w):
    return np.sum(w ** 2) * COEFFICIENT


@s2sgrad.grad
def batch_loss(w, x, y):
    return np.mean((x @ w - y) ** 2)


def sin_times(x, y):
    return np.sum(np.sin(x) * y)


class Masked(s2sgrad.nn.Module):
    def __init__(self):
        self.W = s2sgrad.nn.Parameter(np.ones(4))
        self.mask = np.array([1.0, 0.0, 1.0, 1.0])

    @s2sgrad.grad
    def forward(self, x):
        return np.sum(self.W * x * self.mask)


def boolean_scalar_index(x):
    y = x * 1.0
    y[True] = y[True] * 3.0  # <- refused
    return np.sum(y ** 2)


RENAMED = (lambda a: np.sum(a ** 2), 1)[0]
RENAMED.__name__ = "renamed"


class Point:
    def __init__(self, v):
        self.v = v

    def norm(self):
        return np.sqrt(np.sum(self.v ** 2))


def method_of_object_made_inside(x):
    return Point(x).norm()  # built here: __init__ and norm inlined


def norm_of_unknown_order(x, order):
    return np.linalg.norm(x, ord=order)  # <- refused


def writes_into_array_without_copy(x):
    y = x * 1.0
    z = np.array(y, copy=False)
    z[0] = 0.0  # <- refused
    return np.sum(y ** 2)


def writes_into_array_copy(x):
    y = x * 1.0
    z = np.array(y)
    z[0] = 0.0
    return np.sum(y ** 2) + np.sum(z)


def sets_kwargs_item(x, **kw):
    kw["s"] = 5.0
    return inner_scaled(x, **kw)  # <- refused


def sums_rows_in_a_loop(w, rows):
    s = 0.0
    for i in range(3):
        row = rows[i]
        s = s + np.sum(np.sin(row * w))
    return s


# --- dict.get: an item at a key, or the default --------------------------------------------


def get_in_dict(w, b):
    p = {"w": w, "b": b}
    return np.sum(np.tanh(p.get("w")) * p.get("b"))


def get_missing_default(w, s):
    p = {"w": w}
    return np.sum(p.get("scale", s) * p.get("w"))


def get_by_name(w, b, name="w"):
    p = {"w": w, "b": b}
    return np.sum(p.get(name) ** 2)


def get_in_loop(w, b):
    p = {"w": w, "b": b}
    total = 0.0
    for k in ("w", "b", "w"):
        total = total + np.sum(np.sin(p.get(k)))
    return total


def get_tuple_item(w, b):
    p = {"pair": (w, b)}
    first, second = p.get("pair")
    return np.sum(first * second)


@scaled(2.0)
def get_decorated(w, b):
    return np.sum(get_in_dict(w, b) * {"w": w}.get("w"))


def get_from_argument(p):
    return np.sum(np.exp(p.get("w")) * p.get("b", 1.0))


# --- an item handed back (by d.get, or by a helper) is still inside its container ---------


def first_of(xs):
    return xs[0]


def item_by_key(d):
    return d["a"]


def got_by_key(d):
    return d.get("a")


def first_of_pair(d):
    return first_of(d["pair"])


def write_into_got(x):
    w = {"a": x}.get("a")
    w[0] = 5.0  # <- refused
    return np.sum(w * x)


def add_into_got(x):
    d = {"a": x}
    w = d.get("a")
    w += 1.0  # <- refused
    return np.sum(x * w)


def write_into_first_of(x):
    w = first_of([x])
    w[0] = 5.0  # <- refused
    return np.sum(w * x)


def add_into_item_by_key(x):
    w = item_by_key({"a": x})
    w += 1.0  # <- refused
    return np.sum(w * x)


def add_into_got_by_helper(x):
    w = got_by_key({"a": x})
    w += 1.0  # <- refused
    return np.sum(w)


def write_into_nested_item(x):
    w = first_of_pair({"pair": (x, x)})
    w[0] = 2.0  # <- refused
    return np.sum(w * x)


def write_into_item_in_loop(x):
    total = 0.0
    for k in range(2):
        w = first_of([x, x * 2.0])
        w[0] = 1.0 * k  # <- refused
        total = total + np.sum(w * x)
    return total


def fresh_through_helper(x):
    w = first_of([x * 1.0])
    w = w + 1.0
    return np.sum(w * x)


def copy_of_item_written(x):
    w = first_of([x]).copy()
    w[0] = 5.0
    return np.sum(w * x)


class Doubling(dict):
    def get(self, key, default=None):
        return dict.get(self, key, default) * 2.0


def reads_doubling(d):
    return np.sum(d.get("a") ** 2)


def get_tuple_default(w, b):
    first, second = {"w": w}.get("pair", (w, b * 2.0))
    return np.sum(first * second)


def bound_sum(x):
    total = x.sum  # <- refused
    return total() * 2.0


def bound_get(x):
    d = {"a": x}
    get = d.get  # <- refused
    return np.sum(get("a") ** 2)


def bound_method_of_constant(x):
    make = np.ones(3).sum
    return np.sum(x * make())


def bound_method_of_a_temporary(x):
    total = (x * 2.0).sum  # <- refused
    return total()


class Scaling(dict):
    def __getitem__(self, key):
        return dict.get(self, key) * 3.0


class Plain(dict):
    """A subclass that reads like a dict: still a dict."""


def reads_by_key(d):
    return np.sum(d["a"] ** 2 + d.get("a"))
