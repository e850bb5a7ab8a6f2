"""Functions that catalogue entries call from another module.

They read this module's own globals, so differentiating them through their source has to
resolve names in the callee's namespace, not the caller's.
"""

import numpy as np

# A module global that only this module's functions read.
TEMPERATURE = 2.0


def softplus(x):
    # log(1 + exp(x)) without overflow.
    return np.logaddexp(0.0, x)


def logsumexp(z, axis=-1):
    m = np.max(z, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True)) + m


def tempered(x):
    # Calls another function of this module, which reads this module's global.
    return softplus(x / TEMPERATURE) * TEMPERATURE


def _scale(v):
    # Same name as a function of the catalogue, different body.
    return v / 4.0 + 1.0


def rebindable(v):
    # Rebound by a test of the catalogue after a first gradient.
    return v * 2.0


def rebindable_alternative(v):
    return np.sin(v) * 3.0
