"""GetData's three result formats (JSON, CSV, NDJSON) and how a request chooses one.

A format is what the handler needs to write an answer around the rows the
driver streams: the content type, the head (before the first row), the row
encoding (``gateway.results.result_rows`` applies it to the driver's rows), the separator
between two pieces of rows, and the tail (after the last row, knowing the row count and whether
the row limit cut the result).

CSV (RFC 4180: header row, ``,`` separators, CRLF line ends, a field quoted
with ``"`` when it holds ``,``, ``"``, CR or LF, inner quotes doubled) writes
every value as the text of its JSON encoding: a string as itself, a number as
JSON writes it, booleans as ``true``/``false``, and values with structure
(json, jsonb, arrays) as their JSON text. NULL is an empty field; an empty
string is ``""``, so the two stay apart (as RFC 4180 readers and most databases'
CSV exports tell them apart). CSV has no place for ``row_count``/``truncated``: the handler sends them
as response headers when the answer is sent whole, and never sends a CSV
answer that looks whole but is not (``gateway.web.getdata_body``).

NDJSON writes one JSON object per row, each on its own line (orjson escapes
line breaks in strings, and ``result_rows.without_line_breaks`` makes those
between a json value's tokens spaces), then one last line
``{"row_count":N,"truncated":false}``. A result cut at the row limit whose rest
the gateway holds (``gateway.databases.continuations``) has its continuation
token as ``next`` beside ``truncated``, in JSON's object and in NDJSON's last line.

Choosing: the ``format`` input (json, csv, ndjson) wins; else the ``Accept``
header, by q-value, a media type named exactly beating ``text/*`` and ``*/*``;
an ``Accept`` that allows none of the three (or none at all) gets JSON, sent
as ``text/javascript`` unless ``Accept`` rates ``application/json`` higher
(``JSON_AS_APPLICATION_JSON``). ``Accept`` is parsed once per request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import orjson

from gateway.contract.driver_protocol import ColumnInfo
from gateway.errors import BadRequest, InternalError
from gateway.request.responses import GETDATA_CONTENT_TYPE, JSON_CONTENT_TYPE
from gateway.results.result_rows import JSON_ROWS, RowEncoding, row_objects, without_line_breaks

CSV_CONTENT_TYPE = "text/csv"
NDJSON_CONTENT_TYPE = "application/x-ndjson"

_NEEDS_QUOTES = re.compile(r'[",\r\n]').search
_dumps = orjson.dumps


@attrs.frozen
class ResultFormat:
    """How one GetData answer is written around and between its rows."""

    name: str
    """The ``format`` input that asks for it."""
    content_type: str
    """The answer's media type (sent with ``charset=utf-8``)."""
    media_types: tuple[str, ...]
    """The ``Accept`` media types that ask for it."""
    head: Callable[[Sequence[ColumnInfo]], bytes]
    """What comes before the first row."""
    encoding: RowEncoding
    """How rows are written (``gateway.results.result_rows`` encodes them with it)."""
    tail: Callable[[int, bool, str | None], bytes]
    """What comes after the last row, from the row count, whether the result was truncated and the continuation
    token that fetches the next rows (None: no token)."""
    ends_with_counts: bool
    """Whether the tail says ``row_count`` and ``truncated``: the body itself then shows a cut (it lacks the
    tail) and a truncation. CSV's cannot: it is never sent truncated, nor streamed over HTTP/1.0."""

    @property
    def separator(self) -> bytes:
        """What goes between two pieces of rows."""
        return self.encoding.separator


def _json_head(columns: Sequence[ColumnInfo]) -> bytes:
    described = orjson.dumps([{"name": column.name, "type": column.type_name} for column in columns])
    return b'[{"status":"success","columns":' + described + b',"data":['


def _next_field(next_token: str | None) -> bytes:
    """``,"next":"<token>"`` when a continuation fetches the next rows (the token is base64url: no escaping)."""
    return b',"next":"%s"' % next_token.encode() if next_token is not None else b""


def _json_tail(row_count: int, truncated: bool, next_token: str | None = None) -> bytes:
    truth = b"true" if truncated else b"false"
    return b'],"row_count":%d,"truncated":%s%s}]' % (row_count, truth, _next_field(next_token))


def _csv_field(value: Any) -> str:
    """One value as a CSV field: its JSON encoding's text, quoted when RFC 4180 needs it."""
    kind = type(value)
    if kind is str:
        if not value:
            return '""'  # an empty string, unlike NULL
        if _NEEDS_QUOTES(value) is None:
            return value
        text = value
    elif value is None:
        return ""
    elif kind is int:
        return str(value)
    elif kind is bool:
        return "true" if value else "false"
    elif kind is float:
        # orjson's text, as in the JSON answer (not repr's: 1e-7, not 1e-07); never needs quotes.
        return _dumps(value).decode()
    else:  # lists, orjson.Fragment (json/jsonb): exactly the JSON answer's text
        text = without_line_breaks(_dumps(value)).decode()
        if _NEEDS_QUOTES(text) is None:
            return text
    return '"' + text.replace('"', '""') + '"'


