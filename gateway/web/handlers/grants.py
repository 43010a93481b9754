"""GrantTableAccess (POST /GrantTableAccess/), its revocation (DELETE) and a token's grants (GET)."""

from __future__ import annotations

import asyncio

import attrs
from aiohttp import web

from gateway.databases.grant_notes import SKIPPED_EVENT, has_grant_notes, log_grant_notes
from gateway.observability.audit import AdminAction
from gateway.registry import NO_LIMITS, RegistryState, TableAddress, TableRecord, utc_now
from gateway.request.auth import hash_user_token, token_fingerprint
from gateway.request.responses import success
from gateway.web.grant_limits import (
    GRANT_SHOWN,
    LIMIT_PROPERTIES,
    LimitInputs,
    checked_limits,
    described_limits,
    limit_inputs,
)
from gateway.web.inputs import find_table
from gateway.web.keys import ADMIN_TOKEN, AUDITOR, DRIVERS, LOGGER, POOLS, REGISTRY
from gateway.web.named_inputs import new_grantee, table_by_name_or_path, user_token
from gateway.web.openapi_schemas import (
    SUCCESS_STATUS,
    TEXT,
    Component,
    closed_object,
    one_element_array,
    success_object,
)
from gateway.web.operations import (
    ACCESS_DENIED,
    BAD_INPUT,
    REGISTRY_WRITE,
    TABLE_NOT_FOUND,
    Access,
    Operation,
    json_answer,
)

GRANT_NOTES_SECONDS = 2.0
"""How long a grant waits for the table's database to list its catalog before skipping the driver's notes."""


@attrs.frozen(kw_only=True)
class NewGrant:
    """GrantTableAccess's inputs."""

    user_token: str = new_grantee()
    """The token receiving access: at least ``min_user_token_length`` characters."""
    identification: TableAddress | str | None = table_by_name_or_path()
    """The table."""
    limits: LimitInputs = limit_inputs()
    """What narrows the grant (``columns``, ``row_filter``, ``expires_at``); none given: the whole table."""


@attrs.frozen(kw_only=True)
class Revocation:
    """RevokeTableAccess's inputs: a token granted before ``min_user_token_length`` was raised is still found."""

    user_token: str = user_token()
    """The token losing access."""
    identification: TableAddress | str | None = table_by_name_or_path()
    """The table."""


@attrs.frozen(kw_only=True)
class TokenInputs:
    """ListTokenGrants's inputs."""

    user_token: str = user_token()
    """The token whose grants are listed."""


async def grant_table_access(request: web.Request, inputs: NewGrant) -> web.Response:
    """Let the ``user_token`` parameter read one table; granting twice is a success, and replaces the grant.

    Only a grant asks for ``min_user_token_length``: tokens granted before the
    rule keep working, and can still be revoked and listed. ``columns`` and
    ``row_filter`` are checked against the table as its database has it now.
    """
    app = request.app
    user_token, identification = inputs.user_token, inputs.identification
    limits = NO_LIMITS
    if inputs.limits != LimitInputs():
        state = app[REGISTRY].state
        asked = find_table(state, identification)
        limits = await checked_limits(inputs.limits, asked, app[POOLS].get(state.database(asked.address.database)))

    def grant(state: RegistryState) -> tuple[RegistryState, tuple[TableRecord, str]]:
        table = find_table(state, identification)
        token_hash = hash_user_token(state.token_salt, user_token)
        return state.with_grant(token_hash, table, limits), (table, token_hash)

    table, token_hash = await app[REGISTRY].update(grant)
    salt = app[REGISTRY].state.token_salt
    shown = described_limits(limits, utc_now())
    app[AUDITOR].admin_change(
        AdminAction.TABLE_ACCESS_GRANTED,
        local_table_name=table.local_name,
        granted_token_fingerprint=token_fingerprint(salt, user_token),
        **shown,
    )
    await _log_grant_notes(app, table, token_hash)
    if limits == NO_LIMITS:
        return success({}, as_array=True)
    return success({"grant": {"local_table_name": table.local_name, **shown}}, as_array=True)


async def _log_grant_notes(app: web.Application, table: TableRecord, token_hash: str) -> None:
    """Log what the database's driver says about this grant (``Driver.grant_notes``).

    The grant is saved already and stands whatever happens here: a database that
    cannot be read now only costs the notes (a debug line says so).
    """
    state = app[REGISTRY].state
    database = table.address.database
    record = state.database(database)
    driver = app[DRIVERS].get(record.base_type)
    if not has_grant_notes(driver):
        return
    try:
        async with asyncio.timeout(GRANT_NOTES_SECONDS):
            catalog = await app[POOLS].get(record).read_catalog()
    except Exception as error:  # whatever the driver or the database does, the grant must not fail now
        reason = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        app[LOGGER].debug(SKIPPED_EVENT, local_table_name=table.local_name, reason=reason)
        return
    granted = frozenset((a.folder, a.table) for a in state.grants.get(token_hash, ()) if a.database == database)
    log_grant_notes(app[LOGGER], driver, catalog, table, granted, granted_to="the token just granted")


