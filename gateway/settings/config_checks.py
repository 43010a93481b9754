"""The checks of single settings' values: attrs validators and converters of ``GatewayConfig``'s fields.

Each raises ``ValueError`` naming the setting and what it must be; a value that
may be a secret (``admin_token``, ``secret_key``, ``registry_url``) is never
repeated in the message. ``gateway.settings.config`` turns the error into the one
sentence ``ConfigError`` says.
"""

from __future__ import annotations

from typing import Any

import attrs
from cryptography.fernet import Fernet

from gateway.registry.location import RegistryLocation
from gateway.registry.postgres_follower import MIN_MAX_STALENESS_SECONDS

MIN_ADMIN_TOKEN_LENGTH = 16
"""Shortest admin token accepted (configured or read from the file)."""

MIN_LOG_BUFFER_BYTES = 64 * 1024
"""The smallest ``log_buffer_bytes`` a configuration may set."""


def positive(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if value <= 0:
        raise ValueError(f"{attribute.name} must be greater than 0, got {value}")


def port_number(instance: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if not 1 <= value <= 65535:
        raise ValueError(f"{attribute.name} must be a port number from 1 to 65535, got {value}")


def fernet_key(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is None:
        return
    try:
        Fernet(value.strip())
    except (ValueError, TypeError):
        # The value itself is a secret: never repeat it.
        raise ValueError(
            f"{attribute.name} must be a Fernet key (32 bytes in URL-safe base64, 44 characters);"
            " make one with `dbgateway generate-key`"
        ) from None


def registry_url(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None:
        RegistryLocation.parse(value)  # its ValueError never repeats the value: it may hold a password


def staleness(instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if value != 0 and value < MIN_MAX_STALENESS_SECONDS:
        raise ValueError(
            f"{attribute.name} must be 0 (no limit) or at least {MIN_MAX_STALENESS_SECONDS:g} seconds, got {value:g}"
        )


def admin_token(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and len(value.strip()) < MIN_ADMIN_TOKEN_LENGTH:
        raise ValueError(f"admin_token must be at least {MIN_ADMIN_TOKEN_LENGTH} characters long")


def lowercase(value: Any) -> Any:
    """Names like ``log_level`` are read case-insensitively; anything but text is left for the validator."""
    return value.strip().lower() if isinstance(value, str) else value


def one_of(*choices: str) -> Any:
    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value not in choices:
            raise ValueError(f"{attribute.name} must be one of {', '.join(choices)}, not {value!r}")

    return check
