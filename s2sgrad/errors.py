"""Errors raised at transform time, pointing at the user's code; and the note that an
exception raised inside generated code carries, naming the user's lines it ran for.
"""

from __future__ import annotations

import linecache
import os
import sys
import types

# generated file name -> {its line: (file, line, column) of the statement it comes from}
_origins: dict[str, dict[int, tuple[str, int, int]]] = {}
# generated file name -> (first line, function, part) of each generated function in it,
# by first line: the part is "forward", "adjoint", "tangent", or "" (the function itself)
_functions: dict[str, list[tuple[int, str, str]]] = {}


def register_origins(filename: str, lines: dict[int, tuple[str, int, int]],
                     functions: list[tuple[int, str, str]] | None = None) -> None:
    """Where the lines of a generated file come from: an error the compiler finds in that
    code (differentiating it again) is reported at the user's line it was generated from,
    and an exception raised in it is noted with that line (``note_generated``).
    ``functions``: (first line, the user's function, part) of each function in the file."""
    _origins[filename] = lines
    if functions:
        _functions[filename] = sorted(functions)


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


GENERATED_CODE = "in code s2sgrad generated from yours (innermost last):"


def note_generated(exc: BaseException) -> None:
    """Add to ``exc`` a note naming each frame of generated code in its traceback (innermost
    last): the function and part, the user's file, line and its text, and the generated
    line; and take s2sgrad's own frames out of its traceback, and out of a refusal's. Called where s2sgrad runs generated code for the user, as the exception leaves:
    a boundary further out replaces the note with one that names the frames it saw too, so
    it is there once. A TransformError points at the user's code already."""
    if isinstance(exc, TransformError):
        _hide_internals(exc)
        return
    entries = []
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in _origins:
            entries.append(_describe(filename, tb.tb_lineno))
        tb = tb.tb_next
    if not entries:
        return
    _hide_internals(exc)
    lines = [GENERATED_CODE]
    k = 0
    while k < len(entries):  # a recursive function: one entry per run of repeats
        repeats = 1
        while k + repeats < len(entries) and entries[k + repeats] == entries[k]:
            repeats += 1
        lines.append(entries[k])
        if repeats > 1:
            lines.append(f"  [the above repeated {repeats - 1} more times]")
        k += repeats
    note = "\n".join(lines)
    notes = getattr(exc, "__notes__", None)
    if notes is None:
        try:
            exc.__notes__ = notes = []
        except AttributeError:  # an exception class that refuses attributes
            return
    if not isinstance(notes, list):
        return
    for i, old in enumerate(notes):
        if isinstance(old, str) and old.startswith(GENERATED_CODE):
            notes[i] = note
            return
    notes.append(note)


def _hide_internals(exc: BaseException) -> None:
    """Take s2sgrad's own frames out of the traceback of a refusal or of an exception raised
    in generated code, as it leaves for the user's code: what is left is the user's frames,
    the generated code's and the libraries' it called. ``S2SGRAD_TRACEBACK=full`` keeps
    every frame (an internal error keeps them always)."""
    if os.environ.get("S2SGRAD_TRACEBACK") == "full":
        return
    kept = []
    tb = exc.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
            kept.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    exc.__traceback__ = rebuilt


def _describe(filename: str, lineno: int) -> str:
    """The note's entry for line ``lineno`` of a generated file: what it is part of and the
    user's line, followed through generated code that code was generated from (higher
    order), and the generated line."""
    generated = f"    generated line {lineno}: {linecache.getline(filename, lineno).strip()}"
    parts, name, seen = [], "", set()
    while filename in _origins and filename not in seen:
        seen.add(filename)
        first, name, part = next(((f, n, p) for f, n, p in reversed(_functions.get(
            filename, ())) if f <= lineno), (1, name, ""))
        parts.append(part)
        lines = _origins[filename]
        # a line without a statement of the user's (an unpacking of the saved values): the
        # statement before it, at worst the def
        where = next((lines[k] for k in range(lineno, first - 1, -1) if k in lines), None)
        if where is None:
            break
        filename, lineno = where[0], where[1]
    what = "".join(f"the {part} of " for part in parts if part) + name.replace("<locals>.", "")
    text = linecache.getline(filename, lineno).strip()
    return f"  {what} ({filename}:{lineno})" + (f": {text}" if text else "") + "\n" + generated
