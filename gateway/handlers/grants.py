"""GrantTableAccess (POST /GrantTableAccess/), its revocation (DELETE) and a token's grants (GET)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from gateway.audit import AdminAction
from gateway.auth import hash_user_token, require_admin, token_fingerprint
from gateway.config import MAX_USER_TOKEN_LENGTH
from gateway.errors import BadRequest
from gateway.inputs import RequestInputs, find_table, read_inputs, table_identification
from gateway.inheritance import inheritance_descendants, warn_children_not_granted
from gateway.keys import ADMIN_TOKEN, AUDITOR, CONFIG, LOGGER, POOLS, REGISTRY
from gateway.registry import RegistryState, TableAddress, TableRecord
from gateway.responses import success

INHERITANCE_CHECK_SECONDS = 2.0
"""How long a grant waits for the table's database to list inheritance children before skipping the warning."""


async def grant_table_access(request: web.Request) -> web.Response:
    """Let the ``user_token`` parameter read one table; granting twice is a success.

    Only a grant asks for ``min_user_token_length``: tokens granted before the
    rule keep working, and can still be revoked and listed.
    """
    app = request.app
    user_token, identification = await _token_and_table(request, minimum_length=app[CONFIG].min_user_token_length)

    def grant(state: RegistryState) -> tuple[RegistryState, tuple[TableRecord, str]]:
        table = find_table(state, identification)
        token_hash = hash_user_token(state.token_salt, user_token)
        return state.with_grant(token_hash, table), (table, token_hash)

    table, token_hash = await app[REGISTRY].update(grant)
    salt = app[REGISTRY].state.token_salt
    app[AUDITOR].admin_change(
        AdminAction.TABLE_ACCESS_GRANTED,
        local_table_name=table.local_name,
        granted_token_fingerprint=token_fingerprint(salt, user_token),
    )
    await _warn_about_inheritance_children(app, table, token_hash)
    return success({}, as_array=True)


async def _warn_about_inheritance_children(app: web.Application, table: TableRecord, token_hash: str) -> None:
    """Log ``inheritance_children_not_granted`` if the table has children this token was not granted.

    The grant is saved already and stands whatever happens here: a database that
    cannot be read now only costs the warning (a debug line says so).
    """
    state = app[REGISTRY].state
    database = table.address.database
    try:
        async with asyncio.timeout(INHERITANCE_CHECK_SECONDS):
            catalog = await app[POOLS].get(state.database(database)).read_catalog()
    except Exception as error:  # whatever the driver or the database does, the grant must not fail now
        reason = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        app[LOGGER].debug("inheritance_check_skipped", local_table_name=table.local_name, reason=reason)
        return
    granted = frozenset((a.folder, a.table) for a in state.grants.get(token_hash, ()) if a.database == database)
    warn_children_not_granted(
        app[LOGGER], table, inheritance_descendants(catalog), granted, granted_to="the token just granted"
    )


async def revoke_table_access(request: web.Request) -> web.Response:
    """Take one table from the ``user_token`` parameter; revoking what was not granted answers ``revoked: false``."""
    app = request.app
    user_token, identification = await _token_and_table(request)

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


async def list_grants(request: web.Request) -> web.Response:
    """The tables granted to the ``user_token`` parameter, by local name; none is an empty list."""
    app = request.app
    require_admin(request, app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    user_token = user_token_parameter(inputs)
    state = app[REGISTRY].state
    tables = sorted(state.granted_tables(hash_user_token(state.token_salt, user_token)), key=lambda t: t.local_name)
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
                }
                for table in tables
            ]
        },
        as_array=True,
    )


async def _token_and_table(
    request: web.Request, *, minimum_length: int = 1
) -> tuple[str, TableAddress | str | None]:
    """Grant and revoke take the same inputs: the admin token, ``user_token`` and a table identification."""
    require_admin(request, request.app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    return user_token_parameter(inputs, minimum_length=minimum_length), table_identification(inputs)


def user_token_parameter(inputs: RequestInputs, *, minimum_length: int = 1) -> str:
    """The ``user_token`` parameter: printable, ``minimum_length`` to ``MAX_USER_TOKEN_LENGTH`` characters."""
    user_token = inputs.require("user_token")
    if len(user_token) > MAX_USER_TOKEN_LENGTH or not user_token.isprintable() or user_token != user_token.strip():
        raise BadRequest(
            f"parameter 'user_token' must be 1 to {MAX_USER_TOKEN_LENGTH} printable characters without surrounding spaces"
        )
    if len(user_token) < minimum_length:
        raise BadRequest(
            f"parameter 'user_token' must be at least {minimum_length} characters long (a short token can be "
            "guessed); choose a longer one, or mint one with PUT /UserToken"
        )
    return user_token
