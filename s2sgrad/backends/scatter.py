"""The adjoint's accumulations into indexed positions (``add_at``, ``add_at_each``,
``zeroed_at``) as each library does them (``runtime.indexing.SCATTER``).

Part of the compiler layer.
"""

from __future__ import annotations

from typing import Any

from ..runtime import indexing

# every library's implementations: the check lets the generated code call them
SCATTERS = frozenset(f for helpers in indexing.SCATTER.values() for f in helpers.values())
# NumPy's, which run on NumPy's arrays only
NUMPY_SCATTERS = (indexing.add_at, indexing.add_at_each, indexing.zeroed_at)


def helpers(backend: str) -> dict[Any, Any]:
    """Each of NumPy's scatter helpers mapped to ``backend``'s implementation of it; one the
    backend cannot do is absent, and stays NumPy's, which the check refuses."""
    found = indexing.SCATTER.get(backend) or indexing.SCATTER["array_api"]
    return {getattr(indexing, name): helper for name, helper in found.items()}
