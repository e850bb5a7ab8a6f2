"""Multinomial logistic regression on handwritten digits, trained with ``s2sgrad.optim.Adam``.

What this shows:

* a linear classifier ``softmax(X @ W + b)`` over the 64 pixels of the bundled UCI digits;
* the loss (softmax cross-entropy plus a small L2 penalty) as NumPy code under ``@s2sgrad.grad``;
* the optimizer loop of PyTorch: ``optimizer.zero_grad()``, ``loss.backward()``,
  ``optimizer.step()``, here on the full training set at every step.

    python examples/logistic_regression.py [--steps 150] [--lr 0.05] [--l2 1e-4] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np
from datasets import load_digits, train_test_split

import s2sgrad
from s2sgrad import optim

N_CLASSES = 10


@s2sgrad.grad
def loss_fn(W, b, X, y, l2):
    """Mean softmax cross-entropy of the scores ``X @ W + b``, plus ``l2 * |W|^2``."""
    z = X @ W + b
    z = z - np.max(z, axis=1, keepdims=True)  # stable: exp() cannot overflow
    log_p = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(log_p[np.arange(len(y)), y]) + l2 * np.sum(W * W)


def accuracy(W: s2sgrad.Tensor, b: s2sgrad.Tensor, X: np.ndarray, y: np.ndarray) -> float:
    """The fraction of rows whose highest score is the true class (softmax is monotone)."""
    scores = X @ W.detach().numpy() + b.detach().numpy()
    return float(np.mean(np.argmax(scores, axis=1) == y))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150, help="full-batch Adam steps")
    parser.add_argument("--lr", type=float, default=0.05, help="Adam's learning rate")
    parser.add_argument("--l2", type=float, default=1e-4, help="weight of the L2 penalty")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial weights")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    """Train, print the loss now and then and the final test accuracy; returns them."""
    args = parse_args(argv)
    X, y = load_digits()
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_fraction=0.25, seed=0)

    rng = np.random.default_rng(args.seed)
    W = s2sgrad.tensor(0.01 * rng.standard_normal((X.shape[1], N_CLASSES)), requires_grad=True)
    b = s2sgrad.tensor(np.zeros(N_CLASSES), requires_grad=True)
    optimizer = optim.Adam([W, b], lr=args.lr)

    for step in range(1, args.steps + 1):
        optimizer.zero_grad()
        loss = loss_fn(W, b, X_train, y_train, args.l2)
        loss.backward()
        optimizer.step()
        if step == 1 or step % max(1, args.steps // 5) == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}  "
                  f"train accuracy {accuracy(W, b, X_train, y_train):.1%}")

    test_accuracy = accuracy(W, b, X_test, y_test)
    print(f"test accuracy: {test_accuracy:.1%} on {len(y_test)} digits")
    return {"test_accuracy": test_accuracy, "loss": loss.item()}


if __name__ == "__main__":
    main()
