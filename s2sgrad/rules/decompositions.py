"""Rules for linear algebra beyond ``inv`` and ``det``: ``linalg.solve``, ``linalg.cholesky``,
``linalg.pinv`` and ``linalg.matrix_power``, and, where SciPy is installed,
``scipy.linalg.solve_triangular``, ``expm``, ``sqrtm`` and ``solve_sylvester``.

Every rule works on the last two axes, so a stack of matrices (``(..., n, n)``) is a stack
of independent problems; where the batch axes of two operands broadcast, each contribution
is summed back to its operand's shape. The contributions are written with primitives that
have rules themselves (solves, products, ``expm`` of a larger matrix), so second derivatives
differentiate them again:

- the derivative of a power series in ``A`` along ``E`` (``matrix_power``, ``expm``) is the
  upper right block of the same function of the block matrix ``[[A, E], [0, A]]``, and its
  adjoint is that derivative at ``A^T``;
- ``cholesky`` and ``solve_triangular`` read one triangle of ``a`` and ignore the other, so
  the other triangle gets no contribution;
- ``pinv``'s rule is the derivative of the Moore-Penrose inverse where the rank does not
  change: inputs of full rank, with the default cutoff.
"""

import numpy as np

from ..runtime.unbroadcast import unbroadcast
from .registry import jvp_rule, vjp_rule

try:
    import scipy.linalg
except ImportError:  # the SciPy rules are registered only where SciPy is installed
    scipy = None


@vjp_rule(np.linalg.solve, shape="matmul")
def solve(g, ans, a, b):
    # x = A^-1 b: the cotangent of b is A^-T g, that of A is -(A^-T g) x^T. A 1-d b is one
    # vector (for every matrix of a stack); any other b is a stack of matrices (NumPy 2).
    a_t = np.swapaxes(a, -1, -2)
    if np.ndim(a) == 2 and np.ndim(b) == 1:
        g_b = np.linalg.solve(a_t, g)
        g_a = -np.outer(g_b, ans)
    elif np.ndim(b) == 1:
        # one column per matrix of the stack; b collects the sum of its columns' cotangents
        g_columns = np.linalg.solve(a_t, np.expand_dims(g, -1))
        g_a = -(g_columns * np.expand_dims(ans, -2))
        g_b = unbroadcast(g_columns[..., 0], np.shape(b))
    elif np.ndim(a) == 2 and np.ndim(b) == 2:
        g_b = np.linalg.solve(a_t, g)
        g_a = -(g_b @ np.transpose(ans))
    else:
        g_full = np.linalg.solve(a_t, g)
        g_a = unbroadcast(-(g_full @ np.swapaxes(ans, -1, -2)), np.shape(a))
        g_b = unbroadcast(g_full, np.shape(b))
    return g_a, g_b


@vjp_rule(np.linalg.cholesky, shape="same")
def cholesky(g, ans, a, upper=False):
    # A = L L^T. For symmetric moves of A the cotangent is the symmetric part of
    # M = L^-T Phi(L^T Lbar) L^-1, Phi(X) the lower triangle of X with its diagonal halved
    # (Murray 2016). cholesky reads one triangle of a (the lower; the upper with upper=True,
    # where the factor is U = L^T): a move of an entry off the diagonal there moves both
    # mirrored entries of the symmetric matrix, so it collects (M + M^T), and the other
    # triangle collects nothing.
    n = np.shape(a)[-1]
    rows = np.arange(n)
    below = np.expand_dims(rows, -1) > rows
    eye = np.eye(n)
    if upper:
        low = np.swapaxes(ans, -1, -2)
        g_low = np.swapaxes(g, -1, -2)
        read = np.swapaxes(below, -1, -2)
    else:
        low = ans
        g_low = g
        read = below
    low_t = np.swapaxes(low, -1, -2)
    phi = (low_t @ g_low) * (below + 0.5 * eye)
    left = np.linalg.solve(low_t, phi)
    m = np.swapaxes(np.linalg.solve(low_t, np.swapaxes(left, -1, -2)), -1, -2)
    return read * (m + np.swapaxes(m, -1, -2)) + eye * m


