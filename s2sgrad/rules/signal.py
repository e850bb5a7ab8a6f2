"""Rules for convolutions, gradients, integrals and selections: ``scipy.signal.convolve``
(n-d, where scipy is installed), ``np.gradient`` along one axis, ``np.trapezoid``,
``np.partition`` and ``np.select``.

A convolution is linear in each operand: the contribution to one operand is the correlation
of the cotangent with the other, a ``'valid'`` convolution of the cotangent (put back in its
window of the full convolution's zeros) with the other operand flipped along every axis. It
is written with ``scipy.signal.convolve`` itself, so second derivatives follow, and with the
call's ``method``, which changes rounding only. (``np.convolve`` has its rule in products.py.)

``np.gradient`` is linear in its array: its adjoint spreads each difference's cotangent back
onto the entries it was taken of. The rule covers one array differentiated along one axis
(``axis=k``, or a 1-d array) with a uniform spacing written as a number in the call and
``edge_order`` 1 or 2; the list ``np.gradient`` returns for several axes, and spacings given
as coordinates or computed values, are refused (divide by a computed spacing instead:
``np.gradient(f, axis=0) / h``). ``np.partition`` permutes entries, as ``np.sort`` does; the
permutation is read off the result, whose order between the kth entries NumPy leaves open.
``np.select`` gives each entry of the cotangent to the choice whose condition is the first
that holds there, and to ``default`` where none does. ``np.trapezoid(y, x)`` adds each
interval's width times its ends' mean: each entry of ``y`` gets the cotangent times half the
widths of the intervals it ends, each entry of ``x`` the cotangent times the difference of
the means of the intervals it starts and ends; a spacing ``dx`` the integral with unit
spacing.
"""

import numpy as np

from ..runtime.unbroadcast import unbroadcast
from .registry import jvp_rule, linear, vjp_rule, when_imported

scipy = None  # the package, once register_scipy has imported scipy.signal


# --- scipy.signal.convolve ------------------------------------------------------------------


