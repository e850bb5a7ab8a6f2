"""Functions of installed packages and of Python's standard library are called, never
differentiated through their own source: a differentiated value that flows into one without
a derivative rule is refused at the user's line, naming the function and the two ways on
(a rule, or ``differentiate_through``). Values that carry no gradient pass freely."""

from __future__ import annotations

import colorsys
import statistics

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.compiler.analyze import values
from s2sgrad.testing import check_grads

X = np.linspace(0.1, 0.9, 4)


@pytest.fixture
def through():
    before = set(values._THROUGH)
    yield s2sgrad.differentiate_through
    values._THROUGH.clear()
    values._THROUGH.update(before)


def mean_of_items(x):
    return statistics.fmean([x[0], x[1]]) * 2.0


def yiq(r, g, b):
    y, i, q = colorsys.rgb_to_yiq(r, g, b)
    return y * i + q


def constant_from_a_library(x):
    return np.sum(x) * statistics.fmean([1.0, 2.0, 4.0])


def test_a_library_function_without_a_rule_is_refused_at_the_users_line():
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(mean_of_items)(X)
    err = info.value
    assert "statistics.fmean" in str(err) and "Python's standard library" in str(err)
    assert "s2sgrad.differentiate_through('statistics')" in err.hint
    assert "@s2sgrad.vjp_rule(statistics.fmean)" in err.hint
    assert err.filename == __file__
    assert err.lineno == mean_of_items.__code__.co_firstlineno + 1


def test_a_refusal_inside_a_method_of_a_library_object():
    scipy_stats = pytest.importorskip("scipy.stats")

    def gumbel_loss(x):
        return np.sum(scipy_stats.gumbel_r.logpdf(x, 0.1, 2.0))
    with pytest.raises(TransformError, match="belongs to 'scipy'") as info:
        s2sgrad.gradient(gumbel_loss)(X)
    assert info.value.filename == __file__


def test_results_that_carry_no_gradient_pass():
    check_grads(constant_from_a_library, X)


def test_differentiate_through_enters_the_source(through):
    with pytest.raises(TransformError, match="belongs to 'colorsys'"):
        s2sgrad.gradient(yiq, (0, 1, 2))(0.3, 0.5, 0.7)
    through("colorsys")
    check_grads(yiq, 0.3, 0.5, 0.7, modes=("rev", "fwd"))
    through(statistics)  # a module object names itself; fmean's source has, in an except
    with pytest.raises(TransformError, match="'nonlocal'|generator") as info:  # block, a
    # generator that assigns a nonlocal name
        s2sgrad.gradient(mean_of_items)(X)
    assert info.value.filename == statistics.__file__


def hermitian_power(x):
    return np.sum(np.fft.hfft(x) ** 2)


def test_a_fourier_transform_without_a_rule_is_refused():
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(hermitian_power)(np.arange(4.0))
    assert "no derivative rule for numpy.fft.hfft" in str(info.value)
    assert "np.fft.fft for scipy.fft.fft" in str(info.value)
    assert "test_library_boundary.py" in str(info.value)
