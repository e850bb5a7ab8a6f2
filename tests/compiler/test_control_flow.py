"""Control-flow catalogue: every function in tests/catalogue_cf through the compiler.

For each entry of ``TABLE`` (a function, how to draw its arguments, which sets of arguments to
differentiate) and each ``wrt`` set, at ``POINTS`` random points away from kinks:

- ``check_grads`` compares the vector-Jacobian product with central finite differences;
- ``value_and_grad`` specialised to exactly that ``wrt`` set must give the function's value,
  a gradient of each argument's shape that agrees with finite differences, nonzero unless the
  entry says the output does not depend on that argument (then exactly zero);
- no call may modify its input arrays.

Points are drawn away from branch boundaries (a branch boundary is a kink, or a jump when a
loop's trip count changes): each entry may name a guard on its arguments, and every point must
also pass ``smooth``, a second-difference test that the function is one smooth piece within
1e-3 of the point. Integer arguments (trip counts) are fixed per entry, 0 and 1 included, so
the gradient of a loop that runs zero times is checked too.

Constructs not supported yet are strict xfails ("not supported yet: ..."), so that the mark
must go when they land; known compiler bugs are strict xfails whose reason says "compiler:".

Separate tests: refused control flow raises a TransformError pointing at the construct; every
catalogue function has an entry.
"""

from __future__ import annotations

import copy
import inspect
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import TransformError
from s2sgrad.testing import assert_gradient_matches, check_grads, numeric_gradient
from tests.arguments import assert_unchanged
from tests.catalogue_cf import branches as B
from tests.catalogue_cf import loops as L
from tests.catalogue_cf import pending as PD
from tests.catalogue_cf import refused as R
from tests.catalogue_cf import scientific as SC
from tests.catalogue_cf import while_loops as W
from tests.catalogue_cf import writes as WR

POINTS = 3  # random points per (function, wrt) test


# --- argument specs ----------------------------------------------------------------------


@dataclass(frozen=True)
class Arr:
    """A float64 array: standard normal times scale, or uniform in [lo, hi)."""

    shape: tuple[int, ...]
    lo: float | None = None
    hi: float | None = None
    scale: float = 1.0

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        if self.lo is None:
            return np.asarray(self.scale * rng.standard_normal(self.shape))
        return np.asarray(rng.uniform(self.lo, self.hi, self.shape))

    @property
    def label(self) -> str:
        return "x".join(map(str, self.shape)) if self.shape else "0d"


@dataclass(frozen=True)
class Flt:
    """A Python float: standard normal, or uniform in [lo, hi)."""

    lo: float | None = None
    hi: float | None = None

    def draw(self, rng: np.random.Generator) -> float:
        return float(rng.standard_normal() if self.lo is None else rng.uniform(self.lo, self.hi))

    @property
    def label(self) -> str:
        return "float"


@dataclass(frozen=True)
class Const:
    """A value passed as it is (a copy of it): trip counts, flags, index arrays."""

    value: Any
    name: str = "const"

    def draw(self, rng: np.random.Generator) -> Any:
        return copy.deepcopy(self.value)

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class Gen:
    """A float64 array made by ``make(rng)``: matrices with structure (symmetric, ...)."""

    make: Callable[[np.random.Generator], np.ndarray]
    name: str

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(self.make(rng), dtype=float)

    @property
    def label(self) -> str:
        return self.name


def A(*shape: int) -> Arr:
    return Arr(tuple(shape))


def U(lo: float, hi: float, *shape: int) -> Arr:
    return Arr(tuple(shape), lo, hi)


def P(*shape: int) -> Arr:
    """Positive: uniform in [0.5, 2)."""
    return Arr(tuple(shape), 0.5, 2.0)


def Wt(*shape: int) -> Arr:
    """Weights small enough that a recurrence stays tame: normal times 0.5."""
    return Arr(tuple(shape), scale=0.5)


def N(n: int) -> Const:
    """A trip count."""
    return Const(n, f"n={n}")


def Fl(lo: float, hi: float) -> Flt:
    return Flt(lo, hi)


F = Flt()
FP = Flt(0.5, 2.0)


def _symmetric(n: int) -> Gen:
    def make(rng: np.random.Generator) -> np.ndarray:
        m = rng.standard_normal((n, n))
        return 0.5 * (m + m.T)
    return Gen(make, f"sym{n}")


def _diagonally_dominant(n: int) -> Gen:
    def make(rng: np.random.Generator) -> np.ndarray:
        return 0.3 * rng.standard_normal((n, n)) + 3.0 * np.eye(n)
    return Gen(make, f"diagdom{n}")


def _near_identity(n: int) -> Gen:
    def make(rng: np.random.Generator) -> np.ndarray:
        m = 0.2 * rng.standard_normal((n, n))
        return np.eye(n) + m @ m.T
    return Gen(make, f"spd{n}")


SYM4 = _symmetric(4)
DD3 = _diagonally_dominant(3)
SPD3 = _near_identity(3)


# --- guards: keep the points away from kinks --------------------------------------------

GAP = 0.05


def apart(a: Any, b: Any, gap: float = GAP) -> bool:
    """Every broadcast pair of a and b differs by more than gap."""
    return bool(np.all(np.abs(np.subtract(a, b)) > gap))


def apart_all(a: Any, values: Sequence[float], gap: float = GAP) -> bool:
    return all(apart(a, v, gap) for v in values)


def distinct(x: Any, gap: float = 1e-3) -> bool:
    """No two entries of x are within gap: no ties for max/min."""
    flat = np.sort(np.ravel(x))
    return bool(np.all(np.diff(flat) > gap))


def off_integers(x: Any, gap: float = 0.05) -> bool:
    frac = np.mod(x, 1.0)
    return bool(np.all((frac > gap) & (frac < 1.0 - gap)))


SMOOTH_STEP = 1e-3


