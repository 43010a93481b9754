"""Constant values of the scalar types the size rules read, as SQL: hand-picked worst cases, then seeded random ones.

Each family gives the *text* of values (``'1e300'``, ``'\\\\'``); ``typed`` turns a text into a constant of
one type (``'1e300'::numeric``). The worst cases are what makes a printed or stored form outgrow the
input: backslashes and double quotes (doubled by quoting and JSON), control characters (``\\u0001`` in
JSON, six bytes from one), characters whose case mapping or normalisation grows (``ɐ`` upper is ``Ɐ``, two
bytes to three; ``ΐ`` and ``ŉ`` under full case mapping; U+FDFA, one character, 18 when decomposed),
numbers whose exponents print as thousands of digits, extreme dates, intervals and time zones. Structured
values (JSON, arrays, ranges, geometry, text search, rows) are in ``size_rule_structured_values.py``.
"""

from __future__ import annotations

import random

STRING_LENGTHS = (0, 1, 2, 3, 8, 40, 300, 2000)
"""Lengths of random strings: small ones catch additive errors, the large ones multiplicative errors."""

HARD_CHARACTERS = (
    "\\", '"', "'", ",", "{", "}", "(", ")", "[", "]", " ", "\x01", "\x1f", "\n", "\t", "é", "€", "𝄞", "ß",
    "ΐ", "ŉ", "ﬃ", "\ufdfa", "ɐ", "Ⱥ", "a", "Z", "%", ":", "$", "&", "|", "!", "0", "9", ".", "-", "<", ">",
)
"""Characters that escaping, quoting, case mapping or normalisation grows, and plain ones between them."""

WORST_STRINGS = (
    "", "a", " ", "NULL", "\\", '"', "'", "\x01", "ΐ", "ß", "ŉ", "\ufdfa", "𝄞", "é€𝄞ΐ",
    "\\" * 1500, '"' * 1500, "'" * 700, "\x01" * 700, "\n\t\r\b\f" * 150, "ΐ" * 1000, "ŉ" * 900, "ﬃ" * 700,
    "ɐ" * 900, "Ⱥ" * 900,
    "\ufdfa" * 400, "𝄞" * 600, "{,} " * 300, "a" * 2500, "a b " * 300, '\\"' * 700, "NULL," * 200,
)
"""Strings whose printed or processed forms grow the most per byte (quoting, JSON, case, normalisation)."""


def sql_literal(text: str) -> str:
    """A SQL string literal for ``text``: an ``E''`` literal when it holds control characters."""
    if any(ord(c) < 0x20 for c in text):
        escaped = {"\\": "\\\\", "'": "\\'"}
        body = "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 else escaped.get(c, c) for c in text)
        return f"E'{body}'"
    return "'" + text.replace("'", "''") + "'"


def typed(text: str | None, type_name: str) -> str:
    """A constant of ``type_name`` read from ``text`` (``NULL::type`` for None)."""
    if text is None:
        return f"NULL::{type_name}"
    return f"{sql_literal(text)}::{type_name}"


def random_string(rng: random.Random, length: int | None = None, alphabet: tuple[str, ...] = HARD_CHARACTERS) -> str:
    """A string of hard characters, of a length from ``STRING_LENGTHS`` unless given."""
    size = rng.choice(STRING_LENGTHS) if length is None else length
    if rng.random() < 0.3:  # one character repeated: the worst case of whatever it grows by
        return rng.choice(alphabet) * size
    return "".join(rng.choice(alphabet) for _ in range(size))


def string_texts(rng: random.Random, count: int = 14) -> list[str]:
    return list(WORST_STRINGS) + [random_string(rng) for _ in range(count)]


def numeric_texts(rng: random.Random, count: int = 10) -> list[str]:
    worst = ["0", "-0.0", "1", "-1", "0.5", "1e300", "-1e-300", "9.999e999", "1e5000", "-1e-5000", "1e-16383",
             "-123456789012345678901234567890.123456789012345678901234567890", "0." + "0" * 300 + "1",
             "99999999999999999999", "NaN", "Infinity", "-Infinity", "1e131071"]
    return worst + [random_numeric(rng) for _ in range(count)]


def random_numeric(rng: random.Random) -> str:
    sign = rng.choice(("", "-", "+"))
    digits = "".join(rng.choice("0123456789") for _ in range(rng.choice((1, 3, 20, 100))))
    fraction = ""
    if rng.random() < 0.6:
        fraction = "." + "".join(rng.choice("0123456789") for _ in range(rng.choice((1, 5, 60))))
    exponent = f"e{rng.choice(('', '-'))}{rng.choice((1, 20, 300, 2000, 9999))}" if rng.random() < 0.5 else ""
    return sign + digits + fraction + exponent


