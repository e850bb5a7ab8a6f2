"""Rules for functions that move entries without changing them: indexing, transposes,
reshapes, axis moves, flips, copies and casts.

The contribution is the cotangent moved back: scattered to the indexed positions, permuted
back, or reshaped to the input's shape (in the same ``order``, which makes it the inverse of
``reshape`` and ``ravel``).
"""

import operator

import numpy as np

from ..runtime.containers import inverse_axes
from ..runtime.indexing import item_rows, rows_with_item
from ..runtime.unbroadcast import unbroadcast
from .registry import linear, vjp_rule


@vjp_rule(operator.getitem, shape=None, complex=True)
def getitem(g, ans, a, index):
    # Indexing the flat positions of a with the same index finds where each output entry
    # came from, for any index (slices, integers, masks, arrays with repeats); bincount then
    # sums the cotangent into those positions, adding up repeated ones.
    source = np.reshape(np.arange(np.size(a)), np.shape(a))[index]
    g_flat = np.bincount(np.ravel(source), np.ravel(g), np.size(a))
    # bincount sums in float64: give the gradient the cotangent's dtype back
    return np.reshape(np.asarray(g_flat, dtype=np.result_type(g)), np.shape(a))


@vjp_rule(item_rows, shape=None)
def item_rows_(g, ans, rows, index):
    # the batched tangent's item: the rows get g back where it came from
    return (rows_with_item(rows, index, g),)


@vjp_rule(np.transpose, shape="transpose", complex=True)
def transpose(g, ans, a, axes=None):
    if axes is None:
        g_a = np.transpose(g)
    else:
        g_a = np.transpose(g, inverse_axes(axes, np.ndim(a)))
    return g_a


@vjp_rule(np.ndarray.transpose, shape="transpose", complex=True)
def transpose_method(g, ans, a, *axes):
    # x.transpose() / x.transpose((1, 0, 2)) / x.transpose(1, 0, 2)
    if np.size(axes) == 0:
        g_a = np.transpose(g)
    else:
        g_a = np.transpose(g, inverse_axes(axes, np.ndim(a)))
    return g_a


@vjp_rule(np.ndarray.T, shape="transpose", complex=True)
def T(g, ans, a):
    return np.transpose(g)


@vjp_rule(np.ndarray.real, shape="same", complex="real")
def real_part(g, ans, a):
    # as np.real's (arrays.py): g as a complex cotangent; x.real of a real array is the array
    if np.iscomplexobj(a):
        g_a = g + 0j
    else:
        g_a = g
    return g_a


@vjp_rule(np.ndarray.imag, shape="same", complex="real")
def imaginary_part(g, ans, a):
    # as np.imag's; x.imag of a real array is zeros, whatever the array
    if np.iscomplexobj(a):
        g_a = -1j * g
    else:
        g_a = None
    return g_a


