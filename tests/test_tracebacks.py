"""An exception raised inside generated code carries a note naming, for each generated
frame it passed through (innermost last), the function and part (forward, adjoint,
tangent), the user's file, line and its text, and the generated line: plain ``python``
does not show generated source, and nothing else in its traceback names the user's line.

Each test finds the expected place from the marked line of its function (``# <- raises``)
and the generated frames of the traceback, and reads the note back into entries."""

import functools
import inspect
import linecache
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2sgrad
from s2sgrad import errors
from s2sgrad.testing import check_grads, numeric_gradient
from tests.located import PACKAGE_DIR

X = np.linspace(0.5, 1.5, 4)
BAD = np.array([9])  # an index out of bounds for X


def out_of_bounds(x):
    h = np.tanh(x)
    z = h[BAD]  # <- raises
    return np.sum(z * z)


def doubled(x):
    return 2.0 * x


@s2sgrad.vjp_rule(doubled, shape="elementwise")
def doubled_vjp(g, ans, x):
    return g @ np.ones((7, 7))  # a backward that fails: the shapes do not match


def through_rule(x):
    h = np.sin(x)
    y = doubled(h)  # <- raises
    return np.sum(y)


def pair(x):
    return x * 2.0, np.sin(x)  # <- raises


def callee(x):
    y = x[BAD]  # <- raises
    return np.sum(y)


def caller(x):
    s = callee(x) * 2.0  # <- raises
    return s + np.sum(x)


SWITCH = [0]  # read live by the generated code: the index it uses


def switched(x):
    z = x[np.array([SWITCH[0]])]  # <- raises
    return np.sum(np.sin(z) * z)


def refused_with(x):
    with open(os.devnull):  # <- raises
        return np.sum(x)


def makes_a_nested_function(x):
    def inner(y):
        return y[BAD] * 2.0  # <- raises

    return np.sum(inner(np.cos(x)))


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


@logged
def decorated(x):
    h = x * x
    return np.sum(h[BAD])  # <- raises


def checked(x):
    if np.any(x > 100.0):
        exc = ValueError("too large")
        exc.add_note("checked() refuses values above 100")
        raise exc
    return x


s2sgrad.nondifferentiable(checked)


def uses_checked(x):
    y = checked(x)  # <- raises
    return np.sum(y * x)


def countdown(x, n):
    if n == 0:
        return np.sum(x[BAD])  # <- raises
    return countdown(x * 1.0, n - 1)


def in_bounds(x):
    h = np.tanh(x)
    z = h[np.array([1, 3])]
    return np.sum(z * z)


# -- reading the note back ------------------------------------------------------------------

_ENTRY = re.compile(r"^  (?P<what>.+?) \((?P<file>[^()]+):(?P<line>\d+)\)(?:: (?P<text>.*))?$")
_GENERATED = re.compile(r"^    generated line (?P<line>\d+): (?P<text>.*)$")
_REPEATED = re.compile(r"^  \[the above repeated (?P<more>\d+) more times\]$")


def _note(exc: BaseException) -> str:
    """The one note s2sgrad added to ``exc``."""
    ours = [n for n in getattr(exc, "__notes__", ()) if n.startswith(errors.GENERATED_CODE)]
    assert len(ours) == 1, getattr(exc, "__notes__", None)
    return ours[0]


def _entries(exc: BaseException) -> list[dict]:
    """Per generated frame named: what, file, line, text, generated line and its text, and
    how many frames in a row it stands for (a recursive function's)."""
    lines = _note(exc).splitlines()[1:]
    entries = []
    while lines:
        repeated = _REPEATED.match(lines[0])
        if repeated:
            entries[-1]["frames"] += int(repeated["more"])
            lines = lines[1:]
            continue
        where, generated = _ENTRY.match(lines[0]), _GENERATED.match(lines[1])
        assert where and generated, lines[:2]
        entries.append({"what": where["what"], "file": where["file"],
                        "line": int(where["line"]), "text": where["text"] or "",
                        "generated_line": int(generated["line"]),
                        "generated_text": generated["text"], "frames": 1})
        lines = lines[2:]
    return entries


