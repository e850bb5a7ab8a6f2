"""Every derivative rule, checked numerically as plain Python, without the compiler.

For a case (inputs of a primitive) the rule's contribution to each float input must satisfy

    <g, (f(x + eps v) - f(x - eps v)) / (2 eps)>  ==  <contribution, v>

for a random cotangent ``g`` and direction ``v``. Inputs keep away from kinks, ties and domain
edges; those points have their own exact tests below. Elementwise contributions are reduced
with ``unbroadcast`` first, as the engine does; all others must already have the input's shape.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import operator
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from s2sgrad import rules
from s2sgrad.rules import doc, registry
from s2sgrad.runtime import containers
from s2sgrad.runtime.fourier import resized as _fourier_resized
from s2sgrad.runtime.indexing import item_rows, rows_with_item
from s2sgrad.runtime.unbroadcast import unbroadcast
from s2sgrad.testing import central_difference

RTOL, ATOL = 1e-6, 1e-8  # tighter than check_grads': one primitive on well-conditioned inputs

rng = np.random.default_rng(20240611)


# --- inputs -------------------------------------------------------------------------------


def normal(*shape):
    return np.asarray(rng.standard_normal(shape))  # shape () gives a 0-d array, not a scalar


def uniform(lo, hi, *shape):
    return np.asarray(rng.uniform(lo, hi, shape))


def signed(lo, hi, *shape):
    """|x| in [lo, hi] with a random sign: away from zero."""
    return np.asarray(uniform(lo, hi, *shape) * rng.choice([-1.0, 1.0], shape))


def num(x):
    """A Python float from a 0-d draw, for cases that pass plain floats."""
    return float(x)


def spd(n, *batch):
    """Well-conditioned square matrices, so inv and det are smooth and accurate."""
    return normal(*batch, n, n) * 0.3 + 2.0 * np.eye(n)


def _orthogonal(n, *batch):
    return np.linalg.qr(normal(*batch, n, n))[0]


def separated(n, *batch):
    """Symmetric matrices whose eigenvalues are 1, 2, ..., n: apart, so that eigenvectors
    are smooth in the matrix."""
    q = _orthogonal(n, *batch)
    return (q * np.arange(1.0, n + 1)) @ np.swapaxes(q, -1, -2)


def distinct(n, *batch):
    """Real matrices with the real eigenvalues 1, 2.5, 4, ...: P diag P^-1, P well
    conditioned."""
    p = np.eye(n) + 0.3 * normal(*batch, n, n)
    return (p * np.arange(1.0, 1.0 + 1.5 * n, 1.5)[:n]) @ np.linalg.inv(p)


def _banded(lower, upper, n):
    """The band of a diagonally dominant matrix with `lower` and `upper` diagonals off the
    main one, in the layout of scipy.linalg.solve_banded (row upper + i - j of column j holds
    a[i, j]), the corners it does not read set to 1e3: a rule that read them would be far off
    (scipy refuses nan there)."""
    ab = normal(lower + upper + 1, n) * 0.3
    ab[upper] += 3.0
    for k in range(upper):
        ab[k, :upper - k] = 1e3
    for k in range(1, lower + 1):
        ab[upper + k, n - k:] = 1e3
    return ab


def singular(m, n, *batch):
    """m x n matrices with the singular values 1, 2, ..., min(m, n)."""
    k = min(m, n)
    u = _orthogonal(m, *batch)[..., :k]
    vh = np.swapaxes(_orthogonal(n, *batch)[..., :k], -1, -2)
    return (u * np.arange(1.0, k + 1)) @ vh


@dataclass
class Case:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    quiet: bool = False  # a contribution to a non-float input may warn (log of a negative base)


def case(*args, **kwargs):
    return Case(args, kwargs)


def quiet(c):
    c.quiet = True
    return c


def unary(lo=-2.0, hi=2.0, away=0.0):
    """An array, a Python float and a 0-d array, in [lo, hi] (or |x| in [away, hi])."""
    draw = (lambda *s: signed(away, hi, *s)) if away else (lambda *s: uniform(lo, hi, *s))
    return [case(draw(3, 4)), case(num(draw())), case(draw())]


def binary(a=normal, b=normal):
    """The broadcasting patterns every binary elementwise rule must handle."""
    return [
        case(a(3, 4), b(3, 4)),
        case(a(3, 1), b(4)),
        case(num(a()), b(2, 3)),
        case(a(2, 3), num(b())),
        case(a(), b(3)),
        case(num(a()), num(b())),
    ]


def positive(*shape):
    return uniform(0.5, 2.0, *shape)


def nonzero(*shape):
    return signed(0.5, 2.0, *shape)


def remainder_operands():
    # |a / b| stays within (1.09, 1.9): floor(a / b) and trunc(a / b) are constant around
    # every input.
    def a(*shape):
        return signed(1.2, 1.9, *shape)

    def b(*shape):
        return uniform(1.0, 1.1, *shape)

    return binary(a, b)


REDUCE_AXES = [
    {},
    {"axis": 0},
    {"axis": -1},
    {"axis": (0, 2)},
    {"axis": 1, "keepdims": True},
    {"axis": None, "keepdims": True},
    {"axis": (-1, 0), "keepdims": True},
]


def reductions(draw=normal, extra=None, scalars=(float, np.ndarray)):
    """Every axis/keepdims pattern on a 3-d array, a 1-d one, and the scalar inputs given
    (methods take no Python float; std has a kink at a constant input)."""
    cases = [case(draw(3, 4, 5), **kw) for kw in REDUCE_AXES]
    cases += [case(draw(6)), case(draw(6), axis=0)]
    cases += [case(num(draw())) if kind is float else case(draw()) for kind in scalars]
    if extra:
        cases = [Case(c.args, {**c.kwargs, **extra}) for c in cases if np.ndim(c.args[0]) > 0]
    return cases


def _kept():
    """A mask over (3, 4, 5) that keeps an entry of every slice along any axes."""
    w = normal(3, 4, 5) > 0.0
    w[0], w[:, 0], w[:, :, 0] = True, True, True
    return w


def masked(draw=normal, **extra):
    """Reductions with where= (and ``extra``, e.g. initial=) over every axis pattern. An
    initial value is an int: a setting, which the rules do not differentiate."""
    return [case(draw(3, 4, 5), where=_kept(), **extra, **kw) for kw in REDUCE_AXES]


def method_reductions(draw=normal):
    return reductions(draw, scalars=(np.ndarray,))


def ranks(pairs):
    return [case(normal(*sa), normal(*sb)) for sa, sb in pairs]


DOT_SHAPES = [
    ((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
    ((2, 3), (3, 4)), ((2, 5, 3), (3,)), ((3,), (2, 3, 4)), ((2, 5, 3), (3, 4)),
    ((2, 3), (5, 3, 4)), ((2, 5, 3), (4, 3, 2)),
]

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((6, 5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
    ((2, 3), (6, 5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)),
    ((6, 1, 2, 3), (5, 3, 4)), ((5, 2, 3), (6, 1, 3, 4)), ((6, 1, 2, 3), (1, 5, 3, 4)),
]


def clip_cases(method=False):
    lo, hi = ("min", "max") if method else ("a_min", "a_max")
    cases = [
        case(normal(3, 4), -0.5, 0.5),
        case(normal(3, 4), uniform(-1.0, -0.2, 3, 1), uniform(0.2, 1.0, 4)),
        case(normal(3, 4), None, 0.3),
        case(normal(3, 4), -0.3, None),
        case(normal(3, 4), **{lo: -0.4, hi: uniform(0.2, 1.0, 4)}),
    ]
    if not method:
        cases.append(case(num(normal()), -0.5, 0.5))
        cases.append(case(normal(3, 4), min=uniform(-1.0, -0.2, 3, 1), max=0.4))
    return cases


def math_cases(lo=-2.0, hi=2.0):
    return [case(num(uniform(lo, hi))), case(num(uniform(lo, hi))), case(np.float64(uniform(lo, hi)))]


def getter(descriptor):
    return lambda a: descriptor.__get__(a)


# scipy.linalg (the SciPy part of rules/decompositions.py), where scipy is installed
try:
    import scipy.linalg as _linalg
except ImportError:
    _linalg = None

# The table: every primitive with a registered rule, and inputs to check its rule on.
CASES: dict = {
    # operators
    operator.add: binary(), np.add: binary(),
    operator.sub: binary(), np.subtract: binary(),
    operator.mul: binary(), np.multiply: binary(),
    operator.truediv: binary(normal, nonzero), np.true_divide: binary(normal, nonzero),
    operator.pow: binary(positive, normal) + [case(np.array([0.0, 1.3, 0.7]), 2.0),
                                              quiet(case(normal(3, 4), 3))],
    np.power: binary(positive, normal) + [case(np.array([0.0, 1.3, 0.7]), 2.0)],
    np.float_power: binary(positive, normal),
    pow: [case(num(positive()), num(normal())), case(positive(3, 4), num(normal())),
          quiet(case(normal(2, 3), 2))],
    operator.neg: unary(), np.negative: unary(),
    operator.pos: unary(), np.positive: unary(),
    operator.mod: remainder_operands(), np.remainder: remainder_operands(),
    np.fmod: remainder_operands(),
    # elementwise
    np.exp: unary(), np.exp2: unary(), np.expm1: unary(),
    np.log: unary(0.5, 3.0), np.log2: unary(0.5, 3.0), np.log10: unary(0.5, 3.0),
    np.log1p: unary(-0.5, 2.0), np.sqrt: unary(0.5, 3.0), np.cbrt: unary(hi=2.0, away=0.5),
    np.square: unary(), np.reciprocal: unary(hi=2.0, away=0.5),
    np.sin: unary(), np.cos: unary(), np.tan: unary(-1.2, 1.2),
    np.arcsin: unary(-0.9, 0.9), np.arccos: unary(-0.9, 0.9), np.arctan: unary(),
    np.sinh: unary(), np.cosh: unary(), np.tanh: unary(),
    np.arcsinh: unary(), np.arccosh: unary(1.2, 3.0), np.arctanh: unary(-0.9, 0.9),
    np.deg2rad: unary(), np.radians: unary(), np.rad2deg: unary(), np.degrees: unary(),
    np.absolute: unary(hi=2.0, away=0.1), np.fabs: unary(hi=2.0, away=0.1),
    abs: unary(hi=2.0, away=0.1),
    np.arctan2: binary(nonzero, nonzero), np.hypot: binary(nonzero, nonzero),
    np.logaddexp: binary(), np.logaddexp2: binary(),
    np.maximum: binary(), np.minimum: binary(),
    np.where: [case(normal(3, 1) > 0, normal(4), num(normal())),
               case(normal(3, 4) > 0, normal(3, 4), normal(3, 4)),
               case(np.array(True), normal(2, 3), normal(3))],
    np.clip: clip_cases(),
    np.ndarray.clip: clip_cases(method=True),
    # math
    math.exp: math_cases(), math.expm1: math_cases(),
    math.log: math_cases(0.5, 3.0) + [case(num(uniform(0.5, 3.0)), num(uniform(1.5, 4.0))),
                                      case(num(uniform(0.5, 3.0)), 10.0)],
    math.log2: math_cases(0.5, 3.0), math.log10: math_cases(0.5, 3.0),
    math.log1p: math_cases(-0.5, 2.0), math.sqrt: math_cases(0.5, 3.0),
    math.pow: [case(num(positive()), num(normal())), case(num(positive()), 3.0),
               case(0.0, 2.0)],
    math.sin: math_cases(), math.cos: math_cases(), math.tan: math_cases(-1.2, 1.2),
    math.asin: math_cases(-0.9, 0.9), math.acos: math_cases(-0.9, 0.9), math.atan: math_cases(),
    math.atan2: [case(num(normal()), num(normal())), case(num(nonzero()), -1.5)],
    math.hypot: [case(num(normal()), num(normal())), case(3.0, num(nonzero()))],
    math.sinh: math_cases(), math.cosh: math_cases(), math.tanh: math_cases(),
    math.asinh: math_cases(), math.acosh: math_cases(1.2, 3.0),
    math.atanh: math_cases(-0.9, 0.9), math.erf: math_cases(), math.erfc: math_cases(),
    math.fabs: [case(num(nonzero())), case(-1.5), case(2.5)],
    math.degrees: math_cases(), math.radians: math_cases(),
    float: [case(np.float64(normal())), case(normal()), case(num(normal()))],
    # reductions
    np.sum: reductions() + masked() + [case(normal(3, 4), axis=1, initial=2)],
    np.ndarray.sum: method_reductions() + masked(initial=-1)[:2],
    np.mean: reductions() + masked(), np.ndarray.mean: method_reductions() + masked()[:2],
    np.max: reductions() + masked(initial=-4) + [case(uniform(-1, 1, 8), initial=0)],
    np.amax: reductions(), np.ndarray.max: method_reductions() + masked(initial=-4)[:2],
    np.min: reductions() + masked(initial=4) + [case(uniform(-1, 1, 3, 4), 1, initial=0)],
    np.amin: reductions(), np.ndarray.min: method_reductions() + masked(initial=4)[:2],
    np.prod: reductions(nonzero) + masked(nonzero) + masked(nonzero, initial=2)[:3] + [
        case(np.array([[0.0, 1.5, -0.7], [0.0, 0.0, 1.2], [0.8, -1.1, 1.3]]), axis=1),
        case(np.array([0.9, 0.0, 1.3, -1.2])),
        case(np.array([0.9, 0.0, 1.3, 0.0]), where=np.array([True, False, True, True])),
    ],
    np.ndarray.prod: method_reductions(nonzero) + masked(nonzero)[:2],
    np.bincount: [case(np.array([0, 2, 0, 1, 2, 0]), normal(6)),
                  case([1, 1, 3], weights=normal(3)), case(np.array([2, 0]), normal(2), 5),
                  case(np.array([0, 0, 0]), normal(3), minlength=2)],
    np.lib.stride_tricks.sliding_window_view: [
        case(normal(6), 3), case(normal(4, 5), (2, 3)), case(normal(4, 5), 2, axis=1),
        case(normal(3, 4, 5), (2, 2), axis=(0, 2)), case(normal(5), 5),
        case(normal(4, 4), (2, 2), (1, 0))],
    np.var: reductions() + reductions(extra={"ddof": 1}),
    np.ndarray.var: method_reductions() + reductions(extra={"ddof": 1}),
    np.std: reductions(scalars=()) + reductions(extra={"ddof": 1}),
    np.ndarray.std: reductions(scalars=()) + reductions(extra={"ddof": 1}),
    np.cumsum: [case(normal(3, 4)), case(normal(3, 4), 0), case(normal(2, 3, 4), axis=-1),
                case(normal(5)), case(num(normal()))],
    np.ndarray.cumsum: [case(normal(3, 4)), case(normal(3, 4), axis=1)],
    # shapes
    operator.getitem: [case(normal(4, 3), 1), case(normal(4, 3), slice(1, 3)),
                       case(normal(4, 3), (slice(None), 0)), case(normal(4, 3), (1, 2)),
                       case(normal(4, 3), [0, 2, 0, 0]), case(normal(4, 3), (Ellipsis, [2, 2])),
                       case(normal(4, 3), np.array([[True, False, True]] * 4)),
                       case(normal(2, 3, 4), (None, Ellipsis, slice(None, None, -2))),
                       case(normal(5), np.array([[4, 0], [4, 4]]))],
    np.transpose: [case(normal(3, 4)), case(normal(2, 3, 4), (1, 0, 2)),
                   case(normal(2, 3, 4), axes=(-1, 0, 1)), case(normal(5))],
    np.ndarray.transpose: [case(normal(3, 4)), case(normal(2, 3, 4), (2, 0, 1)),
                           case(normal(2, 3, 4), 1, -1, 0)],
    np.ndarray.T: [case(normal(3, 4)), case(normal(2, 3, 4)), case(normal(5))],
    np.ndarray.real: [case(normal(3, 4)), case(normal(5))],
    np.ndarray.imag: [case(normal(3, 4)), case(normal(5))],
    np.swapaxes: [case(normal(2, 3, 4), 0, 2), case(normal(3, 4), -1, 0)],
    np.ndarray.swapaxes: [case(normal(2, 3, 4), 1, -1)],
    np.moveaxis: [case(normal(2, 3, 4), 0, -1), case(normal(2, 3, 4), (0, 1), (2, 0))],
    np.flip: [case(normal(3, 4)), case(normal(3, 4), 1), case(normal(2, 3, 4), axis=(0, 2))],
    np.reshape: [case(normal(3, 4), (2, 6)), case(normal(3, 4), (-1,)),
                 case(normal(2, 3, 4), (4, 6), order="F"), case(num(normal()), (1, 1))],
    np.ndarray.reshape: [case(normal(3, 4), 2, 6), case(normal(3, 4), (4, 3)),
                         case(normal(2, 3, 4), 6, -1, order="F")],
    np.ravel: [case(normal(3, 4)), case(normal(2, 3, 4), "F"), case(num(normal()))],
    np.ndarray.ravel: [case(normal(3, 4)), case(normal(3, 4), order="F")],
    np.ndarray.flatten: [case(normal(3, 4)), case(normal(2, 3, 4), "F")],
    np.squeeze: [case(normal(3, 1, 4)), case(normal(1, 3, 1), axis=0)],
    np.ndarray.squeeze: [case(normal(3, 1, 4)), case(normal(1, 3, 1), -1)],
    np.expand_dims: [case(normal(3, 4), 0), case(normal(3, 4), axis=(0, -1))],
    np.copy: [case(normal(3, 4)), case(num(normal()))],
    np.asarray: [case(normal(3, 4)), case(num(normal()))],
    np.diag: [case(normal(4)), case(normal(3), 1), case(normal(4, 4)), case(normal(3, 5), 1),
              case(normal(5, 3), -2)],
    np.roll: [case(normal(5), 2), case(normal(3, 4), -1, axis=1), case(normal(3, 4), (1, 2),
                                                                       axis=(0, 1))],
    np.broadcast_to: [case(normal(3), (4, 3)), case(normal(2, 1), (3, 2, 4)),
                      case(normal(), (2,))],
    unbroadcast: [case(normal(4, 3), (3,)), case(normal(3, 4), (3, 1)), case(normal(3), (2, 3)),
                  case(normal(2, 3), (2, 3))],
    # the batched tangent of an item (rows: the batch axis first)
    item_rows: [case(normal(2, 4, 3), 1), case(normal(2, 4, 3), (slice(None), 0)),
                case(normal(2, 4), [0, 2, 0])],
    np.stack: [case([normal(3), normal(3)]), case([normal(2, 3), normal(2, 3)], axis=1)],
    np.concatenate: [case([normal(3), normal(2)]), case([normal(2, 3), normal(2, 1)], axis=1),
                     case([normal(2, 2), normal(3)], axis=None)],
    sum: [case([normal(3), normal(3), normal(3)]), case([normal(2, 3), normal(3)])],
    containers.concat: [case([normal(3), normal(3)], [normal(3)]), case([], [normal(2, 2)])],
    containers.repeat: [case([normal(3), normal(3)], 3), case([normal(2)], 1)],
    dict.get: [case({"w": normal(3), "b": normal(2)}, "w"),
               case({"w": normal(3)}, "scale", normal(3)),
               case({"w": normal(2, 2), "b": num(normal())}, "b", 1.0)],
    max: [case(num(normal()), num(normal())), case(0.3, 1.7), case(1.7, 0.3)],
    min: [case(num(normal()), num(normal())), case(0.3, 1.7), case(1.7, 0.3)],
    np.asanyarray: [case(normal(2, 3))],
    np.ascontiguousarray: [case(normal(3, 4).T), case(num(normal()))],
    np.array: [case(normal(3, 4)), case(normal(3), ndmin=3), case(num(normal()))],
    np.ndarray.copy: [case(normal(3, 4))],
    np.ndarray.astype: [case(normal(3, 4), np.float64), case(normal(3), "f8")],
    # linear algebra
    np.dot: ranks(DOT_SHAPES) + [case(num(normal()), normal(3)), case(normal(3), num(normal()))],
    np.ndarray.dot: ranks([s for s in DOT_SHAPES if s[0] != ()]),
    np.matmul: ranks(MATMUL_SHAPES),
    operator.matmul: ranks(MATMUL_SHAPES),
    np.tensordot: [case(normal(2, 3, 4), normal(3, 4, 5)), case(normal(3, 4), normal(4, 5), 1),
                   case(normal(2, 3), normal(4), 0), case(normal(4), normal(4), axes=1),
                   case(normal(3, 4), normal(4, 3), (1, 0)),
                   case(normal(2, 3, 4), normal(4, 5, 2), ((0, 2), (2, 0))),
                   case(normal(3, 2, 4), normal(2, 3), axes=([-2, 0], [0, -1]))],
    np.outer: [case(normal(3), normal(4)), case(normal(2, 2), normal(3)),
               case(num(normal()), normal(3))],
    **{u.outer: [case(normal(3), normal(4)), case(normal(2, 2), normal(3)),
                 case(num(normal()), normal(2, 3)), case(normal(2, 3), normal(2, 1, 2)),
                 case(normal(3), num(normal()))]
       for u in (np.add, np.subtract, np.multiply)},
    np.trace: [case(normal(3, 3)), case(normal(3, 5), 1), case(normal(4, 3), offset=-1),
               case(normal(2, 3, 3), 0, 1, 2), case(normal(3, 2, 3), axis1=2, axis2=0),
               case(normal(3, 4), axis1=1, axis2=0)],
    np.ndarray.trace: [case(normal(3, 3)), case(normal(2, 3, 4), 1, 1, 2)],
    np.linalg.inv: [case(spd(3)), case(spd(2, 4))],
    np.linalg.det: [case(spd(3)), case(spd(2, 4)), case(normal(2, 2) + 2.0 * np.eye(2))],
    # creators
    np.full: [case((2, 3), num(normal())), case(4, normal()), case((3, 2), normal(1), order="F")],
    np.full_like: [case(normal(2, 3), num(normal())), case(normal(4), normal())],
    np.linspace: [case(num(normal()), num(normal())), case(num(normal()), num(normal()), 7),
                  case(normal(), normal(), 6, endpoint=False), case(1.5, num(normal()), num=1)],
    # array manipulation (rules/arrays.py)
    np.tril: [case(normal(4, 4)), case(normal(3, 5), 1), case(normal(4, 3), k=-1),
              case(normal(2, 3, 3))],
    np.triu: [case(normal(4, 4)), case(normal(5, 3), -1), case(normal(3, 4), k=2),
              case(normal(2, 3, 3), 1)],
    np.diagonal: [case(normal(3, 3)), case(normal(3, 5), 1), case(normal(4, 3), offset=-2),
                  case(normal(2, 3, 4), 0, 1, 2), case(normal(3, 2, 4), axis1=2, axis2=0),
                  case(normal(3, 4), -1, 1, 0), case(normal(2, 4, 3), 1, -1, -2),
                  case(normal(3, 4), 5)],
    np.ndarray.diagonal: [case(normal(3, 4)), case(normal(2, 3, 3), 1, 1, 2),
                          case(normal(4, 3), offset=-1)],
    np.fliplr: [case(normal(3, 4)), case(normal(2, 3, 4))],
    np.flipud: [case(normal(3, 4)), case(normal(5))],
    np.rot90: [case(normal(3, 4)), case(normal(3, 4), 2), case(normal(3, 4), -1),
               case(normal(2, 3, 4), 1, (2, 0)), case(normal(2, 3, 4), k=3, axes=(1, 2))],
    np.rollaxis: [case(normal(2, 3, 4, 5), 3, 1), case(normal(2, 3, 4, 5), 1, 4),
                  case(normal(2, 3, 4), -1), case(normal(2, 3, 4), 0, start=-1),
                  case(normal(2, 3, 4), axis=2, start=2)],
    np.diff: [case(normal(6)), case(normal(6), 2), case(normal(3, 5), axis=0),
              case(normal(3, 5, 4), 3, 1), case(normal(4, 5), n=2, axis=-2), case(normal(5), 0)],
    np.repeat: [case(normal(3), 2), case(normal(2, 3), 3), case(normal(2, 3), 2, axis=1),
                case(normal(2, 3), 2, axis=-2), case(normal(2, 3, 2), np.array([1, 0, 3]), axis=1),
                case(normal(2, 3), [2, 1], 0), case(normal(4), np.array([2])),
                case(normal(2, 2), np.array([1, 2, 0, 3])), case(num(normal()), 3)],
    np.ndarray.repeat: [case(normal(2, 3), 2), case(normal(2, 3), np.array([1, 3]), axis=0)],
    np.tile: [case(normal(3), 2), case(normal(3), (2, 2)), case(normal(2, 3), (2, 1)),
              case(normal(2, 3), 3), case(normal(2, 1, 3), (2, 1, 2)),
              case(normal(2, 3), (2, 1, 1, 2)), case(num(normal()), (2, 3))],
    np.pad: [case(normal(4), 2, "reflect"), case(normal(3, 4), ((1, 2), (3, 0)), mode="symmetric"),
             case(normal(3), 5, "reflect"), case(normal(2, 3), 2, "edge"),
             case(normal(2, 3), ((1, 4), (2, 2)), "wrap"), case(normal(4), (0, 3), "symmetric"),
             case(normal(3), 1), case(normal(3, 4), ((1, 2), (0, 1))), case(normal(3, 4), (1, 2)),
             case(normal(2, 3), 1, constant_values=num(normal())),
             case(normal(2, 3), ((1, 0), (2, 1)), "constant", constant_values=normal()),
             case(normal(2, 3), 1, constant_values=normal(2, 2)),
             case(normal(2, 3), (2, 1), constant_values=normal(2)),
             case(normal(2, 3, 2), [(0, 1), (1, 1), (2, 0)], mode="constant",
                  constant_values=normal(3, 1))],
    np.hstack: [case([normal(3), normal(2)]), case([normal(2, 3), normal(2, 1)]),
                case([normal(3), num(normal()), normal(1)]),
                case([normal(2, 2, 3), normal(2, 1, 3), normal(2, 2, 3)])],
    np.vstack: [case([normal(3), normal(3)]), case([normal(2, 3), normal(3)]),
                case([normal(2, 2, 3), normal(1, 2, 3)]), case([normal(1), num(normal())])],
    np.dstack: [case([normal(3), normal(3)]), case([normal(2, 3), normal(2, 3)]),
                case([normal(2, 3, 2), normal(2, 3, 1)]), case([num(normal()), normal(1)])],
    np.column_stack: [case([normal(3), normal(3, 2)]), case([normal(4), normal(4)]),
                      case([normal(2, 2), normal(2, 1)])],
    np.append: [case(normal(3), normal(2)), case(normal(2, 3), normal(4)),
                case(normal(3), num(normal())), case(normal(2, 3), normal(1, 3), axis=0),
                case(normal(2, 3), normal(2, 2), 1),
                case(normal(2, 3, 2), normal(2, 1, 2), axis=-2)],
    np.take_along_axis: [case(normal(3, 4), np.array([[0, 3, 3], [1, 1, 2], [2, 0, 0]]), 1),
                         case(normal(3, 4), np.array([[2, 0, 1, 1]]), axis=0),
                         case(normal(3, 4), np.array([[3, 2, 1, 0]] * 3)),
                         case(normal(2, 3), np.array([5, 0, 5]), axis=None),
                         case(normal(1, 4), np.array([[1], [3], [0]]), axis=1)],
    np.sort: [case(normal(5)), case(normal(3, 4)), case(normal(3, 4), 0),
              case(normal(2, 3, 4), axis=1), case(normal(5), axis=None),
              case(normal(3, 4), kind="stable"), case(normal(6), -1, "mergesort")],
    np.real: unary(), np.imag: unary(), np.conjugate: unary(),  # np.conj is np.conjugate
    **({np.row_stack: [case([normal(2), normal(2)]), case([normal(2, 3), normal(3)])]}
       if hasattr(np, "row_stack") else {}),
    # products, convolutions and elementwise extras (rules/products.py)
    np.inner: ranks([((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3,)),
                     ((3,), (4, 3)), ((2, 3), (4, 3)), ((2, 5, 3), (4, 3)), ((3,), (2, 4, 3)),
                     ((2, 3), (2, 4, 3))]) + [case(num(normal()), normal(3))],
    np.kron: ranks([((3,), (2,)), ((2, 3), (2, 2)), ((2, 2), (3,)), ((3,), (2, 2)),
                    ((2, 1, 3), (2, 2)), ((), (3,)), ((2, 2), ()), ((1, 2), (3, 1))]) + [
        case(normal(2, 2), num(normal()))],
    np.cross: ranks([((3,), (3,)), ((4, 3), (3,)), ((3,), (2, 4, 3)), ((2, 1, 3), (5, 3))]) + [
        case(normal(3, 4), normal(4, 3), axisa=0), case(normal(3, 5), normal(3, 5), axis=0),
        case(normal(2, 3), normal(3, 2), axisa=1, axisb=0, axisc=0),
        case(normal(4, 3, 2), normal(3, 1), -2, 0, 1),
        case(normal(2, 3, 4), normal(3, 4), axis=-2)],
    np.convolve: [case(normal(5), normal(3)), case(normal(3), normal(5)),
                  case(normal(4), normal(4)), case(normal(6), normal(2), "same"),
                  case(normal(2), normal(6), "same"),
                  case(normal(5), normal(4), mode="same"), case(normal(4), normal(5), "same"),
                  case(normal(6), normal(3), "valid"), case(normal(3), normal(6), mode="valid"),
                  case(normal(4), normal(4), "valid"), case(normal(1), normal(3), "same"),
                  case(num(normal()), normal(3)), case(normal(4), normal(), "valid"),
                  case(normal(5), normal(3), 1), case(normal(4), normal(6), mode=0),
                  case(normal(3), normal(2), 2)],
    np.cumprod: [case(nonzero(5)), case(nonzero(3, 4)), case(nonzero(3, 4), 0),
                 case(nonzero(2, 3, 4), axis=-1), case(nonzero(3, 4), axis=1, dtype=np.float64),
                 case(num(nonzero())), case(nonzero()),
                 case(np.array([1.3, 0.0, -0.8, 1.7, 0.9])),
                 case(np.array([0.0, 1.2, 0.0, -1.5, 0.0, 0.7])),
                 case(np.array([[0.9, 0.0, 1.4], [0.0, 0.0, 1.1], [1.2, -0.7, 0.8]]), axis=1),
                 case(np.array([[0.9, 0.0, 1.4], [0.0, 0.0, 1.1], [1.2, -0.7, 0.0]]), axis=0),
                 case(np.array([[1.1, 0.0], [-0.6, 0.0]]))],
    np.ndarray.cumprod: [case(nonzero(3, 4)), case(nonzero(3, 4), axis=0),
                         case(np.array([[0.0, 1.5, 0.0], [0.8, 0.0, -1.2]]), 1)],
    np.fmax: binary() + [case(np.array([1.0, np.nan, -0.5]), np.array([np.nan, 0.3, 0.2])),
                         case(np.array([np.nan, 0.4]), num(normal()))],
    np.fmin: binary() + [case(np.array([1.0, np.nan, -0.5]), np.array([np.nan, 0.3, 0.2])),
                         case(num(normal()), np.array([[np.nan], [0.4]]))],
    np.sinc: unary() + [case(np.array([0.0, 0.004, -0.007, 0.012, -0.049, 0.051, 1.5, 2.5]))],
    np.nan_to_num: [case(normal(3, 4)), case(num(normal())),
                    case(np.array([1.2, np.nan, -0.4, np.nan])),
                    case(np.array([1.2, np.nan, np.inf, -np.inf, 0.3]), nan=0.5, posinf=2.0,
                         neginf=-3.0),
                    case(np.array([[np.inf, -0.2], [np.nan, -np.inf]]), True, -1.5, 4.0, -4.0)],
    # linear algebra beyond inv and det (rules/decompositions.py)
    # (every order of np.linalg.norm: vectors and matrices)
    np.linalg.norm: [
        case(normal(5)), case(normal(3, 4)), case(normal(3, 4), axis=1),
        case(normal(3, 4), axis=0, keepdims=True), case(normal(4), 2),
        case(normal(2, 3, 4), axis=(0, 2)), case(normal(2, 3, 4)),
        # vectors: ord = 1, -1, 0 and other p, along an axis too. The order is a static
        # argument, and a float one (np.inf, 2.5) would be an input of these checks: the
        # orders +-inf and float p are checked in tests/rules/test_coverage_linalg.py.
        case(nonzero(5), 1), case(nonzero(5), -1), case(normal(5), 0), case(nonzero(5), 3),
        case(nonzero(4), -3), case(normal(5), ord=2, keepdims=True),
        case(nonzero(3, 4), 1, axis=1), case(nonzero(2, 3, 4), 3, axis=-1),
        case(normal(3, 4), 2, axis=(1,)), case(nonzero(3, 4), -1, 0, True),
        # matrices: 'fro', 1, -1, over two axes of a stack too
        case(normal(3, 4), "fro"), case(normal(3, 4), 1), case(normal(3, 4), -1),
        case(normal(3, 4), "fro", keepdims=True), case(normal(2, 3, 4), 1, axis=(1, 2)),
        case(normal(3, 2, 4), 1, axis=(2, 0), keepdims=True),
        case(normal(2, 3, 4), "fro", (2, 0)), case(normal(3, 4, 2), -1, (0, 1), True)],
    np.linalg.solve: [case(spd(3), normal(3)), case(spd(3), normal(3, 2)),
                      case(spd(3, 2), normal(3)), case(spd(3, 2), normal(2, 3, 4)),
                      case(spd(3), normal(2, 3, 2)), case(spd(3, 2), normal(3, 1)),
                      case(spd(2, 4, 1), normal(3, 2, 2))],
    np.linalg.cholesky: [case(spd(3)), case(spd(4, 2)), case(spd(3), upper=True),
                         case(spd(3, 2), upper=True), case(spd(1))],
    np.linalg.pinv: [case(spd(3)), case(normal(4, 3)), case(normal(2, 4)),
                     case(normal(2, 3, 2)), case(normal(3, 2), hermitian=False),
                     case(normal(2, 3), None)],
    np.linalg.matrix_power: [case(spd(3), 3), case(spd(3), 0), case(spd(3), 1),
                             case(spd(3), -2), case(spd(3, 2), 2), case(spd(2), n=5),
                             case(spd(3, 2), -1)],
    # tuple outputs and variadic operands (anchor: contract)
    **({} if _linalg is None else {
        _linalg.cho_factor: [
            case(spd(3)), case(spd(3), lower=True), case(spd(1)), case(spd(4), True, False)],
        _linalg.cho_solve: [
            case(_linalg.cho_factor(spd(3)), normal(3)),
            case(_linalg.cho_factor(spd(3), lower=True), normal(3, 2)),
            case((np.triu(spd(3)), False), normal(3, 1)),
            case((np.tril(spd(2)), True), b=normal(2))],
    }),
    np.einsum: [case("ij,jk->ik", normal(3, 4), normal(4, 2)),
                case("ij,jk", normal(2, 3), normal(3, 2)), case("ii->i", normal(3, 3)),
                case("ii", normal(3, 3)), case("i,i->", normal(4), normal(4)),
                case("i,j->ij", normal(3), normal(2)), case("ij->i", normal(3, 4)),
                case("...ij,...jk->...ik", normal(2, 3, 4), normal(4, 2)),
                case("...i,...i", normal(2, 1, 4), normal(3, 4)),
                case("ij,ij->ij", normal(1, 3), normal(2, 3)),
                case("bij,bjk->bik", normal(2, 3, 4), normal(2, 4, 2)),
                case("i,ij,jk,k->", normal(2), normal(2, 3), normal(3, 4), normal(4)),
                case("ijk->kji", normal(2, 3, 4)), case("iij,jk", normal(3, 3, 2), normal(2, 4)),
                case("ii,i->i", normal(3, 3), normal(3)), case("i,->i", normal(3), num(normal())),
                case("i...->...", normal(3, 2)), case("a b, b c", normal(2, 3), normal(3, 2)),
                case("ij,jk->ik", normal(3, 4), normal(4, 2), optimize=True),
                case("ij,jk,kl->il", normal(2, 3), normal(3, 4), normal(4, 2),
                     optimize="greedy")],
    np.atleast_1d: [case(normal(3)), case(num(normal())), case(normal()),
                    case(normal(2, 3), normal(4)), case(num(normal()), normal(2, 2), normal())],
    np.atleast_2d: [case(normal(3)), case(num(normal())), case(normal(2, 3)),
                    case(normal(4), normal(2, 3), num(normal()))],
    np.atleast_3d: [case(normal(3)), case(normal(2, 3)), case(num(normal())),
                    case(normal(4), normal(2, 3), normal(2, 1, 2))],
    np.split: [case(normal(6), 3), case(normal(7), [2, 5]), case(normal(4, 6), 2, axis=1),
               case(normal(4, 3), (1,), axis=0), case(normal(2, 6), [1, 4], -1),
               case(normal(5), [0, 2, 2, 7])],
    np.array_split: [case(normal(7), 3), case(normal(5, 4), 2, axis=0), case(normal(6), [2, 3]),
                     case(normal(2, 5), 3, axis=-1)],
    np.hsplit: [case(normal(6), 2), case(normal(3, 4), [1, 3]), case(normal(2, 4, 3), 2)],
    np.vsplit: [case(normal(4, 3), 2), case(normal(5, 2, 2), [1, 4])],
    np.dsplit: [case(normal(2, 3, 4), 2), case(normal(1, 2, 5), [2])],
    np.linalg.qr: [case(normal(4, 3)), case(normal(3, 3)), case(normal(3, 5)),
                   case(normal(2, 4, 3)), case(normal(3, 3), "complete"),
                   case(normal(3, 4), mode="complete"), case(normal(2, 3, 5)),
                   case(normal(1, 1)), case(normal(4, 1))],
    np.linalg.eigh: [case(separated(3)), case(separated(4), "U"), case(separated(3, 2)),
                     case(separated(3), UPLO="U"), case(normal(4, 4) * 0.1 + np.diag(
                         [1.0, 2.0, 3.0, 4.0]))],
    np.linalg.eigvalsh: [case(separated(3)), case(separated(4), "U"), case(separated(3, 2)),
                         case(normal(3, 3) * 0.1 + np.diag([1.0, 2.0, 3.0]), UPLO="L")],
    np.linalg.svd: [case(singular(4, 3), full_matrices=False), case(singular(3, 3)),
                    case(singular(3, 5), False), case(singular(4, 3, 2), full_matrices=False),
                    case(singular(3, 3, 2), True), case(singular(3, 4), compute_uv=False),
                    case(singular(4, 2), False, False), case(singular(2, 3, 2), False, False),
                    case(singular(3, 3), hermitian=False)],
    np.linalg.slogdet: [case(spd(3)), case(spd(3, 2)), case(-spd(3)), case(spd(1)),
                        case(normal(3, 3) + 3.0 * np.eye(3))],
    np.linalg.eig: [case(distinct(3)), case(distinct(4)), case(distinct(3, 2)),
                    case(np.array([[2.0, 1.0], [0.5, -1.0]]))],
    **({} if _linalg is None else {
        _linalg.solve_triangular: [
            case(spd(3), normal(3)), case(spd(3), normal(3, 2), lower=True),
            case(spd(3), normal(3), trans=1, lower=True), case(spd(3), normal(3, 2), "T"),
            case(spd(3), normal(3), 2, True), case(spd(3), normal(3), unit_diagonal=True),
            case(spd(3), normal(3, 2), "N", True, True), case(spd(3, 2), normal(3), lower=True),
            case(spd(3, 2), normal(2, 3, 2), trans=1), case(spd(3), normal(2, 3, 2))],
        _linalg.cholesky: [case(spd(3)), case(spd(3), lower=True), case(spd(4), True),
                           case(spd(1)), case(spd(3, 2), lower=False),
                           case(spd(3), lower=False, check_finite=False)],
        _linalg.solve_banded: [
            case((1, 1), _banded(1, 1, 5), normal(5)), case((1, 2), _banded(1, 2, 6), normal(6, 2)),
            case((0, 1), _banded(0, 1, 4), normal(4)), case((2, 0), _banded(2, 0, 5), normal(5, 3)),
            case((0, 0), _banded(0, 0, 3), normal(3)), case((1, 1), _banded(1, 1, 1), normal(1)),
            case((2, 1), ab=_banded(2, 1, 6), b=normal(6))],
        _linalg.expm: [case(normal(3, 3) * 0.5), case(normal(1, 1)),
                       case(normal(2, 3, 3) * 0.5)],
        _linalg.sqrtm: [case(spd(3)), case(spd(2, 2)),
                        case(np.array([[4.0, 1.0], [0.5, 3.0]]))],
        _linalg.solve_sylvester: [
            case(spd(3), spd(2), normal(3, 2)), case(spd(2), spd(2), normal(2, 2)),
            case(spd(3, 2), spd(3), normal(2, 3, 3)), case(spd(2), spd(3, 2), normal(2, 3))],
    }),
}

# scipy.special (rules/special.py), where scipy is installed
try:
    from scipy import special as _special
except ImportError:
    _special = None


def _orders(x_draw, orders=(0, 1, 2)):
    """Integer orders (the rules differentiate in x only) as ints and as an int array."""
    return [case(orders[0], x_draw(3, 4)), case(orders[1], num(x_draw())),
            case(orders[-1], x_draw()), case(np.array(orders), x_draw(4, len(orders))),
            case(np.array([[orders[0]], [orders[-1]]]), x_draw(2, 1, 3))]


def _softmaxes():
    return [case(normal(3, 4)), case(normal(3, 4), axis=1), case(normal(3, 4), 0),
            case(normal(2, 3, 4), axis=(0, 2)), case(normal(2, 3, 4), axis=-1),
            case(normal(5), axis=0), case(num(normal()))]


if _special is not None:
    CASES.update({
        _special.expit: unary(-3.0, 3.0), _special.log_expit: unary(-3.0, 3.0),
        _special.logit: unary(0.1, 0.9),
        _special.gamma: unary(0.5, 3.0) + [case(uniform(-1.8, -1.2, 3))],
        _special.gammaln: unary(0.5, 4.0) + [case(uniform(-2.8, -2.2, 3))],
        _special.digamma: unary(0.5, 4.0) + [case(uniform(-1.8, -1.2, 3))],
        _special.polygamma: [case(1, uniform(0.5, 3.0, 3, 4)), case(0, num(positive())),
                             case(3, positive()), case(np.array([0, 1, 2]), positive(4, 3)),
                             case(2, x=positive(2, 3))],
        _special.multigammaln: [case(uniform(2.0, 4.0, 3, 4), 3),
                                case(num(uniform(1.0, 3.0)), 1),
                                case(uniform(2.0, 4.0, 5), d=2), case(uniform(3.0, 5.0), 4)],
        _special.beta: binary(positive, positive), _special.betaln: binary(positive, positive),
        _special.erf: unary(), _special.erfc: unary(),
        _special.erfinv: unary(-0.9, 0.9), _special.erfcinv: unary(0.1, 1.9),
        _special.erfcx: unary(-2.0, 3.0),
        _special.ndtr: unary(-3.0, 3.0), _special.log_ndtr: unary(-6.0, 3.0),
        _special.ndtri: unary(0.05, 0.95),
        _special.rgamma: unary(0.5, 4.0) + [case(uniform(-2.8, -2.2, 3))],
        _special.betainc: [case(2, 3, uniform(0.1, 0.9, 3, 4)), case(1, 1, num(uniform(0.1, 0.9))),
                           case(np.array([1, 2, 5]), 2, uniform(0.1, 0.9, 4, 3)),
                           case(3, np.array([[1], [4]]), uniform(0.1, 0.9, 2, 3)),
                           case(2, 2, uniform(0.1, 0.9))],
        _special.softplus: unary(-4.0, 4.0),
        _special.xlogy: binary(normal, positive),
        _special.xlog1py: binary(normal, lambda *s: uniform(-0.5, 2.0, *s)),
        _special.j0: unary(-5.0, 5.0), _special.j1: unary(-5.0, 5.0),
        _special.y0: unary(0.5, 5.0), _special.y1: unary(0.5, 5.0),
        _special.jv: _orders(lambda *s: uniform(-5.0, 5.0, *s)) + [case(-1, normal(3))],
        _special.yv: _orders(lambda *s: uniform(0.5, 5.0, *s)),
        _special.yn: _orders(lambda *s: uniform(0.5, 5.0, *s)),
        _special.iv: _orders(lambda *s: uniform(-3.0, 3.0, *s)),
        _special.ive: _orders(lambda *s: signed(0.2, 3.0, *s)),
        _special.i0: unary(-3.0, 3.0), _special.i1: unary(-3.0, 3.0),
        _special.i0e: unary(hi=3.0, away=0.2), _special.i1e: unary(hi=3.0, away=0.2),
        _special.gammainc: _orders(lambda *s: uniform(0.3, 4.0, *s), (1, 2, 3)),
        _special.gammaincc: _orders(lambda *s: uniform(0.3, 4.0, *s), (1, 2, 3)),
        _special.logsumexp: reductions() + [
            case(normal(3, 4), axis=1, b=uniform(0.5, 2.0, 3, 4)), case(normal(4), b=uniform(
                0.5, 2.0, 4)), case(normal(3, 4), 0, uniform(0.5, 2.0, 4)),
            case(normal(2, 3), axis=None, b=uniform(0.5, 2.0, 3), keepdims=True),
            case(normal(2, 3), axis=1, b=uniform(0.5, 2.0, 2, 1))],
        _special.softmax: _softmaxes(), _special.log_softmax: _softmaxes(),
    })

# scipy.stats, scipy.signal and more array functions (anchor: stats)
try:
    import scipy.signal as _signal
    import scipy.stats as _stats
except ImportError:
    _signal = _stats = None


def _located(draw_x, *shapes, scales=(0.6, 1.5)):
    """Cases of a continuous distribution's method: x drawn by draw_x, each shape parameter
    drawn by its own function, with loc and scale by position, by name, broadcasting, and
    left out (x - loc stays within the support when scaled by `scales`)."""
    def params(*s):
        return [draw(*s) for draw in shapes]
    return [
        case(draw_x(3, 4), *params(3, 4)),
        case(draw_x(3, 4), *params(4), num(uniform(-0.1, 0.05)), num(uniform(*scales))),
        case(draw_x(2, 3), *params(3), uniform(-0.1, 0.05, 2, 1), uniform(*scales, 3)),
        case(num(draw_x()), *[num(p) for p in params()], loc=uniform(-0.1, 0.05, 3),
             scale=uniform(*scales, 3)),
        case(draw_x(5), *params(), scale=num(uniform(*scales))),
    ]


def _entropies(*shapes):
    """Cases of a continuous distribution's entropy in its shape parameters and scale."""
    def params(*s):
        return [draw(*s) for draw in shapes]
    return [case(*params(3, 4)), case(*params(3), scale=uniform(0.6, 1.5, 2, 1)),
            case(*[num(p) for p in params()], num(uniform(-0.5, 0.5)), num(uniform(0.6, 1.5))),
            case(*params(4), loc=normal(4), scale=uniform(0.6, 1.5, 4))]


