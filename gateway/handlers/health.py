"""Health and metrics: GET /healthz, GET /readyz and GET /metrics.

``/healthz`` and ``/readyz`` need no token and reveal no connection data: a
database is only ever "reachable" or "unreachable"; why it is unreachable goes
to the log. Only with the admin token does ``/readyz?databases=1`` name the
databases (no answer names a registered database to anyone else); without it,
it counts them. ``/readyz`` answers 200 while the gateway can serve reads, and
says in ``registry`` whether the registry is in step and writable (``loaded``),
out of reach (``unavailable``: the state held is served, changes answer 503) or
could not be written (``unwritable``): a load balancer keeps sending reads,
monitoring alerts on anything but ``loaded``. ``/metrics`` needs the admin token
when the setting ``metrics_require_admin`` is on.
"""

from __future__ import annotations

import asyncio

import orjson
from aiohttp import web

from gateway.auth import ADMIN_TOKEN_HEADERS, header_token, require_admin
from gateway.errors import BadRequest, DatabaseUnavailable
from gateway.inputs import read_inputs
from gateway.keys import ADMIN_TOKEN, CONFIG, LOGGER, METRICS, POOLS, REGISTRY
from gateway.metrics import EXPOSITION_CONTENT_TYPE
from gateway.registry import DatabaseRecord
from gateway.responses import JSON_CONTENT_TYPE, success

PROBE_TIMEOUT_SECONDS = 2.0
"""How long ``/readyz?databases=1`` waits for each database (they are probed concurrently)."""

REACHABLE = "reachable"
UNREACHABLE = "unreachable"

_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS = frozenset({"", "0", "false", "no", "off"})


async def healthz(request: web.Request) -> web.Response:
    """The process is alive and answering."""
    return success({"alive": True}, as_array=False)


async def readyz(request: web.Request) -> web.Response:
    """The registry is loaded (and how it stands); with ``databases=1`` also every registered database answers.

    The probe's answer counts the databases; with the admin token it also names
    them (a wrong admin token is 403, as everywhere).
    """
    app = request.app
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    probe_databases = _flag("databases", inputs.get("databases"))
    state = app[REGISTRY].state  # the app cannot exist without a loaded registry; this re-reads a changed file
    payload: dict[str, object] = {"ready": True, "registry": app[REGISTRY].status.value}
    if not probe_databases:
        return success(payload, as_array=False)
    named = header_token(request, ADMIN_TOKEN_HEADERS) is not None
    if named:
        require_admin(request, app[ADMIN_TOKEN])
    records = sorted(state.databases.values(), key=lambda record: record.local_name)
    verdicts = await asyncio.gather(*(_probe(app, record) for record in records))
    databases = {record.local_name: verdict for record, verdict in zip(records, verdicts)}
    unreachable = [name for name, verdict in databases.items() if verdict == UNREACHABLE]
    counts = {REACHABLE: len(databases) - len(unreachable), UNREACHABLE: len(unreachable)}
    details: dict[str, object] = {"database_counts": counts, **({"databases": databases} if named else {})}
    if not unreachable:
        return success({**payload, **details}, as_array=False)
    which = f": {', '.join(unreachable)}; the gateway log says why" if named else "; the gateway log says which and why"
    error = DatabaseUnavailable(f"{len(unreachable)} of {len(databases)} registered databases cannot be reached{which}")
    body = {**error.to_body(), **details}
    return web.Response(status=error.status, body=orjson.dumps(body), content_type=JSON_CONTENT_TYPE, charset="utf-8")


async def metrics(request: web.Request) -> web.Response:
    """Every metric in the Prometheus text format."""
    app = request.app
    if app[CONFIG].metrics_require_admin:
        require_admin(request, app[ADMIN_TOKEN])
    return web.Response(body=app[METRICS].exposition(), headers={"Content-Type": EXPOSITION_CONTENT_TYPE})


def _flag(name: str, value: str | None) -> bool:
    text = (value or "").strip().lower()
    if text in _TRUE_WORDS:
        return True
    if text in _FALSE_WORDS:
        return False
    raise BadRequest(f"parameter {name!r} must be 1 or 0 (or true / false), got {value!r}")


async def _probe(app: web.Application, record: DatabaseRecord) -> str:
    """Connect through the database's pool and run a trivial statement, within the probe time limit."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_SECONDS):
            await app[POOLS].get(record).check()
    except TimeoutError:
        reason = f"no answer within {PROBE_TIMEOUT_SECONDS:g} s"
    except Exception as error:  # a readiness probe answers for every database, whatever one driver does
        reason = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
    else:
        return REACHABLE
    app[LOGGER].warning("readiness_database_unreachable", local_database_name=record.local_name, reason=reason)
    return UNREACHABLE
