"""Forward mode: the tangent function (``s2sgrad.jvp``) of every catalogue function, checked
against central finite differences along random directions (``check_grads(modes=("fwd",))``),
at one random point per (function, wrt set) of the catalogues' tables."""

from __future__ import annotations

import pytest

from s2sgrad.testing import check_grads
from tests.compiler import test_catalogue, test_control_flow


def _params() -> list:
    params = []
    for table in (test_catalogue, test_control_flow):
        for p in table._params():
            case, wrt = p.values
            params.append(pytest.param(case, wrt, id=p.id, marks=p.marks))
    return params


@pytest.mark.parametrize("case, wrt", _params())
def test_jvp_matches_finite_differences(case, wrt) -> None:
    args = case.draw(0)
    check_grads(case.fn, *args, wrt=list(wrt), modes=("fwd",), seed=0)