def _integer_shapes(*values):
    """Shape parameters that are held (no derivative): ints, and int arrays that broadcast."""
    return lambda *s: tuple(values) if not s else tuple(
        np.full(s[-1:], v) + np.arange(s[-1]) % 3 for v in values)


def _held_located(draw_x, *values):
    """Cases of a distribution function whose shape parameters are held: they are ints."""
    shapes = _integer_shapes(*values)
    return [
        case(draw_x(3, 4), *shapes(4)),
        case(draw_x(3, 4), *shapes(), num(uniform(-0.1, 0.05)), num(uniform(1.2, 1.5))),
        case(draw_x(2, 3), *shapes(3), uniform(-0.1, 0.05, 2, 1), uniform(1.2, 1.5, 3)),
        case(num(draw_x()), *shapes(), loc=uniform(-0.1, 0.05, 3), scale=uniform(1.2, 1.5, 3)),
    ]


def _simplex(k, *samples):
    """Points of the simplex, components along the first axis, without the last component
    (scipy then takes 1 - sum): the others can move while the point stays on the simplex."""
    x = rng.dirichlet(np.full(k, 3.0), samples or None)
    return np.moveaxis(np.asarray(x), -1, 0)[:-1]


def _counts(*shape):
    return rng.integers(0, 7, shape)


