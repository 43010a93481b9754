"""``dbgateway config``: the settings in effect, and where each came from.

Run with the same options, environment and working folder as ``serve``, it
shows what ``serve`` would use: one line a setting with its value and its source
(``default``, ``file PATH``, ``environment VAR``, ``option --flag``). Secrets show
as ``[set]``, never their value; an invalid setting is the same one sentence and
exit status 2 as for ``serve``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import orjson

from gateway.config import SECRET_SETTINGS, LoadedConfig
from gateway.logbook import REDACTED, SecretRedactor

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
