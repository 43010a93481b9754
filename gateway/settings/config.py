"""Operator settings: embedded defaults, then a TOML file, then ``DBGATEWAY_*`` variables.

Every setting is documented in ``config/gateway.example.toml``. A setting that
does not parse stops start-up with ``ConfigError`` naming it.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs

from gateway.registry.location import RegistryKind, RegistryLocation
from gateway.settings import config_checks as checks
from gateway.settings.config_types import field_types, from_text, strict_converter

ENV_PREFIX = "DBGATEWAY_"

LOG_FORMATS = ("auto", "json", "console")
"""``log_format``: ``auto`` renders for people when stderr is a terminal, JSON lines otherwise."""

NOT_SETTINGS = frozenset({"CONFIG", "TEST_DSN", "BENCH_DSN"})
"""``DBGATEWAY_*`` variables that are no setting: the config file, the tests' and the benchmark's databases."""

MAX_USER_TOKEN_LENGTH = 1024
"""Longest user token a grant takes (and so the most ``min_user_token_length`` may ask for)."""

POSTGRESQL_NEEDS_KEY = (
    "a registry in PostgreSQL needs secret_key (DBGATEWAY_SECRET_KEY), so that database passwords never reach"
    " that database, its logs or its backups in clear; make one with `dbgateway generate-key`"
)


class ConfigError(Exception):
    """A setting is missing, unknown or malformed; the message names it."""


@attrs.frozen(kw_only=True)
class GatewayConfig:
    """Everything an operator can change; defaults are the contract's."""

    listen_host: str = "127.0.0.1"
    """Address the HTTP server binds."""
    listen_port: int = attrs.field(default=8080, validator=checks.port_number)
    """Port the HTTP server binds."""
    workers: int = attrs.field(default=1, validator=[checks.positive, attrs.validators.le(64)])
    """Serving processes sharing the port (SO_REUSEPORT); each has its own pools, log buffer and metrics."""
    data_dir: Path = Path("./data")
    """Folder of the registry file and the generated admin token."""
    registry_file: Path | None = None
    """Registry JSON file; ``<data_dir>/registry.json`` when unset (and ``registry_url`` is unset)."""
    registry_url: str | None = attrs.field(default=None, repr=False, validator=checks.registry_url)
    """Where the registry is: ``file:PATH``, or ``postgresql://...`` for one shared by replicas; unset: the file."""
    registry_max_staleness: float = attrs.field(default=60.0, validator=checks.staleness)
    """Seconds a replica on a PostgreSQL registry serves from the state it holds without confirming it; 0: no limit."""
    admin_token: str | None = attrs.field(default=None, repr=False, validator=checks.admin_token)
    """The admin token; generated into ``<data_dir>/admin_token`` when unset."""
    secret_key: str | None = attrs.field(default=None, repr=False, validator=checks.fernet_key)
    """Fernet key that encrypts database passwords in the registry file; passwords are stored in clear when unset."""
    row_limit: int = attrs.field(default=100_000, validator=checks.positive)
    """Rows a GetData answer carries at most."""
    statement_timeout: float = attrs.field(default=30.0, validator=checks.positive)
    """Seconds a GetData query may run."""
    acquire_timeout: float = attrs.field(default=5.0, validator=checks.positive)
    """Seconds a request waits for a free database connection."""
    client_stall_timeout: float = attrs.field(default=10.0, validator=checks.positive)
    """Seconds a client may take to accept each piece of a streamed GetData answer before the stream is cut."""
    shutdown_timeout: float = attrs.field(default=10.0, validator=attrs.validators.ge(1.0))
    """Seconds a serving process takes at most to exit after a stop signal; running requests get 80 % of it."""
    pool_min_size: int = attrs.field(default=1, validator=attrs.validators.ge(0))
    """Connections a database pool keeps open once used."""
    pool_max_size: int = attrs.field(default=10, validator=checks.positive)
    """Connections a database pool opens at most."""
    token_query_limit: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    """GetData queries one token may run on one database at once; 0: half of ``pool_max_size``, at least 1."""
    continuation_limit: int = attrs.field(default=100, validator=attrs.validators.ge(0))
    """Results held open past ``row_limit`` for their next pages, at most, per serving process; 0: no continuations."""
    continuation_expiry_seconds: float = attrs.field(default=120.0, validator=checks.positive)
    """Seconds a held result may wait for its next page before it is closed (its token then answers 410)."""
    fetch_batch_size: int = attrs.field(default=5000, validator=checks.positive)
    """A driver setting (``PoolLimits.batch_size``): rows fetched per round trip while a GetData result streams,
    at most; a driver may fetch fewer when rows are large."""
    max_row_bytes: int = attrs.field(default=64 * 1024 * 1024, validator=checks.positive)
    """A driver setting (``PoolLimits.max_row_bytes``): largest GetData result row, by its size in the database;
    the driver answers a larger one ``ResultTooLarge`` (422 ``result_too_large``)."""
    log_buffer_size: int = attrs.field(default=10_000, validator=checks.positive)
    """Log entries the Logs endpoint can return (a ring buffer)."""
    log_buffer_bytes: int = attrs.field(
        default=8 * 1024 * 1024, validator=attrs.validators.ge(checks.MIN_LOG_BUFFER_BYTES)
    )
    """Bytes of log entries the ring buffer keeps at most, whatever their number
    (``gateway.observability.log_ring``)."""
    log_level: str = attrs.field(
        default="info", converter=checks.lowercase, validator=checks.one_of("debug", "info", "warning", "error")
    )
    """Lowest level written to stderr and kept in the buffer (any case: ``INFO`` is ``info``)."""
    log_format: str = attrs.field(default="auto", converter=checks.lowercase, validator=checks.one_of(*LOG_FORMATS))
    """How stderr shows log entries: ``console`` (for people), ``json`` (one object a line), ``auto`` (console on a terminal)."""
    instance: str | None = None
    """Name every log entry carries as ``instance``; the host name when unset."""
    audit_query_text: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    """Whether GetData's ``audit`` entries carry the query text (the normalised query's fingerprint always)."""
    audit_file: Path | None = None
    """File the ``audit`` entries are appended to as JSON lines, besides stderr and the buffer; none when unset."""
    audit_file_max_bytes: int = attrs.field(default=100 * 1024 * 1024, validator=attrs.validators.ge(0))
    """Size past which the audit file is renamed to ``<audit_file>.1`` (replacing it) and a new one begun; 0: never."""
    max_body_bytes: int = attrs.field(default=1024 * 1024, validator=checks.positive)
    """Largest request body accepted; larger gets 413."""
    max_query_bytes: int = attrs.field(default=100 * 1024, validator=checks.positive)
    """Largest GetData query text accepted; larger gets 413."""
    min_user_token_length: int = attrs.field(
        default=16, validator=[attrs.validators.ge(1), attrs.validators.le(MAX_USER_TOKEN_LENGTH)]
    )
    """Fewest characters a user token needs to be granted (shorter: 400); minted tokens are at least this long."""
    metrics_require_admin: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    """Whether ``GET /metrics`` needs the admin token (403 without it); its labels name registered databases."""
    drivers: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    """Per-driver options, the ``[drivers.<base_type>]`` tables."""

    @property
    def registry_location(self) -> RegistryLocation:
        """``registry_url`` if set, else the file ``registry_file`` or ``<data_dir>/registry.json``."""
        if self.registry_url is not None:
            return RegistryLocation.parse(self.registry_url)
        return RegistryLocation.file(self.registry_file or self.data_dir / "registry.json")

    @property
    def queries_per_token(self) -> int:
        """``token_query_limit``, or its default when 0: half of ``pool_max_size``, at least 1."""
        return self.token_query_limit or max(1, self.pool_max_size // 2)

    @property
    def registry_path(self) -> Path:
        """The registry file; only for a file registry."""
        location = self.registry_location
        if location.path is None:
            raise ValueError("the registry is in a PostgreSQL database, not in a file")
        return location.path

    def __attrs_post_init__(self) -> None:
        if self.pool_min_size > self.pool_max_size:
            raise ValueError("pool_min_size must not exceed pool_max_size")
        if self.registry_location.kind is RegistryKind.POSTGRESQL and self.secret_key is None:
            raise ValueError(POSTGRESQL_NEEDS_KEY)
        if self.registry_url is not None and self.registry_file is not None:
            location = self.registry_location
            if location.kind is RegistryKind.POSTGRESQL or location.path != self.registry_file:
                raise ValueError(
                    "registry_file and registry_url name different registries; set only one of them"
                    " (registry_url = file:PATH replaces registry_file)"
                )


SECRET_SETTINGS = frozenset({"admin_token", "secret_key", "registry_url"})
"""Settings whose values are never shown (``registry_url`` may hold a password)."""

_converter = strict_converter()


_FIELD_TYPES = field_types(GatewayConfig)


@attrs.frozen
class LoadedConfig:
    """A config with where each setting came from, and what was noticed on the way."""

    config: GatewayConfig
    """The settings in effect."""
    sources: dict[str, str]
    """Setting name to where its value came from: ``default``, ``file PATH``, ``environment VAR``, ``option --flag``."""
    warnings: list[str]
    """Sentences worth an operator's attention that do not stop start-up (unknown ``DBGATEWAY_*`` variables)."""


OPTION_FLAGS = {
    "listen_host": "--host",
    "listen_port": "--port",
    "data_dir": "--data-dir",
    "registry_url": "--registry-url",
    "log_level": "--log-level",
    "workers": "--workers",
}
"""Command-line options of ``serve`` and ``config``, by the setting they set."""


def _settings_from_environment(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """(settings, their variables, warnings) from the ``DBGATEWAY_*`` variables."""
    known = set(_FIELD_TYPES) - {"drivers"}
    settings: dict[str, Any] = {}
    variables: dict[str, str] = {}
    warnings: list[str] = []
    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or key[len(ENV_PREFIX) :] in NOT_SETTINGS:
            continue
        name = key[len(ENV_PREFIX) :].lower()
        if name not in known:
            # Not ours to refuse (another tool may share the prefix), but a misspelt setting must not pass unseen.
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {ENV_PREFIX}{close[0].upper()}?)" if close else ""
            warnings.append(f"environment variable {key} is no setting and is ignored{hint}")
            continue
        try:
            settings[name] = from_text(_FIELD_TYPES[name], value)
        except ValueError as error:
            raise ConfigError(f"setting {name} ({key}) is invalid: {error}") from None
        variables[name] = key
    return settings, variables, sorted(warnings)


def load_config(
    config_file: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> GatewayConfig:
    """Merge defaults, the TOML file, ``DBGATEWAY_*`` variables and explicit overrides, in that order."""
    return load_settings(config_file, environ=environ, overrides=overrides).config


def load_settings(
    config_file: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> LoadedConfig:
    """``load_config``, also telling where each setting came from."""
    environ = os.environ if environ is None else environ
    settings: dict[str, Any] = {}
    sources = dict.fromkeys(_FIELD_TYPES, "default")
    if config_file is None and environ.get(ENV_PREFIX + "CONFIG"):
        config_file = Path(environ[ENV_PREFIX + "CONFIG"])
    if config_file is not None:
        try:
            from_file = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except OSError as error:
            raise ConfigError(f"cannot read config file {config_file}: {error.strerror}") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"config file {config_file} is not valid TOML: {error}") from None
        settings.update(from_file)
        sources.update(dict.fromkeys((name for name in from_file if name in sources), f"file {config_file}"))
    from_environment, variables, warnings = _settings_from_environment(environ)
    settings.update(from_environment)
    sources.update({name: f"environment {variable}" for name, variable in variables.items()})
    given = {key: value for key, value in (overrides or {}).items() if value is not None}
    settings.update(given)
    sources.update({name: f"option {OPTION_FLAGS.get(name, name)}" for name in given})
    return LoadedConfig(structure_config(settings), sources, warnings)

def structure_config(settings: Mapping[str, Any]) -> GatewayConfig:
    """Build a config from plain values, naming the first setting that is wrong."""
    try:
        return _converter.structure(dict(settings), GatewayConfig)
    except cattrs.ClassValidationError as group:
        raise ConfigError(_describe_config_error(group)) from None
    except (ValueError, TypeError) as error:
        raise ConfigError(f"invalid configuration: {error}") from None


def _describe_config_error(group: cattrs.ClassValidationError) -> str:
    for error in group.exceptions:
        notes = getattr(error, "__notes__", [])
        where = notes[0].removeprefix("Structuring class GatewayConfig @ attribute ") if notes else ""
        if isinstance(error, cattrs.ForbiddenExtraKeysError):
            return f"unknown setting(s): {', '.join(sorted(error.extra_fields))}"
        if where:
            return f"setting {where!s} is invalid: {error}"
        return f"invalid configuration: {error}"
    return f"invalid configuration: {group}"
