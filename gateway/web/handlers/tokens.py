"""Minting user tokens (PUT /UserToken): the gateway makes a random token and keeps only its hash."""

from __future__ import annotations

import math
import secrets

from aiohttp import web

from gateway.observability.audit import AdminAction
from gateway.request.auth import hash_user_token, token_fingerprint
from gateway.web.keys import AUDITOR, CONFIG, REGISTRY
from gateway.web.openapi_schemas import Component, one_element_array, success_object
from gateway.web.operations import ACCESS_DENIED, REGISTRY_WRITE, Access, Operation, json_answer
from gateway.registry import RegistryState
from gateway.request.responses import success

MINTED_TOKEN_BYTES = 32
"""Random bytes in a minted token: 256 bits, 43 URL-safe characters (more if ``min_user_token_length`` asks)."""


async def mint_user_token(request: web.Request, inputs: None) -> web.Response:
    """Answer a new random user token once; the registry remembers its hash as minted."""
    app = request.app
    # URL-safe base64 spells 3 bytes in 4 characters.
    size = max(MINTED_TOKEN_BYTES, math.ceil(app[CONFIG].min_user_token_length * 3 / 4))
    token = secrets.token_urlsafe(size)

    def remember(state: RegistryState) -> tuple[RegistryState, str]:
        return state.with_minted_token(hash_user_token(state.token_salt, token)), state.token_salt

    salt = await app[REGISTRY].update(remember)
    app[AUDITOR].admin_change(AdminAction.TOKEN_MINTED, minted_token_fingerprint=token_fingerprint(salt, token))
    return success({"user_token": token}, as_array=True)


OPERATIONS = (
    Operation(
        "MintUserToken",
        ("PUT",),
        "/UserToken",
        mint_user_token,
        Access.ADMIN,
        "Mint a new random user token; the registry keeps only its hash",
        answers={
            200: json_answer(
                "The token, shown once",
                Component(
                    "UserTokenMinted",
                    one_element_array(
                        success_object(
                            user_token={
                                "type": "string",
                                "minLength": 43,
                                "pattern": "^[A-Za-z0-9_-]+$",
                                "description": "The new token (256 random bits, URL-safe); shown only this once.",
                            }
                        )
                    ),
                ),
            )
        },
        errors=(*REGISTRY_WRITE, ACCESS_DENIED),
    ),
)