def _is_float_arg(value: Any, spec: Any) -> bool:
    if isinstance(spec, Const):
        return False
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def smooth(fn: Callable, args: Sequence[Any], rng: np.random.Generator,
           specs: Sequence[Any]) -> bool:
    """fn is one smooth piece within SMOOTH_STEP of args, along two random directions.

    For a smooth f, the second difference d(h) = f(x + hv) - 2 f(x) + f(x - hv) is h^2 f'' +
    O(h^4), so d(h) = 4 d(h/2) up to O(h^4). A kink (a branch boundary) or a jump (a trip count
    that changes) within h of x breaks that by O(h) or O(1).
    """
    floats = [i for i, (a, s) in enumerate(zip(args, specs, strict=True)) if _is_float_arg(a, s)]
    if not floats:
        return True
    center = np.asarray(fn(*copy.deepcopy(list(args))), dtype=float)
    weight = rng.standard_normal(center.shape)
    scale = 1.0 + float(np.max(np.abs(center), initial=0.0))

    def at(directions: dict[int, Any], h: float) -> float:
        moved = list(copy.deepcopy(list(args)))
        for i, v in directions.items():
            moved[i] = args[i] + h * v
        return float(np.sum(weight * np.asarray(fn(*moved), dtype=float)))

    f0 = float(np.sum(weight * center))
    for _ in range(2):
        directions = {}
        for i in floats:
            d = rng.standard_normal(np.shape(args[i]))
            directions[i] = float(d) if isinstance(args[i], float) else d
        h = SMOOTH_STEP
        d_full = at(directions, h) - 2.0 * f0 + at(directions, -h)
        d_half = at(directions, h / 2) - 2.0 * f0 + at(directions, -h / 2)
        if not abs(d_full - 4.0 * d_half) <= 1e-9 * scale + 1e-6 * abs(d_full):
            return False
    return True


# --- the table ---------------------------------------------------------------------------

Wrt = tuple[int, ...]


@dataclass
class Case:
    fn: Callable
    args: Sequence[Any]  # specs, one per argument
    wrts: Sequence[Wrt] | None = None  # None: each float argument alone, then all of them
    ok: Callable[..., bool] | None = None  # redraw until ok(*args): away from kinks
    # arguments the output does not depend on (a function of the point: on some branches)
    zero: tuple[int, ...] | Callable[..., tuple[int, ...]] = ()
    scalar: bool = True  # False: an array output, checked through vjp only
    xfail: str | dict[Wrt, str] | None = None  # why it fails (for every wrt, or per wrt)
    label: str | None = None
    marks: tuple = ()  # more pytest marks (warnings the function itself raises)
    name: str = field(init=False, default="")
    _points: dict[int, list[Any]] = field(init=False, default_factory=dict, repr=False)

    def draw(self, point: int) -> list[Any]:
        if point not in self._points:
            self._points[point] = self._draw(point)
        return copy.deepcopy(self._points[point])

    def _draw(self, point: int) -> list[Any]:
        rng = np.random.default_rng([zlib.crc32(self.name.encode()), point])
        for _ in range(300):
            args = [spec.draw(rng) for spec in self.args]
            if self.ok is not None and not self.ok(*copy.deepcopy(args)):
                continue
            if smooth(self.fn, args, rng, self.args):
                return args
        raise AssertionError(f"{self.name}: no point satisfies the guard")

    def float_positions(self) -> list[int]:
        return [i for i, spec in enumerate(self.args) if isinstance(spec, (Arr, Flt, Gen))]

    def wrt_sets(self) -> list[Wrt]:
        if self.wrts is not None:
            return [tuple(w) for w in self.wrts]
        floats = self.float_positions()
        sets = [(i,) for i in floats]
        if len(floats) > 1:
            sets.append(tuple(floats))
        return sets

    def zeros_at(self, args: Sequence[Any]) -> tuple[int, ...]:
        return self.zero(*copy.deepcopy(list(args))) if callable(self.zero) else self.zero

    def xfail_reason(self, wrt: Wrt) -> str | None:
        if isinstance(self.xfail, dict):
            return self.xfail.get(wrt)
        return self.xfail


# Constructs that are not differentiated yet (strict: the mark must go when they land).
CONTAINERS = "not supported yet: lists/tuples/dicts of differentiated values"

# Known compiler bugs (each one in the bug list with a minimal reproduction).


def _rnn_trips(n: int) -> list[Any]:
    return [Wt(3, 3), A(n, 3), A(3)]