def _generated_frames(exc: BaseException) -> list[tuple[str, int]]:
    """(file, line) of the frames of generated functions in ``exc``'s traceback."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith("<s2sgrad") and filename != "<s2sgrad ops>":
            frames.append((filename, tb.tb_lineno))
        tb = tb.tb_next
    return frames


def _marked(fn) -> tuple[str, int, str]:
    """(file, line, text without the marker) of the line of ``fn`` marked ``# <- raises``."""
    fn = inspect.unwrap(fn)
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if "# <- raises" in line:
            return inspect.getsourcefile(fn), first + offset, line.split("#")[0].strip()
    raise AssertionError(f"{fn.__name__} has no marked line")


def _assert_names(entry: dict, what: str, fn) -> None:
    filename, lineno, text = _marked(fn)
    assert entry["what"] == what, entry
    assert (entry["file"], entry["line"]) == (filename, lineno), entry
    assert entry["text"].startswith(text), entry


def _assert_follows_traceback(exc: BaseException) -> list[dict]:
    """The note names every generated frame of the traceback, in its order, with the
    generated line as linecache has it."""
    entries = _entries(exc)
    frames = _generated_frames(exc)
    each = [entry for entry in entries for _ in range(entry["frames"])]
    assert [e["generated_line"] for e in each] == [line for _, line in frames], (
        entries, frames)
    for entry, (filename, line) in zip(each, frames, strict=True):
        assert entry["generated_text"] == linecache.getline(filename, line).strip()
    return entries


# -- the functional transforms --------------------------------------------------------------

def test_an_error_in_the_forward_names_the_users_line():
    with pytest.raises(IndexError) as info:
        s2sgrad.gradient(out_of_bounds)(X)
    (entry,) = _assert_follows_traceback(info.value)
    _assert_names(entry, "the forward of out_of_bounds", out_of_bounds)
    assert "BAD" in entry["generated_text"]


def test_value_and_grad_names_the_users_line():
    with pytest.raises(IndexError) as info:
        s2sgrad.value_and_grad(out_of_bounds)(X)
    (entry,) = _assert_follows_traceback(info.value)
    _assert_names(entry, "the forward of out_of_bounds", out_of_bounds)


def test_an_error_in_the_adjoint_names_the_call_of_the_rule():
    with pytest.raises(ValueError, match="matmul") as info:
        s2sgrad.gradient(through_rule)(X)
    (entry,) = _assert_follows_traceback(info.value)
    _assert_names(entry, "the adjoint of through_rule", through_rule)
    assert "np.ones((7, 7))" in entry["generated_text"]  # the rule's body, inlined


def test_a_pullback_given_a_cotangent_of_the_wrong_shape():
    out, pullback = s2sgrad.vjp(pair, X)
    with pytest.raises(ValueError, match="broadcast") as info:
        pullback((np.ones(5), np.ones(4)))
    (entry,) = _assert_follows_traceback(info.value)
    _assert_names(entry, "the adjoint of pair", pair)
    # the right cotangents still pull back
    gx, = pullback((np.ones(4), np.ones(4)))
    np.testing.assert_allclose(gx, 2.0 + np.cos(X), rtol=1e-12)


def test_jvp_names_the_tangent_function():
    with pytest.raises(IndexError) as info:
        s2sgrad.jvp(out_of_bounds, (X,), (np.ones(4),))
    (entry,) = _assert_follows_traceback(info.value)
    _assert_names(entry, "the tangent of out_of_bounds", out_of_bounds)


def test_an_error_through_two_generated_functions_names_both():
    with pytest.raises(IndexError) as info:
        s2sgrad.gradient(caller)(X)
    outer, inner = _assert_follows_traceback(info.value)
    _assert_names(outer, "the forward of caller", caller)
    _assert_names(inner, "the forward of callee", callee)
    with pytest.raises(IndexError) as info:
        s2sgrad.jvp(caller, (X,), (np.ones(4),))
    outer, inner = _assert_follows_traceback(info.value)
    _assert_names(outer, "the tangent of caller", caller)
    _assert_names(inner, "the tangent of callee", callee)


@pytest.mark.parametrize("transform", [
    lambda f: s2sgrad.gradient(s2sgrad.gradient(lambda x: np.sum(f(x) ** 3))),
    lambda f: s2sgrad.hessian(f),
    lambda f: s2sgrad.gradient(lambda x: s2sgrad.gradient(f)(x) @ x),
], ids=["gradient_of_gradient", "hessian", "gradient_called_inside"])
def test_nested_transforms_add_the_note_once(transform):
    with pytest.raises(IndexError) as info:
        transform(out_of_bounds)(X)
    entries = _assert_follows_traceback(info.value)  # one note (_note checks)
    assert entries[-1]["what"] == "the forward of out_of_bounds"
    _assert_names(entries[-1], "the forward of out_of_bounds", out_of_bounds)


