"""The audit trail: one ``audit`` event per GetData and per administrative change.

Audit events are log entries (``event: audit``) written by a logger of their
own: at info whatever ``log_level`` says, to stderr and the ``/Logs/`` buffer
like every entry, and, with ``audit_file`` set, to that file as JSON lines
(``gateway.observability.audit_file``). They pass the same redaction as every entry: a token
shows as its 12-hex-digit fingerprint, never whole; no password appears.

A GetData event says who asked (``user_token_fingerprint``), what
(``local_database_name``, the ``tables`` read by local name, the
``query_fingerprint`` of the normalised query and, unless
``audit_query_text = false``, the ``query``), how much (``rows``, ``bytes``,
``duration_ms``) and how it ended (``status``, ``error``, ``outcome``, and
``refusal_reason`` when the answer hid the cause: ``grant expired``). The query
text of a request refused before its token was known to have a grant in that
database keeps its first ``UNAUTHORISED_QUERY_CHARS`` characters, with
``query_length`` (anyone may send one; ``gateway.observability.log_bounds``). An
administrative change has ``action`` (an ``AdminAction``), the admin token's
fingerprint and what changed.
"""

from __future__ import annotations

import asyncio
import enum
from typing import Any

from aiohttp import web

from gateway.errors import AccessDenied, GatewayError, TableNotFound, TokenRequired
from gateway.observability.getdata_tally import GetDataTally
from gateway.observability.log_bounds import UNAUTHORISED_QUERY_CHARS, shortened
from gateway.observability.logbook import Loggers
from gateway.registry import Registry, RegistryState, TableAddress
from gateway.request.auth import USER_TOKEN_HEADERS, header_token, token_fingerprint
from gateway.request.request_tasks import CLIENT_CLOSED_REQUEST

AUDIT_EVENT = "audit"
"""The ``event`` of every audit entry (``GET /Logs/?event=audit``)."""

GETDATA_ACTION = "get_data"
"""The ``action`` of a GetData audit entry."""


class AdminAction(enum.StrEnum):
    """The administrative changes, as the ``action`` of their audit entry."""

    DATABASE_REGISTERED = "database_registered"
    DATABASE_UPDATED = "database_updated"
    DATABASE_REFRESHED = "database_refreshed"
    DATABASE_UNREGISTERED = "database_unregistered"
    TABLE_RENAMED = "table_renamed"
    TABLE_ACCESS_GRANTED = "table_access_granted"
    GRANT_REVOKED = "grant_revoked"
    TOKEN_MINTED = "token_minted"


class AuditOutcome(enum.StrEnum):
    """How a GetData request ended, for its audit entry."""

    OK = "ok"
    """The whole answer was sent."""
    ERROR = "error"
    """An error was answered (``status`` and ``error`` say which)."""
    CUT_OFF = "cut_off"
    """The database failed (or a CSV answer passed the row limit) after the answer had begun: the body was left
    unfinished (``error`` says why)."""
    CLIENT_STALLED = "client_stalled"
    """The client stopped reading for ``client_stall_timeout``; the stream was cut."""
    CANCELLED = "cancelled"
    """The client went away, or the gateway stopped, before the answer ended."""


class Auditor:
    """Writes the audit entries of one app."""

    def __init__(
        self,
        loggers: Loggers,
        registry: Registry,
        admin_token: str,
        *,
        query_text: bool,
    ) -> None:
        self._logger = loggers.structured
        self._getdata_log = loggers.fixed  # an entry per GetData: the fast path
        self._registry = registry
        self._admin_token = admin_token
        self._query_text = query_text

    def admin_change(self, action: AdminAction, **details: Any) -> None:
        """One entry for one administrative change that was saved."""
        salt = self._registry.state.token_salt
        self._logger.info(
            AUDIT_EVENT,
            action=action.value,
            admin_token_fingerprint=token_fingerprint(salt, self._admin_token),
            **details,
        )

    def getdata(
        self,
        request: web.Request,
        tally: GetDataTally,
        error: BaseException | None,
        response: web.StreamResponse | None,
        seconds: float,
    ) -> None:
        """One entry for one GetData request, whatever its end."""
        state = self._registry.state
        token = header_token(request, USER_TOKEN_HEADERS)
        status, error_code, outcome = _ending(tally, error, response)
        fields: dict[str, Any] = {
            "action": GETDATA_ACTION,
            "user_token_fingerprint": token_fingerprint(state.token_salt, token) if token else None,
            "local_database_name": tally.database,
            "tables": _table_names(state, tally),
            "query_fingerprint": getattr(tally.checked, "fingerprint", None),
        }
        if tally.refusal_reason is not None:
            fields["refusal_reason"] = tally.refusal_reason
        if self._query_text:
            fields["query"] = tally.query
            if tally.query is not None and isinstance(error, TokenRequired | AccessDenied):
                # Refused before the token was known to have a grant in that database: anyone can send
                # this, so it keeps only the text's head (gateway.observability.log_bounds); a token holder's
                # is kept whole.
                fields["query"], length = shortened(tally.query, UNAUTHORISED_QUERY_CHARS)
                if length is not None:
                    fields["query_length"] = length
        self._getdata_log.info(
            AUDIT_EVENT,
            **fields,
            rows=tally.rows,
            bytes=tally.bytes,
            duration_ms=round(seconds * 1000, 3),
            status=status,
            error=error_code,
            outcome=outcome.value,
        )


AUDITOR = web.AppKey("auditor", Auditor)
"""Where the app keeps its ``Auditor`` (re-exported by ``gateway.web.keys``)."""


def _ending(
    tally: GetDataTally, error: BaseException | None, response: web.StreamResponse | None
) -> tuple[int | None, str | None, AuditOutcome]:
    """(HTTP status sent or None, error code or None, outcome)."""
    if tally.stalled:  # cutting the stall closes the connection, which may cancel the handler too
        return 200, None, AuditOutcome.CLIENT_STALLED
    if isinstance(error, asyncio.CancelledError):
        # The connection closed before the end (the client left, or the stop cut it): 499, as the request line.
        return CLIENT_CLOSED_REQUEST, None, AuditOutcome.CANCELLED
    if isinstance(error, GatewayError):
        if tally.late_error is error:
            return 200, error.code, AuditOutcome.CUT_OFF
        return error.status, error.code, AuditOutcome.ERROR
    if error is not None:
        return 500, "internal_error", AuditOutcome.ERROR
    return (response.status if response is not None else None), None, AuditOutcome.OK


def _table_names(state: RegistryState, tally: GetDataTally) -> list[str] | None:
    """The local names of the tables the checked query reads; None when it was not checked."""
    relations = getattr(tally.checked, "relations", None)
    if relations is None or tally.database is None:
        return None
    names = []
    for folder, table in relations:
        try:
            names.append(state.table_by_address(TableAddress(tally.database, folder, table)).local_name)
        except TableNotFound:  # unregistered or renamed since: its address is still exact
            names.append(f"{folder}.{table}")
    return sorted(names)
