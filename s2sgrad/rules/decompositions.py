"""Rules for linear algebra beyond ``inv`` and ``det``: ``linalg.solve``, ``linalg.cholesky``,
``linalg.pinv``, ``linalg.matrix_power``, the decompositions ``linalg.qr``, ``eigh``,
``eigvalsh``, ``svd``, ``slogdet`` and ``eig``, and, where SciPy is installed,
``scipy.linalg.solve_triangular``, ``expm``, ``sqrtm``, ``solve_sylvester``, ``cho_factor`` and
``cho_solve`` (``scipy.linalg.cholesky`` and ``solve_banded`` are in scipy_linalg.py).

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

The decompositions return NumPy's named tuples, read as tuples (``q, r = np.linalg.qr(a)``,
``res.Q``): their cotangents hold one cotangent per item. Their derivatives exist where the
decomposition is unique up to what the formulas fix: matrices of full rank (``qr``, ``svd``),
distinct eigenvalues and singular values (``eigh``, ``svd``, ``eig``), and real eigenvalues
for ``eig`` (complex ones are refused when the rule runs). Eigenvectors and singular vectors
are defined up to their signs, so only what does not depend on the signs has a meaning:
``v * v``, ``v @ v.T``, ``u @ np.diag(s) @ vh``. The columns of ``Q`` beyond the rank
(``mode="complete"`` for more rows than columns) and of ``U``, ``V^T`` (``svd`` with
``full_matrices=True`` of a non-square matrix) are any orthonormal basis of a complement: they
have no derivative, and a gradient that flows into them is refused when the rule runs.
``eigh`` and ``eigvalsh`` read one triangle of ``a``, which alone gets a contribution.
``scipy.linalg.cho_factor`` returns ``(c, lower)``: the factor in one triangle of ``c``, the
other triangle a copy of ``a``'s (what SciPy leaves there), and ``cho_solve((c, lower), b)``
reads the factor's triangle only.
"""

import numpy as np

from ..runtime.unbroadcast import unbroadcast
from .registry import One, jvp_rule, nondifferentiable, vjp_rule, when_imported

scipy = None  # the package, once register_scipy has imported scipy.linalg


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
    # dx = A^-1 (db - dA x). For a stack of matrices b is one vector (1-d) or a stack of its
    # own, which only its rank tells (a global b's is known at run time only): the tangent in
    # A is then written (A^-1 dA A^-1) b, whose product reads b as solve does, whatever its
    # rank, so the rule tests no rank but a's.
    if np.ndim(a) == 2:
        t_a = -np.linalg.solve(a, g @ ans)
    else:
        t_a = -(np.linalg.solve(a, g) @ np.linalg.inv(a)) @ b
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


# --- decompositions: named tuples of arrays ------------------------------------------------
#
# The helpers below read sizes and refuse what has no derivative; they compute integers from
# shapes and are declared nondifferentiable.


def qr_columns(a, mode):
    """The columns of Q (and rows of R) that a determines: min(m, n)."""
    m, n = np.shape(a)[-2:]
    if mode not in ("reduced", "complete"):
        raise ValueError(f"np.linalg.qr(a, mode={mode!r}) is not differentiated: use "
                         "mode='reduced' (the default) and take R from it")
    if mode == "complete" and m > n:
        raise ValueError(
            "np.linalg.qr(a, mode='complete') of a matrix with more rows than columns: the "
            "last columns of Q are any orthonormal basis of the complement of a's columns, "
            "and have no derivative. Use mode='reduced' (or a square matrix)")
    return min(m, n)


def svd_columns(a, full_matrices, g_u=None, g_vh=None):
    """The singular vectors that a determines: min(m, n). The others (full_matrices=True of
    a non-square matrix) are any orthonormal basis of a complement: refused where a gradient
    flows into them (g_u, g_vh: their cotangents), and in forward mode (no cotangents)."""
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    if full_matrices and m != n:
        for g_part, name in ((None if g_u is None else np.asarray(g_u)[..., k:], "U"),
                             (None if g_vh is None else np.asarray(g_vh)[..., k:, :], "Vh")):
            if g_part is None or np.any(g_part != 0):
                raise ValueError(
                    f"np.linalg.svd(a) of a {m}x{n} matrix with full_matrices=True: the last "
                    f"{max(m, n) - k} singular vectors in {name} are any orthonormal basis of "
                    "a complement and have no derivative"
                    + (" (forward mode computes all of them)" if g_part is None else
                       ", but the result depends on them") +
                    ". Pass full_matrices=False, or compute_uv=False for the singular values")
    return k


