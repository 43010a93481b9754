"""GrantTableAccess's optional inputs that narrow a grant (issue 22): ``columns``, ``row_filter``, ``expires_at``.

They are read in two steps. ``limit_inputs`` reads the text (a comma-separated
list in the query string or a JSON list in the body; an RFC 3339 time) with
a 400 naming the input. ``checked_limits`` then checks them against the table
as its database describes it now: every column must exist (the answer names
the first that does not), and the filter goes to the driver's optional
``normalize_row_filter`` (a driver without it cannot filter rows, so the grant
is refused; one whose ``check_query`` takes no ``narrowing`` can narrow nothing). ``described_limits`` is how answers and listings show a grant.
"""

from __future__ import annotations

import datetime
import functools
import inspect
import re
from typing import Any, cast

import attrs

from gateway.contract.driver_protocol import DatabasePool
from gateway.errors import BadRequest
from gateway.registry import GrantLimits, TableRecord
from gateway.registry.file_format import rfc3339
from gateway.web.inputs import RequestInputs
from gateway.web.openapi_schemas import TEXT, closed_object
from gateway.web.parameters import DocumentContext, Parameter, ReadContext, parameter_group

MAX_ROW_FILTER_CHARS = 4000
"""Longest row filter a grant takes: an administrator's condition, not a program."""

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@attrs.frozen
class LimitInputs:
    """The narrowing inputs as given, not yet checked against the table."""

    columns: tuple[str, ...] | None = None
    """The column names asked for, in the order given, without repeats (None: every column)."""
    row_filter: str | None = None
    """The filter as the administrator wrote it (None: every row)."""
    expires_at: datetime.datetime | None = None
    """The end of the grant, timezone-aware (None: never)."""


def limit_parameters(context: DocumentContext) -> dict[str, Parameter]:
    return {
        "columns": Parameter(
            "Grant these columns only: comma-separated in the query string, a list in the JSON body. Without it, "
            "every column.",
            schema={"type": "string", "minLength": 1},
            body_schema={"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1,
                         "description": "Grant these columns only."},
        ),
        "row_filter": Parameter(
            "Grant the rows this boolean SQL expression over the table's own columns passes, e.g. "
            "`tenant_id = 42 AND NOT archived`. Without it, every row.",
            schema={"type": "string", "minLength": 1, "maxLength": MAX_ROW_FILTER_CHARS},
            body_schema={"type": "string", "minLength": 1, "maxLength": MAX_ROW_FILTER_CHARS,
                         "description": "A boolean SQL expression over the table's own columns."},
        ),
        "expires_at": Parameter(
            "The grant ends at this RFC 3339 time (e.g. 2026-12-31T23:59:59Z); from then on it is as if it were "
            "not there. Without it, never.",
            schema={"type": "string", "format": "date-time"},
            body_schema={"type": "string", "format": "date-time", "description": "When the grant ends."},
        ),
    }


def _columns(raw: RequestInputs) -> tuple[str, ...] | None:
    from_body = raw.body.get("columns")
    from_query = raw.query.get("columns")
    if from_body is not None:
        if not isinstance(from_body, list) or not all(isinstance(name, str) for name in from_body):
            raise BadRequest("parameter 'columns' must be a list of column names in the body")
        names = [name.strip() for name in from_body]
        if from_query is not None and [n.strip() for n in from_query.split(",")] != names:
            raise BadRequest("parameter 'columns' is given differently in the query string and the body; give it once")
    elif from_query is not None:
        names = [name.strip() for name in from_query.split(",")]
    else:
        return None
    if not names or any(name == "" for name in names):
        raise BadRequest("parameter 'columns' must name at least one column, without empty names")
    return tuple(dict.fromkeys(names))


def parse_expiry(text: str) -> datetime.datetime:
    """An RFC 3339 date-time with its offset; 400 naming ``expires_at`` otherwise."""
    if not _RFC3339.match(text):
        raise BadRequest(f"parameter 'expires_at' must be an RFC 3339 time with its offset, e.g. "
                         f"2026-12-31T23:59:59Z; got {text[:40]!r}")
    try:
        moment = datetime.datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
        moment.astimezone(datetime.timezone.utc)  # kept and shown in UTC: a time that has none is no expiry
    except (ValueError, OverflowError):
        raise BadRequest(f"parameter 'expires_at' is not a valid time between the years 1 and 9999 in UTC: "
                         f"{text[:40]!r}") from None
    return moment


