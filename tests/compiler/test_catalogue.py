"""End-to-end catalogue: every straight-line function in tests/catalogue through the compiler.

For each entry of ``TABLE`` (a function, how to draw its arguments, which sets of arguments to
differentiate) and each ``wrt`` set, at ``POINTS`` random points away from kinks:

- ``check_grads`` compares the vector-Jacobian product with central finite differences;
- ``value_and_grad`` specialised to exactly that ``wrt`` set must give the function's value,
  a gradient of each argument's shape that agrees with finite differences, nonzero unless the
  entry says the output does not depend on that argument (then exactly zero);
- no call may modify its input arrays.

Separate tests: float32 inputs give float32 gradients; returned gradients are writable and
share memory with nothing; any memory layout of the inputs gives the same gradients; keyword
arguments bind at the call; in-place updates of arrays give Python's value and gradient or a
TransformError; a callee rebound after the first call is used; every catalogue function has
an entry. Known compiler bugs are strict xfails whose reason names the suspected place.
"""

from __future__ import annotations

import copy
import inspect
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import assert_gradient_matches, check_grads, numeric_gradient
from tests.arguments import assert_unchanged
from tests.catalogue import helpers
from tests.catalogue import straight_line as sl

POINTS = 3  # random points per (function, wrt) test


# --- argument specs ----------------------------------------------------------------------


@dataclass(frozen=True)
class Arr:
    """A float64 array: standard normal, or uniform in [lo, hi)."""

    shape: tuple[int, ...]
    lo: float | None = None
    hi: float | None = None

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        if self.lo is None:
            return np.asarray(rng.standard_normal(self.shape))
        return np.asarray(rng.uniform(self.lo, self.hi, self.shape))

    @property
    def label(self) -> str:
        return "x".join(map(str, self.shape)) if self.shape else "0d"


@dataclass(frozen=True)
class Flt:
    """A Python float (numpy=True: an np.float64 scalar)."""

    lo: float | None = None
    hi: float | None = None
    numpy: bool = False

    def draw(self, rng: np.random.Generator) -> float:
        value = float(rng.standard_normal() if self.lo is None else rng.uniform(self.lo, self.hi))
        return np.float64(value) if self.numpy else value

    @property
    def label(self) -> str:
        return "np.float64" if self.numpy else "float"


@dataclass(frozen=True)
class Const:
    """A value passed as it is (a copy of it): integers, labels, fixed arrays."""

    value: Any
    name: str = "const"

    def draw(self, rng: np.random.Generator) -> Any:
        return copy.deepcopy(self.value)

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class WithZero(Arr):
    """Standard normal with one entry exactly zero (at a random position)."""

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        x = rng.standard_normal(self.shape)
        x.flat[rng.integers(x.size)] = 0.0
        return x


def A(*shape: int) -> Arr:
    return Arr(tuple(shape))


def U(lo: float, hi: float, *shape: int) -> Arr:
    return Arr(tuple(shape), lo, hi)


def P(*shape: int) -> Arr:
    """Positive: uniform in [0.5, 2)."""
    return Arr(tuple(shape), 0.5, 2.0)


F = Flt()
FP = Flt(0.5, 2.0)  # a positive Python float


def onehot(n: int, k: int) -> Const:
    return Const(np.eye(k)[np.arange(n) % k], f"onehot{n}x{k}")


def signs(n: int) -> Const:
    return Const(np.where(np.arange(n) % 2 == 0, 1.0, -1.0), f"signs{n}")


# --- guards: keep the points away from kinks --------------------------------------------

GAP = 0.05


def apart(a: Any, b: Any, gap: float = GAP) -> bool:
    """Every broadcast pair of a and b differs by more than gap."""
    return bool(np.all(np.abs(np.subtract(a, b)) > gap))


def distinct(x: Any, gap: float = 1e-3) -> bool:
    """No two entries of x are within gap: no ties for max/min/argmax."""
    flat = np.sort(np.ravel(x))
    return bool(np.all(np.diff(flat) > gap))


def off_integers(x: Any, gap: float = 0.1, half: bool = False) -> bool:
    """x is away from the integers (and from the half-integers if half)."""
    frac = np.mod(x, 0.5 if half else 1.0) / (0.5 if half else 1.0)
    return bool(np.all((frac > gap) & (frac < 1.0 - gap)))


# --- the table ---------------------------------------------------------------------------

Wrt = tuple[int, ...]


@dataclass
class Case:
    fn: Callable
    args: Sequence[Any]  # specs, one per argument
    wrts: Sequence[Wrt] | None = None  # None: each float argument alone, then all of them
    ok: Callable[..., bool] | None = None  # redraw until ok(*args): away from kinks
    zero: tuple[int, ...] = ()  # arguments the output does not depend on
    scalar: bool = True  # False: an array output, checked through vjp only
    xfail: str | dict[Wrt, str] | None = None  # compiler bug: why (for every wrt, or per wrt)
    label: str | None = None
    name: str = field(init=False, default="")

    def draw(self, point: int) -> list[Any]:
        rng = np.random.default_rng([zlib.crc32(self.name.encode()), point])
        for _ in range(1000):
            args = [spec.draw(rng) for spec in self.args]
            if self.ok is None or self.ok(*args):
                return args
        raise AssertionError(f"{self.name}: no point satisfies the guard")

    def float_positions(self) -> list[int]:
        args = self.draw(0)
        return [i for i, a in enumerate(args)
                if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"
                                            and not isinstance(self.args[i], Const))]

    def wrt_sets(self) -> list[Wrt]:
        if self.wrts is not None:
            return [tuple(w) for w in self.wrts]
        floats = self.float_positions()
        sets = [(i,) for i in floats]
        if len(floats) > 1:
            sets.append(tuple(floats))
        return sets

    def xfail_reason(self, wrt: Wrt) -> str | None:
        if isinstance(self.xfail, dict):
            return self.xfail.get(wrt)
        return self.xfail


