"""Rules for products and linear algebra: ``dot``, ``matmul`` (``@``), ``tensordot``,
``outer``, ``trace``, ``linalg.inv``, ``linalg.det``, ``linalg.norm`` and ``diag``.

``dot`` and ``matmul`` branch on the operands' ranks with ``if np.ndim(...)`` tests, which the
compiler folds when the ranks are known, so the generated code holds the one case that applies
(``g @ b.T`` for two matrices). Every contribution has its operand's shape, also when the
batch axes of ``matmul`` stacks broadcast: the rule sums over them itself.
"""

import operator

import numpy as np

from .registry import jvp_rule, linear, vjp_rule


@vjp_rule(np.dot, np.ndarray.dot, shape="dot", complex=True)
def dot(g, ans, a, b, out=None):
    # np.dot contracts the last axis of a with the second-to-last of b (the only one if b
    # is 1-d) and keeps every other axis, a's first.
    if np.ndim(a) == 0:
        g_a = np.sum(g * b)
        g_b = g * a
    elif np.ndim(b) == 0:
        g_a = g * b
        g_b = np.sum(g * a)
    elif np.ndim(a) == 2 and np.ndim(b) == 2:
        g_a = g @ np.transpose(b)
        g_b = np.transpose(a) @ g
    elif np.ndim(a) == 2 and np.ndim(b) == 1:
        g_a = np.outer(g, b)
        g_b = g @ a
    elif np.ndim(a) == 1 and np.ndim(b) == 2:
        g_a = b @ g
        g_b = np.outer(a, g)
    elif np.ndim(b) == 1:
        g_a = np.multiply.outer(g, b)
        g_b = np.tensordot(g, a, np.ndim(g))
    elif np.ndim(a) == 1:
        g_a = np.tensordot(g, np.swapaxes(b, -1, -2), np.ndim(g))
        g_b = np.swapaxes(np.multiply.outer(g, a), -1, -2)
    else:
        # g has a's leading axes, then b's; contract over b's to get a, over a's to get b.
        g_a = np.tensordot(g, np.swapaxes(b, -1, -2), np.ndim(b) - 1)
        g_b = np.moveaxis(np.tensordot(a, g, (np.arange(np.ndim(a) - 1),) * 2), 0, -2)
    return g_a, g_b


@vjp_rule(operator.matmul, np.matmul, shape="matmul", complex=True)
def matmul(g, ans, a, b):
    # A 1-d operand is a row (a) or a column (b) whose added axis is dropped from the result;
    # stacks of matrices broadcast over their leading (batch) axes.
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        g_a = g * b
        g_b = g * a
    elif np.ndim(a) == 2 and np.ndim(b) == 2:
        g_a = g @ np.transpose(b)
        g_b = np.transpose(a) @ g
    elif np.ndim(a) == 2 and np.ndim(b) == 1:
        # A matrix times a vector: the two products a hand-written gradient uses.
        g_a = np.outer(g, b)
        g_b = g @ a
    elif np.ndim(a) == 1 and np.ndim(b) == 2:
        g_a = b @ g
        g_b = np.outer(a, g)
    elif np.ndim(b) == 1:
        g_a = np.expand_dims(g, -1) * b
        g_b = np.tensordot(g, a, np.ndim(g))
    elif np.ndim(a) == 1:
        g_a = np.tensordot(g, np.swapaxes(b, -1, -2), np.ndim(g))
        g_b = np.expand_dims(a, -1) * np.expand_dims(g, -2)
    elif np.ndim(b) == 2:
        # A stack times one matrix (a batch of inputs times weights): b's contribution sums
        # over the batch, as one matrix product over the flattened batch.
        g_a = g @ np.transpose(b)
        rows = np.reshape(a, (-1, np.shape(b)[0]))
        g_b = np.transpose(rows) @ np.reshape(g, (-1, np.shape(b)[1]))
    elif np.ndim(a) == 2:
        # One matrix times a stack: a's contribution sums over the stack's batch axes.
        g_a = np.sum(np.reshape(g @ np.swapaxes(b, -1, -2), (-1,) + np.shape(a)), axis=0)
        g_b = np.transpose(a) @ g
    else:
        # Two stacks, whose batch axes may broadcast: each product has the broadcast batch
        # shape and is summed over the axes that broadcasting added or stretched
        # (np.apply_over_axes keeps them as 1s; with none it returns the product as it is).
        full_a = g @ np.swapaxes(b, -1, -2)
        full_b = np.swapaxes(a, -1, -2) @ g
        lead_a = np.ones(np.ndim(g) - np.ndim(a), np.intp)  # g has the broadcast rank
        lead_b = np.ones(np.ndim(g) - np.ndim(b), np.intp)
        axes_a = np.flatnonzero(np.not_equal(np.shape(full_a), np.append(lead_a, np.shape(a))))
        axes_b = np.flatnonzero(np.not_equal(np.shape(full_b), np.append(lead_b, np.shape(b))))
        g_a = np.reshape(np.apply_over_axes(np.sum, full_a, axes_a), np.shape(a))
        g_b = np.reshape(np.apply_over_axes(np.sum, full_b, axes_b), np.shape(b))
    return g_a, g_b


