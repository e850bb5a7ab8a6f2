"""The tiers of the suite.

- The default (CI's, the README's command): every test family, every rule, every catalogue
  function, and of the exhaustive catalogues' further cases (more argument forms of one
  rule, more sets of parameters of one function) a sample fixed by each case's name.
- ``S2SGRAD_TESTS=full``: every case of the catalogues (a long run, outside CI).
- ``python -m pytest -m quick``: the core, for the edit-test loop (``QUICK`` in conftest.py).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from typing import Any

FULL = os.environ.get("S2SGRAD_TESTS") == "full"


def sample(params: list[Any], family: Callable[[Any], Any], every: int = 4) -> list[Any]:
    """``params`` (pytest.param) under ``S2SGRAD_TESTS=full``; else the first of each
    family, every one with marks (an expected failure states something), and one in
    ``every`` of the rest, chosen by the crc32 of its id."""
    if FULL:
        return params
    seen: set = set()
    kept = []
    for p in params:
        key = family(p)
        if key not in seen or p.marks or zlib.crc32(p.id.encode()) % every == 0:
            kept.append(p)
        seen.add(key)
    return kept
