"""Aim a thrown ball: differentiate through a simulation loop and fit the launch velocity.

A ball flies under gravity and quadratic air drag, integrated with explicit Euler steps. Each
step is a pair of small ``@s2sgrad.grad`` functions called from an ordinary Python loop, so the
graph *between* the compiled functions is dynamic, built as the loop runs, as in PyTorch; the
code *inside* each one is differentiated ahead of time into readable Python.

Gradient descent on the launch velocity then makes the ball land on a target: ``backward()``
on the miss distance runs the compiled adjoints of all the steps in reverse order, which is
backpropagation through time.

    python examples/physics.py [--target 12 0] [--flight-time 1.5] [--dt 0.01] [--iters 40]
"""

from __future__ import annotations

import argparse

import numpy as np

import s2sgrad
from s2sgrad import optim

GRAVITY = np.array([0.0, -9.81])  # m/s^2
DRAG = 0.1  # 1/m: drag acceleration -DRAG * |v| * v, about that of a table-tennis ball


# One explicit Euler step, x(t + dt) = x + dt * v and v(t + dt) = v + dt * a(v), as two
# functions, because a compiled function returns a single array (not yet a tuple).
@s2sgrad.grad
def next_position(pos, vel, dt):
    return pos + dt * vel


@s2sgrad.grad
def next_velocity(vel, dt, drag):
    speed = np.sqrt(np.sum(vel * vel))
    return vel + dt * (GRAVITY - drag * speed * vel)


@s2sgrad.grad
def squared_miss(pos, target):
    return np.sum((pos - target) ** 2)


def simulate(v0, flight_time: float, dt: float, drag: float = DRAG):
    """The ball's position after ``flight_time`` seconds, launched from the origin at ``v0``.

    Works on NumPy arrays (a plain simulation) and on Tensors (recording a graph, one node
    per compiled call).
    """
    pos, vel = np.zeros(2), v0
    for _ in range(round(flight_time / dt)):
        # Both right-hand sides use the old state: explicit (forward) Euler.
        pos, vel = next_position(pos, vel, dt), next_velocity(vel, dt, drag)
    return pos


def miss_distance(v0, target: np.ndarray, flight_time: float, dt: float) -> float:
    """How far from the target the ball is at the end of its flight (plain NumPy)."""
    return float(np.sqrt(squared_miss(simulate(v0, flight_time, dt), target)))


def gradient(v0: np.ndarray, target: np.ndarray, flight_time: float, dt: float) -> np.ndarray:
    """d squared_miss / d v0, by backpropagation through every Euler step."""
    v = s2sgrad.tensor(v0, requires_grad=True)
    squared_miss(simulate(v, flight_time, dt), target).backward()
    return v.grad.numpy()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=float, nargs=2, default=[12.0, 0.0],
                        metavar=("X", "Y"), help="where the ball should be (m)")
    parser.add_argument("--flight-time", type=float, default=1.5, help="seconds")
    parser.add_argument("--dt", type=float, default=0.01, help="Euler time step (s)")
    parser.add_argument("--v0", type=float, nargs=2, default=[5.0, 5.0], metavar=("VX", "VY"),
                        help="initial guess of the launch velocity (m/s)")
    parser.add_argument("--iters", type=int, default=40, help="gradient descent iterations")
    parser.add_argument("--lr", type=float, default=0.3, help="SGD learning rate")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    """Fit the launch velocity; print it and the miss distance before and after."""
    args = parse_args(argv)
    target = np.array(args.target)
    steps = round(args.flight_time / args.dt)
    print(f"target {target} m after {args.flight_time} s ({steps} Euler steps of {args.dt} s)")

    v0 = s2sgrad.tensor(args.v0, requires_grad=True)
    optimizer = optim.SGD([v0], lr=args.lr, momentum=0.5)
    initial_miss = miss_distance(np.array(args.v0), target, args.flight_time, args.dt)
    print(f"initial guess v0 = {np.array(args.v0)} m/s misses by {initial_miss:.3f} m")

    for it in range(1, args.iters + 1):
        optimizer.zero_grad()
        # A fresh graph of 2 * steps nodes each iteration, built by the Python loop.
        loss = squared_miss(simulate(v0, args.flight_time, args.dt), target)
        loss.backward()
        optimizer.step()
        if it == 1 or it % max(1, args.iters // 6) == 0:
            print(f"iter {it:3d}  miss {np.sqrt(loss.item()):9.3e} m  "
                  f"v0 = [{v0.data[0]:7.3f}, {v0.data[1]:7.3f}] m/s")

    fitted = v0.detach().numpy().copy()
    final_miss = miss_distance(fitted, target, args.flight_time, args.dt)
    speed, angle = np.hypot(*fitted), np.degrees(np.arctan2(fitted[1], fitted[0]))
    print(f"fitted v0 = [{fitted[0]:.4f}, {fitted[1]:.4f}] m/s "
          f"({speed:.3f} m/s at {angle:.2f} degrees)")
    print(f"miss distance: {initial_miss:.3f} m -> {final_miss:.2e} m")
    return {"v0": fitted, "initial_miss": initial_miss, "final_miss": final_miss}


if __name__ == "__main__":
    main()
