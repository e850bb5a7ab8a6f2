"""Plain Python + NumPy functions with control flow, grouped by construct.

tests/compiler/test_control_flow.py runs each one through the compiler at several points away from
branch boundaries. The modules hold only the functions: no test code, no compiler imports.
"""
