"""The start-up banner: what this gateway is, where it listens and what deserves a look, said once.

It is the ``gateway_listening`` log entry (one JSON line where logs are JSON), and, when
stderr shows logs for people, also a short block of text followed by every warning
logged while starting (they scrolled past above it). It never shows the admin token,
only where it is.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from aiohttp import web

from gateway import __version__
from gateway.observability.log_ring import LogLevel, LogQuery
from gateway.observability.logbook import wants_console
from gateway.settings.admin_token import ADMIN_TOKEN_FILE
from gateway.settings.config import LoadedConfig
from gateway.web.keys import DRIVERS, LOG_RING, LOGGER

_NOT_SHOWN = {"event", "level", "timestamp", "pid", "instance"}


def listening_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def admin_token_whereabouts(loaded: LoadedConfig) -> str:
    """Where the admin token is, as a person would look for it; never the token."""
    config = loaded.config
    if config.admin_token is not None:
        return f"the admin_token setting ({loaded.sources['admin_token']})"
    return f"the file {(config.data_dir / ADMIN_TOKEN_FILE).resolve()}"


def announce(app: web.Application, loaded: LoadedConfig, stream: TextIO | None = None) -> None:
    """Log ``gateway_listening`` with the banner's facts; print the banner too when logs are for people."""
    config = loaded.config
    url = listening_url(config.listen_host, config.listen_port)
    warnings = [orjson.loads(line) for _, line in app[LOG_RING].read(LogQuery(minimum=LogLevel.WARNING))]
    facts: dict[str, Any] = {
        "version": __version__,
        "url": url,
        "workers": config.workers,
        "registry": config.registry_location.display,
        "drivers": app[DRIVERS].names,
        "admin_access": admin_token_whereabouts(loaded),
        "warnings": [entry.get("event") for entry in warnings],
    }
    stream = stream if stream is not None else sys.stderr
    if wants_console(config.log_format, stream):
        _print_banner(stream, facts, warnings)
    app[LOGGER].info("gateway_listening", **facts)


def _print_banner(stream: TextIO, facts: dict[str, Any], warnings: list[dict[str, Any]]) -> None:
    workers = facts["workers"]
    lines = [
        "",
        f"dbgateway {facts['version']}",
        f"  listening on   {facts['url']}  ({workers} worker{'s' if workers != 1 else ''})",
        f"  registry       {facts['registry']}",
        f"  drivers        {', '.join(facts['drivers']) or 'none'}",
        f"  admin token    in {facts['admin_access']}",
        "  settings       `dbgateway config` shows each one and where it came from",
    ]
    if warnings:
        lines.append(f"  {len(warnings)} warning{'s' if len(warnings) != 1 else ''}:")
        for entry in warnings:
            details = " ".join(f"{key}={value}" for key, value in entry.items() if key not in _NOT_SHOWN)
            lines.append(f"  ! {entry.get('event')}  {details}".rstrip())
    lines.append("")
    try:
        stream.write("\n".join(lines) + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass  # a closed stderr must not stop the start
