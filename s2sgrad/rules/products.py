"""Rules for more products and for convolution (``einsum``, ``inner``, ``kron``, ``cross``,
``convolve``), for ``cumprod``, and for the elementwise ``fmax``/``fmin``, ``sinc`` and
``nan_to_num``.

The products are linear in each operand, so a contribution is the product taken again with the
cotangent in place of the output and the other operand in the rule's place: ``cross(b, g)`` for
``a`` in ``cross(a, b)``, a valid-mode convolution with the reversed other operand for
``convolve``. ``cross`` takes 3-vectors along any axes, with stacks that broadcast; 2-vectors,
which NumPy 2 deprecates, are not differentiated (the rule's own ``np.cross`` raises).
``convolve`` takes each of its modes, ``'full'``, ``'same'`` and ``'valid'`` (or 2, 1, 0).
``cumprod`` is exact where the input holds zeros, and divides only by nonzero entries.
``fmax``/``fmin`` split the gradient half and half at ties, as ``maximum``/``minimum`` do, and
give it to the number where the other operand is NaN. ``sinc`` has derivative 0 at 0.
``nan_to_num`` passes the gradient where the input is finite; a replacement value given as
``nan=``, ``posinf=`` or ``neginf=`` gets it where it replaced an entry (``copy=False``, which
writes into the input, is refused).

``einsum`` is linear in each operand: the contribution to operand k is the einsum of ``g``
with the other operands, out to operand k's subscripts. Its subscripts may repeat an index
(``'ii->i'``, the trace ``'ii'``) and hold indices found nowhere else (summed over in the
product): the contribution then spreads ``g`` over the diagonal, or along that axis, through
one more operand, a constant mask (identity tensors, vectors of ones). ``...`` is spelled
out with indices of its own, and where operand k was broadcast (a length-1 axis, fewer
axes under ``...``) its contribution is summed back to its shape. The subscripts are read
when the rule runs: the interleaved form ``einsum(a, [0, 1], b, [1, 2])`` is written as a
string where its sublists are literals (normalize/forms.py), and refused otherwise.
"""

import string
from collections import Counter

import numpy as np

from ..runtime.unbroadcast import unbroadcast
from .registry import jvp_rule, nondifferentiable, same_as, vjp_rule


@vjp_rule(np.inner, shape=None)
def inner(g, ans, a, b):
    # inner(a, b) contracts the last axes of a and b; g has a's other axes, then b's.
    if np.ndim(a) == 0:
        g_a = np.sum(g * b)
        g_b = g * a
    elif np.ndim(b) == 0:
        g_a = g * b
        g_b = np.sum(g * a)
    else:
        free_a = np.ndim(a) - 1
        g_a = np.tensordot(g, b, (np.arange(free_a, np.ndim(g)), np.arange(np.ndim(b) - 1)))
        g_b = np.tensordot(g, a, (np.arange(free_a), np.arange(free_a)))
    return g_a, g_b


@vjp_rule(np.kron, shape=None)
def kron(g, ans, a, b):
    # kron(a, b) at index i * shape(b) + j (per axis, the operand of lower rank padded with
    # leading axes of 1) is a[i] * b[j]. g read with the axes (a0, b0, a1, b1, ...) holds
    # that entry at [i0, j0, i1, j1, ...]: contract it with b over the b axes for a, with a
    # over the a axes for b.
    if np.ndim(a) == 0:
        g_a = np.sum(g * b)
        g_b = g * a
    elif np.ndim(b) == 0:
        g_a = g * b
        g_b = np.sum(g * a)
    else:
        rank = np.maximum(np.ndim(a), np.ndim(b))
        shape_a = (1,) * (rank - np.ndim(a)) + np.shape(a)
        shape_b = (1,) * (rank - np.ndim(b)) + np.shape(b)
        g_pairs = np.reshape(g, np.ravel(np.transpose((shape_a, shape_b))))
        g_a = np.reshape(np.tensordot(g_pairs, np.reshape(b, shape_b),
                                      (np.arange(1, 2 * rank, 2), np.arange(rank))), np.shape(a))
        g_b = np.reshape(np.tensordot(np.reshape(a, shape_a), g_pairs,
                                      (np.arange(rank), np.arange(0, 2 * rank, 2))), np.shape(b))
    return g_a, g_b