async def revoke_table_access(request: web.Request, inputs: Revocation) -> web.Response:
    """Take one table from the ``user_token`` parameter; revoking what was not granted answers ``revoked: false``."""
    app = request.app
    user_token, identification = inputs.user_token, inputs.identification

    def revoke(state: RegistryState) -> tuple[RegistryState, tuple[TableRecord, bool, str]]:
        table = find_table(state, identification)
        new_state = state.without_grant(hash_user_token(state.token_salt, user_token), table)
        return new_state, (table, new_state is not state, state.token_salt)

    table, revoked, salt = await app[REGISTRY].update(revoke)
    app[AUDITOR].admin_change(
        AdminAction.GRANT_REVOKED,
        local_table_name=table.local_name,
        revoked=revoked,
        revoked_token_fingerprint=token_fingerprint(salt, user_token),
    )
    return success({"revoked": revoked}, as_array=True)


async def list_grants(request: web.Request, inputs: TokenInputs) -> web.Response:
    """The tables granted to the ``user_token`` parameter, by local name; none is an empty list."""
    app = request.app
    user_token = inputs.user_token
    state = app[REGISTRY].state
    token_hash = hash_user_token(state.token_salt, user_token)
    tables = sorted(state.granted_tables(token_hash, expired_too=True), key=lambda t: t.local_name)
    now = utc_now()
    app[LOGGER].info(
        "grants_listed",
        tables=len(tables),
        admin_token_fingerprint=token_fingerprint(state.token_salt, app[ADMIN_TOKEN]),
        listed_token_fingerprint=token_fingerprint(state.token_salt, user_token),
    )
    return success(
        {
            "tables": [
                {
                    "local_table_name": table.local_name,
                    "database": table.address.database,
                    "folder": table.address.folder,
                    "table": table.address.table,
                    **described_limits(state.limits(token_hash, table.address), now),
                }
                for table in tables
            ]
        },
        as_array=True,
    )


OPERATIONS = (
    Operation(
        "GrantTableAccess",
        ("POST",),
        "/GrantTableAccess",
        grant_table_access,
        Access.ADMIN,
        "Let a user token read a table, or some of its columns and rows, until a time (granting again replaces "
        "the grant)",
        inputs=NewGrant,
        body=True,
        answers={
            200: json_answer(
                "Granted; a narrowed grant is shown",
                Component("TableAccessGranted", one_element_array(closed_object({
                    "status": SUCCESS_STATUS,
                    "grant": GRANT_SHOWN,
                }, optional=("grant",)))),
                [{"status": "success"}],
            )
        },
        errors=(*REGISTRY_WRITE, BAD_INPUT, ACCESS_DENIED, TABLE_NOT_FOUND),
    ),
    Operation(
        "RevokeTableAccess",
        ("DELETE",),
        "/GrantTableAccess",
        revoke_table_access,
        Access.ADMIN,
        "Take a grant back; the same parameters as the grant",
        inputs=Revocation,
        answers={
            200: json_answer(
                "Revoked, or there was no such grant",
                Component(
                    "GrantRevoked",
                    one_element_array(
                        success_object(revoked={"type": "boolean", "description": "False when there was no such grant."})
                    ),
                ),
            )
        },
        errors=(*REGISTRY_WRITE, BAD_INPUT, ACCESS_DENIED, TABLE_NOT_FOUND),
    ),
    Operation(
        "ListTokenGrants",
        ("GET",),
        "/GrantTableAccess",
        list_grants,
        Access.ADMIN,
        "The tables granted to a user token",
        inputs=TokenInputs,
        answers={
            200: json_answer(
                "The grants",
                Component(
                    "TokenGrants",
                    one_element_array(
                        success_object(
                            tables={
                                "type": "array",
                                "items": closed_object(
                                    {"local_table_name": TEXT, "database": TEXT, "folder": TEXT, "table": TEXT,
                                     **LIMIT_PROPERTIES},
                                    optional=tuple(LIMIT_PROPERTIES),
                                ),
                                "description": "Sorted by local table name; a narrowed grant shows what it grants, "
                                "an expired one is listed with expired: true.",
                            }
                        )
                    ),
                ),
            )
        },
        errors=(BAD_INPUT, ACCESS_DENIED),
    ),
)
