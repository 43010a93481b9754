"""GrantTableAccess (POST /GrantTableAccess/)."""

from __future__ import annotations

from aiohttp import web

from gateway.auth import hash_user_token, require_admin, token_fingerprint
from gateway.errors import BadRequest
from gateway.inputs import find_table, read_inputs, table_identification
from gateway.keys import ADMIN_TOKEN, LOGGER, REGISTRY
from gateway.registry import RegistryState, TableRecord
from gateway.responses import success

MAX_USER_TOKEN_LENGTH = 1024


async def grant_table_access(request: web.Request) -> web.Response:
    """Let the ``user_token`` parameter read one table; granting twice is a success."""
    app = request.app
    require_admin(request, app[ADMIN_TOKEN])
    inputs = await read_inputs(request, body_allowed=False, max_body_bytes=0)
    user_token = inputs.require("user_token")
    if len(user_token) > MAX_USER_TOKEN_LENGTH or not user_token.isprintable() or user_token != user_token.strip():
        raise BadRequest(
            f"parameter 'user_token' must be 1 to {MAX_USER_TOKEN_LENGTH} printable characters without surrounding spaces"
        )
    identification = table_identification(inputs)

    def grant(state: RegistryState) -> tuple[RegistryState, tuple[TableRecord, str]]:
        table = find_table(state, identification)
        token_hash = hash_user_token(state.token_salt, user_token)
        return state.with_grant(token_hash, table), (table, token_hash)

    table, _ = await app[REGISTRY].update(grant)
    app[LOGGER].info(
        "table_access_granted",
        local_table_name=table.local_name,
        granted_token_fingerprint=token_fingerprint(app[REGISTRY].state.token_salt, user_token),
    )
    return success({}, as_array=True)
