"""Which built-in PostgreSQL functions a GetData query may call.

The SQL guard (``drivers.postgres.sql_guard``) lets a query call only
functions of schema ``pg_catalog`` that this policy allows. The allowlist is
read from the live catalog of each registered database with
``FUNCTION_CATALOG_SQL`` and built by ``FunctionPolicy.from_catalog_rows``:

1. every overload of the name is built in (created by initdb, not by an
   extension installed into ``pg_catalog``), immutable or stable, a normal
   function, aggregate or window function, and has a plain signature (no
   ``internal``/``cstring``/handler type, no catalog reference such as
   ``regclass`` or ``aclitem``);
2. minus ``DENIED_FUNCTIONS`` and every name starting with one of
   ``DENIED_FUNCTION_PREFIXES`` (except ``ALLOWED_PG_FUNCTIONS``): functions
   that run SQL given as text, read server files, reach other servers, or
   reveal settings, catalog contents, identities or other sessions;
3. plus the operator's ``allow`` names, minus the operator's ``deny`` names
   (deny wins).

Requiring *every* overload to qualify matters: the guard sees only a name,
not the argument types PostgreSQL will pick, so one volatile overload
(``ts_rewrite(tsquery, text)`` runs a query) disqualifies the whole name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

# One row per pg_catalog function overload:
#   name, provolatile, prokind, callable_with_one_argument, plain_builtin.
# ``callable_with_one_argument`` tells the guard that ``x.name`` or
# ``(expr).name`` can call the function (PostgreSQL's functional notation); an
# ``internal`` argument cannot be written in SQL, so those overloads do not count.
# ``plain_builtin`` is false for functions added after initdb (OID 16384 and
# up, i.e. extensions installed into pg_catalog) and for signatures that take
# or return internal plumbing or catalog references: ``regclass`` and friends
# look objects up by name, ``aclitem`` resolves role names, ``pg_node_tree``
# and statistics types only come out of catalogs. regtype, regconfig and
# regdictionary may be taken (``to_tsvector('english', x)`` looks up a text
# search configuration, nothing else) but not returned: a function returning
# one lets a literal beside its result (UNION, CASE, greatest) be coerced by a
# name lookup, and regtype's lookup finds any table's row type.
FUNCTION_CATALOG_SQL = """
SELECT p.proname::text AS name,
       p.provolatile::text AS provolatile,
       p.prokind::text AS prokind,
       (p.pronargs >= 1 AND p.pronargs - p.pronargdefaults <= 1
        AND p.proargtypes[0] <> 'pg_catalog.internal'::pg_catalog.regtype) AS callable_with_one_argument,
       (p.oid < 16384 AND NOT EXISTS (
            SELECT 1
            FROM pg_catalog.unnest(p.proargtypes::pg_catalog.oid[] || p.prorettype) AS signature(type_oid)
            JOIN pg_catalog.pg_type t ON t.oid = signature.type_oid
            LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem
            WHERE COALESCE(e.typname, t.typname) IN (
                'internal', 'cstring', 'language_handler', 'fdw_handler', 'index_am_handler',
                'table_am_handler', 'tsm_handler', 'trigger', 'event_trigger', 'refcursor',
                'regclass', 'regproc', 'regprocedure', 'regoper', 'regoperator',
                'regnamespace', 'regrole', 'regcollation', 'aclitem',
                'pg_node_tree', 'pg_ndistinct', 'pg_dependencies', 'pg_mcv_list'))
        AND NOT EXISTS (
            SELECT 1
            FROM pg_catalog.pg_type t
            LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem
            WHERE t.oid = p.prorettype
              AND COALESCE(e.typname, t.typname) IN ('regtype', 'regconfig', 'regdictionary'))
       ) AS plain_builtin
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'pg_catalog'
"""

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
    "random", "setseed", "lo_create", "lo_creat", "lo_unlink", "lo_put", "lo_truncate",
})

DENIED_FUNCTIONS: frozenset[str] = (
    _RUN_SQL_TEXT | _READ_FILES | _OTHER_SERVERS | _REVEAL_SESSION_AND_SERVER
    | _CATALOG_LOOKUPS | _SIDE_EFFECTS
)
"""Built-in functions a query may never call, whatever their volatility."""

DENIED_FUNCTION_PREFIXES: tuple[str, ...] = (
    "pg_",  # server administration, statistics, catalog helpers, files, other sessions
    "has_",  # privilege checks on objects the token was not granted
    "txid_",  # transaction ids and snapshots: server internals
    "to_reg",  # look catalog objects up by name
    "lo_",  # large objects
    "dblink",  # other servers (an extension, should it live in pg_catalog)
    "binary_upgrade_",  # pg_upgrade internals
    "fmgr_",  # function validators
)
"""Name prefixes whose functions are all denied, except ``ALLOWED_PG_FUNCTIONS``."""

ALLOWED_PG_FUNCTIONS: frozenset[str] = frozenset({
    # Not pg_typeof: it returns regtype, and a literal beside a regtype value
    # (UNION, CASE, VALUES, greatest) is coerced by a catalog lookup of any
    # relation's row type: an existence and OID oracle for ungranted tables.
    # Pure number/text formatting ("10 MB"); no catalog or server access.
    "pg_size_pretty",
    "pg_size_bytes",
})
"""The ``pg_`` functions that are safe and useful in a data query."""

_QUALIFYING_VOLATILITY = frozenset({"i", "s"})
_QUALIFYING_KINDS = frozenset({"f", "a", "w"})
_CATALOG_PREFIX = "pg_catalog."


def is_denied_builtin(name: str) -> bool:
    """True when the built-in denylist refuses ``name`` (before operator options)."""
    if name in ALLOWED_PG_FUNCTIONS:
        return False
    return name in DENIED_FUNCTIONS or name.startswith(DENIED_FUNCTION_PREFIXES)


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


@attrs.frozen
class FunctionPolicy:
    """The functions of one database a GetData query may call."""

    allowed: frozenset[str]
    """Lower-case names of pg_catalog functions a query may call."""
    one_argument_functions: frozenset[str] | None = None
    """pg_catalog function names that some overload lets call with one argument.

    PostgreSQL reads ``x.name`` and ``(expr).name`` as ``name(x)`` when ``x``
    has no such column, so the guard refuses such attribute names unless
    allowed. ``None`` (the policy was not built from the catalog) falls back
    to the built-in denylist.
    """

    @classmethod
    def from_catalog_rows(
        cls,
        rows: Iterable[Sequence[object]],
        *,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
    ) -> FunctionPolicy:
        """Build the policy from ``FUNCTION_CATALOG_SQL`` rows and operator options.

        A row is ``(name, provolatile, prokind)`` optionally followed by
        ``callable_with_one_argument`` and ``plain_builtin`` (both assumed
        true when absent). ``allow`` adds names, ``deny`` removes names, and
        deny wins over allow.
        """
        qualifies: dict[str, bool] = {}
        one_argument: set[str] = set()
        for row in rows:
            name, volatility, kind = str(row[0]), str(row[1]), str(row[2])
            callable_with_one_argument = bool(row[3]) if len(row) > 3 else True
            plain_builtin = bool(row[4]) if len(row) > 4 else True
            overload_ok = volatility in _QUALIFYING_VOLATILITY and kind in _QUALIFYING_KINDS and plain_builtin
            qualifies[name] = qualifies.get(name, True) and overload_ok
            if callable_with_one_argument:
                one_argument.add(name)
        from_catalog = {name for name, ok in qualifies.items() if ok and not is_denied_builtin(name)}
        allowed = from_catalog | normalize_configured_names(allow, "allow")
        allowed -= normalize_configured_names(deny, "deny")
        return cls(allowed=frozenset(allowed), one_argument_functions=frozenset(one_argument))

    def allows(self, name: str) -> bool:
        """True when a query may call the pg_catalog function ``name`` (exact, case-sensitive)."""
        return name in self.allowed

    def refuses_attribute(self, name: str) -> bool:
        """True when ``x.name`` could call a function this policy does not allow."""
        if name in self.allowed:
            return False
        if self.one_argument_functions is None:
            return is_denied_builtin(name)
        return name in self.one_argument_functions
