"""Minting user tokens (PUT /UserToken): the gateway makes a random token and keeps only its hash."""

from __future__ import annotations

import math
import secrets

from aiohttp import web

from gateway.audit import AdminAction
from gateway.auth import hash_user_token, require_admin, token_fingerprint
from gateway.keys import ADMIN_TOKEN, AUDITOR, CONFIG, REGISTRY
from gateway.registry import RegistryState
from gateway.responses import success

MINTED_TOKEN_BYTES = 32
"""Random bytes in a minted token: 256 bits, 43 URL-safe characters (more if ``min_user_token_length`` asks)."""


async def mint_user_token(request: web.Request) -> web.Response:
    """Answer a new random user token once; the registry remembers its hash as minted."""
    app = request.app
    require_admin(request, app[ADMIN_TOKEN])
    # URL-safe base64 spells 3 bytes in 4 characters.
    size = max(MINTED_TOKEN_BYTES, math.ceil(app[CONFIG].min_user_token_length * 3 / 4))
    token = secrets.token_urlsafe(size)

    def remember(state: RegistryState) -> tuple[RegistryState, str]:
        return state.with_minted_token(hash_user_token(state.token_salt, token)), state.token_salt

    salt = await app[REGISTRY].update(remember)
    app[AUDITOR].admin_change(AdminAction.TOKEN_MINTED, minted_token_fingerprint=token_fingerprint(salt, token))
    return success({"user_token": token}, as_array=True)
