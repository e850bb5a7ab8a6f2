"""Run-time support: the helpers that generated code and derivative rules call.

A leaf of the layering: imports nothing of s2sgrad outside this package.
"""
