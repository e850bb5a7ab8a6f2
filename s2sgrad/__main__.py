"""``python -m s2sgrad``: show the code s2sgrad generates for a function.

    python -m s2sgrad examples/mlp.py:cross_entropy --args "(64,32) (32,) (32,10) (10,) (8,64) (8,10)"
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

import numpy as np


def _load(target: str):
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise SystemExit(f"expected FILE.py:FUNCTION, got {target!r}")
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(os.path.basename(path))[0], path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        raise SystemExit(f"{path} has no function {name!r}")
    return fn


def _example(spec: str):
    """'f' -> a float; '(3,4)' -> a float64 array of that shape."""
    spec = spec.strip()
    if spec in ("f", "float"):
        return 0.5
    shape = tuple(int(s) for s in spec.strip("()").split(",") if s.strip())
    return np.random.default_rng(0).standard_normal(shape)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m s2sgrad",
        description="Print the forward and adjoint code s2sgrad generates for a function.")
    parser.add_argument("target", help="FILE.py:FUNCTION")
    parser.add_argument("--args", default=None,
                        help="example arguments to specialise on, space-separated: 'f' for a "
                             "float, '(3,4)' for an array of that shape; default: arrays of "
                             "unknown rank")
    parser.add_argument("--wrt", default="0",
                        help="comma-separated positions to differentiate (default 0)")
    options = parser.parse_args(argv)

    from . import api
    from .compiler import function
    from .errors import TransformError
    fn = _load(options.target)
    if options.args is None:
        try:
            api.show(fn)
        except TransformError as exc:  # the user's file:line:col and what to write instead
            print(exc, file=sys.stderr)
            return 1
        return 0
    try:
        args = tuple(_example(s) for s in options.args.split())
        wrt = tuple(int(w) for w in options.wrt.split(","))
    except ValueError as exc:
        parser.error(f"--args and --wrt: {exc}")
    try:
        compiled = function.specialiser(fn).compiled(wrt, args, {})
    except TransformError as exc:  # the user's file:line:col and what to write instead
        print(exc, file=sys.stderr)
        return 1
    except (TypeError, ValueError) as exc:  # the example arguments do not fit the function
        parser.error(str(exc))
    print(compiled.forward_source)
    print(compiled.adjoint_source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