def real_eigenvalues(w):
    """The number of eigenvalues, refusing complex ones (not differentiated)."""
    if np.iscomplexobj(w):
        raise ValueError("np.linalg.eig returned complex eigenvalues: complex values are not "
                         "differentiated. Differentiate a matrix whose eigenvalues are real "
                         "(np.linalg.eigh for a symmetric one)")
    return np.shape(w)[-1]


nondifferentiable(qr_columns, svd_columns, real_eigenvalues,
                  why="sizes of the decompositions, read from shapes")


def _square_items(static, ndim):
    """(eigenvalues, eigenvectors), or (sign, log|det|): rank - 1 and rank, rank - 2 twice."""
    rank = ndim("a")
    return (None if rank is None else rank - 1, rank)


def _qr_items(static, ndim):
    rank = ndim("a")
    mode = static.get("mode", "reduced")
    if mode == "r":
        return One(rank)
    if mode == "raw":
        return (rank, None if rank is None else rank - 1)
    return (rank, rank)


def _qr_modes(static, ndim):
    mode = static.get("mode", "reduced")
    if mode in ("r", "raw"):
        return (f"np.linalg.qr(a, mode={mode!r}) is not differentiated: use mode='reduced' "
                "(the default) and take R from q, r = np.linalg.qr(a)")
    return None


@vjp_rule(np.linalg.qr, shape="tuple", items=_qr_items, requires=_qr_modes, fields=("Q", "R"))
def qr(g, ans, a, mode="reduced"):
    # A = Q R, k = min(m, n), A = [X | Y] with X its first k columns and R = [U | V] (V and Y
    # are empty for m >= n). X = Q U is the QR of a matrix with as many columns as rows at
    # most: with M = U Ubar^T - Qbar_X^T Q and copyltu(M) its lower triangle mirrored,
    # Xbar = (Qbar_X + Q copyltu(M)) U^-T, where Qbar_X = Qbar + Y Vbar^T also holds what
    # flows through V = Q^T Y; and Ybar = Q Vbar (Walter and Lehmann 2018).
    k = qr_columns(a, mode)
    g_q_all, g_r_all = g
    q_all, r_all = ans
    q = q_all[..., :k]
    g_q = g_q_all[..., :k]
    u = r_all[..., :k, :k]
    g_u = g_r_all[..., :k, :k]
    g_v = g_r_all[..., :k, k:]
    g_q_x = g_q + a[..., k:] @ np.swapaxes(g_v, -1, -2)
    m = u @ np.swapaxes(g_u, -1, -2) - np.swapaxes(g_q_x, -1, -2) @ q
    b = g_q_x + q @ (np.tril(m) + np.swapaxes(np.tril(m, -1), -1, -2))
    g_x = np.swapaxes(np.linalg.solve(u, np.swapaxes(b, -1, -2)), -1, -2)
    return np.concatenate([g_x, q @ g_v], axis=-1)


def _uplo(static, ndim):
    if static.get("UPLO", "L") not in ("L", "U"):
        return ("the UPLO= of np.linalg.eigh and eigvalsh must be written as 'L' or 'U' where "
                "it is differentiated: it says which triangle gets the gradient")
    return None


@vjp_rule(np.linalg.eigh, shape="tuple", items=_square_items, requires=_uplo,
          fields=("eigenvalues", "eigenvectors"))
