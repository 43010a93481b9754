"""What one GetData request did: the tally its handler fills and its metrics and audit entry read.

``gateway.observability.metrics.observe_getdata`` makes one per request and, once the request
has ended, hands it to both ``GatewayMetrics.record_getdata`` and
``Auditor.getdata`` (``gateway.observability.audit``). It lives apart from both so that each
can read it without importing the other.
"""

from __future__ import annotations

from gateway.contract.driver_protocol import CheckedQuery


class GetDataTally:
    """What one GetData request did; the handler fills it in, ``observe_getdata`` records it (metrics, audit)."""

    __slots__ = ("database", "query", "checked", "rows", "bytes", "late_error", "stalled", "refusal_reason")

    def __init__(self) -> None:
        self.database: str | None = None
        """The registered database asked for; None until the name is known to be registered."""
        self.query: str | None = None
        """The query text, once read and within ``max_query_bytes``."""
        self.checked: CheckedQuery | None = None
        """What the driver's check made of the query (tables read, fingerprint); None until it passed."""
        self.rows = 0
        """Rows sent to the client."""
        self.bytes = 0
        """Body bytes sent to the client."""
        self.late_error: BaseException | None = None
        """An error met after the answer had started (the handler then returns normally)."""
        self.stalled = False
        """True when the client stopped reading and the stream was cut (the handler returns normally)."""
        self.refusal_reason: str | None = None
        """Why a refusal was made, for the operator only, when the answer must not say it (``grant expired``)."""

    def sent(self, rows_so_far: int, size: int) -> None:
        """Note a piece of the body written: the rows it brings the total to, and its size in bytes."""
        self.rows = rows_so_far
        self.bytes += size