def convolve(g, ans, in1, in2, mode="full", method="auto"):
    # The full convolution has shape n1 + n2 - 1 along each axis; 'same' keeps in1's shape from
    # (n2 - 1) // 2 on, and 'valid' the |n1 - n2| + 1 entries from min(n1, n2) - 1 on. With g
    # put back in that window, each contribution is a valid convolution with the other operand
    # flipped, whose shape is the operand's. (The window starts at 0 for 'full': the mode
    # picks the start by multiplying by the booleans of the comparisons.)
    n1 = np.asarray(np.shape(in1))
    n2 = np.asarray(np.shape(in2))
    start = (mode == "same") * ((n2 - 1) // 2) + (mode == "valid") * (np.minimum(n1, n2) - 1)
    g_full = np.pad(g, np.stack((start, n1 + n2 - 1 - start - np.asarray(np.shape(g))), axis=-1))
    return (scipy.signal.convolve(g_full, np.flip(in2), "valid", method),
            scipy.signal.convolve(g_full, np.flip(in1), "valid", method))


def convolve_jvp(g, ans, in1, in2, mode="full", method="auto"):
    return (scipy.signal.convolve(g, in2, mode, method),
            scipy.signal.convolve(in1, g, mode, method))


def register_scipy() -> None:
    """Register the rule of ``scipy.signal.convolve`` (nothing where SciPy is not installed).
    The templates above read the module through the global ``scipy``."""
    global scipy
    try:
        import scipy.signal
    except ImportError:
        scipy = None
        return
    vjp_rule(scipy.signal.convolve, shape=None)(convolve)
    jvp_rule(scipy.signal.convolve)(convolve_jvp)


when_imported("scipy.signal", register_scipy)


# --- np.gradient ----------------------------------------------------------------------------


def _one_axis_uniform_spacing(static, ndim):
    axis = static.get("axis")
    if isinstance(axis, tuple):
        return ("np.gradient(f, axis=(...)) returns a list of arrays, one per axis, which is "
                "not differentiated: call it once per axis, np.gradient(f, axis=k)")
    if axis is None and ndim("f") != 1:
        return ("np.gradient(f) of an array that may have more than one axis returns a list "
                "of arrays, one per axis, which is not differentiated: call it once per axis, "
                "np.gradient(f, axis=k)")
    spacing = static.get("varargs")
    if not (isinstance(spacing, tuple) and len(spacing) <= 1 and all(
            isinstance(h, (int, float)) and not isinstance(h, bool) for h in spacing)):
        return ("np.gradient(f, h) is differentiated for a uniform spacing written as a number "
                "in the call (np.gradient(f, 0.1)); coordinates, several spacings and spacings "
                "computed in the function are not: for a uniform spacing h write "
                "np.gradient(f, axis=k) / h")
    return None


@vjp_rule(np.gradient, shape="same", requires=_one_axis_uniform_spacing)
def gradient(g, ans, f, *varargs, axis=None, edge_order=1):
    # Along the axis (moved last), with step h and n entries: the interior entries are
    # (f[i + 1] - f[i - 1]) / 2h, and the ends take one-sided differences, of two entries for
    # edge_order 1 ((-2, 2, 0) / 2h at the start) and of three for edge_order 2 ((-3, 4, -1) /
    # 2h), mirrored at the end. With e = edge_order - 1 the end weights are (-2 - e, 2 + 2e,
    # -e) / 2h: the adjoint adds each row's cotangent times its weights to the entries the row
    # read. The end rows are built three entries wide and cut to n (n = 2 for edge_order 1).
    # axis None is that of a 1-d array, its axis 0.
    along = axis or 0
    h = np.prod(varargs)
    e = edge_order - 1
    moved = np.moveaxis(g, along, -1) / (2.0 * h)
    inner = moved[..., 1:-1]
    pair = np.zeros_like(moved[..., :2])
    first = moved[..., :1]
    final = moved[..., -1:]
    ends = (np.concatenate(((-2.0 - e) * first, (2.0 + 2.0 * e) * first, -e * first,
                            np.zeros_like(moved)), axis=-1)[..., :np.shape(moved)[-1]]
            + np.concatenate((np.zeros_like(moved), e * final, (-2.0 - 2.0 * e) * final,
                              (2.0 + e) * final), axis=-1)[..., -np.shape(moved)[-1]:])
    total = np.concatenate((pair, inner), axis=-1) - np.concatenate((inner, pair), axis=-1) + ends
    return np.moveaxis(total, -1, along)


# --- np.trapezoid ---------------------------------------------------------------------------


@vjp_rule(np.trapezoid, shape=None)
def trapezoid(g, ans, y, x=None, dx=1.0, axis=-1):
    # the intervals' widths h along the axis moved last (a 1-d x lies along the axis); each
    # entry of y ends the intervals before and after it: half their widths
    if x is None:
        h = dx * np.ones(np.shape(y)[axis] - 1)
    elif np.ndim(x) == 1:
        h = np.diff(x)
    else:
        h = np.diff(np.moveaxis(x, axis, -1), axis=-1)
    edge = np.zeros_like(h[..., :1])
    weights = (np.concatenate((edge, h), axis=-1) + np.concatenate((h, edge), axis=-1)) / 2.0
    g_last = np.expand_dims(g, -1)
    g_y = np.moveaxis(g_last * weights, -1, axis)
    # the integral is dx times the one with unit spacing; x_i starts interval i and ends
    # interval i - 1: the difference of their ends' means
    g_x = None
    g_dx = None
    if x is None:
        g_dx = np.sum(g * np.trapezoid(y, axis=axis))
    else:
        moved = np.moveaxis(y, axis, -1)
        means = (moved[..., 1:] + moved[..., :-1]) / 2.0
        zero = np.zeros_like(means[..., :1])
        g_moved = g_last * (np.concatenate((zero, means), axis=-1)
                            - np.concatenate((means, zero), axis=-1))
        if np.ndim(x) == 1:
            g_x = unbroadcast(g_moved, np.shape(x))
        else:
            g_x = np.moveaxis(g_moved, -1, axis)
    return g_y, g_x, g_dx


@jvp_rule(np.trapezoid)
def trapezoid_jvp(g, ans, y, x=None, dx=1.0, axis=-1):
    # linear in y; in x, the widths' tangents times the intervals' means
    t_y = np.trapezoid(g, x, dx=dx, axis=axis)
    t_x = None
    t_dx = None
    if x is None:
        t_dx = g * np.trapezoid(y, axis=axis)
    else:
        moved = np.moveaxis(y, axis, -1)
        means = (moved[..., 1:] + moved[..., :-1]) / 2.0
        if np.ndim(x) == 1:
            t_h = np.diff(g)
        else:
            t_h = np.diff(np.moveaxis(g, axis, -1), axis=-1)
        t_x = np.sum(t_h * means, axis=-1)
    return t_y, t_x, t_dx


# --- np.partition ---------------------------------------------------------------------------


def _partitions_along_an_axis(static, ndim):
    if static.get("axis", -1) is None and ndim("a") != 1:
        return ("np.partition(a, kth, axis=None) of an array that may have more than one axis "
                "flattens it, which this rule does not cover: write "
                "np.partition(np.ravel(a), kth)")
    return None


@vjp_rule(np.partition, shape="same", requires=_partitions_along_an_axis)
def partition(g, ans, a, kth, axis=-1, kind="introselect", order=None):
    # ans is a permutation of a along the axis. Sorting both gives it: ans[j] = a[perm[j]]
    # with perm = s_a[inverse of s_ans] (s_x sorts x), and the cotangent goes back through
    # the inverse permutation. Equal entries may be matched either way.
    perm = np.take_along_axis(np.argsort(a, axis=axis, kind="stable"),
                              np.argsort(np.argsort(ans, axis=axis, kind="stable"), axis=axis,
                                         kind="stable"), axis)
    return np.take_along_axis(g, np.argsort(perm, axis=axis), axis)


@jvp_rule(np.partition)
def partition_jvp(g, ans, a, kth, axis=-1, kind="introselect", order=None):
    # the tangent, taken at the same permutation
    perm = np.take_along_axis(np.argsort(a, axis=axis, kind="stable"),
                              np.argsort(np.argsort(ans, axis=axis, kind="stable"), axis=axis,
                                         kind="stable"), axis)
    return np.take_along_axis(g, perm, axis)


# --- np.select ------------------------------------------------------------------------------


def select_choices(g, condlist, choicelist) -> list:
    """The cotangents of ``np.select``'s choices: ``g`` where a choice's condition is the first
    that holds, reduced to the choice's shape."""
    taken = np.zeros(np.shape(g), dtype=bool)
    out = []
    for condition, choice in zip(condlist, choicelist, strict=True):
        out.append(unbroadcast(np.where(condition & ~taken, g, 0.0), np.shape(choice)))
        taken = taken | condition
    return out


def select_default(g, condlist, default) -> np.ndarray:
    """The cotangent of ``np.select``'s default: ``g`` where no condition holds."""
    taken = np.zeros(np.shape(g), dtype=bool)
    for condition in condlist:
        taken = taken | condition
    return unbroadcast(np.where(taken, 0.0, g), np.shape(default))


@vjp_rule(np.select, shape=None)
def select(g, ans, condlist, choicelist, default=0):
    return None, select_choices(g, condlist, choicelist), select_default(g, condlist, default)


# Forward mode: np.gradient and np.select are linear in their arrays (the choices and the
# default jointly), so the tangent is the same call on the tangents.
linear(np.gradient, np.select)
