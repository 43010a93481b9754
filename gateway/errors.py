"""Every error the gateway answers with, as an exception that carries its status.

Handlers and drivers raise these; a driver raises only the ones its protocol
names (``gateway.contract.driver_protocol``) and never chooses a status: each class
carries its own, so every status is decided here once. One middleware (`gateway.web.middlewares`) turns
them into the contract's body::

    {"status": "error", "error": "<code>", "message": "<sentence>"}

The message is shown to the client as is, so it must never carry a password,
a token or internal detail such as a stack trace.
"""

from __future__ import annotations

import enum
import errno
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar


class GatewayError(Exception):
    """Base class: an answer other than success, with its HTTP status and machine code."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal_error"
    headers: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """Headers the answer must carry beside the body (426 names the protocol to use)."""
    query_outcome: ClassVar[str] = "failed"
    """How a GetData query that ended with this error is counted (the ``outcome`` label of
    ``dbgateway_getdata_queries``): ``failed`` unless the class says otherwise. The request's observation
    reads it (``gateway.observability.observation``); nothing else classifies an error."""
    refuses_the_asker: ClassVar[bool] = False
    """The request was refused before its token was known to hold a grant there (no token, or the wrong one):
    anyone can send such a request, so GetData's audit entry keeps only the head of its query text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_body(self) -> dict[str, str]:
        return {"status": "error", "error": self.code, "message": self.message}


class BadRequest(GatewayError):
    """A parameter is missing or malformed; the message names it."""

    status = 400
    code = "bad_request"


class AmbiguousRequest(BadRequest):
    """The query string and the JSON body give one field different values."""

    code = "ambiguous_request"


class UnsupportedBaseType(BadRequest):
    """No installed driver serves the requested `base_type`."""

    code = "unsupported_base_type"


class RefusalReason(enum.StrEnum):
    """Why GetData refused a query before running it: stable slugs for the refusal metric's label.

    The reasons any SQL database's guard has; a driver adds its own as ``Driver.refusal_reasons``.
    """

    SYNTAX = "syntax"
    """The text does not parse (or is not UTF-8, holds a NUL, nests too deeply)."""
    STATEMENT = "statement"
    """Not exactly one plain SELECT (empty, several, another statement, INTO, locking, data-modifying WITH)."""
    CONSTRUCT = "construct"
    """A construct the checker does not allow ($1 parameters, TABLESAMPLE, unknown node kinds)."""
    NOT_QUALIFIED = "not_qualified"
    """A table written without its schema."""
    CROSS_DATABASE = "cross_database"
    """A table written as database.schema.table."""
    NOT_GRANTED = "not_granted"
    """A table the token has no grant for."""
    FUNCTION = "function"
    """A function outside the allowlist (or one revealing the account or server settings)."""
    OTHER = "other"
    """Anything else (and any reason a driver names that is neither here nor in its ``refusal_reasons``)."""


class QueryRejected(BadRequest):
    """The SQL was refused before it reached the database (not read-only, not granted, ...).

    ``reason`` is a ``RefusalReason`` slug; the message stays the explanation for people.
    """

    code = "query_rejected"
    query_outcome = "refused"

    def __init__(self, message: str, *, reason: str = RefusalReason.OTHER) -> None:
        super().__init__(message)
        self.reason = reason


class QueryFailed(BadRequest):
    """The database refused the query (syntax, unknown column, division by zero, ...)."""

    code = "query_failed"


class TokenRequired(GatewayError):
    """A user operation came without any token."""

    status = 401
    code = "token_required"
    refuses_the_asker = True


class AccessDenied(GatewayError):
    """The token is wrong, or has no grant for what was asked."""

    status = 403
    code = "access_denied"
    query_outcome = "denied"
    refuses_the_asker = True


class NotFound(GatewayError):
    """No route serves this path."""

    status = 404
    code = "not_found"


class TableNotFound(NotFound):
    code = "table_not_found"


class DatabaseNotFound(NotFound):
    code = "database_not_found"


class MethodNotAllowed(GatewayError):
    """The path exists but not with this HTTP method."""

    status = 405
    code = "method_not_allowed"


