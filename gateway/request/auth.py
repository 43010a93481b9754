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

import contextlib
import contextvars
import hmac
from collections.abc import Iterator

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
    if value is not None and not _is_utf8(value):
        raise AccessDenied(f"access denied: the {names[0]} header is not UTF-8 text, so it matches no token")
    return value


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _token_bytes(token: str) -> bytes:
    # surrogateescape gives back the bytes a header carried, UTF-8 or not.
    return token.encode("utf-8", "surrogateescape")


_request_hashes: contextvars.ContextVar[dict[tuple[str, str], str] | None] = contextvars.ContextVar(
    "request_token_hashes", default=None
)


@contextlib.contextmanager
def hashes_kept_for_the_request() -> Iterator[None]:
    """Within the block, each token is hashed once (a request needs its hash to authorise, log and audit).

    The hashes live as long as the request, not longer: no table of tokens outlives it.
    """
    reset = _request_hashes.set({})
    try:
        yield
    finally:
        _request_hashes.reset(reset)


def hash_user_token(salt: str, token: str) -> str:
    """The HMAC-SHA256 of the token under the registry's salt, in hex: what the registry keeps of a token."""
    kept = _request_hashes.get()
    if kept is not None:
        known = kept.get((salt, token))
        if known is not None:
            return known
    digest = hmac.digest(salt.encode(), _token_bytes(token), "sha256").hex()
    if kept is not None:
        kept[(salt, token)] = digest
    return digest


def token_fingerprint(salt: str, token: str) -> str:
    """A prefix of the token's hash: enough to tell tokens apart in logs, useless to authenticate."""
    return hash_user_token(salt, token)[:FINGERPRINT_LENGTH]


def admin_token_matches(expected: str, presented: str | None) -> bool:
    if presented is None:
        return False
    return hmac.compare_digest(expected.encode(), _token_bytes(presented))


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
