"""A registered database's later life: unregister (DELETE), refresh its catalog (POST), change its connection (PATCH).

Each change writes one ``audit`` entry with the admin token's fingerprint and
what it did (``gateway.observability.audit``). A change that needs the database (refresh, new connection data) talks to
it before anything is saved, so a failure leaves the registry as it was.
"""

from __future__ import annotations

import attrs
from aiohttp import web

from gateway.contract.driver_protocol import CatalogTable
from gateway.databases.driver_loader import connection_parameters
from gateway.databases.grant_notes import log_grant_notes
from gateway.errors import BadRequest
from gateway.observability.audit import AdminAction
from gateway.registry import DatabaseRecord, RegistryState
from gateway.registry.models import DatabaseRemoval
from gateway.request.responses import success
from gateway.web.connection_inputs import (
    DATABASE_DATA,
    base_type,
    changed_connection,
    connection_changes,
    database_data,
)
from gateway.web.keys import AUDITOR, DRIVERS, LOGGER, POOLS, REGISTRY
from gateway.web.named_inputs import DatabaseNameInputs, local_database_name
from gateway.web.openapi_schemas import COUNT, NAME_LIST, TEXT, Component, one_element_array, success_object
from gateway.web.operations import (
    ACCESS_DENIED,
    BAD_INPUT,
    DATABASE_NOT_FOUND,
    PAYLOAD_TOO_LARGE,
    REGISTRY_WRITE,
    UPSTREAM_UNAVAILABLE,
    Access,
    Operation,
    json_answer,
)


@attrs.frozen(kw_only=True)
class ConnectionChanges:
    """UpdateDatabase's inputs."""

    local_database_name: str = local_database_name()
    """The database."""
    changes: dict[str, str] = connection_changes()
    """The connection fields given, by name, as given (checked against its driver's once the database is known)."""
    base_type: str | None = base_type(required=False)
    """May be given, but not changed."""


async def unregister_database(request: web.Request, inputs: DatabaseNameInputs) -> web.Response:
    """Remove a database with its tables and every grant on them, and close its pool."""
    app = request.app
    local_name = inputs.local_database_name

    def unregister(state: RegistryState) -> tuple[RegistryState, DatabaseRemoval]:
        return state.without_database(local_name)

    removal = await app[REGISTRY].update(unregister)
    await app[POOLS].discard(local_name)
    app[AUDITOR].admin_change(
        AdminAction.DATABASE_UNREGISTERED,
        local_database_name=local_name,
        removed_tables=removal.tables,
        removed_grants=removal.grants,
    )
    return success(
        {"local_name": local_name, "removed_tables": removal.tables, "removed_grants": removal.grants}, as_array=True
    )


async def refresh_database(request: web.Request, inputs: DatabaseNameInputs) -> web.Response:
    """Read the database's catalog again: new tables get default names, dropped ones go with their grants.

    The database's pool is replaced, so the driver re-reads what it caches from the catalog too.
    """
    app = request.app
    local_name = inputs.local_database_name
    record = app[REGISTRY].state.database(local_name)
    # A fresh pool: whatever the driver derived from the catalog is derived again, as on registration.
    async with app[POOLS].on_trial(record) as pool:
        catalog = await pool.read_catalog()
        changes = await app[REGISTRY].update(lambda state: state.with_catalog_refreshed(local_name, catalog))
    app[AUDITOR].admin_change(
        AdminAction.DATABASE_REFRESHED,
        local_database_name=local_name,
        added=list(changes.added),
        removed=list(changes.removed),
        unchanged=changes.unchanged,
    )
    _log_grant_notes(app, local_name, catalog)
    return success(
        {
            "local_name": local_name,
            "added": list(changes.added),
            "removed": list(changes.removed),
            "unchanged": changes.unchanged,
        },
        as_array=True,
    )


