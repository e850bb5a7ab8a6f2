"""Imports inside a differentiated function: ``from scipy.special import logsumexp`` in the
body binds its name once, for the whole call, as a module-level import would; calls through
the name get their rules as calls through a global do. Checked as users write them (module
and from-imports, ``as`` names, submodules, read by a nested function, in a loop and a
branch, decorated and on Tensors, forward mode, second order) against finite differences;
an import the compiler cannot bind once for the call (inside a block or a nested
function, a name also assigned, a name read before its import) is refused at its line."""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.testing import check_grads
from tests.located import assert_points_at

rng = np.random.default_rng(11)
X = rng.uniform(0.2, 1.5, 4)


def module_import(x):
    import math
    return np.sum(x ** 2) * math.cos(0.3) + math.pi * np.sum(np.sin(x))


def from_import_as(x):
    import numpy.linalg as la
    from numpy.linalg import norm as length
    return length(x) + la.norm(x * 2.0) ** 2


def submodule_import(x):
    import numpy.fft
    return np.sum(x) * numpy.fft.fftfreq(4)[1]


def read_by_nested_function(x):
    from math import e

    import numpy.linalg as la

    def scaled(v):
        return la.norm(v) * e
    return scaled(x) + scaled(x ** 2)


def in_loop_and_branch(x):
    from numpy import exp, tanh
    s = 0.0
    for i in range(3):
        if i % 2 == 0:
            s = s + np.sum(tanh(x * i))
        else:
            s = s + np.sum(exp(-x))
    return s


CASES = [module_import, from_import_as, submodule_import, read_by_nested_function,
         in_loop_and_branch]


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_imported_names_differentiate(fn):
    before = X.copy()
    check_grads(fn, X, modes=("rev", "fwd"))
    check_grads(fn, X, order=2)
    np.testing.assert_array_equal(X, before)


def test_scipy_functions_imported_in_the_body_get_their_rules():
    pytest.importorskip("scipy.special")

    def soft(x):
        from scipy.special import expit, logsumexp
        return logsumexp(x) + np.sum(expit(x))
    check_grads(soft, X, modes=("rev", "fwd"))
    check_grads(soft, X, order=2)
    value, g = s2sgrad.value_and_grad(soft)(X)
    assert value == soft(X)
    p = np.exp(X - np.log(np.sum(np.exp(X))))
    s = 1.0 / (1.0 + np.exp(-X))
    np.testing.assert_allclose(g, p + s * (1 - s), rtol=1e-12)


def test_imports_on_the_tensor_path():
    @s2sgrad.grad
    def loss(x):
        import math
        return np.sum(x ** 2) * math.e

    x = s2sgrad.tensor(X, requires_grad=True)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * X * np.e)
    assert "import" not in loss.adjoint_source  # bound once, like a global


# --- what stays refused -------------------------------------------------------------------


def import_in_branch(x):
    if np.sum(x) > 0:
        import math  # <- refused
        return x * math.e
    return x


def import_in_nested_function(x):
    def inner(v):
        from math import e  # <- refused
        return v * e
    return np.sum(inner(x))


def import_also_assigned(x):
    import math  # <- refused
    math = 2.0  # noqa: F811
    return np.sum(x) * math


def read_before_import(x):
    y = np.sum(x) * math.e  # noqa: F821
    import math  # <- refused  # noqa: F401
    return y


def cannot_be_imported(x):
    from numpy import no_such_function  # <- refused
    return no_such_function(x)


@pytest.mark.parametrize("fn,token,words", [
    (import_in_branch, "import", "inside a block or a nested function"),
    (import_in_nested_function, "from", "inside a block or a nested function"),
    (import_also_assigned, "import", "'math' is imported and also assigned"),
    (read_before_import, "import", "'math' is read before the import"),
    (cannot_be_imported, "from", "cannot import 'no_such_function'"),
], ids=lambda v: getattr(v, "__name__", None))
def test_imports_refused_at_their_line(fn, token, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(X)
    assert words in info.value.reason, info.value.reason
    assert_points_at(info.value, fn, token)
