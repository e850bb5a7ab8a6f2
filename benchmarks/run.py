#!/usr/bin/env python
"""Time value+grad of s2sgrad against a hand-written NumPy gradient and peer AD libraries.

    python benchmarks/run.py              # full run
    python benchmarks/run.py --quick      # smoke run: short timings, one cold-start sample
    python benchmarks/run.py --only mlp   # one workload (scalar, logistic, mlp, first-call)
    python benchmarks/run.py --only mixture   # elementwise, 10^6 floats; with torch.compile
                                              # and s2sgrad's code on jax.numpy in jax.jit
    python benchmarks/run.py --only mlp-jvp,mlp-hvp,rnn-jvp,rnn-hvp,second-order-first-call
    python benchmarks/run.py --only jacobian-field,jacobian-logits,hessian-potential
    python benchmarks/run.py --only horner,scalar-tensor,index-loop,ode-loop,closure-per-step
    python benchmarks/run.py --only nn-mlp   # nn.Sequential vs @grad function vs hand vs torch

The ``*-jvp`` and ``*-hvp`` tables time forward mode (value and directional derivative) and
Hessian-vector products against hand-written NumPy ones, PyTorch (torch.func and eager) and
JAX; ``second-order-first-call`` is the cold start of s2sgrad's first jvp and hvp. The loop
workloads (``horner``, ``index-loop``, ``ode-loop``) time Python loops over floats and array
elements; ``scalar-tensor`` is the cost of s2sgrad's Tensor path (``f(x).backward()``) next
to its functional one and PyTorch's; ``ode-loop`` also reports the memory the forward keeps
for the reverse, per step; ``closure-per-step`` is a training loop that builds a new closure
every step (time per step, first step, memory growth). ``nn-mlp`` is a classifier written the
PyTorch way (``nn.Sequential`` of ``nn.Linear``, ``CrossEntropyLoss``, ``.backward()``, AdamW)
next to the same loss as one ``@grad`` NumPy function, by hand and in PyTorch: loss and
gradients, and a whole training step. Every value+grad table ends with
s2sgrad's first call (transform + compile + run) measured in a fresh process.

Everything runs in this one process (the first-call measurements of s2sgrad run in fresh
subprocesses so that nothing is cached). Each library is limited to one thread. Before a
library's value+grad (jvp, hvp) is timed, it is compared with the hand-written one; a
mismatch is printed loudly. Exit status: 1 if s2sgrad's result disagrees with the hand-written
one, 2 if s2sgrad is present but fails on a workload, 0 otherwise (also when s2sgrad's
``value_and_grad`` does not exist yet). Timings never affect the exit status.
"""

from __future__ import annotations

import os
import sys

# Thread limits must be in the environment before NumPy, PyTorch or JAX load their runtimes.
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
for _var in _THREAD_VARS:
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = " ".join(filter(None, [
    os.environ.get("XLA_FLAGS", ""),
    "--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1",
]))
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _pin_to_one_cpu() -> str:
    """Bind this process (and the subprocesses it starts) to a single CPU.

    XLA's CPU runtime ignores the thread flags above and sizes its thread pool from the CPUs
    the process may run on, so pinning is what keeps JAX to one core; it also caps every other
    library at one core whatever threads it starts. Returns a description for the header.
    """
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity on this platform)"
    allowed = sorted(os.sched_getaffinity(0))
    cpu = allowed[-1]
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu} of {len(allowed)} allowed"


_PINNING = "not pinned (--no-pin)"
if __name__ == "__main__" and "--no-pin" not in sys.argv:
    _PINNING = _pin_to_one_cpu()

import argparse
import datetime
import gc
import importlib
import importlib.util
import itertools
import json
import math
import platform
import statistics
import subprocess
import time
import traceback
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH_DIR)
# Measure the working tree's s2sgrad, whether or not a copy is installed.
sys.path.insert(1, ROOT)
if BENCH_DIR not in sys.path:
    sys.path.insert(0, BENCH_DIR)

import workloads as W

RTOL, ATOL = 1e-7, 1e-10  # gradient agreement with the hand-written baseline (float64)
# A call slower than SLOW_CALL s is timed with a few single calls instead of calibrated
# batches; a library whose call would take longer than the budget (BUDGET s, QUICK_BUDGET s
# with --quick) is not run at the larger sizes of the same workload.
SLOW_CALL = 0.5
BUDGET, QUICK_BUDGET = 5.0, 1.0


# ---------------------------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------------------------


@dataclass
class Workload:
    name: str
    title: str
    fn: Callable  # the plain function s2sgrad differentiates
    hand: Callable  # hand-written value and gradient
    make_numpy_like: Callable  # factory over autograd.numpy / jax.numpy
    make_torch: Callable  # factory over torch
    inputs: tuple
    wrt: tuple[int, ...]
    target: float | None  # s2sgrad value+grad / hand-written must not exceed this (None: no target)
    # per library name: a builder (lib, workload) -> Impl replacing make_impl's default
    adapters: dict = field(default_factory=dict)
    # code run in a fresh process to time s2sgrad's first call (see FIRST_CALL_CODE)
    first_call: str | None = None
    first_call_warm: int = 20  # calls per warm batch there
    size: str = ""  # the size, for workloads run at several sizes ("n=2,000")
    torch_compile: bool = False  # a torch.compile row after PyTorch's eager one
    # a row of s2sgrad's value_and_grad of make_numpy_like(jax.numpy) in jax.jit, after JAX's
    # jit row: s2sgrad's generated code calling jax.numpy, compiled by XLA
    s2sgrad_jax: bool = False


def vg_first_call(fn: str, inputs: str, wrt: tuple[int, ...], hand: str) -> str:
    """FIRST_CALL_CODE's setup for ``value_and_grad(W.<fn>, wrt)(*<inputs>)``, checked against
    the hand-written ``W.<hand>``."""
    return f"""
fn = W.{fn}
args = {inputs}
def build():
    vg = sg.value_and_grad(fn, wrt={wrt!r})
    return lambda: vg(*args)
def plain():
    return fn(*args)
def check(result):
    return differ(W.{hand}(*args), result)
"""


def build_workloads() -> list[Workload]:
    return [
        Workload("scalar", "scalar: 114 float operations (+ - * / ** and math.*) on 4 floats, "
                 "grad wrt all 4",
                 W.scalar_fn, W.scalar_value_and_grad, W.make_scalar_fn, W.make_scalar_fn,
                 W.scalar_inputs(), W.WRT["scalar"], 2.0,
                 first_call=vg_first_call("scalar_fn", "W.scalar_inputs()", W.WRT["scalar"],
                                          "scalar_value_and_grad"), first_call_warm=2000),
        Workload("logistic", "logistic: mean binary cross-entropy, X 1000x100, grad wrt (w, b)",
                 W.logistic_loss, W.logistic_value_and_grad, W.make_logistic_loss,
                 W.make_torch_logistic_loss, W.logistic_inputs(), W.WRT["logistic"], 1.1,
                 first_call=vg_first_call("logistic_loss", "W.logistic_inputs()",
                                          W.WRT["logistic"], "logistic_value_and_grad"),
                 first_call_warm=200),
        Workload("mlp", "mlp: batch 128, 784 -> 256 tanh -> 10, softmax cross-entropy, "
                 "grad wrt (W1, b1, W2, b2)",
                 W.mlp_loss, W.mlp_value_and_grad, W.make_mlp_loss, W.make_torch_mlp_loss,
                 W.mlp_inputs(), W.WRT["mlp"], 1.02,
                 first_call=vg_first_call("mlp_loss", "W.mlp_inputs()", W.WRT["mlp"],
                                          "mlp_value_and_grad"), first_call_warm=5),
        Workload("mixture", "mixture: sum(where(x > 0, a, b) + 0.5 a b), a = exp(-x^2) sin(3 y), "
                 "b = log1p(x^2 + y^2), x and y of 10^6, grad wrt (x, y)",
                 W.mixture_loss, W.mixture_value_and_grad, W.make_mixture_loss,
                 W.make_mixture_loss, W.mixture_inputs(), W.WRT["mixture"], 1.1,
                 first_call=vg_first_call("mixture_loss", "W.mixture_inputs()",
                                          W.WRT["mixture"], "mixture_value_and_grad"),
                 first_call_warm=2, torch_compile=True, s2sgrad_jax=True),
        Workload("horner", "horner: Horner's rule over 100 coefficients, a Python loop over a "
                 "list of floats, grad wrt (x, coeffs)",
                 W.horner, W.horner_value_and_grad, W.make_horner, W.make_horner,
                 W.horner_inputs(), W.WRT["horner"], 1.5,
                 first_call=vg_first_call("horner", "W.horner_inputs()", W.WRT["horner"],
                                          "horner_value_and_grad"), first_call_warm=50),
    ]


def _jax_loop(make: Callable, static: tuple[int, ...] = ()) -> Callable:
    """An adapter for JAX rows whose function is written with ``lax.fori_loop`` (``make(jax)``):
    the jit row compiles it with the integer arguments at ``static`` static; the no-jit row is
    not run (a fori_loop is compiled even outside jit, so it would time the same code
    after retracing it on every call)."""

    def build(lib: Library, wl: Workload) -> Impl:
        if lib.module is None:
            raise Unavailable(lib.reason)
        if not lib.extra["jit"]:
            raise Unavailable("not run: the loop is a lax.fori_loop, compiled even without jit "
                              "(see the jit row)")
        jax, jnp = lib.module, lib.extra["np"]
        f = make(jax)
        vg = jax.jit(jax.value_and_grad(f, argnums=wl.wrt), static_argnums=static)
        f = jax.jit(f, static_argnums=static)
        jargs = [a if i in static else jnp.asarray(a, dtype=jnp.float64)
                 for i, a in enumerate(wl.inputs)]
        ready = jax.block_until_ready
        return Impl(lambda: ready(f(*jargs)), lambda: ready(vg(*jargs)), _plain,
                    note="(lax.fori_loop)")

    return build


INDEX_SIZES, QUICK_INDEX_SIZES = (2_000, 8_000, 32_000), (2_000, 8_000)


def build_index_loop(n: int) -> Workload:
    return Workload("index-loop", f"index-loop: y[i] += v * x[i] element by element, n = {n:,}, "
                    "grad wrt (x, v)",
                    W.index_loop, W.index_loop_value_and_grad, W.make_index_loop,
                    W.make_torch_index_loop, W.index_loop_inputs(n=n), W.WRT["index_loop"], None,
                    adapters={"jax": _jax_loop(W.make_jax_index_loop)},
                    first_call=vg_first_call("index_loop", f"W.index_loop_inputs(n={n})",
                                             W.WRT["index_loop"], "index_loop_value_and_grad"),
                    first_call_warm=1, size=f"n={n:,}")


def build_ode_loop(steps: int = 10_000) -> Workload:
    return Workload("ode-loop", f"ode-loop: {steps:,} Euler steps of h = h + dt * tanh(A @ h + b), "
                    "h of 4, loss sum(h * h) at the end, grad wrt (A, b, h0)",
                    W.ode_loop, W.ode_loop_value_and_grad, W.make_ode_loop, W.make_ode_loop,
                    W.ode_inputs(steps=steps), W.WRT["ode_loop"], None,
                    adapters={"jax": _jax_loop(W.make_jax_ode_loop, static=(4,))},
                    first_call=vg_first_call("ode_loop", f"W.ode_inputs(steps={steps})",
                                             W.WRT["ode_loop"], "ode_loop_value_and_grad"),
                    first_call_warm=1)


# ---------------------------------------------------------------------------------------------
# Libraries
# ---------------------------------------------------------------------------------------------


class Unavailable(Exception):
    """A library or one of its rows cannot run; the message is shown in the table."""


@dataclass
class Library:
    name: str
    label: str  # row label, with the version
    module: Any = None
    reason: str = ""  # why the library is unavailable
    extra: dict = field(default_factory=dict)


def _import(name: str, label: str) -> Library:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        return Library(name, label, reason=f"import failed: {type(exc).__name__}: {exc}")
    if spec is None:
        return Library(name, label, reason="not installed")
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - any import failure is reported in the table
        msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
        return Library(name, label, reason=f"import failed: {type(exc).__name__}: {msg}")
    version = getattr(module, "__version__", "")
    return Library(name, f"{label} {version}".strip(), module)


def load_libraries() -> list[Library]:
    libs = []

    sg = _import("s2sgrad", "s2sgrad")
    if sg.module is not None and not hasattr(sg.module, "value_and_grad"):
        sg.reason = (f"unavailable: s2sgrad {getattr(sg.module, '__version__', '?')} has no "
                     "value_and_grad yet")
        sg.module = None
    elif sg.module is None:
        sg.reason = f"unavailable: {sg.reason}"
    else:
        sg.extra["path"] = os.path.dirname(sg.module.__file__)
    libs.append(sg)

    ag = _import("autograd", "autograd")
    if ag.module is not None:
        import autograd.numpy as anp

        ag.extra["np"] = anp
        ag.label = f"autograd {_dist_version('autograd')}"
    libs.append(ag)

    torch = _import("torch", "PyTorch")
    if torch.module is not None:
        torch.module.set_num_threads(1)
        try:
            torch.module.set_num_interop_threads(1)
        except RuntimeError:  # only settable before the first parallel work
            pass
        torch.label += " (eager)"
    libs.append(torch)

    jax = _import("jax", "JAX")
    for jit in (True, False):
        lib = Library("jax", jax.label + (" (jit)" if jit else " (no jit)"), jax.module, jax.reason)
        lib.extra["jit"] = jit
        if jax.module is not None:
            jax.module.config.update("jax_enable_x64", True)
            import jax.numpy as jnp

            lib.extra["np"] = jnp
        libs.append(lib)

    libs.append(_import("tangent", "tangent"))
    return libs