S = sl  # the catalogue module, shorter in the table

# Known compiler bugs: each reason names the place in s2sgrad/ suspected of it.

TABLE: list[Case] = [
    # --- binary operators with broadcasting -----------------------------------------------
    *[Case(fn, args)
      for fn in (S.add, S.sub, S.mul)
      for args in (
          [F, A(3)], [A(3), F],                 # Python float x array, reversed
          [A(), A(3, 4)], [A(3, 4), A()],       # 0-d array x array, reversed
          [A(3, 1), A(4)], [A(4), A(3, 1)],     # (3,1) x (4,), reversed
          [A(2, 3, 4), A(4)], [A(4), A(2, 3, 4)],  # (2,3,4) x (4,), reversed
          [A(1, 4), A(3, 1)], [A(3, 1), A(1, 4)],  # row x column, reversed
          [A(2, 3), A(2, 3)], [F, F], [F, A()],
          [A(2, 1, 4), A(3, 1)],                # both stretched, different ranks
          [A(2, 1, 3, 1, 4), A(5, 1, 1, 4)],    # rank 5, every axis stretched once
      )],
    *[Case(S.div, args)
      for args in (
          [F, P(3)], [A(3), FP], [A(), P(3, 4)], [A(3, 4), P()],
          [A(3, 1), P(4)], [A(4), P(3, 1)], [A(2, 3, 4), P(4)], [A(4), P(2, 3, 4)],
          [A(1, 4), P(3, 1)], [A(3, 1), P(1, 4)], [F, FP],
      )],
    *[Case(S.matmul_op, args)
      for args in ([A(4), A(4)], [A(3, 4), A(4)], [A(4), A(4, 2)], [A(3, 4), A(4, 2)])],
    Case(S.pow_const_exponent, [P(3, 4)]),
    Case(S.pow_const_exponent, [FP]),
    Case(S.pow_const_base, [A(3, 4)]),
    Case(S.pow_const_base, [F]),
    *[Case(S.pow_both, args)
      for args in ([P(3, 4), A(3, 4)], [P(3, 1), A(4)], [P(4), A(2, 3, 4)], [FP, A(3)],
                   [P(3), F], [FP, F], [P(), A(2, 2)])],
    Case(S.neg, [A(3, 4)]),
    Case(S.neg, [F]),
    Case(S.pow_negative_base, [A(3, 4)]),
    Case(S.builtin_pow, [P(3), A(3)]),
    Case(S.unary_plus, [A(3)]),
    Case(S.constants_both_sides, [A(2, 3)]),
    Case(S.constants_both_sides, [F]),
    Case(S.constant_array_operands, [P(3, 4)]),
    Case(S.exponent_arguments, [P(3), Const(3, "n=3"), FP, P()]),
    Case(S.divide_by_integers, [A(3), Const(np.arange(1, 4), "ints")]),
    Case(S.negation_precedence, [A(2, 3)]),
    Case(S.mod_op, [U(-6.0, 6.0, 3, 4), U(1.0, 2.0, 4)],
         ok=lambda a, b: off_integers(a / b)),
    Case(S.mod_op, [Flt(2.5, 6.0), Flt(1.0, 2.0)], ok=lambda a, b: off_integers(a / b)),
    Case(S.ufunc_operators, [A(3, 4), P(4)]),
    Case(S.fmod_remainder, [U(0.5, 6.0, 3, 4), U(1.0, 2.0, 4)],
         ok=lambda a, b: off_integers(a / b)),
    # --- reductions -----------------------------------------------------------------------
    Case(S.sum_variants, [A(2, 3, 4)]),
    Case(S.sum_methods, [A(2, 3, 4)]),
    Case(S.mean_variants, [A(2, 3, 4)]),
    Case(S.max_min_variants, [A(2, 3, 4)], ok=distinct),
    Case(S.max_min_methods, [A(3, 4)], ok=distinct),
    Case(S.prod_var_std, [P(3, 4)]),
    Case(S.var_std_more, [A(2, 3, 4)]),
    Case(S.prod_with_zero, [WithZero((3, 4))]),
    Case(S.cumsum_reduce, [A(3, 4)]),
    Case(S.reduce_axis_argument, [A(3, 4), Const(1, "axis=1")]),
    Case(S.reduce_axis_argument, [A(2, 3, 4), Const(-1, "axis=-1")]),
    Case(S.mean_of_keepdims_chain, [A(3, 4)], ok=lambda x: distinct(np.sum(x, axis=-1))),
    # --- elementwise functions ------------------------------------------------------------
    Case(S.exp_log_family, [P(3, 4)]),
    Case(S.sigmoid, [A(5)]),
    Case(S.softplus_inline, [A(2, 3)]),
    Case(S.trig_family, [U(-0.9, 0.9, 3, 4)]),
    Case(S.hyperbolic_family, [U(1.2, 2.5, 4)]),
    Case(S.roots_and_powers, [P(3, 4)]),
    Case(S.angles, [A(4)]),
    Case(S.abs_family, [A(3, 4)], ok=lambda x: apart(x, 0.0, 0.2)),
    Case(S.two_argument_ufuncs, [P(3, 4), P(4)]),
    Case(S.relu_mlp_unit, [A(5, 3), A(3, 4)], ok=lambda x, w: apart(x @ w, 0.0)),
    Case(S.maximum_minimum, [A(3, 4), A(4)],
         ok=lambda a, b: apart(a, b) and apart(a, 2.0 * b)),
    Case(S.maximum_minimum, [F, A(4)], ok=lambda a, b: apart(a, b) and apart(a, 2.0 * b)),
    Case(S.where_select, [A(3, 4), A(4)], ok=lambda x, y: apart(x, y) and apart(x, 0.0)),
    Case(S.leaky_relu, [A(3, 4)], ok=lambda x: apart(x, 0.0)),
    Case(S.where_constant_condition, [A(4), A(4)], ok=lambda x, y: apart(x, 0.0), zero=(1,)),
    Case(S.clip_family, [U(-2.0, 2.0, 3, 4), U(-1.5, -0.1, 4), U(0.1, 1.5, 4)],
         ok=lambda x, lo, hi: apart(x, lo) and apart(x, hi)
         and all(apart(x, c) for c in (-1.0, 1.0, 0.5, -0.5))),
    Case(S.clip_family, [U(-2.0, 2.0, 3, 4), Flt(-1.5, -0.1), Flt(0.1, 1.5)],
         ok=lambda x, lo, hi: apart(x, lo) and apart(x, hi)
         and all(apart(x, c) for c in (-1.0, 1.0, 0.5, -0.5))),
    Case(S.clip_bounds_numpy2, [U(-2.0, 2.0, 3, 4), Flt(-1.5, -0.1), U(0.1, 1.5, 4)],
         ok=lambda x, lo, hi: apart(x, lo) and apart(x, hi)),
    Case(S.smooth_abs, [A(6)]),
    Case(S.gelu_tanh, [A(2, 5)]),
    Case(S.swish, [A(2, 5), F]),
    # --- products and shapes --------------------------------------------------------------
    *[Case(S.dot_ranks, args)
      for args in (
          [A(4), A(4)], [A(3, 4), A(4)], [A(4), A(4, 2)], [A(3, 4), A(4, 2)],
          [A(), A(3, 4)], [A(3, 4), A()], [F, A(3)],
          [A(2, 3, 4), A(4)], [A(2, 3, 4), A(4, 5)], [A(4), A(2, 4, 5)], [A(3, 4), A(2, 4, 5)],
      )],
    *[Case(S.dot_method, args) for args in ([A(4), A(4)], [A(3, 4), A(4, 2)], [A(3, 4), A(4)])],
    *[Case(S.matmul_function, args)
      for args in (
          [A(4), A(4)], [A(3, 4), A(4)], [A(4), A(4, 2)], [A(3, 4), A(4, 2)],
          [A(2, 3, 4), A(4, 5)],          # a batch of inputs times weights
          [A(3, 4), A(2, 4, 5)],          # one matrix times a stack
          [A(2, 3, 4), A(2, 4, 5)],       # two stacks
          [A(1, 3, 4), A(2, 4, 5)],       # stacks whose batch axes broadcast
          [A(2, 1, 3, 4), A(5, 4, 2)],
          [A(2, 3, 4), A(4)], [A(4), A(2, 4, 5)],
      )],
    Case(S.matmul_chain, [A(4), A(4, 3), A(3)]),
    Case(S.matmul_chain, [A(2, 4), A(4, 3), A(3, 5)]),
    Case(S.matmul_chain, [A(2, 2, 4), A(4, 3), A(3)]),
    Case(S.outer_product, [A(3), A(4)]),
    Case(S.outer_product, [A(2, 3), A(4)]),
    Case(S.trace_variants, [A(3, 3)]),
    Case(S.trace_batched, [A(2, 3, 3)]),
    Case(S.transpose_2d, [A(3, 4), A(3, 2)]),
    Case(S.transpose_3d, [A(2, 3, 4)]),
    Case(S.reshape_variants, [A(3, 4)]),
    Case(S.reshape_then_matmul, [A(2, 3, 4), A(4, 5)]),
    Case(S.axis_moves, [A(2, 3, 4)]),
    Case(S.squeeze_singletons, [A(3, 1, 4)]),
    Case(S.linalg_inverse_det, [A(3, 3)],
         ok=lambda a: np.linalg.cond(a) < 20 and abs(np.linalg.det(a)) > 0.2),
    *[Case(fn, [A(1, 3), A(4)])
      for fn in (S.swapaxes_broadcast, S.moveaxis_broadcast, S.matrix_transpose_broadcast)],
    *[Case(fn, [A(2, 3), A(2)])
      for fn in (S.swapaxes_broadcast, S.moveaxis_broadcast, S.matrix_transpose_broadcast)],
    Case(S.reshape_minus_one_broadcast, [A(1, 1), A(4)]),
    Case(S.reshape_minus_one_broadcast, [A(2, 2), A(4)]),
    Case(S.reshape_size_one_broadcast, [A(1, 1), A(4)]),
    Case(S.shape_variants_more, [A(1, 3, 1)]),
    Case(S.squeeze_then_matmul, [A(3, 1, 4), A(4, 2)]),
    Case(S.squeeze_then_matmul, [A(1, 4), A(4, 2)]),
    Case(S.callee_unknown_rank, [A(3, 1, 4), A(4, 2)], ok=lambda x, w: distinct(x)),
    Case(S.unknown_rank_everything, [A(3, 1, 4), A(3, 4, 1)]),
    Case(S.reshape_to_argument, [A(2, 3, 4), A(4, 2), Const((6, 4), "shape=(6,4)")]),
    Case(S.reshape_to_argument, [A(2, 3, 4), A(12, 2), Const((2, 12), "shape=(2,12)")]),
    Case(S.same_operand_twice, [A(3)]),
    Case(S.method_on_temporaries, [A(3, 4), A(4, 4)]),
    Case(S.trivial_powers, [A(3), A(3)]),
    Case(S.indexing, [A(3, 4)]),
    Case(S.indexing_more, [A(3, 4)], ok=lambda x: apart(x, 0.0)),
    Case(S.trace_offsets, [A(3, 4)]),
    Case(S.linalg_batched, [A(2, 3, 3)],
         ok=lambda a: np.all(np.linalg.cond(a) < 20) and np.all(np.abs(np.linalg.det(a)) > 0.2)),
    Case(S.trace_any_axes, [A(3, 5), A(3, 2, 4)]),
    Case(S.transpose_of_vector, [A(4)]),
    Case(S.copy_astype, [A(3, 4)]),
    Case(S.asarray_and_array, [A(3, 4)]),
    Case(S.method_spellings, [A(2, 3, 3)]),
    # --- math.* on Python floats ----------------------------------------------------------
    Case(S.math_trig, [Flt(-0.9, 0.9), Flt(-0.9, 0.9)]),
    Case(S.math_exp_log, [F, Flt(1.5, 3.0)]),
    Case(S.math_roots_powers, [FP, F]),
    Case(S.math_hyperbolic, [Flt(1.2, 2.5)]),
    Case(S.math_misc, [F, F], ok=lambda a, b: apart(a, 0.0, 0.2) and apart(b, 0.0, 0.2)),
    Case(S.math_with_constants, [FP]),
    Case(S.builtin_max_min, [F, F],
         ok=lambda a, b: apart(a, b, 0.1) and apart(a, 0.0, 0.1) and apart(b, 0.0, 0.1)
         and apart(a * b, b, 0.1)),
    Case(S.float_and_0d, [F, A()]),
    Case(S.math_on_arrays_reduced, [A(3), U(1.5, 3.0)]),
    Case(S.math_of_0d_then_sum, [F]),
    Case(S.math_of_0d_then_sum, [A()]),
    Case(S.float_of_0d_then_mean, [F]),
    Case(S.float_of_0d_then_mean, [A()]),
    Case(S.float_and_array, [F, A(3, 4)]),
    Case(S.float_only_numpy, [F, F]),
    Case(S.numpy_scalar_input, [Flt(numpy=True), F]),
    # --- user callees ---------------------------------------------------------------------
    Case(S.callee_twice, [A(3, 4), F]),
    Case(S.callee_twice, [A(4), A()]),
    Case(S.callee_keywords, [A(3), F]),
    Case(S.callee_nested, [A(3, 4), A(4)]),
    Case(S.callee_unused, [A(3, 3), A(3, 3)]),
    Case(S.callee_constant_argument, [A(2, 3)]),
    Case(S.callee_other_module, [A(3, 4), A(3, 4)]),
    Case(S.callee_other_module_keywords, [A(3, 4)]),
    Case(S.callee_decorated, [A(4)]),
    Case(S.callee_staticmethod, [A(4)]),
    Case(S.function_aliases, [A(4)]),
    Case(S.local_function_alias, [A(4)]),
    Case(S.callee_result_reused, [A(5)]),
    Case(S.callee_constant_result, [A(3)]),
    Case(S.callee_identity, [A(2, 3)]),
    Case(S.callee_keyword_only, [A(3), F]),
    Case(S.callee_ignores_argument, [A(3), A(3)], zero=(1,)),
    Case(S.callee_same_argument_twice, [A(3)]),
    Case(S.callee_same_name_other_module, [A(4)]),
    Case(S.callee_returns_tuple, [A(2, 3)]),
    Case(S.callee_tuple_partly_used, [A(2, 3)]),
    # --- names and assignments ------------------------------------------------------------
    Case(S.repeated_use, [A(3, 4)]),
    Case(S.parameter_reassigned, [A(3), A(3)]),
    Case(S.local_named_np, [A(3)]),
    Case(S.reassignment, [A(3, 4), A(4, 2)]),
    Case(S.augmented_assignment, [A(3, 4), A(4)]),
    Case(S.augmented_assignment, [A(3, 4), F]),
    Case(S.augmented_parameter, [F, F]),
    Case(S.tuple_swap, [A(3), A(3)]),
    Case(S.tuple_swap, [A(3, 1), A(4)]),
    Case(S.tuples_and_lists, [A(3), A(3)]),
    Case(S.chained_and_annotated, [A(3, 2)]),
    Case(S.unused_variables, [A(3), A(3)], zero=(1,)),
    Case(S.independent_of_some_inputs, [A(3), A(2, 4), F], zero=(1, 2)),
    Case(S.returns_constant, [A(3)], zero=(0,)),
    Case(S.generated_looking_names, [A(3), A(3), A(3)]),
    Case(S.names_of_rule_parameters, [P(4), P(4)], ok=lambda a, b: apart(a, b)),
    Case(S.names_of_rule_locals, [A(3, 4), A(3, 4), A(4), P(3, 4)],
         ok=lambda h, g, a, s: distinct(np.max(h * g, axis=0)) and distinct(h * g)
         and apart(h, g) and apart(np.abs(g), 1.5)),
    Case(S.independent_of_all_inputs, [A(3, 2)], zero=(0,)),
    Case(S.independent_of_all_inputs, [F], zero=(0,)),
    Case(S.identity, [F]),
    Case(S.identity, [A()]),
    Case(S.identity, [A(3, 4)], scalar=False),
    Case(S.identity_through_copies, [F]),
    Case(S.identity_through_copies, [A(2, 3)], scalar=False),
    Case(S.returns_array, [A(3, 4), A(4)], scalar=False),
    Case(S.returns_parameter_unchanged_other, [F, A(3)], zero=(1,)),
    Case(S.module_globals, [A(3, 4)]),
    Case(S.module_global_arrays, [A(3, 4)]),
    Case(S.global_axes, [A(2, 3, 2)]),
    Case(S.closure_loss, [A(5, 4)]),
    Case(S.shape_arithmetic, [A(3, 4)]),
    Case(S.shape_unpacking, [A(3, 4)]),
    Case(S.shape_into_creator, [A(2, 5)]),
    Case(S.keyword_arguments, [U(-2.5, 2.5, 3, 4)]),
    Case(S.print_statements, [A(3)]),
    Case(S.assert_statement, [A(2, 2)]),
    Case(S.top_level_defaults, [U(-0.5, 0.5, 4)],
         ok=lambda x: apart(2.0 * x, -1.0) and apart(x, 0.0)),
    Case(S.integer_and_boolean_inputs,
         [A(3), Const(np.arange(1, 4), "ints"), Const(np.array([True, False, True]), "mask")]),
    Case(S.empty_arrays, [A(0, 3), A(3, 2)], zero=(0, 1)),
    Case(S.empty_arrays, [A(2, 0), A(0, 2)], zero=(0, 1)),
    Case(S.size_one_axes, [A(3, 1), A(1, 4)]),
    Case(S.chained_methods, [A(2, 3)]),
    Case(S.sum_with_dtype, [A(2, 3)]),
    # --- in-place updates of fresh arrays -------------------------------------------------
    Case(S.inplace_old_value_needed, [A(3), A(3)]),
    Case(S.inplace_softmax, [A(4)]),
    Case(S.inplace_power, [A(3)]),
    Case(S.inplace_accumulate, [A(3)]),
    Case(S.inplace_callee_result, [A(3)]),
    Case(S.inplace_then_view, [A(3)]),
    Case(S.inplace_two_names_one_array, [A(3), A(3)]),
    Case(S.inplace_matmul_broadcast, [A(2, 3), A(3, 3), A(3)]),
    # --- element assignment ---------------------------------------------------------------
    Case(S.element_assignment, [A(4)]),
    Case(S.element_overwrite, [A(4)]),
    Case(S.element_repeated_index_add, [A(3)]),
    Case(S.element_mask_assign, [A(5)], ok=lambda x: apart(x, 0.0)),
    Case(S.element_column_assign, [A(3, 3)]),
    Case(S.element_float_into_row, [A(2, 3), F]),
    Case(S.element_write_then_read, [A(4)]),
    Case(S.element_overwrite_twice, [A(3), F, F], zero=(1,)),
    Case(S.element_overlapping_add, [A(4)]),
    Case(S.element_full_overwrite, [A(3)]),
    Case(S.element_write_into_callee_result, [A(3)]),
    # --- non-differentiable functions in the path -----------------------------------------
    Case(S.floor_sign_round, [U(-3.0, 3.0, 3, 4)], ok=lambda x: off_integers(x, half=True)),
    Case(S.comparisons_as_masks, [A(3, 4), A(4)], ok=lambda x, y: apart(x, y) and apart(x, 0)),
    Case(S.boolean_mask_operators, [A(4), A(4)],
         ok=lambda x, y: apart(x, 0.0) and apart(y, 0.0) and apart(x, -1.0)),
    Case(S.inverted_mask, [A(4)], ok=lambda x: apart(x, 0.0) and apart(x, 0.5)),
    Case(S.argmax_selects, [A(6)], ok=distinct),
    Case(S.floordiv_float, [Flt(0.5, 5.0), Flt(1.0, 2.0)],
         ok=lambda a, b: off_integers(a / b)),
    Case(S.isfinite_guard, [A(3, 4)]),
    Case(S.integer_casts, [U(-3.0, 3.0, 3, 4)], ok=lambda x: off_integers(x)),
    # --- creators -------------------------------------------------------------------------
    Case(S.plain_sum, [A(3, 4)]),
    Case(S.linear_penalty, [A(3, 4), A(3, 4)]),
    Case(S.creators, [A(3, 3)]),
    Case(S.full_creators, [A(2, 3), F]),
    Case(S.linspace_endpoints, [F, F]),
    # --- realistic losses -----------------------------------------------------------------
    Case(S.least_squares, [A(3), A(8, 3), A(8)]),
    Case(S.least_squares, [A(3, 2), A(8, 3), A(8, 2)]),
    Case(S.ridge, [A(3), F, A(8, 3), A(8), FP],
         wrts=[(0,), (1,), (4,), (0, 1), (4, 0), (-1,), (-1, 0, 2), (0, 1, 2, 3, 4)]),
    Case(S.logistic_regression, [A(3), F, A(10, 3), signs(10)]),
    Case(S.logistic_regression_sigmoid, [A(3), A(10, 3), Const(np.arange(10) % 2 * 1.0, "t")]),
    Case(S.softmax_cross_entropy, [A(6, 4), onehot(6, 4)]),
    Case(S.softmax_cross_entropy_int_labels,
         [A(6, 4), Const(np.array([0, 3, 1, 1, 2, 0]), "labels")]),
    Case(S.mlp_loss, [A(3, 5), A(5), A(5, 2), A(2), A(7, 3), A(7, 2)],
         wrts=[(0,), (1,), (2,), (3,), (0, 1), (0, 1, 2, 3), (4,), (0, 1, 2, 3, 4, 5)]),
    Case(S.gaussian_nll, [A(4), A(4), A(6, 4)]),
    Case(S.huber, [A(3, 4), A(3, 4), FP],
         ok=lambda p, t, d: apart(np.abs(p - t), d)),
    Case(S.cosine_similarity, [A(5), A(5)]),
    Case(S.rbf_kernel_sum, [A(4, 3), A(5, 3), FP]),
    Case(S.rbf_kernel_expanded, [A(4, 3), A(5, 3), FP]),
    Case(S.rbf_kernel_expand_dims, [A(4, 3), A(5, 3), FP]),
    Case(S.layer_norm, [A(3, 5), A(5), A(5)]),
    Case(S.attention_score, [A(3, 4), A(5, 4), A(5, 2)]),
    Case(S.batched_attention, [A(2, 3, 4), A(2, 5, 4)]),
    Case(S.kl_divergence, [A(2, 5), A(2, 5)]),
    Case(S.squared_hinge, [A(3), A(8, 3), signs(8)],
         ok=lambda w, x, y: apart(1.0 - y * (x @ w), 0.0)),
    Case(S.poisson_nll, [U(-0.5, 0.5, 3), A(6, 3), Const(np.arange(6.0), "counts")]),
    Case(S.elastic_net, [A(3), A(8, 3), A(8), FP, FP], ok=lambda w, *_: apart(w, 0.0)),
    Case(S.residual_block, [A(4, 3), A(3, 5), A(5, 3)],
         ok=lambda x, w1, w2: apart(x @ w1, 0.0)),
    # --- small functions for the float32 checks -------------------------------------------
    Case(S.max_of_array, [A(3, 4)], ok=distinct),
    Case(S.maximum_of_arrays, [A(3, 4), A(4)],
         ok=lambda x, y: apart(x, y) and apart(x, 0.5 * y)),
    Case(S.log2_log10_exp2, [P(3, 4)]),
    Case(S.float_base_power, [A(3)]),
    Case(S.trace_of_matrix, [A(3, 3)]),
]


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
    duplicated = {n for n in names if names.count(n) > 1}
    assert not duplicated, f"catalogue entries with the same id: {duplicated}"


