"""The executable documentation runs, and its claims (asserts) hold."""

import pathlib
import runpy

DOCS = pathlib.Path(__file__).parent.parent / "docs"


def test_how_it_works_runs(capsys):
    runpy.run_path(str(DOCS / "how_it_works.py"), run_name="__main__")
    printed = capsys.readouterr().out
    assert "def loss_backward(saved, out_bar):" in printed
    assert "# adjoint of: h = np.tanh(x @ w + b)" in printed
