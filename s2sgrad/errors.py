"""Errors raised at transform time, pointing at the user's code."""

from __future__ import annotations

import linecache


class TransformError(SyntaxError):
    """The function cannot be differentiated as written.

    A SyntaxError subclass, so Python's traceback shows the file, the line and a caret under
    the offending column. ``hint`` says what to do instead.
    """

    def __init__(self, message: str, filename: str = "<unknown>", lineno: int = 0,
                 col: int = 0, hint: str = ""):
        text = linecache.getline(filename, lineno) if lineno else ""
        full = f"{message}\n  at {filename}:{lineno}:{col + 1}"
        if hint:
            full += f"\n  {hint}"
        super().__init__(full, (filename, lineno, col + 1, text or None))
        self.reason = message
        self.hint = hint
        self.col = col

    def __str__(self) -> str:  # SyntaxError's own __str__ drops the location for multi-line msgs
        return self.msg