_name_cases()


def _params() -> list:
    params = []
    for case in TABLE:
        for wrt in case.wrt_sets():
            marks = []
            reason = case.xfail_reason(wrt)
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            wrt_id = ",".join(map(str, wrt))
            params.append(pytest.param(case, wrt, id=f"{case.name}[wrt={wrt_id}]", marks=marks))
    return params


# --- checks ------------------------------------------------------------------------------


def _copies(args: Sequence[Any]) -> list[Any]:
    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("case, wrt", _params())
def test_gradient(case: Case, wrt: Wrt) -> None:
    for point in range(POINTS):
        args = case.draw(point)
        before = _copies(args)
        check_grads(case.fn, *args, wrt=list(wrt), seed=point)
        assert_unchanged(args, before, "check_grads")
        if not case.scalar:
            continue
        value, grads = s2sgrad.value_and_grad(case.fn, wrt=wrt[0] if len(wrt) == 1 else wrt)(
            *args)
        assert_unchanged(args, before, "value_and_grad")
        if len(wrt) == 1:
            grads = (grads,)
        assert isinstance(grads, tuple) and len(grads) == len(wrt)
        expected = case.fn(*args)
        assert np.shape(value) == np.shape(expected)
        assert np.allclose(value, expected, rtol=1e-12, atol=1e-12), (value, expected)
        rng = np.random.default_rng(point)
        for i, g in zip(wrt, grads, strict=True):
            assert g is not None, f"no gradient for argument {i}"
            assert np.shape(g) == np.shape(args[i]), (
                f"gradient of argument {i} has shape {np.shape(g)}, the argument "
                f"{np.shape(args[i])}")
            if i in case.zero:
                assert np.all(np.asarray(g) == 0), f"argument {i} does not reach the output"
            else:
                assert np.any(np.asarray(g) != 0), f"the gradient of argument {i} is all zero"
            assert_gradient_matches(case.fn, args, i, g, rng)