def _poisson_cases():
    return [case(_counts(4), uniform(0.5, 5.0, 4)), case(_counts(3, 1), uniform(0.5, 5.0, 4)),
            case(3, uniform(0.5, 5.0, 2, 3)), case(_counts(5), mu=num(uniform(0.5, 5.0))),
            case(_counts(4) + 2, uniform(0.5, 5.0, 4), 2), case(2, num(uniform(0.5, 5.0)))]


def _mvn_cases(entropy=False):
    if entropy:
        return [case(None, spd(3)), case(cov=spd(2)), case(normal(3), spd(3)),
                case(mean=normal(1), cov=spd(1))]
    return [case(normal(3), normal(3), spd(3)), case(normal(5, 3), normal(3), spd(3)),
            case(normal(2, 4, 3), cov=spd(3)), case(normal(1, 2), normal(2), spd(2)),
            case(normal(5), num(normal()), spd(1)), case(normal(4), mean=normal(1), cov=spd(1)),
            case(normal(3), mean=normal(3), cov=spd(3), allow_singular=False)]


if _stats is not None:
    _unit = (lambda *s: uniform(0.1, 0.9, *s))
    _above = (lambda *s: uniform(0.5, 4.0, *s))
    _shape = (lambda *s: uniform(0.8, 4.0, *s))
    _df = (lambda *s: uniform(1.5, 6.0, *s))
    _beyond = (lambda *s: uniform(-0.6, 4.0, *s))  # below the support of chi2 and gamma too
    CASES.update({
        **{getattr(_stats.norm, m): _located(normal)
           for m in ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")},
        _stats.norm.entropy: [case(num(normal()), num(positive())),
                              case(loc=normal(3), scale=positive(3)),
                              case(normal(2, 1), positive(3)), case(scale=positive())],
        _stats.t.pdf: _located(normal, _df), _stats.t.logpdf: _located(normal, _df),
        **{getattr(_stats.t, m): _held_located(normal, 3) + [case(normal(4), df=7)]
           for m in ("cdf", "logcdf", "sf", "logsf")},
        _stats.t.entropy: _entropies(_df) + [case(df=num(_df()))],
        _stats.chi2.pdf: _located(_above, _df), _stats.chi2.logpdf: _located(_above, _df),
        **{getattr(_stats.chi2, m): _held_located(_above, 3) for m in ("logcdf", "logsf")},
        **{getattr(_stats.chi2, m): _held_located(_above, 3) + [case(_beyond(6), 4)]
           for m in ("cdf", "sf")},
        _stats.chi2.entropy: _entropies(_df),
        _stats.gamma.pdf: _located(_above, _shape),
        _stats.gamma.logpdf: _located(_above, _shape),
        **{getattr(_stats.gamma, m): _held_located(_above, 2) for m in ("logcdf", "logsf")},
        **{getattr(_stats.gamma, m): _held_located(_above, 3) + [case(_beyond(6), a=2)]
           for m in ("cdf", "sf")},
        _stats.gamma.entropy: _entropies(_shape),
        _stats.beta.pdf: _located(_unit, _shape, _shape, scales=(1.2, 1.5)),
        _stats.beta.logpdf: _located(_unit, _shape, _shape, scales=(1.2, 1.5)),
        **{getattr(_stats.beta, m): _held_located(_unit, 2, 3) for m in ("logcdf", "logsf")},
        **{getattr(_stats.beta, m): _held_located(_unit, 3, 2)
           + [case(uniform(-0.5, 1.5, 6), 2, 4)] for m in ("cdf", "sf")},
        _stats.beta.entropy: _entropies(_shape, _shape),
        # location-scale families without a shape parameter (on the whole line, or from loc on)
        **{getattr(getattr(_stats, d), m): _located(normal)
           for d in ("cauchy", "laplace", "logistic")
           for m in ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")},
        **{getattr(getattr(_stats, d), m): _located(_above)
           for d in ("halfcauchy", "halfnorm", "expon")
           for m in ("pdf", "logpdf", "logcdf", "logsf")},
        **{getattr(getattr(_stats, d), m): _located(_above) + [case(_beyond(6))]
           for d in ("halfcauchy", "halfnorm", "expon") for m in ("cdf", "sf")},
        **{getattr(_stats.lognorm, m): _located(_above, _shape)
           for m in ("pdf", "logpdf", "logcdf", "logsf")},
        **{getattr(_stats.lognorm, m): _located(_above, _shape) + [case(_beyond(6), 0.7)]
           for m in ("cdf", "sf")},
        **{getattr(_stats.poisson, m): _poisson_cases() for m in ("pmf", "logpmf", "logcdf")},
        **{getattr(_stats.poisson, m): _poisson_cases() + [  # constant below 0
            case(np.array([-2, -1, 0, 3]), uniform(0.5, 5.0, 4))] for m in ("cdf", "sf", "logsf")},
        **{getattr(_stats.dirichlet, m): [
            case(_simplex(3), uniform(0.8, 3.0, 3)), case(_simplex(4, 5), uniform(0.8, 3.0, 4)),
            case(_simplex(2), uniform(0.8, 3.0, 2)),
            case(_simplex(3, 1), alpha=uniform(0.8, 3.0, 3))] for m in ("pdf", "logpdf")},
        _stats.dirichlet.entropy: [case(uniform(0.8, 3.0, 4)), case(alpha=uniform(0.5, 5.0, 2))],
        _stats.multivariate_normal.logpdf: _mvn_cases(),
        _stats.multivariate_normal.pdf: _mvn_cases(),
        _stats.multivariate_normal.entropy: _mvn_cases(entropy=True),
    })
if _signal is not None:
    CASES[_signal.convolve] = [
        case(normal(5), normal(3)), case(normal(3), normal(5)), case(normal(6), normal(3), "same"),
        case(normal(3), normal(6), "same"), case(normal(6), normal(4), "valid"),
        case(normal(4), normal(6), mode="valid"), case(normal(4, 5), normal(2, 3)),
        case(normal(4, 5), normal(3, 2), "same"), case(normal(2, 3), normal(4, 5), "same"),
        case(normal(4, 5), normal(2, 2), "valid"), case(normal(2, 2), normal(4, 5), "valid"),
        case(normal(5, 4), normal(3, 2), "full", "direct"),
        case(normal(5, 4), normal(3, 3), mode="same", method="fft"),
        case(normal(3, 2, 4), normal(2, 2, 3), "same"), case(normal(6), normal(6), "valid")]
CASES.update({
    np.real_if_close: [case(normal(3, 4)), case(normal(5), tol=1000), case(num(normal())),
                       case(normal())],
    np.gradient: [case(normal(6)), case(normal(6), 2), case(normal(4, 5), axis=1),
                  case(normal(4, 5), 3, axis=0), case(normal(3, 4, 5), axis=-1, edge_order=2),
                  case(normal(5), edge_order=2), case(normal(2)), case(normal(3), 2, edge_order=2),
                  case(normal(4, 3), axis=0, edge_order=2), case(normal(2, 3), axis=0)],
    np.trapezoid: [case(normal(6)), case(normal(6), np.cumsum(positive(6))),
                   case(normal(6), dx=0.3), case(normal(3, 5), axis=0),
                   case(normal(3, 5), np.cumsum(positive(5))), case(normal(4, 3), normal(4), 0.5, 0),
                   case(normal(2, 4, 5), normal(2, 4, 5), axis=1), case(normal(3, 4), normal(3, 4)),
                   case(normal(2)), case(normal(5, 2), x=normal(5), axis=0)],
    np.partition: [case(normal(6), 2), case(normal(3, 5), 1), case(normal(3, 5), 2, axis=0),
                   case(normal(2, 3, 4), (0, 2), axis=1), case(normal(5), 3, axis=None),
                   case(normal(4, 6), -1), case(normal(7), [1, 4]),
                   case(normal(4, 5), kth=3, axis=-1, kind="introselect")],
    np.select: [case([normal(3, 4) > 0.5, normal(3, 4) > 0.0], [normal(3, 4), normal(3, 4)]),
                case([normal(3, 4) > 0.5, normal(4) > 0.0], [normal(3, 1), num(normal())],
                     normal(4)),
                case([normal(5) > 0.0], [normal(5)], num(normal())),
                case([normal(2, 3) > 0.3, normal(2, 3) < -0.3, normal(3) > 0.0],
                     [normal(2, 3), normal(3), normal(2, 1)], default=normal(2, 3))],
})

# --- complex values (rules registered with complex=): the cotangent convention of
# rules/registry.py, checked as Re <contribution, v> for complex directions v ---------------


def cnormal(*shape):
    """A complex draw: both parts standard normal."""
    return normal(*shape) + 1j * normal(*shape)


def cright(*shape):
    """A complex draw right of the imaginary axis, away from the branch cut of log and sqrt
    (the negative reals)."""
    return uniform(0.5, 2.0, *shape) + 1j * normal(*shape)


def cunary(draw=cnormal):
    """A complex array, a Python complex, a 0-d complex array, and a complex array beside a
    real one's shape (a real input is checked by the real cases)."""
    return [case(draw(3, 4)), case(complex(draw())), case(draw())]


def cbinary(a=cnormal, b=cnormal):
    """Two complex operands broadcasting, and a complex one with a real one (the real one
    gets the real part of its contribution)."""
    real_b = normal if b is cnormal else (lambda *s: uniform(0.5, 2.0, *s))
    return [case(a(3, 4), b(3, 4)), case(a(3, 1), b(4)), case(complex(a()), b(2, 3)),
            case(a(2, 3), real_b(2, 3)), case(normal(3, 1), b(4)),
            case(complex(a()), complex(b()))]


def fourier(transform, real=False, half=False):
    """Cases of a 1-d transform: lengths odd and even, n= padding and cutting, an axis,
    each norm; ``real`` for a real input (rfft), ``half`` for a half spectrum (irfft)."""
    draw = normal if real else cnormal
    cases = [case(draw(6)), case(draw(7)), case(draw(5), 8), case(draw(8), 5),
             case(draw(3, 4), axis=0), case(draw(2, 5), n=6, axis=-1),
             case(draw(6), norm="ortho"), case(draw(5), norm="forward"),
             case(draw(4), None, -1, "backward")]
    if half:
        cases += [case(draw(4), 7), case(draw(4), 3), case(draw(5), norm="forward", n=9)]
    elif not real:
        cases += [case(normal(6)), case(normal(5), 4, norm="ortho")]
    return cases


def fourier_n(transform, real=False, half=False, two=False):
    """Cases of an n-dimensional transform: all axes, some axes, s= with and without axes."""
    draw = normal if real else cnormal
    if two:
        return [case(draw(3, 4)), case(draw(2, 3, 4)), case(draw(3, 4), s=(4, 6)),
                case(draw(3, 4, 2), axes=(0, 1)), case(draw(4, 4), norm="ortho"),
                case(draw(3, 5), (2, 3), norm="forward")]
    return [case(draw(3, 4)), case(draw(2, 3, 4), axes=(0, 2)), case(draw(3, 4), s=(4, 6)),
            case(draw(2, 3, 4), s=(5, 2)), case(draw(4, 5), norm="ortho"),
            case(draw(3, 4), (2, 6), (1, 0), "forward")]


_COMPLEX_CASES = {
    operator.add: cbinary(), np.add: cbinary(), operator.sub: cbinary(),
    np.subtract: cbinary(), operator.mul: cbinary(), np.multiply: cbinary(),
    operator.truediv: cbinary(cnormal, cright), np.true_divide: cbinary(cnormal, cright),
    operator.pow: cbinary(cright, cnormal) + [case(cnormal(3, 4), 2), case(cnormal(3), 3.0)],
    np.power: cbinary(cright, cnormal), np.float_power: cbinary(cright, cnormal),
    operator.neg: cunary(), np.negative: cunary(), operator.pos: cunary(),
    np.positive: cunary(),
    np.exp: cunary(), np.exp2: cunary(), np.expm1: cunary(),
    np.log: cunary(cright), np.log2: cunary(cright), np.log10: cunary(cright),
    np.log1p: cunary(cright), np.sqrt: cunary(cright), np.square: cunary(),
    np.reciprocal: cunary(cright), np.sin: cunary(), np.cos: cunary(),
    np.tan: [case(0.5 * cnormal(3, 4)), case(complex(0.5 * cnormal()))],
    np.sinh: cunary(), np.cosh: cunary(), np.tanh: [case(0.5 * cnormal(3, 4))],
    np.absolute: cunary(), abs: [case(complex(cnormal())), case(cnormal(3))],
    np.where: [case(normal(3, 4) > 0, cnormal(3, 4), cnormal(4)),
               case(normal(3) > 0, cnormal(3), num(normal()))],
    np.real: cunary(), np.imag: cunary(), np.conjugate: cunary(),
    np.ndarray.real: [case(cnormal(3, 4))], np.ndarray.imag: [case(cnormal(3, 4))],
    np.angle: cunary() + [case(cnormal(3), deg=True), case(cnormal(4), True)],
    np.sum: [case(cnormal(3, 4)), case(cnormal(3, 4), axis=0), case(cnormal(2, 3), 1, None,
                                                                     None, True)],
    np.ndarray.sum: [case(cnormal(3, 4), axis=1)],
    np.mean: [case(cnormal(3, 4)), case(cnormal(3, 4), axis=0)],
    np.ndarray.mean: [case(cnormal(3, 4))],
    np.cumsum: [case(cnormal(5)), case(cnormal(3, 4), axis=1)],
    np.dot: [case(cnormal(3, 4), cnormal(4, 2)), case(cnormal(3), normal(3)),
             case(normal(2, 3), cnormal(3))],
    np.matmul: [case(cnormal(3, 4), cnormal(4, 2)), case(cnormal(2, 3, 4), normal(4))],
    operator.matmul: [case(cnormal(3, 4), cnormal(4)), case(normal(3, 4), cnormal(4, 2))],
    np.outer: [case(cnormal(3), cnormal(4)), case(normal(3), cnormal(2))],
    np.trace: [case(cnormal(3, 3))],
    np.tensordot: [case(cnormal(3, 4), cnormal(4, 2), 1)],
    np.transpose: [case(cnormal(3, 4))], np.reshape: [case(cnormal(3, 4), (2, 6))],
    np.concatenate: [case([cnormal(2, 3), normal(1, 3)])],
    np.stack: [case([cnormal(3), cnormal(3)])],
}
for _primitive, _cases in _COMPLEX_CASES.items():
    CASES[_primitive] = CASES.get(_primitive, []) + _cases
CASES.update({
    np.ndarray.conj: [case(cnormal(3, 4)), case(normal(3))],
    np.ndarray.conjugate: [case(cnormal(3)), case(normal(2, 2))],
    np.angle: CASES[np.angle] + unary(hi=2.0, away=0.5),
    np.vdot: [case(cnormal(3), cnormal(3)), case(cnormal(2, 3), normal(6)),
              case(normal(4), cnormal(2, 2)), case(normal(3), normal(3))],
    np.fft.fft: fourier(np.fft.fft), np.fft.ifft: fourier(np.fft.ifft),
    np.fft.rfft: fourier(np.fft.rfft, real=True),
    np.fft.irfft: fourier(np.fft.irfft, half=True),
    np.fft.fft2: fourier_n(np.fft.fft2, two=True), np.fft.ifft2: fourier_n(np.fft.ifft2, two=True),
    np.fft.fftn: fourier_n(np.fft.fftn) + [case(normal(3, 4))],
    np.fft.ifftn: fourier_n(np.fft.ifftn),
    np.fft.rfftn: fourier_n(np.fft.rfftn, real=True) + [case(normal(2, 5), axes=(1,))],
    np.fft.irfftn: fourier_n(np.fft.irfftn, half=True) + [case(cnormal(3, 4), axes=(0,))],
    np.fft.fftshift: [case(normal(5)), case(cnormal(4, 5)), case(cnormal(4, 5), axes=0),
                      case(normal(3, 4), (0, 1))],
    np.fft.ifftshift: [case(normal(6)), case(cnormal(3, 5), axes=1), case(cnormal(4, 3))],
    _fourier_resized: [case(normal(3, 4), (5, 2)), case(cnormal(4), (2,)),
                       case(cnormal(2, 3), (2, 3))],
})

for _name in ("exp2", "cbrt"):  # Python 3.11+
    if hasattr(math, _name):
        CASES[getattr(math, _name)] = math_cases()

_matrix_transposes = [getattr(np, "matrix_transpose", None),
                      getattr(np.linalg, "matrix_transpose", None),
                      getattr(np.ndarray, "mT", None)]
for _f in _matrix_transposes:
    if _f is not None:
        CASES[_f] = [case(normal(3, 4)), case(normal(2, 3, 4))]

# getset descriptors (x.T) are read, not called.
CALLS = {f: getter(f) for f in (np.ndarray.T, np.ndarray.real, np.ndarray.imag,
                                getattr(np.ndarray, "mT", None)) if f is not None}


# --- the check ----------------------------------------------------------------------------


def library_rules():
    """The library's rules as registered at import, and any of its templates registered since."""
    now = [r for r in registry.all_rules() if r.template.__module__.startswith("s2sgrad.rules.")]
    unique = {(id(r.primitive), r.template): r for r in doc.library_rules() + now}
    return list(unique.values())


def is_float(x):
    """A float or complex input: one that gets a contribution."""
    if isinstance(x, (float, complex)):
        return True
    return isinstance(x, (np.ndarray, np.floating, np.complexfloating)) and np.asarray(
        x).dtype.kind in "fc"


def is_complex(x):
    return isinstance(x, complex) or (isinstance(x, (np.ndarray, np.generic))
                                      and np.asarray(x).dtype.kind == "c")


def call(primitive, args, kwargs):
    return CALLS.get(primitive, primitive)(*args, **kwargs)


def draw_like(x):
    """A random value shaped like x: a list of them for a tuple or list of arrays (the
    cotangent of a rule with a container result)."""
    if isinstance(x, (tuple, list)):
        return [draw_like(item) for item in x]
    v = rng.standard_normal(np.shape(x))
    if is_complex(x):  # a complex direction or cotangent moves both parts
        v = v + 1j * rng.standard_normal(np.shape(x))
        return complex(v) if np.ndim(x) == 0 and not isinstance(x, np.ndarray) else v
    return float(v) if np.ndim(x) == 0 and not isinstance(x, np.ndarray) else v


def flat(out):
    """A result as one vector: a tuple or list of arrays item after item (weights and
    differences of container results are taken on this). A flag among the items (the lower
    of cho_factor's (c, lower)) has no derivative: 0 here, whatever the tangent calls it."""
    if isinstance(out, (tuple, list)):
        return np.concatenate([np.zeros(1) if isinstance(item, (bool, np.bool_)) else
                               np.ravel(np.asarray(item, complex if is_complex(item) else
                                                   float)) for item in out] or [[]])
    return out


def contributions(rule, g, ans, args, kwargs):
    """The rule's contributions, one per input of ``bound_inputs``: a rule registered with
    ``each=`` gives one per argument of its ``*args``, its template called once for each."""
    if rule.each is None:
        out = rule.template(g, ans, *args, **kwargs)
        return out if isinstance(out, tuple) else (out,)
    leading = rule.params[:rule.params.index(rule.star)]
    count = len(args) - len(leading)
    found, mine = (None,) * len(leading), []
    for k in range(count):
        out = rule.template(g, ans, *args, **kwargs, **{rule.each: k})
        out = out if isinstance(out, tuple) else (out,)
        out = out + (None,) * (len(leading) + 1 - len(out))
        found = out[:len(leading)] if k == 0 else found
        mine.append(out[len(leading)])
    return tuple(found) + tuple(mine)


def bound_inputs(rule, args, kwargs):
    """(parameter, value, where) for each parameter the call binds, in the rule's order;
    for a rule registered with ``each=``, one entry per argument of its ``*args``
    (``operands[1]``, at its position)."""
    sig = inspect.signature(rule.template)
    bound = sig.bind(None, None, *args, **kwargs).arguments
    where = {}
    positional = [p for p in list(sig.parameters.values())[2:]
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i, p in enumerate(positional[:len(args)]):
        where[p.name] = i
    out = []
    for name in rule.params:
        if rule.each is not None and name == rule.star:
            out += [(f"{name}[{k}]", v, len(positional) + k)
                    for k, v in enumerate(bound.get(name, ()))]
        else:
            out.append((name, bound.get(name), where.get(name, name)))
    return out


def entry_of(rule, i, inputs):
    """(entry of the template's return, the ``each`` index) for input i of ``bound_inputs``."""
    if rule.each is None:
        return i, None
    leading = rule.params.index(rule.star)
    return (i, None) if i < leading else (leading, i - leading)


def with_input(args, kwargs, where, value):
    if isinstance(where, int):
        args = args[:where] + (value,) + args[where + 1:]
    else:
        kwargs = {**kwargs, where: value}
    return args, kwargs


def varying(primitive, c: Case, where, spread=False):
    """The primitive's output as a function of its input at ``where`` alone (``spread``: of
    the items of a list input, one argument each)."""
    return varying_result(primitive, c, where, spread)


def varying_result(primitive, c: Case, where, spread=False):
    def output(*values):
        # spread: a list, or the container type of the input (cho_solve's (c, lower))
        value = (list(values) if spread is True else spread(values)) if spread else values[0]
        return call(primitive, *with_input(c.args, c.kwargs, where, value))
    return output


def check_rule(primitive, c: Case):
    rule = registry.lookup(primitive)
    ans = call(primitive, c.args, c.kwargs)
    g = draw_like(ans)  # a list of cotangents for a tuple or list result
    weight = flat(g)

    def varying(primitive, c, where, spread=False):  # the result as one vector
        output = varying_result(primitive, c, where, list if spread is True else spread)
        return lambda *values: flat(output(*values))

    # On inputs inside the domain a rule has no business dividing by zero or making a nan.
    with np.errstate(divide="raise", over="raise", invalid="ignore" if c.quiet else "raise"):
        got = contributions(rule, g, ans, c.args, c.kwargs)
    inputs = bound_inputs(rule, c.args, c.kwargs)
    checked = 0
    for (name, x, where), contribution in zip(inputs, got):
        if isinstance(x, (list, tuple)) and x and any(is_float(item) for item in x):
            # a list of arrays (stack, concatenate, sum), or a tuple holding arrays (the
            # (c, lower) of cho_solve): one contribution per item, checked on float items
            assert len(contribution) == len(x), f"contribution to {name}"
            for k, item in enumerate(x):
                if not is_float(item):
                    continue
                assert np.shape(contribution[k]) == np.shape(item), f"{name}[{k}]"
                v = draw_like(item)
                numeric = central_difference(varying(primitive, c, where, spread=type(x)),
                                             list(x), k, v, weight=weight)
                analytic = np.real(np.sum(contribution[k] * v))
                assert np.isclose(analytic, numeric, rtol=RTOL, atol=ATOL), (name, k)
                checked += 1
            continue
        if isinstance(x, dict) and x and all(is_float(item) for item in x.values()):
            # a dict of arrays (dict.get): one contribution per key
            keys = list(x)
            assert list(contribution) == keys, f"contribution to {name}"

            def of_items(*items, keys=keys, where=where):
                return varying(primitive, c, where)(dict(zip(keys, items, strict=True)))
            for k, key in enumerate(keys):
                assert np.shape(contribution[key]) == np.shape(x[key]), f"{name}[{key!r}]"
                v = draw_like(x[key])
                numeric = central_difference(of_items, list(x.values()), k, v, weight=weight)
                analytic = np.sum(contribution[key] * v)
                assert np.isclose(analytic, numeric, rtol=RTOL, atol=ATOL), (name, key)
                checked += 1
            continue
        if not is_float(x):
            continue
        if contribution is None:  # the rule says the output does not depend on x
            contribution = np.zeros(np.shape(x))
        elif rule.shape == "elementwise":
            contribution = unbroadcast(contribution, np.shape(x))
        assert np.shape(contribution) == np.shape(x), f"contribution to {name}"
        v = draw_like(x)
        numeric = central_difference(varying(primitive, c, where), [x], 0, v, weight=weight)
        # complex values: Re <contribution, v> (a real input takes the real part)
        analytic = np.real(np.sum(contribution * v))
        assert np.isclose(analytic, numeric, rtol=RTOL, atol=ATOL), (name, analytic, numeric)
        checked += 1
    assert checked, "the case has no float input to check"


def describe(x):
    if isinstance(x, float):
        return "float"
    if isinstance(x, np.ndarray):
        return "[" + "x".join(map(str, x.shape)) + "]"
    if isinstance(x, np.floating):
        return x.dtype.name
    if isinstance(x, dict):
        return "{" + ",".join(f"{k}:{describe(v)}" for k, v in x.items()) + "}"
    if isinstance(x, list) and any(is_float(v) for v in x):  # not their values in the id
        return "[" + ",".join(map(describe, x)) + "]"
    if isinstance(x, tuple) and any(is_float(v) for v in x):
        return "(" + ",".join(map(describe, x)) + ")"
    return repr(x) if not isinstance(x, type) else x.__name__


def case_id(primitive, c: Case):
    parts = [describe(a) for a in c.args] + [f"{k}={describe(v)}" for k, v in c.kwargs.items()]
    return f"{doc.name(primitive)}({','.join(parts)})"


PARAMS = [pytest.param(p, c, id=case_id(p, c)) for p, cs in CASES.items() for c in cs]


@pytest.mark.parametrize("primitive, c", PARAMS)
def test_rule_matches_finite_differences(primitive, c):
    check_rule(primitive, c)


# Rules checked in a test file of their own: scipy.integrate.odeint takes the user's function
# and is as accurate as its ODE solver (not to RTOL), and has no second derivative
# (tests/rules/test_coverage_odeint.py).
CHECKED_ELSEWHERE = {"scipy.integrate.odeint"}


def test_every_rule_has_cases():
    missing = {doc.name(r.primitive) for r in library_rules()
               if r.primitive not in CASES and doc.name(r.primitive) not in CHECKED_ELSEWHERE}
    assert not missing, f"rules without a case in CASES: {sorted(missing)}"


def test_cases_are_for_registered_rules():
    stale = [registry.primitive_name(p) for p in CASES if registry.lookup(p) is None]
    assert not stale


# --- exact values where finite differences do not apply --------------------------------------


def test_maximum_minimum_split_ties_half_and_half():
    a, b, g = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0]), np.array([2.0, 4.0, 6.0])
    rule = registry.lookup(np.maximum).template
    ga, gb = rule(g, np.maximum(a, b), a, b)
    np.testing.assert_array_equal(ga, [1.0, 4.0, 3.0])
    np.testing.assert_array_equal(gb, [1.0, 0.0, 3.0])
    ga, gb = registry.lookup(np.minimum).template(g, np.minimum(a, b), a, b)
    np.testing.assert_array_equal(ga, [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(gb, [1.0, 4.0, 3.0])
    ga, gb = rule(1.0, 2.0, 2.0, 2.0)  # maximum(x, x) == x: the halves add up to 1
    assert ga + gb == 1.0


@pytest.mark.parametrize("primitive", [np.max, np.amax, np.ndarray.max,
                                       np.min, np.amin, np.ndarray.min],
                         ids=doc.name)
def test_max_min_reductions_share_ties_evenly(primitive):
    x = np.array([[1.0, 3.0, 3.0], [-2.0, -2.0, -2.0], [0.0, -1.0, 5.0]])
    if primitive in (np.min, np.amin, np.ndarray.min):
        x = -x
    rule = registry.lookup(primitive).template
    g = np.array([6.0, 3.0, 1.0])
    np.testing.assert_allclose(rule(g, primitive(x, axis=1), x, axis=1),
                               [[0, 3, 3], [1, 1, 1], [0, 0, 1]])
    np.testing.assert_allclose(rule(g[:, None], primitive(x, axis=1, keepdims=True), x,
                                    axis=1, keepdims=True), [[0, 3, 3], [1, 1, 1], [0, 0, 1]])
    np.testing.assert_allclose(rule(4.0, primitive(x[:1]), x[:1]), [[0, 2, 2]])


@pytest.mark.parametrize("primitive", [np.absolute, np.fabs, abs, math.fabs],
                         ids=doc.name)
def test_abs_has_zero_gradient_at_zero(primitive):
    rule = registry.lookup(primitive).template
    assert rule(1.0, 0.0, 0.0) == 0.0
    if primitive is not math.fabs:
        np.testing.assert_array_equal(rule(np.ones(3), None, np.array([-2.0, 0.0, 2.0])),
                                      [-1.0, 0.0, 1.0])


def test_clip_passes_the_gradient_at_the_bounds_and_gives_the_rest_to_them():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    lo, hi = np.full(5, -1.0), 1.0
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    got = registry.lookup(np.clip).template(g, np.clip(x, lo, hi), x, lo, hi)
    np.testing.assert_array_equal(got[0], [0.0, 2.0, 3.0, 4.0, 0.0])
    np.testing.assert_array_equal(got[1], [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(got[2], [0.0, 0.0, 0.0, 0.0, 5.0])


def test_where_keeps_inf_out_of_the_unselected_side():
    c = np.array([True, False])
    _, gx, gy = registry.lookup(np.where).template(np.array([np.inf, 1.0]), None, c, 0.0, 0.0)
    np.testing.assert_array_equal(gx, [np.inf, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0])


def test_power_at_zero_base():
    rule = registry.lookup(operator.pow).template
    ga, gb = rule(1.0, 0.0, np.array(0.0), 2.0)
    assert ga == 0.0 and gb == 0.0


@pytest.mark.parametrize("x, expected", [
    ([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]),  # one zero: the product of the others
    ([2.0, 0.0, 0.0], [0.0, 0.0, 0.0]),  # two zeros: every partial product vanishes
    ([2.0, 5.0, 3.0], [15.0, 6.0, 10.0]),
])
def test_prod_with_zeros(x, expected):
    x = np.array(x)
    np.testing.assert_allclose(registry.lookup(np.prod).template(1.0, np.prod(x), x), expected)


# --- the templates obey what inlining needs --------------------------------------------------

# Templates call NumPy and math; the container rules also call two small run-time helpers
# (the pieces of a concatenation, a sum's cotangent per item, an item's cotangent), which
# are plain functions.
from s2sgrad.rules import decompositions as _decompositions
from s2sgrad.rules import products as _products
from s2sgrad.runtime import containers as _containers
from s2sgrad.runtime import fourier as _fourier
from s2sgrad.runtime import odeint as _odeint

ALLOWED_GLOBALS = {"np": np, "math": math, "pieces_along": _containers.pieces_along,
                   "inverse_axes": _containers.inverse_axes,
                   "unbroadcast_each": _containers.unbroadcast_each,
                   "leading": _containers.leading, "trailing": _containers.trailing,
                   "sum_repeats": _containers.sum_repeats,
                   "flat_pieces": _containers.flat_pieces,
                   "item_cotangent": _containers.item_cotangent,
                   "default_cotangent": _containers.default_cotangent,
                   "unbroadcast": unbroadcast, "rows_with_item": rows_with_item,
                   "select_choices": rules.signal.select_choices,
                   "select_default": rules.signal.select_default}
# einsum's and the decompositions' helpers read subscripts and sizes (nondifferentiable)
ALLOWED_GLOBALS.update({
    "einsum_spec": _products.einsum_spec, "einsum_mask": _products.einsum_mask,
    "einsum_path": _products.einsum_path, "qr_columns": _decompositions.qr_columns,
    "svd_columns": _decompositions.svd_columns,
    "real_eigenvalues": _decompositions.real_eigenvalues,
    "len": len})  # len(arys) of a *args parameter: a constant where inlined
# the Fourier transforms' helpers cut or pad an array (linear), and weigh a half spectrum
ALLOWED_GLOBALS.update({"resized": _fourier.resized,
                        "half_spectrum_weights": _fourier.half_spectrum_weights})
# odeint's derivatives solve ODEs at run time (runtime/odeint.py), one call each
ALLOWED_GLOBALS.update({"odeint_backward": _odeint.odeint_backward,
                        "odeint_tangent": _odeint.odeint_tangent})
if _special is not None:  # the scipy rules call scipy's functions, as users do
    import scipy.linalg

    ALLOWED_GLOBALS.update({"special": _special, "scipy": scipy})
FORBIDDEN = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
             ast.NamedExpr, ast.IfExp, ast.Yield, ast.YieldFrom, ast.Await, ast.Starred)


def templates():
    seen = {}
    for r in library_rules():
        seen.setdefault(r.template, r)
    return [pytest.param(t, id=f"{t.__module__.rsplit('.', 1)[-1]}.{t.__name__}") for t in seen]


def check_block(body, defined, params, errors, top):
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Return):
            if not (top and i == len(body) - 1):
                errors.append(f"line {stmt.lineno}: return must be the last statement")
            check_reads(stmt.value, defined, errors)
            width = len(stmt.value.elts) if isinstance(stmt.value, ast.Tuple) else 1
            if width > len(params):
                errors.append("returns more contributions than the rule has parameters")
        elif isinstance(stmt, ast.Assign):
            # one plain name, or names unpacked (g_q, g_r = g: a container's items)
            target = stmt.targets[0] if len(stmt.targets) == 1 else None
            names = [target] if isinstance(target, ast.Name) else list(
                target.elts) if isinstance(target, ast.Tuple) else []
            if not names or not all(isinstance(n, ast.Name) for n in names):
                errors.append(f"line {stmt.lineno}: assign to plain names only")
                continue
            check_reads(stmt.value, defined, errors)
            for n in names:
                if n.id in params or n.id in ("g", "ans"):
                    errors.append(f"line {stmt.lineno}: assigns to the parameter {n.id}")
            defined = defined | {n.id for n in names}
        elif isinstance(stmt, ast.If):
            check_reads(stmt.test, defined, errors)
            then = check_block(stmt.body, defined, params, errors, top=False)
            other = check_block(stmt.orelse, defined, params, errors, top=False)
            defined = then & other  # a name is defined after the if only if both branches define it
        else:
            errors.append(f"line {stmt.lineno}: {type(stmt).__name__} is not allowed")
    if top and not (body and isinstance(body[-1], ast.Return)):
        errors.append("the body must end with a return")
    return defined


def check_reads(node, defined, errors):
    # *x passes the atoms of a *args parameter one by one (the inliner spells them out)
    spread = {id(a) for n in ast.walk(node) if isinstance(n, ast.Call) for a in n.args
              if isinstance(a, ast.Starred)}
    for n in ast.walk(node):
        if isinstance(n, FORBIDDEN) and id(n) not in spread:
            errors.append(f"line {n.lineno}: {type(n).__name__} is not allowed")
        if isinstance(n, ast.Name) and n.id not in defined:
            errors.append(f"line {n.lineno}: {n.id} is read before it is assigned on every path")
        if isinstance(n, ast.Call):
            root = n.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in ALLOWED_GLOBALS):
                errors.append(f"line {n.lineno}: calls must be to np.* or math.*")


@pytest.mark.parametrize("template", templates())
def test_template_is_inlinable(template):
    node = ast.parse(textwrap.dedent(inspect.getsource(template))).body[0]
    assert isinstance(node, ast.FunctionDef)
    args = node.args
    assert [a.arg for a in args.args[:2]] == ["g", "ans"]
    assert args.kwarg is None, "no **kwargs: every parameter must bind by name"
    params = {a.arg for a in args.args[2:] + args.kwonlyargs} | (
        {args.vararg.arg} if args.vararg else set())
    errors = []
    check_block(node.body, params | {"g", "ans"} | set(ALLOWED_GLOBALS), params, errors, top=True)
    assert not errors, "\n".join(errors)
    for name, module in ALLOWED_GLOBALS.items():
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
            found = template.__globals__.get(name, getattr(builtins, name, None))
            assert found is module, f"{name} is not {module} here"


@pytest.mark.parametrize("rule", [pytest.param(r, id=doc.name(r.primitive))
                                  for r in library_rules()])
def test_template_parameters_bind_like_the_primitive(rule):
    """Keyword arguments at call sites bind by name: the template must use NumPy's names."""
    try:
        theirs = list(inspect.signature(rule.primitive).parameters.values())
    except (TypeError, ValueError):
        pytest.skip("no introspectable signature")
    ours = [p for p in list(inspect.signature(rule.template).parameters.values())[2:]
            if p.name != rule.each]  # the index of a rule inlined per argument of *args
    if theirs and theirs[0].kind is theirs[0].VAR_POSITIONAL and ours and \
            ours[0].kind is not ours[0].VAR_POSITIONAL and rule.each is not None:
        # (*operands) documented as (subscripts, *operands): named leading arguments
        ours = ours[[p.kind for p in ours].index(ours[0].VAR_POSITIONAL):]
    var_keyword = any(p.kind is p.VAR_KEYWORD for p in theirs)
    for i, p in enumerate(ours):
        if i >= len(theirs) or theirs[i].kind is theirs[i].VAR_KEYWORD:
            assert var_keyword, f"{p.name} is not a parameter of {rule.name}"
            continue
        q = theirs[i]
        if q.kind is q.VAR_POSITIONAL and var_keyword and p.kind is not p.VAR_POSITIONAL:
            # (x, *args, **kwds) of scipy.stats: the rest are the distribution's own names
            # (its shapes, loc, scale), checked against scipy in test_coverage_stats.py
            break
        if q.kind is q.POSITIONAL_ONLY:
            assert p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD), p.name
        else:
            assert (p.name, p.kind is p.VAR_POSITIONAL) == (q.name, q.kind is q.VAR_POSITIONAL)


def test_importing_the_package_registers_the_tables():
    assert rules.lookup(np.tanh) is not None
    assert rules.is_nondifferentiable(np.argmax)
    assert not rules.is_nondifferentiable(np.tanh)


# --- docs -------------------------------------------------------------------------------------


def test_docs_table_is_up_to_date():
    path = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    text = path.read_text()
    assert doc.update(text) == text, "docs/rules.md is stale: run python -m s2sgrad.rules.doc"


def test_docs_table_lists_every_rule_module():
    # a module missing from doc.MODULES would leave its rules out of docs/rules.md
    modules = {r.template.__module__.rsplit(".", 1)[-1] for r in library_rules()}
    assert modules <= set(doc.MODULES), sorted(modules - set(doc.MODULES))


# --- methods of ufuncs that take the rules of a function (registry.same_as) ----------------


SAME_CASES = {
    np.add.reduce: [case(normal(4)), case(normal(3, 4), 1), case(normal(3, 4), axis=None),
                    case(normal(2, 3), 0, None, None, True), case(normal(3), initial=2.0)],
    np.multiply.reduce: [case(normal(4)), case(normal(3, 4), axis=-1, keepdims=True)],
    np.maximum.reduce: [case(normal(4)), case(normal(3, 4), 1), case(normal(3, 4), axis=None)],
    np.minimum.reduce: [case(normal(3, 4)), case(normal(2, 3), axis=(0, 1))],
    np.add.accumulate: [case(normal(4)), case(normal(3, 4), 1), case(normal(3, 4), axis=0)],
    np.multiply.accumulate: [case(normal(4)), case(normal(2, 3), 1)],
}


@pytest.mark.parametrize("method", list(SAME_CASES), ids=registry.primitive_name)
def test_ufunc_methods_compute_their_function(method):
    # The method's call, given to its function as same_call binds it, computes the same
    # values: the function's rules (checked above) are then the method's.
    names = {name for name, _, _ in registry.same_methods()}
    assert registry.primitive_name(method) in names
    for c in SAME_CASES[method]:
        primitive, args, keywords, defaults = registry.same_call(method, list(c.args), c.kwargs)
        np.testing.assert_array_equal(primitive(*args, **keywords, **defaults),
                                      method(*c.args, **c.kwargs))


def test_every_ufunc_method_has_cases():
    assert {name for name, _, _ in registry.same_methods()} == {
        registry.primitive_name(m) for m in SAME_CASES}
