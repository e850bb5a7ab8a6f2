"""Functions whose results carry no gradient: comparisons and logic, rounding, integer-valued
queries (indices, shapes, counts), array creators, and random draws.

Their outputs are piecewise constant in the inputs or do not depend on input values at all,
so the reverse pass treats them as constants. Listing them is what separates "no gradient
flows here" from "no rule is known", which is an error at transform time. Draws whose values
move with a float argument (``normal(loc, scale)``, ``choice(a)``) are left out on purpose: a
gradient through them would silently be zero.
"""

import math
import operator

import numpy as np

from ..runtime.containers import zeros_tree
from ..runtime.indexing import batch_last_index
from .registry import nondifferentiable

# (why, primitives): docs/rules.md lists them in these groups.
GROUPS = (
    (
        "comparisons and logic give booleans",
        (
            operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
            operator.not_, operator.truth, operator.is_, operator.is_not, operator.contains,
            operator.and_, operator.or_, operator.xor, operator.invert,
            np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
            np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
            np.isnan, np.isinf, np.isfinite, np.isclose, np.allclose, np.array_equal,
            np.any, np.all, np.ndarray.any, np.ndarray.all, np.signbit,
        ),
    ),
    (
        "piecewise constant: the derivative is zero wherever it exists",
        (
            operator.floordiv, np.floor_divide, np.floor, np.ceil, np.round, np.around, np.rint,
            np.trunc, np.fix, np.sign, np.heaviside, np.ndarray.round,
            math.floor, math.ceil, math.trunc, round, int, bool,
        ),
    ),
    (
        "indices, counts and shapes are integers",
        (
            np.argmax, np.argmin, np.argsort, np.ndarray.argmax, np.ndarray.argmin,
            np.ndarray.argsort, np.nonzero, np.flatnonzero, np.argwhere, np.searchsorted,
            np.count_nonzero,
            len, range, np.shape, np.ndim, np.size, np.broadcast_shapes,
            np.ndarray.shape, np.ndarray.ndim, np.ndarray.size, np.ndarray.dtype,
            np.result_type, np.promote_types, dict.keys,
        ),
    ),
    (
        "creators: the values do not depend on the arguments' values",
        (
            np.arange, np.zeros, np.ones, np.empty, np.eye, np.identity,
            np.zeros_like, np.ones_like, np.empty_like, np.fft.fftfreq, np.fft.rfftfreq,
        ),
    ),
    (
        "draws of a fixed distribution: their arguments are shapes and bounds of integers",
        (
            np.random.seed, np.random.default_rng, np.random.rand, np.random.randn, np.random.random,
            np.random.randint, np.random.standard_normal,
            np.random.Generator.random, np.random.Generator.standard_normal,
            np.random.Generator.integers,
        ),
    ),
)

for _why, _primitives in GROUPS:
    nondifferentiable(*_primitives, why=_why)

# Not a user's function: the zero tangent of a container (a list's items held still but
# one) that forward mode writes, which a second derivative differentiates in turn.
nondifferentiable(zeros_tree, why="zeros shaped like a container, whatever its values")
nondifferentiable(batch_last_index, why="an index, whatever the values it selects")
