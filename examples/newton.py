"""Second-order optimisation: Newton's method and Hessian-free Newton (conjugate gradients on
Hessian-vector products) for a logistic regression that tells the digits 3 and 8 apart.

What this shows:

* ``s2sgrad.hessian(loss)``: the second derivatives of plain NumPy code, each column one
  Hessian-vector product, compiled once;
* ``s2sgrad.hvp(loss, primals, tangents)``: ``H v`` without forming ``H``, which is what
  Hessian-free methods need when the parameters are too many for a matrix;
* the generated code of the second derivative: the tangent function of the loss, and its
  adjoint (printed with ``--show``).

Both methods reach in a handful of steps a loss that gradient descent needs hundreds for.

    python examples/newton.py [--steps 6] [--l2 1e-2] [--cg 20] [--show]
"""

from __future__ import annotations

import argparse

import numpy as np
from datasets import load_digits, train_test_split

import s2sgrad


def loss(w, X, y, l2):
    """Mean logistic loss of the scores ``X @ w[:-1] + w[-1]`` (labels 0 or 1), plus
    ``l2 / 2 * |w|^2``."""
    z = X @ w[:-1] + w[-1]
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * np.sum(w * w)


def newton(w, X, y, l2, steps):
    """Newton's method: w <- w - H^-1 g, with the Hessian from ``s2sgrad.hessian``."""
    gradient, hessian = s2sgrad.gradient(loss), s2sgrad.hessian(loss)
    for _ in range(steps):
        w = w - np.linalg.solve(hessian(w, X, y, l2), gradient(w, X, y, l2))
    return w


def hessian_free(w, X, y, l2, steps, cg_steps):
    """Newton steps solved by conjugate gradients, touching the Hessian only through
    Hessian-vector products."""
    gradient = s2sgrad.gradient(loss)
    for _ in range(steps):
        g = gradient(w, X, y, l2)
        step, r = np.zeros_like(w), -g
        p, rr = r.copy(), r @ r
        for _ in range(cg_steps):
            hp = s2sgrad.hvp(loss, (w, X, y, l2), (p, None, None, None))
            alpha = rr / (p @ hp)
            step, r = step + alpha * p, r - alpha * hp
            rr, rr_old = r @ r, rr
            if rr < 1e-20:
                break
            p = r + (rr / rr_old) * p
        w = w + step
    return w


def gradient_descent(w, X, y, l2, steps, lr=1.0):
    gradient = s2sgrad.gradient(loss)
    for _ in range(steps):
        w = w - lr * gradient(w, X, y, l2)
    return w


def accuracy(w, X, y):
    return float(np.mean(((X @ w[:-1] + w[-1]) > 0) == y))


def threes_and_eights(seed: int = 0):
    X, digits = load_digits()
    keep = (digits == 3) | (digits == 8)
    return train_test_split(X[keep], (digits[keep] == 8).astype(float), 0.25, seed=seed)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--l2", type=float, default=1e-2)
    parser.add_argument("--cg", type=int, default=20)
    parser.add_argument("--show", action="store_true", help="print the generated code")
    args = parser.parse_args(argv)
    X_train, X_test, y_train, y_test = threes_and_eights()
    w0 = np.zeros(X_train.shape[1] + 1)
    results = {}
    for name, w in [
        ("gradient descent", gradient_descent(w0, X_train, y_train, args.l2, args.steps)),
        ("Newton", newton(w0, X_train, y_train, args.l2, args.steps)),
        ("Hessian-free", hessian_free(w0, X_train, y_train, args.l2, args.steps, args.cg)),
    ]:
        results[name] = (float(loss(w, X_train, y_train, args.l2)), accuracy(w, X_test, y_test))
        print(f"{name:>16} after {args.steps} steps: loss {results[name][0]:.5f}, "
              f"test accuracy {results[name][1]:.3f}")
    if args.show:
        print("\n# the derivative of the gradient: its pair, the loss's tangent function, and")
        print("# that function's own forward and adjoint (where the second derivatives are)")
        s2sgrad.show(s2sgrad.gradient(loss), w0, X_train, y_train, args.l2, wrt=0)
    return results


if __name__ == "__main__":
    main()
