"""Where, in the tokens PostgreSQL's scanner makes of a query, a relation reference and each WHERE condition lie.

The parse tree gives each node the location of its first token but not its end. ``tokens`` are the
scanner's tokens without comments (``significant_tokens``), so a copied range never ends in a ``--``
comment that would swallow what follows it. The rewrite
(``rewrite.py``) replaces a relation reference and copies WHERE conditions by token ranges, so that the same
edits apply to any text of the same tokens (the guard cache reuses decisions across numeric constants).
The ends are found from the tokens the scanner made (never from the raw characters) and checked against
the tree: a condition's range must hold every location of its nodes and no other condition's. When a check
fails the answer is None and the rewrite copies nothing: the query stays correct, only slower.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

import attrs
from pglast import parser

Raw = dict[str, Any]

_OPEN, _CLOSE, _DOT, _STAR, _SEMICOLON = "ASCII_40", "ASCII_41", "ASCII_46", "ASCII_42", "ASCII_59"
_AFTER_WHERE: Final = frozenset({
    "GROUP_P", "HAVING", "WINDOW", "ORDER", "LIMIT", "OFFSET", "FETCH", "FOR", "UNION", "INTERSECT", "EXCEPT",
    _SEMICOLON,
})
"""Tokens that end a WHERE clause at its own parenthesis depth."""


@attrs.frozen
class RelationSpan:
    """A relation reference ``[ONLY] schema.name [*] [[AS] alias [(columns)]]`` by token index."""

    first: int
    """Its first token (``ONLY`` when written)."""
    name: tuple[int, int]
    """``schema.name``: first and last token."""
    alias: int | None
    """The alias's token, if any."""
    columns: tuple[int, int] | None
    """The alias's column list, parentheses included, if any."""
    last: int
    """Its last token."""


def significant_tokens(sql: str) -> list[Any]:
    """The scanner's tokens of ``sql`` without its comments."""
    return [token for token in parser.scan(sql) if token.name not in ("SQL_COMMENT", "C_COMMENT")]


def character_offsets(sql: str) -> list[int]:
    """Character offset of each byte offset of ``sql``'s UTF-8 form (the parser counts bytes, the scanner
    characters); one more entry for the end."""
    offsets: list[int] = []
    for index, character in enumerate(sql):
        offsets.extend([index] * len(character.encode("utf-8")))
    offsets.append(len(sql))
    return offsets


def _token_at(tokens: Sequence[Any], start: int) -> int | None:
    for index, token in enumerate(tokens):
        if token.start == start:
            return index
    return None


def relation_span(tokens: Sequence[Any], start: int, inherited: bool, has_alias: bool) -> RelationSpan | None:
    """The reference whose schema begins at character ``start`` (schema-qualified, as the guard requires)."""
    at = _token_at(tokens, start)
    if at is None or at + 2 >= len(tokens) or tokens[at + 1].name != _DOT:
        return None
    first = at if inherited or at == 0 or tokens[at - 1].name != "ONLY" else at - 1
    if not inherited and first == at:
        return None
    last = at + 2
    if last + 1 < len(tokens) and tokens[last + 1].name == _STAR:
        last += 1
    alias_token = columns = None
    if has_alias:
        index = last + 1
        if index < len(tokens) and tokens[index].name == "AS":
            index += 1
        if index >= len(tokens):
            return None
        alias_token, last = index, index
        if index + 1 < len(tokens) and tokens[index + 1].name == _OPEN:  # after an alias, only its columns
            close = _matching(tokens, index + 1)
            if close is None:
                return None
            columns, last = (index + 1, close), close
    return RelationSpan(first, (at, at + 2), alias_token, columns, last)


def _matching(tokens: Sequence[Any], open_index: int) -> int | None:
    """The ``)`` that closes the ``(`` at ``open_index``."""
    if open_index >= len(tokens) or tokens[open_index].name != _OPEN:
        return None
    depth = 0
    for index in range(open_index, len(tokens)):
        depth += {_OPEN: 1, _CLOSE: -1}.get(tokens[index].name, 0)
        if depth == 0:
            return index
    return None


def _locations(node: Any) -> Iterator[int]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            location = item.get("location")
            if isinstance(location, int) and location >= 0:
                yield location
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def conjunct_spans(sql: str, tokens: Sequence[Any], where: Raw) -> list[tuple[int, int]] | None:
    """The token range of each top-level AND term of ``where`` (the whole condition when it is no AND)."""
    body = where.get("BoolExpr")
    terms = body["args"] if body is not None and body.get("boolop") == "AND_EXPR" else [where]
    offsets = character_offsets(sql)
    starts_of = {token.start: index for index, token in enumerate(tokens)}
    owned: list[list[int]] = []
    for term in terms:
        found = [starts_of.get(offsets[location]) for location in _locations(term) if location < len(offsets)]
        if not found or any(index is None for index in found):
            return None
        owned.append(sorted(index for index in found if index is not None))
    spans = []
    for number, indexes in enumerate(owned):
        first = indexes[0]
        while first > 0 and tokens[first - 1].name == _OPEN:
            first -= 1  # parentheses the term begins with
        if first == 0 or tokens[first - 1].name != ("WHERE" if number == 0 else "AND"):
            return None
        last = _term_end(tokens, first)
        if last is None or last < indexes[-1]:
            return None
        spans.append((first, last))
        if number + 1 < len(owned) and last >= owned[number + 1][0]:
            return None
    return spans


def _term_end(tokens: Sequence[Any], first: int) -> int | None:
    """The last token of the AND term that begins at ``first``: before the next AND or clause at its depth
    (``x BETWEEN a AND b`` keeps its own AND)."""
    depth, between = 0, False
    for index in range(first, len(tokens)):
        name = tokens[index].name
        if name == _OPEN:
            depth += 1
        elif name == _CLOSE:
            depth -= 1
            if depth < 0:
                return index - 1
        elif depth == 0:
            if name == "BETWEEN":
                between = True
            elif name == "AND":
                if between:
                    between = False
                else:
                    return index - 1
            elif name in _AFTER_WHERE:
                return index - 1
    return len(tokens) - 1