def eigh(g, ans, a, UPLO="L"):
    # S = V diag(w) V^T for the symmetric S that the triangle UPLO makes. With
    # F[i, j] = 1 / (w[j] - w[i]) off the diagonal (0 on it), the cotangent of S is the
    # symmetric part of M = V (diag(wbar) + F * (V^T Vbar)) V^T; the triangle read gets
    # M + M^T below (or above) the diagonal, and M on it.
    g_w, g_v = g
    w, v = ans
    n = np.shape(a)[-1]
    eye = np.eye(n)
    f = 1.0 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye) - eye
    v_t = np.swapaxes(v, -1, -2)
    m = v @ (eye * np.expand_dims(g_w, -1) + f * (v_t @ g_v)) @ v_t
    below = np.expand_dims(np.arange(n), -1) > np.arange(n)
    if UPLO == "U":
        read = np.swapaxes(below, -1, -2)
    else:
        read = below
    return read * (m + np.swapaxes(m, -1, -2)) + eye * m


@vjp_rule(np.linalg.eigvalsh, shape=None, requires=_uplo)
def eigvalsh(g, ans, a, UPLO="L"):
    # As eigh's, the eigenvalues alone: M = V diag(wbar) V^T
    v = np.linalg.eigh(a, UPLO)[1]
    n = np.shape(a)[-1]
    eye = np.eye(n)
    m = v @ (eye * np.expand_dims(g, -1)) @ np.swapaxes(v, -1, -2)
    below = np.expand_dims(np.arange(n), -1) > np.arange(n)
    if UPLO == "U":
        read = np.swapaxes(below, -1, -2)
    else:
        read = below
    return read * (m + np.swapaxes(m, -1, -2)) + eye * m


def _svd_items(static, ndim):
    rank = ndim("a")
    less = None if rank is None else rank - 1
    if static.get("compute_uv", True) is False:
        return One(less)
    return (rank, less, rank)


def _svd_supported(static, ndim):
    if static.get("hermitian", False) is not False:
        return ("np.linalg.svd(..., hermitian=True) reads only one triangle of the matrix, "
                "and is not differentiated. Write np.linalg.svd(a), the same value for a "
                "symmetric a")
    for name in ("full_matrices", "compute_uv"):
        if not isinstance(static.get(name, True), bool):
            return (f"the {name}= of np.linalg.svd must be written as True or False where it "
                    "is differentiated: it says what the result holds")
    return None


@vjp_rule(np.linalg.svd, shape="tuple", items=_svd_items, requires=_svd_supported,
          fields=("U", "S", "Vh"))
def svd(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    # A = U S V^T (U: m x k, V: n x k, k = min(m, n)). With F[i, j] = 1 / (s[j]^2 - s[i]^2)
    # off the diagonal (Townsend 2016):
    #   Abar = U [(F * (U^T Ubar - Ubar^T U)) S + diag(sbar) + S (F * (V^T Vbar - Vbar^T V))] V^T
    #          + (I - U U^T) Ubar S^-1 V^T + U S^-1 Vbar^T (I - V V^T)
    # Without U and V, Abar = U diag(sbar) V^T.
    if compute_uv:
        g_u_all, g_s, g_vh_all = g
        u_all, s, vh_all = ans
        k = svd_columns(a, full_matrices, g_u_all, g_vh_all)
        u = u_all[..., :k]
        vh = vh_all[..., :k, :]
        g_u = g_u_all[..., :k]
        g_vh = g_vh_all[..., :k, :]
        eye = np.eye(k)
        s2 = s * s
        f = 1.0 / (np.expand_dims(s2, -2) - np.expand_dims(s2, -1) + eye) - eye
        ut_gu = np.swapaxes(u, -1, -2) @ g_u
        vt_gv = vh @ np.swapaxes(g_vh, -1, -2)
        inner = ((f * (ut_gu - np.swapaxes(ut_gu, -1, -2))) * np.expand_dims(s, -2)
                 + eye * np.expand_dims(g_s, -1)
                 + np.expand_dims(s, -1) * (f * (vt_gv - np.swapaxes(vt_gv, -1, -2))))
        g_a = (u @ inner @ vh + ((g_u - u @ ut_gu) / np.expand_dims(s, -2)) @ vh
               + u @ ((g_vh - np.swapaxes(vt_gv, -1, -2) @ vh) / np.expand_dims(s, -1)))
    else:
        factors = np.linalg.svd(a, full_matrices=False)
        g_a = factors[0] @ (np.expand_dims(g, -1) * factors[2])
    return g_a


@vjp_rule(np.linalg.slogdet, shape="tuple", items=lambda static, ndim: (
    None if ndim("a") is None else ndim("a") - 2,) * 2, fields=("sign", "logabsdet"))
def slogdet(g, ans, a):
    # log|det A| has derivative A^-T; the sign is piecewise constant.
    g_logdet = g[1]
    return np.expand_dims(np.expand_dims(g_logdet, -1), -1) * np.swapaxes(np.linalg.inv(a),
                                                                          -1, -2)


@vjp_rule(np.linalg.eig, shape="tuple", items=_square_items,
          fields=("eigenvalues", "eigenvectors"))
def eig(g, ans, a):
    # A = V diag(w) V^-1, each column of V of unit length. A move dA gives
    # P = V^-1 dA V, dw = diag(P), dV = V (F * P) with F[i, j] = 1 / (w[j] - w[i]), less
    # each column's move along itself (which keeps its length). The adjoint of that
    # projection takes Vbar to Vbar - V diag(V^T Vbar); then Abar = V^-T (diag(wbar) +
    # F * (V^T Vbar)) V^T. Real eigenvalues only, distinct.
    g_w, g_v = g
    w, v = ans
    eye = np.eye(real_eigenvalues(w))
    f = 1.0 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye) - eye
    v_t = np.swapaxes(v, -1, -2)
    g_v_kept = g_v - v * np.sum(v * g_v, axis=-2, keepdims=True)
    inner = eye * np.expand_dims(g_w, -1) + f * (v_t @ g_v_kept)
    return np.linalg.solve(v_t, inner @ v_t)