async def update_database(request: web.Request, inputs: ConnectionChanges) -> web.Response:
    """Change connection data (e.g. a rotated password) once a connection with the new data succeeds."""
    app = request.app
    local_name = inputs.local_database_name
    changeable = [field.name for field in connection_parameters(app[DRIVERS].drivers)]
    if not any(name in inputs.changes for name in changeable):
        raise BadRequest(f"give at least one of {', '.join(changeable)} to change")
    current = app[REGISTRY].state.database(local_name)
    if inputs.base_type is not None and inputs.base_type != current.base_type:
        raise BadRequest(
            f"parameter 'base_type' cannot change from {current.base_type!r}; unregister the database and add it again"
        )
    connection = changed_connection(inputs.changes, app[DRIVERS], current.base_type, current.connection)
    record = current.with_connection(connection)
    async with app[POOLS].on_trial(record) as pool:
        await pool.check()
        await app[REGISTRY].update(lambda state: (state.with_connection(record), None))
    app[AUDITOR].admin_change(
        AdminAction.DATABASE_UPDATED, local_database_name=local_name, changed_fields=_changed_fields(current, record)
    )
    return success(database_data(record), as_array=True)


def _log_grant_notes(app: web.Application, local_name: str, catalog: list[CatalogTable]) -> None:
    """For each granted table of the database, what its driver says about it beside every token's grants."""
    state = app[REGISTRY].state
    driver = app[DRIVERS].get(state.database(local_name).base_type)
    granted = frozenset(
        address for addresses in state.grants.values() for address in addresses if address.database == local_name
    )
    granted_refs = frozenset((address.folder, address.table) for address in granted)
    for table in sorted((t for t in state.tables.values() if t.address in granted), key=lambda t: t.local_name):
        log_grant_notes(app[LOGGER], driver, catalog, table, granted_refs, granted_to="any token")


def _changed_fields(old: DatabaseRecord, new: DatabaseRecord) -> list[str]:
    """Parameter names whose value changed; never the values (one is a password)."""
    names = {*old.connection.names(), *new.connection.names()}
    return sorted(name for name in names if old.connection.get(name) != new.connection.get(name))


OPERATIONS = (
    Operation(
        "RefreshDatabase",
        ("POST",),
        "/Database",
        refresh_database,
        Access.ADMIN,
        "Re-read a database's catalog: add new tables, remove dropped ones (and their grants)",
        description="Renamed local names and grants on kept tables stay. Nothing changes when the database "
        "cannot be reached.",
        inputs=DatabaseNameInputs,
        answers={
            200: json_answer(
                "What changed",
                Component(
                    "DatabaseRefreshed",
                    one_element_array(
                        success_object(local_name=TEXT, added=NAME_LIST, removed=NAME_LIST, unchanged=COUNT)
                    ),
                ),
            )
        },
        errors=(*REGISTRY_WRITE, BAD_INPUT, ACCESS_DENIED, DATABASE_NOT_FOUND, UPSTREAM_UNAVAILABLE),
    ),
    Operation(
        "UpdateDatabase",
        ("PATCH",),
        "/Database",
        update_database,
        Access.ADMIN,
        "Change a database's connection data (e.g. a rotated password), verified by connecting first",
        description="local_database_name is required; give at least one of the connection fields the database's "
        "driver declares (the parameters below; each says which drivers take it when not all do); another "
        "driver's field is 400. base_type cannot change. Nothing is saved when the new data cannot connect.",
        inputs=ConnectionChanges,
        body=True,
        answers={200: json_answer("The new connection data", DATABASE_DATA)},
        errors=(
            *REGISTRY_WRITE,
            BAD_INPUT,
            ACCESS_DENIED,
            DATABASE_NOT_FOUND,
            PAYLOAD_TOO_LARGE,
            UPSTREAM_UNAVAILABLE,
        ),
    ),
    Operation(
        "UnregisterDatabase",
        ("DELETE",),
        "/Database",
        unregister_database,
        Access.ADMIN,
        "Unregister a database: its tables and every grant on them go, its pool closes",
        inputs=DatabaseNameInputs,
        answers={
            200: json_answer(
                "Unregistered",
                Component(
                    "DatabaseUnregistered",
                    one_element_array(success_object(local_name=TEXT, removed_tables=COUNT, removed_grants=COUNT)),
                ),
            )
        },
        errors=(*REGISTRY_WRITE, BAD_INPUT, ACCESS_DENIED, DATABASE_NOT_FOUND),
    ),
)
