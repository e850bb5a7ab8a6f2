"""The scatter helpers of each backend (``indexing.SCATTER``): ``add_at``, ``add_at_each`` and
``zeroed_at`` on the arrays of JAX, Dask, CuPy and a strict array API namespace.

Each implementation is called directly on a battery of indexes and compared with the NumPy
helper on the same float64 data. The result must be an array of the backend (nothing
converted to NumPy), the inputs must be left as they were, and a Dask result must be lazy
(nothing computed during the call) and chunked like the array it stands for. An index a
backend cannot take raises at the call, never gives a wrong result. Backends that are not
installed (CuPy without a GPU) are skipped.
"""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from s2sgrad.runtime import indexing

RNG = np.random.default_rng(0)
A = RNG.standard_normal((5, 4, 3))
HELPERS = ("add_at", "add_at_each", "zeroed_at")

# Indexes that name no position twice: what ``add_at`` takes (``zeroed_at`` too).
BASIC = {
    "int": 2,
    "negative int": -1,
    "numpy int": np.int64(3),
    "slice with a negative step": slice(4, 0, -2),
    "slice with a step": slice(None, None, 2),
    "int and slice": (1, slice(None, None, 2)),
    "slice, negative int, slice": (slice(1, 4), -2, slice(None)),
    "ellipsis and int": (Ellipsis, 1),
    "int, ellipsis, slice": (0, Ellipsis, slice(2, None)),
    "empty tuple": (),
    "None first": (None, 2),
    "None between": (slice(None), None, 1),
    "None and ellipsis": (Ellipsis, None, slice(0, 2)),
}

MASK_1D = np.array([True, False, True, True, False])
MASK_2D = A[..., 0] > 0
# Indexes that may name a position several times, or that select with a mask: what
# ``add_at_each`` takes (``zeroed_at`` too).
EACH = {
    "repeated ints": np.array([0, 2, 2, -1, 2]),
    "2-d ints": np.array([[1, 1], [4, 0], [1, -5]]),
    "0-d int array": np.array(3),
    "ints along axis 1": (slice(None), np.array([3, 0, 3])),
    "ints along the last axis": (Ellipsis, np.array([2, 2, 0])),
    "ints after a partial slice": (slice(1, 4), np.array([0, 0, 2])),
    "int next to ints": (1, np.array([0, 0, 3])),
    "int apart from ints": (0, slice(None), np.array([2, 2, 1])),
    "ints apart from an int": (np.array([4, 4]), slice(1, 3), -1),
    "2-d ints apart from an int": (0, slice(None), np.array([[2, 2], [1, 0]])),
    "no ints": np.array([], dtype=np.int64),
    "1-d mask": MASK_1D,
    "1-d mask along axis 1": (slice(None), np.array([True, False, False, True])),
    "2-d mask": MASK_2D,
    "full mask": A > 0.5,
    "two int arrays": (np.array([0, 0, 4]), np.array([1, 1, 2])),
}


def numpy_helper(name: str):
    return getattr(indexing, name)


# -- the backends ---------------------------------------------------------------------------


class Backend:
    """How a test makes and reads the arrays of one backend."""

    name: str

    def array(self, a: np.ndarray):
        raise TypeError

    def numpy(self, x) -> np.ndarray:
        raise TypeError

    def owns(self, x) -> bool:
        raise TypeError

    def index(self, index):
        """``index`` with its arrays made arrays of the backend."""
        if isinstance(index, tuple):
            return tuple(self.index(e) for e in index)
        if isinstance(index, np.ndarray):
            return self.array(index)
        return index


class Jax(Backend):
    name = "jax"

    def __init__(self):
        self.jax = pytest.importorskip("jax")
        self.jnp = pytest.importorskip("jax.numpy")

    def array(self, a):
        return self.jnp.asarray(a)

    def numpy(self, x):
        return np.asarray(x)

    def owns(self, x):
        return isinstance(x, self.jax.Array)


