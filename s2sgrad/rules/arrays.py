"""Rules for array manipulation: triangles, diagonals, differences, repeats and tiles, padding,
flips and rotations, the stacking and splitting functions, ``atleast_1d/2d/3d``, ``append``,
``take_along_axis``, ``sort``, and the real part, imaginary part and conjugate of a real array
(and ``real_if_close`` of one, the array itself).

Each of these moves, copies or selects entries, or takes fixed linear combinations of them
(``diff``), so forward mode applies the function itself to the tangents, and each cotangent is
the transposed move: the selected entries' cotangents put back in place (``tril``,
``diagonal``, ``pad``), copies' cotangents added up (``repeat``, ``tile``), differences
transposed (``diff``), a permutation undone (``sort``). The stacking functions number the
entries of their items and stack the numbers the same way, which says where each entry of
the cotangent goes back to. The splitting functions return a list of pieces: its cotangent
holds one cotangent per piece (zeros for a piece that is not used), put back together along
the axis they were cut on. ``atleast_1d/2d/3d`` of several arrays return a tuple, each item
the array with axes of length 1 added, whose cotangent is reshaped back.
"""

import numpy as np

from ..runtime.containers import flat_pieces
from ..runtime.unbroadcast import unbroadcast
from .registry import One, jvp_rule, linear, vjp_rule

# --- triangles, diagonals, flips and rotations ------------------------------------------------


def _matrix_only(name):
    def check(static, ndim):
        if ndim("m") == 1:
            return (f"np.{name} of a 1-d array builds a matrix out of it, which is not "
                    f"differentiated: broadcast it to the matrix first, "
                    f"np.{name}(np.broadcast_to(v, (np.size(v), np.size(v))))")
        return None
    return check


@vjp_rule(np.tril, shape="same", requires=_matrix_only("tril"))
def tril(g, ans, m, k=0):
    # The entries on and below diagonal k are kept, the others are zero: the cotangent
    # passes through the same mask.
    return np.tril(g, k)


@vjp_rule(np.triu, shape="same", requires=_matrix_only("triu"))
def triu(g, ans, m, k=0):
    return np.triu(g, k)


@vjp_rule(np.diagonal, np.ndarray.diagonal, shape=None)
def diagonal(g, ans, a, offset=0, axis1=0, axis2=1):
    # ans[..., i] = a[i + r, i + offset + r] over axis1 and axis2, with r = max(-offset, 0).
    # Padding g along its last axis to the length of axis1 puts ans[..., i] at row i + r;
    # times the mask of diagonal `offset`, each row lands on its diagonal entry (rows
    # outside the diagonal are zero, or meet a zero row of the mask).
    rows = np.shape(a)[axis1]
    before = np.minimum(np.maximum(-offset, 0), rows)
    widths = np.append(np.zeros((np.ndim(g) - 1, 2), np.intp),
                       [[before, rows - before - np.shape(g)[-1]]], axis=0)
    mask = np.eye(rows, np.shape(a)[axis2], offset, dtype=np.result_type(g))
    square = np.expand_dims(np.pad(g, widths), -1) * mask
    return np.moveaxis(square, (-2, -1), (axis1, axis2))


@vjp_rule(np.fliplr, shape="same")
def fliplr(g, ans, m):
    return np.fliplr(g)


@vjp_rule(np.flipud, shape="same")
def flipud(g, ans, m):
    return np.flipud(g)


@vjp_rule(np.rot90, shape="permute")
def rot90(g, ans, m, k=1, axes=(0, 1)):
    # Turning back by the same quarter turns in the same plane undoes the rotation.
    return np.rot90(g, -k, axes)


@vjp_rule(np.rollaxis, shape="permute")
def rollaxis(g, ans, a, axis, start=0):
    # rollaxis puts `axis` just before `start`: after taking it out, `start` counts one
    # axis less if it came after it. Moving it back from there undoes the roll.
    n = np.ndim(a)
    source = np.mod(axis, n)
    before = start + n * (start < 0)
    return np.moveaxis(g, before - (source < before), source)