def _dist_version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001
        return ""


@dataclass
class Impl:
    """Zero-argument callables for one library on one workload, inputs already converted."""

    forward: Callable[[], Any]
    value_and_grad: Callable[[], Any]
    to_numpy: Callable[[Any], tuple[float, tuple]]  # value_and_grad's result -> NumPy
    note: str = ""  # shown after the row's figures


def _plain(out):
    value, grads = out
    return float(value), tuple(np.asarray(g, dtype=np.float64) for g in grads)


def make_impl(lib: Library | None, wl: Workload) -> Impl:
    """Build the calls of ``lib`` (None: the hand-written baseline) for ``wl``."""
    args = wl.inputs
    if lib is None:
        fn, hand = wl.fn, wl.hand
        return Impl(lambda: fn(*args), lambda: hand(*args), _plain)

    adapter = wl.adapters.get(lib.name)
    if adapter is not None:
        return adapter(lib, wl)
    if lib.module is None:
        raise Unavailable(lib.reason)
    name = lib.name

    if name == "s2sgrad":
        fn = wl.fn
        vg = lib.module.value_and_grad(fn, wrt=wl.wrt)
        return Impl(lambda: fn(*args), lambda: vg(*args), _plain)

    if name == "autograd":
        import autograd

        f = wl.make_numpy_like(lib.extra["np"])
        vg = autograd.value_and_grad(f, argnum=wl.wrt)
        return Impl(lambda: f(*args), lambda: vg(*args), _plain)

    if name == "torch":
        torch = lib.module
        f = wl.make_torch(torch)

        def tensor(a):
            return torch.tensor(a, dtype=torch.float64)

        # an int (a count of steps) stays a Python int; everything else becomes a tensor
        consts = [a if isinstance(a, int) else tensor(a) for a in args]
        leaves = [a if isinstance(a, int) else tensor(a).requires_grad_(i in wl.wrt)
                  for i, a in enumerate(args)]
        params = [leaves[i] for i in wl.wrt]

        def forward():
            return f(*consts)

        def value_and_grad():
            out = f(*leaves)
            return out, torch.autograd.grad(out, params)

        def to_numpy(out):
            value, grads = out
            return float(value.item()), tuple(g.detach().numpy() for g in grads)

        return Impl(forward, value_and_grad, to_numpy)

    if name == "torch-compile":
        return torch_compile_impl(lib.module, wl)

    if name == "s2sgrad-jax":
        jax, jnp = lib.extra["jax"], lib.extra["np"]
        # the function as written with jax.numpy; s2sgrad reads its source, as the NumPy one's
        f = wl.make_numpy_like(jnp)
        forward, vg = jax.jit(f), jax.jit(lib.module.value_and_grad(f, wrt=wl.wrt))
        jargs = [jnp.asarray(a, dtype=jnp.float64) for a in args]
        ready = jax.block_until_ready
        return Impl(lambda: ready(forward(*jargs)), lambda: ready(vg(*jargs)), _plain,
                    note="(s2sgrad's code on jax.numpy, compiled by XLA)")

    if name == "jax":
        jax = lib.module
        jnp = lib.extra["np"]
        f = wl.make_numpy_like(jnp)
        vg = jax.value_and_grad(f, argnums=wl.wrt)
        if lib.extra["jit"]:
            f, vg = jax.jit(f), jax.jit(vg)
        jargs = [jnp.asarray(a, dtype=jnp.float64) for a in args]
        ready = jax.block_until_ready
        return Impl(lambda: ready(f(*jargs)), lambda: ready(vg(*jargs)), _plain)

    if name == "tangent":
        # tangent reads the function's source and returns the gradient only; the value is
        # computed by the forward it generates, so the row times the gradient call.
        df = lib.module.grad(wl.fn, wrt=wl.wrt, preserve_result=True)
        fn = wl.fn

        def to_numpy(out):
            *grads, value = out
            return float(value), tuple(np.asarray(g, dtype=np.float64) for g in grads)

        return Impl(lambda: fn(*args), lambda: df(*args), to_numpy)

    raise Unavailable(f"no adapter for {name}")


TORCH_COMPILE_QUICK = "not run with --quick (compiling takes seconds; see a full run)"


def table_libraries(wl: Workload, libs: list[Library], compile_torch: bool = True
                    ) -> list[Library]:
    """The rows of ``wl``'s table: ``libs``, and for a workload with ``torch_compile`` a
    ``torch-compile`` row after PyTorch's (unavailable when PyTorch is, or when
    ``compile_torch`` is False); for one with ``s2sgrad_jax``, when ``libs`` has s2sgrad and
    JAX, an ``s2sgrad-jax`` row after JAX's jit row (``s2sgrad_jax_library``)."""
    out = []
    sg = _library(libs, "s2sgrad")
    for lib in libs:
        out.append(lib)
        if lib.name == "torch" and wl.torch_compile:
            label = lib.label.replace(" (eager)", "") + " (compile)"
            reason = lib.reason if lib.module is None else ""
            if not reason and not compile_torch:
                reason = TORCH_COMPILE_QUICK
            out.append(Library("torch-compile", label, None if reason else lib.module, reason))
        if lib.name == "jax" and lib.extra.get("jit") and wl.s2sgrad_jax and sg is not None:
            out.append(s2sgrad_jax_library(sg, lib))
    return out


S2SGRAD_JAX = "in jax.jit (XLA)"  # the s2sgrad-jax row's label, after s2sgrad's
S2SGRAD_ROWS = frozenset({"s2sgrad", "s2sgrad-jax"})  # rows whose failure is s2sgrad's


def s2sgrad_jax_library(sg: Library, jax: Library) -> Library:
    """The ``s2sgrad-jax`` row: s2sgrad's module, with JAX's module and ``jax.numpy`` in
    ``extra``; unavailable (with the reason) when s2sgrad or JAX is."""
    if sg.module is None:
        reason = sg.reason
    elif jax.module is None:
        reason = f"unavailable: JAX {jax.reason}"
    else:
        reason = ""
    return Library("s2sgrad-jax", f"{sg.label} {S2SGRAD_JAX}", None if reason else sg.module,
                   reason, {"jax": jax.module, "np": jax.extra.get("np")})


def torch_compile_impl(torch: Any, wl: Workload) -> Impl:
    """``torch.compile`` (inductor, which writes C++ for the CPU and compiles it) of the
    forward and of ``torch.func.grad_and_value``: one graph for the value and the gradient,
    as ``jax.jit(jax.value_and_grad)``. Both are compiled here by a first call each; a
    missing C++ compiler or a failing compile makes the row unavailable (one line, the
    reason), and the compile time is the row's note."""
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler

        get_cpp_compiler()
    except Exception as exc:  # noqa: BLE001 - reported in the row
        raise Unavailable(f"not available: inductor finds no C++ compiler "
                          f"({type(exc).__name__}: {_first_line(exc)})") from None
    f = wl.make_torch(torch)
    targs = [a if isinstance(a, int) else torch.tensor(a, dtype=torch.float64)
             for a in wl.inputs]
    try:
        t0 = time.perf_counter()
        forward = torch.compile(f)
        forward(*targs)
        t1 = time.perf_counter()
        vg = torch.compile(torch.func.grad_and_value(f, argnums=wl.wrt))
        vg(*targs)
        t2 = time.perf_counter()
    except Exception as exc:  # noqa: BLE001 - reported in the row
        raise Unavailable(f"not available: torch.compile failed: {type(exc).__name__}: "
                          f"{_first_line(exc)}") from None

    def to_numpy(out):
        grads, value = out
        return float(value.item()), tuple(g.detach().numpy() for g in grads)

    return Impl(lambda: forward(*targs), lambda: vg(*targs), to_numpy,
                note=f"(compile: forward {t1 - t0:.1f} s, value+grad {t2 - t1:.1f} s)")


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


@dataclass
class Timing:
    median: float  # seconds per call
    batches: list[float]

    @property
    def spread(self) -> float:
        """(slowest - fastest batch) / median: how much the machine disturbed this row."""
        return (max(self.batches) - min(self.batches)) / self.median


def _calibrate(call: Callable[[], Any], min_time: float, batches: int) -> int:
    """Calls per batch so that ``batches`` batches last ``min_time`` s.

    Calls are first repeated (doubling) until a run takes >= 1/20 of ``min_time``: this
    also warms caches and JIT compilers.
    """
    repeat = itertools.repeat
    call()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in repeat(None, n):
            call()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time / 20 or elapsed > 1.0:
            break
        n *= 2
    return max(1, math.ceil(min_time / batches / (elapsed / n)))


def _batch(call: Callable[[], Any], n: int) -> float:
    t0 = time.perf_counter()
    for _ in itertools.repeat(None, n):
        call()
    return (time.perf_counter() - t0) / n


def measure(call: Callable[[], Any], min_time: float, batches: int) -> Timing:
    """Median per-call time over ``batches`` batches that together last >= ``min_time`` s."""
    n = _calibrate(call, min_time, batches)
    gc.collect()
    gc.disable()
    try:
        times = [_batch(call, n) for _ in range(batches)]
    finally:
        gc.enable()
    return Timing(statistics.median(times), times)


def measure_paired(base: Callable[[], Any], call: Callable[[], Any], min_time: float,
                   batches: int) -> tuple[Timing, float]:
    """Time ``call`` in batches interleaved with batches of ``base`` (order alternating).

    Returns ``call``'s timing and the median over batch pairs of call / base: on a machine
    whose load drifts, a ratio of neighbouring batches is steadier than a ratio of medians
    taken seconds apart.
    """
    n_base = _calibrate(base, min_time, batches)
    n_call = _calibrate(call, min_time, batches)
    times, ratios = [], []
    gc.collect()
    gc.disable()
    try:
        for i in range(batches):
            if i % 2:
                t = _batch(call, n_call)
                b = _batch(base, n_base)
            else:
                b = _batch(base, n_base)
                t = _batch(call, n_call)
            times.append(t)
            ratios.append(t / b)
    finally:
        gc.enable()
    return Timing(statistics.median(times), times), statistics.median(ratios)


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    """One call: (seconds, result)."""
    t0 = time.perf_counter()
    out = call()
    return time.perf_counter() - t0, out


def single_calls(call: Callable[[], Any], count: int, first: float | None = None) -> Timing:
    """``count`` single calls (one of them ``first``, already made, if given), gc disabled:
    how a call that lasts seconds is timed."""
    times = [] if first is None else [first]
    gc.collect()
    gc.disable()
    try:
        while len(times) < count:
            times.append(timed(call)[0])
    finally:
        gc.enable()
    return Timing(statistics.median(times), times)


def measure_any(call: Callable[[], Any], min_time: float, batches: int,
                budget: float = BUDGET, first: float | None = None,
                base: Callable[[], Any] | None = None,
                compiles: bool = True) -> tuple[Timing, float | None, str]:
    """Time ``call`` whatever it lasts: (timing, paired ratio or None, note).

    ``first`` is the time of a call already made (the checked one); if it is not given, one
    call is made as a warm-up. A call that lasts less than SLOW_CALL s is timed in
    calibrated batches (interleaved with ``base``'s when given, as ``measure_paired``). A
    slower one is timed with single calls: a warm call (unless ``compiles`` is False, when
    the first call did no transform or compilation and is a warm call already), and if that
    is slow too, it and a few more (3 in all, at most ``batches``; none more when it took
    over ``budget`` s) are the timing.
    """
    if first is None:
        first = timed(call)[0]
    if first > SLOW_CALL:
        warm = timed(call)[0] if compiles else first
        if warm > SLOW_CALL:
            count = 1 if warm > budget else min(batches, 3)
            timing = single_calls(call, count, warm)
            return timing, None, f"({count} call{'s' if count > 1 else ''})"
    if base is not None:
        timing, ratio = measure_paired(base, call, min_time, batches)
        return timing, ratio, ""
    return measure(call, min_time, batches), None, ""


# ---------------------------------------------------------------------------------------------
# Correctness
# ---------------------------------------------------------------------------------------------


def compare(ref: tuple[float, tuple], got: tuple[float, tuple]) -> str:
    """'' if ``got`` matches the hand-written ``ref``, else a description of the difference."""
    ref_value, ref_grads = ref
    value, grads = got
    problems = []
    if not np.allclose(value, ref_value, rtol=RTOL, atol=ATOL):
        problems.append(f"value {value!r} != {ref_value!r}")
    if len(grads) != len(ref_grads):
        problems.append(f"{len(grads)} gradients, expected {len(ref_grads)}")
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        if np.shape(g) != np.shape(r):
            problems.append(f"grad[{i}] shape {np.shape(g)}, expected {np.shape(r)}")
        elif not np.allclose(g, r, rtol=RTOL, atol=ATOL):
            err = np.max(np.abs(np.asarray(g) - r))
            problems.append(f"grad[{i}] max abs error {err:.3g} (max |ref| {np.max(np.abs(r)):.3g})")
    return "; ".join(problems)


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    """µs below 10 ms, ms below 10 s, else s."""
    if seconds < 0.01:
        return f"{fmt_us(seconds)} µs"
    if seconds < 10:
        return f"{seconds * 1e3:,.1f} ms"
    return f"{seconds:,.1f} s"


def fmt_us(seconds: float) -> str:
    us = seconds * 1e6
    if us < 10:
        return f"{us:.2f}"
    if us < 1000:
        return f"{us:.1f}"
    return f"{us:,.0f}"