# --- float32 inputs keep their dtype --------------------------------------------------------


# name -> None, or the reason the gradient is float64 (a compiler bug).
DTYPE_CASES = [
    # realistic losses
    "least_squares(3,8x3,8)", "ridge", "logistic_regression", "softmax_cross_entropy",
    "mlp_loss", "gaussian_nll", "huber", "cosine_similarity", "rbf_kernel_expanded",
    "rbf_kernel_sum", "layer_norm", "attention_score", "batched_attention", "kl_divergence",
    "squared_hinge", "residual_block",
    # operators, reductions, elementwise functions, products and shapes
    "add(3x1,4)", "div(2x3x4,4)", "pow_both(3x1,4)", "pow_const_base(3x4)", "sum_variants",
    "mean_variants", "max_min_variants", "prod_var_std", "cumsum_reduce", "exp_log_family",
    "trig_family", "hyperbolic_family", "roots_and_powers", "abs_family",
    "two_argument_ufuncs", "softplus_inline", "clip_family(3x4,4,4)", "where_select",
    "matmul_function(1x3x4,2x4x5)", "dot_ranks(2x3x4,4x5)", "outer_product(3,4)",
    "linalg_inverse_det", "transpose_3d", "reshape_variants", "axis_moves", "indexing",
    "unknown_rank_everything", "callee_unknown_rank",
    # callees, names, floats mixed with arrays
    "float_and_array", "callee_nested", "callee_other_module", "augmented_assignment(3x4,4)",
    # element assignment (into a float32 array)
    "element_column_assign",
    # the function itself computes in float64 (float64 constants, creators, globals): the
    # gradient still has the input's dtype, as in PyTorch and JAX
    "element_assignment", "gelu_tanh", "creators", "module_globals", "ufunc_operators",
    # one rule each
    "max_of_array", "maximum_of_arrays", "log2_log10_exp2", "float_base_power",
    "trace_of_matrix",
]
_BY_NAME = {case.name: case for case in TABLE}


