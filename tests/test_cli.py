"""The command line viewer: ``python -m s2sgrad FILE.py:FUNCTION --args ...``."""

import pathlib

import pytest

from s2sgrad.__main__ import main

MLP = str(pathlib.Path(__file__).parents[1] / "examples" / "mlp.py")
MLP_ARGS = "(64,32) (32,) (32,10) (10,) (8,64) (8,10)"


def test_prints_the_forward_and_the_adjoint(capsys):
    assert main([f"{MLP}:cross_entropy", "--args", MLP_ARGS, "--wrt", "0,2"]) == 0
    printed = capsys.readouterr().out
    assert "def cross_entropy_forward(" in printed
    assert "def cross_entropy_backward(saved, out_bar):" in printed
    assert "W2_bar" in printed and "# adjoint of:" in printed


@pytest.mark.parametrize("args,words", [
    (["--args", "(8,10) (8,10)"], "missing a required argument: 'W2'"),
    (["--args", MLP_ARGS, "--wrt", "9"], "wrt=9 is out of range"),
    (["--args", "(8,x)"], "--args and --wrt"),
])
def test_arguments_that_do_not_fit_are_an_error_not_a_traceback(capsys, args, words):
    with pytest.raises(SystemExit) as info:
        main([f"{MLP}:cross_entropy", *args])
    assert info.value.code == 2
    assert words in capsys.readouterr().err


def test_a_refused_function_prints_where_and_why(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text("import numpy as np\n\n\ndef f(x):\n    x[0] = 1.0\n    return np.sum(x)\n")
    assert main([f"{source}:f", "--args", "(3,)"]) == 1
    err = capsys.readouterr().err
    assert f"{source}:5:5" in err and "the caller's array" in err


def test_a_refusal_prints_the_users_line_without_a_traceback(tmp_path, capsys):
    source = tmp_path / "refused.py"
    source.write_text("import numpy as np\n\n\ndef f(x):\n    y = x * 1.0\n"
                      "    x.sort()\n    return np.sum(y)\n")
    from s2sgrad.__main__ import main
    assert main([f"{source}:f"]) == 1
    err = capsys.readouterr().err
    assert "refused.py:6" in err and "Traceback" not in err
