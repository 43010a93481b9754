"""Every operation declared once, next to its handler: method, path, who may call it, inputs and answers.

Each module of ``gateway.web.handlers`` holds ``OPERATIONS``, a tuple of
``Operation``. ``gateway.web.app`` serves them (``add_routes``: every path also with
a trailing slash, aliases too), and ``gateway.web.openapi_document`` builds the
OpenAPI document of the running gateway from the same declarations. Serving an
operation checks its ``Access`` (admin and user operations), reads its inputs
class (``gateway.web.parameters``) and calls the handler with both.
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
from aiohttp import web

from gateway import errors
from gateway.observability.observation import REQUEST_CONTEXT
from gateway.registry import Registry, RegistryKind, RegistryStatus
from gateway.request.auth import check_admin_token, checked_user_token
from gateway.settings.config import GatewayConfig
from gateway.web.inputs import read_inputs
from gateway.web.keys import ADMIN_TOKEN, AUDITED_ROUTES, CONFIG, DRIVERS, REDACTOR, REGISTRY
from gateway.web.openapi_schemas import JSON, Schema
from gateway.web.parameters import ReadContext, read_declared

Handler = Callable[[web.Request, Any], Awaitable[web.StreamResponse]]
Served = Callable[[web.Request], Awaitable[web.StreamResponse]]

USER_TOKEN = web.RequestKey("user_token", str)
"""A user operation's token, checked present before its handler runs."""


class Access(enum.Enum):
    """Who may call an operation; ``ADMIN`` and ``USER`` are checked before the handler runs."""

    PUBLIC = "public"
    """Anyone."""
    ADMIN = "admin"
    """The admin token (403 ``access_denied`` without it)."""
    USER = "user"
    """A user token (401 ``token_required`` without one); the handler checks its grants."""
    ADMIN_OR_USER = "admin_or_user"
    """Either token; the handler decides by which one came (the list routes)."""
    PUBLIC_OR_ADMIN = "public_or_admin"
    """Anyone; the admin token adds detail and a wrong one is 403, which the handler checks (/readyz)."""


@attrs.frozen
class Answer:
    """One non-error answer of an operation."""

    description: str
    """What it means."""
    content: Mapping[str, Any]
    """Media type to schema (a ``Component`` or an inline schema)."""
    headers: Mapping[str, Schema] = attrs.Factory(dict)
    """Header objects by name; ``required`` ones are on every such answer."""
    example: Any = None
    """An example JSON body, shown under the first media type."""
    streamed: bool = False
    """May be sent chunked, without a Content-Length, while it is produced (``x-streamed`` in the document)."""


def json_answer(description: str, schema: Any, example: Any = None) -> Answer:
    return Answer(description, {JSON: schema}, example=example)


@attrs.frozen
class ErrorAnswer:
    """Error answers of one status with their codes; shared by many operations, written once in the document."""

    name: str
    """Its key under ``components/responses``."""
    status: int
    """The HTTP status."""
    codes: tuple[str, ...]
    """The machine codes it may carry."""
    description: str
    """What the status means."""


def error_answer(name: str, description: str, *raised: type[errors.GatewayError], status: int = 0) -> ErrorAnswer:
    """The answer the error classes ``raised`` give (``status`` when a class lets its raiser choose)."""
    return ErrorAnswer(name, status or raised[0].status, tuple(cls.code for cls in raised), description)


BAD_INPUT = error_answer(
    "BadInput", "Bad request; the message names the parameter", errors.BadRequest, errors.AmbiguousRequest
)
TOKEN_REQUIRED = error_answer("TokenRequired", "No user token", errors.TokenRequired)
ACCESS_DENIED = error_answer("AccessDenied", "Access denied", errors.AccessDenied)
DATABASE_NOT_FOUND = error_answer("DatabaseNotFound", "Not found", errors.DatabaseNotFound)
TABLE_NOT_FOUND = error_answer("TableNotFound", "Not found", errors.TableNotFound)
PAYLOAD_TOO_LARGE = error_answer("PayloadTooLarge", "Too large", errors.PayloadTooLarge)
INTERNAL_ERROR = error_answer(
    "InternalError", "The gateway failed unexpectedly; details are in its log only", errors.InternalError
)
UPSTREAM_UNAVAILABLE = error_answer(
    "DatabaseUnreachable",
    "The database could not be reached or refused the credentials",
    errors.DatabaseUnavailable,
    status=502,
)
DATABASE_UNAVAILABLE = error_answer(
    "DatabaseUnavailable", "No database connection could be had", errors.DatabaseUnavailable
)
REGISTRY_WRITE = (
    error_answer(
        "RegistryUnavailable", "The registry database cannot be reached; nothing was changed", errors.RegistryUnavailable
    ),
    error_answer("RegistryUnwritable", "The registry could not be stored (disk full)", errors.RegistryUnwritable),
)
"""What every operation that changes the registry may also answer."""
REGISTRY_STALE = error_answer(
    "RegistryStale",
    "This gateway has not reached its registry database for longer than registry_max_staleness, so it does not"
    " answer from the copy it holds",
    errors.RegistryUnavailable,
)
"""What every operation that reads the registry may also answer, with a registry in PostgreSQL and a staleness limit."""


