"""Health and metrics: GET /healthz, GET /readyz and GET /metrics.

``/healthz`` and ``/readyz`` need no token and reveal no connection data: a
database is only ever "reachable" or "unreachable"; why it is unreachable goes
to the log. Only with the admin token does ``/readyz?databases=1`` name the
databases (no answer names a registered database to anyone else); without it,
it counts them. ``/readyz`` answers 200 while the gateway can serve reads, and
says in ``registry`` whether the registry is in step and writable (``loaded``),
out of reach (``unavailable``: the state held is served, changes answer 503) or
could not be written (``unwritable``): a load balancer keeps sending reads,
monitoring alerts on anything but ``loaded``. A registry in PostgreSQL out of
reach for longer than ``registry_max_staleness`` is ``stale``: ``/readyz`` then
answers 503, as every operation that reads the registry does. ``/metrics`` needs the admin token
when the setting ``metrics_require_admin`` is on.
"""

from __future__ import annotations

import asyncio

import attrs
import orjson
from aiohttp import web

from gateway.errors import BadRequest, DatabaseUnavailable, GatewayError
from gateway.observability.metrics import EXPOSITION_CONTENT_TYPE
from gateway.registry import DatabaseRecord, RegistryStatus
from gateway.request.auth import check_admin_token
from gateway.request.responses import JSON_CONTENT_TYPE, success
from gateway.settings.config import GatewayConfig
from gateway.web.keys import ADMIN_TOKEN, CONFIG, LOGGER, METRICS, POOLS, REGISTRY, REQUEST_CONTEXT
from gateway.web.openapi_schemas import COUNT, METRICS_MEDIA_TYPE, Component, any_case, closed_object, success_object
from gateway.web.operations import ACCESS_DENIED, BAD_INPUT, Access, Answer, Operation, json_answer, registry_stale
from gateway.web.parameters import ReadContext, parameter

PROBE_TIMEOUT_SECONDS = 2.0
"""How long ``/readyz?databases=1`` waits for each database (they are probed concurrently)."""

REACHABLE = "reachable"
UNREACHABLE = "unreachable"

_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS = frozenset({"", "0", "false", "no", "off"})


def _flag(name: str, value: str | None, context: ReadContext) -> bool:
    text = (value or "").strip().lower()
    if text in _TRUE_WORDS:
        return True
    if text in _FALSE_WORDS:
        return False
    raise BadRequest(f"parameter {name!r} must be 1 or 0 (or true / false), got {value!r}")


@attrs.frozen(kw_only=True)
class ReadinessInputs:
    """/readyz's inputs."""

    databases: bool = parameter(
        "1 (true, yes, on; any case): also try each registered database, concurrently, 2 s each; the answer "
        "counts them, and names them only to the admin token.",
        schema=any_case(*sorted(_TRUE_WORDS), *sorted(_FALSE_WORDS - {""}), padded=True),
        reader=_flag,
    )
    """Whether to probe every registered database."""


async def healthz(request: web.Request, inputs: None) -> web.Response:
    """The process is alive and answering."""
    return success({"alive": True}, as_array=False)


async def readyz(request: web.Request, inputs: ReadinessInputs) -> web.Response:
    """The registry is loaded (and how it stands); with ``databases=1`` also every registered database answers.

    The probe's answer counts the databases; with the admin token it also names
    them (a wrong admin token is 403, as everywhere).
    """
    app = request.app
    probe_databases = inputs.databases
    state = app[REGISTRY].state  # the app cannot exist without a loaded registry; this re-reads a changed file
    status = app[REGISTRY].status
    if status is RegistryStatus.STALE:  # every other answer that reads the registry is 503 now: not ready
        return _error_answer(registry_stale(app[REGISTRY], app[CONFIG]), {"registry": status.value})
    payload: dict[str, object] = {"ready": True, "registry": status.value}
    if not probe_databases:
        return success(payload, as_array=False)
    presented = request[REQUEST_CONTEXT].admin_token
    named = presented is not None
    if named:
        check_admin_token(presented, app[ADMIN_TOKEN])
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
    return _error_answer(error, details)


