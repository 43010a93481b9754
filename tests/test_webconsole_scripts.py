"""The console's scripts, run in Chromium on real answers: the streaming JSON reader and the SQL tokenizer.

The reader is fed GetData answers cut into pieces of every size the network
could deliver; it must give what one whole piece gives, refuse every answer
that ends early, and show each value as the gateway's CSV writes it.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import orjson

from console_page import OpenPage, Page, js
from console_shop import SHOP_SQL  # noqa: F401  (the shop_database fixture reads the module's SHOP_SQL)
from console_shop import HOSTILE, api_answer, console_url, served_shop
from support import GatewayFactory

TRICKY_QUERY = """SELECT o.*, E'say "hi" \\\\ back\\nslash' AS escapes, '☃ 😀 é' AS wide, '' AS empty,
       1 AS "__proto__", 2 AS "1", 12345678901234567890.5::numeric AS exact, 'NaN'::float8 AS nan,
       '{"a": {"b": [1e400, -0.0]}}'::json AS deep
FROM public.orders AS o ORDER BY o.id"""

READ_IN_PIECES = """async (text, sizes) => {
  const { AnswerReader } = await import('/console/assets/json_stream.js');
  const { textOf } = await import('/console/assets/values.js');
  const read = (size) => {
    const seen = { columns: null, rows: [] };
    const reader = new AnswerReader({
      onColumns: (columns) => { seen.columns = columns; },
      onRow: (values) => seen.rows.push(values.map((v) => (v === null ? null : textOf(v)))),
    });
    for (let at = 0; at < text.length; at += size) reader.push(text.slice(at, at + size));
    seen.end = reader.end();
    return seen;
  };
  return sizes.map(read);
}"""


async def in_page(page: Page, function: str, *arguments: Any) -> Any:
    return await page.evaluate(f"({function})({', '.join(js(argument) for argument in arguments)})")


async def test_the_reader_gives_the_same_rows_however_the_answer_is_cut(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """Pieces of 1, 2, 3, 7, 64 and 4096 characters, and the whole: the same columns, rows and counts, which are
    the JSON answer's; and each value's text is its CSV field (NULL apart)."""
    client = await served_shop(make_gateway, shop_database)
    page = await open_page(console_url(client))
    status, body = await api_answer(client, "shop", TRICKY_QUERY)
    assert status == 200
    text = body.decode()
    reads = await in_page(page, READ_IN_PIECES, text, [len(text), 1, 2, 3, 7, 64, 4096])
    assert all(read == reads[0] for read in reads[1:])
    whole = reads[0]
    answer = orjson.loads(body)[0]
    assert whole["columns"] == answer["columns"]
    assert whole["end"] == {"rowCount": answer["row_count"], "truncated": False, "rowsSeen": answer["row_count"]}
    _, csv_body = await api_answer(client, "shop", TRICKY_QUERY, "csv")
    fields = list(csv.reader(io.StringIO(csv_body.decode(), newline="")))[1:]
    for shown, row, written in zip(whole["rows"], answer["data"], fields, strict=True):
        for value, column, field in zip(shown, answer["columns"], written, strict=True):
            assert (value is None) == (row[column["name"]] is None)
            assert value == (None if value is None else field), column["name"]
    first = dict(zip([c["name"] for c in answer["columns"]], whole["rows"][0], strict=True))
    assert first["big"] == "9007199254740993" and first["exact"] == "12345678901234567890.5"
    assert first["__proto__"] == "1" and first["1"] == "2" and first["escapes"] == 'say "hi" \\ back\nslash'


async def test_an_answer_that_ends_early_is_never_taken_for_whole(
    make_gateway: GatewayFactory, shop_database: str, open_page: OpenPage
) -> None:
    """Every proper prefix of an answer (whitespace aside) is an IncompleteAnswer at end(), never a shorter table."""
    client = await served_shop(make_gateway, shop_database)
    page = await open_page(console_url(client))
    _, body = await api_answer(client, "shop", "SELECT c.id, c.name FROM public.customers AS c ORDER BY c.id")
    text = body.decode()
    verdicts = await in_page(
        page,
        """async (text) => {
          const { AnswerReader, IncompleteAnswer } = await import('/console/assets/json_stream.js');
          const verdicts = [];
          for (let length = 0; length <= text.length; length += 1) {
            const reader = new AnswerReader({ onColumns: () => {}, onRow: () => {} });
            reader.push(text.slice(0, length));
            try { reader.end(); verdicts.push('whole'); }
            catch (error) { verdicts.push(error instanceof IncompleteAnswer ? 'incomplete' : String(error)); }
          }
          return verdicts;
        }""",
        text,
    )
    whole_from = len(text.rstrip())
    assert verdicts[:whole_from] == ["incomplete"] * whole_from
    assert set(verdicts[whole_from:]) == {"whole"}


SQL_SAMPLES = [
    "SELECT 'it''s' AS s, E'a\\'b' AS e, $t$ dollar ' \" $t$ AS d, \"Quoted \"\"id\"\"\" FROM public.x",
    "-- a comment\nSELECT /* outer /* nested */ still */ count(*), 1.5e3, .5, $1 FROM s.t WHERE a::text <> 'x'",
    "SELECT 'unclosed",
    "select \"unclosed",
    "/* unclosed",
    "SELECT ☃, naïve_name FROM ünï.cödé;",
    *HOSTILE,
]

TOKENS = """async (samples) => {
  const { tokenize } = await import('/console/assets/sql_tokens.js');
  return samples.map((text) => tokenize(text).map((token) => [token.type, token.text]));
}"""


async def test_the_tokenizer_keeps_every_character_and_reads_postgresqls_literals(
    make_gateway: GatewayFactory, open_page: OpenPage
) -> None:
    """The tokens give the text back exactly (the highlighted copy lines up); strings, identifiers, comments
    and keywords are what PostgreSQL reads."""
    client = await make_gateway()
    page = await open_page(console_url(client))
    tokenized = await in_page(page, TOKENS, SQL_SAMPLES)
    for text, tokens in zip(SQL_SAMPLES, tokenized, strict=True):
        assert "".join(piece for _, piece in tokens) == text
    kinds = {piece: kind for kind, piece in tokenized[0] + tokenized[1] if kind != "space"}
    assert kinds["SELECT"] == "keyword" and kinds["FROM"] == "keyword" and kinds["count"] == "function"
    assert kinds["'it''s'"] == "string" and kinds["E'a\\'b'"] == "string"
    assert kinds["$t$ dollar ' \" $t$"] == "string" and kinds['"Quoted ""id"""'] == "identifier"
    assert kinds["/* outer /* nested */ still */"] == "comment" and kinds["-- a comment"] == "comment"
    assert kinds["1.5e3"] == kinds[".5"] == "number" and kinds["$1"] == "parameter"
    assert tokenized[2] == [["keyword", "SELECT"], ["space", " "], ["string", "'unclosed"]]