@dataclass
class Row:
    label: str
    forward: Timing | None = None
    vg: Timing | None = None
    note: str = ""  # shown instead of (or after) the figures
    paired: float | None = None  # value+grad / hand-written, from interleaved batches
    library: str = ""  # the Library's name ("" for the hand-written row)


COLS = "{:<30} {:>10} {:>7} {:>11} {:>7} {:>8} {:>7}"


def print_block(wl: Workload, rows: list[Row], base: Row, out) -> None:
    print(f"\n== {wl.title} ==", file=out)
    print(COLS.format("", "forward", "", "value+grad", "", "", "").rstrip(), file=out)
    print(COLS.format("library", "µs", "×NumPy", "µs", "×hand", "×fwd", "spread"), file=out)
    for row in rows:
        if row.forward is None and row.vg is None:
            print(f"{row.label:<30} {row.note}", file=out)
            continue
        cells = [row.label]
        if row.forward is not None:
            cells += [fmt_us(row.forward.median), f"{row.forward.median / base.forward.median:.2f}"]
        else:
            cells += ["-", ""]
        if row.vg is not None:
            own = f"{row.vg.median / row.forward.median:.2f}" if row.forward else ""
            ratio = row.paired if row.paired is not None else row.vg.median / base.vg.median
            cells += [fmt_us(row.vg.median), f"{ratio:.2f}", own,
                      f"{100 * row.vg.spread:.0f}%"]
        else:
            cells += ["-", "", "", ""]
        line = COLS.format(*cells)
        if row.note:
            line += f"  {row.note}"
        print(line, file=out)


def s2sgrad_jax_line(wl: Workload, rows: list[Row], base: Row) -> str:
    """The ``s2sgrad-jax`` row's value+grad over the hand-written one (the interleaved
    ratio), over s2sgrad's on NumPy and over torch.compile's (ratios of medians), for those
    rows the table has."""
    by_library = {row.library: row for row in rows}
    xla = by_library["s2sgrad-jax"]
    head = f"s2sgrad in jax.jit on {wl.name}"
    if xla.vg is None:
        return f"{head}: not measured ({xla.note})"
    ratio = xla.paired if xla.paired is not None else xla.vg.median / base.vg.median
    parts = [f"{ratio:.2f}x hand-written"]
    for name, what in (("s2sgrad", "s2sgrad on NumPy"), ("torch-compile", "PyTorch (compile)")):
        other = by_library.get(name)
        if other is None:
            continue
        if other.vg is None:
            parts.append(f"{what} not measured ({other.note})")
        else:
            parts.append(f"{xla.vg.median / other.vg.median:.2f}x {what}")
    return f"{head}: value+grad = {', '.join(parts)} (no target is set for this row)"


def verdict(wl: Workload, s2s: Row, base: Row) -> str:
    if wl.target is None:
        if s2s.vg is None:
            return f"s2sgrad {wl.name}: not measured ({s2s.note})"
        ratio = s2s.paired if s2s.paired is not None else s2s.vg.median / base.vg.median
        where = f" at {wl.size}" if wl.size else ""
        return (f"s2sgrad {wl.name}{where}: value+grad = {ratio:.2f}x hand-written "
                "(no target is set for this workload)")
    if s2s.vg is None:
        return f"verdict {wl.name}: s2sgrad not measured ({s2s.note}); target <= {wl.target:g}x"
    ratio = s2s.paired if s2s.paired is not None else s2s.vg.median / base.vg.median
    ok = "meets" if ratio <= wl.target else "MISSES"
    return (f"verdict {wl.name}: s2sgrad value+grad = {ratio:.2f}x hand-written "
            f"(target <= {wl.target:g}x): {ok} the target")


# ---------------------------------------------------------------------------------------------
# Forward mode and second order: jvp and Hessian-vector product tables
# ---------------------------------------------------------------------------------------------


@dataclass
class SecondOrder:
    """A jvp or hvp workload: ``hand(*inputs, *moving tangents)`` is the baseline."""

    name: str  # mlp-jvp, rnn-hvp, ...
    title: str
    kind: str  # "jvp" or "hvp"
    model: str  # "mlp" or "rnn": workloads sharing a model share its forward timing
    fn: Callable  # the plain function s2sgrad differentiates
    hand: Callable  # hand-written jvp -> (value, value_dot) or hvp -> tuple of arrays
    make_numpy_like: Callable  # factory over jax.numpy
    make_torch: Callable  # factory over torch
    inputs: tuple
    tangents: tuple  # one per input; None for an input held fixed
    outputs: tuple[str, ...]  # names of the compared results, for messages

    @property
    def moving(self) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.tangents) if t is not None)


def build_second_order() -> list[SecondOrder]:
    mlp_in, rnn_in = W.mlp_inputs(), W.rnn_inputs()
    mlp_t = W.tangents_for(mlp_in, W.WRT["mlp"])
    rnn_t = W.tangents_for(rnn_in, W.WRT["rnn"])
    mlp = "mlp loss (batch 128, 784 -> 256 tanh -> 10)"
    rnn = "rnn loss (tanh RNN, 50 steps, hidden 64, input 32)"
    return [
        SecondOrder("mlp-jvp", f"mlp-jvp: {mlp}, value and derivative along a tangent of "
                    "(W1, b1, W2, b2)", "jvp", "mlp", W.mlp_loss, W.mlp_jvp, W.make_mlp_loss,
                    W.make_torch_mlp_loss, mlp_in, mlp_t, ("value", "value_dot")),
        SecondOrder("mlp-hvp", f"mlp-hvp: {mlp}, Hessian wrt (W1, b1, W2, b2) times a vector",
                    "hvp", "mlp", W.mlp_loss, W.mlp_hvp, W.make_mlp_loss,
                    W.make_torch_mlp_loss, mlp_in, mlp_t, ("Hv[W1]", "Hv[b1]", "Hv[W2]",
                                                            "Hv[b2]")),
        SecondOrder("rnn-jvp", f"rnn-jvp: {rnn}, value and derivative along a tangent of "
                    "(W, U, b)", "jvp", "rnn", W.rnn_loss, W.rnn_jvp, W.make_rnn_loss,
                    W.make_rnn_loss, rnn_in, rnn_t, ("value", "value_dot")),
        SecondOrder("rnn-hvp", f"rnn-hvp: {rnn}, Hessian wrt (W, U, b) times a vector", "hvp",
                    "rnn", W.rnn_loss, W.rnn_hvp, W.make_rnn_loss, W.make_rnn_loss, rnn_in,
                    rnn_t, ("Hv[W]", "Hv[U]", "Hv[b]")),
    ]


SECOND_ORDER_NAMES = ("mlp-jvp", "mlp-hvp", "rnn-jvp", "rnn-hvp")


@dataclass
class Call:
    """One row's timed call (zero arguments, inputs already converted) and how to read it."""

    call: Callable[[], Any]
    to_numpy: Callable[[Any], tuple]  # the call's result -> tuple of NumPy arrays


def _arrays(values) -> tuple:
    return tuple(np.asarray(v, dtype=np.float64) for v in values)


def second_order_calls(lib: Library, wl: SecondOrder) -> list[tuple[str, Callable[[], Call]]]:
    """The rows ``lib`` contributes to ``wl``: (label, builder) pairs; a builder raises
    Unavailable (or any error, shown in the table) instead of returning a Call."""
    jvp = wl.kind == "jvp"
    if lib.name == "s2sgrad":
        def build_s2sgrad():
            if lib.module is None:
                raise Unavailable(lib.reason)
            op = getattr(lib.module, wl.kind, None)
            if op is None:
                raise Unavailable(f"unavailable: s2sgrad "
                                  f"{getattr(lib.module, '__version__', '?')} has no {wl.kind}")
            fn, args, tangents = wl.fn, wl.inputs, wl.tangents
            read = _arrays if jvp else (lambda out: _arrays(out if isinstance(out, tuple)
                                                            else (out,)))
            return Call(lambda: op(fn, args, tangents), read)

        what = "jvp(f, primals, tangents)" if jvp else "hvp(f, primals, tangents)"
        return [(f"{lib.label}: {what}", build_s2sgrad)]

    if lib.name == "torch":
        def unavailable():
            raise Unavailable(lib.reason)

        if lib.module is None:
            return [(f"{lib.label}", unavailable)]
        base = lib.label.replace(" (eager)", "")
        if jvp:
            return [(f"{base}: torch.func.jvp", lambda: _torch_func(lib.module, wl)),
                     (f"{base}: eager forward AD (dual tensors)",
                      lambda: _torch_eager(lib.module, wl))]
        return [(f"{base}: torch.func.jvp(torch.func.grad)", lambda: _torch_func(lib.module, wl)),
                (f"{base}: eager double backward", lambda: _torch_eager(lib.module, wl))]

    if lib.name == "jax":
        what = "jax.jvp" if jvp else "jax.jvp(jax.grad)"
        return [(f"{lib.label}: {what}", lambda: _jax_call(lib, wl))]
    return []  # autograd and tangent have no rows here


def _torch_split(torch, wl: SecondOrder):
    def tensor(a):
        return torch.tensor(a, dtype=torch.float64)

    moving = wl.moving
    fixed = [i for i in range(len(wl.inputs)) if i not in moving]
    # the tables differentiate with respect to the leading inputs; the others follow
    assert moving == tuple(range(len(moving))), moving
    params = tuple(tensor(wl.inputs[i]) for i in moving)
    tangents = tuple(tensor(wl.tangents[i]) for i in moving)
    consts = tuple(tensor(wl.inputs[i]) for i in fixed)
    return params, tangents, consts


def _torch_func(torch, wl: SecondOrder) -> Call:
    """torch.func: jvp (forward mode), or jvp of grad (forward-over-reverse) for the hvp."""
    from torch.func import grad, jvp

    f = wl.make_torch(torch)
    params, tangents, consts = _torch_split(torch, wl)

    def of_params(*p):
        return f(*p, *consts)

    if wl.kind == "jvp":
        return Call(lambda: jvp(of_params, params, tangents),
                    lambda out: (out[0].item(), out[1].item()))
    g = grad(of_params, argnums=tuple(range(len(params))))
    return Call(lambda: jvp(g, params, tangents),
                lambda out: tuple(t.detach().numpy() for t in out[1]))


def _torch_eager(torch, wl: SecondOrder) -> Call:
    """Eager PyTorch: dual tensors for the jvp; for the hvp, double backward
    (reverse-over-reverse: the gradient with create_graph=True, then the gradient of
    <gradient, v>)."""
    f = wl.make_torch(torch)
    params, tangents, consts = _torch_split(torch, wl)
    if wl.kind == "jvp":
        import torch.autograd.forward_ad as fwad

        def jvp_call():
            with fwad.dual_level():
                out = f(*(fwad.make_dual(p, t) for p, t in zip(params, tangents)), *consts)
                primal, tangent = fwad.unpack_dual(out)
            return primal, tangent

        return Call(jvp_call, lambda out: (out[0].item(), out[1].item()))

    leaves = tuple(p.clone().requires_grad_(True) for p in params)

    def hvp_call():
        out = f(*leaves, *consts)
        grads = torch.autograd.grad(out, leaves, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(grads, tangents))
        return torch.autograd.grad(dot, leaves)

    return Call(hvp_call, lambda out: tuple(t.detach().numpy() for t in out))


def _jax_call(lib: Library, wl: SecondOrder) -> Call:
    """jax.jvp, or jax.jvp of jax.grad (forward-over-reverse) for the hvp; jitted or not."""
    if lib.module is None:
        raise Unavailable(lib.reason)
    jax = lib.module
    jnp = lib.extra["np"]
    f = wl.make_numpy_like(jnp)
    moving = wl.moving
    assert moving == tuple(range(len(moving))), moving
    fixed = [i for i in range(len(wl.inputs)) if i not in moving]
    params = tuple(jnp.asarray(wl.inputs[i], dtype=jnp.float64) for i in moving)
    tangents = tuple(jnp.asarray(wl.tangents[i], dtype=jnp.float64) for i in moving)
    consts = tuple(jnp.asarray(wl.inputs[i], dtype=jnp.float64) for i in fixed)
    argnums = tuple(range(len(params)))

    if wl.kind == "jvp":
        def op(params, tangents, consts):
            return jax.jvp(lambda *p: f(*p, *consts), params, tangents)

        def read(out):
            return (out[0], out[1])
    else:
        def op(params, tangents, consts):
            g = jax.grad(lambda *p: f(*p, *consts), argnums=argnums)
            return jax.jvp(g, params, tangents)[1]

        def read(out):
            return tuple(out)
    if lib.extra["jit"]:
        op = jax.jit(op)
    ready = jax.block_until_ready
    return Call(lambda: ready(op(params, tangents, consts)), lambda out: _arrays(read(out)))


def compare_outputs(ref: tuple, got: tuple, names: tuple[str, ...]) -> str:
    """'' if ``got`` matches the hand-written ``ref`` (tuples of arrays), else the difference."""
    problems = []
    if len(got) != len(ref):
        return f"{len(got)} results, expected {len(ref)} ({', '.join(names)})"
    for name, g, r in zip(names, got, ref):
        if np.shape(g) != np.shape(r):
            problems.append(f"{name} shape {np.shape(g)}, expected {np.shape(r)}")
        elif not np.allclose(g, r, rtol=RTOL, atol=ATOL):
            err = np.max(np.abs(np.asarray(g) - r))
            problems.append(f"{name} max abs error {err:.3g} (max |ref| {np.max(np.abs(r)):.3g})")
    return "; ".join(problems)


@dataclass
class Row2:
    label: str
    timing: Timing | None = None
    note: str = ""
    paired: float | None = None  # s2sgrad / hand-written, from interleaved batches


