"""The invariants `normalize` promises, checked on every function the test corpora hold.

After normalize, a block holds only `name = <one operation on atoms>`, calls kept for their
effect, assert/raise, `if <atom>:` with blocks, `for <name> in <atom>:` and `while True:`
with a block, `break` (only as the whole body of an `if`), and the function ends with one
`return <atom>`. Within a block, no name is assigned twice.
"""


import gast
import pytest

import tests.cases
import tests.catalogue
from s2sgrad.compiler.fence import fence
from s2sgrad.compiler.normalize import normalize
from s2sgrad.compiler.parse import parse
from s2sgrad.errors import TransformError
from tests import corpus


def is_atom(node, locals_):
    if isinstance(node, gast.Constant):
        return True
    if isinstance(node, gast.Tuple):
        return all(isinstance(e, gast.Constant) or is_atom(e, locals_) for e in node.elts)
    if isinstance(node, gast.Name):
        return True
    if isinstance(node, gast.Attribute):  # a static reference such as np.pi
        root = node
        while isinstance(root, gast.Attribute):
            root = root.value
        return isinstance(root, gast.Name) and root.id not in locals_
    return False


def check_operation(node, locals_):
    def atom(n):
        return is_atom(n, locals_)

    if atom(node):
        return
    if isinstance(node, gast.BinOp):
        assert atom(node.left) and atom(node.right)
    elif isinstance(node, gast.UnaryOp):
        assert atom(node.operand)
    elif isinstance(node, gast.Compare):
        assert atom(node.left) and all(atom(c) for c in node.comparators)
    elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id == "__setitem__":  # y_1 = __setitem__(y[index], v)
        region, value, *ufunc = node.args  # (np.add.at: the ufunc's name, a constant)
        check_operation(region, locals_)
        assert atom(value)
        assert all(isinstance(u, gast.Constant) and isinstance(u.value, str) for u in ufunc)
    elif isinstance(node, gast.Call):
        func = node.func
        assert atom(func) or (isinstance(func, gast.Attribute) and atom(func.value))
        assert all(atom(a.value if isinstance(a, gast.Starred) else a) for a in node.args)
        assert all(atom(k.value) for k in node.keywords)
    elif isinstance(node, gast.Attribute):
        assert atom(node.value)
    elif isinstance(node, gast.Subscript):
        assert atom(node.value)
        index = node.slice
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for part in parts:
            if isinstance(part, gast.Slice):
                assert all(p is None or atom(p) for p in (part.lower, part.upper, part.step))
            else:
                assert atom(part)
    elif isinstance(node, (gast.Tuple, gast.List)):
        assert all(atom(e) for e in node.elts)
    elif isinstance(node, gast.Dict):  # a dict literal: constant keys, atoms as values
        assert all(isinstance(k, gast.Constant) for k in node.keys)
        assert all(atom(v) for v in node.values)
    else:
        pytest.fail(f"not an ANF operation: {gast.dump(node)}")


def check_block(block, locals_, in_loop=False):
    assigned = set()
    for stmt in block:
        if isinstance(stmt, gast.Assign):
            (target,) = stmt.targets
            assert isinstance(target, gast.Name), gast.dump(stmt)
            assert target.id not in assigned, f"{target.id} assigned twice in one block"
            assigned.add(target.id)
            check_operation(stmt.value, locals_)
        elif isinstance(stmt, gast.Expr):
            check_operation(stmt.value, locals_)
        elif isinstance(stmt, gast.If):
            assert is_atom(stmt.test, locals_)
            if any(isinstance(s, gast.Break) for s in stmt.body):
                assert in_loop and len(stmt.body) == 1 and not stmt.orelse
                continue
            check_block(stmt.body, locals_, in_loop)
            check_block(stmt.orelse, locals_, in_loop)
        elif isinstance(stmt, gast.For):
            assert isinstance(stmt.target, gast.Name) and is_atom(stmt.iter, locals_)
            check_block(stmt.body, locals_, True)
        elif isinstance(stmt, gast.While):
            assert isinstance(stmt.test, gast.Constant) and stmt.test.value is True
            check_block(stmt.body, locals_, True)
        else:
            assert isinstance(stmt, (gast.Assert, gast.Raise, gast.Pass)), gast.dump(stmt)


@pytest.mark.parametrize("fn", corpus.functions(tests.cases, tests.catalogue))
def test_normalize_establishes_anf(fn):
    try:
        parsed = fence(parse(fn))
        fn_node = normalize(parsed).node
    except TransformError:
        pytest.skip("refused by design")
    body = fn_node.body
    check_block(body[:-1], parsed.local_names)
    assert isinstance(body[-1], gast.Return) and is_atom(body[-1].value, parsed.local_names)
    assert not any(isinstance(n, gast.Return) for s in body[:-1] for n in gast.walk(s))
