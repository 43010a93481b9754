"""Reading setting values strictly: a TOML value must have the setting's type; a variable's text is parsed.

A file's values keep their type, so ``statement_timeout = true`` or ``row_limit = "100"``
is refused rather than coerced to 1 s or 100. Environment variables are text: ``parse_bool``
and ``gateway.settings.config`` read them as the setting's type first. Error messages say what kind
of value was found, never the value itself (it may be a secret).
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import attrs
import cattrs



def _kind(value: Any) -> str:
    """What a wrong value is, without repeating it (it may be a secret)."""
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    names = {str: "a string", int: "a whole number", float: "a number", list: "a list", dict: "a table"}
    return names.get(type(value), f"a {type(value).__name__}")


# TOML values keep their type: `statement_timeout = true` or `row_limit = "100"` is refused, not coerced.
def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected a whole number, got {_kind(value)}")
    return value


def _strict_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {_kind(value)}")
    return float(value)


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {_kind(value)}")
    return value


def _strict_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {_kind(value)}")
    return value


def _strict_path(value: Any, _: type) -> Path:
    if not isinstance(value, str | Path):
        raise TypeError(f"expected a path (a string), got {_kind(value)}")
    return Path(value)


def strict_converter() -> cattrs.Converter:
    """A converter that takes each value as the type it has, refusing unknown keys."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(bool, _strict_bool)
    converter.register_structure_hook(str, _strict_str)
    converter.register_structure_hook(Path, _strict_path)
    return converter


def parse_bool(text: str) -> bool:
    """A yes/no word from an environment variable (any case)."""
    word = text.strip().lower()
    if word in {"1", "true", "yes", "on"}:
        return True
    if word in {"0", "false", "no", "off"}:
        return False
    raise ValueError("expected true or false (or 1/0, yes/no, on/off)")


def from_text(kind: Any, text: str) -> Any:
    """An environment variable's text as a value of type ``kind`` (variables are text; files are typed)."""
    if kind is bool:
        return parse_bool(text)
    try:
        if kind is int:
            return int(text.strip())
        if kind is float:
            return float(text.strip())
    except ValueError:
        raise ValueError(f"expected {'a whole number' if kind is int else 'a number'}") from None
    return Path(text) if kind is Path else text


def field_types(cls: type) -> dict[str, Any]:
    """Each attribute's type of the attrs class ``cls``, ``X | None`` read as ``X``."""
    found: dict[str, Any] = {}
    for field in attrs.fields(attrs.resolve_types(cls)):
        kind: Any = field.type
        arguments = [argument for argument in getattr(kind, "__args__", ()) if argument is not type(None)]
        found[field.name] = arguments[0] if isinstance(kind, types.UnionType) and arguments else kind
    return found
