"""Who is asking: the admin token check, user-token hashing and the fingerprints logs show.

User tokens are chosen by the administrator when granting; the registry keeps
only an HMAC of each (keyed by the registry's own salt), so a copy of the file
does not reveal them. Logs carry a short fingerprint, never a token.
"""

from __future__ import annotations

import hashlib
import hmac

from aiohttp import web

from gateway.errors import AccessDenied, TokenRequired

# nginx drops header names with underscores unless told otherwise, so the
# hyphenated spellings are accepted too (header names are case-insensitive).
ADMIN_TOKEN_HEADERS = ("admin_token", "admin-token")
USER_TOKEN_HEADERS = ("user_token", "user-token")

FINGERPRINT_LENGTH = 12


def header_token(request: web.Request, names: tuple[str, ...]) -> str | None:
    """The first non-empty header among ``names``, or None."""
    for name in names:
        value = request.headers.get(name, "").strip()
        if value:
            return value
    return None


def hash_user_token(salt: str, token: str) -> str:
    return hmac.new(salt.encode(), token.encode(), hashlib.sha256).hexdigest()


def token_fingerprint(salt: str, token: str) -> str:
    """A prefix of the token's hash: enough to tell tokens apart in logs, useless to authenticate."""
    return hash_user_token(salt, token)[:FINGERPRINT_LENGTH]


def admin_token_matches(expected: str, presented: str | None) -> bool:
    if presented is None:
        return False
    return hmac.compare_digest(expected.encode(), presented.encode())


def require_admin(request: web.Request, expected: str) -> None:
    """Raise 403 unless the request carries the admin token."""
    presented = header_token(request, ADMIN_TOKEN_HEADERS)
    if not admin_token_matches(expected, presented):
        reason = "is missing" if presented is None else "is wrong"
        raise AccessDenied(f"access denied: the admin_token header {reason}")


def require_user_token(request: web.Request) -> str:
    """The request's user token; 401 when there is none."""
    token = header_token(request, USER_TOKEN_HEADERS)
    if token is None:
        raise TokenRequired("this operation needs a user_token header")
    return token
