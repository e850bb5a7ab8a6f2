"""Logistic regression on more data than one process can hold: the NumPy loss on Dask arrays.

What this shows:

* the loss is an ordinary NumPy function; called with chunked Dask arrays, its forward and
  the generated adjoint (printed here by ``s2sgrad.show``) are the same NumPy code, run by
  Dask through NumPy's dispatch, so ``s2sgrad.value_and_grad`` returns lazy Dask arrays;
* the data, ``--rows`` rows of 100 features (10**7 rows: 8 GB of float64) and labels drawn
  from a known weight vector, are made chunk by chunk on the workers from a seed: no process
  ever holds the dataset, and every step reads it again, as it would read it from storage;
* each gradient-descent step is ``value_and_grad(loss, wrt=(0, 1))(w, b, X, y)`` and one
  ``dask.compute``, run by a ``LocalCluster`` of worker processes (1 thread and a memory
  limit each); the loss falls and ``w`` approaches the true weights;
* the peak memory of each worker during a step, next to the chunk's size and the dataset's:
  on Linux the kernel's high-water mark of the worker's resident memory (``VmHWM``, reset
  before the step), elsewhere its resident memory sampled every 5 ms; both include the
  worker's interpreter and libraries, whose size before the step is printed too;
* first, on a few thousand rows, that the Dask gradient equals the NumPy gradient of the
  same data.

    pip install -e '.[dask]'
    python examples/dask_regression.py [--rows 10000000] [--chunk-rows 100000] [--steps 20]
        [--lr 6.0] [--workers 2] [--memory-limit 2GiB] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import numpy as np

import s2sgrad

try:
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster
except ImportError:  # without the dask extra, main() says what to install
    dask = da = Client = LocalCluster = None

FEATURES = 100


def loss(w, b, X, y):
    """Mean logistic loss of the scores ``X @ w + b`` for labels ``y`` in {0, 1}."""
    z = X @ w + b
    # -log sigmoid(z) for y = 1 and -log(1 - sigmoid(z)) for y = 0, without overflow
    return np.mean(np.logaddexp(0.0, z) - y * z)


def true_parameters(seed: int) -> tuple[np.ndarray, float]:
    """The weights and bias the labels are drawn from (scores of standard deviation 3)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(FEATURES) * 3.0 / np.sqrt(FEATURES), 0.5


def make_data(rows: int, chunk_rows: int, seed: int) -> tuple:
    """Lazy features ``X`` (standard normal) and labels ``y`` (1 with the probability the
    true parameters give): each chunk of rows is drawn where it is computed, from the seed."""
    true_w, true_b = true_parameters(seed)
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, FEATURES), chunks=(chunk_rows, FEATURES))
    p = 1.0 / (1.0 + np.exp(-(X @ true_w + true_b)))
    y = (rng.random(rows, chunks=chunk_rows) < p).astype(float)
    return X, y


def check_against_numpy(rows: int, chunk_rows: int, seed: int) -> dict:
    """The loss and gradient at a random point, on Dask arrays and on the same data as NumPy
    arrays; returns both and their largest difference relative to the NumPy gradient."""
    X, y = make_data(rows, chunk_rows, seed)
    w, b = np.random.default_rng(seed + 1).standard_normal(FEATURES) * 0.1, 0.1
    value, grad = s2sgrad.value_and_grad(loss, wrt=(0, 1))(w, b, X, y)
    on_dask = dask.compute(value, *grad)
    X_np, y_np = dask.compute(X, y)  # a few thousand rows: small enough to bring here
    value, grad = s2sgrad.value_and_grad(loss, wrt=(0, 1))(w, b, X_np, y_np)
    on_numpy = (value, *grad)
    scale = max(np.max(np.abs(g)) for g in on_numpy)
    difference = max(np.max(np.abs(np.subtract(a, c))) for a, c in zip(on_dask, on_numpy,
                                                                         strict=True))
    return {"dask": on_dask, "numpy": on_numpy, "relative_difference": difference / scale}


# -- peak memory of a worker process, run in the workers by client.run ------------------------

def _resident(status: str = "VmRSS") -> int:
    """This process's resident memory (VmRSS) or its high-water mark (VmHWM), in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(status + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(f"no {status} in /proc/self/status")


def _kernel_keeps_peak() -> bool:
    """Whether this process can reset the kernel's record of its peak memory (Linux)."""
    return os.access("/proc/self/clear_refs", os.W_OK)


def memory_method() -> str:
    """How ``start_peak`` and ``read_peak`` measure, in the process that runs them."""
    if _kernel_keeps_peak():
        return "the kernel's high-water mark of each worker's resident memory (VmHWM)"
    return "each worker's resident memory, sampled every 5 ms"


