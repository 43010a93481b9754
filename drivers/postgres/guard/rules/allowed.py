"""The checks of what may run, per expression: functions on the allowlist, no value of a type that looks
catalog objects up or is internal plumbing (``type_rules.py``), and nothing that parses XML.

``AllowedChecks`` is a part of ``checks.LevelChecks``: it is called for every expression of the analysed tree
and for every function a call, an operator, a cast or an ``ORDER BY ... USING`` runs.
"""

from __future__ import annotations

import re
from typing import Final

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.ir import Call, Const, Expr
from drivers.postgres.guard.model.render import describe
from drivers.postgres.guard.model.types import FunctionInfo
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.refusal_reasons import PostgresRefusal
from drivers.postgres.guard.rules.type_rules import CATALOG_LOOKUP_TYPES, PLUMBING_TYPES, TEXT_SEARCH_LOOKUP_TYPES
from drivers.postgres.guard.structure.names import display_name
from gateway.errors import QueryRejected, RefusalReason

_BARE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
XML_PARSING: Final = "it parses XML with libxml2, which PostgreSQL cannot interrupt"
"""Why anything that parses XML is refused (docs/security.md, Layer 1, "What may run")."""


class AllowedChecks:
    """Functions and value types of one query level; ``functions`` collects the names of what it calls."""

    policy: GuardPolicy
    catalog: Catalog
    functions: set[str]

    def _check_type(self, expr: Expr) -> None:
        info = self.catalog.type(self.catalog.base_type(expr.type))
        if info is None:
            return
        element = self.catalog.type(info.element) if info.is_array else None
        names = {info.name} | ({element.name} if element is not None else set())
        if info.schema != "pg_catalog" and (element is None or element.schema != "pg_catalog"):
            return
        lookup = names & CATALOG_LOOKUP_TYPES
        if lookup:
            if names <= TEXT_SEARCH_LOOKUP_TYPES and isinstance(expr, Const) and not info.is_array and (
                    expr.text is None or _BARE_NAME.fullmatch(expr.text)):
                return
            if names <= TEXT_SEARCH_LOOKUP_TYPES and isinstance(expr, Const):
                raise QueryRejected(
                    f"text search configuration {expr.text!r} is not allowed: give a built-in one as a literal "
                    "bare name, such as 'english' (anything else would look other schemas or OIDs up)",
                    reason=RefusalReason.FUNCTION)
            name = min(lookup)
            raise QueryRejected(f"{describe(expr, self.catalog.type_display)} is not allowed: its type {name} "
                                "looks catalog objects up by name or OID", reason=PostgresRefusal.TYPE)
        plumbing = names & PLUMBING_TYPES - {"unknown", "void"}
        if plumbing:
            raise QueryRejected(f"{describe(expr, self.catalog.type_display)} is not allowed: its type "
                                f"{min(plumbing)} is internal plumbing, not a data type", reason=PostgresRefusal.TYPE)

    def _function(self, function: FunctionInfo, expr: Expr) -> None:
        name = function.name
        allowed = function.schema == "pg_catalog" and self.policy.functions.allows(name)
        if not allowed:
            reason = self.policy.functions.refusal_reason(name) if function.schema == "pg_catalog" else \
                "it is not a built-in pg_catalog function"
            written = describe(expr, self.catalog.type_display)
            where = "" if isinstance(expr, Call) and expr.function is function else f" (it runs for {written})"
            raise QueryRejected(f"function {display_name(name)} is not allowed{where}: {reason}",
                                reason=RefusalReason.FUNCTION)
        self.functions.add(name)
