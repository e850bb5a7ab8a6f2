"""Run-time support for writes through an index that may repeat a position: the scatter
helpers of the generated adjoint, for NumPy's arrays and, in ``SCATTER``, for other libraries'.

``add_at(a, i, g)`` adds ``g`` at an index that names no position twice, ``add_at_each(a, idx,
g)`` at any index (each occurrence of a repeated position adds), ``zeroed_at(g, i)`` zeroes a
region. Each returns a new array and leaves its operands as they are. ``SCATTER[backend]``
holds the same helpers for the arrays of a backend, which a compile for it binds under these
names:

    backend     add_at                add_at_each                         zeroed_at
    jax         a.at[i].add(g)        a.at[idx].add(g)                    .at[i].set(0); where(mask)
    cupy        copy; out[i] += g     copy; cupyx.scatter_add             copy; out[i] = 0
    dask        item assignment       np.add.at per pair of chunks of     item assignment;
                                      the array and the index, summed     where(mask)
    array_api   item assignment       absent: the standard has no         item assignment;
                (basic indexes)       scatter for integer arrays          where(mask)

A helper a backend cannot do soundly is absent from its dict (the compiler refuses the
construct); an index a present helper cannot take raises TypeError naming the backend, at the
call. A result is an array of the backend, never converted to NumPy, and a Dask result is lazy,
chunked as the array it is added to. The libraries are imported when a helper runs.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np


def last_writes(shape: tuple[int, ...], index) -> np.ndarray:
    """For ``y[index] = v`` on an array of ``shape``: which elements of ``v``'s region land.

    With an integer-array index a position may appear several times; NumPy keeps the last
    value written there, so only that element of ``v`` receives a gradient.
    """
    positions = np.arange(int(np.prod(shape))).reshape(shape)[index]
    flat = np.ravel(positions)
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    mask = np.zeros(flat.size, dtype=bool)
    mask[flat.size - 1 - first_from_end] = True
    return mask.reshape(np.shape(positions))


def batch_last_index(index: Any) -> Any:
    """``index`` for the rows of batched tangents with the batch axis moved last: one that
    holds ``...`` must end before that axis (the rest leave it alone)."""
    entries = index if type(index) is tuple else (index,)
    if any(e is Ellipsis for e in entries):
        return (*entries, slice(None))
    return index


def item_rows(rows: Any, index: Any) -> Any:
    """The batched tangent of ``x[index]`` where the rank of ``x`` was not known when
    compiling and ``x`` may be a list or tuple (an item of a list built by appends): a
    container's rows hold one batched tangent per item; an array's are indexed with the
    batch axis moved last."""
    if isinstance(rows, (list, tuple, dict)):
        return rows[index]
    return np.moveaxis(np.moveaxis(rows, 0, -1)[batch_last_index(index)], -1, 0)


def rows_with_item(rows: Any, index: Any, g: Any) -> Any:
    """Zeros shaped like ``rows`` with ``g`` at ``index``: the cotangent of ``rows`` that
    ``item_rows(rows, index)`` gives (each repeated position adds its part)."""
    if isinstance(rows, dict):
        out = {k: np.zeros_like(v) for k, v in rows.items()}
        out[index] = g
        return out
    if isinstance(rows, (list, tuple)):
        out = [np.zeros_like(v) for v in rows]
        out[index] = g
        return out
    out = np.zeros_like(rows)
    np.add.at(np.moveaxis(out, 0, -1), batch_last_index(index), np.moveaxis(g, 0, -1))
    return out


def add_at(a: Any, index: Any, g: Any) -> np.ndarray:
    """A copy of the array ``a`` with ``g`` added to ``a[index]``, for an index that names
    no position twice (integers, slices, None, ...). Where the adjoint owns ``a`` it is
    written ``a[index] += g`` instead (see inplace.py)."""
    out = np.array(a, copy=True)
    out[index] += g
    return out


def add_at_each(a: Any, index: Any, g: Any) -> np.ndarray:
    """``add_at`` for any index (integer arrays that repeat a position, masks): each
    occurrence adds its part of ``g``. In place: ``np.add.at(a, index, g)``."""
    out = np.array(a, copy=True)
    np.add.at(out, index, g)
    return out


def zeroed_at(g: Any, index: Any) -> np.ndarray:
    """A copy of the array ``g`` with ``g[index]`` set to zero. In place: ``g[index] = 0.0``."""
    out = np.array(g, copy=True)
    out[index] = 0.0
    return out


# -- the parts of an index -------------------------------------------------------------------

def _entries(index: Any) -> tuple:
    return index if type(index) is tuple else (index,)


def _is_array(entry: Any) -> bool:
    """An array in an index (NumPy's 0-d integers are numbers)."""
    return hasattr(entry, "shape") and not isinstance(entry, np.generic)


def _is_mask(entry: Any) -> bool:
    """A boolean array of NumPy, JAX, CuPy or Dask (whose dtypes are NumPy's)."""
    return _is_array(entry) and entry.ndim >= 1 and np.dtype(entry.dtype) == np.bool_


def _describe(index: Any) -> str:
    """The kinds of an index's entries, for a message: ``(slice, int64 array 2-d)``."""
    def kind(e: Any) -> str:
        if _is_array(e):
            return f"{e.dtype} array {e.ndim}-d"
        return "..." if e is Ellipsis else type(e).__name__
    return "(" + ", ".join(kind(e) for e in _entries(index)) + ")"


def _without_none(index: Any, ndim: int) -> tuple[tuple, tuple[int, ...]]:
    """For a basic index into an array of ``ndim`` axes: the index without its ``None``s
    (which Dask and the array API do not take in an assignment), and the axes of
    ``a[index]`` that they add."""
    entries = _entries(index)
    consumed = sum(1 for e in entries if e is not None and e is not Ellipsis)
    axes, axis = [], 0
    for e in entries:
        if e is None:
            axes.append(axis)
            axis += 1
        elif e is Ellipsis:
            axis += ndim - consumed
        elif isinstance(e, slice):
            axis += 1
    return tuple(e for e in entries if e is not None), tuple(axes)


def _drop_axes(g: Any, ndim: int, axes: tuple[int, ...], reshape: Callable) -> Any:
    """``g``, the addend of a region of ``ndim`` axes (or one that broadcasts to it), without
    the unit axes ``axes`` of that region."""
    if not axes or getattr(g, "ndim", 0) == 0:
        return g
    shape = (1,) * (ndim - g.ndim) + tuple(g.shape)
    return reshape(g, tuple(n for k, n in enumerate(shape) if k not in axes))


def _add_by_assignment(out: Any, index: Any, g: Any, reshape: Callable, cast: Callable,
                       complete: bool = False) -> Any:
    """``out[index] += g`` for a basic index, written as one item assignment without
    ``None`` (``out`` is the caller's copy). ``complete``: end the index with ``...`` (the
    array API takes no index that leaves axes unnamed)."""
    index, axes = _without_none(index, out.ndim)
    if complete and not any(e is Ellipsis for e in index):
        index = (*index, Ellipsis)
    region = out[index]
    out[index] = cast(region + _drop_axes(g, region.ndim + len(axes), axes, reshape))
    return out


def _refuse(backend: str, helper: str, index: Any, takes: str) -> TypeError:
    return TypeError(f"{backend}: {helper} takes {takes}, not an index of {_describe(index)}")


# -- JAX: functional updates ------------------------------------------------------------------

def _jax_add_at(a: Any, index: Any, g: Any) -> Any:
    """``add_at`` on JAX's arrays: ``a.at[index].add(g)``, a new array."""
    import jax.numpy as jnp
    a = jnp.asarray(a)
    return a.at[index].add(_jax_addend(jnp, a, g))


def _jax_add_at_each(a: Any, index: Any, g: Any) -> Any:
    """``add_at_each`` on JAX's arrays: ``.at[...].add`` adds each occurrence of a position;
    a mask must be concrete (outside ``jax.jit``), as it is where ``x[mask]`` was read."""
    import jax.numpy as jnp
    a = jnp.asarray(a)
    return a.at[index].add(_jax_addend(jnp, a, g))


def _jax_addend(jnp: Any, a: Any, g: Any) -> Any:
    """``g`` in ``a``'s dtype, as NumPy's ``+=`` casts it (complex into real raises)."""
    g = jnp.asarray(g)
    if g.dtype == a.dtype:
        return g
    if not jnp.can_cast(g.dtype, a.dtype, "same_kind"):
        raise TypeError(f"jax: cannot add {g.dtype} values to a {a.dtype} array")
    return g.astype(a.dtype)


def _jax_zeroed_at(g: Any, index: Any) -> Any:
    """``zeroed_at`` on JAX's arrays; a mask that is the whole index by ``jnp.where``, which
    works under ``jax.jit`` too."""
    import jax.numpy as jnp
    g = jnp.asarray(g)
    entries = tuple(e for e in _entries(index) if e is not None)
    if len(entries) == 1 and _is_mask(entries[0]):
        return jnp.where(_mask_over(entries[0], g, jnp.reshape), jnp.zeros((), g.dtype), g)
    return g.at[index].set(0)


def _mask_over(mask: Any, g: Any, reshape: Callable) -> Any:
    """A mask over the leading axes of ``g`` with unit axes for the others (NumPy's
    IndexError for one of another shape)."""
    if tuple(mask.shape) != tuple(g.shape[:mask.ndim]):
        raise IndexError(f"a boolean index of shape {tuple(mask.shape)} for an array of "
                         f"shape {tuple(g.shape)}")
    return reshape(mask, tuple(mask.shape) + (1,) * (g.ndim - mask.ndim))


# -- CuPy: in place on a copy, on the device ---------------------------------------------------

def _cupy_add_at(a: Any, index: Any, g: Any) -> Any:
    """``add_at`` on CuPy's arrays: a copy on the device, ``out[index] += g``."""
    import cupy
    out = cupy.array(a, copy=True)
    out[index] += g
    return out


def _cupy_add_at_each(a: Any, index: Any, g: Any) -> Any:
    """``add_at_each`` on CuPy's arrays: ``cupyx.scatter_add`` (``np.add.at``'s
    counterpart) on a copy."""
    import cupy
    import cupyx
    out = cupy.array(a, copy=True)
    cupyx.scatter_add(out, index, g)
    return out


def _cupy_zeroed_at(g: Any, index: Any) -> Any:
    """``zeroed_at`` on CuPy's arrays: ``out[index] = 0`` on a copy."""
    import cupy
    out = cupy.array(g, copy=True)
    out[index] = 0
    return out


# -- Dask: lazy, chunked as the array ---------------------------------------------------------

def _dask_cast(out: Any) -> Callable:
    """The sum ``out[index] + g`` in ``out``'s dtype, as NumPy's ``+=`` casts it."""
    def cast(value: Any) -> Any:
        if value.dtype == out.dtype:
            return value
        if not np.can_cast(value.dtype, out.dtype, "same_kind"):
            raise TypeError(f"dask: cannot add {value.dtype} values to a {out.dtype} array")
        return value.astype(out.dtype)
    return cast


def _dask_basic(index: Any) -> tuple:
    """A basic index as Dask's item assignment takes it: NumPy's 0-d integers as ints."""
    return tuple(operator.index(e) if isinstance(e, np.ndarray) and e.ndim == 0 else e
                 for e in _entries(index))


def _dask_add_at(a: Any, index: Any, g: Any) -> Any:
    """``add_at`` on Dask's arrays: ``out[index] = out[index] + g`` on a new array object (an
    assignment rewrites the graph of the object it is made on), chunked as ``a``."""
    import dask.array as da
    out = da.asarray(a).copy()
    return _add_by_assignment(out, _dask_basic(index), g, lambda x, s: x.reshape(s),
                              _dask_cast(out))


def _dask_add_at_each(a: Any, index: Any, g: Any) -> Any:
    """``add_at_each`` on Dask's arrays, for an index with one integer array (of NumPy or
    Dask, any shape; or a 1-d NumPy mask) among integers and slices: the rest is a basic
    region of ``a``, and the array's positions along one axis of it get ``_dask_scatter``.
    A mask of Dask's, or of more than one axis, is refused (what it selects has a length
    Dask does not know; positions along several axes at once are not done chunk by chunk)."""
    import dask.array as da
    a = da.asarray(a)
    entries = [np.asarray(e) if isinstance(e, list) else e for e in _entries(index)]
    arrays = [k for k, e in enumerate(entries) if _is_array(e)]
    if not arrays:
        return _dask_add_at(a, index, g)
    takes = "one integer array or 1-d NumPy mask among integers and slices"
    if len(arrays) > 1 or any(not (e is Ellipsis or isinstance(e, (slice, int, np.integer)))
                              for k, e in enumerate(entries) if k != arrays[0]):
        raise _refuse("dask", "add_at_each", index, takes)
    where, idx = arrays[0], entries[arrays[0]]
    if np.dtype(idx.dtype) == np.bool_:
        if not isinstance(idx, np.ndarray) or idx.ndim != 1:
            raise _refuse("dask", "add_at_each", index, takes)
    elif np.dtype(idx.dtype).kind not in "iu":
        raise IndexError("arrays used as indices must be of integer or boolean type")
    ellipses = [k for k, e in enumerate(entries) if e is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if len(entries) - len(ellipses) > a.ndim:
        raise IndexError(f"too many indices for an array of {a.ndim} dimensions")
    fill = [slice(None)] * (a.ndim - len(entries) + len(ellipses))  # ... and the axes after
    if ellipses:
        where += len(fill) - 1 if ellipses[0] < where else 0
        entries[ellipses[0]:ellipses[0] + 1] = fill
    else:
        entries += fill
    basic = tuple(slice(None) if k == where else e for k, e in enumerate(entries))
    region = a[basic]
    axis = sum(1 for e in entries[:where] if isinstance(e, slice))
    if np.dtype(idx.dtype) == np.bool_:
        if len(idx) != region.shape[axis]:
            raise IndexError(f"a boolean index of length {len(idx)} for an axis of length "
                             f"{region.shape[axis]}")
        idx = np.flatnonzero(idx)
    # NumPy places an integer array's axes where the array is, unless integers stand apart
    # from it (then they come first): g's axes as the region's, with the array's in place.
    advanced = [k for k, e in enumerate(entries) if k == where or not isinstance(e, slice)]
    apart = advanced != list(range(advanced[0], advanced[-1] + 1))
    rest = region.shape[:axis] + region.shape[axis + 1:]
    shape = tuple(idx.shape) + rest if apart else (
        region.shape[:axis] + tuple(idx.shape) + region.shape[axis + 1:])
    g = da.broadcast_to(da.asarray(g), shape)
    if apart and idx.ndim and axis:
        g = da.moveaxis(g, list(range(idx.ndim)), list(range(axis, axis + idx.ndim)))
    contribution = _dask_scatter(region, axis, idx, g)
    if all(e == slice(None) for e in basic):
        return a + contribution
    out = a.copy()
    out[basic] = out[basic] + contribution
    return out


def _dask_scatter(region: Any, axis: int, idx: Any, g: Any) -> Any:
    """Zeros shaped, typed and chunked like ``region`` with each slice of ``g`` along its
    axes ``axis, ..., axis + idx.ndim - 1`` added at the position ``idx`` names along
    ``axis``. One task per chunk of ``region`` and chunk of ``idx`` adds (``np.add.at``) the
    positions of the one that fall in the other; a sum over the chunks of ``idx`` gives each
    chunk of the result. An index out of range raises IndexError: now for NumPy's, when
    computed for Dask's."""
    import dask.array as da
    n = region.shape[axis]
    if isinstance(idx, np.ndarray) and idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"an index out of bounds for axis {axis} with size {n}")
    idx = idx.reshape(-1)
    g = g.reshape(g.shape[:axis] + (math.prod(idx.shape),) + region.shape[axis + 1:])
    g = g.rechunk({d: region.chunks[d] for d in range(region.ndim) if d != axis})
    if isinstance(idx, np.ndarray):
        idx = da.from_array(idx, chunks=(g.chunks[axis],))
    positions = da.arange(n, chunks=(region.chunks[axis],))
    labels, j = tuple(range(region.ndim)), region.ndim
    with warnings.catch_warnings():  # one task per pair of chunks, by design: summed below
        warnings.simplefilter("ignore", da.PerformanceWarning)
        parts = _dask_parts(region, axis, positions, idx, g, labels, j)
    return parts.sum(axis=axis + 1, dtype=region.dtype)


def _dask_parts(region: Any, axis: int, positions: Any, idx: Any, g: Any,
                labels: tuple[int, ...], j: int) -> Any:
    import dask.array as da
    from dask.array.utils import meta_from_array
    n = region.shape[axis]
    return da.blockwise(
        _scatter_chunk, labels[:axis + 1] + (j,) + labels[axis + 1:],
        positions, (axis,), idx, (j,), g, labels[:axis] + (j,) + labels[axis + 1:],
        adjust_chunks={j: 1}, dtype=region.dtype,
        meta=meta_from_array(region, ndim=region.ndim + 1, dtype=region.dtype),
        axis=axis, size=n, out_dtype=region.dtype)


def _scatter_chunk(positions: Any, idx: Any, g: Any, axis: int, size: int,
                   out_dtype: Any) -> Any:
    """One task of ``_dask_scatter``: what the chunk ``idx`` (with ``g``'s slices for it) adds
    to the positions ``positions`` (consecutive) of the axis, with a unit axis after it for
    the chunk of ``idx``."""
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise IndexError(f"an index out of bounds for axis {axis} with size {size}")
    idx = np.where(idx < 0, idx + size, idx)
    start = int(positions[0]) if positions.size else 0
    inside = (idx >= start) & (idx < start + positions.size)
    out = np.zeros_like(g, dtype=out_dtype,
                        shape=g.shape[:axis] + (positions.size, 1) + g.shape[axis + 1:])
    lead = (slice(None),) * axis
    np.add.at(out, lead + (idx[inside] - start, 0), g[lead + (inside,)])
    return out


def _dask_zeroed_at(g: Any, index: Any) -> Any:
    """``zeroed_at`` on Dask's arrays, chunked as ``g``: a mask that is the whole index by
    ``da.where``; other indexes by item assignment on a new array object, with an integer
    array flattened (the positions it names are what it zeroes, however often). Two
    integer arrays, or a mask of more than one axis among other entries, are refused (Dask
    assigns through one 1-d array)."""
    import dask.array as da
    g = da.asarray(g)
    entries = tuple(np.asarray(e) if isinstance(e, list) else e
                    for e in _entries(index) if e is not None)
    if len(entries) == 1 and _is_mask(entries[0]):
        mask = da.asarray(entries[0])
        mask = mask.rechunk(g.chunks[:mask.ndim])
        out = da.where(_mask_over(mask, g, lambda x, s: x.reshape(s)), 0, g)
        return out if out.dtype == g.dtype else out.astype(g.dtype)
    arrays = [e for e in entries if _is_array(e)]
    if len(arrays) > 1 or any(_is_mask(e) and e.ndim > 1 for e in arrays):
        raise _refuse("dask", "zeroed_at", index,
                      "one integer array or 1-d mask among integers and slices, or one mask")
    out = g.copy()
    out[tuple(e.reshape(-1) if _is_array(e) and e.ndim != 1 else e for e in entries)] = 0
    return out


# -- the array API standard: item assignment of basic indexes ---------------------------------

def _namespace(*arrays: Any) -> Any:
    """The namespace of the first operand of a library other than NumPy (an accumulator
    made with NumPy's zeros takes its cotangent's), else NumPy's."""
    found = [x for x in arrays if hasattr(x, "__array_namespace__")]
    for x in found:
        if not isinstance(x, np.ndarray):
            return x.__array_namespace__()
    if found:
        return found[0].__array_namespace__()
    raise TypeError("array_api: no array of an array API namespace among the operands")


def _api_basic(xp: Any, index: Any, helper: str) -> tuple:
    """A basic index as the standard's item assignment takes it: integers and 0-d integer
    arrays as ints; an array of more axes is refused (it assigns through no integer array)."""
    entries = []
    for e in _entries(index):
        if isinstance(e, np.integer) or _is_array(e) and e.ndim == 0:
            e = operator.index(e)  # an assignment takes no 0-d array
        elif _is_array(e) and e.ndim > 0:
            raise _refuse("array_api", helper, index,
                          "integers, slices, None and ... (or one mask, for zeroed_at)")
        entries.append(e)
    return tuple(entries)


def _api_cast(xp: Any, dtype: Any) -> Callable:
    """The sum in the accumulator's dtype, as NumPy's ``+=`` casts it (a complex sum into a
    real array raises, as it does there)."""
    def cast(value: Any) -> Any:
        if value.dtype == dtype:
            return value
        if xp.isdtype(value.dtype, "complex floating") and not xp.isdtype(
                dtype, "complex floating"):
            raise TypeError(f"array_api: cannot add {value.dtype} values to a {dtype} array")
        return xp.astype(value, dtype)
    return cast


def _api_add_at(a: Any, index: Any, g: Any) -> Any:
    """``add_at`` for a namespace of the array API standard (``a.__array_namespace__()``):
    ``out[index] = out[index] + g`` on a copy, for an index of integers, slices, None and
    ``...``."""
    xp = _namespace(a, g)
    out = xp.asarray(a, copy=True)
    return _add_by_assignment(out, _api_basic(xp, index, "add_at"), g, xp.reshape,
                              _api_cast(xp, out.dtype), complete=True)


def _api_zeroed_at(g: Any, index: Any) -> Any:
    """``zeroed_at`` for a namespace of the array API standard: a mask that is the whole index
    by ``xp.where``; a basic index by item assignment on a copy."""
    xp = _namespace(g)
    entries = tuple(xp.asarray(e) if isinstance(e, np.ndarray) and e.ndim else e
                    for e in _entries(index) if e is not None)
    if len(entries) == 1 and _is_array(entries[0]) and entries[0].ndim >= 1 and xp.isdtype(
            entries[0].dtype, "bool"):
        mask = _mask_over(xp.asarray(entries[0]), g, xp.reshape)
        return xp.where(mask, xp.zeros_like(g), g)
    entries = _api_basic(xp, entries, "zeroed_at")
    if not any(e is Ellipsis for e in entries):
        entries = (*entries, Ellipsis)
    out = xp.asarray(g, copy=True)
    out[entries] = 0
    return out


# backend -> its implementations of the helpers above: a compile for that backend binds them
# under the helpers' names; a helper a backend cannot do soundly is absent.
SCATTER: dict[str, dict[str, Callable[..., Any]]] = {
    "jax": {"add_at": _jax_add_at, "add_at_each": _jax_add_at_each, "zeroed_at": _jax_zeroed_at},
    "cupy": {"add_at": _cupy_add_at, "add_at_each": _cupy_add_at_each,
             "zeroed_at": _cupy_zeroed_at},
    "dask": {"add_at": _dask_add_at, "add_at_each": _dask_add_at_each,
             "zeroed_at": _dask_zeroed_at},
    "array_api": {"add_at": _api_add_at, "zeroed_at": _api_zeroed_at},
}