def _error_answer(error: GatewayError, details: dict[str, object]) -> web.Response:
    """The error's body with what /readyz adds to it (the database counts, the registry's status)."""
    body = {**error.to_body(), **details}
    return web.Response(status=error.status, body=orjson.dumps(body), content_type=JSON_CONTENT_TYPE, charset="utf-8")


async def metrics(request: web.Request, inputs: None) -> web.Response:
    """Every metric in the Prometheus text format."""
    app = request.app
    return web.Response(body=app[METRICS].exposition(), headers={"Content-Type": EXPOSITION_CONTENT_TYPE})


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


def metrics_access(config: GatewayConfig) -> Access:
    """The admin token, unless the operator opened /metrics (``metrics_require_admin = false``)."""
    return Access.ADMIN if config.metrics_require_admin else Access.PUBLIC


REACHABILITY = Component(
    "Reachability",
    {
        "type": "object",
        "additionalProperties": {"enum": [REACHABLE, UNREACHABLE]},
        "description": "Local database name to reachable / unreachable; no host, port, user or reason. "
        "Only answered with the admin token.",
    },
)
REACHABILITY_COUNTS = Component("ReachabilityCounts", closed_object({REACHABLE: COUNT, UNREACHABLE: COUNT}))

OPERATIONS = (
    Operation(
        "Healthz",
        ("GET",),
        "/healthz",
        healthz,
        Access.PUBLIC,
        "The process is alive",
        answers={
            200: json_answer(
                "Alive", Component("Alive", success_object(alive={"const": True})), {"status": "success", "alive": True}
            )
        },
        reads_registry=False,
    ),
    Operation(
        "Readyz",
        ("GET",),
        "/readyz",
        readyz,
        Access.PUBLIC_OR_ADMIN,
        "The registry is loaded (with databases=1: every registered database answers)",
        description="No token needed. 200 while the gateway serves reads; the registry field says whether "
        "changes are saved now (loaded) or answer 503 registry_unavailable (unavailable) or 507 "
        "registry_unwritable (unwritable). 503 registry_unavailable with registry: stale once a registry in "
        "PostgreSQL has been out of reach for longer than registry_max_staleness (the gateway then answers 503 "
        "to everything the registry decides). With databases=1 the answer counts the databases; with the admin "
        "token it also names them (a wrong admin token is 403).",
        inputs=ReadinessInputs,
        answers={
            200: json_answer(
                "Ready",
                Component(
                    "Ready",
                    {
                        "type": "object",
                        "required": ["status", "ready", "registry"],
                        "properties": {
                            "status": success_object()["properties"]["status"],
                            "ready": {"const": True},
                            "registry": {
                                "enum": ["loaded", "unavailable", "unwritable"],
                                "description": "loaded: in step and writable; unavailable: the registry database "
                                "cannot be reached (reads are served from the state held, changes answer 503); "
                                "unwritable: the last change could not be stored (507) and none has been since.",
                            },
                            "database_counts": REACHABILITY_COUNTS,
                            "databases": REACHABILITY,
                        },
                        "additionalProperties": False,
                    },
                ),
            ),
            503: json_answer(
                "A registered database does not answer (error: database_unavailable, with the counts), or the "
                "registry is stale (error: registry_unavailable, registry: stale)",
                Component(
                    "NotReady",
                    closed_object(
                        {
                            "status": {"const": "error"},
                            "error": {"enum": ["database_unavailable", "registry_unavailable"]},
                            "message": {"type": "string", "minLength": 1},
                            "registry": {"const": "stale"},
                            "database_counts": REACHABILITY_COUNTS,
                            "databases": REACHABILITY,
                        },
                        optional=("registry", "database_counts", "databases"),
                    ),
                ),
            ),
        },
        errors=(BAD_INPUT, ACCESS_DENIED),
        reads_registry=False,
    ),
    Operation(
        "Metrics",
        ("GET",),
        "/metrics",
        metrics,
        metrics_access,
        "Prometheus metrics (text exposition format)",
        description="Needs the admin token unless the setting metrics_require_admin is false (the labels name the "
        "registered databases).",
        answers={200: Answer("The metrics", {METRICS_MEDIA_TYPE: {"type": "string"}})},
        errors=(ACCESS_DENIED,),
        reads_registry=False,
    ),
)