COLS2 = "{:<52} {:>10} {:>7} {:>7} {:>7}"


def time_row(lib: Library, row: Row2, attempt: Callable[[], tuple[Callable[[], Any], Any]],
             check: Callable[[Any], str], base_call: Callable[[], Any], min_time: float,
             batches: int, status: dict) -> None:
    """One library's row of a table: ``attempt`` builds its call and makes the first one
    (transform, trace, compile) -> (call, result); ``check`` says what is wrong with the
    result ("" if nothing); then the call is timed, s2sgrad's interleaved with ``base_call``.
    A failure is the row's note (and, for s2sgrad, the run's status)."""
    try:
        call, got = attempt()
    except Unavailable as exc:
        row.note = str(exc)
        return
    except Exception as exc:  # noqa: BLE001 - a failing library is a table entry
        row.note = f"error: {type(exc).__name__}: {_first_line(exc)}"
        if lib.name == "s2sgrad":
            status["s2sgrad_error"] = True
            traceback.print_exc()
        return
    problem = check(got)
    if problem:
        row.note = problem
        if lib.name == "s2sgrad":
            status["s2sgrad_mismatch"] = True
        return
    if lib.name == "s2sgrad":
        row.timing, row.paired = measure_paired(base_call, call, min_time, batches)
    else:
        row.timing = measure(call, min_time, batches)


def run_second_order(wl: SecondOrder, libs: list[Library], min_time: float, batches: int,
                     status: dict, forwards: dict) -> None:
    """One jvp or hvp table: the hand-written baseline, s2sgrad, PyTorch and JAX rows."""
    out = sys.stdout
    args = wl.inputs
    moving = [wl.tangents[i] for i in wl.moving]
    hand, fn = wl.hand, wl.fn

    def base_call():
        return hand(*args, *moving)

    ref = _arrays(base_call())
    if wl.kind == "jvp" and not np.isclose(ref[0], fn(*args), rtol=1e-12, atol=0):
        raise SystemExit(f"{wl.name}: hand-written value {ref[0]!r} != function value "
                         f"{fn(*args)!r}")
    if wl.model not in forwards:
        forwards[wl.model] = measure(lambda: fn(*args), min_time, batches)
    forward = forwards[wl.model]
    what = "jvp (forward mode by hand)" if wl.kind == "jvp" else "hvp (R-operator by hand)"
    base = Row2(f"NumPy, hand-written {what}", measure(base_call, min_time, batches))
    rows = [base]
    s2s_row = None
    for lib in libs:
        for label, build in second_order_calls(lib, wl):
            row = Row2(label)
            rows.append(row)
            if lib.name == "s2sgrad":
                s2s_row = row

            def attempt(build=build):
                impl = build()
                return impl.call, impl.to_numpy(impl.call())

            def check(got, label=label):
                problem = compare_outputs(ref, got, wl.outputs)
                if problem:
                    banner = "!" * 78
                    print(f"\n{banner}\n{label} on {wl.name}: {wl.kind} disagrees with the "
                          f"hand-written one:\n  {problem}\n{banner}", file=out)
                    return f"{wl.kind.upper()} MISMATCH, not timed"
                return ""

            time_row(lib, row, attempt, check, base_call, min_time, batches, status)

    print(f"\n== {wl.title} ==", file=out)
    print(COLS2.format("library", "µs", "×hand", "×fwd", "spread"), file=out)
    for row in rows:
        if row.timing is None:
            print(f"{row.label:<52} {row.note}", file=out)
            continue
        ratio = row.paired if row.paired is not None else row.timing.median / base.timing.median
        print(COLS2.format(row.label, fmt_us(row.timing.median), f"{ratio:.2f}",
                           f"{row.timing.median / forward.median:.2f}",
                           f"{100 * row.timing.spread:.0f}%"), file=out)
    print(f"(×fwd: over the plain NumPy function, {fmt_us(forward.median)} µs)", file=out)
    if s2s_row is not None:
        if s2s_row.timing is None:
            print(f"s2sgrad {wl.name}: not measured ({s2s_row.note})", file=out)
        else:
            print(f"s2sgrad {wl.name}: {wl.kind} = {s2s_row.paired:.2f}x the hand-written "
                  f"{wl.kind} (no target is set for forward mode and second order)", file=out)
    out.flush()


# ---------------------------------------------------------------------------------------------
# Jacobians: every entry of the derivative of a vector function, against a hand-written one


def build_jacobians() -> list[tuple[str, str, Callable, Callable, Callable, tuple]]:
    """(name, title, function, hand-written Jacobian, factory over an array module, inputs);
    each Jacobian is with respect to the first input."""
    return [
        ("jacobian-field", "jacobian-field: tanh(A x) + x sin(x), x of 200: 200 x 200",
         W.field, W.field_jacobian, W.make_field, W.field_inputs()),
        ("jacobian-logits", ("jacobian-logits: one example's logits (784 -> 256 tanh -> 10) "
                             "wrt the input: 10 x 784"), W.logits, W.logits_jacobian, W.make_logits,
         W.logits_inputs()),
        ("hessian-potential", ("hessian-potential: sum(log cosh(A x)) + sum(x^4) / 4, x of "
                               "30: 30 x 30 (the Jacobian of the gradient)"), W.potential, W.potential_hessian,
         W.make_potential, W.field_inputs(n=30)),
        ("hessian-potential-200", ("hessian-potential-200: the same potential, x of 200: "
                                   "200 x 200"), W.potential, W.potential_hessian,
         W.make_potential, W.field_inputs(n=200)),
    ]


JACOBIAN_NAMES = ("jacobian-field", "jacobian-logits", "hessian-potential",
                  "hessian-potential-200")


def jacobian_calls(lib: Library, fn: Callable, make: Callable, args: tuple
                   ) -> list[tuple[str, Callable[[], Callable[[], Any]]]]:
    """(label, builder) rows ``lib`` contributes; a builder returns the timed call."""
    def unavailable():
        raise Unavailable(lib.reason)

    if lib.module is None:
        return [(lib.label, unavailable)] if lib.name in ("s2sgrad", "torch", "jax") else []
    hessian = make is W.make_potential
    if lib.name == "s2sgrad" and hessian:
        sg = lib.module
        from s2sgrad import api

        def one_by_one():
            return np.stack([sg.hvp(fn, args, (e, None)) for e in np.eye(args[0].size)], -1)

        return [(f"{lib.label}: hessian (batched, forward over reverse)",
                 lambda: lambda: sg.hessian(fn)(*args)),
                (f"{lib.label}: an hvp per column", lambda: one_by_one)]
    if lib.name == "s2sgrad":
        sg = lib.module
        from s2sgrad import api
        return [
            (f"{lib.label}: jacobian (mode chosen)", lambda: lambda: sg.jacobian(fn)(*args)),
            (f"{lib.label}: jacfwd (batched columns)", lambda: lambda: sg.jacfwd(fn)(*args)),
            (f"{lib.label}: jacrev (batched rows)", lambda: lambda: sg.jacrev(fn)(*args)),
            (f"{lib.label}: a vjp per row", lambda: lambda: api._rows_one_by_one(
                fn, args, (0,), fn(*args))[0]),
            (f"{lib.label}: a jvp per column", lambda: lambda: api._columns_one_by_one(
                fn, args, (0,), np.shape(fn(*args)))[0]),
        ]
    if lib.name == "torch":
        torch = lib.module
        base = lib.label.replace(" (eager)", "")
        f = make(torch)
        t_args = tuple(torch.tensor(a, dtype=torch.float64) for a in args)

        def torch_row(transform):
            def build():
                jac = transform(f)
                return lambda: jac(*t_args).numpy()
            return build

        if hessian:
            return [(f"{base}: torch.func.hessian", torch_row(torch.func.hessian))]
        return [(f"{base}: torch.func.jacfwd", torch_row(torch.func.jacfwd)),
                (f"{base}: torch.func.jacrev", torch_row(torch.func.jacrev))]
    if lib.name == "jax":
        jax, jnp = lib.module, lib.extra["np"]
        f = make(jnp)
        j_args = tuple(jnp.asarray(a) for a in args)

        def jax_row(transform):
            def build():
                jac = jax.jit(transform(f))
                return lambda: np.asarray(jac(*j_args).block_until_ready())
            return build

        if hessian:
            return [(f"{lib.label}: jax.jit(jax.hessian)", jax_row(jax.hessian))]
        return [(f"{lib.label}: jax.jit(jax.jacfwd)", jax_row(jax.jacfwd)),
                (f"{lib.label}: jax.jit(jax.jacrev)", jax_row(jax.jacrev))]
    return []


def run_jacobian(spec: tuple, libs: list[Library], min_time: float, batches: int,
                 status: dict) -> None:
    """One Jacobian table: the hand-written baseline, then every library's rows."""
    _, title, fn, hand, make, args = spec
    ref = hand(*args)
    base = Row2("NumPy, hand-written Jacobian", measure(lambda: hand(*args), min_time, batches))
    rows = [base]
    for lib in libs:
        for label, build in jacobian_calls(lib, fn, make, args):
            row = Row2(label)
            rows.append(row)

            def attempt(build=build):
                call = build()
                return call, np.asarray(call(), dtype=np.float64)

            def check(got):
                agrees = got.shape == ref.shape and np.allclose(got, ref, rtol=1e-7, atol=1e-10)
                return "" if agrees else "JACOBIAN MISMATCH, not timed"

            time_row(lib, row, attempt, check, lambda: hand(*args), min_time, batches, status)
    print(f"\n== {title} ==")
    print(COLS2.format("library", "µs", "×hand", "", "spread"))
    for row in rows:
        if row.timing is None:
            print(f"{row.label:<52} {row.note}")
            continue
        ratio = row.paired if row.paired is not None else row.timing.median / base.timing.median
        print(COLS2.format(row.label, fmt_us(row.timing.median), f"{ratio:.2f}", "",
                           f"{100 * row.timing.spread:.0f}%"))
    sys.stdout.flush()


SECOND_FIRST_CALL_CODE = r"""
import json, statistics, sys, time
t0 = time.perf_counter()
sys.path[:0] = [{bench!r}, {root!r}]
import numpy as np
t1 = time.perf_counter()
import s2sgrad as sg
t2 = time.perf_counter()
import workloads as W
args = W.mlp_inputs()
tangents = W.tangents_for(args, W.WRT["mlp"])
moving = [t for t in tangents if t is not None]
op = sg.{kind}
t3 = time.perf_counter()
out = op(W.mlp_loss, args, tangents)
t4 = time.perf_counter()
warm = []
for _ in range({n}):
    s = time.perf_counter()
    op(W.mlp_loss, args, tangents)
    warm.append(time.perf_counter() - s)
ref = W.mlp_{kind}(*args, *moving)
got = out if isinstance(out, tuple) else (out,)
ok = len(got) == len(ref) and all(np.allclose(g, r, rtol=1e-7, atol=1e-10)
                                  for g, r in zip(got, ref))
print(json.dumps(dict(s2sgrad_import=t2 - t1, first_call=t4 - t3,
                      warm=statistics.median(warm), ok=bool(ok))))
"""


def run_second_order_first_call(lib: Library, samples: int, status: dict) -> None:
    print("\n== s2sgrad second-order first-call cost: s2sgrad.jvp and s2sgrad.hvp of mlp_loss, "
          "each in fresh processes ==")
    if lib.module is None:
        print(f"{'s2sgrad':<30} {lib.reason}")
        return
    results = {}
    for kind in ("jvp", "hvp"):
        if not hasattr(lib.module, kind):
            print(f"{'s2sgrad':<30} unavailable: s2sgrad has no {kind}")
            return
        code = SECOND_FIRST_CALL_CODE.format(bench=BENCH_DIR, root=ROOT, kind=kind,
                                             n=5 if samples > 1 else 2)
        runs = []
        for _ in range(samples):
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  cwd=ROOT, env=os.environ.copy(), check=False)
            if proc.returncode != 0:
                print(f"s2sgrad.{kind}: error in the fresh process:\n{proc.stderr.strip()}")
                status["s2sgrad_error"] = True
                return
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        results[kind] = runs
    print(f"median of {samples} fresh process{'es' if samples > 1 else ''} for each:")
    med = {kind: {k: statistics.median(r[k] for r in runs) for k in ("s2sgrad_import",
                                                                       "first_call", "warm")}
           for kind, runs in results.items()}
    imports = statistics.median(r["s2sgrad_import"] for runs in results.values() for r in runs)
    print(f"  {'import s2sgrad':<48}{imports * 1e3:8.1f} ms")
    for kind, what in (("jvp", "first jvp: transform + compile f_jvp, run"),
                       ("hvp", "first hvp: f_jvp, its adjoint, compile, run")):
        m = med[kind]
        print(f"  {what:<48}{m['first_call'] * 1e3:8.1f} ms   (a warm call: "
              f"{m['warm'] * 1e3:.2f} ms)")
    bad = [kind for kind, runs in results.items() if not all(r["ok"] for r in runs)]
    if bad:
        banner = "!" * 78
        print(f"{banner}\ns2sgrad's first {', '.join(bad)} of mlp_loss disagrees with the "
              f"hand-written one\n{banner}")
        status["s2sgrad_mismatch"] = True


# ---------------------------------------------------------------------------------------------
# Value+grad tables, and s2sgrad's first call in a fresh process
# ---------------------------------------------------------------------------------------------


