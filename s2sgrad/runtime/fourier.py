"""What the rules of the Fourier transforms call: an array cut or padded with zeros to a
shape (as ``np.fft.fft(a, n)`` does to ``a`` along its axis), and the weights of the
entries of a half spectrum (``np.fft.irfft`` counts each entry but the first and, for an
even length, the last, twice)."""

from __future__ import annotations

from typing import Any

import numpy as np


def resized(x: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` cut, or padded with zeros at the end, along each axis to ``shape``."""
    x = np.asarray(x)
    if x.shape == tuple(shape):
        return x
    cut = x[tuple(slice(0, n) for n in shape)]
    return np.pad(cut, [(0, n - m) for n, m in zip(shape, cut.shape, strict=True)])


def half_spectrum_weights(n: int, m: int, axis: int, ndim: int) -> np.ndarray:
    """The weight of each of the ``m`` entries of a half spectrum of a signal of length
    ``n`` (1 for the mean and, for an even ``n``, the middle entry; 2 for the others, which
    stand for themselves and their conjugates), shaped to broadcast along ``axis`` of an
    array of ``ndim`` axes."""
    k = np.arange(m)
    weights = np.where((k == 0) | (2 * k == n), 1.0, 2.0)
    return np.reshape(weights, (-1,) + (1,) * (ndim - 1 - axis % ndim))
