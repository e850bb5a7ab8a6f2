"""Refusals point at the user's code: the line marked ``# <- refused`` in a function's
source, the column of a token on it, the file, and a hint. Shared by the refusal tests."""

import inspect
import os

import s2sgrad

#: the installed package's own folder, with its separator: a message naming a file in it
#: points inside s2sgrad rather than at the user's code. (The checkout's folder may itself
#: be named ``s2sgrad``, so the bare name says nothing.)
PACKAGE_DIR = os.path.dirname(os.path.abspath(s2sgrad.__file__)) + os.sep


def assert_names_no_place_inside_s2sgrad(message: str) -> None:
    """``message`` names no file of the s2sgrad package itself."""
    assert PACKAGE_DIR not in message, message


def marked_line(fn) -> tuple[int, str]:
    """(line number, text) of the line of ``fn``'s source marked ``# <- refused``."""
    lines, first = inspect.getsourcelines(getattr(fn, "__code__", fn))
    for offset, line in enumerate(lines):
        if "# <- refused" in line:
            return first + offset, line
    raise AssertionError(f"{fn.__name__} has no marked line")


def assert_points_at(error, fn, token: str, filename: str | None = None) -> None:
    """``error`` names ``fn``'s file, its marked line, the column of ``token`` there, and
    says what to do instead."""
    lineno, line = marked_line(fn)
    filename = filename or inspect.getsourcefile(getattr(fn, "__code__", fn))
    assert error.filename == filename, (error.filename, filename)
    assert error.lineno == lineno, (error.lineno, lineno)
    assert error.offset - 1 == line.index(token), (error.offset, line)
    assert error.hint, "a refusal says what to do instead"
    assert f"{filename}:{lineno}:{error.offset}" in str(error)
