"""Constant structured values for the size rules' tests: JSON, jsonpath, arrays, ranges, multiranges,
geometry, text search, rows (scalar texts come from ``size_rule_values.py``).

JSON documents nest strings that escaping grows and numbers whose exponents print as hundreds of digits;
arrays hold elements that need quoting (``"a b"``, ``"\\\\"``, ``"NULL"``), NULLs and explicit lower bounds
(``[-2147483648:-2147483647]={...}`` prints its dimensions); geometry holds floats that print 24 characters.
"""

from __future__ import annotations

import json
import random

from size_rule_values import WORST_STRINGS, random_numeric, random_string

_JSON_STRINGS = ("", "\\", '"', "\x01", "ΐ", "\\" * 300, "\x01" * 200, '"' * 300, "𝄞" * 100, "a")
_JSON_NUMBERS = ("0", "1", "-1.5", "1e300", "-1e-300", "1e2000", "123.456e-7")


def json_texts(rng: random.Random, count: int = 12) -> list[str]:
    """JSON documents: scalars, empty and nested containers, long escaped strings, big-exponent numbers."""
    worst = ["null", "true", "0", "1e1000", '""', "[]", "{}", '"\\\\"', "[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]",
             "[" + ",".join(["0"] * 500) + "]", "[" + ",".join(["[]"] * 300) + "]",
             "[" + ",".join(["1e300"] * 20) + "]", '{"": 0, "a": {"b": [1, 2, {"c": null}]}}',
             json.dumps({"\\" * 200: "\x01" * 200, '"': ['"' * 100, "\\" * 100]}),
             json.dumps(["\\" * 1000]), json.dumps({str(i): i for i in range(200)}),
             json.dumps([[[{"k": [1, 2, 3]}] * 3] * 3] * 3), '{"a": 1, "a": 2}', "  [ 1 ,  2 ]  "]
    return worst + [json.dumps(random_json(rng, 3), ensure_ascii=False) if rng.random() < 0.7
                    else random_json_text(rng, 3) for _ in range(count)]


def random_json(rng: random.Random, depth: int) -> object:
    kind = rng.random()
    if depth == 0 or kind < 0.35:
        return rng.choice([None, True, rng.choice(_JSON_STRINGS), random_string(rng, rng.choice((0, 3, 30)))])
    if kind < 0.7:
        return [random_json(rng, depth - 1) for _ in range(rng.choice((0, 1, 3, 8)))]
    return {random_string(rng, rng.choice((0, 2, 5))): random_json(rng, depth - 1)
            for _ in range(rng.choice((0, 2, 5)))}