def _float32(args: Sequence[Any], case: Case) -> list[Any]:
    return [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
            for a in args]


@pytest.mark.parametrize("name", DTYPE_CASES)
def test_float32_gradient_keeps_dtype(name: str) -> None:
    case = _BY_NAME[name]
    args64 = case.draw(0)
    args32 = _float32(args64, case)
    arrays = [i for i, a in enumerate(args32)
              if isinstance(a, np.ndarray) and a.dtype == np.float32
              and not isinstance(case.args[i], Const)]
    assert arrays
    before = _copies(args32)
    grads32 = s2sgrad.gradient(case.fn, wrt=tuple(arrays))(*args32)
    assert_unchanged(args32, before, "gradient")
    grads64 = s2sgrad.gradient(case.fn, wrt=tuple(arrays))(*args64)
    for i, g32, g64 in zip(arrays, grads32, grads64, strict=True):
        assert np.asarray(g32).dtype == np.float32, \
            f"argument {i} is float32, its gradient {np.asarray(g32).dtype}"
        assert np.shape(g32) == np.shape(args32[i])
        assert np.allclose(g32, g64, rtol=2e-3, atol=2e-3 * np.max(np.abs(g64)))


# --- gradients are ordinary arrays: writable, sharing memory with nothing ----------------

WRITABLE_CASES = [
    "plain_sum", "linear_penalty", "mean_of_keepdims_chain", "least_squares(3,8x3,8)",
    "mlp_loss", "softmax_cross_entropy", "layer_norm", "independent_of_some_inputs",
    "identity(0d)", "sum_variants", "callee_nested",
]


