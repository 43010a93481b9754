"""The gateway's benchmark: ``python -m bench.run`` (or ``make bench``); see ``bench/README.md``.

It measures GetData against PostgreSQL's own tools on the same machine, in one
run: pgbench versus the gateway under wrk for point lookups, and ``psql COPY``
versus a streamed 1 000 000-row GetData for large results, plus the gateway's
memory growth and the small-query latency while a large result streams.
"""
