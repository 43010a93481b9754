"""A short SQL-like text of an analysed expression, for refusal messages (``ltrim(body, repeat('ab', 600))``)."""

from __future__ import annotations

from collections.abc import Callable

from drivers.postgres.guard.model.ir import (
    Array,
    ArrayOp,
    BoolOp,
    Call,
    Case,
    Cast,
    Coalesce,
    Collate,
    Const,
    Expr,
    FieldSelect,
    MinMax,
    OpCall,
    Param,
    Row,
    SubLink,
    Subscript,
    Test,
    Var,
)

_MAX_LITERAL = 24
_type_name: Callable[[int], str] = str
_MAX_TEXT = 160


def describe(expr: Expr, type_name: Callable[[int], str] = str) -> str:
    """``expr`` as SQL, shortened; ``type_name`` names a cast's type."""
    global _type_name
    _type_name = type_name
    text = _render(expr, 0)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 3] + "..."


def _render(expr: Expr, depth: int) -> str:
    if depth > 12:
        return "..."
    inner = depth + 1
    if isinstance(expr, Param):  # as the client wrote it; its value is theirs and reading it would pin it
        return f"${expr.number}"
    if isinstance(expr, Const):
        if expr.text is None:
            return "NULL"
        if expr.literal in ("integer", "numeric", "boolean"):
            return expr.text if len(expr.text) <= _MAX_LITERAL else expr.text[:_MAX_LITERAL] + "..."
        shown = expr.text if len(expr.text) <= _MAX_LITERAL else expr.text[:_MAX_LITERAL] + "..."
        return "'" + shown.replace("'", "''") + "'"
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Call):
        args = [_render(a, inner) for a in expr.direct_args + expr.args]
        if expr.star:
            args = ["*"]
        return f"{expr.function.name}({', '.join(args)})"
    if isinstance(expr, OpCall):
        if len(expr.args) == 1:
            return f"{expr.operator.name} {_render(expr.args[0], inner)}"
        return f"{_render(expr.args[0], inner)} {expr.operator.name} {_render(expr.args[1], inner)}"
    if isinstance(expr, ArrayOp):
        kind = "ANY" if expr.use_or else "ALL"
        return f"{_render(expr.args[0], inner)} {expr.operator.name} {kind} ({_render(expr.args[1], inner)})"
    if isinstance(expr, Cast):
        return _render(expr.arg, depth) if not expr.explicit else f"{_render(expr.arg, inner)}::{_type_name(expr.type)}"
    if isinstance(expr, BoolOp):
        return f" {expr.op} ".join(_render(a, inner) for a in expr.args)
    if isinstance(expr, (Coalesce, MinMax)):
        name = "coalesce" if isinstance(expr, Coalesce) else expr.op.lower()
        return f"{name}({', '.join(_render(a, inner) for a in expr.args)})"
    if isinstance(expr, Case):
        return "CASE ... END"
    if isinstance(expr, Array):
        return f"ARRAY[{', '.join(_render(e, inner) for e in expr.elements[:4])}{', ...' * (len(expr.elements) > 4)}]"
    if isinstance(expr, Row):
        return f"ROW({', '.join(_render(a, inner) for a in expr.args)})"
    if isinstance(expr, SubLink):
        return "(SELECT ...)"
    if isinstance(expr, FieldSelect):
        return f"({_render(expr.arg, inner)}).{expr.field}"
    if isinstance(expr, Subscript):
        return f"{_render(expr.container, inner)}[...]"
    if isinstance(expr, Collate):
        return _render(expr.arg, depth)
    if isinstance(expr, Test):
        return f"{_render(expr.arg, inner)} {expr.test}"
    return "..."
