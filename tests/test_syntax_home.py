"""syntax.py is the one module that builds gast nodes: every other module under s2sgrad/
inspects nodes (``isinstance(node, gast.X)``) and builds them through syntax's helpers, so a
change in gast's node constructors touches syntax.py only."""

import ast
import pathlib

import gast

PACKAGE = pathlib.Path(__file__).parent.parent / "s2sgrad"
HOME = PACKAGE / "syntax.py"


def _is_node_class(attr: str) -> bool:
    """A gast node class by name; a capitalised name this gast lacks counts too (another
    gast version may have it)."""
    found = getattr(gast, attr, None)
    if isinstance(found, type):
        return issubclass(found, gast.AST)
    return found is None and attr[:1].isupper()


def constructions(source: str) -> list[tuple[int, str]]:
    """(line, what) of every call of a gast node constructor in ``source``: ``gast.Name(...)``,
    through ``import gast as g`` or ``from gast import Name``, or ``getattr(gast, ...)(...)``."""
    tree = ast.parse(source)
    modules, classes = set(), {}  # names bound to the gast module; to its node classes
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names
                        if a.name == "gast" or a.name.startswith("gast.")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gast":
            for a in node.names:
                if a.name == "gast":
                    modules.add(a.asname or a.name)
                elif _is_node_class(a.name):
                    classes[a.asname or a.name] = a.name

    def is_gast(expr: ast.expr) -> bool:  # gast, g, gast.gast
        while isinstance(expr, ast.Attribute) and expr.attr == "gast":
            expr = expr.value
        return isinstance(expr, ast.Name) and expr.id in modules

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and is_gast(func.value) and _is_node_class(func.attr):
            found.append((node.lineno, f"gast.{func.attr}(...)"))
        elif isinstance(func, ast.Name) and func.id in classes:
            found.append((node.lineno, f"{func.id}(...) (gast.{classes[func.id]})"))
        elif (isinstance(func, ast.Call) and isinstance(func.func, ast.Name)
              and func.func.id == "getattr" and func.args and is_gast(func.args[0])):
            found.append((node.lineno, "getattr(gast, ...)(...)"))
    return sorted(found)


def test_only_syntax_builds_gast_nodes():
    offences = [f"{path.relative_to(PACKAGE.parent)}:{line}: {what}"
                for path in sorted(PACKAGE.rglob("*.py")) if path != HOME
                for line, what in constructions(path.read_text())]
    assert not offences, "gast nodes built outside s2sgrad/syntax.py (add a builder there):\n" + \
        "\n".join(offences)


def test_every_form_of_construction_is_found():
    source = (
        "import gast\nimport gast as g\nfrom gast import Name, Pass as P\n"
        "from gast import gast as inner\n"
        "a = gast.Name(id='x', ctx=gast.Load())\n"  # 5: Name and Load
        "b = g.keyword(arg='k', value=None)\n"
        "c = Name('x')\n"
        "d = P()\n"
        "e = getattr(gast, 'Add')()\n"
        "f = inner.If(test=None, body=[], orelse=[])\n"
        "g2 = gast.SomeFutureNode()\n"
        "ok = isinstance(a, gast.Name), gast.walk(a), gast.dump(a), gast.parse('x')\n"
    )
    assert [line for line, _ in constructions(source)] == [5, 5, 6, 7, 8, 9, 10, 11]
