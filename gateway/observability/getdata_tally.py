"""What one GetData request did: the tally its handler fills, read by the request's one observation.

The request middleware puts one in the ``RequestContext`` of every request to an
audited operation (``Operation.audited``: GetData and its per-format paths);
the handler and the answer's writer fill it in. Once the answer has ended,
``gateway.observability.observation.observe`` reads it (a late error, a stalled
client) and the metrics and the audit entry read it from the observation.
"""

from __future__ import annotations

from gateway.contract.driver_protocol import CheckedQuery
from gateway.errors import GatewayError


class GetDataTally:
    """What one GetData request did; the handler fills it in, the request's observation reads it."""

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
        self.late_error: GatewayError | None = None
        """An error met after the answer had started (the handler then returns normally)."""
        self.stalled = False
        """True when the client stopped reading and the stream was cut (the handler returns normally)."""
        self.refusal_reason: str | None = None
        """Why a refusal was made, for the operator only, when the answer must not say it (``grant expired``)."""

    def sent(self, rows_so_far: int, size: int) -> None:
        """Note a piece of the body written: the rows it brings the total to, and its size in bytes."""
        self.rows = rows_so_far
        self.bytes += size
