"""Pass 2, fence: reject what the later passes do not understand, before they see it.

Before: a parsed FunctionDef of arbitrary Python.
After:  the same tree, unchanged, known to hold only supported constructs; otherwise a
        TransformError pointing at the construct (file:line:col, with a caret) that says what
        is unsupported and what to write instead.

    def f(x):
        with open(p) as fh:   -> TransformError: 'with' statements are not supported
            ...                     at model.py:12:5 / Move the 'with' block out of ...

A statement passes if ``normalize`` has a row for it (``statements.SOURCE``) and its
parts pass; the statements with a check of their own below (assignment targets, loops,
break outside a loop) pass that check instead.
Checks that need to know what a name refers to (calls without a derivative rule, ``eval``)
happen in ``analyze``, where call targets are resolved.
"""

from __future__ import annotations

import gast

from .. import syntax
from .parse import Parsed, imported_names
from .statements import SOURCE

_TOP_LEVEL_IMPORT = ("Move the import to the top level of the function's body, or to module "
                     "level.")

# Constructs that can never be differentiated correctly here, with what to do instead.
_REFUSED: dict[type, tuple[str, str]] = {
    gast.AsyncWith: ("'async with' is not supported", "Differentiate a synchronous function."),
    gast.AsyncFor: ("'async for' is not supported", "Differentiate a synchronous function."),
    gast.AsyncFunctionDef: ("async functions are not supported",
                            "Differentiate a synchronous function."),
    gast.Await: ("'await' is not supported", "Differentiate a synchronous function."),
    gast.Yield: ("generators ('yield') are not supported here",
                 ("Build a list and return it instead of yielding (a nested generator "
                  "function whose calls are consumed at once is supported).")),
    gast.YieldFrom: ("generators ('yield from') are not supported",
                     "Build a list and return it instead of yielding."),
    gast.Global: ("'global' declarations are not supported",
                  "Pass the value in as an argument and return the new value."),
    gast.Import: ("an import inside a block or a nested function is not supported",
                  _TOP_LEVEL_IMPORT),
    gast.ImportFrom: ("an import inside a block or a nested function is not supported",
                      _TOP_LEVEL_IMPORT),
    gast.ClassDef: (("class definitions inside a differentiated function are not "
                     "supported: the objects it builds are followed through the methods of "
                     "classes defined at the top level of the module"),
                    "Define the class at module level."),
    gast.Starred: (("starred expressions (*xs) are supported only as call arguments and "
                    "assignment targets"),
                   "Write the items out, e.g. (n, m, 2) rather than (*shape, 2)."),
    gast.Match: ("'match' statements are not supported",
                 "Write the cases as an if/elif chain."),
    gast.TryStar: ("try/except* blocks are not supported",
                   "Handle errors outside the differentiated function."),
    gast.TypeAlias: ("'type' alias statements are not supported",
                     "Define the alias at module level."),
}
# t-strings (Python 3.14) have a node from gast 0.7 on; an older gast makes none.
if hasattr(gast, "TemplateStr"):
    _REFUSED[gast.TemplateStr] = (
        "template strings (t-strings) are not supported inside a differentiated function",
        "Build them outside it.")

# Constructs that a later version will differentiate; refused for now with the same precision.
_NOT_YET: dict[type, tuple[str, str]] = {
    gast.SetComp: ("set comprehensions are not supported", "Build the value outside."),
    gast.Set: ("set literals are not supported", "Use a tuple."),
}

_EXPRESSIONS = (
    gast.Lambda, gast.IfExp, gast.BoolOp, gast.ListComp, gast.GeneratorExp, gast.DictComp,
    gast.Dict,
    gast.BinOp, gast.UnaryOp, gast.Compare, gast.Call, gast.Attribute, gast.Name,
    gast.NamedExpr, gast.JoinedStr, gast.FormattedValue,
    gast.Constant, gast.Tuple, gast.List, gast.Subscript, gast.Slice, gast.keyword,
)
_CONTEXT = (gast.Load, gast.Store, gast.Param, gast.Del, gast.operator, gast.unaryop,
            gast.cmpop, gast.boolop, gast.arguments, gast.alias, gast.comprehension,
            gast.withitem)


def fence(parsed: Parsed) -> Parsed:
    fn = parsed.node
    for default in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
        _check_expression_tree(parsed, default)
    for k, stmt in enumerate(fn.body):
        if isinstance(stmt, (gast.Import, gast.ImportFrom)):
            _check_import(parsed, stmt, fn.body[:k])
        else:
            _check_statement(parsed, stmt)
    outer = _own_nonlocal(fn.body)
    if outer is not None:  # a nested function's nonlocal is the function's own variable
        raise parsed.error(
            "'nonlocal' in the differentiated function itself: it would change a variable "
            "of the function around it", outer,
            "Pass the value in as an argument and return the new value.")
    return parsed


def _own_nonlocal(stmts: list[gast.stmt]) -> gast.Nonlocal | None:
    """A ``nonlocal`` of ``stmts``' own scope (not of the functions defined there)."""
    todo = list(stmts)
    while todo:
        node = todo.pop(0)
        if isinstance(node, gast.Nonlocal):
            return node
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(node))
    return None