def run_workload(wl: Workload, libs: list[Library], min_time: float, batches: int,
                 status: dict, first_call_samples: int = 0, skip: dict | None = None,
                 budget: float = BUDGET, grows: float | None = None,
                 compile_torch: bool = True) -> list[Row]:
    """One value+grad table: the hand-written baseline, then every library's row; returns
    the rows. A library listed in ``skip`` (label -> reason) is not run. When the workload
    is run next at a size ``grows`` times larger, a library whose call would then take more
    than ``budget`` s even if its time grew only in proportion is added to ``skip``. With
    ``first_call_samples``, s2sgrad's first call is then measured in as many fresh processes
    (``wl.first_call``). ``compile_torch`` False leaves the torch.compile row out
    (``table_libraries``)."""
    out = sys.stdout
    skip = {} if skip is None else skip
    base_impl = make_impl(None, wl)
    ref = base_impl.to_numpy(base_impl.value_and_grad())
    fwd_value = float(base_impl.forward())
    if not np.isclose(fwd_value, ref[0], rtol=1e-12, atol=0):
        raise SystemExit(f"{wl.name}: hand-written value {ref[0]!r} != function value {fwd_value!r}")
    base = Row("NumPy, hand-written gradient",
               measure_any(base_impl.forward, min_time, batches, budget, compiles=False)[0],
               measure_any(base_impl.value_and_grad, min_time, batches, budget,
                           compiles=False)[0])
    rows = [base]
    s2s_row = None
    for lib in table_libraries(wl, libs, compile_torch):
        row = Row(lib.label, library=lib.name)
        is_s2sgrad = lib.name in S2SGRAD_ROWS
        if lib.name == "s2sgrad":
            s2s_row = row
        rows.append(row)
        if lib.label in skip:
            row.note = skip[lib.label]
            continue
        try:
            impl = make_impl(lib, wl)
            if lib.name == "s2sgrad":
                # s2sgrad leaves the function as written: its forward is the NumPy row's.
                row.forward = base.forward
            else:
                row.forward = measure_any(impl.forward, min_time, batches, budget)[0]
            # first call: transform/trace/compile
            first, got = timed(impl.value_and_grad)
            got = impl.to_numpy(got)
        except Unavailable as exc:
            row.forward = None
            row.note = str(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - a failing library is a table entry
            row.forward = None
            row.note = f"error: {type(exc).__name__}: {_first_line(exc)}"
            if is_s2sgrad:
                status["s2sgrad_error"] = True
                traceback.print_exc()
            continue
        problem = compare(ref, got)
        if problem:
            row.note = "GRADIENT MISMATCH, not timed"
            banner = "!" * 78
            print(f"\n{banner}\n{lib.label} on {wl.name}: gradient disagrees with the "
                  f"hand-written one:\n  {problem}\n{banner}", file=out)
            if is_s2sgrad:
                status["s2sgrad_mismatch"] = True
            continue
        paired_with = base_impl.value_and_grad if is_s2sgrad else None
        # s2sgrad and JAX transform or compile on the first call; autograd and PyTorch do not
        # (torch.compile's rows were compiled when they were built)
        compiles = lib.name in ("s2sgrad", "s2sgrad-jax", "jax", "tangent")
        row.vg, row.paired, calls = measure_any(impl.value_and_grad, min_time, batches, budget,
                                                first=first, base=paired_with,
                                                compiles=compiles)
        row.note = " ".join(filter(None, [impl.note, calls,
                                          "(gradient call)" if lib.name == "tangent" else ""]))
        if grows is not None and row.vg.median * grows > budget:
            skip[lib.label] = (f"not run: {row.vg.median:.2f} s per value+grad call at "
                               f"{wl.size}, so at least {row.vg.median * grows:.1f} s at the "
                               f"next size (over the {budget:g} s budget)")
    print_block(wl, rows, base, out)
    if s2s_row is not None:
        print(verdict(wl, s2s_row, base), file=out)
    if any(row.library == "s2sgrad-jax" for row in rows):
        print(s2sgrad_jax_line(wl, rows, base), file=out)
    if first_call_samples and wl.first_call:
        sg = _library(libs, "s2sgrad")
        if sg is not None and sg.module is not None:
            what = f"value_and_grad({wl.fn.__name__})" + (f" at {wl.size}" if wl.size else "")
            print(first_call_line(wl.first_call, first_call_samples, wl.first_call_warm, status,
                                  what=what), file=out)
    out.flush()
    return rows


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


FIRST_CALL_CODE = r"""
import json, statistics, sys, time
t0 = time.perf_counter()
sys.path[:0] = [{bench!r}, {root!r}]
import numpy as np
t1 = time.perf_counter()
import s2sgrad as sg
t2 = time.perf_counter()
import workloads as W


def differ(ref, got):
    # What differs between two (value, gradients) results ('' if nothing); the gradients are
    # a tuple of arrays, lists of floats or floats.
    problems = []
    if not np.allclose(float(got[0]), float(ref[0]), rtol=1e-7, atol=1e-10):
        problems.append(f"value {{got[0]!r}} != {{ref[0]!r}}")
    if len(got[1]) != len(ref[1]):
        return f"{{len(got[1])}} gradients, expected {{len(ref[1])}}"
    for i, (g, r) in enumerate(zip(got[1], ref[1])):
        g, r = np.asarray(g, dtype=float), np.asarray(r, dtype=float)
        if g.shape != r.shape or not np.allclose(g, r, rtol=1e-7, atol=1e-10):
            problems.append(f"grad[{{i}}] differs from the hand-written one")
    return "; ".join(problems)


{setup}
t3 = time.perf_counter()
call = build()
t4 = time.perf_counter()
result = call()
t5 = time.perf_counter()


def per_call(call, n):
    best = []
    for _ in range(5):
        s = time.perf_counter()
        for _ in range(n):
            call()
        best.append((time.perf_counter() - s) / n)
    return statistics.median(best)


problem = check(result)
warm = per_call(call, {n})
plain_time = per_call(plain, {n}) if plain is not None else None
print(json.dumps(dict(numpy=t1 - t0, s2sgrad_import=t2 - t1, build=t4 - t3, first_call=t5 - t4,
                      warm=warm, plain=plain_time, problem=problem)))
"""

# FIRST_CALL_CODE's setup for the compile probe: value_and_grad with respect to w, checked
# against central differences on every entry of w.
PROBE_SETUP = """
args = W.compile_probe_inputs()
fn = W.compile_probe
def build():
    vg = sg.value_and_grad(fn, wrt=0)
    return lambda: vg(*args)
def plain():
    return fn(*args)
def check(result):
    value, grad = result
    w, x = args
    eps = 1e-6
    fd = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        wp = w.copy(); wp[i] += eps
        wm = w.copy(); wm[i] -= eps
        fd[i] = (fn(wp, x) - fn(wm, x)) / (2 * eps)
    err = float(np.max(np.abs(np.asarray(grad) - fd)) / max(1.0, float(np.max(np.abs(fd)))))
    problems = []
    if abs(float(value) - float(fn(*args))) > 1e-12:
        problems.append(f"value {value!r} != {fn(*args)!r}")
    if err > 1e-6:
        problems.append(f"gradient disagrees with central differences (relative error {err:.3g})")
    return "; ".join(problems)
"""


def fresh_first_call(setup: str, samples: int, n: int) -> list[dict]:
    """Run FIRST_CALL_CODE with ``setup`` in ``samples`` fresh processes, ``n`` calls per
    warm batch; one dict of timings (seconds) and ``problem`` ('' if the result was right)
    per process. ``setup`` defines ``build()`` (returns the call), ``plain`` (a call of the
    plain function, or None) and ``check(result)``. Raises RuntimeError with the process's
    error output if it fails."""
    code = FIRST_CALL_CODE.format(bench=BENCH_DIR, root=ROOT, n=n, setup=setup)
    results = []
    for _ in range(samples):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=ROOT, env=os.environ.copy(), check=False)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip())
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return results


def _median(results: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in results)


def first_call_line(setup: str, samples: int, n: int, status: dict, what: str) -> str:
    """The line under a table: s2sgrad's first call of ``what`` in fresh processes."""
    try:
        results = fresh_first_call(setup, samples, n)
    except RuntimeError as exc:
        status["s2sgrad_error"] = True
        return f"s2sgrad first call, {what}: error in the fresh process:\n{exc}"
    problems = [r["problem"] for r in results if r["problem"]]
    if problems:
        status["s2sgrad_mismatch"] = True
        banner = "!" * 78
        return (f"{banner}\ns2sgrad's first call, {what}, in a fresh process is wrong: "
                f"{problems[0]}\n{banner}")
    first, warm = _median(results, "first_call"), _median(results, "warm")
    many = f"median of {samples} fresh processes" if samples > 1 else "one fresh process"
    return (f"s2sgrad first call, {what}: {first * 1e3:,.1f} ms (transform + compile + run, "
            f"{many}; a warm call there: {fmt_time(warm)})")


def run_first_call(lib: Library, samples: int, status: dict) -> None:
    print("\n== s2sgrad first-call cost: value_and_grad(compile_probe) in a fresh process "
          "(18-line NumPy function) ==")
    if lib.module is None:
        print(f"{'s2sgrad':<30} {lib.reason}")
        return
    try:
        results = fresh_first_call(PROBE_SETUP, samples, 200 if samples > 1 else 20)
    except RuntimeError as exc:
        print(f"{'s2sgrad':<30} error in the fresh process:\n{exc}")
        status["s2sgrad_error"] = True
        return
    med = {k: _median(results, k) for k in ("s2sgrad_import", "build", "first_call", "warm",
                                            "plain")}
    print(f"median of {samples} fresh process{'es' if samples > 1 else ''}:")
    print(f"  import s2sgrad                          {med['s2sgrad_import'] * 1e3:9.1f} ms")
    print(f"  sg.value_and_grad(fn, wrt=0)            {med['build'] * 1e3:9.1f} ms")
    print(f"  first call (transform + compile + run)  {med['first_call'] * 1e3:9.1f} ms")
    print(f"  build + first call                      "
          f"{(med['build'] + med['first_call']) * 1e3:9.1f} ms")
    print(f"  warm call                               {med['warm'] * 1e6:9.1f} µs"
          f"   (the plain function: {med['plain'] * 1e6:.1f} µs)")
    problems = [r["problem"] for r in results if r["problem"]]
    if problems:
        banner = "!" * 78
        print(f"{banner}\ns2sgrad on compile_probe: {problems[0]}\n{banner}")
        status["s2sgrad_mismatch"] = True


# ---------------------------------------------------------------------------------------------
# Loops, the Tensor path, memory: horner's Tensor path, the index loop at several sizes, the
# ODE's saved memory, a new closure every training step
# ---------------------------------------------------------------------------------------------


def _library(libs: list[Library], name: str) -> Library | None:
    return next((lib for lib in libs if lib.name == name), None)


def print_rows2(title: str, rows: list[Row2], base: Row2) -> None:
    """A table of one time column (µs per call, ×hand over ``base``, spread)."""
    print(f"\n== {title} ==")
    print(COLS2.format("library", "µs", "×hand", "", "spread").rstrip())
    for row in rows:
        if row.timing is None:
            print(f"{row.label:<52} {row.note}")
            continue
        ratio = row.paired if row.paired is not None else row.timing.median / base.timing.median
        line = COLS2.format(row.label, fmt_us(row.timing.median), f"{ratio:.2f}", "",
                            f"{100 * row.timing.spread:.0f}%")
        print(line + (f"  {row.note}" if row.note else ""))


def tensor_path(sg: Any, fn: Callable, args: tuple, wrt: tuple[int, ...]
                ) -> tuple[Callable[[], Any], Callable[[Any], tuple]]:
    """s2sgrad's PyTorch-style path: ``f = sg.grad(fn)``, the arguments at ``wrt`` Tensors
    with ``requires_grad``; the call clears their ``.grad``, runs ``out = f(...)`` and
    ``out.backward()``. Returns (call, read), ``read(out)`` -> (value, gradients)."""
    f = sg.grad(fn)
    tensors = [sg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) if i in wrt
               else a for i, a in enumerate(args)]
    leaves = [tensors[i] for i in wrt]

    def call():
        for t in leaves:
            t.grad = None
        out = f(*tensors)
        out.backward()
        return out

    def read(out):
        return float(out.item()), tuple(np.array(t.grad.numpy()) for t in leaves)

    return call, read


def torch_backward(torch: Any, fn: Callable, args: tuple, wrt: tuple[int, ...]
                   ) -> tuple[Callable[[], Any], Callable[[Any], tuple]]:
    """The same with PyTorch: tensors (float64) with ``requires_grad`` at ``wrt``, ``.grad``
    cleared, ``out = fn(...)``, ``out.backward()``."""
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=i in wrt)
               for i, a in enumerate(args)]
    leaves = [tensors[i] for i in wrt]

    def call():
        for t in leaves:
            t.grad = None
        out = fn(*tensors)
        out.backward()
        return out

    def read(out):
        return float(out.item()), tuple(t.grad.detach().numpy().copy() for t in leaves)

    return call, read


SCALAR_TENSOR_SETUP = """
x, coeffs = W.horner_inputs()
def build():
    f = sg.grad(W.horner)
    xt = sg.tensor(x, requires_grad=True)
    ct = sg.tensor(np.asarray(coeffs), requires_grad=True)
    def call():
        xt.grad = None
        ct.grad = None
        out = f(xt, ct)
        out.backward()
        return out.item(), (xt.grad.item(), ct.grad.numpy())
    return call
plain = None
def check(result):
    return differ(W.horner_value_and_grad(x, coeffs), result)
"""


