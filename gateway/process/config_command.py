"""``dbgateway config``: the settings in effect, and where each came from.

Run with the same options, environment and working folder as ``serve``, it
shows what ``serve`` would use: one line a setting with its value and its source
(``default``, ``file PATH``, ``environment VAR``, ``option --flag``). Secrets show
as ``[set]``, never their value.

It checks the configuration as ``serve`` does before it binds, so it serves as a
configuration check: the settings, and each installed driver built with its
``[drivers.<name>]`` options (a misspelt option, ``allow_function``, stops both
with the same one sentence and exit status 2). What ``serve`` would log as a
warning while starting (an unknown ``DBGATEWAY_*`` variable, options for a driver
that is not installed, an allowed function a built-in rule refuses) is printed on
stderr. What the configuration does not decide is checked by ``serve`` alone:
the data folder, the port, the registry, the audit file.

Its output is meant for pipes: ``dbgateway config | head`` ends quietly, as any
Unix tool does (SIGPIPE), rather than with a ``BrokenPipeError`` traceback.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import attrs
import orjson
import structlog

from gateway.databases.driver_loader import DriverCatalog
from gateway.observability.logbook import REDACTED, SecretRedactor
from gateway.settings.config import SECRET_SETTINGS, LoadedConfig

SET = "[set]"
UNSET = "(unset)"


def shown_value(name: str, value: Any) -> str:
    """A setting's value as TOML would write it; a secret as ``[set]``; ``(unset)`` for none."""
    if value is None:
        return UNSET
    if name in SECRET_SETTINGS:
        return SET
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, dict):
        # Driver options may hold credentials: the log redactor's rules hide them by key name.
        cleaned = SecretRedactor()(None, "", {key: option for key, option in value.items()})
        return orjson.dumps(cleaned, option=orjson.OPT_SORT_KEYS).decode().replace(REDACTED, SET)
    return orjson.dumps(value).decode()


def describe_settings(loaded: LoadedConfig) -> str:
    """Every setting, aligned in three columns: name, value, source."""
    rows = [
        (field.name, shown_value(field.name, getattr(loaded.config, field.name)), loaded.sources[field.name])
        for field in attrs.fields(type(loaded.config))
    ]
    name_width = max(len(name) for name, _, _ in rows)
    value_width = min(max(len(value) for _, value, _ in rows), 32)
    lines = [f"{'setting':<{name_width}}  {'value':<{value_width}}  source"]
    lines += [f"{name:<{name_width}}  {value:<{value_width}}  {source}" for name, value, source in rows]
    return "\n".join(lines)


def run_config_command(loaded: LoadedConfig) -> int:
    """``dbgateway config``: check the drivers' options, print every setting, then the warnings; exit status 0.

    Raises ``ConfigError`` (exit status 2, as ``serve``) for options a driver refuses.
    """
    # A reader that stops early (head, grep -q) ends this process quietly, as it does cat or ls: Python
    # ignores SIGPIPE and would raise BrokenPipeError instead. Never in serve, whose sockets get EPIPE.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    warnings = [*loaded.warnings, *driver_warnings(loaded)]
    print(describe_settings(loaded), flush=True)
    for warning in warnings:
        print(f"dbgateway: warning: {warning}", file=sys.stderr)
    return 0


def driver_warnings(loaded: LoadedConfig) -> list[str]:
    """Build every installed driver with its options as ``serve`` does; what it would log as warnings.

    A driver that refuses its options raises ``ConfigError`` here, as in ``serve``.
    """
    collected: list[str] = []

    def collect(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> Any:
        event = event_dict.pop("event")
        details = " ".join(f"{key}={value}" for key, value in event_dict.items())
        collected.append(f"{event} {details}".strip())
        raise structlog.DropEvent

    DriverCatalog.from_entry_points(loaded.config.drivers, structlog.wrap_logger(None, processors=[collect]))
    return collected
