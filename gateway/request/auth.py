"""Who is asking: the admin token check, user-token hashing and the fingerprints logs show.

User tokens are chosen by the administrator when granting; the registry keeps
only an HMAC of each (keyed by the registry's own salt), so a copy of the file
does not reveal them. Logs carry a short fingerprint, never a token.

aiohttp decodes header values as UTF-8 with ``surrogateescape``: bytes that are
not UTF-8 arrive as lone surrogates. Such a value can match no token (every
token was given as text), so ``header_token`` answers 403 for it; hashing keeps
the raw bytes, so the access log still shows its fingerprint.
"""

from __future__ import annotations

import hmac

from aiohttp import web

from gateway.errors import AccessDenied, TokenRequired

# nginx drops header names with underscores unless told otherwise, so the
# hyphenated spellings are accepted too (header names are case-insensitive).
ADMIN_TOKEN_HEADERS = ("admin_token", "admin-token")
USER_TOKEN_HEADERS = ("user_token", "user-token")

FINGERPRINT_LENGTH = 12


def presented_token(request: web.Request, names: tuple[str, ...]) -> str | None:
    """The first non-empty header among ``names``, or None, as aiohttp decoded it (for the access log)."""
    for name in names:
        value = request.headers.get(name, "").strip()
        if value:
            return value
    return None


def header_token(request: web.Request, names: tuple[str, ...]) -> str | None:
    """The first non-empty header among ``names``, or None; 403 when its bytes are not UTF-8."""
    value = presented_token(request, names)
    _utf8_or_denied(value, names)
    return value


def _utf8_or_denied(value: str | None, names: tuple[str, ...]) -> None:
    if value is not None and not _is_utf8(value):
        raise AccessDenied(f"access denied: the {names[0]} header is not UTF-8 text, so it matches no token")


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _token_bytes(token: str) -> bytes:
    # surrogateescape gives back the bytes a header carried, UTF-8 or not.
    return token.encode("utf-8", "surrogateescape")


def hash_user_token(salt: str, token: str) -> str:
    """The HMAC-SHA256 of the token under the registry's salt, in hex: what the registry keeps of a token.

    A request's own token is hashed once, into its ``RequestContext`` (``gateway.observability.observation``).
    """
    return hmac.digest(salt.encode(), _token_bytes(token), "sha256").hex()


def token_fingerprint(salt: str, token: str) -> str:
    """A prefix of the token's hash: enough to tell tokens apart in logs, useless to authenticate."""
    return hash_user_token(salt, token)[:FINGERPRINT_LENGTH]


def admin_token_matches(expected: str, presented: str | None) -> bool:
    if presented is None:
        return False
    return hmac.compare_digest(expected.encode(), _token_bytes(presented))


def require_admin(request: web.Request, expected: str) -> None:
    """Raise 403 unless the request carries the admin token."""
    check_admin_token(presented_token(request, ADMIN_TOKEN_HEADERS), expected)


def check_admin_token(presented: str | None, expected: str) -> None:
    """Raise 403 unless ``presented`` (the header as ``presented_token`` read it) is the admin token."""
    _utf8_or_denied(presented, ADMIN_TOKEN_HEADERS)
    if not admin_token_matches(expected, presented):
        reason = "is missing" if presented is None else "is wrong"
        raise AccessDenied(f"access denied: the admin_token header {reason}")


def checked_user_token(presented: str | None) -> str:
    """The user token ``presented`` (as ``presented_token`` read it); 401 when there is none, 403 when not UTF-8."""
    if presented is None:
        raise TokenRequired("this operation needs a user_token header")
    _utf8_or_denied(presented, USER_TOKEN_HEADERS)
    return presented