# --- differences, repeats and tiles ------------------------------------------------------------


def _without_ends(static, ndim):
    given = [name for name in ("prepend", "append") if static.get(name) is not None]
    if given:
        return (f"np.diff(..., {given[0]}=...) is not differentiated: concatenate the values "
                "first, np.diff(np.concatenate([before, a, after], axis), n, axis)")
    return None


@vjp_rule(np.diff, shape="permute", requires=_without_ends)
def diff(g, ans, a, n=1, axis=-1, prepend=None, append=None):
    # One difference D (out[i] = a[i + 1] - a[i]) has the transpose
    # D^T g = -diff(g with one zero added at each end); so (D^n)^T g is (-1)^n times the n-th
    # difference of g with n zeros added at each end, along the same axis.
    along = np.arange(np.ndim(a)) == np.mod(axis, np.ndim(a))
    widths = np.expand_dims(np.where(along, n, 0), -1)
    return np.diff(np.pad(g, widths), n, axis) * (-1) ** n


@vjp_rule(np.repeat, np.ndarray.repeat, shape=None)
def repeat(g, ans, a, repeats, axis=None):
    # Entry j of a (along axis, or of a flattened a) is copied repeats[j] times in a row: its
    # cotangent is the sum of the cotangents of its copies. The axis goes first, then each
    # run of copies is summed.
    if axis is None:
        moved = g
        count = np.size(a)
    else:
        moved = np.moveaxis(g, axis, 0)
        count = np.shape(a)[axis]
    if np.ndim(repeats) == 0:
        # the same number of copies of each: one axis of copies to sum over
        runs = np.sum(np.reshape(moved, (count, repeats) + np.shape(moved)[1:]), axis=1)
    else:
        # a number of copies each: the difference of running sums at the ends of the runs
        copies = np.broadcast_to(repeats, (count,))
        ends = np.cumsum(copies)
        running = np.cumsum(np.concatenate([np.zeros_like(moved[:1]), moved]), axis=0)
        runs = running[ends] - running[ends - copies]
    if axis is None:
        g_a = np.reshape(runs, np.shape(a))
    else:
        g_a = np.moveaxis(runs, 0, axis)
    return g_a


@vjp_rule(np.tile, shape=None)
def tile(g, ans, A, reps):
    # With A's shape and reps both padded with leading 1s to the output's rank d, output axis
    # j holds reps[j] copies of A's axis j: split it into (copy, entry) axes, move the copy
    # axes first and sum over every copy.
    d = np.ndim(g)
    shape = np.pad(np.asarray(np.shape(A), np.intp), (d - np.ndim(A), 0), constant_values=1)
    copies = np.pad(np.reshape(reps, -1), (d - np.size(reps), 0), constant_values=1)
    split = np.reshape(g, np.ravel(np.stack([copies, shape], axis=1)))
    copies_first = np.transpose(split, np.append(np.arange(0, 2 * d, 2),
                                                 np.arange(1, 2 * d, 2)))
    blocks = np.reshape(copies_first, (np.prod(copies), np.size(A)))
    return np.reshape(np.sum(blocks, axis=0), np.shape(A))


# --- padding -------------------------------------------------------------------------------------


# the modes that copy entries of the array into the padding
COPYING = ("reflect", "symmetric", "edge", "wrap")


def _copying_mode(static, ndim):
    mode = static.get("mode", "constant")
    if mode == "constant" or mode in COPYING and static.get("reflect_type", "even") == "even":
        return None
    shown = repr(mode) if isinstance(mode, str) else "that is not a literal string"
    return (f"np.pad(..., mode={shown}) is not differentiated: the modes with a rule are "
            f"'constant' (the default) and those that copy entries ({', '.join(COPYING)}; "
            "reflect_type='even'). Build other paddings from slices of the array and "
            "np.concatenate, which are differentiated")


