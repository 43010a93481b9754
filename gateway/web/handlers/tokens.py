"""Minting user tokens (PUT /UserToken): the gateway makes a random token and keeps only its hash.

Optionally the new token is granted one table at once, with GrantTableAccess's narrowing inputs
(``columns``, ``row_filter``, ``expires_at``; ``gateway.web.grant_limits``): one change, so a token is
never minted without the grant it was minted for.
"""

from __future__ import annotations

import math
import secrets

import attrs
from aiohttp import web

from gateway.errors import BadRequest
from gateway.observability.audit import AdminAction
from gateway.registry import NO_LIMITS, RegistryState, TableAddress, TableRecord, utc_now
from gateway.request.auth import hash_user_token, token_fingerprint
from gateway.request.responses import success
from gateway.web.grant_limits import GRANT_SHOWN, LimitInputs, checked_limits, described_limits, limit_inputs
from gateway.web.inputs import find_table
from gateway.web.keys import AUDITOR, CONFIG, POOLS, REGISTRY
from gateway.web.named_inputs import table_by_name_or_path
from gateway.web.openapi_schemas import SUCCESS_STATUS, Component, closed_object, one_element_array
from gateway.web.operations import (
    ACCESS_DENIED,
    BAD_INPUT,
    REGISTRY_WRITE,
    TABLE_NOT_FOUND,
    Access,
    Operation,
    json_answer,
)

MINTED_TOKEN_BYTES = 32
"""Random bytes in a minted token: 256 bits, 43 URL-safe characters (more if ``min_user_token_length`` asks)."""


@attrs.frozen(kw_only=True)
class MintInputs:
    """MintUserToken's inputs, all optional: a table to grant the new token at once, and how narrowly."""

    identification: TableAddress | str | None = table_by_name_or_path()
    """The table to grant (None: the token is minted without a grant)."""
    limits: LimitInputs = limit_inputs()
    """What narrows that grant; only with a table."""


async def mint_user_token(request: web.Request, inputs: MintInputs) -> web.Response:
    """Answer a new random user token once; the registry remembers its hash as minted (and its grant, if asked)."""
    app = request.app
    # URL-safe base64 spells 3 bytes in 4 characters.
    size = max(MINTED_TOKEN_BYTES, math.ceil(app[CONFIG].min_user_token_length * 3 / 4))
    token = secrets.token_urlsafe(size)
    identification, limits = inputs.identification, NO_LIMITS
    if identification is None and inputs.limits != LimitInputs():
        raise BadRequest("columns, row_filter and expires_at narrow a grant: name the table to grant with "
                         "local_table_name or database, folder and table")
    if identification is not None:
        state = app[REGISTRY].state
        asked = find_table(state, identification)
        limits = await checked_limits(inputs.limits, asked, app[POOLS].get(state.database(asked.address.database)))

    def remember(state: RegistryState) -> tuple[RegistryState, tuple[str, TableRecord | None]]:
        token_hash = hash_user_token(state.token_salt, token)
        state = state.with_minted_token(token_hash)
        if identification is None:
            return state, (state.token_salt, None)
        table = find_table(state, identification)
        return state.with_grant(token_hash, table, limits), (state.token_salt, table)

    salt, table = await app[REGISTRY].update(remember)
    app[AUDITOR].admin_change(AdminAction.TOKEN_MINTED, minted_token_fingerprint=token_fingerprint(salt, token))
    if table is None:
        return success({"user_token": token}, as_array=True)
    shown = described_limits(limits, utc_now())
    app[AUDITOR].admin_change(AdminAction.TABLE_ACCESS_GRANTED, local_table_name=table.local_name,
                              granted_token_fingerprint=token_fingerprint(salt, token), **shown)
    return success({"user_token": token, "grant": {"local_table_name": table.local_name, **shown}}, as_array=True)


OPERATIONS = (
    Operation(
        "MintUserToken",
        ("PUT",),
        "/UserToken",
        mint_user_token,
        Access.ADMIN,
        "Mint a new random user token; the registry keeps only its hash",
        description="Optionally grants the new token one table at once (local_table_name or the full path), "
        "narrowed as GrantTableAccess narrows (columns, row_filter, expires_at).",
        inputs=MintInputs,
        body=True,
        answers={
            200: json_answer(
                "The token, shown once",
                Component(
                    "UserTokenMinted",
                    one_element_array(
                        closed_object(
                            {
                                "status": SUCCESS_STATUS,
                                "user_token": {
                                    "type": "string",
                                    "minLength": 43,
                                    "pattern": "^[A-Za-z0-9_-]+$",
                                    "description": "The new token (256 random bits, URL-safe); shown only this once.",
                                },
                                "grant": GRANT_SHOWN,
                            },
                            optional=("grant",),
                        )
                    ),
                ),
            )
        },
        errors=(*REGISTRY_WRITE, BAD_INPUT, ACCESS_DENIED, TABLE_NOT_FOUND),
    ),
)