async def test_the_editor_draws_each_line_beside_its_number(make_gateway: GatewayFactory, open_page: OpenPage) -> None:
    """The highlighted copy holds the typed text exactly, one gutter number per line, scrolled with the text."""
    client = await make_gateway()
    page = await open_page(console_url(client))
    await page.click("#editor")
    lines = [f"SELECT {n} AS \"line {n}\" -- <b>not bold</b>" for n in range(1, 41)]
    await page.type("\n".join(lines))
    await page.wait_for(
        "document.querySelector('#highlight').textContent === document.querySelector('#editor').value + '\\n'",
        "the highlighted copy",
    )
    assert (await page.text("#gutter")).split() == [str(n) for n in range(1, 41)]
    assert await page.evaluate("document.querySelectorAll('#highlight b').length") == 0
    assert await page.evaluate("document.querySelectorAll('#highlight .sql-keyword').length") == 80
    scrolled = await page.evaluate(
        "(() => { const e = document.querySelector('#editor'); e.scrollTop = 300; e.dispatchEvent(new Event('scroll'));"
        " return [document.querySelector('#highlight').scrollTop, document.querySelector('#gutter').scrollTop]; })()"
    )
    assert scrolled == [300, 300]
    line_height = await page.evaluate(
        "['#editor', '#highlight', '#gutter'].map(s => getComputedStyle(document.querySelector(s)).lineHeight)"
    )
    assert len(set(line_height)) == 1