@jvp_rule(np.linalg.qr)
def qr_jvp(g, ans, a, mode="reduced"):
    # X = Q U (the first k columns): with Z = Q^T dX U^-1, the move of Q along itself is the
    # skew-symmetric Omega = tril(Z, -1) - tril(Z, -1)^T and dU U^-1 = Z - Omega is upper
    # triangular: dQ = dX U^-1 + Q (Omega - Z), dU = (Z - Omega) U; V = Q^T Y moves by
    # dV = Q^T (dY - dQ V).
    k = qr_columns(a, mode)
    q_all, r_all = ans
    q = q_all[..., :k]
    u = r_all[..., :k, :k]
    v = r_all[..., :k, k:]
    q_t = np.swapaxes(q, -1, -2)
    u_t = np.swapaxes(u, -1, -2)
    d_x_u = np.swapaxes(np.linalg.solve(u_t, np.swapaxes(g[..., :k], -1, -2)), -1, -2)
    z = q_t @ d_x_u
    low = np.tril(z, -1)
    omega = low - np.swapaxes(low, -1, -2)
    d_q = d_x_u + q @ (omega - z)
    d_r = np.concatenate([(z - omega) @ u, q_t @ (g[..., k:] - d_q @ v)], axis=-1)
    return (d_q, d_r), None


@jvp_rule(np.linalg.eigh)
def eigh_jvp(g, ans, a, UPLO="L"):
    # dS, the symmetric move the triangle read makes: P = V^T dS V, dw = diag(P),
    # dV = V (F * P)
    w, v = ans
    n = np.shape(a)[-1]
    eye = np.eye(n)
    f = 1.0 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye) - eye
    below = np.expand_dims(np.arange(n), -1) > np.arange(n)
    if UPLO == "U":
        off = np.swapaxes(below, -1, -2) * g
    else:
        off = below * g
    p = np.swapaxes(v, -1, -2) @ (off + np.swapaxes(off, -1, -2) + eye * g) @ v
    return (np.diagonal(p, 0, -2, -1), v @ (f * p)),


