"""NumPy's arrays: the library the generated code is written for; every step of ``Backend``
as it is.

Part of the compiler layer.
"""

from __future__ import annotations

from .base import Backend

NUMPY = Backend()