def _check_import(parsed: Parsed, stmt: gast.stmt, before: list[gast.stmt]) -> None:
    """An import at the top level of the body binds its names once, for the whole call
    (parse did it): none may be assigned in the function too, or read before the import
    (Python would raise UnboundLocalError there)."""
    read_before = {n.id for s in before for n in gast.walk(s)
                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    for name, _, _ in imported_names(stmt):
        if name in parsed.local_names:
            raise parsed.error(f"'{name}' is imported and also assigned in the function",
                               stmt, "Give the imported name or the variable another name.")
        if name in read_before:
            raise parsed.error(f"'{name}' is read before the import that binds it", stmt,
                               "Move the import to the top of the function.")


def _refuse(parsed: Parsed, node: gast.AST) -> None:
    for table in (_REFUSED, _NOT_YET):
        entry = table.get(type(node))
        if entry is not None:
            raise parsed.error(entry[0], node, entry[1])


def _check_statement(parsed: Parsed, stmt: gast.stmt, loop_depth: int = 0) -> None:
    _refuse(parsed, stmt)
    if isinstance(stmt, gast.Assign):
        for target in stmt.targets:
            _check_target(parsed, target, stmt.value)
        _check_expression_tree(parsed, stmt.value)
    elif isinstance(stmt, gast.AugAssign):
        if not isinstance(stmt.target, (gast.Name, gast.Subscript)):
            _check_target(parsed, stmt.target, None)
        _check_expression_tree(parsed, stmt.value)
    elif isinstance(stmt, gast.AnnAssign):
        if not isinstance(stmt.target, gast.Name):
            raise parsed.error("annotated assignments to an element or attribute are not "
                               "supported", stmt, "Drop the annotation: `y[i] = v`.")
        if stmt.value is None:
            raise parsed.error("annotated declarations without a value are not supported",
                               stmt, "Assign a value, e.g. `y: float = 0.0`.")
        _check_expression_tree(parsed, stmt.value)
    elif isinstance(stmt, (gast.Return, gast.Expr)):
        if stmt.value is not None:
            _check_expression_tree(parsed, stmt.value)
    elif isinstance(stmt, (gast.Pass, gast.Assert, gast.Raise)):
        for child in gast.iter_child_nodes(stmt):
            _check_expression_tree(parsed, child)
    elif isinstance(stmt, gast.If):
        _check_expression_tree(parsed, stmt.test)
        for child in stmt.body + stmt.orelse:
            _check_statement(parsed, child, loop_depth)
    elif isinstance(stmt, (gast.For, gast.While)):
        if isinstance(stmt, gast.For):
            _check_target(parsed, stmt.target, None)
            _check_expression_tree(parsed, stmt.iter)
        else:
            _check_expression_tree(parsed, stmt.test)
        for child in stmt.body + stmt.orelse:
            _check_statement(parsed, child, loop_depth + 1)
    elif isinstance(stmt, gast.FunctionDef):  # a nested function: inlined where called
        if stmt.decorator_list:
            raise parsed.error("decorators on nested functions are not supported", stmt,
                               "Define the decorated function at module level.")
        for default in stmt.args.defaults + [d for d in stmt.args.kw_defaults if d is not None]:
            _check_expression_tree(parsed, default)
            for n in gast.walk(default):  # evaluated once, where the def runs, not per call
                if isinstance(n, gast.NamedExpr):
                    raise parsed.error("an assignment expression in a default of a nested "
                                       "function is not supported", n,
                                       "Assign it before the def.")
        for child in _yields_as_values(stmt.body):  # a generator: normalize builds the
            _check_statement(parsed, child, 0)       # list of what it yields
    elif isinstance(stmt, gast.With):  # which managers: normalize, where names resolve
        for item in stmt.items:
            _check_expression_tree(parsed, item.context_expr)
        _check_exits(parsed, stmt.body, "a 'with' block")
        for child in stmt.body:
            _check_statement(parsed, child, loop_depth)
    elif isinstance(stmt, gast.Try):  # which exceptions: normalize, where names resolve
        _check_exits(parsed, stmt.body, "a try block")
        ends = _last(stmt.body)
        for handler in stmt.handlers:
            _check_exits(parsed, handler.body, "an except block",
                         returns=True if isinstance(ends, gast.Return) else None)
        for block, where in ((stmt.orelse, "the else block of a try"),
                             (stmt.finalbody, "a finally block")):
            _check_exits(parsed, block, where, returns=None)
        if isinstance(ends, gast.Return) and (stmt.finalbody or stmt.orelse):
            raise parsed.error("'return' inside a try block with an else or finally block "
                               "is not supported", ends,
                               "Assign the result in the try block and return after it.")
        _check_parts(parsed, stmt, loop_depth)
    elif isinstance(stmt, (gast.Break, gast.Continue)):
        if not loop_depth:
            raise parsed.error(f"'{type(stmt).__name__.lower()}' outside a loop", stmt)
    elif type(stmt) in SOURCE:  # a construct normalize desugars: its parts must pass
        _check_parts(parsed, stmt, loop_depth)
    else:
        raise parsed.error(f"'{type(stmt).__name__}' statements are not supported", stmt,
                           "Rewrite it with assignments, calls and return.")


def _yields_as_values(body: list[gast.stmt]) -> list[gast.stmt]:
    """A nested def's body with each ``yield v`` statement as the statement ``v`` (a copy):
    what is checked of it. A yield anywhere else is checked, and refused, as it stands."""
    if not any(isinstance(n, gast.Yield) for s in body for n in gast.walk(s)):
        return body

    class Values(gast.NodeTransformer):
        def visit_Expr(self, node: gast.Expr) -> gast.stmt:
            if isinstance(node.value, gast.Yield) and node.value.value is not None:
                return syntax.located(syntax.expr_stmt(node.value.value), node)
            if isinstance(node.value, gast.Yield):
                return syntax.located(syntax.pass_(), node)
            return node

        def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
            return node  # its own yields: checked where its own def is

    return [Values().visit(s) for s in syntax.clone(body)]


def _check_exits(parsed: Parsed, body: list[gast.stmt], where: str,
                 returns: bool | None = False) -> None:
    """A block that must run to its end: no break or continue of a loop around it, and a
    return only as its last statement (the rest of the function is then not reached);
    ``returns``: True, anywhere (an except block after a try block that returns); None,
    nowhere."""
    last = _last(body)
    for stmt in body:
        for node in _own_statements(stmt):
            if isinstance(node, (gast.Break, gast.Continue)):
                word = type(node).__name__.lower()
                raise parsed.error(f"'{word}' inside {where} is not supported", node,
                                   f"Set a flag in the block and {word} after it.")
            if not isinstance(node, gast.Return) or returns or (
                    returns is False and node is last):
                continue
            if returns is None and where == "an except block":
                raise parsed.error("'return' inside an except block is supported only "
                                   "where the try block ends in a return", node,
                                   "Assign the result in the except block and return "
                                   "after the try.")
            if returns is None:
                raise parsed.error(f"'return' inside {where} is not supported", node,
                                   "Assign the result in the block and return after it.")
            raise parsed.error(f"'return' inside {where} is supported only as its last "
                               "statement", node,
                               "Assign the result in the block and return after it.")


def _last(body: list[gast.stmt]) -> gast.stmt | None:
    """The statement a block ends with, inside the with blocks it ends with."""
    last = body[-1] if body else None
    while isinstance(last, gast.With) and last.body:  # `with a: with b: return v`
        last = last.body[-1]
    return last


def _own_statements(stmt: gast.stmt):
    """``stmt`` and the statements nested in it, not those of loops or functions in it
    (their break, continue and return are their own)."""
    yield stmt
    if isinstance(stmt, (gast.For, gast.While, gast.FunctionDef)):
        if isinstance(stmt, gast.FunctionDef):
            return
        for s in stmt.body + stmt.orelse:  # a return still leaves the function
            yield from (n for n in _own_statements(s) if isinstance(n, gast.Return))
        return
    for _, value in gast.iter_fields(stmt):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, gast.stmt):
                yield from _own_statements(item)
            elif isinstance(item, gast.excepthandler):
                for s in item.body:
                    yield from _own_statements(s)