@vjp_rule(np.swapaxes, np.ndarray.swapaxes, shape="permute", complex=True)
def swapaxes(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


@vjp_rule(np.moveaxis, shape="permute", complex=True)
def moveaxis(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)


@vjp_rule(np.flip, shape="same", complex=True)
def flip(g, ans, m, axis=None):
    return np.flip(g, axis)


@vjp_rule(np.reshape, shape=None, complex=True)
def reshape(g, ans, a, shape, order="C", copy=None):
    return np.reshape(g, np.shape(a), order=order)


@vjp_rule(np.ndarray.reshape, shape=None, complex=True)
def reshape_method(g, ans, a, *shape, order="C", copy=None):
    # x.reshape(3, 4) and x.reshape((3, 4)) both bind: the shape is not needed anyway.
    return np.reshape(g, np.shape(a), order=order)


@vjp_rule(np.ravel, np.ndarray.ravel, np.ndarray.flatten, shape=None, complex=True)
def ravel(g, ans, a, order="C"):
    return np.reshape(g, np.shape(a), order=order)


@vjp_rule(np.squeeze, np.ndarray.squeeze, shape=None, complex=True)
def squeeze(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


@vjp_rule(np.expand_dims, shape=None, complex=True)
def expand_dims(g, ans, a, axis):
    return np.reshape(g, np.shape(a))


@vjp_rule(np.copy, shape="same", complex=True)
def copy(g, ans, a, order="K", subok=False):
    return g


@vjp_rule(np.ndarray.copy, shape="same", complex=True)
def copy_method(g, ans, a, order="C"):
    return g


@vjp_rule(np.ndarray.astype, shape="same")
def astype(g, ans, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    # The cotangent keeps the output's dtype: casting it back to an integer input would
    # truncate it.
    return g


matrix_transposes = [
    f
    for f in (
        getattr(np, "matrix_transpose", None),  # NumPy 2
        getattr(getattr(np, "linalg", None), "matrix_transpose", None),
        getattr(np.ndarray, "mT", None),
    )
    if f is not None
]

if matrix_transposes:

    @vjp_rule(*matrix_transposes, shape="permute", complex=True)
    def matrix_transpose(g, ans, x):
        return np.swapaxes(g, -1, -2)


@vjp_rule(np.asarray, np.asanyarray, shape="same", complex=True)
def asarray(g, ans, a, dtype=None, order=None):
    # The identity on an array; a scalar becomes a 0-d array, so give g its shape back.
    return np.reshape(g, np.shape(a))


@vjp_rule(np.ascontiguousarray, shape=None, complex=True)
def ascontiguousarray(g, ans, a, dtype=None):
    # The identity, except that a scalar becomes a 1-d array of one element.
    return np.reshape(g, np.shape(a))


@vjp_rule(np.array, shape=None, complex=True)
def array(g, ans, object, dtype=None, copy=True, order="K", subok=False, ndmin=0):
    # ndmin may add leading axes of size 1: reshape the cotangent back to the input's shape.
    return np.reshape(g, np.shape(object))


@vjp_rule(np.roll, shape="same", complex=True)
def roll(g, ans, a, shift, axis=None):
    # Rolling back by the same shift undoes the roll.
    return np.roll(g, np.negative(shift), axis)


@vjp_rule(np.broadcast_to, shape=None, complex=True)
def broadcast_to(g, ans, array, shape, subok=False):
    # Each entry of array was repeated along the broadcast axes: it collects their sum.
    g_array = unbroadcast(g, np.shape(array))
    return (g_array,)


@vjp_rule(unbroadcast, shape=None, complex=True)
def unbroadcast_vjp(g, ans, a, shape):
    # The reverse pass's reduction of a contribution to an operand's shape (summing a down
    # to shape, or broadcasting it up): g goes back the other way, to a's shape.
    g_a = unbroadcast(np.broadcast_to(g, np.broadcast_shapes(np.shape(g), np.shape(a))),
                      np.shape(a))
    return (g_a,)


@vjp_rule(np.lib.stride_tricks.sliding_window_view, shape=None)
def sliding_window_view(g, ans, x, window_shape, axis=None, subok=False, writeable=False):
    # Each window is a view of x: the same windows of x's flat positions say which entry
    # each output entry is, and bincount adds up the cotangents of its copies.
    source = np.lib.stride_tricks.sliding_window_view(
        np.reshape(np.arange(np.size(x)), np.shape(x)), window_shape, axis)
    g_flat = np.bincount(np.ravel(source), np.ravel(g), np.size(x))
    return np.reshape(np.asarray(g_flat, dtype=np.result_type(g)), np.shape(x))


# Forward mode: each of these moves or copies entries, so its tangent is the same move of the
# tangent (``x_dot[i]``, ``x_dot.T``, ``np.reshape(x_dot, s)``).
linear(operator.getitem, item_rows, np.transpose, np.ndarray.transpose, np.ndarray.T, np.ndarray.real,
       np.ndarray.imag, np.swapaxes,
       np.ndarray.swapaxes, np.moveaxis, np.flip, np.reshape, np.ndarray.reshape, np.ravel,
       np.ndarray.ravel, np.ndarray.flatten, np.squeeze, np.ndarray.squeeze, np.expand_dims,
       np.copy, np.ndarray.copy, np.ndarray.astype, *matrix_transposes, np.asarray,
       np.asanyarray, np.ascontiguousarray, np.array, np.roll, np.broadcast_to, unbroadcast,
       np.lib.stride_tricks.sliding_window_view)
