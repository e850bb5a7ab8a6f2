"""Rules for the discrete Fourier transforms of ``np.fft``: ``fft``, ``ifft``, ``rfft``,
``irfft``, their two- and n-dimensional forms, and ``fftshift``/``ifftshift``.

Each transform is linear, so its contribution is its transpose applied to the cotangent
(cotangents of complex values follow the convention in registry.py: no conjugation). The
DFT matrix is symmetric, so the transpose of a transform is the same transform (``fft``'s is
``fft``, with the same ``norm``) of the cotangent, then cut or padded back to the input's
shape (``resized``), undoing ``n=``/``s=``. Each keeps its input's rank (``shape="permute"``); ``n=``
and ``s=`` change lengths. ``rfft`` keeps half of the spectrum of a real
signal: its transpose is ``fft`` of the cotangent padded to the full length, whose real
part the real input gets. ``irfft`` reads a half spectrum as a Hermitian one: each entry
but the first (and the middle one, for an even length) stands for itself and its
conjugate, and counts twice (``half_spectrum_weights``); its transpose is the conjugate of
``rfft`` of the cotangent with the dual ``norm`` (``"backward"`` and ``"forward"`` swap
their scales). All are linear in forward mode.
"""

import numpy as np

from ..runtime.fourier import half_spectrum_weights, resized
from .registry import linear, nondifferentiable, vjp_rule


@vjp_rule(np.fft.fft, shape="permute", complex="complex")
def fft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return resized(np.fft.fft(g, axis=axis, norm=norm), np.shape(a))


@vjp_rule(np.fft.ifft, shape="permute", complex="complex")
def ifft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return resized(np.fft.ifft(g, axis=axis, norm=norm), np.shape(a))


@vjp_rule(np.fft.fft2, shape="permute", complex="complex")
def fft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return resized(np.fft.fftn(g, axes=axes, norm=norm), np.shape(a))


@vjp_rule(np.fft.ifft2, shape="permute", complex="complex")
def ifft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return resized(np.fft.ifftn(g, axes=axes, norm=norm), np.shape(a))


@vjp_rule(np.fft.fftn, shape="permute", complex="complex")
def fftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    # with s and no axes, the last len(s) axes are transformed
    if axes is None and s is not None:
        g_a = np.fft.fftn(g, axes=np.arange(-np.size(s), 0), norm=norm)
    else:
        g_a = np.fft.fftn(g, axes=axes, norm=norm)
    return resized(g_a, np.shape(a))


@vjp_rule(np.fft.ifftn, shape="permute", complex="complex")
def ifftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    if axes is None and s is not None:
        g_a = np.fft.ifftn(g, axes=np.arange(-np.size(s), 0), norm=norm)
    else:
        g_a = np.fft.ifftn(g, axes=axes, norm=norm)
    return resized(g_a, np.shape(a))


@vjp_rule(np.fft.rfft, shape="permute", complex="complex")
def rfft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    # fft pads g, the half spectrum, with zeros to the full length n
    if n is None:
        length = np.shape(a)[axis]
    else:
        length = n
    return resized(np.fft.fft(g, length, axis=axis, norm=norm), np.shape(a))


@vjp_rule(np.fft.rfftn, shape="permute", complex="complex")
def rfftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    # the full lengths of the transformed axes; fftn pads the half spectrum's last one
    if axes is None and s is None:
        along = np.arange(np.ndim(a))
    elif axes is None:
        along = np.arange(-np.size(s), 0)
    else:
        along = axes
    if s is None:
        lengths = np.take(np.shape(a), along)
    else:
        lengths = s
    g_a = np.fft.fftn(g, s=lengths, axes=along, norm=norm)
    return resized(g_a, np.shape(a))


@vjp_rule(np.fft.irfft, shape="permute", complex="real")
def irfft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    if norm == "ortho":
        dual = "ortho"
    elif norm == "forward":
        dual = "backward"
    else:
        dual = "forward"
    half = np.conj(np.fft.rfft(g, axis=axis, norm=dual))
    weights = half_spectrum_weights(np.shape(g)[axis], np.shape(half)[axis], axis, np.ndim(g))
    return resized(half * weights, np.shape(a))


@vjp_rule(np.fft.irfftn, shape="permute", complex="real")
def irfftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    if norm == "ortho":
        dual = "ortho"
    elif norm == "forward":
        dual = "backward"
    else:
        dual = "forward"
    if axes is None and s is None:
        along = np.arange(np.ndim(a))
    elif axes is None:
        along = np.arange(-np.size(s), 0)
    else:
        along = axes
    last = np.take(along, -1)
    half = np.conj(np.fft.rfftn(g, axes=along, norm=dual))
    weights = half_spectrum_weights(np.shape(g)[last], np.shape(half)[last], last, np.ndim(g))
    return resized(half * weights, np.shape(a))


@vjp_rule(np.fft.fftshift, shape="same", complex=True)
def fftshift(g, ans, x, axes=None):
    return np.fft.ifftshift(g, axes)


@vjp_rule(np.fft.ifftshift, shape="same", complex=True)
def ifftshift(g, ans, x, axes=None):
    return np.fft.fftshift(g, axes)


@vjp_rule(resized, shape=None, complex=True)
def resized_vjp(g, ans, x, shape):
    # cutting and padding with zeros are each other's transposes
    return resized(g, np.shape(x)), None


nondifferentiable(half_spectrum_weights, why="weights that depend on lengths only")

# Forward mode: each is linear (rfft and irfft over the reals), so the tangent is the same
# transform of the tangent.
linear(np.fft.fft, np.fft.ifft, np.fft.fftn, np.fft.fft2, np.fft.ifftn, np.fft.ifft2,
       np.fft.rfft, np.fft.rfftn, np.fft.irfft, np.fft.irfftn, np.fft.fftshift,
       np.fft.ifftshift, resized)
