"""Derivative rules, one table per domain. Importing this package registers all of them."""

# Importing a rule module registers its rules.
from . import (  # noqa: F401
    arrays,
    containers,
    creators,
    decompositions,
    elementwise,
    integrate,
    linalg,
    nondiff,
    operators,
    products,
    reductions,
    scalars,
    shapes,
    signal,
    special,
    stats,
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

# The library's own table, before any user registration replaces an entry (docs, tests).
LIBRARY_RULES = tuple(all_rules())
