"""A function defined in a pytest test file, with asserts in it, is differentiated: pytest
rewrites the asserts of the files it collects, and the check that the running code is the
file's compiles the file as pytest did. A file edited after import is still refused."""

import subprocess
import sys
import textwrap

TEST_FILE = textwrap.dedent('''
    import numpy as np
    import pytest
    import s2sgrad


    def loss(w):
        assert w.ndim == 1, "a vector"
        h = np.tanh(w)
        assert np.all(np.abs(h) < 1)
        return np.sum(h ** 2)


    def test_gradient_of_a_function_with_asserts():
        w = np.linspace(-1.0, 1.0, 4)
        s2sgrad.testing.check_grads(loss, w)
        g = s2sgrad.gradient(loss)(w)
        assert np.allclose(g, 2 * np.tanh(w) / np.cosh(w) ** 2)


    def test_its_assert_still_asserts():
        with pytest.raises(AssertionError, match="a vector"):
            s2sgrad.gradient(loss)(np.ones((2, 2)))


    @s2sgrad.grad
    def decorated(w):
        assert w.shape == (4,)
        return np.sum(w ** 3)


    def test_a_decorated_function_on_tensors():
        t = s2sgrad.tensor(np.arange(4.0), requires_grad=True)
        decorated(t).backward()
        assert np.allclose(t.grad.numpy(), 3 * np.arange(4.0) ** 2)
''')


def test_functions_in_a_pytest_file_with_asserts_are_differentiated(tmp_path):
    path = tmp_path / "test_model_written_by_a_user.py"
    path.write_text(TEST_FILE)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-n", "0", str(path)], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "3 passed" in run.stdout