@vjp_rule(np.cross, shape=None)
def cross(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # c = a x b: <g, da x b> = <da, b x g> and <g, a x db> = <db, g x a>. These products put
    # the vector axis last; an operand that a stack broadcast against gets the sum over the
    # broadcast axes, then its vector axis goes back in place.
    if axis is None:
        in_a = axisa
        in_b = axisb
        in_c = axisc
    else:
        in_a = axis
        in_b = axis
        in_c = axis
    g_a = unbroadcast(np.cross(b, g, axisa=in_b, axisb=in_c), np.shape(np.moveaxis(a, in_a, -1)))
    g_b = unbroadcast(np.cross(g, a, axisa=in_c, axisb=in_a), np.shape(np.moveaxis(b, in_b, -1)))
    return np.moveaxis(g_a, -1, in_a), np.moveaxis(g_b, -1, in_b)


@vjp_rule(np.convolve, shape=None)
def convolve(g, ans, a, v, mode="full"):
    # The full convolution c[k] = sum_i a[i] v[k - i] has length m + n - 1; 'same' and
    # 'valid' keep a window of it. With g put back in its window of zeros,
    # a's cotangent is sum_k g[k] v[k - i], a valid convolution with v reversed (and
    # symmetrically for v). Operands of rank 0 count as vectors of length 1. NumPy also
    # takes the modes as numbers: 0 'valid', 1 'same', 2 'full'.
    m = np.size(a)
    n = np.size(v)
    if mode == "full" or mode == 2:
        g_full = g
    else:
        if mode == "same" or mode == 1:
            start = (np.minimum(m, n) - 1) // 2
        else:
            start = np.minimum(m, n) - 1
        g_full = np.concatenate((np.zeros(start, np.result_type(g)), g,
                                 np.zeros(m + n - 1 - start - np.size(g), np.result_type(g))))
    g_a = np.convolve(g_full, np.flip(np.ravel(v)), "valid")
    g_v = np.convolve(g_full, np.flip(np.ravel(a)), "valid")
    if np.ndim(a) == 0:
        g_a = np.reshape(g_a, ())
    if np.ndim(v) == 0:
        g_v = np.reshape(g_v, ())
    return g_a, g_v


@vjp_rule(np.cumprod, np.ndarray.cumprod, shape=None)
def cumprod(g, ans, a, axis=None, dtype=None, out=None):
    # y[k] = prod_{i <= k} a[i], so a[j] gets sum_{k >= j} g[k] prod_{i <= k, i != j} a[i].
    # Each such product splits into the nonzero entries, prod(nonzero up to k) / nonzero[j],
    # and the zeros among the others: none gives 1, one gives its value (0, but moving with
    # it, which keeps the second derivative exact), two or more give 0. `count` and `lone`
    # are the number and the sum of the zeros up to k; at a zero j itself, the others hold
    # count - 1 zeros, and the lone one is lone - a[j]. Sums over k >= j are cumulative sums
    # from the end.
    if axis is None:
        x = np.ravel(a)
        ax = 0
    else:
        x = a
        ax = axis
    zero = x == 0
    nonzero = np.where(zero, 1.0, x)
    count = np.cumsum(zero, ax)
    lone = np.cumsum(np.where(zero, x, 0.0), ax)
    scaled = g * np.cumprod(nonzero, ax)
    others = scaled * np.where(count == 0, 1.0, np.where(count == 1, lone, 0.0))
    at_one = np.where(count == 1, scaled, 0.0)
    at_two = np.where(count == 2, scaled, 0.0)
    from_nonzero = np.flip(np.cumsum(np.flip(others, ax), ax), ax) / nonzero
    from_zero = np.flip(np.cumsum(np.flip(at_one + at_two * lone, ax), ax), ax) - x * np.flip(
        np.cumsum(np.flip(at_two, ax), ax), ax)
    g_x = np.where(zero, from_zero, from_nonzero)
    if axis is None:
        g_x = np.reshape(g_x, np.shape(a))
    return g_x


# np.multiply.accumulate is np.cumprod along axis 0 (see reductions.py)
same_as(np.multiply.accumulate, np.cumprod, ("array", "axis", "dtype", "out"), axis=0)


@vjp_rule(np.fmax, shape="elementwise")
def fmax(g, ans, a, b):
    # As np.maximum, with ties split half and half; a NaN loses to a number (both NaN: the
    # result is NaN, and neither gets the gradient).
    tie = np.where(a == b, 0.5 * g, 0.0)
    return (np.where((a > b) | (np.isnan(b) & ~np.isnan(a)), g, tie),
            np.where((b > a) | (np.isnan(a) & ~np.isnan(b)), g, tie))


@vjp_rule(np.fmin, shape="elementwise")
def fmin(g, ans, a, b):
    tie = np.where(a == b, 0.5 * g, 0.0)
    return (np.where((a < b) | (np.isnan(b) & ~np.isnan(a)), g, tie),
            np.where((b < a) | (np.isnan(a) & ~np.isnan(b)), g, tie))


@vjp_rule(np.sinc, shape="elementwise")
def sinc(g, ans, x):
    # sinc(x) = sin(pi x) / (pi x), and 1 at 0: the derivative is (cos(pi x) - sinc(x)) / x,
    # and 0 at 0. Near 0 the difference cancels. There its series, the sum over n >= 1 of
    # (-1)^n 2n pi^2n x^(2n-1) / (2n + 1)!, taken to n = 5 (relative error below 1e-15 for
    # |x| < 0.05), is used instead: it is exact at 0, and so is its own derivative,
    # sinc''(0) = -pi^2 / 3.
    small = np.abs(x) < 0.05
    x2 = x * x
    series = x * (-np.pi ** 2 / 3.0 + x2 * (np.pi ** 4 / 30.0 + x2 * (
        -np.pi ** 6 / 840.0 + x2 * (np.pi ** 8 / 45360.0 - x2 * np.pi ** 10 / 3991680.0))))
    return g * np.where(small, series, (np.cos(np.pi * x) - ans) / np.where(small, 1.0, x))


def _copies(static, ndim):
    """nan_to_num(copy=False) writes into its input, which the gradient cannot follow."""
    if static.get("copy", True) is True:
        return None
    return ("np.nan_to_num(..., copy=False) replaces entries of its input in place, which the "
            "gradient cannot follow: leave copy at its default, True, and use the result")


@vjp_rule(np.nan_to_num, shape="same", requires=_copies)
def nan_to_num(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # Finite entries pass through; each NaN, +inf and -inf is replaced by a value (the
    # largest finite floats by default), which collects the gradient of the entries it
    # replaced.
    return (np.where(np.isfinite(x), g, 0.0), None, np.sum(np.where(np.isnan(x), g, 0.0)),
            np.sum(np.where(x == np.inf, g, 0.0)), np.sum(np.where(x == -np.inf, g, 0.0)))


# --- einsum ------------------------------------------------------------------------------


def _einsum_parts(subscripts, ranks):
    """The letters of each operand's subscripts and of the output's, with ``...`` spelled
    out (the broadcast ``...`` of every operand, right-aligned, as NumPy does), and the
    letters the subscripts leave free."""
    if not isinstance(subscripts, str):
        raise TypeError("np.einsum's interleaved form (operand, sublist, ..., [sublistout]) "
                        "is not differentiated: write the subscripts as a string, "
                        "np.einsum('ij,jk->ik', a, b)")
    text = subscripts.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    specs = lhs.split(",")
    free = [c for c in string.ascii_letters if c not in text]
    widths = [r - len(spec.replace("...", "")) for spec, r in zip(specs, ranks, strict=True)]
    dots = max([w for spec, w in zip(specs, widths, strict=True) if "..." in spec], default=0)
    ellipsis, free = free[:dots], free[dots:]

    def spelled(spec, width):
        head, mark, tail = spec.partition("...")
        return list(head) + (ellipsis[dots - width:] if mark else []) + list(tail)

    inputs = [spelled(spec, w) for spec, w in zip(specs, widths, strict=True)]
    if arrow:
        output = spelled(rhs, dots)
    else:  # implicit: the broadcast axes, then the indices that appear once, sorted
        counts = Counter(c for spec in specs for c in spec.replace("...", ""))
        output = (ellipsis if "..." in lhs else []) + sorted(c for c, n in counts.items()
                                                             if n == 1)
    return inputs, output, free


def _operand_plan(subscripts, k, operands):
    """(subscripts, mask) of operand k's contribution: g and the other operands, and a mask
    over the indices g and the others do not give it: a repeated index's diagonal (an
    identity tensor; the repeats get letters of their own) and an index of operand k alone
    (ones)."""
    shape = np.shape(operands[k])
    inputs, output, free = _einsum_parts(subscripts, [np.ndim(o) for o in operands])
    mine = inputs[k]
    others = [spec for j, spec in enumerate(inputs) if j != k]
    elsewhere = set(output).union(*others)
    groups, target = {}, []
    for c in mine:
        if c in groups:
            groups[c].append(free.pop(0))
            target.append(groups[c][-1])
        else:
            groups[c] = [c]
            target.append(c)
    mask, letters = np.ones(()), []
    for c, group in groups.items():
        size = shape[mine.index(c)]
        if len(group) > 1:
            diagonal = np.zeros((size,) * len(group))
            diagonal[(np.arange(size),) * len(group)] = 1.0
            mask, letters = np.multiply.outer(mask, diagonal), letters + group
        elif c not in elsewhere:
            mask, letters = np.multiply.outer(mask, np.ones(size)), letters + group
    spec = ",".join("".join(s) for s in [output, *others, letters]) + "->" + "".join(target)
    return spec, mask


def einsum_spec(subscripts, k, operands):
    """The subscripts of operand k's contribution: ``g, others..., mask -> operand k``."""
    return _operand_plan(subscripts, k, operands)[0]


def einsum_mask(subscripts, k, operands):
    """The constant mask operand of operand k's contribution (see ``_operand_plan``)."""
    return _operand_plan(subscripts, k, operands)[1]


def einsum_rows(subscripts, k, operands):
    """The subscripts of the product with operands[k] replaced by rows of tangents (one more
    leading axis, which the output keeps first): a batch of directions in one call."""
    inputs, output, free = _einsum_parts(subscripts, [np.ndim(o) for o in operands])
    inputs[k] = [free[0]] + inputs[k]
    return ",".join("".join(s) for s in inputs) + "->" + free[0] + "".join(output)


def einsum_path(optimize):
    """``optimize=`` for a contribution: a path computed for the product itself (a list)
    does not fit the contribution's operands, which then find their own."""
    return True if isinstance(optimize, (list, tuple)) else optimize


# Integers and strings computed from the subscripts and the operands' shapes
nondifferentiable(einsum_spec, einsum_mask, einsum_rows, einsum_path,
                  why="the subscripts and masks of einsum's contributions depend on shapes")


def _subscripts_string(static, ndim):
    subscripts = static.get("subscripts")
    if not isinstance(subscripts, str) and ndim("subscripts") is not None:
        return ("np.einsum in the interleaved form (operand, sublist, ..., [sublistout]) is "
                "differentiated where its sublists are written as literal lists of ints, not "
                "here: write them so, or the subscripts as a string, "
                "np.einsum('ij,jk->ik', a, b)")
    return None


@vjp_rule(np.einsum, shape=None, requires=_subscripts_string, held=("subscripts",), each="k")
def einsum(g, ans, subscripts, *operands, out=None, optimize=False, k=0):
    # The product is linear in operands[k]: its contribution is the product of g with the
    # other operands (and the mask), out to operands[k]'s indices.
    others = operands[:k] + operands[k + 1:]
    part = np.einsum(einsum_spec(subscripts, k, operands), g, *others,
                     einsum_mask(subscripts, k, operands), optimize=einsum_path(optimize))
    return None, unbroadcast(part, np.shape(operands[k]))


# --- forward mode: g is the tangent of one operand; each rule gives the output's tangent ----


@jvp_rule(np.einsum)
def einsum_jvp(g, ans, subscripts, *operands, out=None, optimize=False, k=0):
    # the same product, operands[k] replaced by its tangent
    moved = operands[:k] + (g,) + operands[k + 1:]
    return None, np.einsum(subscripts, *moved, optimize=optimize)


@jvp_rule(np.inner)
def inner_jvp(g, ans, a, b):
    return np.inner(g, b), np.inner(a, g)


@jvp_rule(np.kron)
def kron_jvp(g, ans, a, b):
    return np.kron(g, b), np.kron(a, g)


@jvp_rule(np.cross)
def cross_jvp(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return (np.cross(g, b, axisa, axisb, axisc, axis), np.cross(a, g, axisa, axisb, axisc, axis))


@jvp_rule(np.convolve)
def convolve_jvp(g, ans, a, v, mode="full"):
    return np.convolve(g, v, mode), np.convolve(a, g, mode)


@jvp_rule(np.cumprod, np.ndarray.cumprod)
def cumprod_jvp(g, ans, a, axis=None, dtype=None, out=None):
    # dy[k] = sum_{j <= k} g[j] prod_{i <= k, i != j} a[i], with the products split as in the
    # vjp rule: prod(nonzero up to k) times the zeros among the others. For a nonzero j these
    # are the zeros up to k (1, lone, or 0 as there are none, one, or more); for a zero j,
    # the count - 1 others (1 where count is 1, lone - a[j] where it is 2).
    if axis is None:
        x = np.ravel(a)
        dx = np.ravel(g)
        ax = 0
    else:
        x = a
        dx = g
        ax = axis
    zero = x == 0
    nonzero = np.where(zero, 1.0, x)
    count = np.cumsum(zero, ax)
    lone = np.cumsum(np.where(zero, x, 0.0), ax)
    from_nonzero = np.cumsum(np.where(zero, 0.0, dx / nonzero), ax)
    from_zero = np.cumsum(np.where(zero, dx, 0.0), ax)
    from_zero_x = np.cumsum(np.where(zero, dx * x, 0.0), ax)
    return np.cumprod(nonzero, ax) * (
        from_nonzero * np.where(count == 0, 1.0, np.where(count == 1, lone, 0.0))
        + np.where(count == 1, from_zero, 0.0)
        + np.where(count == 2, lone * from_zero - from_zero_x, 0.0))


@jvp_rule(np.nan_to_num)
def nan_to_num_jvp(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return (np.where(np.isfinite(x), g, 0.0), None, np.where(np.isnan(x), g, 0.0),
            np.where(x == np.inf, g, 0.0), np.where(x == -np.inf, g, 0.0))