def random_json_text(rng: random.Random, depth: int) -> str:
    """JSON text with numbers as written (exponents kept: ``json`` prints them as written, ``jsonb`` in full)."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(_JSON_NUMBERS + (random_numeric(rng).lstrip("+"),))
    items = [random_json_text(rng, depth - 1) for _ in range(rng.choice((1, 3, 6)))]
    if rng.random() < 0.5:
        return "[" + ", ".join(items) + "]"
    return "{" + ", ".join(f'"{i}": {item}' for i, item in enumerate(items)) + "}"


JSONPATH_TEXTS = ("$", "$.*", "$.**", "strict $.**", "lax $[*]", "$[0 to last]", "$.keyvalue()", "$.**.keyvalue()",
                  "$.** ? (@ == 0)", "$.a", "$.type()", "$.size()", "$.double()", "$ * 1e300", "$.** ? (@ > 1)",
                  "1e300", '"\\\\"', "$.datetime()", "$.abs()", "$[*] ? (@ like_regex \"a\")",
                  "$ ? (@ starts with \"\")",
                  "$x", "$x[*]", "$x.**", "$[0,0,0,0,0,0,0,0]", "$[0 to last, 0 to last, 0 to last]", "$.**.**",
                  "$.keyvalue().keyvalue().keyvalue()", "$.**.keyvalue().*", "lax $[0][0][0][0]", "$.* ? (@ != null)")
"""jsonpath texts: every kind of step; lists, repeated ``**`` and ``keyvalue()`` return an item many times; ``$x``
reads the ``vars`` argument."""


def element_literal(text: str | None) -> str:
    """One element of an array literal, quoted and escaped (``NULL`` for None)."""
    if text is None:
        return "NULL"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def array_texts(rng: random.Random, elements: list[str], null_allowed: bool = True) -> list[str]:
    """Array literals of ``elements``: empty, one, many, two-dimensional, with NULLs and explicit bounds."""
    def pick(count: int) -> list[str | None]:
        return [None if null_allowed and rng.random() < 0.1 else rng.choice(elements) for _ in range(count)]

    def literal(items: list[str | None]) -> str:
        return "{" + ",".join(element_literal(item) for item in items) + "}"

    small = [e for e in elements if len(e) < 400] or elements
    texts = ["{}", literal([elements[0]]), literal(pick(3)), literal(pick(12)), literal(pick(40)),
             "{" + ",".join(literal([rng.choice(small) for _ in range(3)]) for _ in range(2)) + "}",
             "[-2147483648:-2147483647]=" + literal([rng.choice(small) for _ in range(2)]),
             "[1:1][1:1][1:1][1:1][1:1][1:1]={{{{{{" + element_literal(small[0]) + "}}}}}}"]
    if null_allowed:
        texts.append("{NULL,NULL,NULL,NULL}")
    texts.extend(literal([rng.choice(small)] * n) for n in (50, 300))
    return texts


_RANGE_TEXTS = {
    "int4range": ("empty", "(,)", "[1,2]", "[-2147483648,2147483647)", "(-5,)"),
    "int8range": ("empty", "[-9223372036854775808,9223372036854775807)", "[1,2)"),
    "numrange": ("empty", "(,)", "[1e300,1e301]", "(-1e-300,1e2000)", "[0.5,NaN]", "[-1e-5000,0)"),
    "daterange": ("empty", "[4714-11-24 BC,5874897-12-31)", "(,infinity)", "[2000-01-01,2000-01-02)"),
    "tsrange": ("empty", '["4713-01-01 00:00:00 BC","294276-12-31 23:59:59.999999")', "(,)", '[-infinity,infinity]'),
    "tstzrange": ("empty", '["4713-01-01 00:00:00.000001 BC","294276-12-31 23:59:59.999999")',
                  '["1883-11-18 12:03:57.5","2000-01-01")', "(,)"),
}
MULTIRANGE_OF = {"int4range": "int4multirange", "int8range": "int8multirange", "numrange": "nummultirange",
                 "daterange": "datemultirange", "tsrange": "tsmultirange", "tstzrange": "tstzmultirange"}


def range_texts() -> dict[str, list[str]]:
    """Ranges and multiranges (every range of a type, and the disjoint ones together)."""
    texts: dict[str, list[str]] = {name: list(values) for name, values in _RANGE_TEXTS.items()}
    for name, values in _RANGE_TEXTS.items():
        texts[MULTIRANGE_OF[name]] = ["{}"] + ["{" + v + "}" for v in values if v != "empty"] + [
            "{" + ",".join(v for v in values if v != "empty") + "}"]
    return texts


_FLOATS = ("0", "-1.2345678901234567e-300", "1.7976931348623157e+308", "-0", "NaN", "-Infinity", "0.1", "12345.678")


def geometry_texts(rng: random.Random) -> dict[str, list[str]]:
    """Points, segments, boxes, lines, circles, paths and polygons, with floats that print longest."""
    def point() -> str:
        return f"({rng.choice(_FLOATS)},{rng.choice(_FLOATS)})"

    def points(count: int) -> str:
        return ",".join(point() for _ in range(count))

    long = "-1.2345678901234567e-300"
    return {
        "point": [point() for _ in range(5)] + [f"({long},{long})", "(0,0)"],
        "lseg": [f"[{points(2)}]" for _ in range(3)] + [f"[({long},{long}),({long},{long})]"],
        "box": [f"({long},{long}),(1e308,1e308)", "(0,0),(0,0)", f"{points(2)}"],
        "line": [f"{{{long},{long},{long}}}", "{1,-1,0}", "{0,-1,-1.7976931348623157e+308}"],
        "circle": [f"<({long},{long}),1e308>", "<(0,0),1>", "<(0,0),0>"],
        "path": ["[(0,0)]", f"[{points(3)}]", f"({points(10)})", f"[{points(150)}]", "((0,0),(1,1))"],
        "polygon": ["((0,0))", f"({points(4)})", f"({points(150)})", "(0,0),(1,1),(2,0)"],
    }


def tsvector_texts(rng: random.Random) -> list[str]:
    """tsvector literals: lexemes that need quoting and escaping, many positions with weights."""
    def lexeme(text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"

    words = ["a", "\\", "'", "ΐ", "a b", "𝄞" * 20, "\\" * 200, "'" * 100, "x:y", ",", "{}"]
    worst = ["", "a", "a:1", "a:1,2,3,4,5,6,7,8,9", "a:16383A,16383B,16383C,16383D",
             " ".join(lexeme(w) + ":1A,2B" for w in words),
             " ".join(f"{lexeme(w)}:{','.join(str(p) + 'A' for p in range(1, 200))}" for w in words[:2]),
             " ".join(f"w{i}" for i in range(300)), lexeme("\\" * 1000)]
    randoms = [" ".join(lexeme(random_string(rng, rng.choice((1, 3, 20)))) + rng.choice(("", ":1", ":5A,9B")) for _ in
                        range(rng.choice((1, 5, 40)))) for _ in range(4)]
    return worst + randoms


def tsquery_texts(rng: random.Random) -> list[str]:
    """tsquery literals: every operator, prefixes, weights, phrase distances, quoted lexemes."""
    worst = ["a", "'\\\\'", "!a", "a & b", "a | b & !c", "a <-> b", "a <16384> b", "a:*AB & b:*", "'a b' & 'ΐ'",
             " & ".join(f"'{chr(0x61 + i % 26)}{i}'" for i in range(200)), "!!!!!!!!!!a", "'" + "''" * 300 + "'",
             "((((a <-> b) <2> c) <3> d) <4> e)", "a & " * 100 + "a"]
    return worst + [" | ".join("'" + random_string(rng, 3, ("a", "b", "ΐ", " ")) + "'" for _ in range(
        rng.choice((1, 4, 30)))) for _ in range(3)]


def record_values(rng: random.Random, scalars: dict[str, list[str]], composite: str) -> list[str]:
    """Rows as SQL (``ROW(...)``, a composite type's value whose column names need escaping in JSON)."""
    from size_rule_values import typed

    def value() -> str:
        kind = rng.choice(("text", "integer", "numeric", "jsonb", "boolean", "bytea"))
        return typed(rng.choice(scalars[kind]), kind)

    worst = ["ROW()", "ROW(NULL::text)", f"ROW({typed(WORST_STRINGS[14], 'text')})",
             f"ROW({typed(chr(1) * 300, 'text')}, 1, {typed('{}', 'integer[]')})",
             f"ROW({typed(WORST_STRINGS[14], 'text')}, 0, {typed(json.dumps(chr(1) * 100), 'jsonb')})::{composite}",
             f"ROW(NULL, NULL, NULL)::{composite}", f"ROW('', -2147483648, '[]')::{composite}",
             f"ROW(ROW(ROW({typed(WORST_STRINGS[15], 'text')})))"]
    return worst + ["ROW(" + ", ".join(value() for _ in range(rng.choice((1, 2, 5)))) + ")" for _ in range(6)]
