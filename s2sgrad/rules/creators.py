"""Rules for array creators whose values depend on an argument: ``full``, ``full_like`` and
``linspace``. (Creators that only read shapes, like ``zeros`` or ``arange``, are in ``nondiff``.)

Every entry of ``np.full(shape, v)`` is ``v``, so ``v`` collects the sum of the cotangent. The
rules take scalar fill values and endpoints; an array one that the output broadcasts makes the
final reshape raise instead of returning a wrong gradient.
"""

import numpy as np

from .registry import linear, vjp_rule


@vjp_rule(np.full, shape=None)
def full(g, ans, shape, fill_value, dtype=None, order="C"):
    return None, np.reshape(np.sum(g), np.shape(fill_value))


@vjp_rule(np.full_like, shape="same")
def full_like(g, ans, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    # a only lends its shape and dtype.
    return None, np.reshape(np.sum(g), np.shape(fill_value))


def _without_step(static, ndim):
    if static.get("retstep", False) is not False:
        return ("np.linspace(..., retstep=True) returns the step too; only the samples are "
                "differentiated")
    return None


@vjp_rule(np.linspace, shape=None, requires=_without_step)
def linspace(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    # Entry i is start + (stop - start) * t_i, with t the same points on [0, 1].
    t = np.linspace(0.0, 1.0, num, endpoint)
    g_stop = np.sum(g * t)
    return np.reshape(np.sum(g) - g_stop, np.shape(start)), np.reshape(g_stop, np.shape(stop))


# Forward mode: the entries are linear in the fill value and in the endpoints.
linear(np.full, np.full_like, np.linspace)