def _read(raw: RequestInputs, context: ReadContext) -> LimitInputs:
    row_filter = raw.get("row_filter")
    if row_filter is not None and (not row_filter.strip() or len(row_filter) > MAX_ROW_FILTER_CHARS):
        raise BadRequest(f"parameter 'row_filter' must be 1 to {MAX_ROW_FILTER_CHARS} characters")
    expires_at = raw.get("expires_at")
    return LimitInputs(
        columns=_columns(raw),
        row_filter=row_filter,
        expires_at=None if expires_at is None else parse_expiry(expires_at),
    )


def limit_inputs() -> Any:
    """GrantTableAccess's optional ``columns``, ``row_filter`` and ``expires_at``, read together."""
    return parameter_group(limit_parameters, _read)


def enforces_narrowing(pool: DatabasePool) -> bool:
    """True when the pool's ``check_query`` takes ``narrowing`` (a driver written before issue 22 does not)."""
    return _takes_narrowing(type(pool))


@functools.lru_cache(maxsize=64)
def _takes_narrowing(pool_class: type) -> bool:
    # Read once per class: GetData asks on every query of a narrowed token.
    try:
        return "narrowing" in inspect.signature(cast(Any, pool_class).check_query).parameters
    except (AttributeError, TypeError, ValueError):
        return False


async def checked_limits(asked: LimitInputs, table: TableRecord, pool: DatabasePool) -> GrantLimits:
    """What the grant will hold: columns in the table's order, the filter as the driver wrote it; 400 otherwise."""
    columns: tuple[str, ...] | None = None
    if (asked.columns is not None or asked.row_filter is not None) and not enforces_narrowing(pool):
        name = "columns" if asked.columns is not None else "row_filter"
        raise BadRequest(f"parameter {name!r} cannot be granted: the driver of table {table.local_name!r}'s "
                         "database does not enforce grants narrower than a table")
    if asked.columns is not None:
        described = await pool.describe_table(table.address.folder, table.address.table)
        present = [column.name for column in described or ()]
        unknown = [name for name in asked.columns if name not in present]
        if unknown:
            raise BadRequest(
                f"parameter 'columns' names {unknown[0]!r}, which table {table.local_name!r} does not have"
            )
        columns = tuple(name for name in present if name in asked.columns)
    row_filter: str | None = None
    if asked.row_filter is not None:
        normalize = getattr(pool, "normalize_row_filter", None)
        if normalize is None:
            raise BadRequest(f"parameter 'row_filter' cannot be granted: the driver of table {table.local_name!r}'s "
                             "database does not filter rows")
        try:
            row_filter = await normalize(table.address.folder, table.address.table, asked.row_filter)
        except BadRequest as refused:
            raise BadRequest(f"parameter 'row_filter' is refused: {refused.message}") from None
    return GrantLimits(columns=columns, row_filter=row_filter, expires_at=asked.expires_at)


def described_limits(limits: GrantLimits, now: datetime.datetime) -> dict[str, Any]:
    """The keys an answer or a listing adds for a narrowed grant (none for a whole one)."""
    shown: dict[str, Any] = {}
    if limits.columns is not None:
        shown["columns"] = list(limits.columns)
    if limits.row_filter is not None:
        shown["row_filter"] = limits.row_filter
    if limits.expires_at is not None:
        shown["expires_at"] = rfc3339(limits.expires_at)
        shown["expired"] = limits.expired(now)
    return shown


LIMIT_PROPERTIES: dict[str, Any] = {
    "columns": {"type": "array", "items": TEXT, "description": "The granted columns, in the table's order; absent: "
                "every column."},
    "row_filter": {**TEXT, "description": "The granted rows' filter, as the driver wrote it; absent: every row."},
    "expires_at": {"type": "string", "format": "date-time", "description": "When the grant ends (UTC)."},
    "expired": {"type": "boolean", "description": "True once expires_at has passed (present with expires_at)."},
}
"""The listing's schema of ``described_limits``' keys, all optional."""

GRANT_SHOWN = closed_object({"local_table_name": TEXT, **LIMIT_PROPERTIES}, optional=tuple(LIMIT_PROPERTIES))
"""The ``grant`` object of GrantTableAccess's and MintUserToken's answers: the table and what narrows it."""
