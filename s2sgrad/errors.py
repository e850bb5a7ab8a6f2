"""Errors raised at transform time, pointing at the user's code."""

from __future__ import annotations

import linecache


# generated file name -> {its line: (file, line, column) of the statement it comes from}
_origins: dict[str, dict[int, tuple[str, int, int]]] = {}


def register_origins(filename: str, lines: dict[int, tuple[str, int, int]]) -> None:
    """Where the lines of a generated file come from: an error the compiler finds in that
    code (differentiating it again) is reported at the user's line it was generated from."""
    _origins[filename] = lines


class TransformError(SyntaxError):
    """The function cannot be differentiated as written.

    A SyntaxError subclass, so Python's traceback shows the file, the line and a caret under
    the offending column. ``hint`` says what to do instead.
    """

    def __init__(self, message: str, filename: str = "<unknown>", lineno: int = 0,
                 col: int = 0, hint: str = ""):
        generated = None
        while lineno in _origins.get(filename, {}):  # code s2sgrad generated from the user's
            generated = generated or (filename, lineno)
            filename, lineno, col = _origins[filename][lineno]
        text = linecache.getline(filename, lineno) if lineno else ""
        full = f"{message}\n  at {filename}:{lineno}:{col + 1}"
        if generated:
            full += (f"\n  (in the code s2sgrad generated to differentiate it, "
                     f"{generated[0]}:{generated[1]})")
        if hint:
            full += f"\n  {hint}"
        super().__init__(full, (filename, lineno, col + 1, text or None))
        self.reason = message
        self.hint = hint
        self.col = col

    def __str__(self) -> str:  # SyntaxError's own __str__ drops the location for multi-line msgs
        return self.msg
