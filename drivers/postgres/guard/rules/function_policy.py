"""Which built-in PostgreSQL functions a GetData query may call.

The SQL guard (``drivers.postgres.guard.sql_guard``) lets a query call only
functions of schema ``pg_catalog`` that this policy allows. The allowlist is
built by ``FunctionPolicy.from_catalog`` from each registered database's own
catalog (``catalog_snapshot.py``):

1. every overload of the name is built in (created by initdb, not by an
   extension installed into ``pg_catalog``), immutable or stable, a normal
   function, aggregate or window function, and has a plain signature
   (``type_rules.signature_refusal``: no internal plumbing, no row type of a
   catalog relation, no catalog-lookup type such as ``regclass``, ``regtype``
   or ``aclitem`` among its arguments, OUT arguments or result; only
   ``regconfig``/``regdictionary`` may be taken);
2. minus the denylist (``DENIAL_GROUPS``, grouped by reason, and every name
   starting with one of ``DENIED_FUNCTION_PREFIXES`` except
   ``ALLOWED_PG_FUNCTIONS``): functions that run SQL given as text, read
   server files, reach other servers, reveal settings, catalog contents,
   identities or other sessions, and the families PostgreSQL cannot interrupt
   whose running time grows with the product of their inputs;
3. plus the operator's ``allow`` names, minus the operator's ``deny`` names
   (deny wins).

Requiring *every* overload to qualify keeps the rule by name simple: one
volatile overload (``ts_rewrite(tsquery, text)`` runs a query) disqualifies
the whole name. Operators are checked through the functions that implement
them (``query_checks.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from drivers.postgres.guard.model.catalog import FIRST_NORMAL_OID, Catalog
from drivers.postgres.guard.model.types import FunctionInfo
from drivers.postgres.guard.rules.type_rules import signature_refusal

# Run SQL given as text (or read a cursor/whole tables by name) inside the
# function, where the guard cannot see which tables are read.
_RUN_SQL_TEXT = frozenset({
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema",
    "cursor_to_xml", "cursor_to_xmlschema",
    "table_to_xml", "table_to_xmlschema", "table_to_xml_and_xmlschema",
    "schema_to_xml", "schema_to_xmlschema", "schema_to_xml_and_xmlschema",
    "database_to_xml", "database_to_xmlschema", "database_to_xml_and_xmlschema",
    "ts_stat", "ts_rewrite",
})
# Read server files or large objects (volatile or pg_/lo_ prefixed anyway;
# named here so the denial never depends on one rule alone).
_READ_FILES = frozenset({
    "pg_read_file", "pg_read_binary_file", "pg_stat_file", "pg_ls_dir", "pg_ls_logdir",
    "pg_ls_waldir", "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_file_write",
    "lo_import", "lo_export", "lo_get", "lo_open", "loread", "lowrite", "lo_from_bytea",
})
# Reach another server.
_OTHER_SERVERS = frozenset({"dblink", "dblink_connect", "dblink_exec", "postgresql_fdw_validator"})
# Reveal the database account, the session, the server or its settings.
_REVEAL_SESSION_AND_SERVER = frozenset({
    "current_setting", "current_database", "current_schema", "current_schemas",
    "current_user", "current_role", "session_user", "system_user", "getpgusername",
    "current_query", "inet_client_addr", "inet_client_port", "inet_server_addr",
    "inet_server_port", "version", "getdatabaseencoding", "get_current_ts_config",
    "mxid_age",
})
# Read catalog contents by name or OID (descriptions, type names, privileges,
# text search setup), i.e. objects the token was not granted.
_CATALOG_LOOKUPS = frozenset({
    "obj_description", "col_description", "shobj_description", "format_type",
    "oidvectortypes", "row_security_active", "satisfies_hash_partition", "regclass",
    "ts_debug", "ts_parse", "ts_token_type", "acldefault", "aclexplode", "makeaclitem",
    "aclcontains", "aclinsert", "aclremove",
})
# Write, lock, notify, advance sequences, change settings, sleep, signal other
# sessions: all volatile, so the volatility rule refuses them already.
_SIDE_EFFECTS = frozenset({
    "nextval", "setval", "currval", "lastval", "set_config", "pg_sleep", "pg_sleep_for",
    "pg_sleep_until", "pg_advisory_lock", "pg_advisory_xact_lock", "pg_try_advisory_lock",
    "pg_notify", "pg_cancel_backend", "pg_terminate_backend", "pg_reload_conf",
    "setseed", "lo_create", "lo_creat", "lo_unlink", "lo_put", "lo_truncate",
})

# PostgreSQL cannot interrupt these while they run, and their time grows with
# the product of the sizes of two polygons or paths (every edge against every
# edge): poly_distance over two 12 000-point polygons ran about 80 s under a
# 1 s limit, path_distance 6.4 s at 3 000 points (docs/security.md). Their
# operators (<->, &&, @>, <@, ~=, ?#) are refused through them. The
# point-against-polygon forms are linear and stay.
QUADRATIC_GEOMETRY = frozenset({
    "poly_distance", "path_distance", "poly_contain", "poly_contained", "poly_overlap", "poly_same",
    "path_inter",
})
# libxml2 parsing and XPath evaluation never check for interrupts; an XPath
# axis over 3 000 elements ran 12 s. XML is still built with xmlelement,
# xmlforest, xmlconcat and xmlagg and read as text (x::text).
XML_PARSING = frozenset({
    "xpath", "xpath_exists", "xmlexists", "xml_is_well_formed", "xml_is_well_formed_document",
    "xml_is_well_formed_content", "xml", "xmlvalidate",
})

DENIAL_GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("it runs SQL given as text, where the guard cannot see which tables it reads", _RUN_SQL_TEXT),
    ("it reads server files or large objects", _READ_FILES),
    ("it reaches another server", _OTHER_SERVERS),
    ("it reveals the database account, the session, the server or its settings", _REVEAL_SESSION_AND_SERVER),
    ("it reads catalog contents by name or OID", _CATALOG_LOOKUPS),
    ("it writes, locks, signals, sleeps or changes settings", _SIDE_EFFECTS),
    ("PostgreSQL cannot interrupt it and its time grows with the product of its inputs' sizes "
     "(polygons and paths)", QUADRATIC_GEOMETRY),
    ("it parses XML with libxml2, which PostgreSQL cannot interrupt", XML_PARSING),
)
"""Built-in functions a query may never call, whatever their volatility, each group with its reason."""

DENIED_FUNCTIONS: frozenset[str] = frozenset().union(*(names for _, names in DENIAL_GROUPS))
"""Every name of ``DENIAL_GROUPS``."""

DENIED_FUNCTION_PREFIXES: dict[str, str] = {
    "pg_": "pg_ functions administer the server, read statistics, catalogs, files or other sessions",
    "has_": "it checks privileges on objects the token was not granted",
    "txid_": "it reads transaction ids and snapshots: server internals",
    "to_reg": "it looks catalog objects up by name",
    "lo_": "it works on large objects",
    "dblink": "it reaches another server",
    "binary_upgrade_": "it is a pg_upgrade internal",
    "fmgr_": "it is a function validator",
}
"""Name prefixes whose functions are all denied (except ``ALLOWED_PG_FUNCTIONS``), with the reason."""

ALLOWED_PG_FUNCTIONS: frozenset[str] = frozenset({
    # Not pg_typeof: it returns regtype, and a literal beside a regtype value
    # (UNION, CASE, VALUES, greatest) is coerced by a catalog lookup of any
    # relation's row type: an existence and OID oracle for ungranted tables.
    # Pure number/text formatting ("10 MB"); no catalog or server access.
    "pg_size_pretty",
    "pg_size_bytes",
    # Arithmetic and comparison of pg_lsn values: they implement the pg_lsn
    # operators (=, <, -, +), which a comparison of two columns of unknown
    # type could reach; they read nothing.
    "pg_lsn_eq", "pg_lsn_ne", "pg_lsn_lt", "pg_lsn_le", "pg_lsn_gt", "pg_lsn_ge", "pg_lsn_cmp",
    "pg_lsn_mi", "pg_lsn_pli", "pg_lsn_mii", "pg_lsn_larger", "pg_lsn_smaller", "pg_lsn_hash",
    "pg_lsn_hash_extended",
})
"""The ``pg_`` functions that are safe and useful in a data query."""

_QUALIFYING_VOLATILITY = frozenset({"i", "s"})
VOLATILE_READ_ONLY: frozenset[str] = frozenset({"random", "random_normal", "clock_timestamp", "timeofday",
                                                 "gen_random_uuid"})
"""Volatile built-ins that only read: a random number, the clock, a random UUID. Every other volatile
function writes, locks, signals, sleeps or changes settings, and is refused."""
_QUALIFYING_KINDS = frozenset({"f", "a", "w"})
_CATALOG_PREFIX = "pg_catalog."


def denial_reason(name: str) -> str | None:
    """Why the built-in denylist refuses ``name`` (before operator options), or None."""
    if name in ALLOWED_PG_FUNCTIONS:
        return None
    for reason, names in DENIAL_GROUPS:
        if name in names:
            return reason
    for prefix, reason in DENIED_FUNCTION_PREFIXES.items():
        if name.startswith(prefix):
            return reason
    return None


def is_denied_builtin(name: str) -> bool:
    """True when the built-in denylist refuses ``name`` (before operator options)."""
    return denial_reason(name) is not None


def normalize_configured_names(names: Iterable[str], option: str) -> frozenset[str]:
    """Operator-configured names in lower case without a ``pg_catalog.`` prefix.

    Raises ``ValueError`` (naming ``option``) for a name in another schema, so a
    configuration loader can call this early to fail at start-up.
    """
    normalised = set()
    for raw in names:
        name = raw.strip().lower().removeprefix(_CATALOG_PREFIX)
        if not name or "." in name:
            raise ValueError(f"function {raw!r} in {option}: give a pg_catalog function name such as 'lower'")
        normalised.add(name)
    return frozenset(normalised)


def overload_refusal(catalog: Catalog, overload: FunctionInfo) -> str | None:
    """Why the catalog rules disqualify one overload, or None when it qualifies."""
    if overload.oid >= FIRST_NORMAL_OID:
        return "it was added to pg_catalog after initdb (an extension)"
    if overload.kind not in _QUALIFYING_KINDS:
        return "it is a procedure"
    if overload.volatility not in _QUALIFYING_VOLATILITY and overload.name not in VOLATILE_READ_ONLY:
        return "it is volatile"
    return signature_refusal(catalog, overload)


@attrs.frozen(eq=False, repr=False)
class FunctionPolicy:
    """The functions of one database a GetData query may call."""

    allowed: frozenset[str]
    """Lower-case names of pg_catalog functions a query may call."""
    refusals: Mapping[str, str] = attrs.field(factory=dict)
    """Why each refused pg_catalog name is refused (built-in rules or ``deny``)."""
    overridden: Mapping[str, str] = attrs.field(factory=dict)
    """Names the operator's ``allow`` re-enabled although a built-in rule refuses them, with that rule."""

    @classmethod
    def from_catalog(
        cls, catalog: Catalog, *, allow: Iterable[str] = (), deny: Iterable[str] = ()
    ) -> FunctionPolicy:
        """Build the policy from a catalog snapshot and the operator's options (deny wins over allow)."""
        refusals: dict[str, str] = {}
        for name, overloads in catalog.functions_by_name.items():
            reason = denial_reason(name)
            for overload in overloads:
                reason = reason or overload_refusal(catalog, overload)
            if reason is not None:
                refusals[name] = reason
        allowed_names = normalize_configured_names(allow, "allow")
        denied_names = normalize_configured_names(deny, "deny")
        overridden = {name: refusals.pop(name) for name in sorted(allowed_names - denied_names) if name in refusals}
        refusals.update({name: "the operator denied it (deny_functions)" for name in denied_names})
        allowed = (frozenset(catalog.functions_by_name) | allowed_names) - refusals.keys()
        return cls(
            allowed=frozenset(allowed),
            refusals=refusals,
            overridden=overridden,
        )

    def allows(self, name: str) -> bool:
        """True when a query may call the pg_catalog function ``name`` (exact, case-sensitive)."""
        return name in self.allowed

    def refusal_reason(self, name: str) -> str:
        """Why ``name`` is not allowed, as the end of a sentence."""
        return self.refusals.get(name) or denial_reason(name) or "it is not a built-in pg_catalog function"