def start_peak(dask_worker) -> int:
    """Start measuring this worker's peak memory; returns its resident memory now (bytes)."""
    if _kernel_keeps_peak():
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # the high-water mark starts again from the resident memory
        return _resident()
    import psutil  # elsewhere: sample the resident memory in a thread

    process, stop = psutil.Process(), threading.Event()
    peak = [process.memory_info().rss]

    def sample() -> None:
        while not stop.wait(0.005):
            peak[0] = max(peak[0], process.memory_info().rss)

    threading.Thread(target=sample, daemon=True).start()
    dask_worker.s2sgrad_peak = stop, peak
    return peak[0]


def read_peak(dask_worker) -> int:
    """This worker's peak resident memory since ``start_peak`` (bytes)."""
    sampled = getattr(dask_worker, "s2sgrad_peak", None)
    if sampled is None:
        return _resident("VmHWM")
    stop, peak = sampled
    stop.set()
    del dask_worker.s2sgrad_peak
    return peak[0]


# -- training -------------------------------------------------------------------------------

def megabytes(n: float) -> str:
    return f"{n / 1e6:,.0f} MB"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**7, help="rows of the dataset")
    parser.add_argument("--chunk-rows", type=int, default=100_000, help="rows per chunk")
    parser.add_argument("--steps", type=int, default=20, help="gradient-descent steps")
    # below 2/L: the logistic loss curves at most a quarter as much as |X w|^2 / n, whose
    # largest curvature is about 1 for standard normal features
    parser.add_argument("--lr", type=float, default=6.0, help="step size")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--memory-limit", default="2GiB", help="memory limit of each worker")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    """Train on the cluster, printing the loss, the distance to the true weights and the
    workers' peak memory at each step; returns them."""
    args = parse_args(argv)
    if da is None:
        raise SystemExit("this example needs Dask: pip install -e '.[dask]'")
    true_w, true_b = true_parameters(args.seed)
    X, y = make_data(args.rows, args.chunk_rows, args.seed)
    chunk_bytes = args.chunk_rows * FEATURES * X.dtype.itemsize
    print(f"data: {args.rows:,} rows x {FEATURES} features = {megabytes(X.nbytes)} in "
          f"{X.numblocks[0]} chunks of {args.chunk_rows:,} rows ({megabytes(chunk_bytes)})")

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=args.memory_limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        check = check_against_numpy(4000, 1000, args.seed)
        print(f"on 4,000 rows, the Dask gradient and the NumPy gradient differ by "
              f"{check['relative_difference']:.1e} of its largest entry")

        w, b = np.zeros(FEATURES), 0.0
        s2sgrad.show(loss, w, b, X, y, wrt=(0, 1))  # the code each step runs, on Dask arrays
        method = " and ".join(sorted(set(client.run(memory_method).values())))
        print(f"peak memory: {method}\n")
        history: dict[str, list] = {"loss": [], "error": [], "seconds": [], "before": [],
                                    "peak": []}
        for step in range(1, args.steps + 1):
            before = client.run(start_peak)
            start = time.perf_counter()
            value, (w_bar, b_bar) = s2sgrad.value_and_grad(loss, wrt=(0, 1))(w, b, X, y)
            value, w_bar, b_bar = dask.compute(value, w_bar, b_bar)
            seconds = time.perf_counter() - start
            peak = client.run(read_peak)
            error = np.linalg.norm(w - true_w) / np.linalg.norm(true_w)
            for key, item in (("loss", float(value)), ("error", error), ("seconds", seconds),
                              ("before", before), ("peak", peak)):
                history[key].append(item)
            print(f"step {step:3d}  loss {value:.4f}  |w - w_true| / |w_true| {error:.3f}  "
                  f"{seconds:5.1f} s  peak per worker "
                  + " / ".join(megabytes(m) for m in peak.values()))
            w, b = w - args.lr * w_bar, b - args.lr * b_bar

    error = np.linalg.norm(w - true_w) / np.linalg.norm(true_w)
    peak_per_worker = max(max(p.values()) for p in history["peak"])
    idle = max(max(p.values()) for p in history["before"])
    print(f"\nlearned b = {b:.3f} (true {true_b}); |w - w_true| / |w_true| = {error:.3f}")
    print(f"peak memory per worker: {megabytes(peak_per_worker)}, of which up to "
          f"{megabytes(idle)} before a step; chunks of {megabytes(chunk_bytes)}, a dataset "
          f"of {megabytes(X.nbytes)}; {np.median(history['seconds']):.1f} s per step")
    client_peak = _resident("VmHWM") if os.path.exists("/proc/self/status") else None
    if client_peak is not None:  # the lazy graphs and the results: no data
        print(f"peak memory of this process (the client): {megabytes(client_peak)}")
    return {"history": history, "w": w, "b": b, "error": error, "true_w": true_w,
            "true_b": true_b, "check": check, "peak_per_worker": peak_per_worker, "idle_per_worker": idle,
            "client_peak": client_peak, "chunk_bytes": chunk_bytes, "dataset_bytes": X.nbytes,
            "memory_method": method}


if __name__ == "__main__":
    main()