FLOAT8_TEXTS = ("0", "-0", "1", "0.1", "1e308", "-1.7976931348623157e308", "2.2250738585072014e-308", "5e-324",
                "-1.2345678901234567e-300", "-123456789012345680000", "NaN", "Infinity", "-Infinity")
FLOAT4_TEXTS = ("0", "-0", "-3.4028235e38", "1.4e-45", "-1.1754944e-38", "-1.2345679e-30", "NaN", "-Infinity")
INTEGER_TEXTS = ("0", "1", "2", "3", "-1", "-7", "17", "100", "1000", "3000", "-2147483648")
"""Integers as arguments: small ones, counts that build a few kilobytes, and the extreme that errors or
empties (never the largest: ``generate_series(1, 2147483647)`` or ``bit(1, 2147483647)`` would run for
long or take much memory)."""
SMALLINT_TEXTS = ("0", "1", "-1", "3", "-32768", "32767")
BIGINT_TEXTS = INTEGER_TEXTS + ("-9223372036854775808", "9223372036854775807")
MONEY_TEXTS = ("0", "1.5", "-92233720368547758.08", "92233720368547758.07", "-0.01")
INTERVAL_TEXTS = (
    "0", "1 microsecond", "-178000000 years", "178000000 years",
    "-178000000 years -2147483648 days -2562047788:00:54.775808",
    "-2147483648 months -2147483648 days -2562047788:00:54.775808", "-1 day -00:00:00.000001",
    "1 year 2 mons 3 days 04:05:06.789", "-1 year -1 mon -1 day -1 hour -1 minute -1.5 seconds",
)
TIMESTAMP_TEXTS = ("2000-01-01", "4713-01-01 00:00:00 BC", "4714-11-24 00:00:00.000001 BC",
                   "294276-12-31 23:59:59.999999", "1883-11-18 12:03:57.123456", "infinity", "-infinity")
DATE_TEXTS = ("2000-01-01", "4714-11-24 BC", "5874897-12-31", "infinity", "-infinity")
TIME_TEXTS = ("00:00", "24:00:00", "23:59:59.999999", "12:34:56.5")
TIMETZ_TEXTS = ("00:00+00", "23:59:59.999999-15:59", "24:00:00+15:59", "12:00:00.123456-03:30")
INET_TEXTS = ("1.2.3.4", "255.255.255.255/32", "192.168.100.200/24", "1:2:3:4:5:6:7:8/64",
              "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", "::ffff:1.2.3.4/100", "1234:5678:9abc:def0::/60")
CIDR_TEXTS = ("1.2.3.0/24", "255.255.255.255/32", "1:2:3:4:5:6:7:8/128", "ffff:ffff:ffff:ffff::/64", "::/0")
BIT_TEXTS = ("", "0", "1", "10110", "1" * 64, "01" * 900)
OTHER_TEXTS: dict[str, tuple[str, ...]] = {
    "boolean": ("true", "false"),
    "uuid": ("00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"),
    "oid": ("0", "4294967295"),
    "tid": ("(0,0)", "(4294967295,65535)"),
    "pg_lsn": ("0/0", "FFFFFFFF/FFFFFFFF"),
    "xid8": ("0", "18446744073709551615"),
    "macaddr": ("ff:ff:ff:ff:ff:ff",),
    "macaddr8": ("ff:ff:ff:ff:ff:ff:ff:ff",),
    "regconfig": ("simple", "english", "pg_catalog.german"),
    "regdictionary": ("simple", "english_stem"),
    '"char"': ("a", "\\", "é", " ", "\x01", ""),
    "xml": ("<a/>", "<a>&amp;&lt;&gt;</a>", '<a b="&quot;\'"/>', "text &amp; more", "<a>" + "&amp;" * 300 + "</a>",
            "<!-- c --><b>" + "ΐ" * 300 + "</b>", ""),
}