@vjp_rule(np.vdot, shape="scalar", complex=True)
def vdot(g, ans, a, b):
    # vdot conjugates a and flattens both: sum(conj(a) * b). In registry.py's convention a,
    # which enters conjugated, gets the conjugate of its real rule's contribution.
    return (np.reshape(np.conjugate(g * b), np.shape(a)),
            np.reshape(g * np.conjugate(a), np.shape(b)))


@vjp_rule(np.tensordot, shape=None, complex=True)
def tensordot(g, ans, a, b, axes=2):
    # axes=N contracts a's last N axes with b's first N; else axes = (a's axes, b's axes),
    # paired in that order.
    if np.ndim(axes) == 0:
        axes_a = np.arange(np.ndim(a) - axes, np.ndim(a))
        axes_b = np.arange(axes)
    else:
        axes_a = axes[0]
        axes_b = axes[1]
    # g has a's free axes, then b's. Contracting g with b's free axes (b's contracted ones
    # moved first, in pair order) leaves a's free axes, then its contracted ones in pair
    # order, which moveaxis puts back in place; the same for b, with a's free axes.
    k = np.size(axes_a)
    free_a = np.ndim(a) - k
    g_a = np.tensordot(g, np.moveaxis(b, axes_b, np.arange(k)),
                       (np.arange(free_a, np.ndim(g)), np.arange(k, np.ndim(b))))
    g_b = np.tensordot(np.moveaxis(a, axes_a, np.arange(k)), g,
                       (np.arange(k, np.ndim(a)), np.arange(free_a)))
    return (np.moveaxis(g_a, np.arange(free_a, np.ndim(a)), axes_a),
            np.moveaxis(g_b, np.arange(k), axes_b))


@vjp_rule(np.outer, shape="outer", complex=True)
def outer(g, ans, a, b, out=None):
    # np.outer flattens both operands first.
    return np.reshape(g @ np.ravel(b), np.shape(a)), np.reshape(np.ravel(a) @ g, np.shape(b))


@vjp_rule(np.add.outer, shape="outer")
def add_outer(g, ans, a, b):
    # ans[i..., j...] = a[i...] + b[j...]: each operand gets g summed over the other's axes
    g_rows = np.reshape(g, (np.size(a), np.size(b)))
    return (np.reshape(np.sum(g_rows, axis=1), np.shape(a)),
            np.reshape(np.sum(g_rows, axis=0), np.shape(b)))


@vjp_rule(np.subtract.outer, shape="outer")
def subtract_outer(g, ans, a, b):
    g_rows = np.reshape(g, (np.size(a), np.size(b)))
    return (np.reshape(np.sum(g_rows, axis=1), np.shape(a)),
            -np.reshape(np.sum(g_rows, axis=0), np.shape(b)))


@vjp_rule(np.multiply.outer, shape="outer")
def multiply_outer(g, ans, a, b):
    g_rows = np.reshape(g, (np.size(a), np.size(b)))
    return (np.reshape(g_rows @ np.ravel(b), np.shape(a)),
            np.reshape(np.ravel(a) @ g_rows, np.shape(b)))


@vjp_rule(np.trace, np.ndarray.trace, shape=None, complex=True)
def trace(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    # The cotangent lands on the traced diagonal; for a stack, axis1 and axis2 of each entry.
    diagonal = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], offset, dtype=np.result_type(g))
    if np.ndim(a) == 2 and axis1 == 0 and axis2 == 1:
        g_a = g * diagonal
    else:
        g_a = np.moveaxis(np.multiply.outer(g, diagonal), (-2, -1), (axis1, axis2))
    return g_a


@vjp_rule(np.linalg.inv, shape="same")
def inv(g, ans, a):
    # d(A^-1) = -A^-1 dA A^-1, so the cotangent is -A^-T g A^-T (per matrix of a stack).
    ans_t = np.swapaxes(ans, -1, -2)
    return -(ans_t @ g @ ans_t)