@pytest.mark.parametrize("name", WRITABLE_CASES)
def test_gradients_are_writable_and_unshared(name: str) -> None:
    # Training loops update gradients in place (clipping, scaling, accumulation).
    case = _BY_NAME[name]
    args = case.draw(0)
    positions = tuple(case.float_positions())
    grads = s2sgrad.gradient(case.fn, wrt=positions)(*args)
    arrays = [g for g in grads if isinstance(g, np.ndarray)]
    assert arrays
    for k, g in enumerate(arrays):
        assert g.flags.writeable, f"gradient {k} is read-only"
        others = [a for a in args if isinstance(a, np.ndarray)] + arrays[:k] + arrays[k + 1:]
        assert not any(np.shares_memory(g, a) for a in others), f"gradient {k} shares memory"


# --- keyword arguments at the call ---------------------------------------------------------


def test_keyword_arguments_at_the_call() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.5, 0.5, 4)
    f = sl.top_level_defaults
    by_position = s2sgrad.gradient(f)(x, 3.0, 0.4)
    by_keyword = s2sgrad.gradient(f)(x, shift=0.4, scale=3.0)
    np.testing.assert_allclose(by_keyword, by_position, rtol=1e-14)
    assert_gradient_matches(lambda v: f(v, shift=0.4, scale=3.0), [x], 0, by_keyword, rng)
    value, grad = s2sgrad.value_and_grad(sl.keyword_only_parameter)(x, scale=1.5)
    assert np.isclose(value, sl.keyword_only_parameter(x, scale=1.5))
    assert_gradient_matches(lambda v: sl.keyword_only_parameter(v, scale=1.5), [x], 0, grad,
                            rng)
    grad3 = s2sgrad.gradient(sl.keyword_only_parameter)(x, power=3, scale=1.5)
    assert_gradient_matches(lambda v: sl.keyword_only_parameter(v, power=3, scale=1.5),
                            [x], 0, grad3, rng)
    out, pullback = s2sgrad.vjp(sl.keyword_only_parameter, x, scale=1.5)
    np.testing.assert_allclose(pullback(np.ones_like(out))[0], grad, rtol=1e-14)