class Dask(Backend):
    name = "dask"

    def __init__(self):
        self.da = pytest.importorskip("dask.array")
        self.dask = pytest.importorskip("dask")

    def array(self, a):
        return self.da.from_array(a, chunks=tuple(max(1, (n + 1) // 2) for n in a.shape))

    def numpy(self, x):
        return x.compute()

    def owns(self, x):
        return isinstance(x, self.da.Array)


class CuPy(Backend):
    name = "cupy"

    def __init__(self):
        self.cupy = pytest.importorskip("cupy")
        try:
            if self.cupy.cuda.runtime.getDeviceCount() == 0:
                pytest.skip("no GPU")
        except self.cupy.cuda.runtime.CUDARuntimeError:
            pytest.skip("no GPU")

    def array(self, a):
        return self.cupy.asarray(a)

    def numpy(self, x):
        return self.cupy.asnumpy(x)

    def owns(self, x):
        return isinstance(x, self.cupy.ndarray)


class ArrayAPI(Backend):
    name = "array_api"

    def __init__(self):
        self.xp = pytest.importorskip("array_api_strict")

    def array(self, a):
        return self.xp.asarray(a)

    def numpy(self, x):
        return np.from_dlpack(x)

    def owns(self, x):
        return isinstance(x, type(self.xp.asarray(0.0)))


@pytest.fixture(scope="module")
def float64():
    """JAX in float64, as the NumPy data is; restored afterwards."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


@pytest.fixture(params=["jax", "dask", "cupy", "array_api"])
def backend(request) -> Backend:
    if request.param == "jax":
        request.getfixturevalue("float64")
    return {"jax": Jax, "dask": Dask, "cupy": CuPy, "array_api": ArrayAPI}[request.param]()


# What each backend refuses: a helper it does not have, an index kind its helper raises
# TypeError for.
ABSENT = {"array_api": {"add_at_each"}}
MASKS = {"1-d mask", "1-d mask along axis 1", "2-d mask", "full mask"}


def refused(backend: str, name: str, what: str, index_on_backend: bool) -> bool:
    """Dask adds at one integer array or a 1-d NumPy mask (what a mask of its own selects has
    a length it does not know) and zeroes through one array; a strict namespace zeroes
    through a mask that is the whole index, or a basic index."""
    if backend == "dask" and name == "add_at_each":
        return what in {"2-d mask", "full mask", "two int arrays"} or (
            index_on_backend and what in MASKS)
    if backend == "dask" and name == "zeroed_at":
        return what == "two int arrays"
    if backend == "array_api" and name == "zeroed_at":
        return what in EACH and what not in {"1-d mask", "2-d mask", "full mask",
                                             "0-d int array"}
    return False

# A strict namespace takes no NumPy array in an index.
NUMPY_INDEXES = {"jax", "dask", "cupy"}


def helper_of(backend: Backend, name: str):
    found = indexing.SCATTER[backend.name].get(name)
    if found is None:
        pytest.skip(f"{backend.name} has no {name}")
    return found


def check(backend: Backend, name: str, index, *, index_on_backend: bool, what: str):
    """``name`` of ``backend`` at ``index`` equals NumPy's, on the backend, inputs intact."""
    helper = helper_of(backend, name)
    if name == "zeroed_at":
        reference = indexing.zeroed_at(A, index)
        args = (backend.array(A), backend.index(index) if index_on_backend else index)
    else:
        g = RNG.standard_normal(np.shape(A[index]))
        reference = numpy_helper(name)(A, index, g)
        args = (backend.array(A), backend.index(index) if index_on_backend else index,
                backend.array(g))
    operands = (args[0],) if name == "zeroed_at" else (args[0], args[2])
    before = [backend.numpy(x) for x in operands]
    names = [getattr(x, "name", None) for x in args]
    if refused(backend.name, name, what, index_on_backend):
        with pytest.raises(TypeError, match=backend.name):
            helper(*args)
        return
    if isinstance(backend, Dask):
        with backend.dask.config.set(scheduler=computes):  # nothing computed in the call
            result = helper(*args)
        assert result.chunks == args[0].chunks
    else:
        result = helper(*args)
    assert backend.owns(result), type(result)
    got = backend.numpy(result)
    assert got.dtype == reference.dtype and got.shape == reference.shape
    np.testing.assert_allclose(got, reference, rtol=1e-13, atol=1e-13)
    assert [getattr(x, "name", None) for x in args] == names
    for x, was in zip(operands, before, strict=True):
        np.testing.assert_array_equal(backend.numpy(x), was)


def computes(*args, **kwargs):
    raise AssertionError("a Dask array was computed")


# -- the table --------------------------------------------------------------------------------


def test_every_backend_has_only_the_three_helpers_as_functions():
    assert set(indexing.SCATTER) == {"jax", "cupy", "dask", "array_api"}
    for backend, helpers in indexing.SCATTER.items():
        assert set(helpers) <= set(HELPERS), backend
        assert "add_at" in helpers and "zeroed_at" in helpers, backend
        assert set(HELPERS) - set(helpers) == ABSENT.get(backend, set()), backend
        for name, f in helpers.items():
            assert callable(f), (backend, name)
            assert f is not numpy_helper(name), (backend, name)


def test_the_module_imports_no_array_library_but_numpy():
    """The backends' libraries are imported when a helper runs: importing s2sgrad needs
    none of them."""
    tree = ast.parse(inspect.getsource(indexing))
    imported = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "collections", "typing", "numpy", "operator", "math", "warnings"}, imported


# -- each helper on each backend -------------------------------------------------------------


@pytest.mark.parametrize("what", sorted(BASIC))
@pytest.mark.parametrize("name", ["add_at", "zeroed_at"])
def test_basic_indexes_equal_numpy(backend, name, what):
    check(backend, name, BASIC[what], index_on_backend=False, what=what)


@pytest.mark.parametrize("what", sorted(EACH))
@pytest.mark.parametrize("on_backend", [True, False], ids=["backend index", "numpy index"])
@pytest.mark.parametrize("name", ["add_at_each", "zeroed_at"])
def test_repeating_and_masking_indexes_equal_numpy(backend, name, on_backend, what):
    if not on_backend and backend.name not in NUMPY_INDEXES:
        pytest.skip(f"{backend.name} takes no NumPy array in an index")
    check(backend, name, EACH[what], index_on_backend=on_backend, what=what)


@pytest.mark.parametrize("what", sorted(BASIC))
def test_add_at_each_takes_basic_indexes_too(backend, what):
    check(backend, "add_at_each", BASIC[what], index_on_backend=False, what=what)


def test_a_numpy_accumulator_gives_the_backends_array(backend):
    """Zeros made with NumPy (``np.zeros(shape)``) that the backend's cotangent is added to:
    the result is the backend's array."""
    for name, index in (("add_at", (1, slice(None))), ("add_at_each", np.array([1, 1]))):
        helper = helper_of(backend, name)
        if backend.name == "array_api" and name != "add_at":
            continue
        g = RNG.standard_normal(np.shape(A[index]))
        result = helper(np.zeros_like(A), backend.index(index), backend.array(g))
        assert backend.owns(result)
        np.testing.assert_allclose(backend.numpy(result),
                                   numpy_helper(name)(np.zeros_like(A), index, g))


def test_a_float32_accumulator_stays_float32(backend):
    """As NumPy's ``out[index] += g``: the sum is cast to the accumulator's dtype."""
    a = A.astype(np.float32)
    g = RNG.standard_normal(A[1].shape)
    for name in ("add_at", "add_at_each"):
        if name in indexing.SCATTER[backend.name]:
            result = indexing.SCATTER[backend.name][name](backend.array(a), 1,
                                                          backend.array(g))
            reference = numpy_helper(name)(a, 1, g)
            assert backend.numpy(result).dtype == np.float32
            np.testing.assert_allclose(backend.numpy(result), reference, rtol=1e-6)


# -- what only some backends do --------------------------------------------------------------


def test_jax_scatters_under_jit(float64):
    """Traced integer indexes add each occurrence; a traced mask zeroes (without knowing how
    many positions it holds)."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    each, zeroed = indexing.SCATTER["jax"]["add_at_each"], indexing.SCATTER["jax"]["zeroed_at"]
    idx = np.array([0, 2, 2, -1])
    g = RNG.standard_normal((4, 4, 3))
    got = jax.jit(each)(jnp.asarray(A), jnp.asarray(idx), jnp.asarray(g))
    np.testing.assert_allclose(np.asarray(got), indexing.add_at_each(A, idx, g))
    got = jax.jit(zeroed)(jnp.asarray(A), jnp.asarray(MASK_2D))
    np.testing.assert_array_equal(np.asarray(got), indexing.zeroed_at(A, MASK_2D))


def dask_module():
    return pytest.importorskip("dask.array")


def test_dask_add_at_each_stays_chunked_for_many_chunks():
    """Indexes spread over several chunks of the index and of the array: each output chunk
    gathers what every chunk of the index adds to it."""
    da = dask_module()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((40, 6))
    idx = rng.integers(-40, 40, size=300)
    g = rng.standard_normal((300, 6))
    x = da.from_array(a, chunks=(7, 4))
    for index in (idx, da.from_array(idx, chunks=37)):
        got = indexing.SCATTER["dask"]["add_at_each"](x, index, da.from_array(g, chunks=50))
        assert got.chunks == x.chunks
        np.testing.assert_allclose(got.compute(), indexing.add_at_each(a, idx, g))


def test_dask_add_at_each_refuses_an_index_out_of_range():
    """NumPy's IndexError: at the call for a NumPy index, when computed for a Dask one."""
    da = dask_module()
    each = indexing.SCATTER["dask"]["add_at_each"]
    x, g = da.from_array(A, chunks=2), da.from_array(np.ones((2, 4, 3)), chunks=2)
    with pytest.raises(IndexError):
        each(x, np.array([0, 5]), g)
    with pytest.raises(IndexError):
        each(x, np.array([-6, 0]), g)
    with pytest.raises(IndexError):
        each(x, np.array([True, False]), g[:1])  # a mask of another length
    lazy = each(x, da.from_array(np.array([1, 5])), g)
    with pytest.raises(IndexError):
        lazy.compute()


def test_dask_zeroed_at_keeps_the_chunks_of_g_with_a_dask_mask():
    da = dask_module()
    g = da.from_array(A, chunks=(2, 3, 3))
    mask = da.from_array(MASK_2D, chunks=(3, 2))  # other chunks than g's
    got = indexing.SCATTER["dask"]["zeroed_at"](g, mask)
    assert got.chunks == g.chunks
    np.testing.assert_array_equal(got.compute(), indexing.zeroed_at(A, MASK_2D))


def test_array_api_zeroed_at_refuses_integer_arrays():
    xp = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError, match="array_api"):
        indexing.SCATTER["array_api"]["zeroed_at"](xp.asarray(A), xp.asarray([0, 1]))