TABLE: list[Case] = [
    # === branches on array reductions ====================================================
    Case(B.if_on_sum, [A(4)], ok=lambda x: apart(np.sum(x), 0.0, 0.1)),
    Case(B.if_on_mean_no_else, [A(3, 4), A(4)], ok=lambda x, w: apart(np.mean(x @ w), 0.0)),
    Case(B.if_on_max, [A(5)], ok=lambda x: apart(np.max(x), 1.0) and distinct(x)),
    Case(B.if_on_norm, [A(3)], ok=lambda x: apart(np.linalg.norm(x), 2.0)),
    Case(B.if_on_any, [A(4)], ok=lambda x: apart(x, 1.5)),
    Case(B.if_on_all, [U(0.0, 2.0, 3), U(-1.0, 1.0, 3)], ok=lambda x, y: apart(x, y)),
    Case(B.if_on_all, [U(-1.0, 1.0, 3), U(0.0, 2.0, 3)], ok=lambda x, y: apart(x, y),
         label="mostly-false"),
    Case(B.if_compares_two_inputs, [A(3), A(3)],
         ok=lambda x, y: apart(np.sum(x * x), np.sum(y * y), 0.1)),
    Case(B.if_different_ops, [A(3, 3), A(3, 3)], ok=lambda a, b: apart(np.trace(a), 0.0)),
    Case(B.if_selects_matrix, [A(3, 3), A(3, 3), A(3)], ok=lambda a, b, x: apart(np.sum(x), 0),
         zero=lambda a, b, x: (1,) if np.sum(x) > 0 else (0,)),
    # === branches on scalars =============================================================
    Case(B.piecewise_scalar, [Fl(-2.0, 2.0)], ok=lambda t: apart_all(t, (-1.0, 1.0))),
    Case(B.huber_scalar, [Fl(-2.0, 2.0), Fl(0.5, 1.5)],
         ok=lambda r, d: apart(abs(r), d) and apart(r, 0.0),
         zero=lambda r, d: (1,) if abs(r) <= d else ()),
    Case(B.clip_scalar, [Fl(-2.0, 2.0), Fl(-1.0, -0.2), Fl(0.2, 1.0)],
         ok=lambda t, lo, hi: apart(t, lo) and apart(t, hi),
         zero=lambda t, lo, hi: (0, 2) if t < lo else (0, 1) if t > hi else (1, 2)),
    Case(B.branch_on_scalar_argument, [A(4), Fl(-0.5, 1.5)], ok=lambda x, a: apart(a, 0.5)),
    Case(B.branch_on_0d_array, [A(4), A()], ok=lambda x, s: apart(s, 0.0)),
    Case(B.branch_on_math_value, [Fl(-3.0, 3.0)], ok=lambda t: apart(math.sin(t), 0.0)),
    Case(B.branch_on_integer_argument, [A(4), N(2)]),
    Case(B.branch_on_integer_argument, [A(4), N(3)]),
    Case(B.branch_on_flag, [A(4), Const(True, "True")]),
    Case(B.branch_on_flag, [A(4), Const(False, "False")]),
    Case(B.branch_on_none, [A(4), Const(None, "None")]),
    Case(B.branch_on_none, [A(4), A(4)]),
    Case(B.branch_on_shape, [A(5)]),
    Case(B.branch_on_shape, [A(2)]),
    Case(B.branch_on_len, [A(5)]),
    Case(B.branch_on_len, [A(3)]),
    Case(B.condition_as_bool, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.condition_method_any, [A(4)], ok=lambda x: apart(x, 1.0)),
    Case(B.ifexp_array_or_float, [A(3), Fl(-1.0, 1.0)], ok=lambda x, t: apart(t, 0.0),
         zero=lambda x, t: () if t > 0 else (0,)),
    Case(B.nan_guard, [P(3)]),
    Case(B.nan_guard, [U(-1.0, 1.0, 3)], ok=lambda x: np.any(x < 0), zero=(0,), label="nan",
         marks=(pytest.mark.filterwarnings("ignore:invalid value encountered in log"),)),
    # === elif chains, nested ifs, variables across branches ================================
    Case(B.elif_chain, [A(4)], ok=lambda x: apart_all(np.mean(x), (-0.5, 0.0, 0.5))),
    Case(B.elif_chain, [U(0.0, 1.5, 4)], ok=lambda x: apart_all(np.mean(x), (-0.5, 0.0, 0.5)),
         label="upper"),
    Case(B.elif_without_else, [A(3), Fl(-2.0, 2.0)],
         ok=lambda x, t: apart_all(t, (-1.0, 0.0, 1.0))),
    Case(B.nested_ifs, [A(3), A(3)],
         ok=lambda x, y: apart(np.sum(x), 0) and apart(np.sum(y), 0) and apart(np.max(y), 1.0)
         and distinct(y)),
    Case(B.nested_if_three_deep, [Fl(-1.0, 3.0)], ok=lambda t: apart_all(t, (0.0, 1.0, 2.0))),
    Case(B.if_assigns_two_variables, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.if_assigns_in_one_branch_only, [A(4)],
         ok=lambda x: apart(np.sum(np.tanh(x)), 0.0)),
    Case(B.if_uses_value_from_before, [A(4)], ok=lambda x: apart(np.sum(np.tanh(x)), 0.0)),
    Case(B.if_condition_reused, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.if_with_not, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.if_then_print_and_assert, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.if_with_pass, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.branch_reassigns_parameter, [A(3), A(3)], ok=lambda x, w: apart(np.sum(w), 0.0)),
    Case(B.branch_scalar_or_array, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.branch_float_or_0d, [A(3), F], ok=lambda x, t: apart(t, 0.0),
         zero=lambda x, t: () if t > 0 else (1,)),
    Case(B.branch_constant_side, [U(-1.5, -0.1, 3)]),
    Case(B.branch_constant_side, [U(0.1, 1.5, 3)], zero=(0,), label="constant"),
    Case(B.branch_on_derived_flag, [U(-1.5, 1.5, 4)],
         ok=lambda x: apart(np.max(np.abs(x)), 1.0) and apart(np.min(np.abs(x)), 0.3)
         and apart(x, 0.0) and distinct(np.abs(x))),
    Case(B.branch_in_callee, [A(3, 4), A(4)], ok=lambda x, w: apart(np.sum(x @ w), 0.0)),
    Case(B.branch_after_callee, [U(-3.0, 0.5, 4)],
         ok=lambda x: apart(np.sum(np.log(1.0 + np.exp(x))), 1.0)),
    # === early and multiple returns ========================================================
    Case(B.early_return, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.early_return_nested, [A(3), A(3)],
         ok=lambda x, y: apart(np.sum(x), 0) and apart(np.sum(y), 0) and apart(np.max(y), 1.0)
         and distinct(y)),
    Case(B.returns_different_expressions, [A(4)],
         ok=lambda x: apart_all(np.mean(x), (-0.5, 0.0, 0.5)) and distinct(x)),
    Case(B.return_in_else_only, [A(4)], ok=lambda x: apart(np.sum(np.tanh(x)), 0.0)),
    Case(B.return_parameter_unchanged, [A(3), A(3)], ok=lambda x, y: apart(np.sum(x), 0.0),
         scalar=False),
    Case(B.guard_returns_constant, [A(4)]),
    Case(B.guard_returns_constant, [U(2.6, 4.0, 4)], zero=(0,), label="guarded"),
    Case(B.returns_from_every_branch, [Fl(-2.0, 3.0)], ok=lambda t: apart_all(t, (0.0, 1.0))),
    Case(B.return_array_per_branch, [A(4)], ok=lambda x: apart(np.sum(x), 0.0), scalar=False),
    Case(B.early_return_then_code, [A(3, 4), A(4)],
         ok=lambda x, w: apart(np.sum(np.tanh(x @ w)), -1.0)
         and apart(np.sum(np.tanh(x @ w) ** 2), 2.0)),
    # === conditional expressions ===========================================================
    Case(B.ifexp_simple, [A(4)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(B.ifexp_scalar, [Fl(-2.0, 2.0)], ok=lambda t: apart(t, 0.0)),
    Case(B.ifexp_nested, [Fl(-1.0, 2.0)], ok=lambda t: apart_all(t, (0.0, 1.0))),
    Case(B.ifexp_in_call, [A(4), Fl(-2.0, 2.0)], ok=lambda x, a: apart(a, 0.0)),
    Case(B.ifexp_in_return, [A(4)], ok=lambda x: apart(np.max(x), 0.5) and distinct(x)),
    Case(B.ifexp_both_inputs, [A(3), A(3)], ok=lambda x, y: apart(np.sum(x), np.sum(y)),
         zero=lambda x, y: (1,) if np.sum(x) > np.sum(y) else ()),
    # === and / or / not, chained comparisons ===============================================
    Case(B.and_condition, [A(4)],
         ok=lambda x: apart(np.sum(x), 0.0) and apart(np.max(x), 1.5) and distinct(x)),
    Case(B.or_condition, [A(3), Fl(-1.0, 2.0)],
         ok=lambda x, t: apart(t, 1.0) and apart(np.sum(x), 0.0)),
    Case(B.and_or_mixed, [A(3), Fl(-2.0, 2.0)],
         ok=lambda x, t: apart_all(t, (0.0, -1.0)) and apart(np.sum(x), 0.0)),
    Case(B.not_and, [U(-1.5, 1.5, 3)],
         ok=lambda x: apart(np.min(x), -1.0) and apart(np.max(x), 1.0) and distinct(x)),
    Case(B.and_value, [A(3), Fl(0.5, 1.5)], zero=(1,)),
    Case(B.or_value, [A(3), Fl(0.5, 1.5)]),
    Case(B.short_circuit_skips_work, [A(3), Const(0.0, "t=0")]),
    Case(B.short_circuit_skips_work, [A(3), Fl(0.5, 2.0)],
         ok=lambda x, t: apart(np.sum(x) / t, 1.0),
         zero=lambda x, t: () if np.sum(x) / t > 1.0 else (1,)),
    Case(B.chained_comparison, [A(4)],
         ok=lambda x: apart_all(np.mean(x), (-0.5, 0.5)) and apart(x, 0.0)),
    Case(B.chained_three, [Fl(-1.0, 3.0), Fl(-1.0, 1.0), Fl(0.5, 3.5)],
         ok=lambda t, lo, hi: apart(t, lo) and apart(t, hi) and apart(hi, 3.0)),
    Case(B.chained_comparison_value, [A(3)], ok=lambda x: apart_all(np.sum(x), (0.0, 2.0))),
    # === for over range(n), n at run time ==================================================
    Case(L.repeat_tanh, [A(4), N(0)]),
    Case(L.repeat_tanh, [A(4), N(1)]),
    Case(L.repeat_tanh, [A(4), N(5)]),
    Case(L.sum_of_terms, [A(3), N(0)], zero=(0,)),
    Case(L.sum_of_terms, [A(3), N(1)]),
    Case(L.sum_of_terms, [A(3), N(4)]),
    Case(L.power_by_loop, [F, N(0)], zero=(0,)),
    Case(L.power_by_loop, [F, N(3)]),
    Case(L.taylor_exp, [A(3), N(1)], zero=(0,)),
    Case(L.taylor_exp, [A(3), N(6)]),
    Case(L.loop_uses_counter_as_float, [A(3), N(0)], zero=(0,)),
    Case(L.loop_uses_counter_as_float, [A(3), N(3)]),
    Case(L.loop_over_range_of_len, [A(4)]),
    Case(L.loop_over_shape, [A(3, 2)]),
    Case(L.loop_neighbours, [A(5)]),
    Case(L.loop_slices, [A(6)]),
    Case(L.loop_counter_used_after, [A(3), N(0)]),
    Case(L.loop_counter_used_after, [A(3), N(4)]),
    # === range(a, b, step) ==================================================================
    Case(L.range_start_stop, [A(3), N(1), Const(4, "b=4")]),
    Case(L.range_start_stop, [A(3), N(3), Const(3, "b=3")], zero=(0,)),
    Case(L.range_with_step, [A(3), N(0)], zero=(0,)),
    Case(L.range_with_step, [A(3), N(1)], zero=(0,)),
    Case(L.range_with_step, [A(3), N(6)]),
    Case(L.range_negative_step, [A(3), N(0)]),
    Case(L.range_negative_step, [A(3), N(3)]),
    Case(L.range_odd_indices, [A(5)]),
    # === nested loops =======================================================================
    Case(L.nested_loops, [A(3), N(2), N(3)], label="2x3"),
    Case(L.nested_loops, [A(3), N(0), N(3)], zero=(0,), label="0x3"),
    Case(L.nested_loops, [A(3), N(2), N(0)], zero=(0,), label="2x0"),
    Case(L.triangular_loops, [A(4)]),
    Case(L.matmul_by_loops, [A(2, 3), A(3, 2)]),
    Case(L.nested_carried, [A(3), N(0)]),
    Case(L.nested_carried, [A(3), N(3)]),
    Case(L.inner_loop_length_from_outer, [A(3), N(1)]),
    Case(L.inner_loop_length_from_outer, [A(3), N(4)]),
    # === loops over arrays, enumerate, zip ==================================================
    Case(L.loop_over_rows, [A(4, 3), A(3)]),
    Case(L.loop_over_rows, [A(0, 3), A(3)], zero=(0, 1)),
    Case(L.loop_over_matrices, [A(3, 2, 2), A(2)]),
    Case(L.loop_over_items, [A(4)]),
    Case(L.loop_over_columns, [A(3, 4)]),
    Case(L.loop_over_constant_tuple, [A(3)]),
    Case(L.loop_over_integer_array, [A(5), Const(np.array([0, 2, 2, 4]), "idx")]),
    Case(L.loop_over_reversed, [A(4)]),
    Case(L.enumerate_rows, [A(3, 2)]),
    Case(L.enumerate_items, [A(4), Fl(0.5, 1.5)]),
    Case(L.enumerate_with_start, [A(3, 2)]),
    Case(L.zip_pairs, [A(3, 2), A(3, 2)]),
    Case(L.zip_three, [A(3), A(3), A(3)]),
    Case(L.zip_unequal_lengths, [A(4), A(3)]),
    Case(L.zip_rows_with_weights, [A(3, 2), A(3)]),
    # === loop-carried values ================================================================
    Case(L.swap_product, [Fl(0.5, 1.5), Fl(0.5, 1.5), N(0)]),
    Case(L.swap_product, [Fl(0.5, 1.5), Fl(0.5, 1.5), N(1)]),
    Case(L.swap_product, [Fl(0.5, 1.5), Fl(0.5, 1.5), N(4)]),
    Case(L.swap_arrays, [A(3), A(3), N(0)]),
    Case(L.swap_arrays, [A(3), A(3), N(3)]),
    Case(L.fibonacci_like, [F, F, N(0)], zero=(0,)),
    Case(L.fibonacci_like, [F, F, N(5)]),
    Case(L.three_carried, [A(3), N(0)]),
    Case(L.three_carried, [A(3), N(3)]),
    Case(L.accumulator_float_to_array, [A(3, 2)]),
    Case(L.accumulator_augmented_scalar, [A(3), N(0)], zero=(0,)),
    Case(L.accumulator_augmented_scalar, [A(3), N(4)]),
    Case(L.accumulator_augmented_array, [A(3, 2)]),
    Case(L.accumulator_augmented_float_start, [A(3, 2)]),
    Case(L.accumulator_0d, [A(3), N(0)], zero=(0,)),
    Case(L.accumulator_0d, [A(3), N(3)]),
    Case(L.running_product, [A(4)]),
    Case(L.carried_but_reassigned_in_branch, [A(3), N(0)]),
    Case(L.carried_but_reassigned_in_branch, [A(3), N(3)]),
    Case(L.loop_keeps_previous, [A(3), N(0)]),
    Case(L.loop_keeps_previous, [A(3), N(1)]),
    Case(L.loop_keeps_previous, [A(3), N(4)]),
    Case(L.parameter_reassigned_in_loop, [A(2, 3), Wt(3, 3), N(0)], zero=(1,)),
    Case(L.parameter_reassigned_in_loop, [A(2, 3), Wt(3, 3), N(3)]),
    Case(L.loop_temporary_not_carried, [A(3), N(3)]),
    Case(L.python_floats_only, [F, N(0)]),
    Case(L.python_floats_only, [F, N(4)]),
    Case(L.floats_and_arrays_mixed, [A(3), F, N(0)]),
    Case(L.floats_and_arrays_mixed, [A(3), F, N(3)]),
    Case(L.trips_as_numpy_int, [A(3), Const(np.int64(3), "n=int64(3)")]),
    Case(L.builtin_max_in_loop, [A(4)], ok=lambda x: distinct(x * x)),
    Case(L.callee_with_early_return_in_loop, [A(3), N(3)], ok=lambda x, n: apart(np.sum(x), 0.0)),
    Case(L.loop_target_used_after, [A(3, 2)]),
    Case(L.loop_target_used_after, [A(1, 2)]),
    Case(L.float_or_array_per_iteration, [A(3), N(0)], zero=(0,)),
    Case(L.float_or_array_per_iteration, [A(3), N(3)]),
    # === branches inside loops, loops inside branches =======================================
    Case(L.branch_in_loop_on_data, [A(5)], ok=lambda x: apart(x, 0.0)),
    Case(L.branch_in_loop_on_counter, [A(3), N(4)]),
    Case(L.branch_in_loop_on_state, [A(3), N(4)]),
    Case(L.elif_in_loop, [A(5)], ok=lambda x: apart_all(x, (-0.5, 0.5))),
    Case(L.ifexp_in_loop, [A(3), N(4)]),
    Case(L.loop_in_branch, [A(3), N(3)], ok=lambda x, n: apart(np.sum(x), 0.0)),
    Case(L.loops_in_both_branches, [A(3), N(3)],
         ok=lambda x, n: apart(np.max(x), 1.0) and distinct(x)),
    Case(L.loop_calls_callee, [A(2, 3), Wt(3, 3), N(3)]),
    Case(L.callee_with_loop, [A(3), N(0)]),
    Case(L.callee_with_loop, [A(3), N(3)]),
    Case(L.callee_with_branch_in_loop, [A(4, 3), A(3)], ok=lambda xs, w: apart(xs @ w, 0.0)),
    Case(L.and_in_loop, [A(5), Fl(-1.0, -0.2), Fl(0.2, 1.0)],
         ok=lambda x, lo, hi: apart(x, lo) and apart(x, hi), zero=(1, 2)),
    Case(L.chained_in_loop, [A(5), Fl(-1.0, -0.2), Fl(0.2, 1.0)],
         ok=lambda x, lo, hi: apart(x, lo) and apart(x, hi)),
    Case(L.last_from_loop, [A(3), N(1)]),
    Case(L.last_from_loop, [A(3), N(3)]),
    Case(L.first_in_branch_in_loop, [A(3), N(3)]),
    Case(L.loop_with_only_pass, [A(3), N(2)]),
    Case(L.loop_body_without_effect_on_output, [A(3), N(3)]),
    Case(L.inplace_on_fresh_each_iteration, [A(3), N(3)]),
    Case(L.for_else, [Fl(-2.0, 2.0)]),
    Case(L.for_else_with_break, [Fl(-1.0, 3.0)],
         ok=lambda x: apart_all(x, (2.0, 1.0, 0.5, 0.25))),
    # === while loops ========================================================================
    Case(W.newton_sqrt, [Fl(0.5, 4.0)]),
    Case(W.newton_sqrt_array, [P(4)]),
    Case(W.newton_cube_root, [Fl(0.5, 4.0)]),
    Case(W.kepler, [Fl(0.1, 3.0), Fl(0.05, 0.6)]),
    Case(W.halve_until_small, [A(3)]),
    Case(W.fixed_point_cos, [Fl(0.2, 1.0)]),
    Case(W.fixed_point_array, [Fl(-0.6, 0.6), A(3)]),
    Case(W.while_else, [Fl(0.3, 6.0)], ok=lambda x: apart_all(x, (1.0, 2.0, 4.0))),
    Case(W.while_counter, [A(3), N(0)]),
    Case(W.while_counter, [A(3), N(3)]),
    Case(W.while_counter_augmented, [A(3), N(0)], zero=(0,)),
    Case(W.while_counter_augmented, [A(3), N(3)]),
    Case(W.while_zero_trips, [A(3)]),
    Case(W.while_growth, [U(0.2, 1.0, 3), Fl(4.0, 9.0)], zero=(1,)),
    Case(W.while_true_break, [A(3)]),
    Case(W.while_nested_in_for, [A(3, 2)]),
    Case(W.gradient_descent_inner, [A(3), A(3), Fl(0.05, 0.2)]),
    Case(W.bisection_bracket, [Fl(-5.0, 5.0)]),
    Case(W.ifexp_in_while_condition, [U(0.0, 2.0, 3)]),
    Case(W.callee_with_while, [Arr((3,), scale=2.0)]),
    Case(W.callee_with_while_in_loop, [Arr((3, 2), scale=2.0)]),
    Case(W.while_condition_on_one_input, [A(3), A(3)], ok=lambda x, y: apart(y, 0.0)),
    # === break and continue =================================================================
    Case(W.break_on_threshold, [A(3), N(5)]),
    Case(W.break_first_positive, [A(5)], ok=lambda x: np.any(x > 0.5) and apart(x, 0.5)),
    Case(W.break_first_positive, [U(-1.0, 0.4, 5)], zero=(0,), label="none"),
    Case(W.continue_negatives, [A(5)], ok=lambda x: apart(x, 0.0)),
    Case(W.continue_and_break, [A(6), Fl(1.0, 3.0)], ok=lambda x, lim: apart(x, -0.5),
         zero=(1,)),
    Case(W.break_in_inner_loop, [A(3), N(3)]),
    Case(W.continue_in_while, [A(3), N(0)], zero=(0,)),
    Case(W.continue_in_while, [A(3), N(5)]),
    Case(W.break_in_while_true_with_counter, [A(3)]),
    Case(W.break_in_nested_if, [A(3), N(5)]),
    Case(W.work_after_continue_in_branch, [A(5)]),
    # === recurrent networks =================================================================
    Case(SC.rnn, _rnn_trips(0), zero=(0, 1), label="T=0"),
    Case(SC.rnn, _rnn_trips(1), label="T=1"),
    Case(SC.rnn, _rnn_trips(5), label="T=5"),
    Case(SC.rnn_with_input_weights, [Wt(3, 3), Wt(3, 2), A(3), A(4, 2), A(3)],
         wrts=[(0,), (1,), (2,), (3,), (0, 1, 2), (0, 1, 2, 3, 4)]),
    Case(SC.rnn_readout_loss, [Wt(3, 3), A(3), A(5, 3), A(5)]),
    Case(SC.gru_like, [Wt(3, 3), Wt(3, 3), A(4, 3)]),
    Case(SC.rnn_batched, [Wt(3, 3), A(4, 2, 3), A(2, 3)]),
    Case(SC.bidirectional_sum, [Wt(3, 3), A(4, 3)]),
    # === time integration ===================================================================
    Case(SC.euler_oscillator, [F, F, FP, N(0)], zero=(2,)),
    Case(SC.euler_oscillator, [F, F, FP, N(20)]),
    Case(SC.euler_logistic, [Fl(0.5, 2.0), Fl(1.0, 3.0), Fl(0.1, 0.5), N(30)]),
    Case(SC.lotka_volterra, [U(0.5, 1.5, 4), U(0.5, 1.5, 2), N(50)]),
    Case(SC.midpoint_rk2, [A(3), FP, N(10)]),
    Case(SC.leapfrog, [A(3), A(3), SPD3, N(10)]),
    Case(SC.bouncing_ball, [Fl(0.5, 2.0), Fl(0.5, 0.9)]),
    Case(SC.projectile_until_ground, [Fl(5.0, 15.0), Fl(0.3, 1.2)]),
    Case(SC.heat_explicit, [A(8), Fl(0.1, 0.3), N(10)]),
    Case(SC.heat_periodic_slices, [A(8), Fl(0.1, 0.3), N(10)]),
    # === iterations =========================================================================
    Case(SC.power_iteration, [SYM4, N(0)]),
    Case(SC.power_iteration, [SYM4, N(1)]),
    Case(SC.power_iteration, [SYM4, N(20)]),
    Case(SC.power_iteration_norm, [SYM4, N(5)]),
    Case(SC.power_iteration_until, [SYM4], ok=lambda a: _eigen_gap(a) < 0.7),
    Case(SC.jacobi_solve, [DD3, A(3), N(10)]),
    Case(SC.jacobi_solve_masked, [DD3, A(3), N(10)]),
    Case(SC.markov_chain, [U(0.0, 1.0, 3), U(0.0, 0.6, 3, 3), N(5)]),
    Case(SC.horner, [A(4), A(3)]),
    Case(SC.chebyshev, [U(-1.0, 1.0, 3), N(0)]),
    Case(SC.chebyshev, [U(-1.0, 1.0, 3), N(5)]),
    Case(SC.continued_fraction, [Fl(0.5, 2.0), N(0)]),
    Case(SC.continued_fraction, [Fl(0.5, 2.0), N(5)]),
    Case(SC.trapezoid_loop, [Fl(-1.0, 0.0), Fl(0.5, 1.5), N(8)]),
    Case(SC.ema, [A(6), Fl(0.1, 0.9)]),
    Case(SC.kalman_scalar, [A(6), Fl(0.01, 0.5), Fl(0.1, 1.0)]),
    Case(SC.online_logsumexp, [A(6)], ok=distinct),
    Case(SC.compound_interest, [Fl(50.0, 150.0), Fl(0.01, 0.1), N(10)]),
    Case(SC.binomial_option, [Fl(0.8, 1.2), Fl(0.1, 0.4), Fl(0.0, 0.05), N(8)]),
    Case(SC.gradient_descent_unrolled, [A(3), SPD3, Fl(0.05, 0.2), N(10)]),
    Case(SC.softmax_attention_loop, [A(3), A(4, 3), A(4, 2)]),
    Case(SC.sinkhorn, [U(0.0, 1.0, 3, 4), N(5)]),
    # === subscript writes ===================================================================
    Case(WR.write_elements_in_loop, [A(), N(0)], zero=(0,)),
    Case(WR.write_elements_in_loop, [A(), N(3)]),
    Case(WR.write_elements_in_loop, [F, N(3)]),
    Case(WR.write_slice, [A(3)]),
    Case(PD.builtin_abs_of_array, [A(4)], ok=lambda x: apart(x, 0.0)),
    Case(WR.write_overwrites_active_value, [A(3)]),
    Case(WR.add_at_index, [A(3), F]),
    Case(WR.add_at_fancy_index, [A(3), A(3), Const(np.array([0, 2, 2]), "idx")]),
    Case(WR.write_rows_matrix, [A(3, 2), A(2, 4)]),
    Case(WR.write_with_mask, [A(5)], ok=lambda x: apart(x, 0.0) and np.any(x > 0)),
    Case(WR.cumulative_by_writes, [A(5)]),
    Case(WR.euler_trajectory_array, [F, FP, N(0)], zero=(1,)),
    Case(WR.euler_trajectory_array, [F, FP, N(5)]),
    Case(WR.write_in_branch, [A(3)], ok=lambda x: apart(np.sum(x), 0.0)),
    Case(WR.write_then_read_in_loop, [A(3), N(0)]),
    Case(WR.write_then_read_in_loop, [A(3), N(5)]),
    Case(WR.add_at_in_loop, [A(4), Const(np.array([0, 2, 2, 1]), "idx")]),
    Case(WR.accumulate_rows_in_place, [A(3, 2), A(2, 4)]),
    Case(WR.write_column, [A(3)]),
    Case(WR.heat_dirichlet, [A(8), Fl(0.1, 0.3), N(0)], zero=(1,)),
    Case(WR.heat_dirichlet, [A(8), Fl(0.1, 0.3), N(10)]),
    Case(WR.prefix_sum_by_writes, [A(5)]),
    Case(WR.write_in_branch_inactive, [A(3), Fl(-1.0, 1.0)], ok=lambda x, t: apart(t, 0.0),
         zero=lambda x, t: () if t > 0 else (0,)),
    Case(WR.write_ifexp_value, [A(3)], ok=lambda x: apart(x, 0.0)),
    Case(WR.scatter_with_break, [A(5), Fl(0.5, 3.0)], zero=(1,)),
    Case(WR.write_2d_in_nested_loops, [A(3)]),
    # === not supported yet ==================================================================
    Case(PD.append_then_stack, [A(3), N(3)]),
    Case(PD.append_then_array, [A(4)]),
    Case(PD.append_then_concatenate, [A(3, 2)]),
    Case(PD.rnn_collect_states, [Wt(3, 3), A(4, 3)]),
    Case(PD.tuple_of_values, [A(3)]),
    Case(PD.concatenate_tuple, [A(3), A(2)]),
    Case(PD.dict_built_inside, [A(3)]),
    Case(PD.lstm_like, [Wt(8, 5), A(4, 3)]),
    Case(PD.gram_schmidt, [A(3, 3)]),
    Case(PD.list_comprehension_stack, [A(3), N(3)]),
    Case(PD.generator_in_np_sum, [A(4)]),
    Case(PD.builtin_sum_of_generator, [A(3), N(3)]),
    Case(PD.comprehension_with_condition, [A(5)], ok=lambda x: apart(x, 0.0) and np.any(x > 0)),
    Case(PD.loop_over_list_of_inputs, [A(3), A(3)]),
    Case(PD.loop_over_generator, [A(3)]),
    Case(PD.nested_def, [A(2, 3), Wt(3, 3)]),
    Case(PD.closure_over_scale, [A(3), F]),
    Case(PD.lambda_activation, [A(3)]),
    Case(PD.lambda_in_loop, [A(3), N(3)]),
    Case(PD.recursive_power, [A(3), N(3)]),
    Case(PD.recursive_tree, [A(3), N(2)]),
    Case(PD.calls_object_method, [A(2, 3), A(3, 3)]),
    Case(PD.calls_object, [A(2, 3), A(3, 3), A(3)]),
    Case(PD.method_on_argument, [Const(PD.Linear(np.eye(3), 0.0), "Linear"), A(2, 3)],
         wrts=[(1,)]),
    Case(PD.builtin_sum_of_array, [A(4)]),
    Case(PD.builtin_max_of_array, [A(4)], ok=distinct),
    Case(PD.builtin_max_of_two, [F, F], ok=lambda a, b: apart(a, b)),
]


# Known compiler bugs, by catalogue entry (a function name covers all its entries).
KNOWN_BUGS: dict[str, str | dict[Wrt, str]] = {
}


def _eigen_gap(a: np.ndarray) -> float:
    """|second eigenvalue| / |first|: power iteration converges at this ratio."""
    magnitudes = np.sort(np.abs(np.linalg.eigvalsh(a)))[::-1]
    return float(magnitudes[1] / magnitudes[0])


def _name_cases() -> None:
    counts: dict[str, int] = {}
    for case in TABLE:
        counts[case.fn.__name__] = counts.get(case.fn.__name__, 0) + 1
    for case in TABLE:
        name = case.fn.__name__
        if counts[name] > 1:
            label = case.label or ",".join(spec.label for spec in case.args)
            name = f"{name}({label})"
        case.name = name
    names = [case.name for case in TABLE]
    for case in TABLE:
        bug = KNOWN_BUGS.get(case.name, KNOWN_BUGS.get(case.fn.__name__))
        if bug is not None:
            assert case.xfail is None, f"{case.name}: two reasons to fail"
            case.xfail = bug
    unknown = set(KNOWN_BUGS) - set(names) - {case.fn.__name__ for case in TABLE}
    assert not unknown, f"KNOWN_BUGS names no catalogue entry: {unknown}"
    duplicated = {n for n in names if names.count(n) > 1}
    assert not duplicated, f"catalogue entries with the same id: {duplicated}"


_name_cases()


def _params() -> list:
    params = []
    for case in TABLE:
        for wrt in case.wrt_sets():
            marks = list(case.marks)
            reason = case.xfail_reason(wrt)
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            wrt_id = ",".join(map(str, wrt))
            params.append(pytest.param(case, wrt, id=f"{case.name}[wrt={wrt_id}]", marks=marks))
    return params


# --- checks ------------------------------------------------------------------------------


def _copies(args: Sequence[Any]) -> list[Any]:
    return copy.deepcopy(list(args))


@pytest.mark.parametrize("case, wrt", _params())
def test_gradient(case: Case, wrt: Wrt) -> None:
    for point in range(POINTS):
        args = case.draw(point)
        before = _copies(args)
        check_grads(case.fn, *args, wrt=list(wrt), seed=point)
        assert_unchanged(args, before, "check_grads")
        if not case.scalar:
            out, _ = s2sgrad.vjp(case.fn, *args)
            assert_unchanged(args, before, "vjp")
            np.testing.assert_allclose(out, case.fn(*_copies(args)), rtol=1e-12, atol=1e-12)
            continue
        value, grads = s2sgrad.value_and_grad(case.fn, wrt=wrt[0] if len(wrt) == 1 else wrt)(
            *args)
        assert_unchanged(args, before, "value_and_grad")
        if len(wrt) == 1:
            grads = (grads,)
        assert isinstance(grads, tuple) and len(grads) == len(wrt)
        expected = case.fn(*_copies(args))
        assert np.shape(value) == np.shape(expected)
        assert np.allclose(value, expected, rtol=1e-12, atol=1e-12), (value, expected)
        rng = np.random.default_rng(point)
        zeros = case.zeros_at(args)
        for i, g in zip(wrt, grads, strict=True):
            assert g is not None, f"no gradient for argument {i}"
            assert np.shape(g) == np.shape(args[i]), (
                f"gradient of argument {i} has shape {np.shape(g)}, the argument "
                f"{np.shape(args[i])}")
            if i in zeros:
                assert np.all(np.asarray(g) == 0), f"argument {i} does not reach the output"
            else:
                assert np.any(np.asarray(g) != 0), f"the gradient of argument {i} is all zero"
            assert_gradient_matches(case.fn, args, i, g, rng)


# --- in-place updates where another name sees the array: Python's value, or refused ------

IN_PLACE = [
    (L.inplace_alias_before_loop, [A(4), N(2)], None),
    (L.inplace_alias_in_branch, [U(0.1, 1.0, 4)], None),
    (L.inplace_alias_made_in_loop, [A(4), N(2)], None),  # refused (conservatively)
    (L.inplace_on_fresh_each_iteration, [A(4), N(3)], None),
]


@pytest.mark.parametrize("fn, specs", [
    pytest.param(fn, specs, id=fn.__name__,
                 marks=[pytest.mark.xfail(strict=True, reason=why)] if why else [])
    for fn, specs, why in IN_PLACE])
def test_in_place_update_is_numpy_or_refused(fn: Callable, specs: list) -> None:
    rng = np.random.default_rng(zlib.crc32(fn.__name__.encode()))
    args = [spec.draw(rng) for spec in specs]
    try:
        value, grad = s2sgrad.value_and_grad(fn)(*_copies(args))
    except TransformError as exc:
        assert "in-place update" in exc.reason or "in place" in exc.reason, str(exc)
        return
    assert np.isclose(value, fn(*_copies(args)), rtol=1e-12), "value differs from Python's"
    # each call on fresh copies: fn updates its arguments in place
    numeric = numeric_gradient(lambda *a: fn(*_copies(a)), args, 0)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


# --- arguments and results that are containers (not supported yet) -------------------------


def _leaves(tree: Any) -> list[tuple[Any, ...]]:
    """Paths to the float arrays in a list/tuple/dict argument."""
    if isinstance(tree, dict):
        return [(k, *p) for k in tree for p in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [(k, *p) for k, item in enumerate(tree) for p in _leaves(item)]
    return [()]


def _get(tree: Any, path: tuple) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def _with(tree: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    out = dict(tree) if isinstance(tree, dict) else list(tree)
    out[path[0]] = _with(tree[path[0]], path[1:], value)
    return out if not isinstance(tree, tuple) else tuple(out)


def _of_leaf(fn: Callable, args: list, path: tuple) -> Callable:
    """``fn`` as a function of the array at ``path`` in its first argument."""
    return lambda value: fn(_with(args[0], path, value), *args[1:])


CONTAINER_ARGUMENTS = [
    (PD.list_argument, [[np.ones(3) * 0.3, np.arange(3.0), np.ones(2)]]),
    (PD.tuple_argument, [(0.5 * np.eye(3)[:, :2], np.ones(2)), np.linspace(-1, 1, 12).reshape(4, 3)]),
    (PD.dict_argument, [{"w": 0.5 * np.eye(3)[:, :2], "b": np.ones(2)},
                        np.linspace(-1, 1, 12).reshape(4, 3)]),
]


@pytest.mark.parametrize("fn, args", CONTAINER_ARGUMENTS,
                         ids=[fn.__name__ for fn, _ in CONTAINER_ARGUMENTS])
def test_container_argument(fn: Callable, args: list) -> None:
    before = _copies(args)
    value, grad = s2sgrad.value_and_grad(fn)(*args)
    assert np.isclose(value, fn(*_copies(args)), rtol=1e-12)
    for path in _leaves(args[0]):
        leaf = _get(args[0], path)
        g = _get(grad, path)
        assert np.shape(g) == np.shape(leaf)
        numeric = numeric_gradient(_of_leaf(fn, args, path), [leaf], 0)
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-7)
    for now, then in zip(_leaves(args[0]), _leaves(before[0]), strict=True):
        assert np.array_equal(_get(args[0], now), _get(before[0], then))


def test_tuple_result() -> None:
    x = np.linspace(-1.0, 1.0, 3)
    (s, t), pullback = s2sgrad.vjp(PD.returns_tuple, x)
    assert np.isclose(s, np.sum(x * x)) and np.isclose(t, np.sum(np.sin(x)))
    (grad,) = pullback((1.0, 2.0))
    np.testing.assert_allclose(grad, 2.0 * x + 2.0 * np.cos(x), rtol=1e-12)


# --- refused control flow: a TransformError at the construct --------------------------------

REFUSED = [
    ("return_in_for", "return", "'return' inside a loop is not supported yet"),
    ("return_in_while", "return", "'return' inside a loop is not supported yet"),
    ("return_in_inner_loop", "return", "'return' inside a loop is not supported yet"),
    ("return_in_loop_in_branch", "return", "'return' inside a loop is not supported yet"),
    ("subscript_loop_target", "y[0]", "can be the target of a for loop"),
    ("yield_in_loop", "yield", "generators ('yield')"),
    ("inplace_on_argument_in_loop", "x += y", "in-place update of the argument 'x'"),
    ("inplace_on_alias_in_branch", "h += y", "memory that the argument 'x' shares"),
    ("inplace_on_row_in_loop", "row *= 2.0", "memory that the argument 'xs' shares"),
]

_ROWS = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
_X = np.linspace(0.5, 1.5, 3)
REFUSED_ARGS = {
    "return_in_inner_loop": (1.5, 2), 
    "inplace_on_argument_in_loop": (_X, _X),
    "inplace_on_alias_in_branch": (_X, _X), "inplace_on_row_in_loop": (_ROWS,),
}


def _marked_line(fn: Callable) -> tuple[int, str]:
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if "# <- refused" in line:
            return first + offset, line
    raise AssertionError(f"{fn.__name__} has no marked line")


@pytest.mark.parametrize("name, token, words", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_with_location(name: str, token: str, words: str) -> None:
    fn = getattr(R, name)
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(*REFUSED_ARGS.get(name, (1.5,)))
    error = info.value
    lineno, line = _marked_line(fn)
    assert words in error.reason, error.reason
    assert error.filename == R.__file__
    assert error.lineno == lineno
    assert error.offset - 1 == line.index(token), (error.offset, line)
    assert error.hint, "every refusal says what to do instead"
    assert f"{R.__file__}:{lineno}:{error.offset}" in str(error)


def test_every_refused_function_has_a_case() -> None:
    public = {name for name, fn in vars(R).items()
              if inspect.isfunction(fn) and fn.__module__ == R.__name__}
    assert public == {name for name, _, _ in REFUSED}


# --- the table covers the catalogue ---------------------------------------------------------


def test_every_catalogue_function_has_an_entry() -> None:
    covered = {case.fn for case in TABLE} | {fn for fn, _, _ in IN_PLACE}
    covered |= {fn for fn, _ in CONTAINER_ARGUMENTS} | {PD.returns_tuple}
    missing = []
    for module in (B, L, W, SC, PD):
        for name, fn in vars(module).items():
            if inspect.isfunction(fn) and not name.startswith("_") \
                    and fn.__module__ == module.__name__ and fn not in covered:
                missing.append(f"{module.__name__}.{name}")
    assert not missing, f"catalogue functions without an entry: {missing}"
    assert len({case.fn for case in TABLE}) >= 150