@vjp_rule(np.pad, shape="permute", requires=_copying_mode)
def pad(g, ans, array, pad_width, mode="constant", constant_values=0, reflect_type="even"):
    if mode == "constant":
        # array's entries sit inside the padding in their own order: the same padding of a
        # mask of ones picks their cotangents out of g.
        inside = np.pad(np.ones(np.shape(array), np.bool_), pad_width)
        g_array = np.reshape(g[inside], np.shape(array))
        # The padding value: one, or one per axis and side, broadcast to (before, after)
        # pairs as np.pad does. The axes are padded in order, so where two pads cross, the
        # later axis's value is kept: padding zeros with the pairs' numbers 1, 2, ... says
        # which value each entry holds, and bincount adds up the cotangent of each (number 0
        # is array's).
        count = 2 * np.ndim(array) + 1
        pairs = np.reshape(np.arange(1, count), (np.ndim(array), 2))
        holder = np.pad(np.zeros(np.shape(array), np.intp), pad_width, constant_values=pairs)
        sums = np.asarray(np.bincount(np.ravel(holder), np.ravel(g), count), np.result_type(g))
        g_values = unbroadcast(np.reshape(sums[1:], (np.ndim(array), 2)),
                               np.shape(constant_values))
    else:
        # A copying mode: the positions of array's entries, padded the same way, say which
        # entry each output entry copies; bincount adds up the cotangents of its copies.
        source = np.pad(np.reshape(np.arange(np.size(array)), np.shape(array)), pad_width, mode)
        g_array = np.reshape(np.asarray(np.bincount(np.ravel(source), np.ravel(g), np.size(
            array)), np.result_type(g)), np.shape(array))
        g_values = None
    return g_array, None, None, g_values


# --- stacking and appending ---------------------------------------------------------------------
#
# Numbering the items' entries 0, 1, ... one item after the other (flat_pieces) and stacking
# the numbers as the items were stacked puts at each position of the output the number of the
# item entry found there. Sorted by those numbers, the cotangent's entries run item by item,
# each item's in its own order: flat_pieces cuts them into one cotangent per item.


@vjp_rule(np.hstack, shape=None)
def hstack(g, ans, tup, *, dtype=None, casting="same_kind"):
    numbers = np.hstack(flat_pieces(np.arange(np.size(g)), tup))
    return (flat_pieces(np.ravel(g)[np.argsort(np.ravel(numbers))], tup),)


@vjp_rule(np.dstack, shape=None)
def dstack(g, ans, tup):
    numbers = np.dstack(flat_pieces(np.arange(np.size(g)), tup))
    return (flat_pieces(np.ravel(g)[np.argsort(np.ravel(numbers))], tup),)


@vjp_rule(np.column_stack, shape=None)
def column_stack(g, ans, tup):
    numbers = np.column_stack(flat_pieces(np.arange(np.size(g)), tup))
    return (flat_pieces(np.ravel(g)[np.argsort(np.ravel(numbers))], tup),)


# np.row_stack, an alias of vstack deprecated in NumPy 2.0, where it is still there
row_stacks = [f for f in (getattr(np, "row_stack", None),) if f is not None]


@vjp_rule(np.vstack, *row_stacks, shape=None)
def vstack(g, ans, tup, *, dtype=None, casting="same_kind"):
    # The items (as rows, 1-d ones) are stacked along the first axis, so the flat output is
    # the items' flat entries one item after the other.
    return (flat_pieces(np.ravel(g), tup),)


@vjp_rule(np.append, shape=None)
def append(g, ans, arr, values, axis=None):
    # arr's entries come first, then values' (both flattened when axis is None).
    if axis is None:
        size = np.size(arr)
        g_arr = np.reshape(g[:size], np.shape(arr))
        g_values = np.reshape(g[size:], np.shape(values))
    else:
        length = np.shape(arr)[axis]
        moved = np.moveaxis(g, axis, 0)
        g_arr = np.moveaxis(moved[:length], 0, axis)
        g_values = np.moveaxis(moved[length:], 0, axis)
    return g_arr, g_values


