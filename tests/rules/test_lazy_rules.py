"""The rules of scipy's functions are registered once the scipy module they belong to is
imported (``registry.when_imported``): ``import s2sgrad`` imports no scipy module, and a
program that imports scipy after s2sgrad gets the same rules, derivatives and refusals as one
that imports it before.

Each check runs in a fresh interpreter, where nothing has imported scipy yet.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("scipy")


def run(tmp_path, code: str, name: str = "program.py") -> str:
    """Run ``code`` as a script (s2sgrad reads the source of the functions it differentiates)
    in a fresh interpreter; its standard output."""
    script = tmp_path / name
    script.write_text(textwrap.dedent(code))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_importing_s2sgrad_imports_no_scipy(tmp_path):
    out = run(tmp_path, """
        import sys

        import numpy as np

        import s2sgrad

        def scipy_modules():
            return sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy."))

        assert scipy_modules() == [], scipy_modules()

        def f(x, y):
            z = np.tanh(x) * y
            return np.sum(np.stack([z, z ** 2]) @ np.linalg.solve(np.eye(3) + np.outer(x, x), y))

        x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, -0.5, 2.0])
        s2sgrad.gradient(f)(x, y)
        s2sgrad.jvp(f, (x, y), (y, x))
        assert scipy_modules() == [], scipy_modules()  # nor does differentiating NumPy code
        print("ok")
        """)
    assert out.strip() == "ok"


def test_scipy_imported_after_s2sgrad_is_differentiated(tmp_path):
    out = run(tmp_path, """
        import sys

        import numpy as np

        import s2sgrad
        from s2sgrad.rules import registry
        from s2sgrad.testing import central_difference, check_grads, random_direction

        assert "scipy" not in sys.modules
        import scipy.integrate
        import scipy.linalg
        import scipy.signal
        import scipy.special
        import scipy.stats
        # nothing has read the tables yet: the rules are still pending
        assert "s2sgrad.rules.special" not in sys.modules
        assert "s2sgrad.rules.stats" not in sys.modules

        def decay(y, t, k):
            return -k * y

        def f(x):
            s = scipy.special.expit(x) * np.log1p(x ** 2)
            e = scipy.linalg.expm(0.3 * np.outer(x[:2], x[2:]))
            c = scipy.linalg.cho_solve(scipy.linalg.cho_factor(np.eye(2) * 3.0 + np.outer(x[:2], x[:2])), x[2:])
            p = scipy.stats.norm.logpdf(x, loc=0.5, scale=1.3)
            v = scipy.signal.convolve(x, np.array([1.0, -0.5, 0.25]))
            ys = scipy.integrate.odeint(decay, x[:2], np.array([0.0, 0.5, 1.0]), args=(1.5,),
                                        rtol=1e-10, atol=1e-10)
            return np.sum(s) + np.sum(e) + np.sum(c) + np.sum(p) + np.sum(v ** 2) + np.sum(ys[-1])

        rng = np.random.default_rng(3)
        x = rng.standard_normal(4)
        grad = s2sgrad.gradient(f)(x)
        for _ in range(3):
            v = random_direction(x, rng)
            numeric = central_difference(f, (x,), 0, v)
            assert np.isclose(np.dot(grad, v), numeric, rtol=1e-6, atol=1e-8), (
                np.dot(grad, v), numeric)
        check_grads(f, x, modes=("rev", "fwd"), rtol=1e-5)
        for prim in (scipy.special.expit, scipy.linalg.expm, scipy.linalg.cho_solve,
                     scipy.stats.norm.logpdf, scipy.signal.convolve, scipy.integrate.odeint):
            assert registry.lookup(prim).template.__module__.startswith("s2sgrad.rules."), prim
        print("ok")
        """)
    assert out.strip() == "ok"


def test_refusals_are_those_of_the_library(tmp_path):
    # what a rule refuses, and a function of a rule module without a rule, as before
    code = """
        import numpy as np

        import s2sgrad
        {first}
        import scipy.linalg
        import scipy.special

        def weighted(a, b):
            return scipy.special.logsumexp(a, b=b, return_sign=True)[0]

        def sliced(x):
            return np.sum(scipy.linalg.solve_triangular(np.eye(2) + x, x[0], overwrite_b=True))

        def no_rule(x):
            return np.sum(scipy.special.zeta(x, 2.0))

        for fn, args in ((weighted, (np.ones(3), np.ones(3))), (sliced, (np.ones((2, 2)),)),
                         (no_rule, (np.array([2.0, 3.0]),))):
            try:
                s2sgrad.gradient(fn)(*args)
            except s2sgrad.TransformError as exc:
                print(type(exc).__name__, str(exc).splitlines()[0])
            else:
                print(fn.__name__, "was not refused")
        """
    before = run(tmp_path, code.format(first="import scipy.stats  # before s2sgrad's tables"),
                 "before.py")
    after = run(tmp_path, code.format(first=""), "after.py")
    assert before.replace("before.py", "after.py") == after
    lines = after.splitlines()
    assert len(lines) == 3 and all(line.startswith("TransformError") for line in lines), after
    assert "return_sign=True) is not differentiated" in lines[0]  # the rules' own refusals
    assert "overwrite_b=True) may overwrite b" in lines[1]
    assert "no derivative rule for scipy.special.zeta" in lines[2]


@pytest.mark.parametrize("order", ["scipy first", "s2sgrad first"])
def test_a_users_rule_for_a_scipy_function_wins_over_the_library(tmp_path, order):
    out = run(tmp_path, f"""
        import sys

        import numpy as np

        {"import scipy.special" if order == "scipy first" else ""}
        import s2sgrad
        from s2sgrad import rules
        from s2sgrad.rules import registry
        import scipy.special

        version = registry.version

        @s2sgrad.vjp_rule(scipy.special.expit, shape="elementwise")
        def my_expit(g, ans, x):
            return 2.0 * g

        s2sgrad.nondifferentiable(scipy.special.erf, why="a user's choice")
        assert registry.version is not version  # the user's registrations change the table

        def f(x):
            return np.sum(scipy.special.expit(x) + scipy.special.erf(x))

        x = np.array([0.3, -0.2])
        assert np.allclose(s2sgrad.gradient(f)(x), 2.0)

        registry.all_rules()  # every pending rule registered, scipy.stats' and others
        assert "s2sgrad.rules.stats" in sys.modules
        assert registry.lookup(scipy.special.expit).template is my_expit
        assert registry.jvp_lookup(scipy.special.expit) is None  # the library's is dropped
        assert registry.is_nondifferentiable(scipy.special.erf)
        assert registry.lookup(scipy.special.erf) is None
        assert np.allclose(s2sgrad.gradient(f)(x), 2.0)
        # the library's own table still holds its rules
        library = {{r.primitive: r for r in rules.LIBRARY_RULES}}
        assert library[scipy.special.expit].template.__module__ == "s2sgrad.rules.special"
        assert library[scipy.special.erf].template.__module__ == "s2sgrad.rules.special"
        print("ok")
        """)
    assert out.strip() == "ok"


def test_registering_pending_rules_keeps_compiled_functions(tmp_path):
    out = run(tmp_path, """
        import sys

        import numpy as np

        import s2sgrad
        from s2sgrad.rules import registry

        def f(x):
            return np.sum(np.sin(x))

        df = s2sgrad.gradient(f)
        df(np.ones(2))
        version = registry.version
        import scipy.special
        assert "s2sgrad.rules.special" not in sys.modules
        assert registry.lookup(scipy.special.expit) is not None
        assert "s2sgrad.rules.special" in sys.modules
        # rules for what no compiled function could have called: nothing to compile again
        assert registry.version is version
        print("ok")
        """)
    assert out.strip() == "ok"


def test_the_tables_read_in_full_hold_every_rule(tmp_path):
    out = run(tmp_path, """
        import sys

        import s2sgrad
        from s2sgrad import rules
        from s2sgrad.rules import registry

        assert "scipy" not in sys.modules
        names = {r.name for r in registry.all_rules()}
        assert "scipy" in sys.modules
        library = {r.name for r in rules.LIBRARY_RULES}
        for name in ("expit", "scipy.linalg.cho_solve", "scipy.stats.norm.logpdf",
                     "scipy.signal.convolve", "scipy.integrate.odeint"):
            assert name in names and name in library, name
        assert names == library
        print("ok")
        """)
    assert out.strip() == "ok"
