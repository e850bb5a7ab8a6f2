"""Refusals point at the user's code: the line marked ``# <- refused`` in a function's
source, the column of a token on it, the file, and a hint. Shared by the refusal tests."""

import inspect


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