class Conflict(GatewayError):
    status = 409
    code = "conflict"


class TableExists(Conflict):
    code = "table_exists"


class DatabaseExists(Conflict):
    code = "database_exists"


class PayloadTooLarge(GatewayError):
    status = 413
    code = "payload_too_large"


class ResultTooLarge(GatewayError):
    """A result row is larger than the gateway reads (``max_row_bytes``, or a fetch's share of its memory budget),
    or a result in a format with no place to say it was truncated (CSV) has more rows than ``row_limit``.

    The database refuses the row before sending it; 422 because the same query
    over the same data fails again, unlike a 5xx.
    """

    status = 422
    code = "result_too_large"


class UpgradeRequired(GatewayError):
    """The answer needs HTTP/1.1: a streamed body in a format that cannot show its own end (CSV) over HTTP/1.0.

    HTTP/1.0 has no chunks: a streamed body ends by closing the connection, and
    a cut one then looks whole unless the body itself shows where it ends. 426
    with ``Upgrade: HTTP/1.1``, as RFC 9110 (15.5.22) has it for a request the
    server will serve only over another protocol.
    """

    status = 426
    code = "upgrade_required"
    headers = MappingProxyType({"Upgrade": "HTTP/1.1", "Connection": "Upgrade"})


class ContinuationGone(GatewayError):
    """A continuation token whose result is not open (any more): unknown, read already, expired or closed."""

    status = 410
    code = "continuation_gone"


class TooManyQueries(GatewayError):
    """The token already runs as many GetData queries on that database as one token may at once."""

    status = 429
    code = "too_many_queries"
    query_outcome = "limited"


class DatabaseUnavailable(GatewayError):
    """The database cannot be reached, refuses the credentials, or has no free connection.

    Drivers raise it without choosing a status: serving a query, it is 503 (the
    gateway cannot get a connection now); while an administrator registers or
    changes a database the gateway answers ``UpstreamRefused`` (502) instead.
    """

    status = 503
    code = "database_unavailable"
    query_outcome = "unavailable"


class UpstreamRefused(DatabaseUnavailable):
    """``DatabaseUnavailable`` met while registering, refreshing or changing a database: the upstream refused
    what the administrator asked for (502), as the gateway (``DatabasePools.on_trial``) answers it."""

    status = 502


class RegistryUnavailable(GatewayError):
    """The registry database cannot be reached (or refused the change): nothing was changed, or, when the
    connection broke while committing, the change may have been saved; reads go on from the state held."""

    status = 503
    code = "registry_unavailable"


class RegistryUnwritable(GatewayError):
    """The registry could not be stored (disk full, file size limit, quota, a read-only folder); it is as it was.

    507 Insufficient Storage rather than 503: retrying on another gateway of
    the same host meets the same full disk, and the status names the cause.
    """

    status = 507
    code = "registry_unwritable"

    @classmethod
    def from_os_error(cls, error: OSError) -> RegistryUnwritable:
        """The answer to a registry file write that failed with ``error``, saying what would fix that cause."""
        remedy = _REMEDIES.get(error.errno or 0, "fix the gateway's disk (the log has the error)")
        return cls(
            f"the registry could not be written ({error.strerror or error}), so nothing was changed;"
            f" {remedy} and repeat the request"
        )


# What an administrator can do about a failed registry write, by its cause ("free space" helps a full disk only).
_NO_PERMISSION = "the gateway's user may no longer write the registry's folder: give the permission back"
_REMEDIES = {
    errno.ENOSPC: "free space on the gateway's disk",
    errno.EDQUOT: "raise the disk quota of the gateway's user, or free space",
    errno.EFBIG: "raise the gateway's file size limit (ulimit -f, LimitFSIZE)",
    errno.EROFS: "the file system holding the registry is read-only: remount it read-write",
    errno.EACCES: _NO_PERMISSION,
    errno.EPERM: _NO_PERMISSION,
}


class QueryTimeout(GatewayError):
    status = 504
    code = "query_timeout"
    query_outcome = "timeout"


class InternalError(GatewayError):
    """Something the gateway did not expect; details go to the log, not to the client."""

    status = 500
    code = "internal_error"
