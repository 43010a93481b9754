"""The two ways the type model stops: PostgreSQL would refuse the query, or the model cannot follow it."""

from __future__ import annotations

from gateway.errors import QueryRejected, RefusalReason


class AnalysisError(QueryRejected):
    """PostgreSQL's parse analysis would raise this error (an unknown column, no such function...).

    The message follows PostgreSQL's own wording, and the client hears it as
    the database's error (400 ``query_failed``, ``sql_guard.raise_refusal``);
    the query never reaches the database.
    """

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(f"{message} ({hint})" if hint else message, reason=RefusalReason.OTHER)
        self.hint = hint


class Unsupported(QueryRejected):
    """A construct the model does not follow: refused, since the guard could not check it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, reason=RefusalReason.CONSTRUCT)