@vjp_rule(np.linalg.det, shape=None)
def det(g, ans, a):
    # d det(A) = det(A) tr(A^-1 dA); a singular matrix raises LinAlgError here.
    return np.expand_dims(g * ans, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


def _norm_kind(static, ndim):
    """"matrix" or "vector" for a norm call, or None when that is not known."""
    axis = static.get("axis")
    if isinstance(axis, tuple):
        return {1: "vector", 2: "matrix"}.get(len(axis))
    if isinstance(axis, int):
        return "vector"
    if axis is None:
        return {1: "vector", 2: "matrix"}.get(ndim("x"))
    return None


def _no_singular_values(static, ndim):
    """The matrix norms of the singular values (ord=2, -2, 'nuc') have no rule of their own:
    normalize writes them with np.linalg.svd, which has one, where the call says that they
    are (forms.py: 'nuc', or a literal pair of axes). Every other order has."""
    order = static.get("ord")
    instead = ("np.sum(np.linalg.svd(a, compute_uv=False), axis=-1) for 'nuc', np.max (np.min) "
               "of the same for 2 (-2)")
    if order is not None and not isinstance(order, (str, int, float)):  # known at run time
        if _norm_kind(static, ndim) == "vector":
            return None  # every vector order is chosen at run time
        return ("np.linalg.norm(..., ord=...) of a matrix, or of an array of unknown rank, "
                "with an order known only at run time: the orders 2, -2 and 'nuc' are "
                "functions of the singular values, differentiated where the order is written "
                "in the call. Write the order in the call (ord='fro', ord=1, ord=np.inf, "
                "ord='nuc'), or give an int axis= for a vector norm")
    if isinstance(order, str) and order == "nuc":
        kind = "matrix"
    elif not isinstance(order, str) and order in (2, -2):
        kind = _norm_kind(static, ndim)
    else:
        return None
    if kind == "vector" or (kind is None and static.get("axis") is None
                            and ndim("x") is not None):
        return None  # a vector, or a rank np.linalg.norm refuses itself
    if kind is None:
        return (f"np.linalg.norm(..., ord={order!r}) is a vector's p-norm or a function of a "
                "matrix's singular values, and which one is not known when compiling. Give x "
                "a known rank, or an int axis= for a vector norm")
    return (f"np.linalg.norm(..., ord={order!r}) of a matrix is a function of its singular "
            "values, differentiated where the call names the matrix's axes (axis=(0, 1)) "
            f"and keeps no dims. Write the axes in the call, or the norm itself: {instead}")


@vjp_rule(np.linalg.norm, shape="reduce", requires=_no_singular_values)
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    # g times d|x| / dx, with each norm's weight below (0 where x is 0). The order is a
    # static argument: it gets no contribution.
    if axis is not None and not keepdims:
        g_kept = np.expand_dims(g, axis)
        ans_kept = np.expand_dims(ans, axis)
    else:
        g_kept = g
        ans_kept = ans
    if ord is None:
        # The 2-norm (Frobenius for a matrix): d|x| = x / |x| dx.
        weight = x / np.where(ans_kept == 0, 1.0, ans_kept)
    elif axis is None and np.ndim(x) == 1 or axis is not None and np.size(axis) == 1:
        # |x|_p = (sum |x|^p)^(1/p): d|x|_p = sign(x) (|x| / |x|_p)^(p-1) dx, also for
        # p = 1, 2, -1. For p = inf (-inf) the entries of largest (smallest) magnitude share
        # the weight; p = 0 counts the nonzero entries, a step function. The order is chosen
        # at run time (np.inf is not a constant of the source), with a finite exponent in
        # the branch not taken.
        magnitude = np.abs(x)
        extreme = np.isinf(ord)
        smooth = np.logical_not(np.logical_or(extreme, ord == 0))
        p = np.where(smooth, ord, 2.0)
        ratio = magnitude / np.where(ans_kept == 0, 1.0, ans_kept)
        hits = magnitude == ans_kept
        shared = hits / np.maximum(np.sum(hits, axis=axis, keepdims=True), 1)
        weight = np.sign(x) * np.where(extreme, shared, np.power(ratio, p - 1.0)) * (ord != 0)
    else:
        # A matrix norm over the axes (rows, columns): 'fro' as the 2-norm; ord = 1 (-1) is
        # the largest (smallest) column sum of |x|, ord = inf (-inf) the largest (smallest)
        # row sum, and the columns (rows) that attain it share the weight sign(x). The
        # singular-value norms (2, -2, 'nuc') are written with np.linalg.svd where the call
        # says they are (normalize/forms.py); elsewhere they, and a matrix order known
        # only at run time, are refused at transform time.
        if axis is None:
            rows = -2
            columns = -1
        else:
            rows = axis[0]
            columns = axis[1]
        magnitude = np.abs(x)
        on_columns = np.sum(magnitude, axis=rows, keepdims=True) == ans_kept
        on_rows = np.sum(magnitude, axis=columns, keepdims=True) == ans_kept
        by_columns = on_columns / np.maximum(np.sum(on_columns, axis=columns, keepdims=True), 1)
        by_rows = on_rows / np.maximum(np.sum(on_rows, axis=rows, keepdims=True), 1)
        sums = np.sign(x) * np.where(np.logical_or(ord == 1, ord == -1), by_columns, by_rows)
        frobenius = x / np.where(ans_kept == 0, 1.0, ans_kept)
        weight = np.where(ord == "fro", frobenius, sums)
    return g_kept * weight


@vjp_rule(np.diag, shape=None)
def diag(g, ans, v, k=0):
    # A vector v builds a matrix with v on diagonal k: its cotangent is that diagonal of g.
    # A matrix v gives its diagonal k: g goes back onto that diagonal of zeros shaped like v
    # (np.diag(g, k) is square; crop it to v's shape, then pad it with zeros up to it).
    if np.ndim(v) == 1:
        g_v = np.diagonal(g, k)
    else:
        square = np.diag(g, k)[:np.shape(v)[0], :np.shape(v)[1]]
        g_v = np.pad(square, ((0, np.shape(v)[0] - np.shape(square)[0]),
                              (0, np.shape(v)[1] - np.shape(square)[1])))
    return g_v


# --- forward mode: g is the tangent of one operand; each rule gives the output's tangent ----

linear(np.trace, np.ndarray.trace, np.diag)


@jvp_rule(np.dot, np.ndarray.dot)
def dot_jvp(g, ans, a, b, out=None):
    return np.dot(g, b), np.dot(a, g)


@jvp_rule(operator.matmul, np.matmul)
def matmul_jvp(g, ans, a, b):
    return g @ b, a @ g


@jvp_rule(np.tensordot)
def tensordot_jvp(g, ans, a, b, axes=2):
    return np.tensordot(g, b, axes), np.tensordot(a, g, axes)


@jvp_rule(np.outer)
def outer_jvp(g, ans, a, b, out=None):
    return np.outer(g, b), np.outer(a, g)


linear(np.add.outer, np.subtract.outer)


@jvp_rule(np.multiply.outer)
def multiply_outer_jvp(g, ans, a, b):
    return np.multiply.outer(g, b), np.multiply.outer(a, g)


@jvp_rule(np.linalg.inv)
def inv_jvp(g, ans, a):
    # d(A^-1) = -A^-1 dA A^-1
    return -(ans @ g @ ans)


@jvp_rule(np.linalg.det)
def det_jvp(g, ans, a):
    # d det(A) = det(A) tr(A^-1 dA)
    return ans * np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * g, axis=(-2, -1))


