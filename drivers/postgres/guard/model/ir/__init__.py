"""The analysed query: every expression typed, every name resolved (PostgreSQL's ``Query`` and ``Expr`` nodes).

``analysis.py`` builds these from pglast's raw parse tree as PostgreSQL's
parse analysis builds its own; the checks (``checks.py``) and the size model
(``sizes/size_model.py``) read them. Each expression carries its type OID and
typmod; calls carry the catalog row of the function or operator they resolved
to; implicit coercions are explicit ``Cast`` nodes, as in PostgreSQL.
``expressions.py`` holds the base ``Expr``, the nodes calls, operators and casts make, and the sort items
and window definitions they carry; ``constructs.py`` the SQL constructs; ``query.py`` the query levels and
the nodes that point into them (``Var``, ``SubLink``, ``SubSelectColumn``). Each imports only those before
it, so the recursive tree (a sub-select holds a query level, which holds expressions) has no import cycle.
"""

from drivers.postgres.guard.model.ir.constructs import (
    Array,
    Case,
    Coalesce,
    Collate,
    FieldSelect,
    Grouping,
    MinMax,
    Row,
    SetOpColumn,
    Subscript,
    Test,
    ValueFunction,
    Xml,
)
from drivers.postgres.guard.model.ir.expressions import (
    ArrayOp,
    BoolOp,
    Call,
    CaseTest,
    Cast,
    Const,
    Expr,
    OpCall,
    Param,
    RowCompare,
    SortItem,
    Window,
    field,
    walk,
)
from drivers.postgres.guard.model.ir.query import (
    ColumnSlot,
    Query,
    RangeEntry,
    SubLink,
    SubSelectColumn,
    Target,
    Var,
    subqueries,
)

__all__ = [
    "Array", "ArrayOp", "BoolOp", "Call", "Case", "CaseTest", "Cast", "Coalesce", "Collate", "ColumnSlot",
    "Const", "Expr", "FieldSelect", "Grouping", "MinMax", "OpCall", "Param", "Query", "RangeEntry", "Row", "RowCompare",
    "SetOpColumn", "SortItem", "SubLink", "SubSelectColumn", "Subscript", "Target", "Test", "ValueFunction",
    "Var", "Window", "Xml", "field", "subqueries", "walk",
]