def test_the_adjoint_of_a_tangent_is_named_through_both():
    """A pullback of a gradient runs code generated from the gradient's generated code:
    its lines lead, through that code, to the user's."""
    SWITCH[0] = 0
    out, pullback = s2sgrad.vjp(s2sgrad.gradient(switched), X)
    np.testing.assert_allclose(out, numeric_gradient(switched, (X,), 0), atol=1e-7)
    SWITCH[0] = 9
    try:
        with pytest.raises(IndexError) as info:
            pullback(np.ones(4))
    finally:
        SWITCH[0] = 0
    entries = _assert_follows_traceback(info.value)
    assert entries, _note(info.value)
    for entry in entries:
        assert entry["what"].endswith(" of switched"), entry
        assert entry["file"] == __file__
    _assert_names(entries[-1], entries[-1]["what"], switched)
    assert entries[-1]["what"].count(" of ") >= 2, entries[-1]  # e.g. the adjoint of the tangent


def test_a_recursive_function_is_named_once_per_run_of_calls():
    with pytest.raises(IndexError) as info:
        s2sgrad.gradient(countdown)(X, 5)
    calls, last = _assert_follows_traceback(info.value)
    assert calls["frames"] == 5
    assert calls["text"] == "return countdown(x * 1.0, n - 1)"
    _assert_names(last, "the forward of countdown", countdown)


# -- the Tensor layer ------------------------------------------------------------------------

def test_a_grad_function_called_with_tensors():
    f = s2sgrad.grad(out_of_bounds)
    with pytest.raises(IndexError) as info:
        f(s2sgrad.tensor(X, requires_grad=True))
    (entry,) = _assert_follows_traceback(info.value)
    _assert_names(entry, "the forward of out_of_bounds", out_of_bounds)


def test_backward_names_the_adjoint():
    f = s2sgrad.grad(through_rule)
    loss = f(s2sgrad.tensor(X, requires_grad=True))
    with pytest.raises(ValueError, match="matmul") as info:
        loss.backward()
    (entry,) = _assert_follows_traceback(info.value)
    _assert_names(entry, "the adjoint of through_rule", through_rule)


def test_backward_with_create_graph_names_the_users_line():
    SWITCH[0] = 0
    x = s2sgrad.tensor(X, requires_grad=True)
    loss = s2sgrad.grad(switched)(x)
    SWITCH[0] = 9  # the backward runs the function again, to record it
    try:
        with pytest.raises(IndexError) as info:
            loss.backward(create_graph=True)
    finally:
        SWITCH[0] = 0
    entries = _assert_follows_traceback(info.value)
    _assert_names(entries[-1], entries[-1]["what"], switched)
    assert entries[-1]["what"].endswith("of switched"), entries


# -- where the function is defined -----------------------------------------------------------

def test_functions_defined_in_a_loop():
    def make(index):
        def picks(x):
            return np.sum(np.sin(x)[np.array([index])])  # <- raises
        return picks

    for index in (0, 3, 9):
        fn = make(index)
        if index < 4:
            np.testing.assert_allclose(s2sgrad.gradient(fn)(X),
                                       numeric_gradient(fn, (X,), 0), atol=1e-7)
            continue
        with pytest.raises(IndexError) as info:
            s2sgrad.gradient(fn)(X)
        (entry,) = _assert_follows_traceback(info.value)
        _assert_names(entry, "the forward of test_functions_defined_in_a_loop.make.picks", fn)


def test_a_nested_function_is_named_at_its_line():
    with pytest.raises(IndexError) as info:
        s2sgrad.gradient(makes_a_nested_function)(X)
    entries = _assert_follows_traceback(info.value)
    _assert_names(entries[-1], entries[-1]["what"], makes_a_nested_function)
    assert entries[-1]["what"].startswith("the forward of makes_a_nested_function")


def test_a_decorated_function():
    """The decorator's wrapper is differentiated too: the note names it, then the
    function it calls."""
    with pytest.raises(IndexError) as info:
        s2sgrad.gradient(decorated)(X)
    wrapper, entry = _assert_follows_traceback(info.value)
    assert wrapper["what"] == "the forward of logged.wrapper"
    assert wrapper["text"] == "return fn(*args)"
    _assert_names(entry, "the forward of decorated", decorated)