@jvp_rule(np.linalg.norm)
def norm_jvp(g, ans, x, ord=None, axis=None, keepdims=False):
    if ord is None:
        # d|x| = <x, dx> / |x|, and 0 where x is 0.
        tangent = np.sum(x * g, axis=axis, keepdims=keepdims) / np.where(ans == 0, 1.0, ans)
    else:
        # d|x| = the sum of weight * dx over the reduced axes, with the weights of norm's rule.
        if axis is not None and not keepdims:
            ans_kept = np.expand_dims(ans, axis)
        else:
            ans_kept = ans
        magnitude = np.abs(x)
        if axis is None and np.ndim(x) == 1 or axis is not None and np.size(axis) == 1:
            extreme = np.isinf(ord)
            smooth = np.logical_not(np.logical_or(extreme, ord == 0))
            p = np.where(smooth, ord, 2.0)
            ratio = magnitude / np.where(ans_kept == 0, 1.0, ans_kept)
            hits = magnitude == ans_kept
            shared = hits / np.maximum(np.sum(hits, axis=axis, keepdims=True), 1)
            weight = (np.sign(x) * np.where(extreme, shared, np.power(ratio, p - 1.0))
                      * (ord != 0))
        else:
            if axis is None:
                rows = -2
                columns = -1
            else:
                rows = axis[0]
                columns = axis[1]
            on_columns = np.sum(magnitude, axis=rows, keepdims=True) == ans_kept
            on_rows = np.sum(magnitude, axis=columns, keepdims=True) == ans_kept
            by_columns = on_columns / np.maximum(np.sum(on_columns, axis=columns,
                                                        keepdims=True), 1)
            by_rows = on_rows / np.maximum(np.sum(on_rows, axis=rows, keepdims=True), 1)
            sums = np.sign(x) * np.where(np.logical_or(ord == 1, ord == -1), by_columns,
                                         by_rows)
            frobenius = x / np.where(ans_kept == 0, 1.0, ans_kept)
            weight = np.where(ord == "fro", frobenius, sums)
        tangent = np.sum(weight * g, axis=axis, keepdims=keepdims)
    return tangent


@jvp_rule(np.vdot)
def vdot_jvp(g, ans, a, b):
    return np.vdot(g, b), np.vdot(a, g)