def run_scalar_tensor(libs: list[Library], min_time: float, batches: int, status: dict,
                      first_call_samples: int = 0) -> None:
    """``horner`` and ``tiny`` through s2sgrad's Tensor path (``f(x).backward()``), next to
    ``value_and_grad`` on the same function and to PyTorch doing the same."""
    x, coeffs = W.horner_inputs()
    scalar_tensor_table(
        libs, "horner", W.horner, W.horner_value_and_grad, (x, coeffs),
        ((np.asarray(x), np.asarray(coeffs)), "x, coeffs arrays"), W.WRT["horner"],
        ("scalar-tensor: horner (100 coefficients) through the Tensor path: out = f(x, c); "
         "out.backward()"), "x a 0-d, c a 1-d Tensor", min_time, batches, status)
    scalar_tensor_table(
        libs, "tiny", W.tiny, W.tiny_value_and_grad, (0.7,), ((np.asarray(0.7),), "x 0-d array"),
        W.WRT["tiny"], "scalar-tensor: tiny(x) = x * x, the fixed cost of a call and its backward",
        "x a 0-d Tensor", min_time, batches, status)
    sg_lib = _library(libs, "s2sgrad")
    if first_call_samples and sg_lib is not None and sg_lib.module is not None:
        print(first_call_line(SCALAR_TENSOR_SETUP, first_call_samples, 50, status,
                              what="f(x, c).backward() with f = grad(horner)"))
    sys.stdout.flush()


def scalar_tensor_table(libs: list[Library], name: str, fn: Callable, hand: Callable,
                        args: tuple, arrays: tuple[tuple, str], wrt: tuple[int, ...],
                        title: str, tensors: str, min_time: float, batches: int,
                        status: dict) -> None:
    """One scalar-tensor table: ``fn`` called plainly, by ``value_and_grad`` on ``args`` and
    on ``arrays`` (the arguments as NumPy arrays, the data the Tensor path passes to the
    compiled code, and their description), through the Tensor path and by PyTorch; then the
    Tensor path's cost over ``value_and_grad`` on the same data."""
    sg_lib, torch_lib = _library(libs, "s2sgrad"), _library(libs, "torch")
    array_args, arrays_are = arrays
    ref = _plain(hand(*args))

    def base_call():
        return hand(*args)

    base = Row2("NumPy, hand-written value and gradient", measure(base_call, min_time, batches))
    plain = Row2(f"plain {name}(...) (no gradient)", measure(lambda: fn(*args), min_time, batches))
    rows = [base, plain]

    def check(got: tuple) -> str:
        problem = compare(ref, got)
        if problem:
            banner = "!" * 78
            print(f"\n{banner}\n{name}: a gradient disagrees with the hand-written one:\n  "
                  f"{problem}\n{banner}")
            return "GRADIENT MISMATCH, not timed"
        return ""

    calls: dict[str, Callable] = {}  # the timed call of each row, by label

    def row(lib: Library, label: str, build: Callable[[], tuple[Callable, Callable]]) -> Row2:
        """Time ``build()``'s (call, read) in a row of the table."""
        made = Row2(label)
        rows.append(made)

        def attempt():
            if lib.module is None:
                raise Unavailable(lib.reason)
            call, read = build()
            calls[label] = call
            return call, read(call())

        time_row(lib, made, attempt, check, base_call, min_time, batches, status)
        return made

    def functional(data: tuple) -> Callable[[], tuple[Callable, Callable]]:
        def build():
            vg = sg_lib.module.value_and_grad(fn, wrt=wrt)
            return (lambda: vg(*data)), _plain
        return build

    same_data = tensor_row = torch_row = None
    if sg_lib is not None:
        row(sg_lib, f"{sg_lib.label}: value_and_grad({name})", functional(args))
        same_data = row(sg_lib, f"{sg_lib.label}: value_and_grad, {arrays_are}",
                        functional(array_args))
        tensor_row = row(sg_lib, f"{sg_lib.label}: f(...).backward(), f = grad({name})",
                         lambda: tensor_path(sg_lib.module, fn, array_args, wrt))
    if torch_lib is not None:
        def torch_build():
            torch_fn = W.make_horner(torch_lib.module) if fn is W.horner else fn
            return torch_backward(torch_lib.module, torch_fn, args, wrt)

        torch_row = row(torch_lib, f"{torch_lib.label.replace(' (eager)', '')}: "
                                   f"{name}(...).backward()", torch_build)
    print_rows2(title, rows, base)
    if tensor_row is not None and tensor_row.timing and same_data.timing:
        # interleaved batches of the two s2sgrad paths: the Tensor path's cost over the
        # functional one is t * (1 - 1 / ratio), t the Tensor path's median
        timing, ratio = measure_paired(calls[same_data.label], calls[tensor_row.label],
                                       min_time, batches)
        extra = timing.median * (1.0 - 1.0 / ratio)
        torch_part = ""
        if torch_row is not None and torch_row.timing is not None:
            torch_part = (f"; PyTorch, the same through its tensors: "
                          f"{fmt_us(torch_row.timing.median)} µs per call")
        print(f"s2sgrad Tensor path ({tensors}) over value_and_grad on the same data: "
              f"{extra * 1e6:+,.1f} µs per call ({ratio:.2f}x, interleaved batches)"
              f"{torch_part}")


def run_index_loop(libs: list[Library], min_time: float, batches: int, status: dict,
                   sizes: tuple[int, ...] = INDEX_SIZES, budget: float = BUDGET,
                   first_call_samples: int = 0) -> dict[str, dict[int, float]]:
    """One index-loop table per size, then the time per element of each row at every size.
    A library whose call would take longer than ``budget`` s at the next size (judged from
    its time at this size, as if it grew in proportion to n) is not run at the larger sizes.
    Returns {row label: {n: seconds per element}}."""
    skip: dict = {}
    per_element: dict[str, dict[int, float]] = {}
    for k, n in enumerate(sizes):
        grows = sizes[k + 1] / n if k + 1 < len(sizes) else None
        rows = run_workload(build_index_loop(n), libs, min_time, batches, status,
                            first_call_samples=first_call_samples if k == 0 else 0, skip=skip,
                            budget=budget, grows=grows)
        for row in rows:
            per_element.setdefault(row.label, {})
            if row.vg is not None:
                per_element[row.label][n] = row.vg.median / n
    print("\nindex-loop: value+grad time per element (µs / n); equal across a row means linear "
          "in n, growing with n means worse than linear")
    print(f"{'library':<30}" + "".join(f"{'n=' + format(n, ','):>12}" for n in sizes)
          + f"{'last/first':>12}")
    for label, times in per_element.items():
        if not times:
            continue
        cells = "".join(f"{times[n] * 1e6:12.3f}" if n in times else f"{'-':>12}" for n in sizes)
        measured = [n for n in sizes if n in times]
        growth = times[measured[-1]] / times[measured[0]] if len(measured) > 1 else None
        print(f"{label:<30}{cells}" + (f"{growth:12.2f}" if growth else f"{'':>12}"))
    if skip:
        print(f"not run at the larger sizes (over the {budget:g} s budget): "
              f"{', '.join(skip)}")
    sys.stdout.flush()
    return per_element


def retained_bytes(make: Callable[[], Any]) -> tuple[int, Any]:
    """(bytes, result): what ``make()`` leaves allocated while its result is held, by
    tracemalloc (Python objects and NumPy's array data), garbage collected before and after.
    Make the call once beforehand so that one-off caches are not counted."""
    gc.collect()
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        if not tracing:
            tracemalloc.stop()
    return after - before, kept


def torch_saved_bytes(torch: Any, fn: Callable, args: tuple) -> tuple[int, int, Any]:
    """(bytes, tensors, output) of ``fn(*args)``: the data of the tensors its forward saves
    for backward (``torch.autograd.graph.saved_tensors_hooks``), each storage counted once.
    The graph's nodes and the tensors' headers are not counted: a lower bound."""
    storages: dict[int, int] = {}
    count = 0

    def pack(t):
        nonlocal count
        count += 1
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(*args)
    return sum(storages.values()), count, out


def saved_per_step(wl: Workload, libs: list[Library], status: dict
                   ) -> list[tuple[str, float | None, str]]:
    """For ``ode-loop``: (row, bytes kept for the reverse pass per step or None, note) for
    the hand-written forward sweep, s2sgrad's vjp, autograd's make_vjp and PyTorch."""
    args = wl.inputs
    steps = args[4]
    out: list[tuple[str, float | None, str]] = []
    W.ode_forward(*args)
    held, _ = retained_bytes(lambda: W.ode_forward(*args))
    out.append(("NumPy, hand-written: ode_forward", held / steps,
                "the states and the tanh values, two arrays"))
    ref = wl.hand(*args)[1]
    for lib in libs:
        if lib.name == "s2sgrad":
            if lib.module is None:
                out.append((lib.label, None, lib.reason))
                continue
            try:
                vjp = lib.module.vjp
                vjp(wl.fn, *args)
                held, (_, pullback) = retained_bytes(lambda vjp=vjp: vjp(wl.fn, *args))
                grads = pullback(1.0)[:3]
            except Exception as exc:  # noqa: BLE001 - reported in the line
                status["s2sgrad_error"] = True
                out.append((f"{lib.label}: vjp", None,
                            f"error: {type(exc).__name__}: {_first_line(exc)}"))
                continue
            if compare((0.0, ref), (0.0, grads)):
                status["s2sgrad_mismatch"] = True
                out.append((f"{lib.label}: vjp", None, "GRADIENT MISMATCH of the pullback"))
                continue
            out.append((f"{lib.label}: vjp(ode_loop, ...)", held / steps,
                        "the pullback's saved values (dt is differentiated too)"))
        elif lib.name == "autograd" and lib.module is not None:
            f = wl.make_numpy_like(lib.extra["np"])
            make_vjp = lib.module.make_vjp(f, argnum=wl.wrt)
            make_vjp(*args)
            held, _ = retained_bytes(lambda make_vjp=make_vjp: make_vjp(*args))
            out.append((f"{lib.label}: make_vjp", held / steps, "its graph of boxes and nodes"))
        elif lib.name == "torch" and lib.module is not None:
            torch = lib.module
            f = wl.make_torch(torch)
            targs = [a if isinstance(a, int) else torch.tensor(a, dtype=torch.float64)
                     .requires_grad_(i in wl.wrt) for i, a in enumerate(args)]
            nbytes, count, _ = torch_saved_bytes(torch, f, targs)
            out.append((f"{lib.label}: the forward", nbytes / steps,
                        (f"data of the {count:,} saved tensors only (saved_tensors_hooks; the "
                         "graph's nodes are not counted: a lower bound)")))
        elif lib.name == "jax" and lib.extra.get("jit"):
            out.append((lib.label, None, ("not measured: the residuals of the compiled loop "
                                          "are XLA buffers, which tracemalloc does not see")))
    return out


def peak_bytes(run: Callable[[], Any]) -> int:
    """The most ``run()`` has allocated at once, above what was allocated when it started
    (tracemalloc: Python objects and NumPy's array data)."""
    gc.collect()
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if not tracing:
            tracemalloc.stop()
    return peak - before


def checkpoint_rows(wl: Workload, s2sgrad: Any, min_time: float, batches: int,
                    status: dict, chunk: int = 100) -> list[tuple[str, str]]:
    """For ``ode-loop``: s2sgrad's value+grad of the loop written as chunks of ``chunk``
    steps, without and with ``s2sgrad.checkpoint`` on the chunk: (row, figures), the time
    (median of batches), the bytes held after the forward per step, and the peak during a
    whole value+grad, next to the plain loop's."""
    steps = wl.inputs[4]
    ref = wl.hand(*wl.inputs)
    ckpt = s2sgrad.checkpoint(W.ode_chunk)
    vjp = s2sgrad.vjp
    variants = [("ode_loop as written", wl.fn, ()),
                (f"chunks of {chunk}, no checkpoint", W.ode_loop_chunked, (W.ode_chunk, chunk)),
                (f"chunks of {chunk}, checkpoint(ode_chunk)", W.ode_loop_chunked,
                 (ckpt, chunk))]
    out = []
    for label, fn, extra in variants:
        args = (*wl.inputs, *extra)
        vg = s2sgrad.value_and_grad(fn, wl.wrt)
        got = vg(*args)
        if compare(ref, (got[0], got[1])):
            status["s2sgrad_mismatch"] = True
            out.append((label, "GRADIENT MISMATCH"))
            continue
        seconds = measure(lambda vg=vg, args=args: vg(*args), min_time, batches).median
        vjp(fn, *args)
        held, _ = retained_bytes(lambda fn=fn, args=args: vjp(fn, *args))
        peak = peak_bytes(lambda vg=vg, args=args: vg(*args))
        figures = (f"{seconds * 1e3:8.1f} ms {held / steps:8.1f} B/step held "
                   f"{peak / 1e3:9.1f} kB peak")
        out.append((label, figures))
    return out


def run_ode_loop(wl: Workload, libs: list[Library], min_time: float, batches: int,
                 status: dict, first_call_samples: int = 0, budget: float = BUDGET) -> None:
    run_workload(wl, libs, min_time, batches, status, first_call_samples=first_call_samples,
                 budget=budget)
    steps = wl.inputs[4]
    print(f"saved for the reverse pass: bytes held after the forward half (tracemalloc), per "
          f"step of {steps:,}")
    for label, per_step, note in saved_per_step(wl, libs, status):
        figure = f"{per_step:10,.1f} B/step" if per_step is not None else f"{'':>17}"
        print(f"  {label:<44}{figure}   {note}")
    s2s = next((lib for lib in libs if lib.name == "s2sgrad" and lib.module is not None), None)
    if s2s is not None:
        print("s2sgrad, memory for computation: value+grad time, bytes held after the "
              "forward per step, peak bytes during value+grad (tracemalloc)")
        for label, figures in checkpoint_rows(wl, s2s.module, min_time, batches, status):
            print(f"  {label:<44}{figures}")
    sys.stdout.flush()


