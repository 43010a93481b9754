"""The bare pass-through: the floor a gateway in Python could reach, run as the benchmark's third contender.

It does what any HTTP-to-SQL service must and nothing more: parse the query
with PostgreSQL's parser through pglast (the check every such service needs
before running foreign SQL), run it through an aiopg pool, and dump the rows
with orjson. It parses to JSON (``pglast.parser.parse_sql_json``), as the
lightest such service would, not into pglast's Python AST (``parse_sql``),
which costs this contender about 40 % more CPU per point lookup: a floor that
flatters the gateway is no measure. No grants, no
guard, no cursor, no row limit, no log line, no metrics. It answers the same
URL as GetData (``/GetData?local_database_name=...&query=...``; the token
header is ignored), so the same wrk script drives it.

Run by ``bench.run`` as ``python -m bench.passthrough --port P --dsn DSN``.
"""

from __future__ import annotations

import argparse
import asyncio
import decimal
from collections.abc import AsyncIterator

import aiopg
import orjson
from aiohttp import web
from pglast.parser import parse_sql_json

POOL: web.AppKey[aiopg.Pool] = web.AppKey("pool", aiopg.Pool)


def _default(value: object) -> str:
    if isinstance(value, decimal.Decimal):
        return str(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


async def get_data(request: web.Request) -> web.Response:
    query = request.query["query"]
    parse_sql_json(query)
    async with request.app[POOL].acquire() as connection, connection.cursor() as cursor:
        await cursor.execute(query)
        names = [column.name for column in cursor.description or ()]
        rows = await cursor.fetchall()
    body = orjson.dumps({"columns": names, "data": [dict(zip(names, row)) for row in rows]}, default=_default)
    return web.Response(body=body, content_type="application/json")


def create_app(dsn: str, pool_size: int) -> web.Application:
    async def pool_context(app: web.Application) -> AsyncIterator[None]:
        async with aiopg.create_pool(dsn, minsize=1, maxsize=pool_size) as pool:
            app[POOL] = pool
            yield

    app = web.Application()
    app.cleanup_ctx.append(pool_context)
    app.router.add_get("/GetData", get_data)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.passthrough", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--pool-size", type=int, default=10, help="the gateway's pool_max_size default")
    arguments = parser.parse_args()
    web.run_app(create_app(arguments.dsn, arguments.pool_size), host="127.0.0.1", port=arguments.port,
                access_log=None, print=None, loop=asyncio.new_event_loop())  # fmt: skip


if __name__ == "__main__":
    main()
