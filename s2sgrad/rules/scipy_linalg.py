"""Rules for ``scipy.linalg.cholesky`` and ``scipy.linalg.solve_banded``, where SciPy is
installed (the other functions of ``scipy.linalg`` have their rules in decompositions.py).

``scipy.linalg.cholesky(a)`` reads the upper triangle of ``a`` and returns ``U = L^T``;
``lower=True`` reads the lower one and returns ``L``: the derivatives are those of
``np.linalg.cholesky(a, upper=True)`` and ``np.linalg.cholesky(a)``, and the triangle that is
not read gets no contribution. ``solve_banded((l, u), ab, b)`` solves ``A x = b`` for the
matrix whose band ``ab`` holds (row ``u + i - j`` of column ``j`` holds ``A[i, j]``), for a
``b`` of shape ``(n,)`` or ``(n, k)``: ``b`` gets ``A^-T g``, solved in the band of ``A^T``,
and ``ab`` gets ``-(A^-T g) x^T`` on the band, except its corners outside the matrix, which
are not read. The contributions are solves in the same band again, so second derivatives
follow. A call that may overwrite an operand (``overwrite_a=True``, ``overwrite_ab=True``,
``overwrite_b=True``) is refused: the gradient can still need its value.
"""

import numpy as np

from .registry import jvp_rule, vjp_rule, when_imported

scipy = None  # the package, once register_scipy has imported scipy.linalg


def _cholesky_supported(static, ndim):
    if static.get("overwrite_a", False) is not False:
        return ("scipy.linalg.cholesky(..., overwrite_a=True) may overwrite a, whose value "
                "the gradient can still need. Leave out overwrite_a=")
    if not isinstance(static.get("lower", False), bool):
        return ("the lower= of scipy.linalg.cholesky must be written as True or False where "
                "it is differentiated: it says which triangle is read and which factor returned")
    return None


def scipy_cholesky(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    # np.linalg.cholesky's rule: lower=True reads the lower triangle and returns L, the
    # default reads the upper one and returns U = L^T, as np.linalg.cholesky(a, upper=True)
    n = np.shape(a)[-1]
    rows = np.arange(n)
    below = np.expand_dims(rows, -1) > rows
    eye = np.eye(n)
    if lower:
        low = ans
        g_low = g
        read = below
    else:
        low = np.swapaxes(ans, -1, -2)
        g_low = np.swapaxes(g, -1, -2)
        read = np.swapaxes(below, -1, -2)
    low_t = np.swapaxes(low, -1, -2)
    phi = (low_t @ g_low) * (below + 0.5 * eye)
    left = np.linalg.solve(low_t, phi)
    m = np.swapaxes(np.linalg.solve(low_t, np.swapaxes(left, -1, -2)), -1, -2)
    return read * (m + np.swapaxes(m, -1, -2)) + eye * m


def scipy_cholesky_jvp(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    # dL = L Phi(L^-1 dS L^-T), as np.linalg.cholesky's
    n = np.shape(a)[-1]
    rows = np.arange(n)
    below = np.expand_dims(rows, -1) > rows
    eye = np.eye(n)
    if lower:
        low = ans
        off = below * g
    else:
        low = np.swapaxes(ans, -1, -2)
        off = np.swapaxes(below, -1, -2) * g
    moved = off + np.swapaxes(off, -1, -2) + eye * g
    right = np.swapaxes(np.linalg.solve(low, moved), -1, -2)
    inner = np.swapaxes(np.linalg.solve(low, right), -1, -2)
    t_low = low @ (inner * (below + 0.5 * eye))
    if lower:
        t = t_low
    else:
        t = np.swapaxes(t_low, -1, -2)
    return t


def _solve_banded_supported(static, ndim):
    for name in ("overwrite_ab", "overwrite_b"):
        if static.get(name, False) is not False:
            return (f"scipy.linalg.solve_banded(..., {name}=True) may overwrite an operand "
                    f"whose value the gradient can still need. Leave out {name}=")
    if ndim("ab") not in (2, None) or ndim("b") not in (1, 2, None):
        return ("scipy.linalg.solve_banded is differentiated for one band ab (2-d) and b of "
                "shape (n,) or (n, k): solve a stack one problem at a time")
    return None


def solve_banded(g, ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False,
                 check_finite=True):
    # x = A^-1 b with A[i, j] = ab[u + i - j, j] on the band. b gets y = A^-T g, solved in the
    # band of A^T: (u, l) diagonals, its row k holding ab's row u + l - k shifted by k - l
    # columns. A gets -y x^T on the band only: ab[k, j] gets -y[j + k - u] . x[j] (the
    # corners outside the matrix get nothing). x and y are read as (n, columns).
    lower, upper = l_and_u
    n = np.shape(ab)[-1]
    band = np.expand_dims(np.arange(lower + upper + 1), -1)
    cols = np.arange(n)
    source = cols + band - lower
    inside_t = (source >= 0) & (source < n)
    ab_t = np.where(inside_t, ab[upper + lower - band, np.clip(source, 0, n - 1)], 0.0)
    y = scipy.linalg.solve_banded((upper, lower), ab_t, g)
    row = cols + band - upper
    inside = (row >= 0) & (row < n)
    y_cols = np.reshape(y, (n, -1))
    x_cols = np.reshape(ans, (n, -1))
    g_ab = -np.where(inside, np.sum(y_cols[np.clip(row, 0, n - 1)] * x_cols, axis=-1), 0.0)
    return None, g_ab, y


def solve_banded_jvp(g, ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False,
                     check_finite=True):
    # dx = A^-1 (db - dA x): (dA x)[i] adds g[k, j] x[j] over the band's j = i - k + u
    lower, upper = l_and_u
    n = np.shape(ab)[-1]
    band = np.expand_dims(np.arange(lower + upper + 1), -1)
    col = np.arange(n) - band + upper
    inside = (col >= 0) & (col < n)
    picked = np.clip(col, 0, n - 1)
    x_cols = np.reshape(ans, (n, -1))
    moved = np.sum(np.where(np.expand_dims(inside, -1),
                            np.expand_dims(g[band, picked], -1) * x_cols[picked], 0.0), axis=0)
    return (None, -scipy.linalg.solve_banded(l_and_u, ab, np.reshape(moved, np.shape(ans))),
            scipy.linalg.solve_banded(l_and_u, ab, g))



def register_scipy() -> None:
    """Register the rules of ``scipy.linalg.cholesky`` and ``solve_banded`` (nothing where
    SciPy is not installed). The templates above read the module through the global
    ``scipy``."""
    global scipy
    try:
        import scipy.linalg
    except ImportError:
        scipy = None
        return
    vjp_rule(scipy.linalg.cholesky, shape="same", requires=_cholesky_supported)(scipy_cholesky)
    jvp_rule(scipy.linalg.cholesky)(scipy_cholesky_jvp)
    vjp_rule(scipy.linalg.solve_banded, shape=None,
             requires=_solve_banded_supported)(solve_banded)
    jvp_rule(scipy.linalg.solve_banded)(solve_banded_jvp)


when_imported("scipy.linalg", register_scipy)