@jvp_rule(np.linalg.eigvalsh)
def eigvalsh_jvp(g, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    n = np.shape(a)[-1]
    below = np.expand_dims(np.arange(n), -1) > np.arange(n)
    if UPLO == "U":
        off = np.swapaxes(below, -1, -2) * g
    else:
        off = below * g
    moved = off + np.swapaxes(off, -1, -2) + np.eye(n) * g
    return np.diagonal(np.swapaxes(v, -1, -2) @ moved @ v, 0, -2, -1)


@jvp_rule(np.linalg.svd)
def svd_jvp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    # P = U^T dA V: ds = diag(P),
    #   dU = U (F * (P S + S P^T)) + (I - U U^T) dA V S^-1,
    #   dV = V (F * (S P + P^T S)) + (I - V V^T) dA^T U S^-1.
    if compute_uv:
        u, s, vh = ans
        k = svd_columns(a, full_matrices)
        v = np.swapaxes(vh, -1, -2)
        eye = np.eye(k)
        s2 = s * s
        f = 1.0 / (np.expand_dims(s2, -2) - np.expand_dims(s2, -1) + eye) - eye
        a_v = g @ v
        at_u = np.swapaxes(g, -1, -2) @ u
        p = np.swapaxes(u, -1, -2) @ a_v
        p_t = np.swapaxes(p, -1, -2)
        row = np.expand_dims(s, -2)
        column = np.expand_dims(s, -1)
        d_u = u @ (f * (p * row + column * p_t)) + (a_v - u @ p) / row
        d_v = v @ (f * (column * p + p_t * row)) + (at_u - v @ p_t) / row
        t = (d_u, np.diagonal(p, 0, -2, -1), np.swapaxes(d_v, -1, -2))
    else:
        factors = np.linalg.svd(a, full_matrices=False)
        t = np.diagonal(factors[0].swapaxes(-1, -2) @ g @ np.swapaxes(factors[2], -1, -2),
                        0, -2, -1)
    return t, None, None, None


@jvp_rule(np.linalg.slogdet)
def slogdet_jvp(g, ans, a):
    # d log|det A| = tr(A^-1 dA); the sign does not move
    return (np.zeros_like(ans[0]), np.trace(np.linalg.solve(a, g), axis1=-2, axis2=-1)),


@jvp_rule(np.linalg.eig)
def eig_jvp(g, ans, a):
    w, v = ans
    eye = np.eye(real_eigenvalues(w))
    f = 1.0 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye) - eye
    p = np.linalg.solve(v, g @ v)
    d_v = v @ (f * p)
    return (np.diagonal(p, 0, -2, -1), d_v - v * np.sum(v * d_v, axis=-2, keepdims=True)),


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


def _cho_factor_supported(static, ndim):
    if static.get("overwrite_a", False) is not False:
        return ("scipy.linalg.cho_factor(..., overwrite_a=True) may overwrite a, whose value "
                "the gradient can still need. Leave out overwrite_a=")
    if not isinstance(static.get("lower", False), bool):
        return ("the lower= of scipy.linalg.cho_factor must be written as True or False where "
                "it is differentiated: it says which triangle holds the factor")
    return None