def _pinv_default_cutoff(static, ndim):
    if static.get("hermitian", False) is not False:
        return ("np.linalg.pinv(..., hermitian=True) reads only one triangle of the matrix, "
                "and is not differentiated. Write np.linalg.pinv(a), the same value for a "
                "symmetric a")
    for name in ("rcond", "rtol"):
        if static.get(name) is not None:
            return (f"np.linalg.pinv(..., {name}=...) drops the singular values below a "
                    "cutoff of its own: only the default cutoff, on a matrix of full rank, is "
                    f"differentiated. Leave out {name}=")
    return None


@vjp_rule(np.linalg.pinv, shape="permute", requires=_pinv_default_cutoff)
def pinv(g, ans, a, rcond=None, hermitian=False, rtol=None):
    # P = A^+ where the rank is constant (Golub and Pereyra 1973):
    #   dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P,
    # whose adjoint gives the three terms below (the last two vanish for a square A).
    p_t = np.swapaxes(ans, -1, -2)
    g_t = np.swapaxes(g, -1, -2)
    eye_m = np.eye(np.shape(a)[-2])
    eye_n = np.eye(np.shape(a)[-1])
    g_a = (-(p_t @ g @ p_t) + (eye_m - a @ ans) @ g_t @ (ans @ p_t)
           + (p_t @ ans) @ g_t @ (eye_n - ans @ a))
    return g_a


@vjp_rule(np.linalg.matrix_power, shape="same")
def matrix_power(g, ans, a, n):
    # d(A^n) = sum_k A^k dA A^(n-1-k) for n > 0 is the upper right block of
    # [[A, dA], [0, A]]^n, and so for every integer n: the block matrix's inverse is
    # [[A^-1, -A^-1 dA A^-1], [0, A^-1]], whose powers give the derivative of A^-m = (A^-1)^m,
    # and n = 0 gives I, whose block is zero. The adjoint is the same block with A^T and g.
    size = np.shape(a)[-1]
    a_t = np.swapaxes(a, -1, -2)
    block = np.concatenate([np.concatenate([a_t, g], axis=-1),
                            np.concatenate([np.zeros_like(a_t), a_t], axis=-1)], axis=-2)
    return np.linalg.matrix_power(block, n)[..., :size, size:]


# --- forward mode: g is the tangent of one operand; each rule gives the output's tangent ----


@jvp_rule(np.linalg.solve)
def solve_jvp(g, ans, a, b):
    # dx = A^-1 (db - dA x)
    if np.ndim(b) == 1 and np.ndim(a) > 2:
        t_a = -np.linalg.solve(a, g @ np.expand_dims(ans, -1))[..., 0]
    else:
        t_a = -np.linalg.solve(a, g @ ans)
    return t_a, np.linalg.solve(a, g)


@jvp_rule(np.linalg.cholesky)
def cholesky_jvp(g, ans, a, upper=False):
    # dL = L Phi(L^-1 dS L^-T), dS the symmetric move that the triangle cholesky reads makes.
    n = np.shape(a)[-1]
    rows = np.arange(n)
    below = np.expand_dims(rows, -1) > rows
    eye = np.eye(n)
    if upper:
        low = np.swapaxes(ans, -1, -2)
        off = np.swapaxes(below, -1, -2) * g
    else:
        low = ans
        off = below * g
    moved = off + np.swapaxes(off, -1, -2) + eye * g
    right = np.swapaxes(np.linalg.solve(low, moved), -1, -2)
    inner = np.swapaxes(np.linalg.solve(low, right), -1, -2)
    t_low = low @ (inner * (below + 0.5 * eye))
    if upper:
        t = np.swapaxes(t_low, -1, -2)
    else:
        t = t_low
    return t


