"""Derivative rules, one table per domain. Importing this package registers all of them:
those of NumPy and Python at once, those of scipy's functions once the scipy module they
belong to is imported (``registry.when_imported``), so that importing s2sgrad does not
import scipy."""

from functools import partial
from importlib import import_module

# Importing a rule module registers its rules.
from . import (  # noqa: F401
    arrays,
    containers,
    creators,
    decompositions,
    elementwise,
    fourier,
    linalg,
    nondiff,
    operators,
    products,
    reductions,
    registry,
    scalars,
    scipy_linalg,
    shapes,
    signal,
)
from .registry import (  # noqa: F401
    Rule,
    all_nondifferentiable,
    all_rules,
    is_nondifferentiable,
    jvp_lookup,
    jvp_rule,
    linear,
    lookup,
    nondifferentiable,
    primitive_name,
    vjp_rule,
)

registry.seal_library()

# The rule modules of scipy's functions, imported once the scipy module whose functions they
# are is (decompositions, scipy_linalg and signal declare their SciPy parts themselves).
for _module, _rules in (("scipy.special", "special"), ("scipy.stats", "stats"),
                        ("scipy.stats", "distributions"), ("scipy.integrate", "integrate")):
    registry.when_imported(_module, partial(import_module, f"{__name__}.{_rules}"))
del _module, _rules


def __getattr__(name: str):
    # LIBRARY_RULES: the library's own table, before any user registration replaced an entry
    # (docs, tests); reading it registers the pending rules.
    if name == "LIBRARY_RULES":
        return registry.library_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