# --- inputs in any memory layout -----------------------------------------------------------

LAYOUT_CASES = [
    "mlp_loss", "layer_norm", "reshape_variants", "transpose_3d", "indexing", "indexing_more",
    "sum_variants", "attention_score", "trace_variants", "linalg_inverse_det",
    "dot_ranks(2x3x4,4x5)", "matmul_function(2x3x4,2x4x5)", "shape_variants_more",
    "axis_moves", "outer_product(2x3,4)", "cumsum_reduce", "callee_other_module",
    "unknown_rank_everything",
]


def _strided(a: Any, layout: str) -> Any:
    """The same values in another layout: Fortran order, a strided view, read-only."""
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        return a
    if layout == "fortran":
        return np.asfortranarray(a)
    if layout == "strided":
        return np.repeat(a, 2, axis=-1)[..., ::2]
    if layout == "reversed":
        return np.flip(np.flip(a, axis=0).copy(), axis=0)
    view = a.copy()
    view.flags.writeable = False
    return view


@pytest.mark.parametrize("layout", ["fortran", "strided", "reversed", "readonly"])
@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_any_memory_layout(name: str, layout: str) -> None:
    case = _BY_NAME[name]
    args = case.draw(0)
    positions = tuple(case.float_positions())
    expected = s2sgrad.gradient(case.fn, wrt=positions)(*args)
    others = [_strided(a, layout) for a in args]
    got = s2sgrad.gradient(case.fn, wrt=positions)(*others)
    for i, g, e in zip(positions, got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14, err_msg=f"argument {i}")