@jvp_rule(np.linalg.pinv)
def pinv_jvp(g, ans, a, rcond=None, hermitian=False, rtol=None):
    # dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P
    p_t = np.swapaxes(ans, -1, -2)
    g_t = np.swapaxes(g, -1, -2)
    eye_m = np.eye(np.shape(a)[-2])
    eye_n = np.eye(np.shape(a)[-1])
    return (-(ans @ g @ ans) + (ans @ p_t) @ g_t @ (eye_m - a @ ans)
            + (eye_n - ans @ a) @ g_t @ (p_t @ ans))


@jvp_rule(np.linalg.matrix_power)
def matrix_power_jvp(g, ans, a, n):
    # the upper right block of [[A, dA], [0, A]]^n
    size = np.shape(a)[-1]
    block = np.concatenate([np.concatenate([a, g], axis=-1),
                            np.concatenate([np.zeros_like(a), a], axis=-1)], axis=-2)
    return np.linalg.matrix_power(block, n)[..., :size, size:]


# --- SciPy --------------------------------------------------------------------------------


def _solve_triangular_supported(static, ndim):
    if static.get("overwrite_b", False) is not False:
        return ("scipy.linalg.solve_triangular(..., overwrite_b=True) may overwrite b, whose "
                "value the gradient can still need. Leave out overwrite_b=")
    return None


def solve_triangular(g, ans, a, b, trans=0, lower=False, unit_diagonal=False,
                     overwrite_b=False, check_finite=True):
    # x = op(A)^-1 b, op(A) = A or A^T: the cotangent of b is y = op(A)^-T g, that of op(A)
    # is -y x^T, transposed back for op(A) = A^T. Only the triangle solve_triangular reads
    # gets a contribution (without the diagonal for unit_diagonal=True, which is not read).
    if trans == 1 or trans == 2 or trans == "T" or trans == "C":
        flipped = 0
    else:
        flipped = 1
    if np.ndim(b) == 1 and np.ndim(a) > 2:
        # one vector for every matrix of the stack: a column each
        y_columns = scipy.linalg.solve_triangular(a, np.expand_dims(g, -1), flipped, lower,
                                                  unit_diagonal)
        outer = y_columns * np.expand_dims(ans, -2)
        g_b = unbroadcast(y_columns[..., 0], np.shape(b))
    elif np.ndim(b) == 1:
        g_b = scipy.linalg.solve_triangular(a, g, flipped, lower, unit_diagonal)
        outer = np.outer(g_b, ans)
    elif np.ndim(a) == 2 and np.ndim(b) == 2:
        g_b = scipy.linalg.solve_triangular(a, g, flipped, lower, unit_diagonal)
        outer = g_b @ np.transpose(ans)
    else:
        y = scipy.linalg.solve_triangular(a, g, flipped, lower, unit_diagonal)
        outer = y @ np.swapaxes(ans, -1, -2)
        g_b = unbroadcast(y, np.shape(b))
    if flipped == 0:
        outer = np.swapaxes(outer, -1, -2)
    rows = np.arange(np.shape(a)[-1])
    if lower:
        side = np.expand_dims(rows, -1) - rows
    else:
        side = rows - np.expand_dims(rows, -1)
    if unit_diagonal:
        read = side > 0
    else:
        read = side >= 0
    if np.ndim(a) == 2 and np.ndim(b) <= 2:
        g_a = -(outer * read)
    else:
        g_a = unbroadcast(-(outer * read), np.shape(a))
    return g_a, g_b


