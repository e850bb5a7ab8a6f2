"""Functions whose generated code is kept in tests/golden/ (readability is reviewed)."""

import math

import numpy as np


def tanh_regression(w, x, y):
    h = np.tanh(x @ w)
    return np.mean((h - y) ** 2)


def mlp_loss(W1, b1, W2, b2, x, onehot):
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(onehot * log_probs) / x.shape[0]


def scalar_chain(a, b):
    c = a * b + math.sin(a)
    c = c / b
    return c ** 2


def softplus(z):
    return np.log1p(np.exp(z))


def logistic(w, b, x, y):
    z = x @ w + b
    return np.mean(softplus(z) - y * z)


def clipped_rnn(W, x, limit):
    """A loop with a branch and an element write: an RNN whose states are kept in an array."""
    T = x.shape[0]
    states = np.zeros((T, W.shape[0]))
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + x[t])
        if np.sum(h * h) > limit:
            h = h * 0.5
        states[t] = h
    return np.sum(states ** 2)


def calls() -> dict:
    """name -> (function, differentiated positions, arguments): how the golden files call
    each function (the same arrays every time)."""
    rng = np.random.default_rng(0)

    def mlp_args():
        x = rng.standard_normal((8, 5))
        onehot = np.eye(3)[rng.integers(0, 3, 8)]
        return (rng.standard_normal((5, 4)), np.zeros(4), rng.standard_normal((4, 3)),
                np.zeros(3), x, onehot)

    return {
        "tanh_regression": (tanh_regression, (0,),
                            (rng.standard_normal(3), rng.standard_normal((6, 3)),
                             rng.standard_normal(6))),
        "mlp_loss": (mlp_loss, (0, 1, 2, 3), mlp_args()),
        "scalar_chain": (scalar_chain, (0, 1), (1.3, 0.7)),
        "clipped_rnn": (clipped_rnn, (0, 1),
                        (0.5 * rng.standard_normal((3, 3)), rng.standard_normal((5, 3)), 1.0)),
        "logistic": (logistic, (0, 1),
                     (rng.standard_normal(4), 0.1, rng.standard_normal((10, 4)),
                      (rng.random(10) > 0.5).astype(float))),
    }