def _csv_rows(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    field = _csv_field
    try:
        return "".join([",".join([field(value) for value in row]) + "\r\n" for row in rows]).encode()
    except orjson.JSONEncodeError as error:
        raise _unwritable(error) from error


def _csv_tail(row_count: int, truncated: bool, next_token: str | None = None) -> bytes:
    return b""  # CSV has no place for counts nor a token: the handler sends them as headers, or refuses (422)


def _csv_head(columns: Sequence[ColumnInfo]) -> bytes:
    return (",".join(_csv_field(column.name) for column in columns) + "\r\n").encode()


def _ndjson_rows(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    dumps, newline = _dumps, orjson.OPT_APPEND_NEWLINE
    objects = row_objects(names, rows)
    try:
        lines = b"".join([dumps(row, option=newline) for row in objects])
        if lines.count(b"\n") != len(objects) or b"\r" in lines:
            # A json value's own line breaks would split its row over lines (``without_line_breaks``).
            lines = b"".join([without_line_breaks(dumps(row)) + b"\n" for row in objects])
    except orjson.JSONEncodeError as error:
        raise _unwritable(error) from error
    return lines


def _unwritable(error: orjson.JSONEncodeError) -> InternalError:
    # As for JSON answers: only a value no caster of the driver made can get here.
    return InternalError(f"a value in the result could not be written: {error}")


def _ndjson_tail(row_count: int, truncated: bool, next_token: str | None = None) -> bytes:
    truth = b"true" if truncated else b"false"
    return b'{"row_count":%d,"truncated":%s%s}\n' % (row_count, truth, _next_field(next_token))


JSON = ResultFormat(
    name="json",
    content_type=GETDATA_CONTENT_TYPE,
    media_types=(GETDATA_CONTENT_TYPE, "application/json"),
    head=_json_head,
    encoding=JSON_ROWS,
    tail=_json_tail,
    ends_with_counts=True,
)
CSV = ResultFormat(
    name="csv",
    content_type=CSV_CONTENT_TYPE,
    media_types=(CSV_CONTENT_TYPE,),
    head=_csv_head,
    encoding=RowEncoding(encode=_csv_rows, separator=b""),
    tail=_csv_tail,
    ends_with_counts=False,
)
NDJSON = ResultFormat(
    name="ndjson",
    content_type=NDJSON_CONTENT_TYPE,
    media_types=(NDJSON_CONTENT_TYPE,),
    head=lambda columns: b"",
    encoding=RowEncoding(encode=_ndjson_rows, separator=b""),
    tail=_ndjson_tail,
    ends_with_counts=True,
)
FORMATS: tuple[ResultFormat, ...] = (JSON, CSV, NDJSON)
"""In order of preference when ``Accept`` rates several alike (JSON first: today's default)."""


JSON_AS_APPLICATION_JSON = attrs.evolve(JSON, content_type=JSON_CONTENT_TYPE)
"""JSON sent as ``application/json``: the same body, for a request whose ``Accept`` prefers it to
``text/javascript`` (generated clients parse only what is declared as JSON, so they ask for it)."""


def choose_format(format_input: str | None, accept: str | None) -> ResultFormat:
    """The format a request asks for: ``format`` first, then ``Accept``; JSON when neither names one.

    ``Accept`` is parsed once, here: JSON comes as ``JSON_AS_APPLICATION_JSON`` when it rates
    application/json above text/javascript (a tie keeps the specification's media type).
    """
    ranges = _media_ranges(accept) if accept else []
    chosen = _chosen(format_input, ranges)
    if chosen is JSON and ranges and _quality_of(JSON_CONTENT_TYPE, ranges) > _quality_of(GETDATA_CONTENT_TYPE, ranges):
        return JSON_AS_APPLICATION_JSON
    return chosen


def _chosen(format_input: str | None, ranges: list[tuple[str, str, float, int]]) -> ResultFormat:
    if format_input:
        for candidate in FORMATS:
            if candidate.name == format_input:
                return candidate
        choices = ", ".join(candidate.name for candidate in FORMATS)
        raise BadRequest(f"parameter 'format' must be one of {choices}; got {format_input[:40]!r}")
    best, best_key = JSON, (0.0, -1, 0)
    for candidate in FORMATS:
        rating = _rating(candidate, ranges)
        if rating is None:
            continue
        quality, specificity, position = rating
        # Higher q first; then a type named exactly over a wildcard; then the earlier in Accept; then FORMATS' order.
        key = (quality, specificity, -position)
        if quality > 0 and key > best_key:
            best, best_key = candidate, key
    return best


def _quality_of(media_type: str, ranges: list[tuple[str, str, float, int]]) -> float:
    """The highest q ``Accept`` gives ``media_type`` by name (wildcards left out); 0 when it does not name it."""
    kind, _, subtype = media_type.partition("/")
    return max((quality for k, sub, quality, _ in ranges if k == kind and sub == subtype), default=0.0)


def _rating(candidate: ResultFormat, ranges: list[tuple[str, str, float, int]]) -> tuple[float, int, int] | None:
    """(q, specificity, position) of the most specific range in ``Accept`` that matches one of its types."""
    found: tuple[float, int, int] | None = None
    for media_type in candidate.media_types:
        kind, subtype = media_type.split("/")
        for range_kind, range_subtype, quality, position in ranges:
            if range_kind == "*" and range_subtype == "*":
                specificity = 0
            elif range_kind == kind and range_subtype == "*":
                specificity = 1
            elif range_kind == kind and range_subtype == subtype:
                specificity = 2
            else:
                continue
            if found is None or specificity > found[1]:
                found = (quality, specificity, position)
    return found


def _media_ranges(accept: str) -> list[tuple[str, str, float, int]]:
    """``Accept``'s ranges as (type, subtype, q, position); malformed ranges are left out (RFC 9110 12.5.1)."""
    ranges: list[tuple[str, str, float, int]] = []
    for position, item in enumerate(accept.split(",")):
        media_range, *parameters = item.split(";")
        kind, slash, subtype = media_range.strip().lower().partition("/")
        if not slash or not kind or not subtype:
            continue
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = min(max(float(value.strip()), 0.0), 1.0)
                except ValueError:
                    quality = -1.0
        if quality >= 0:
            ranges.append((kind, subtype.strip(), quality, position))
    return ranges