def solve_triangular_jvp(g, ans, a, b, trans=0, lower=False, unit_diagonal=False,
                         overwrite_b=False, check_finite=True):
    # dx = op(A)^-1 (db - op(dA) x), dA restricted to the triangle that is read
    rows = np.arange(np.shape(a)[-1])
    if lower:
        side = np.expand_dims(rows, -1) - rows
    else:
        side = rows - np.expand_dims(rows, -1)
    if unit_diagonal:
        read = side > 0
    else:
        read = side >= 0
    if trans == 1 or trans == 2 or trans == "T" or trans == "C":
        d_op = np.swapaxes(g * read, -1, -2)
    else:
        d_op = g * read
    if np.ndim(b) == 1 and np.ndim(a) > 2:
        t_a = -scipy.linalg.solve_triangular(a, d_op @ np.expand_dims(ans, -1), trans, lower,
                                             unit_diagonal)[..., 0]
    else:
        t_a = -scipy.linalg.solve_triangular(a, d_op @ ans, trans, lower, unit_diagonal)
    t_b = scipy.linalg.solve_triangular(a, g, trans, lower, unit_diagonal)
    return t_a, t_b


def expm(g, ans, A):
    # The Frechet derivative L(A, E) of expm is the upper right block of
    # expm([[A, E], [0, A]]) (Higham 2008, thm 3.6), and its adjoint is L(A^T, .).
    size = np.shape(A)[-1]
    a_t = np.swapaxes(A, -1, -2)
    block = np.concatenate([np.concatenate([a_t, g], axis=-1),
                            np.concatenate([np.zeros_like(a_t), a_t], axis=-1)], axis=-2)
    return scipy.linalg.expm(block)[..., :size, size:]


def expm_jvp(g, ans, A):
    size = np.shape(A)[-1]
    block = np.concatenate([np.concatenate([A, g], axis=-1),
                            np.concatenate([np.zeros_like(A), A], axis=-1)], axis=-2)
    return scipy.linalg.expm(block)[..., :size, size:]


def sqrtm(g, ans, A):
    # X X = A: X dX + dX X = dA, a Sylvester equation in dX; its adjoint has X^T on both
    # sides. (A real square root needs A without eigenvalues on the negative real axis.)
    x_t = np.swapaxes(ans, -1, -2)
    return scipy.linalg.solve_sylvester(x_t, x_t, g)


def sqrtm_jvp(g, ans, A):
    return scipy.linalg.solve_sylvester(ans, ans, g)


def solve_sylvester(g, ans, a, b, q):
    # A X + X B = Q: A dX + dX B = dQ - dA X - X dB. The cotangent of Q solves the adjoint
    # equation A^T Y + Y B^T = g; those of A and B are -Y X^T and -X^T Y.
    y = scipy.linalg.solve_sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), g)
    x_t = np.swapaxes(ans, -1, -2)
    if np.ndim(a) == 2 and np.ndim(b) == 2 and np.ndim(q) == 2:
        g_a = -(y @ x_t)
        g_b = -(x_t @ y)
        g_q = y
    else:
        g_a = unbroadcast(-(y @ x_t), np.shape(a))
        g_b = unbroadcast(-(x_t @ y), np.shape(b))
        g_q = unbroadcast(y, np.shape(q))
    return g_a, g_b, g_q


def solve_sylvester_jvp(g, ans, a, b, q):
    return (scipy.linalg.solve_sylvester(a, b, -(g @ ans)),
            scipy.linalg.solve_sylvester(a, b, -(ans @ g)),
            scipy.linalg.solve_sylvester(a, b, g))


if scipy is not None:
    vjp_rule(scipy.linalg.solve_triangular, shape="matmul",
             requires=_solve_triangular_supported)(solve_triangular)
    jvp_rule(scipy.linalg.solve_triangular)(solve_triangular_jvp)
    vjp_rule(scipy.linalg.expm, shape="same")(expm)
    jvp_rule(scipy.linalg.expm)(expm_jvp)
    vjp_rule(scipy.linalg.sqrtm, shape="same")(sqrtm)
    jvp_rule(scipy.linalg.sqrtm)(sqrtm_jvp)
    vjp_rule(scipy.linalg.solve_sylvester, shape=None)(solve_sylvester)
    jvp_rule(scipy.linalg.solve_sylvester)(solve_sylvester_jvp)