# --- splitting ----------------------------------------------------------------------------------


def _pieces(static, ndim):
    """As many pieces as sections, or one more than the indices cut at; each of the array's
    rank. Unknown where the sections are computed."""
    sections = static.get("indices_or_sections")
    if isinstance(sections, (tuple, list)):
        count = len(sections) + 1
    elif isinstance(sections, int) and not isinstance(sections, bool):
        count = sections
    else:
        return None
    return (ndim("ary"),) * count


@vjp_rule(np.split, np.array_split, shape="list", items=_pieces)
def split(g, ans, ary, indices_or_sections, axis=0):
    # the pieces' cotangents, in order along the axis the array was cut on
    return np.concatenate(g, axis=axis)


@vjp_rule(np.hsplit, shape="list", items=_pieces)
def hsplit(g, ans, ary, indices_or_sections):
    # hsplit cuts along the second axis, a 1-d array along its only one
    if np.ndim(ary) == 1:
        g_ary = np.concatenate(g, axis=0)
    else:
        g_ary = np.concatenate(g, axis=1)
    return g_ary


@vjp_rule(np.vsplit, shape="list", items=_pieces)
def vsplit(g, ans, ary, indices_or_sections):
    return np.concatenate(g, axis=0)


@vjp_rule(np.dsplit, shape="list", items=_pieces)
def dsplit(g, ans, ary, indices_or_sections):
    return np.concatenate(g, axis=2)


# --- atleast_1d, atleast_2d, atleast_3d -------------------------------------------------------


def _at_least(rank):
    def items(static, ndim):
        ranks = tuple(None if r is None else max(r, rank) for r in ndim("arys"))
        return One(ranks[0]) if len(ranks) == 1 else ranks
    return items


@vjp_rule(np.atleast_1d, shape="tuple", items=_at_least(1), each="k")
def atleast_1d(g, ans, *arys, k=0):
    # One array gives that array, several a tuple of them; axes of length 1 were added, so
    # the cotangent of arys[k] is its own (an item of g's for several), reshaped back.
    if len(arys) == 1:
        g_k = g
    else:
        g_k = g[k]
    return np.reshape(g_k, np.shape(arys[k]))


vjp_rule(np.atleast_2d, shape="tuple", items=_at_least(2), each="k")(atleast_1d)
vjp_rule(np.atleast_3d, shape="tuple", items=_at_least(3), each="k")(atleast_1d)


# --- gathers and sorting -------------------------------------------------------------------------


@vjp_rule(np.take_along_axis, shape=None)
def take_along_axis(g, ans, arr, indices, axis=-1):
    # Taking the flat positions of arr the same way says which entry of arr (broadcast against
    # indices) each output entry is; bincount adds up the cotangents of repeated ones.
    source = np.take_along_axis(np.reshape(np.arange(np.size(arr)), np.shape(arr)), indices,
                                axis)
    g_flat = np.bincount(np.ravel(source), np.ravel(g), np.size(arr))
    # bincount sums in float64: give the gradient the cotangent's dtype back
    return np.reshape(np.asarray(g_flat, dtype=np.result_type(g)), np.shape(arr)), None


def _sorts_along_an_axis(static, ndim):
    if static.get("axis", -1) is None and ndim("a") != 1:
        return ("np.sort(a, axis=None) of an array that may have more than one axis "
                "flattens it, which this rule does not cover: write np.sort(np.ravel(a))")
    return None


@vjp_rule(np.sort, shape="same", requires=_sorts_along_an_axis)
def sort(g, ans, a, axis=-1, kind=None, order=None, *, stable=None):
    # ans is a taken at the sorting permutation; the inverse permutation takes each entry's
    # cotangent back to where it came from. Equal entries may be matched either way.
    perm = np.argsort(a, axis=axis, kind="stable")
    return np.take_along_axis(g, np.argsort(perm, axis=axis), axis)


