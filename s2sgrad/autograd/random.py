"""The random numbers of the Tensor layer: PyTorch's ``manual_seed``, ``seed``,
``initial_seed``, ``Generator`` and ``default_generator``.

One generator, ``default_generator``, serves every random draw made without a ``generator=``
argument: ``randn``, ``rand``, ``randint``, ``randperm``, ``rand_like``, ``randn_like``, the
``nn.init`` functions, the default initialisation of ``nn.Linear`` and ``nn.Embedding``,
``nn.Dropout`` and ``nn.functional.dropout``, and the order of a shuffling ``DataLoader``. So
``manual_seed(seed)`` before a run makes the whole run repeatable. NumPy's global state
(``np.random.seed``) plays no part in any of them.

A ``Generator`` is a ``numpy.random.Generator`` (on PCG64) that also answers PyTorch's
methods: ``manual_seed(seed)`` reseeds it in place and returns it, ``seed()`` reseeds it from
fresh entropy and returns the seed, ``initial_seed()`` tells the seed in use. After
``manual_seed(s)`` it draws exactly what ``np.random.default_rng(s)`` draws. Being a NumPy
generator, it is accepted wherever one is (``DataLoader(..., generator=Generator()
.manual_seed(0))``, ``nn.init.normal_(w, generator=g)``) and offers all of NumPy's
distributions.

As in PyTorch, ``default_generator`` is seeded from fresh entropy at import (runs differ until
seeded), while a new ``Generator()`` starts from PyTorch's fixed default seed, 67280421310721.
``manual_seed`` returns ``default_generator`` itself, as PyTorch's returns its default
generator. Seeds are integers in [-2**63, 2**64); a negative one is taken modulo 2**64, as
PyTorch does.

In the Tensor layer, at its bottom with printing.py: imports nothing of s2sgrad.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DEFAULT_SEED = 67280421310721  # PyTorch's seed of a new Generator
_WORD = 2**64


def _checked(seed: Any) -> int:
    """``seed`` as PyTorch reads it: ``int(seed)``, negative ones modulo 2**64."""
    value = int(seed)
    if not -(2**63) <= value < _WORD:
        raise ValueError("Overflow when unpacking long long")
    return value % _WORD


class Generator(np.random.Generator):
    """A ``numpy.random.Generator`` with PyTorch's seeding methods; starts from
    ``DEFAULT_SEED``."""

    def __init__(self, device: Any = "cpu") -> None:
        super().__init__(np.random.PCG64(DEFAULT_SEED))
        self._initial_seed = DEFAULT_SEED

    def manual_seed(self, seed: Any) -> Generator:
        """Reseed in place; the draws that follow are those of ``np.random.default_rng(seed)``.
        Returns this generator."""
        seed = _checked(seed)
        self.bit_generator.state = np.random.PCG64(seed).state
        self._initial_seed = seed
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy; returns the new seed."""
        value = int(np.random.SeedSequence().entropy) % _WORD
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed of the last ``manual_seed`` or ``seed`` (or the one it started from)."""
        return self._initial_seed

    def __reduce__(self) -> tuple:
        # NumPy's own reduction would rebuild a plain numpy.random.Generator
        return _restored, (self.bit_generator.state, self._initial_seed)


def _restored(state: dict, initial: int) -> Generator:
    g = Generator()
    g.bit_generator.state = state
    g._initial_seed = initial
    return g


default_generator = Generator()
default_generator.seed()


def manual_seed(seed: Any) -> Generator:
    """Reseed ``default_generator``, which every random draw without a ``generator=`` uses;
    returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Reseed ``default_generator`` from fresh entropy; returns the new seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed ``default_generator`` was last seeded with."""
    return default_generator.initial_seed()


def source(generator: np.random.Generator | None) -> np.random.Generator:
    """The generator to draw from: ``generator`` if given, else ``default_generator``."""
    return default_generator if generator is None else generator
