"""Linear regression by gradient descent, written as in a PyTorch tutorial.

What this shows:

* parameters are leaf Tensors created with ``s2sgrad.tensor(..., requires_grad=True)``;
* the loss is plain NumPy under ``@s2sgrad.grad``; calling it with Tensors records one graph
  node, and ``loss.backward()`` fills ``w.grad`` and ``b.grad``;
* the update is hand-written inside ``with s2sgrad.no_grad():`` (so it is not recorded), and
  the gradients are reset with ``.grad.zero_()`` because ``backward()`` accumulates.

The data are synthetic, ``y = X @ w_true + b_true + noise``; the fit should recover the true
parameters to about the noise level.

    python examples/linear_regression.py [--samples 1000] [--steps 100] [--lr 0.1] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

import s2sgrad

TRUE_W = np.array([2.0, -3.4, 1.5])
TRUE_B = 4.2


@s2sgrad.grad
def mse(w, b, X, y):
    """Mean squared error of the linear model ``X @ w + b``."""
    residual = X @ w + b - y
    return np.mean(residual ** 2)


def make_data(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.standard_normal((n, len(TRUE_W)))
    y = X @ TRUE_W + TRUE_B + noise * rng.standard_normal(n)
    return X, y


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.01, help="std of the label noise")
    parser.add_argument("--steps", type=int, default=100, help="gradient descent steps")
    parser.add_argument("--lr", type=float, default=0.1, help="learning rate")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    """Fit and print the learned parameters next to the true ones; returns them for tests."""
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    X, y = make_data(args.samples, args.noise, rng)

    # Leaves of the graph: gradient descent will change them in place.
    w = s2sgrad.tensor(np.zeros(len(TRUE_W)), requires_grad=True)
    b = s2sgrad.tensor(0.0, requires_grad=True)

    for step in range(1, args.steps + 1):
        loss = mse(w, b, X, y)  # a Tensor; loss.grad_fn holds the compiled backward
        loss.backward()  # w.grad, b.grad += d loss / d w, d loss / d b
        with s2sgrad.no_grad():  # the update itself must not become part of a graph
            w -= args.lr * w.grad
            b -= args.lr * b.grad
            w.grad.zero_()  # backward() adds to .grad: reset it for the next step
            b.grad.zero_()
        if step == 1 or step % max(1, args.steps // 5) == 0:
            print(f"step {step:4d}  loss {loss.item():.6f}")

    w_fit, b_fit = w.detach().numpy(), b.item()
    print("\nparameter   learned    true")
    for i, (learned, true) in enumerate(zip(w_fit, TRUE_W, strict=True)):
        print(f"w[{i}]      {learned:8.4f}  {true:8.4f}")
    print(f"b         {b_fit:8.4f}  {TRUE_B:8.4f}")
    return {"w": w_fit.copy(), "b": b_fit, "true_w": TRUE_W, "true_b": TRUE_B,
            "loss": loss.item()}


if __name__ == "__main__":
    main()