def specialiser_tables() -> dict[str, int]:
    """Entries in s2sgrad's module-level tables of compiled functions, read from private
    attributes with getattr (a table that is not there is left out): ``function.
    _specialisers`` (one per function differentiated), ``api._derivatives`` (one per
    gradient(f) made), and the sizes ``compiled.cache_sizes()`` reports (tables kept
    outside the functions)."""
    out = {}
    for module, attr in (("s2sgrad.compiler.function", "_specialisers"), ("s2sgrad.api", "_derivatives")):
        table = getattr(sys.modules.get(module), attr, None)
        if table is not None and hasattr(table, "__len__"):
            out[f"{module.rsplit('.', 1)[-1]}.{attr}"] = len(table)
    sizes = getattr(sys.modules.get("s2sgrad.compiler.compiled"), "cache_sizes", None)
    if callable(sizes):
        out.update({f"compiled.{k}": int(v) for k, v in sizes().items()})
    return out


def memory_growth(step: Callable[[int], Any], marks: tuple[int, ...],
                  time_limit: float | None = None,
                  tables: Callable[[], dict] | None = None) -> list[tuple[int, int, dict]]:
    """Run ``step(k)`` for k = 0, 1, ... up to the last of ``marks``, tracing allocations; at
    each mark, (steps made, bytes held above what was held before the first step, after a
    garbage collection, ``tables()``). Stops early once ``time_limit`` s have passed, with a
    last entry at the step reached."""
    gc.collect()
    tracemalloc.start()
    out = []
    try:
        base = tracemalloc.get_traced_memory()[0]
        t0 = time.perf_counter()
        k = 0
        while k < max(marks):
            step(k)
            k += 1
            over = time_limit is not None and time.perf_counter() - t0 > time_limit
            if k in marks or over:
                gc.collect()
                out.append((k, tracemalloc.get_traced_memory()[0] - base,
                            tables() if tables else {}))
            if over:
                break
    finally:
        tracemalloc.stop()
    return out


CLOSURE_SETUP = """
X, y = W.lsq_batches()[0]
w = np.zeros(X.shape[1])
def build():
    return lambda: W.closure_step(w, X, y, 0.05, sg.gradient)
plain = None
def check(result):
    ref = W.hand_step(w, X, y, 0.05)
    return "" if np.allclose(result, ref, rtol=1e-9, atol=1e-12) else "the step differs"
"""


