"""A registered database's later life: unregister (DELETE), refresh its catalog (POST), change its connection (PATCH).

Each change writes one ``audit`` entry with the admin token's fingerprint and
what it did (``gateway.audit``). A change that needs the database (refresh, new connection data) talks to
it before anything is saved, so a failure leaves the registry as it was.
"""

from __future__ import annotations

from typing import Any

import attrs
from aiohttp import web

from gateway.audit import AdminAction
from gateway.auth import require_admin
from gateway.driver_protocol import CatalogTable
from gateway.errors import BadRequest
from gateway.connection_fields import SECRET_PARAMETERS, SLOTS, changed_connection, connection_parameters
from gateway.handlers.databases import database_data
from gateway.inheritance import inheritance_descendants, warn_children_not_granted
from gateway.inputs import RequestInputs, read_inputs
from gateway.keys import ADMIN_TOKEN, AUDITOR, CONFIG, DRIVERS, LOGGER, POOLS, REDACTOR, REGISTRY
from gateway.registry import DatabaseRecord, RegistryState
from gateway.registry.models import DatabaseRemoval
from gateway.responses import success

async def unregister_database(request: web.Request) -> web.Response:
    """Remove a database with its tables and every grant on them, and close its pool."""
    app = request.app
    require_admin(request, app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    local_name = inputs.require("local_database_name")

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


async def refresh_database(request: web.Request) -> web.Response:
    """Read the database's catalog again: new tables get default names, dropped ones go with their grants.

    The database's pool is replaced, so the driver re-reads what it caches from the catalog too.
    """
    app = request.app
    require_admin(request, app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    local_name = inputs.require("local_database_name")
    record = app[REGISTRY].state.database(local_name)
    # A fresh pool: whatever the driver derived from the catalog (PostgreSQL's function
    # allowlist) is derived again, as on registration.
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
    _warn_about_inheritance_children(app, local_name, catalog)
    return success(
        {
            "local_name": local_name,
            "added": list(changes.added),
            "removed": list(changes.removed),
            "unchanged": changes.unchanged,
        },
        as_array=True,
    )


async def update_database(request: web.Request) -> web.Response:
    """Change connection data (e.g. a rotated password) once a connection with the new data succeeds."""
    app = request.app
    require_admin(request, app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=True, max_body_bytes=app[CONFIG].max_body_bytes)
    for secret in SECRET_PARAMETERS:
        app[REDACTOR].add(inputs.get(secret))  # before anything can log it
    local_name = inputs.require("local_database_name")
    changeable = [field.name for field in connection_parameters(app[DRIVERS].drivers)]
    if all(inputs.get(name) is None for name in changeable):
        raise BadRequest(f"give at least one of {', '.join(changeable)} to change")
    current = app[REGISTRY].state.database(local_name)
    base_type = inputs.get("base_type")
    if base_type is not None and base_type != current.base_type:
        raise BadRequest(
            f"parameter 'base_type' cannot change from {current.base_type!r}; unregister the database and add it again"
        )
    record = current.with_connection(changed_connection(inputs, app[DRIVERS], current.base_type, current.connection))
    async with app[POOLS].on_trial(record) as pool:
        await pool.check()
        await app[REGISTRY].update(lambda state: (state.with_connection(record), None))
    app[AUDITOR].admin_change(
        AdminAction.DATABASE_UPDATED, local_database_name=local_name, changed_fields=_changed_fields(current, record)
    )
    return success(database_data(record), as_array=True)


def _warn_about_inheritance_children(app: web.Application, local_name: str, catalog: list[CatalogTable]) -> None:
    """For each granted table of the database, warn about its inheritance children that no token was granted."""
    state = app[REGISTRY].state
    granted = frozenset(
        address for addresses in state.grants.values() for address in addresses if address.database == local_name
    )
    descendants = inheritance_descendants(catalog)
    granted_refs = frozenset((address.folder, address.table) for address in granted)
    for table in sorted((t for t in state.tables.values() if t.address in granted), key=lambda t: t.local_name):
        warn_children_not_granted(app[LOGGER], table, descendants, granted_refs, granted_to="any token")


def _changed_fields(old: DatabaseRecord, new: DatabaseRecord) -> list[str]:
    """Parameter names whose value changed; never the values (one is a password)."""
    return sorted(name for name, slot in SLOTS.items() if getattr(old, slot) != getattr(new, slot))