def _check_parts(parsed: Parsed, node: gast.AST, loop_depth: int) -> None:
    """The nested statements and the expressions of a statement with no check of its own."""
    for _, value in gast.iter_fields(node):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, gast.stmt):
                _check_statement(parsed, item, loop_depth)
            elif isinstance(item, gast.excepthandler):
                _check_parts(parsed, item, loop_depth)
            elif isinstance(item, gast.AST):
                _check_expression_tree(parsed, item)


def _check_target(parsed: Parsed, target: gast.expr, value: gast.expr | None) -> None:
    if isinstance(target, gast.Name):
        return
    if isinstance(target, (gast.Tuple, gast.List)):
        for t in target.elts:  # a, *rest = ...: rest takes the items between, as a list
            _check_target(parsed, t.value if isinstance(t, gast.Starred) else t, None)
        return
    if isinstance(target, gast.Attribute) and isinstance(target.value, gast.Name):
        return  # an attribute of an object the function builds (else normalize refuses)
    if isinstance(target, gast.Attribute):
        raise parsed.error(
            "assigning to an attribute is not supported: it would change an object outside "
            "the function", target, "Return the new value instead and assign it outside.")
    if isinstance(target, gast.Subscript):
        _check_expression_tree(parsed, target)
        return
    raise parsed.error("this assignment target is not supported", target)


def _check_expression_tree(parsed: Parsed, node: gast.AST) -> None:
    spread = {id(a) for n in gast.walk(node) if isinstance(n, gast.Call)  # f(*xs): analyze
              for a in n.args if isinstance(a, gast.Starred)}  # allows it without gradients
    for child in gast.walk(node):
        if id(child) in spread:
            continue
        _refuse(parsed, child)
        if not isinstance(child, _EXPRESSIONS + _CONTEXT):
            raise parsed.error(f"'{type(child).__name__}' expressions are not supported",
                               child, "Compute it outside the differentiated function, or "
                               "rewrite it with calls, operators and indexing.")
