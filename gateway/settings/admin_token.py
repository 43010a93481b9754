"""Where the admin token comes from: configuration, or a file generated on first start."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import structlog

from gateway.settings.config import ConfigError, GatewayConfig
from gateway.settings.config_checks import MIN_ADMIN_TOKEN_LENGTH

ADMIN_TOKEN_FILE = "admin_token"


def resolve_admin_token(config: GatewayConfig, logger: structlog.typing.FilteringBoundLogger) -> str:
    """The configured token, else the one in ``<data_dir>/admin_token``, else a new one written there (0600)."""
    if config.admin_token is not None:
        token = config.admin_token.strip()
        if len(token) < MIN_ADMIN_TOKEN_LENGTH:
            raise ConfigError(f"setting admin_token must be at least {MIN_ADMIN_TOKEN_LENGTH} characters long")
        return token
    path = config.data_dir / ADMIN_TOKEN_FILE
    if path.exists():
        token = _read_token(path)
        logger.info("admin_token_loaded", path=str(path))
        return token
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    logger.warning("admin_token_generated", path=str(path.resolve()), hint="read the admin token from this file")
    return token


def _read_token(path: Path) -> str:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise ConfigError(f"cannot read the admin token file {path}: {error.strerror}") from None
    if len(token) < MIN_ADMIN_TOKEN_LENGTH:
        raise ConfigError(f"the admin token file {path} holds no token of at least {MIN_ADMIN_TOKEN_LENGTH} characters")
    return token