# --- in-place updates: Python's value and gradient, or a TransformError --------------------


IN_PLACE = [
    (S.inplace_through_alias, [A(4), A(4)], None),
    (S.inplace_on_argument, [A(4), A(4)], None),
    (S.inplace_through_view, [A(3, 3), A(3, 3)], None),
    (S.inplace_through_reshape, [A(2, 3)], None),
    (S.inplace_through_callee_view, [A(3, 3), A(3, 3)], None),
    (S.inplace_through_tuple_unpack, [A(4), A(4)], None),
    (S.inplace_through_chained_assignment, [A(4), A(4)], None),
    (S.inplace_on_fresh_array_shared, [A(4), A(4)], None),
    (S.inplace_through_astype, [A(4), A(4)], None),
    (S.inplace_on_fresh_array, [A(4), A(4)], None),
    (S.inplace_callee_returns_argument, [A(3)], None),
    (S.inplace_read_view_after_update, [A(3)], None),
    (S.inplace_update_through_slice, [A(3)], None),
    (S.inplace_update_through_reshape, [A(2, 2)], None),
    (S.out_argument, [U(-2.0, 2.0, 6)], None),
    (S.out_argument_fresh, [U(-2.0, 2.0, 6)], None),
    (S.fill_diagonal_then_sum, [A(3, 2)], None),
    (S.sort_in_place, [A(5), A(5)], None),
    (S.fill_in_place, [A(4)], None),
    (S.copy_into, [A(4), A(4)], None),
    (S.element_write_through_copy, [A(3)], None),
    (S.element_write_through_reshape, [A(2, 2)], None),
    (S.element_write_through_slice, [A(3)], None),
    (S.element_write_after_view, [A(3)], None),
    (S.element_write_into_global, [A(3)], None),
    (S.element_write_into_global_alias, [A(3)], None),
    (S.element_write_through_tuple_alias, [A(3)], None),
    (S.element_write_through_chained_alias, [A(3)], None),
    (S.element_write_through_callee_view, [A(3)], None),
]


def _calls_on_copies(fn: Callable) -> Callable:
    def call(*args: Any) -> Any:
        return fn(*_copies(args))
    return call


@pytest.mark.parametrize("fn, specs", [
    pytest.param(fn, specs, id=fn.__name__,
                 marks=[pytest.mark.xfail(strict=True, reason=why)] if why else [])
    for fn, specs, why in IN_PLACE])
def test_in_place_update_is_numpy_or_refused(fn: Callable, specs: list) -> None:
    rng = np.random.default_rng(zlib.crc32(fn.__name__.encode()))
    args = [spec.draw(rng) for spec in specs]
    wrt = tuple(range(len(args)))
    try:
        value, grads = s2sgrad.value_and_grad(fn, wrt=wrt)(*_copies(args))
    except s2sgrad.TransformError as exc:
        assert any(word in str(exc) for word in ("place", "out=", "share", "view", "elements")), \
            str(exc)
        return
    python = _calls_on_copies(fn)
    assert np.isclose(value, python(*args), rtol=1e-12), "value differs from Python's"
    for i, g in zip(wrt, grads, strict=True):
        np.testing.assert_allclose(g, numeric_gradient(python, args, i), rtol=1e-5, atol=1e-6,
                                   err_msg=f"gradient of argument {i}")


# --- a callee rebound after the first call ------------------------------------------------


REBINDINGS = {
    # what is rebound: (the function that uses it, the namespace, the name, the new value)
    "module function": (sl.callee_rebound, sl, "_rebindable", sl._rebindable_alternative),
    "alias of a NumPy function": (sl.alias_rebound, sl, "rebindable_activation", np.sin),
    "function of an imported module": (sl.module_attribute_rebound, helpers, "rebindable",
                                       helpers.rebindable_alternative),
}
@pytest.mark.parametrize("what", REBINDINGS)
def test_rebinding_a_callee_is_seen(what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Re-running a notebook cell or reloading a module rebinds what a function calls.
    fn, namespace, name, new = REBINDINGS[what]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4)
    assert_gradient_matches(fn, [x], 0, s2sgrad.gradient(fn)(x), rng)
    monkeypatch.setattr(namespace, name, new)
    value, grad = s2sgrad.value_and_grad(fn)(x)
    assert np.isclose(value, fn(x)), "the value of the old callee"
    assert_gradient_matches(fn, [x], 0, grad, rng)


# --- the table covers the catalogue ---------------------------------------------------------


def test_every_catalogue_function_has_an_entry() -> None:
    public = {name for name, fn in vars(sl).items()
              if inspect.isfunction(fn) and not name.startswith("_")
              and fn.__module__ == sl.__name__}
    covered = {case.fn.__name__ for case in TABLE} | {fn.__name__ for fn, _, _ in IN_PLACE}
    covered |= {fn.__name__ for fn, _, _, _ in REBINDINGS.values()}  # their own test
    covered.add("keyword_only_parameter")  # its own test
    assert public - covered == set(), "catalogue functions without an entry"
    assert len(public) >= 80
    assert sl.softplus is helpers.softplus