def cho_factor(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    # With L the lower factor (U^T for lower=False), A = L L^T for the symmetric A that the
    # triangle potrf reads makes: the cotangent of L goes back as in np.linalg.cholesky's
    # rule (Murray 2016) to that triangle; the other triangle of c is a copy of a's.
    g_c = g[0]
    n = np.shape(a)[-1]
    rows = np.arange(n)
    below = np.expand_dims(rows, -1) > rows
    eye = np.eye(n)
    if lower:
        low = np.tril(ans[0])
        g_low = np.tril(g_c)
        read = below
        copied = np.triu(g_c, 1)
    else:
        low = np.swapaxes(np.triu(ans[0]), -1, -2)
        g_low = np.swapaxes(np.triu(g_c), -1, -2)
        read = np.swapaxes(below, -1, -2)
        copied = np.tril(g_c, -1)
    low_t = np.swapaxes(low, -1, -2)
    phi = (low_t @ g_low) * (below + 0.5 * eye)
    left = np.linalg.solve(low_t, phi)
    m = np.swapaxes(np.linalg.solve(low_t, np.swapaxes(left, -1, -2)), -1, -2)
    return read * (m + np.swapaxes(m, -1, -2)) + eye * m + copied


def cho_factor_jvp(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    # dL = L Phi(L^-1 dA L^-T) as for cholesky; the copied triangle moves with a's; the flag
    # does not move
    n = np.shape(a)[-1]
    rows = np.arange(n)
    below = np.expand_dims(rows, -1) > rows
    eye = np.eye(n)
    if lower:
        low = np.tril(ans[0])
        off = below * g
        copied = np.triu(g, 1)
    else:
        low = np.swapaxes(np.triu(ans[0]), -1, -2)
        off = np.swapaxes(below, -1, -2) * g
        copied = np.tril(g, -1)
    moved = off + np.swapaxes(off, -1, -2) + eye * g
    right = np.swapaxes(np.linalg.solve(low, moved), -1, -2)
    inner = np.swapaxes(np.linalg.solve(low, right), -1, -2)
    t_low = low @ (inner * (below + 0.5 * eye))
    if lower:
        t_c = t_low + copied
    else:
        t_c = np.swapaxes(t_low, -1, -2) + copied
    return (t_c, ans[1]), None, None, None


def _cho_solve_supported(static, ndim):
    if static.get("overwrite_b", False) is not False:
        return ("scipy.linalg.cho_solve(..., overwrite_b=True) may overwrite b, whose value "
                "the gradient can still need. Leave out overwrite_b=")
    if ndim("b") is not None and ndim("b") > 2:
        return ("scipy.linalg.cho_solve of a b with more than 2 axes is not differentiated: "
                "solve for its columns, b of shape (n,) or (n, k)")
    return None


def cho_solve(g, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
    # x = A^-1 b, A = M M^T with M the lower factor (U^T where c holds U): b gets A^-1 g,
    # A gets G = -(A^-1 g) x^T, and M, through dA = dM M^T + M dM^T, (G + G^T) M in its
    # triangle, which goes back to c's (transposed for U). The flag gets nothing.
    c, lower = c_and_lower
    n = np.shape(c)[-1]
    m = np.where(lower, np.tril(c), np.swapaxes(np.triu(c), -1, -2))
    g_b = scipy.linalg.cho_solve(c_and_lower, g)
    g_a = -(np.reshape(g_b, (n, -1)) @ np.swapaxes(np.reshape(ans, (n, -1)), -1, -2))
    g_m = np.tril((g_a + np.swapaxes(g_a, -1, -2)) @ m)
    return [np.where(lower, g_m, np.swapaxes(g_m, -1, -2)), 0.0], g_b


def cho_solve_jvp(g, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
    # dx = A^-1 (db - dA x), dA = dM M^T + M dM^T from the tangent of c's factor triangle
    c, lower = c_and_lower
    d_c = g[0]
    m = np.where(lower, np.tril(c), np.swapaxes(np.triu(c), -1, -2))
    d_m = np.where(lower, np.tril(d_c), np.swapaxes(np.triu(d_c), -1, -2))
    d_a = d_m @ np.swapaxes(m, -1, -2) + m @ np.swapaxes(d_m, -1, -2)
    return (-scipy.linalg.cho_solve(c_and_lower, d_a @ ans),
            scipy.linalg.cho_solve(c_and_lower, g))


def register_scipy() -> None:
    """Register the rules of ``scipy.linalg``'s functions (nothing where SciPy is not
    installed). The templates above read the module through the global ``scipy``."""
    global scipy
    try:
        import scipy.linalg
    except ImportError:
        scipy = None
        return
    vjp_rule(scipy.linalg.cho_factor, shape="tuple", requires=_cho_factor_supported,
             items=lambda static, ndim: (ndim("a"), bool))(cho_factor)
    jvp_rule(scipy.linalg.cho_factor)(cho_factor_jvp)
    vjp_rule(scipy.linalg.cho_solve, shape="matmul", requires=_cho_solve_supported)(cho_solve)
    jvp_rule(scipy.linalg.cho_solve)(cho_solve_jvp)
    vjp_rule(scipy.linalg.solve_triangular, shape="matmul",
             requires=_solve_triangular_supported)(solve_triangular)
    jvp_rule(scipy.linalg.solve_triangular)(solve_triangular_jvp)
    vjp_rule(scipy.linalg.expm, shape="same")(expm)
    jvp_rule(scipy.linalg.expm)(expm_jvp)
    vjp_rule(scipy.linalg.sqrtm, shape="same")(sqrtm)
    jvp_rule(scipy.linalg.sqrtm)(sqrtm_jvp)
    vjp_rule(scipy.linalg.solve_sylvester, shape=None)(solve_sylvester)
    jvp_rule(scipy.linalg.solve_sylvester)(solve_sylvester_jvp)


when_imported("scipy.linalg", register_scipy)
