"""The package's layering: each module imports only from its own layer and those below, and
no imports form a cycle. The layers are the table in ``s2sgrad/__init__.py``'s docstring.

Imports are read from the source with ``ast``, wherever they stand (inside a function, under
``if TYPE_CHECKING:``), so a deferred import cannot hide a dependency.
"""

import ast
import itertools
import pathlib

ROOT = pathlib.Path(__file__).parent.parent
PACKAGE = ROOT / "s2sgrad"


def layers() -> list[tuple[str, set[str]]]:
    """The table, bottom layer first: (label, top-level modules and packages). It is the
    first indented block of the docstring; a row without a label continues the one above."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text()))
    block = next(p for p in doc.split("\n\n") if p.startswith("    "))
    table: list[tuple[str, set[str]]] = []
    for row in block.splitlines():
        label, colon, names = row.strip().rpartition(":")
        if colon:
            table.append((label, set()))
        table[-1][1].update(names.split())
    return table


def modules() -> dict[str, pathlib.Path]:
    """Dotted name -> file, for every module of the package (a package by its __init__)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: pathlib.Path, known: dict) -> dict[str, int]:
    """The package's modules that a module imports -> the line of the first such import."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".")
                if path.name != "__init__.py":
                    package = package[:-1]
                package = package[:len(package) - node.level + 1]
                base = ".".join(package + ([node.module] if node.module else []))
            # `from package import module` imports package.module; `from module import f`,
            # the module itself
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known and target != name:
                found.setdefault(target, node.lineno)
    return found


def layer_of(name: str, table: list[tuple[str, set[str]]]) -> int | None:
    top = name.split(".")[1] if "." in name else "__init__"
    return next((k for k, (_, names) in enumerate(table) if top in names), None)


def edges() -> dict[str, dict[str, int]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def where(name: str, line: int) -> str:
    return f"{modules()[name].relative_to(ROOT)}:{line}"


def test_every_module_has_a_layer():
    table = layers()
    assert [label for label, _ in table] == ["leaf", "compiler", "tensor", "api"]
    missing = [name for name in modules() if layer_of(name, table) is None]
    assert not missing, f"modules in no layer of the table in s2sgrad/__init__.py: {missing}"
    tops = {name.split(".")[1] if "." in name else "__init__" for name in modules()}
    stale = [name for _, names in table for name in names - tops]
    assert not stale, f"the table in s2sgrad/__init__.py names no module: {stale}"


def test_no_module_imports_a_higher_layer():
    table = layers()
    wrong = []
    for name, targets in edges().items():
        here = layer_of(name, table)
        for target, line in targets.items():
            there = layer_of(target, table)
            if here is not None and there is not None and there > here:
                wrong.append(f"{where(name, line)}: {name} ({table[here][0]}) imports "
                             f"{target} ({table[there][0]})")
    assert not wrong, "imports of a higher layer:\n" + "\n".join(wrong)


def test_no_import_cycle():
    graph = edges()
    done: set[str] = set()
    path: list[str] = []  # the modules being explored, each importing the next

    def cycle_from(name: str) -> list[str] | None:
        path.append(name)
        for target in graph[name]:
            if target in path:
                return path[path.index(target):] + [target]
            if target not in done:
                cycle = cycle_from(target)
                if cycle:
                    return cycle
        path.pop()
        done.add(name)
        return None

    for name in graph:
        cycle = None if name in done else cycle_from(name)
        assert not cycle, "an import cycle:\n" + "\n".join(
            f"{where(a, graph[a][b])}: {a} imports {b}" for a, b in itertools.pairwise(cycle))


# The compiler's modules in pipeline order (s2sgrad/compiler/__init__.py), stage by stage: a
# module imports only modules of earlier stages (and its own package's), so no import runs
# back up the pipeline, and the two modes' passes (reverse, tangent) import neither the other.
PIPELINE = [
    {"statements", "sourcefile", "derivatives", "simplify", "validity"},  # shared homes
    {"parse"}, {"templates"}, {"fence"}, {"normalize"}, {"analyze"},
    {"views"}, {"slots"}, {"aliasing"},  # the view table, which slots hold what, then the pass
    {"context"},  # what both modes' passes read
    {"batching"},  # many directions at once, for the tangent pass
    {"dots"}, {"jvprules"},  # each name's tangent, then the rules' tangents: the tangent pass's
    {"reverse", "tangent"},
    {"inplace", "stacks", "coalesce"}, {"optimize"}, {"codegen"}, {"compiled"}, {"higher"},
    {"pipeline"}, {"function"},
]


def test_the_compilers_modules_import_only_earlier_stages_of_the_pipeline():
    stage = {name: k for k, names in enumerate(PIPELINE) for name in names}
    inside = {name.split(".")[2] for name in modules() if name.startswith("s2sgrad.compiler.")}
    assert inside == set(stage), f"stages to name: {inside ^ set(stage)}"
    wrong = []
    for name, targets in edges().items():
        if not name.startswith("s2sgrad.compiler."):
            continue
        here = name.split(".")[2]
        for target, line in targets.items():
            there = target.split(".")[2] if target.startswith("s2sgrad.compiler.") else None
            if there is not None and there != here and stage[there] >= stage[here]:
                wrong.append(f"{where(name, line)}: {name} imports {target}")
    assert not wrong, "imports that run back up the pipeline:\n" + "\n".join(wrong)


# PyTorch's import paths that the tensor layer offers
TORCH_PATHS = ["s2sgrad.nn", "s2sgrad.nn.functional", "s2sgrad.nn.init", "s2sgrad.nn.utils",
               "s2sgrad.nn.parameter", "s2sgrad.nn.modules", "s2sgrad.nn.modules.module",
               "s2sgrad.optim", "s2sgrad.optim.lr_scheduler", "s2sgrad.utils",
               "s2sgrad.utils.data"]


def test_pytorch_paths_are_the_files_there():
    """Each import path is the module of the file at that path (which an editor and a type
    checker find), not another module put in its place in ``sys.modules``."""
    import importlib

    import s2sgrad

    installed = pathlib.Path(s2sgrad.__file__).parent.parent
    known = modules()
    for name in TORCH_PATHS:
        module = importlib.import_module(name)
        assert module.__name__ == name
        assert (pathlib.Path(module.__file__).relative_to(installed)
                == known[name].relative_to(ROOT)), name


def test_no_module_is_written_into_sys_modules():
    written = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
                    and ast.unparse(node.value) == "sys.modules"):
                written.append(f"{where(name, node.lineno)}: {ast.unparse(node)}")
    assert not written, "modules written into sys.modules by hand:\n" + "\n".join(written)


def test_no_class_over_400_lines_and_no_module_over_800():
    """Each module holds one job, each class one role: a module past 800 lines or a class
    past 400 is split where its jobs part."""
    over = []
    for path in modules().values():
        text = path.read_text()
        if len(text.splitlines()) > 800:
            over.append(f"{path.relative_to(ROOT)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 400:
                over.append(f"{path.relative_to(ROOT)}:{node.lineno}: class {node.name}, "
                            f"{node.end_lineno - node.lineno + 1} lines")
    assert not over, "\n".join(over)