# --- real and imaginary parts, conjugates -----------------------------------------------------
# Cotangents of complex values follow registry.py's convention (dL/dx - i dL/dy for
# z = x + iy): the real part hands g to z as a complex cotangent, the imaginary part -1j * g,
# the conjugate the conjugate of g. For a real array the real part and the conjugate are the
# array itself, and the imaginary part is zeros whatever the array.


@vjp_rule(np.real, shape="elementwise", complex="real")
def real(g, ans, val):
    if np.iscomplexobj(val):
        g_val = g + 0j
    else:
        g_val = g
    return g_val


@vjp_rule(np.real_if_close, shape="same")
def real_if_close(g, ans, a, tol=100):
    # The identity on a real array. Of a complex one it is the real part or the array itself,
    # as the values decide: the rule is written for real arrays only (complex ones are refused).
    return g


@vjp_rule(np.imag, shape="elementwise", complex="real")
def imag(g, ans, val):
    if np.iscomplexobj(val):
        g_val = -1j * g
    else:
        g_val = None
    return g_val


@vjp_rule(np.conjugate, np.ndarray.conj, np.ndarray.conjugate, shape="elementwise",
          complex=True)  # np.conj is the same ufunc
def conjugate(g, ans, x):
    if np.iscomplexobj(x):
        g_x = np.conjugate(g)
    else:
        g_x = g
    return g_x


@vjp_rule(np.angle, shape="elementwise", complex="real")
def angle(g, ans, z, deg=False):
    # d angle = Im(conj(z) dz) / |z|^2; 0 at z = 0 (as np.abs's); constant on the reals
    if deg:
        scale = 180.0 / np.pi
    else:
        scale = 1.0
    if np.iscomplexobj(z):
        squared = np.real(z * np.conjugate(z))
        g_z = -1j * g * scale * np.conjugate(z) / (squared + (squared == 0))
    else:
        g_z = None
    return g_z


# --- forward mode ------------------------------------------------------------------------------

@jvp_rule(np.real)
def real_jvp(g, ans, val):
    return np.real(g)


@jvp_rule(np.imag)
def imag_jvp(g, ans, val):
    if np.iscomplexobj(val):
        t = np.imag(g)
    else:
        t = None
    return t


@jvp_rule(np.conjugate, np.ndarray.conj, np.ndarray.conjugate)
def conjugate_jvp(g, ans, x):
    return np.conjugate(g)


@jvp_rule(np.angle)
def angle_jvp(g, ans, z, deg=False):
    if deg:
        scale = 180.0 / np.pi
    else:
        scale = 1.0
    if np.iscomplexobj(z):
        squared = np.real(z * np.conjugate(z))
        t = scale * np.imag(np.conjugate(z) * g) / (squared + (squared == 0))
    else:
        t = None
    return t


# Each of these is linear in its array arguments: the tangent is the same call on the tangents
# (np.pad's padding value moves with its own tangent, and is zero when it is a constant).
linear(np.real_if_close)
linear(np.tril, np.triu, np.diagonal, np.ndarray.diagonal, np.fliplr, np.flipud, np.rot90,
       np.rollaxis, np.diff, np.repeat, np.ndarray.repeat, np.tile, np.pad, np.hstack,
       np.dstack, np.column_stack, np.vstack, *row_stacks, np.append, np.take_along_axis,
       np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.atleast_1d, np.atleast_2d,
       np.atleast_3d)


@jvp_rule(np.sort)
def sort_jvp(g, ans, a, axis=-1, kind=None, order=None, *, stable=None):
    # the tangent, taken at the same permutation
    return np.take_along_axis(g, np.argsort(a, axis=axis, kind="stable"), axis)
