"""Derivative rules, one table per domain. Importing this package registers all of them."""

from .registry import (  # noqa: F401
    Rule,
    all_nondifferentiable,
    all_rules,
    is_nondifferentiable,
    lookup,
    nondifferentiable,
    primitive_name,
    vjp_rule,
)
