"""Errors raised at transform time, pointing at the user's code."""

from __future__ import annotations

import linecache
import os
import sys

# generated file name -> {its line: (file, line, column) of the statement it comes from}
_origins: dict[str, dict[int, tuple[str, int, int]]] = {}


def register_origins(filename: str, lines: dict[int, tuple[str, int, int]]) -> None:
    """Where the lines of a generated file come from: an error the compiler finds in that
    code (differentiating it again) is reported at the user's line it was generated from."""
    _origins[filename] = lines


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def in_package(filename: str) -> bool:
    """Whether code in ``filename`` is s2sgrad's own, or code it generated."""
    return filename.startswith((_PACKAGE, "<s2sgrad"))


def user_frame() -> tuple[str, int, int]:
    """Where the user's code called into s2sgrad: (file, line, column) of the innermost
    frame outside the package and the code it generates, for a refusal that concerns a
    call rather than a line of a differentiated function."""
    frame = sys._getframe(1)
    while frame is not None and in_package(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "<unknown>", 0, 0
    code = frame.f_code
    column = 0
    if hasattr(code, "co_positions"):  # Python 3.11: the column of the call being made
        column = list(code.co_positions())[frame.f_lasti // 2][2] or 0
    return code.co_filename, frame.f_lineno, column


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