def scalar_texts(rng: random.Random) -> dict[str, list[str]]:
    """Texts of every scalar type, by its SQL name (as ``regtype`` prints it)."""
    strings = string_texts(rng)
    bits = list(BIT_TEXTS) + ["".join(rng.choice("01") for _ in range(rng.choice((3, 40, 500)))) for _ in range(3)]
    texts: dict[str, list[str]] = {
        "text": strings,
        "character varying": strings,
        "character": strings,
        "name": [s for s in strings if len(s) < 3000],
        "numeric": numeric_texts(rng),
        "double precision": list(FLOAT8_TEXTS) + [f"{rng.uniform(-1, 1):.17g}e{rng.randint(-307, 307)}"
                                                  for _ in range(4)],
        "real": list(FLOAT4_TEXTS),
        "integer": list(INTEGER_TEXTS),
        "smallint": list(SMALLINT_TEXTS),
        "bigint": list(BIGINT_TEXTS),
        "money": list(MONEY_TEXTS),
        "interval": list(INTERVAL_TEXTS),
        "timestamp without time zone": list(TIMESTAMP_TEXTS),
        "timestamp with time zone": list(TIMESTAMP_TEXTS),
        "date": list(DATE_TEXTS),
        "time without time zone": list(TIME_TEXTS),
        "time with time zone": list(TIMETZ_TEXTS),
        "inet": list(INET_TEXTS),
        "cidr": list(CIDR_TEXTS),
        "bit": bits,
        "bit varying": bits,
        "bytea": bytea_texts(rng),
    }
    texts.update({name: list(values) for name, values in OTHER_TEXTS.items()})
    return texts


def bytea_texts(rng: random.Random) -> list[str]:
    """Bytea in hex and escape input forms: empty, bytes that print escaped (``\\000``, ``\\\\``), random bytes."""
    worst = ["\\x", "\\x00", "\\x5c", "\\x" + "00" * 1000, "\\x" + "5c" * 1000, "\\x" + "ff" * 700,
             "\\x" + "2c7b7d22" * 200, "\\x" + "e282ac" * 300,
             "", "abc", "\\\\" * 300, "\\000" * 200, "ΐ" * 100]  # escape form: one byte prints as two digits
    return worst + ["\\x" + rng.randbytes(rng.choice((1, 7, 100, 900))).hex() for _ in range(5)]


def pattern_texts(rng: random.Random) -> list[str]:
    """Regular expressions: empty matches everywhere, capture groups, back references, and literal text."""
    worst = ["", ".", "(.)", "()", "(((((.)))))", "(a)|(b)", "a*", "\\s*", "x?", "(.)(.)(.)(.)(.)(.)(.)(.)(.)",
             "\\\\", '"', "[a-z]+", "(\\w)(\\w)?", "^", "$", "(?:.)", "(.)\\1", "ΐ", "(𝄞)"]
    return worst + [random_string(rng, rng.choice((1, 2, 3)), ("a", ".", "*", "(", ")", "|", "\\", "?", "ΐ"))
                    for _ in range(6)]


REPLACEMENT_TEXTS = ("", "x", "\\&", "\\1", "\\&\\&\\&\\&", "\\1\\2\\3\\4\\5\\6\\7\\8\\9", "\\\\", "𝄞" * 20,
                     "\\&" * 200, '"' * 300)
FLAG_TEXTS = ("", "g", "i", "gi", "x", "n", "ig", "q")
"""Regular expression flags; the bad ones make the server refuse (a skipped case)."""

TO_CHAR_FORMATS = (
    "", "RN", "FMRN", "rn", "TH", "9th", "FM9999999999999999999999999999.99999", "9" * 100, "0" * 60 + ".9999",
    "EEEE", "9.99EEEE", "PR9999", "S9999", "L9999", "PL9999", "SG9999", "MI9999", "9G999G999D99", "V999",
    "Day Month YYYY", "TMDay TMMonth", "FMDay, DDTH FMMonth YYYY", "YYYY-MM-DD HH24:MI:SS.US TZH:TZM OF TZ",
    "SSSS SSSSS", "IYYY-IW-ID", "J", "Q CC WW W", "Y,YYY BC", "\"quoted\" text", "\\\\", "HH12 AM a.m. PM",
    "MONTH MONTH MONTH", "DAY DAY DAY DAY", "FF1 FF2 FF3 FF4 FF5 FF6 MS US", "TZ tz OF", "RM rm", "CC" * 40,
    "Month" * 40, "9" * 1000, "RN" * 100,
)
"""``to_char`` templates: the patterns that print longest per character written."""

FORMAT_TEMPLATES = (
    "", "%s", "%L", "%I", "%s %L %I", "%1$s%1$s%1$s%1$s", "%1$L%1$L%1$I", "%2000s", "%-2000s|", "%3$s%2$L%1$I",
    "%%", "%5s%-5s%10L", "%1$300s %2$300I", "%-1$s", "%*s", "%s%s%s%s%s%s", "%L%L%L%L%L%L",
)
"""``format`` templates: repeated references to one argument, widths, quoting conversions."""
