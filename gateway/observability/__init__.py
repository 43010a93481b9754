"""What an operator sees of a running gateway: its logs, its audit trail and its metrics.

Owns the structlog loggers, their redaction and the ring ``GET /Logs/`` reads
(``logbook``, ``log_ring``), what may reach a log entry (``log_bounds``), the
writes to stderr (``log_stream``), the rings of sibling workers (``log_sharing``),
aiohttp's and asyncio's records (``library_logs``); the audit entries and their
file (``audit``, ``audit_file``); the Prometheus metrics (``metrics``,
``pool_metrics``, ``loop_lag``); what one GetData did (``getdata_tally``); and
one request's context and the one observation of its end (``observation``), which
the access line, the metrics and the audit entry are all written from.

May import: ``gateway.errors``, ``gateway.contract``, ``gateway.registry``,
``gateway.settings``, ``gateway.request``. The HTTP layer (``gateway.web``) calls
into it; it never imports the HTTP layer.
"""
