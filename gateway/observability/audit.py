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
``refusal_reason`` when the answer hid the cause: ``grant expired``), all read from the request's one
``Observation`` (``gateway.observability.observation``), written once the answer's last byte is. The query
text of a request refused before its token was known to have a grant in that
database keeps its first ``UNAUTHORISED_QUERY_CHARS`` characters, with
``query_length`` (anyone may send one; ``gateway.observability.log_bounds``). An
administrative change has ``action`` (an ``AdminAction``), the admin token's
fingerprint and what changed.
"""

from __future__ import annotations

import enum
from typing import Any

from aiohttp import web

from gateway.errors import TableNotFound
from gateway.observability.getdata_tally import GetDataTally
from gateway.observability.log_bounds import UNAUTHORISED_QUERY_CHARS, shortened
from gateway.observability.logbook import Loggers
from gateway.observability.observation import AuditOutcome as AuditOutcome  # how a GetData ended; defined there
from gateway.observability.observation import Observation
from gateway.registry import Registry, RegistryState, TableAddress
from gateway.request.auth import token_fingerprint

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

    def getdata(self, observation: Observation) -> None:
        """One entry for one GetData request, whatever its end, from the request's observation."""
        context = observation.context
        tally = context.getdata
        assert tally is not None, "only an audited operation's observation has a GetData tally"
        fields: dict[str, Any] = {
            "action": GETDATA_ACTION,
            "user_token_fingerprint": context.user_fingerprint,
            "local_database_name": tally.database,
            "tables": _table_names(context.registry, tally),
            "query_fingerprint": getattr(tally.checked, "fingerprint", None),
        }
        if tally.refusal_reason is not None:
            fields["refusal_reason"] = tally.refusal_reason
        if self._query_text:
            fields["query"] = tally.query
            if tally.query is not None and observation.error is not None and observation.error.refuses_the_asker:
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
            duration_ms=round(observation.seconds * 1000, 3),
            status=observation.status,
            error=observation.error_code,
            outcome=observation.outcome.value,
        )


AUDITOR = web.AppKey("auditor", Auditor)
"""Where the app keeps its ``Auditor`` (re-exported by ``gateway.web.keys``)."""


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
