"""How large a literal is once the server has read it: its printed size, not its written one.

A literal is measured as PostgreSQL prints and stores it. ``1e9999`` is six
characters in the query and ten thousand digits as numeric text;
``'[1e99999]'::jsonb`` prints a hundred thousand characters; jsonb adds a
space after every ``,`` and ``:``; an array quotes and escapes its elements.
``printed_size`` computes these from the literal's text for the types whose
printed form can outgrow it, and bounds the rest by their type.
"""

from __future__ import annotations

import decimal
import json
import re
from collections.abc import Iterator

NUMERIC_MAX_INTEGER_DIGITS = 131072
"""Digits before the decimal point a numeric may have (PostgreSQL's ``NUMERIC_MAX_DISPLAY_SCALE`` aside)."""
NUMERIC_MAX_SCALE = 16383
"""Digits after the decimal point."""
NUMERIC_MAX_PRINTED = 1 + NUMERIC_MAX_INTEGER_DIGITS + 1 + NUMERIC_MAX_SCALE
"""The longest numeric text: sign, digits, point, scale."""

_DECIMAL_CONTEXT = decimal.Context(prec=50, Emax=10**9, Emin=-(10**9))


_NUMBER_SHAPE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def number_shaped(text: str) -> bool:
    """Whether ``text`` (spaces around it aside) is a decimal number: the guard cache keys such a parameter
    value by its printed size, and every other one by its length (``cache.parameter_signature``)."""
    return _NUMBER_SHAPE.fullmatch(text.strip()) is not None


def numeric_printed(text: str) -> int:
    """Characters ``numeric_out`` prints for a numeric written as ``text`` (``1e9999`` -> 10000)."""
    try:
        value = decimal.Decimal(text.strip(), context=_DECIMAL_CONTEXT) if text.strip().lower() not in (
            "nan", "infinity", "-infinity", "+infinity", "inf", "-inf", "+inf") else None
    except (decimal.InvalidOperation, ValueError):
        return len(text)
    if value is None:
        return 9
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        return 9
    scale = max(0, -exponent)
    if any(digits):
        integer_digits = max(1, value.adjusted() + 1)
    else:
        integer_digits = 1
    integer_digits = min(integer_digits, NUMERIC_MAX_INTEGER_DIGITS)
    scale = min(scale, NUMERIC_MAX_SCALE)
    negative = sign == 1 and any(digits)
    return int(negative) + integer_digits + (1 + scale if scale else 0)


def _escaped_json_string(value: str) -> int:
    """Bytes of ``escape_json``'s output for a string (quotes included)."""
    size = 2
    for character in value:
        if character in '"\\\b\f\n\r\t':
            size += 2
        elif ord(character) < 0x20:
            size += 6
        else:
            size += len(character.encode("utf-8"))
    return size


class _Number(str):
    """A JSON number's text, kept as written."""


def jsonb_printed(text: str) -> int:
    """Characters ``jsonb_out`` prints for a jsonb literal (numbers at their printed size, ", " and ": ")."""
    try:
        value = json.loads(text, parse_float=_Number, parse_int=_Number, parse_constant=_Number)
    except (ValueError, RecursionError):
        return len(text)
    total = 0
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Number):
            total += numeric_printed(item)
        elif isinstance(item, str):
            total += _escaped_json_string(item)
        elif item is None:
            total += 4
        elif isinstance(item, bool):
            total += 5
        elif isinstance(item, list):
            total += 2 + 2 * max(0, len(item) - 1)
            stack.extend(item)
        elif isinstance(item, dict):
            total += 2 + 2 * max(0, len(item) - 1) + 2 * len(item)
            for key, member in item.items():
                total += _escaped_json_string(key)
                stack.append(member)
    return total


def jsonb_held(text: str) -> int:
    """Bytes a jsonb literal holds (without its length word), which can be four times what it prints: every
    value has a 4-byte entry and up to 3 bytes of alignment, a number its own header (``'[0,0]'`` prints 4
    characters and holds 26 bytes), a container a 4-byte header; a scalar is held in a one-element array."""
    try:
        value = json.loads(text, parse_float=_Number, parse_int=_Number, parse_constant=_Number)
    except (ValueError, RecursionError):
        return 16 * len(text) + 16
    total = 8
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        total += 7
        if isinstance(item, _Number):
            total += 12 + len(item) // 2  # length word, header, 2 bytes per 4 digits
        elif isinstance(item, str):
            total += len(item.encode("utf-8"))
        elif isinstance(item, list):
            total += 4
            stack.extend(item)
        elif isinstance(item, dict):
            total += 4
            for key, member in item.items():
                total += 7 + len(key.encode("utf-8"))
                stack.append(member)
    return total


def array_elements(text: str) -> Iterator[str | None]:
    """The element texts of an array literal (``{1,"a b",{2},NULL}``), quotes and escapes removed; None for
    a NULL."""
    position = text.find("{")
    if position < 0:
        return
    length = len(text)
    index = position + 1
    while index < length:
        character = text[index]
        if character in "{},\t\n\r ":
            index += 1
            continue
        if character == '"':
            index += 1
            chunk = []
            while index < length and text[index] != '"':
                if text[index] == "\\" and index + 1 < length:
                    index += 1
                chunk.append(text[index])
                index += 1
            index += 1
            yield "".join(chunk)
            continue
        start = index
        chunk = []
        while index < length and text[index] not in ",}":
            if text[index] == "\\" and index + 1 < length:
                index += 1
            chunk.append(text[index])
            index += 1
        element = "".join(chunk).strip()
        yield None if element.upper() == "NULL" and text[start:index].strip().upper() == "NULL" else element
