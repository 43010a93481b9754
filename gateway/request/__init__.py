"""One request as the rooms above the HTTP layer see it: who asks, how it ended, how its answer is written.

Owns the tokens a request presents, their hashes and log fingerprints, and the
admin check (``auth``); the tasks of running requests and which endings are a
closed connection, 499, rather than a fault (``request_tasks``); the JSON bodies
of answers and GetData's default media type (``responses``). The logs, the audit
trail, the metrics and the result formats read these without importing the HTTP
layer (``gateway.web``), which builds on them.

May import: ``gateway.errors`` and aiohttp; nothing else of ``gateway``.
"""
