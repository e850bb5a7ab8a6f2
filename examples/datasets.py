"""Data for the examples: the bundled UCI handwritten digits, a split and minibatches.

Everything here is offline and deterministic: the digits ship in ``examples/data/digits.npz``
(see ``examples/data/README.md``), and every random choice takes a seed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

DIGITS = Path(__file__).resolve().parent / "data" / "digits.npz"


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 1797 8x8 digits as ``(X, y)``: X of shape (1797, 64), float64 scaled to [0, 1]
    (the pixels count 0..16 set bits of a 4x4 block), y of shape (1797,), ints 0..9."""
    with np.load(DIGITS) as data:
        images, labels = data["images"], data["labels"]
    X = images.reshape(len(images), -1).astype(np.float64) / 16.0
    return X, labels.astype(np.int64)


def train_test_split(X: np.ndarray, y: np.ndarray, test_fraction: float = 0.25,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Shuffle with ``seed`` and split into ``(X_train, X_test, y_train, y_test)``.

    The same seed always gives the same split, so accuracies are comparable between runs.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    order = np.random.default_rng(seed).permutation(len(X))
    n_test = round(test_fraction * len(X))
    test, train = order[:n_test], order[n_test:]
    return X[train], X[test], y[train], y[test]


def minibatches(X: np.ndarray, y: np.ndarray, batch_size: int,
                rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """One epoch of shuffled ``(X_batch, y_batch)`` pairs; the last batch may be smaller."""
    order = rng.permutation(len(X))
    for start in range(0, len(X), batch_size):
        batch = order[start:start + batch_size]
        yield X[batch], y[batch]