def fmt_bytes(n: float) -> str:
    for unit, size in (("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {unit}"
    return f"{n:,.0f} B"


def run_closure_per_step(libs: list[Library], min_time: float, batches: int, status: dict,
                         quick: bool = False, first_call_samples: int = 0,
                         marks: tuple[int, int] | None = None, steps_timed: int | None = None,
                         time_limit: float | None = None) -> None:
    """Gradient descent with a new closure every step: time per step (first and later),
    next to a hand-written step and to the same step without the closure; then the memory
    held after ``marks`` steps and s2sgrad's table sizes."""
    title = ("closure-per-step: gradient descent on least squares (batches 32x8), the objective "
             "a new closure over the batch every step")
    sg_lib = _library(libs, "s2sgrad")
    marks = marks or ((200, 2_000) if quick else (1_000, 10_000))
    steps_timed = steps_timed or (30 if quick else 200)
    time_limit = time_limit or (60.0 if quick else 300.0)
    data = W.lsq_batches()
    lr = 0.05
    w0 = np.zeros(data[0][0].shape[1])
    X0, y0 = data[0]
    base = Row2("NumPy, hand-written gradient step",
                measure(lambda: W.hand_step(w0, X0, y0, lr), min_time, batches))
    rows = [base]
    if sg_lib is None or sg_lib.module is None:
        rows.append(Row2("s2sgrad", note=sg_lib.reason if sg_lib else "not loaded"))
        print_rows2(title, rows, base)
        return
    sg = sg_lib.module
    closure_row = Row2(f"{sg_lib.label}: gradient(objective)(w), new closure")
    argument_row = Row2(f"{sg_lib.label}: gradient(lsq_loss)(w, X, y)")
    rows += [closure_row, argument_row]
    times: list[float] = []
    try:
        w = w0
        ref = w0
        gc.collect()
        gc.disable()
        try:
            for k in range(steps_timed):
                X, y = data[k % len(data)]
                t, w = timed(lambda w=w, X=X, y=y: W.closure_step(w, X, y, lr, sg.gradient))
                times.append(t)
                ref = W.hand_step(ref, X, y, lr)
        finally:
            gc.enable()
        if not np.allclose(w, ref, rtol=1e-9, atol=1e-12):
            status["s2sgrad_mismatch"] = True
            closure_row.note = "MISMATCH: the weights differ from the hand-written steps'"
        else:
            later = times[1:]
            closure_row.timing = Timing(statistics.median(later), later)
            closure_row.note = f"(median of steps 2-{steps_timed})"
        step = W.argument_step(w0, X0, y0, lr, sg.gradient)
        if not np.allclose(step, W.hand_step(w0, X0, y0, lr), rtol=1e-9, atol=1e-12):
            status["s2sgrad_mismatch"] = True
            argument_row.note = "MISMATCH: the step differs from the hand-written one"
        else:
            argument_row.timing = measure(lambda: W.argument_step(w0, X0, y0, lr, sg.gradient),
                                          min_time, batches)
            argument_row.note = "(the batch as arguments, no closure)"
    except Exception as exc:  # noqa: BLE001 - a failing library is a table entry
        status["s2sgrad_error"] = True
        traceback.print_exc()
        closure_row.note = f"error: {type(exc).__name__}: {_first_line(exc)}"
    print_rows2(title, rows, base)
    if closure_row.timing is None:
        return
    print(f"s2sgrad closure steps in this process: the first {times[0] * 1e3:,.1f} ms, the "
          f"second {times[1] * 1e3:,.1f} ms, the median of steps 2-{steps_timed} "
          f"{closure_row.timing.median * 1e3:,.2f} ms")

    state = {"w": w0, "h": w0}

    def closure(k):
        X, y = data[k % len(data)]
        state["w"] = W.closure_step(state["w"], X, y, lr, sg.gradient)

    def hand(k):
        X, y = data[k % len(data)]
        state["h"] = W.hand_step(state["h"], X, y, lr)

    grown = memory_growth(closure, marks, time_limit, specialiser_tables)
    flat = memory_growth(hand, marks, time_limit)
    names = list(grown[0][2]) if grown else []
    print("memory held after k steps (tracemalloc, after gc, above the start of the run) and "
          "the entries in s2sgrad's tables\n(private attributes, read with getattr; counted "
          "over the whole process):")
    print(f"  {'steps':>8} {'closure steps':>15} {'hand steps':>12}" +
          "".join(f" {name:>24}" for name in names))
    hand_at = {k: b for k, b, _ in flat}
    for k, held, tables in grown:
        hand_held = fmt_bytes(hand_at[k]) if k in hand_at else "-"
        print(f"  {k:>8,} {fmt_bytes(held):>15} {hand_held:>12}" +
              "".join(f" {tables[name]:>24,}" for name in names))
    if len(grown) >= 2:
        (k1, b1, _), (k2, b2, _) = grown[0], grown[-1]
        per = (b2 - b1) / (k2 - k1)
        hand_per = ((flat[-1][1] - flat[0][1]) / (flat[-1][0] - flat[0][0])
                    if len(flat) >= 2 else float("nan"))
        print(f"  growth per step between {k1:,} and {k2:,} steps: s2sgrad {fmt_bytes(per)}, "
              f"hand-written {fmt_bytes(hand_per)}")
    if grown and grown[-1][0] < max(marks):
        print(f"  (stopped after {grown[-1][0]:,} steps: the {time_limit:g} s limit)")
    if first_call_samples:
        print(first_call_line(CLOSURE_SETUP, first_call_samples, 5, status,
                              what="closure_step (a new closure)"))
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# The PyTorch way: an nn.Sequential's loss, gradients and training step, next to the same loss
# as one @grad NumPy function, by hand, and PyTorch's nn
# ---------------------------------------------------------------------------------------------


@dataclass
class Variant:
    """One row of an nn-mlp table: the loss+grad call, how to read its result, and a builder
    of a training step over the row's own copy of the parameters: ``make_step()`` ->
    ``(step, params)``, ``params()`` the parameters now, as NumPy arrays."""

    grad: Callable[[], Any]
    read: Callable[[Any], tuple[float, tuple]]
    make_step: Callable[[], tuple[Callable[[], Any], Callable[[], tuple]]]


def _numpy_variant(args: tuple, value_and_grad: Callable) -> Variant:
    """``value_and_grad(*args)`` (hand-written, or s2sgrad's on arrays), and a step that
    applies ``W.adamw_step`` to its result."""
    params, X, y = list(args[:6]), args[6], args[7]

    def make_step():
        own, state = [np.array(p) for p in params], {}

        def step():
            value, grads = value_and_grad(*own, X, y)
            W.adamw_step(own, grads, state, **W.ADAMW)
            return value

        return step, lambda: tuple(own)

    return Variant(lambda: value_and_grad(*params, X, y), _plain, make_step)


def _grad_fn_variant(sg: Any, args: tuple) -> Variant:
    """``out = f(*params, X, y); out.backward()``, ``f = sg.grad(nn_mlp_loss)``, the parameters
    leaf Tensors; the step with ``sg.optim.AdamW``."""
    params, X, y = args[:6], args[6], args[7]
    call, read = tensor_path(sg, W.nn_mlp_loss, args, W.WRT["nn_mlp"])
    f = sg.grad(W.nn_mlp_loss)

    def make_step():
        own = [sg.nn.Parameter(np.array(p)) for p in params]
        opt = sg.optim.AdamW(own, **W.ADAMW)

        def step():
            opt.zero_grad()
            out = f(*own, X, y)
            out.backward()
            opt.step()
            return out

        return step, lambda: tuple(np.array(p.detach().numpy()) for p in own)

    return Variant(call, read, make_step)


def _sequential_variant(nn: Any, tensor: Callable, optimizer: Callable, args: tuple,
                        widths: tuple[int, ...], dtype: Any = None) -> Variant:
    """PyTorch's way with ``nn`` (s2sgrad.nn or torch.nn): ``make_nn_mlp``'s Sequential holding
    the parameters of ``args``, ``loss = CrossEntropyLoss()(model(X), y)``,
    ``loss.backward()``; the step with ``optimizer(model.parameters())``."""
    params, X, y = args[:6], args[6], args[7]
    criterion = nn.CrossEntropyLoss()
    Xt, yt = tensor(X), tensor(y)

    def build():
        model = W.make_nn_mlp(nn, widths, dtype)
        model.load_state_dict(W.nn_mlp_state_dict(params, tensor))
        return model

    model = build()
    leaves = list(model.parameters())

    def call():
        model.zero_grad()
        loss = criterion(model(Xt), yt)
        loss.backward()
        return loss

    def read(loss):
        return float(loss.item()), tuple(np.array(p.grad.detach().numpy()) for p in leaves)

    def make_step():
        own = build()
        opt = optimizer(own.parameters())

        def step():
            opt.zero_grad()
            loss = criterion(own(Xt), yt)
            loss.backward()
            opt.step()
            return loss

        return step, lambda: tuple(np.array(p.detach().numpy()) for p in own.parameters())

    return Variant(call, read, make_step)


NN_GRAD_FN = "grad(nn_mlp_loss)(*params), .backward()"
NN_SEQUENTIAL = "nn.Sequential + CrossEntropyLoss, .backward()"
NN_PARAM_NAMES = ("W1", "b1", "W2", "b2", "W3", "b3")


def nn_mlp_rows(libs: list[Library], args: tuple, widths: tuple[int, ...]
                ) -> list[tuple[str, Library, Callable[[], Variant]]]:
    """The rows after the hand-written one: (label, library, builder of its Variant)."""
    rows = []
    sg_lib, torch_lib = _library(libs, "s2sgrad"), _library(libs, "torch")

    def need(lib: Library) -> Any:
        if lib.module is None:
            raise Unavailable(lib.reason)
        return lib.module

    if sg_lib is not None:
        def functional():
            vg = need(sg_lib).value_and_grad(W.nn_mlp_loss, wrt=W.WRT["nn_mlp"])
            return _numpy_variant(args, vg)

        def sequential():
            sg = need(sg_lib)
            return _sequential_variant(sg.nn, sg.tensor,
                                       lambda ps: sg.optim.AdamW(ps, **W.ADAMW), args, widths)

        rows += [(f"{sg_lib.label}: value_and_grad(nn_mlp_loss)", sg_lib, functional),
                 (f"{sg_lib.label}: {NN_GRAD_FN}", sg_lib,
                  lambda: _grad_fn_variant(need(sg_lib), args)),
                 (f"{sg_lib.label}: {NN_SEQUENTIAL}", sg_lib, sequential)]
    if torch_lib is not None:
        def torch_sequential():
            torch = need(torch_lib)
            return _sequential_variant(torch.nn, torch.tensor,
                                       lambda ps: torch.optim.AdamW(ps, **W.ADAMW), args,
                                       widths, dtype=torch.float64)

        label = torch_lib.label.replace(" (eager)", "")
        rows.append((f"{label}: {NN_SEQUENTIAL}", torch_lib, torch_sequential))
    return rows


@dataclass
class NNRow:
    label: str
    library: str = ""  # the Library's name ("s2sgrad", "torch"); "" for the NumPy rows
    grad: Timing | None = None
    step: Timing | None = None
    note: str = ""
    paired: tuple[float | None, float | None] = (None, None)  # s2sgrad / hand, interleaved


NN_COLS = "{:<66} {:>10} {:>7} {:>10} {:>7} {:>7}"

NN_MLP_FIRST_CALL = """
args = W.nn_mlp_inputs()
def build():
    model = W.make_nn_mlp(sg.nn, W.NN_MLP_SIZES["digits"][1])
    model.load_state_dict(W.nn_mlp_state_dict(args[:6], sg.tensor))
    criterion = sg.nn.CrossEntropyLoss()
    X, y = sg.tensor(args[6]), sg.tensor(args[7])
    params = list(model.parameters())
    def call():
        model.zero_grad()
        loss = criterion(model(X), y)
        loss.backward()
        return loss.item(), tuple(p.grad.numpy() for p in params)
    return call
plain = None
def check(result):
    return differ(W.nn_mlp_value_and_grad(*args), result)
"""


def run_nn_mlp(libs: list[Library], min_time: float, batches: int, status: dict,
               first_call_samples: int = 0,
               sizes: dict[str, tuple[int, tuple[int, ...]]] | None = None
               ) -> dict[str, list[NNRow]]:
    """One nn-mlp table per size (name -> (batch, widths), ``W.NN_MLP_SIZES`` by default):
    every row's loss+grad checked against the hand-written gradient and its training step
    (from the same start, one AdamW step) against the hand-written step, then both timed.
    Returns the rows by size."""
    sizes = W.NN_MLP_SIZES if sizes is None else sizes
    sg_lib = _library(libs, "s2sgrad")
    tables = {}
    for size, (batch, widths) in sizes.items():
        tables[size] = nn_mlp_table(libs, size, batch, widths, min_time, batches, status)
        if (size == "digits" and first_call_samples and sg_lib is not None
                and sg_lib.module is not None):
            print(first_call_line(NN_MLP_FIRST_CALL, first_call_samples, 20, status,
                                  what="criterion(model(X), y).backward(), model an "
                                       "nn.Sequential at digits"))
        sys.stdout.flush()
    return tables


def nn_mlp_table(libs: list[Library], size: str, batch: int, widths: tuple[int, ...],
                 min_time: float, batches: int, status: dict) -> list[NNRow]:
    """One nn-mlp table: the hand-written row, the plain forward, then every row of
    ``nn_mlp_rows``, each checked (loss and gradients, parameters after one step) before it
    is timed; returns the rows."""
    args = W.nn_mlp_inputs(batch=batch, widths=widths)
    hand = _numpy_variant(args, W.nn_mlp_value_and_grad)
    ref = _plain(hand.grad())
    if not np.isclose(W.nn_mlp_loss(*args), ref[0], rtol=1e-12, atol=0):
        raise SystemExit(f"nn-mlp: hand-written value {ref[0]!r} != function value "
                         f"{W.nn_mlp_loss(*args)!r}")
    hand_step, hand_params = hand.make_step()
    hand_step()
    ref_step = hand_params()
    hand_step, _ = hand.make_step()  # timed from the start
    base = NNRow("NumPy, hand-written gradient", grad=measure(hand.grad, min_time, batches),
                 step=measure(hand_step, min_time, batches))
    forward = NNRow("NumPy, the forward only (nn_mlp_loss, no gradient)",
                    grad=measure(lambda: W.nn_mlp_loss(*args), min_time, batches))
    rows = [base, forward]
    for label, lib, build in nn_mlp_rows(libs, args, widths):
        row = NNRow(label, library=lib.name)
        rows.append(row)
        is_s2sgrad = lib.name == "s2sgrad"
        try:
            variant = build()
            got = variant.read(variant.grad())
            step, params = variant.make_step()
            step()
            stepped = params()
        except Unavailable as exc:
            row.note = str(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - a failing library is a table entry
            row.note = f"error: {type(exc).__name__}: {_first_line(exc)}"
            if is_s2sgrad:
                status["s2sgrad_error"] = True
                traceback.print_exc()
            continue
        problem = compare(ref, got)
        step_problem = compare_outputs(ref_step, stepped, NN_PARAM_NAMES)
        if problem or step_problem:
            banner = "!" * 78
            what = "gradient" if problem else "parameters after one AdamW step"
            print(f"\n{banner}\n{label} on nn-mlp at {size}: {what} disagree with the "
                  f"hand-written ones:\n  {problem or step_problem}\n{banner}")
            row.note = "GRADIENT MISMATCH, not timed" if problem else "STEP MISMATCH, not timed"
            if is_s2sgrad:
                status["s2sgrad_mismatch"] = True
            continue
        step, _ = variant.make_step()  # timed from the start
        if is_s2sgrad:
            row.grad, grad_ratio = measure_paired(hand.grad, variant.grad, min_time, batches)
            row.step, step_ratio = measure_paired(hand_step, step, min_time, batches)
            row.paired = (grad_ratio, step_ratio)
        else:
            row.grad = measure(variant.grad, min_time, batches)
            row.step = measure(step, min_time, batches)
    print_nn_mlp(size, batch, widths, rows, base)
    return rows


def _ratio(timing: Timing | None, paired: float | None, base: Timing) -> str:
    if timing is None:
        return ""
    return f"{paired if paired is not None else timing.median / base.median:.2f}"


def print_nn_mlp(size: str, batch: int, widths: tuple[int, ...], rows: list[NNRow],
                 base: NNRow) -> None:
    layers = " -> ".join(f"{w} ReLU" for w in widths[1:-1])
    print(f"\n== nn-mlp at {size}: batch {batch}, {widths[0]} -> {layers} -> {widths[-1]}, "
          "cross-entropy over integer labels; loss + gradients, and a training step ==")
    print(NN_COLS.format("", "loss+grad", "", "step", "", "").rstrip())
    print(NN_COLS.format("library", "µs", "×hand", "µs", "×hand", "spread"))
    for row in rows:
        if row.grad is None:
            print(f"{row.label:<66} {row.note}")
            continue
        spread = max(t.spread for t in (row.grad, row.step) if t is not None)
        print(NN_COLS.format(
            row.label, fmt_us(row.grad.median), _ratio(row.grad, row.paired[0], base.grad),
            fmt_us(row.step.median) if row.step else "-",
            _ratio(row.step, row.paired[1], base.step) if row.step else "",
            f"{100 * spread:.0f}%"))
    print("step: zero_grad, loss, backward, one AdamW step (lr 1e-3, weight decay 1e-2): "
          "adamw_step by hand in the NumPy and\n      value_and_grad rows, "
          "s2sgrad.optim.AdamW in s2sgrad's Tensor rows, torch.optim.AdamW in PyTorch's")
    s2s_nn = next((r for r in rows if r.library == "s2sgrad"
                   and r.label.endswith(NN_SEQUENTIAL)), None)
    if s2s_nn is None:
        return
    if s2s_nn.grad is None:
        print(f"s2sgrad nn-mlp at {size}: not measured ({s2s_nn.note})")
        return
    parts = [f"loss+grad = {_ratio(s2s_nn.grad, s2s_nn.paired[0], base.grad)}x hand-written"]
    grad_fn = next((r for r in rows if r.library == "s2sgrad"
                    and r.label.endswith(NN_GRAD_FN)), None)
    if grad_fn is not None and grad_fn.grad is not None:
        parts.append(f"{s2s_nn.grad.median / grad_fn.grad.median:.2f}x the @grad function's")
    torch_nn = next((r for r in rows if r.library == "torch"), None)
    if torch_nn is not None and torch_nn.grad is not None:
        parts.append(f"{s2s_nn.grad.median / torch_nn.grad.median:.2f}x PyTorch's")
    step = f"; training step = {_ratio(s2s_nn.step, s2s_nn.paired[1], base.step)}x hand-written"
    print(f"s2sgrad nn-mlp at {size}: nn.Sequential {', '.join(parts)}{step} (no target is "
          "set for this workload)")


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def git_state(path: str) -> str:
    """' at commit abc1234' (+ ' with uncommitted changes') when ``path`` is in a git checkout."""
    def git(*cmd):
        return subprocess.run(["git", *cmd], cwd=path, capture_output=True, text=True,
                              check=False, timeout=10).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", ".")
    except (OSError, subprocess.SubprocessError):
        return ""
    if not commit:
        return ""
    return f" at commit {commit}" + (" with uncommitted changes" if dirty else "")


def openblas_core() -> str:
    """The CPU kernel NumPy's OpenBLAS chose at run time, if it can be asked ('' if not)."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower()})
    except OSError:
        return ""
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return ""


def header(args, libs: list[Library], min_time: float, batches: int) -> None:
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    blas = ""
    try:
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f", BLAS {cfg.get('name', '?')} {cfg.get('version', '')}".rstrip()
    except Exception as exc:  # noqa: BLE001 - informational only
        blas = f", BLAS unknown ({type(exc).__name__})"
    core = openblas_core()
    if core:
        blas += f" (kernel {core})"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    mode = "quick smoke run" if args.quick else "full run"
    print(f"s2sgrad benchmarks, {now} ({mode})")
    print(f"machine: {os.cpu_count()} cores ({cpu or platform.machine()}), {platform.system()}, "
          f"load average {load} (a shared machine: timings vary with its load)")
    print(f"Python {platform.python_version()}, NumPy {np.__version__}{blas}")
    print("threads: 1 for every library (OMP/MKL/OPENBLAS/BLIS/VECLIB/NUMEXPR_NUM_THREADS=1, "
          "torch.set_num_threads(1), XLA single-threaded Eigen);\n"
          f"         process {_PINNING}")
    print(f"timing: median per call of {batches} batches, >= {min_time:g} s per row after "
          "warm-up, gc disabled; float64 throughout")
    print("inputs are converted to each library's array type outside the timed region; "
          "JAX calls block until the result is ready")
    for lib in libs:
        if lib.name == "s2sgrad" and lib.module is not None:
            print(f"s2sgrad: {lib.extra['path']}{git_state(lib.extra['path'])}")
    print("columns: ×NumPy = forward / plain NumPy forward; ×hand = value+grad / hand-written "
          "value+grad;\n         ×fwd = value+grad / the same library's forward; spread = "
          "(slowest - fastest batch) / median of value+grad;\n"
          "         s2sgrad's forward is the plain function itself (the NumPy row's figure); "
          "its ×hand is the\n         median ratio of value+grad batches interleaved with "
          "hand-written ones, steadier under load")


def main(argv=None) -> int:
    names = ["scalar", "logistic", "mlp", "mixture", "horner", "scalar-tensor", "index-loop", "ode-loop",
             "closure-per-step", "nn-mlp", *SECOND_ORDER_NAMES, *JACOBIAN_NAMES, "first-call",
             "second-order-first-call"]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short timings (smoke run)")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help=f"run only these (repeatable or comma-separated): {', '.join(names)}")
    parser.add_argument("--min-time", type=float, default=None,
                        help="seconds per row (default 0.5, --quick 0.02)")
    parser.add_argument("--no-pin", action="store_true",
                        help="do not bind the process to one CPU (JAX then uses every core)")
    parser.add_argument("--batches", type=int, default=None,
                        help="batches per row (default 7, --quick 3)")
    args = parser.parse_args(argv)
    only = set(names)
    if args.only:
        only = {n.strip() for item in args.only for n in item.split(",") if n.strip()}
        unknown = only - set(names)
        if unknown:
            parser.error(f"unknown --only {', '.join(sorted(unknown))}; choose from {names}")
    min_time = args.min_time or (0.02 if args.quick else 0.5)
    batches = args.batches or (3 if args.quick else 7)

    libs = load_libraries()
    header(args, libs, min_time, batches)
    status: dict = {}
    samples = 1 if args.quick else 3  # fresh processes for each first-call measurement
    budget = QUICK_BUDGET if args.quick else BUDGET
    for wl in build_workloads():
        if wl.name in only:
            run_workload(wl, libs, min_time, batches, status, first_call_samples=samples,
                         budget=budget, compile_torch=not args.quick)
    if "scalar-tensor" in only:
        run_scalar_tensor(libs, min_time, batches, status, first_call_samples=samples)
    if "index-loop" in only:
        run_index_loop(libs, min_time, batches, status,
                       QUICK_INDEX_SIZES if args.quick else INDEX_SIZES, budget, samples)
    if "ode-loop" in only:
        run_ode_loop(build_ode_loop(), libs, min_time, batches, status, samples, budget)
    if "closure-per-step" in only:
        run_closure_per_step(libs, min_time, batches, status, args.quick, samples)
    if "nn-mlp" in only:
        run_nn_mlp(libs, min_time, batches, status, first_call_samples=samples)
    if only & set(SECOND_ORDER_NAMES):
        forwards: dict = {}  # the plain function's time, per model (the ×fwd reference)
        for so in build_second_order():
            if so.name in only:
                run_second_order(so, libs, min_time, batches, status, forwards)
    for spec in build_jacobians():
        if spec[0] in only:
            run_jacobian(spec, libs, min_time, batches, status)
    if "first-call" in only:
        run_first_call(libs[0], samples, status)
    if "second-order-first-call" in only:
        run_second_order_first_call(libs[0], samples, status)

    if status.get("s2sgrad_mismatch"):
        print("\nFAILED: s2sgrad's gradient (or jvp, or hvp) disagrees with the hand-written "
              "one", flush=True)
        return 1
    if status.get("s2sgrad_error"):
        print("\nFAILED: s2sgrad raised an error on a workload", flush=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
