"""Deterministic names for generated code.

Names are derived from the user's own names where there is one (``h_bar``, ``h_1`` for a
reassigned ``h``, ``x_shape``) and numbered temporaries otherwise (``_t1``); the same function
always gets the same names, and no generated name shadows a name the user's code uses.
"""

from __future__ import annotations


class Namer:
    def __init__(self, taken: set[str] = frozenset()):
        self.taken: set[str] = set(taken)
        self.user: frozenset[str] = frozenset(taken)
        self._counters: dict[str, int] = {}

    def reserve(self, name: str) -> str:
        self.taken.add(name)
        return name

    def fresh(self, base: str) -> str:
        """``base`` itself if free, else ``base_1``, ``base_2``..."""
        if base not in self.taken:
            return self.reserve(base)
        return self._numbered(base + "_")

    def _numbered(self, prefix: str) -> str:
        n = self._counters.get(prefix, 0)
        while True:
            n += 1
            candidate = f"{prefix}{n}"
            if candidate not in self.taken:
                self._counters[prefix] = n
                return self.reserve(candidate)

    @property
    def generated(self) -> set[str]:
        """The names this namer handed out."""
        return self.taken - self.user

    def temp(self) -> str:
        return self._numbered("_t")