def registry_stale(registry: Registry, config: GatewayConfig) -> errors.RegistryUnavailable:
    """The 503 of an operation served while ``registry`` is ``stale``."""
    return errors.RegistryUnavailable(
        f"this gateway has not reached its registry database for {registry.unconfirmed_seconds:.0f} s (more than"
        f" registry_max_staleness, {config.registry_max_staleness:g} s), so it does not answer from the copy it"
        " holds, which may be out of date; ask another gateway, or again once the registry is back"
    )


def stale_limit_applies(config: GatewayConfig) -> bool:
    """Whether a gateway with ``config`` can be ``stale``: a registry in PostgreSQL, with a staleness limit."""
    return config.registry_location.kind is RegistryKind.POSTGRESQL and config.registry_max_staleness > 0


@attrs.frozen
class Operation:
    """One operation: what the router serves and the document describes."""

    operation_id: str
    """Its name (the specification's where it has one); a second method adds the method (``GetDataPost``)."""
    methods: tuple[str, ...]
    """HTTP methods serving it, upper case."""
    path: str
    """Its path; served with and without a trailing slash (except ``/``)."""
    handler: Handler
    """``handler(request, inputs)``; ``inputs`` is None for an operation without inputs."""
    access: Access | Callable[[GatewayConfig], Access]
    """Who may call it, or a function of the settings saying so."""
    summary: str
    """One line, for the document."""
    answers: Mapping[int, Answer]
    """Its non-error answers by status (200 at least)."""
    errors: tuple[ErrorAnswer, ...] = ()
    """The error answers it may give besides 500 ``internal_error`` (every operation may)."""
    inputs: type | None = None
    """The attrs class its inputs are read into (``gateway.web.parameters``); None: it reads none."""
    body: bool = False
    """Whether it reads a JSON object body (for what the query string does not give)."""
    description: str | None = None
    """More than the summary, for the document."""
    aliases: tuple[str, ...] = ()
    """Other paths serving it (the specification spells ``/Database/List`` too)."""
    audited: bool = False
    """Each request ends in a GetData audit entry and GetData's metrics, whatever its end (the token check and the
    inputs included): the request middleware gives it a ``GetDataTally`` in its ``RequestContext`` to fill in."""
    reads_registry: bool = True
    """Whether its answer comes from the registry: then a ``stale`` registry answers 503 ``registry_unavailable``
    (after the access check) rather than what may no longer hold (a revoked grant). False: health, metrics, the
    document, the index and the logs, which say nothing the registry decides."""

    def access_for(self, config: GatewayConfig) -> Access:
        return self.access(config) if callable(self.access) else self.access

    def serving(self, config: GatewayConfig) -> Served:
        """The aiohttp handler: access, then inputs, then the handler."""
        access = self.access_for(config)
        inputs_class = self.inputs
        handler = self.handler
        body = self.body
        reads_registry = self.reads_registry

        async def serve(request: web.Request) -> web.StreamResponse:
            app = request.app
            if access is Access.ADMIN:
                check_admin_token(request[REQUEST_CONTEXT].admin_token, app[ADMIN_TOKEN])
            elif access is Access.USER:
                request[USER_TOKEN] = checked_user_token(request[REQUEST_CONTEXT].user_token)
            if reads_registry and app[REGISTRY].status is RegistryStatus.STALE:
                raise registry_stale(app[REGISTRY], app[CONFIG])
            if inputs_class is None:
                return await handler(request, None)
            config = app[CONFIG]
            raw = await read_inputs(request, body_allowed=body, max_body_bytes=config.max_body_bytes)
            context = ReadContext(config, app[REDACTOR], app[DRIVERS])
            return await handler(request, read_declared(inputs_class, raw, context))

        return serve


def handler_operations() -> list[Operation]:
    """Every module of ``gateway.web.handlers``'s ``OPERATIONS``, modules by name, each in its own order."""
    import gateway.web.handlers

    found: list[Operation] = []
    for module_info in sorted(pkgutil.iter_modules(gateway.web.handlers.__path__), key=lambda info: info.name):
        module = importlib.import_module(f"gateway.web.handlers.{module_info.name}")
        found.extend(getattr(module, "OPERATIONS", ()))
    return found


def add_routes(app: web.Application, operations: list[Operation], config: GatewayConfig) -> None:
    """Serve every operation on its path and aliases, each also with a trailing slash (except ``/``).

    The route templates of ``audited`` operations go to ``AUDITED_ROUTES``, where the request middleware looks.
    """
    app[AUDITED_ROUTES] = frozenset(
        path for operation in operations if operation.audited for path in (operation.path, *operation.aliases)
    )
    for operation in operations:
        served = operation.serving(config)
        for path in (operation.path, *operation.aliases):
            for method in operation.methods:
                app.router.add_route(method, path, served)
                if path != "/":
                    app.router.add_route(method, path + "/", served)