# -- what is left alone ----------------------------------------------------------------------

def test_a_transform_error_has_no_note():
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.gradient(refused_with)(X)
    assert not getattr(info.value, "__notes__", None)


def test_an_error_outside_generated_code_has_no_note():
    with pytest.raises(TypeError, match="must return a scalar") as info:
        s2sgrad.gradient(lambda x: x * 2.0)(X)
    assert not getattr(info.value, "__notes__", None)
    with pytest.raises(ValueError, match="Mismatch in shape") as info:
        s2sgrad.vjp(lambda x: x * 2.0, X)[1](np.ones(5))
    assert not getattr(info.value, "__notes__", None)


def test_a_note_already_there_is_kept():
    with pytest.raises(ValueError, match="too large") as info:
        s2sgrad.gradient(uses_checked)(X * 1000.0)
    notes = info.value.__notes__
    assert notes[0] == "checked() refuses values above 100"
    (entry,) = _assert_follows_traceback(info.value)
    _assert_names(entry, "the forward of uses_checked", uses_checked)


def test_results_are_unchanged():
    check_grads(in_bounds, X, modes=("rev", "fwd"))
    check_grads(in_bounds, X, order=2)
    x = s2sgrad.tensor(X, requires_grad=True)
    s2sgrad.grad(in_bounds)(x).backward()
    np.testing.assert_allclose(x.grad.data, numeric_gradient(in_bounds, (X,), 0), atol=1e-7)


# -- plain python ----------------------------------------------------------------------------

def test_plain_python_shows_the_users_line(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(textwrap.dedent("""\
        import numpy as np
        import s2sgrad

        def loss(w, x):
            h = np.tanh(x @ w)
            z = np.log(h)
            return np.sum(z[[5]])

        w = np.ones((3, 2))
        x = np.ones((4, 3))
        s2sgrad.gradient(loss)(w, x)
        """))
    root = os.path.dirname(os.path.dirname(os.path.abspath(s2sgrad.__file__)))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, check=False)
    assert done.returncode == 1
    err = done.stderr
    assert "IndexError" in err
    assert errors.GENERATED_CODE in err
    assert f"the forward of loss ({script}:7): return np.sum(z[[5]])" in err
    assert err.count(errors.GENERATED_CODE) == 1


# --- s2sgrad's own frames are left out of what the user reads -----------------------------


def _scatter(x):
    y = np.zeros(3)
    np.maximum.at(y, [0, 0, 1], x)
    return np.sum(y)


def _out_of_range(x, i):
    return np.sum(x[i] ** 2)


def _frames(exc):
    found, tb = [], exc.__traceback__
    while tb is not None:
        found.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return found


@pytest.mark.parametrize("call", [
    lambda: s2sgrad.gradient(_scatter)(np.ones(3)),
    lambda: s2sgrad.value_and_grad(_scatter)(np.ones(3)),
    lambda: s2sgrad.grad(_scatter)(s2sgrad.tensor(np.ones(3), requires_grad=True)),
], ids=["gradient", "value_and_grad", "on a Tensor"])
def test_a_refusal_shows_the_users_frames_only(call, monkeypatch):
    monkeypatch.delenv("S2SGRAD_TRACEBACK", raising=False)
    with pytest.raises(s2sgrad.TransformError) as caught:
        call()
    frames = _frames(caught.value)
    assert frames and all(not f.startswith(PACKAGE_DIR) for f in frames), frames
    assert frames[0] == __file__


def test_an_error_in_generated_code_keeps_the_generated_frame_and_the_users(monkeypatch):
    monkeypatch.delenv("S2SGRAD_TRACEBACK", raising=False)
    t = s2sgrad.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(IndexError) as caught:
        s2sgrad.grad(_out_of_range)(t, 7)
    frames = _frames(caught.value)
    assert not any(f.startswith(PACKAGE_DIR) for f in frames), frames
    assert frames[0] == __file__ and frames[-1].startswith("<s2sgrad _out_of_range")


def test_every_frame_with_the_full_traceback_asked_for(monkeypatch):
    monkeypatch.setenv("S2SGRAD_TRACEBACK", "full")
    with pytest.raises(s2sgrad.TransformError) as caught:
        s2sgrad.gradient(_scatter)(np.ones(3))
    assert any(f.startswith(PACKAGE_DIR) for f in _frames(caught.value))
