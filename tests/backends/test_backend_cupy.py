"""The Dask catalogue (tests/backends/test_backend_dask.py) on CuPy arrays, where a GPU exists: the
same generated NumPy-style code runs on the GPU through NumPy's dispatch protocols, and the
gradients equal the NumPy path's. Without CuPy or a GPU these tests are skipped.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from tests.backends.test_backend_dask import CASES, W, X

cupy = pytest.importorskip("cupy")
try:
    if cupy.cuda.runtime.getDeviceCount() == 0:
        pytest.skip("no GPU", allow_module_level=True)
except cupy.cuda.runtime.CUDARuntimeError:
    pytest.skip("no GPU", allow_module_level=True)


def on_gpu(args: tuple) -> tuple:
    return tuple(cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_grad_on_cupy_equals_numpy(name):
    fn, args, wrt = CASES[name]
    value, grads = s2sgrad.value_and_grad(fn, wrt=wrt)(*args)
    gpu_value, gpu_grads = s2sgrad.value_and_grad(fn, wrt=wrt)(*on_gpu(args))
    for got, want in zip([gpu_value, *gpu_grads], [value, *grads], strict=True):
        np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=1e-10, atol=1e-12)


def test_a_conversion_to_the_host_is_refused_on_cupy():
    def to_a_float(w, X):
        return float(np.sum(X @ w)) * np.sum(w)

    with pytest.raises(s2sgrad.TransformError, match="cupy"):
        s2sgrad.gradient(to_a_float)(cupy.asarray(W), cupy.asarray(X))
