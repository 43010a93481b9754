"""Compare the guard's size bounds with what the server makes: the checker of ``test_guard_size_rules.py``.

For each case (a SELECT of one column, ``size_rule_cases.Case``) the server measures, in a scratch
database, the largest value's text (``octet_length(x::text)``, the type's output function), the largest
value as it is held (``pg_column_size(x)``) and the row count; the guard's model bounds the same column
(``SizeModel.size`` of the analysed target) and the rows (``SizeModel.rows``). A case the server refuses,
or the model does not analyse, is counted, not checked. The measuring runs in PL/pgSQL
(``size_rule_measure``) so that one round trip measures a whole batch and an error costs one case, not
the batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import psycopg2.extensions

from drivers.postgres.guard.model.analysis import Analyzer, parse_select
from drivers.postgres.guard.sizes.bounds import Bound
from drivers.postgres.guard.model.catalog import CATALOG_SQL, Catalog
from drivers.postgres.guard.errors import AnalysisError, Unsupported
from drivers.postgres.guard.policy import GuardPolicy
from drivers.postgres.guard.sizes.size_model import SizeModel
from size_rule_cases import OVERLOADS_SQL, Case, Overload
from size_rule_palette import COMPOSITE_TYPE, ENUM_LABELS, ENUM_TYPE
from size_rule_values import sql_literal

BATCH = 250
"""Cases measured per round trip."""
SESSION_SQL = "SET statement_timeout = '120s'; SET TimeZone = 'America/New_York'"
"""A safety net against a hung batch (no case takes more than milliseconds), and a time zone whose old
dates print a local mean time offset to the second (``-04:56:02``), the longest a timestamptz prints."""


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


SCRATCH_SQL = f"""
CREATE TYPE {ENUM_TYPE} AS ENUM ({", ".join(sql_literal(label) for label in ENUM_LABELS)});
CREATE TYPE {COMPOSITE_TYPE} AS ({_identifier(chr(92) * 63)} text, {_identifier(chr(1) * 63)} integer,
                                 {_identifier('the "quoted" key')} jsonb);
CREATE FUNCTION size_rule_measure(query text, OUT text_bytes bigint, OUT stored_bytes bigint, OUT row_count bigint,
                                  OUT type_name text, OUT error text) LANGUAGE plpgsql AS $$
DECLARE
    category "char";
    held text := 'pg_column_size((ARRAY[m.x])[1]) - 4';
BEGIN
    -- The held size is the value's without its length word (the 4 bytes before a variable-length value): the
    -- model bounds values, as it bounds a literal by its text. ``(ARRAY[x])[1]`` is the value with a 4-byte
    -- word even where it came from a stored row (a sort, a window), whose short values have a 1-byte word.
    EXECUTE format('SELECT t.typcategory, t.typlen, format_type(t.oid, NULL) FROM (%s) AS m(x) '
                   'JOIN pg_type t ON t.oid = pg_typeof(m.x) LIMIT 1', query) INTO category, stored_bytes, type_name;
    IF stored_bytes > 0 THEN
        held := 'pg_column_size(m.x)';
    ELSIF category = 'A' THEN
        held := 'pg_column_size(m.x[:]) - 4';  -- a slice of every dimension: an array with a 4-byte word
    END IF;
    EXECUTE format('SELECT coalesce(max(octet_length(m.x::text)), 0), coalesce(max(%s), 0), count(*) '
                   'FROM (%s) AS m(x)', held, query) INTO text_bytes, stored_bytes, row_count;
EXCEPTION WHEN OTHERS THEN
    error := SQLSTATE || ': ' || SQLERRM;
END $$;
"""
"""The scratch database: an enum and a composite type whose labels and column names need escaping, and the
measuring function."""


@dataclass(frozen=True)
class Measure:
    """What the server made of one case: the largest value's text and held size in bytes, the rows, the type."""

    text_bytes: int
    stored_bytes: int
    rows: int
    type_name: str | None = None


def fetch_overloads(connection: psycopg2.extensions.connection, names: Iterable[str]) -> list[Overload]:
    with connection.cursor() as cursor:
        cursor.execute(OVERLOADS_SQL, (sorted(names),))
        return [Overload.from_row(row) for row in cursor.fetchall()]


def measure(connection: psycopg2.extensions.connection, cases: list[Case]) -> dict[str, Measure | str]:
    """The server's measures of each case's SQL, or its error (``SQLSTATE: message``)."""
    texts = sorted({case.sql for case in cases})
    found: dict[str, Measure | str] = {}
    with connection.cursor() as cursor:
        cursor.execute(SESSION_SQL)
        for start in range(0, len(texts), BATCH):
            batch = texts[start:start + BATCH]
            cursor.execute("SELECT r.* FROM unnest(%s::text[]) WITH ORDINALITY AS c(q, n), "
                           "LATERAL size_rule_measure(c.q) AS r ORDER BY c.n", (batch,))
            for sql, (text_bytes, stored_bytes, rows, type_name, error) in zip(batch, cursor.fetchall()):
                found[sql] = error if error is not None else Measure(text_bytes, stored_bytes, rows, type_name)
    return found


class BoundModel:
    """The guard's bounds for a case's column and rows, from one catalog."""

    def __init__(self, connection: psycopg2.extensions.connection) -> None:
        with connection.cursor() as cursor:
            cursor.execute(CATALOG_SQL)
            row = cursor.fetchone()
        assert row is not None
        self.catalog = Catalog.from_row(row)
        self.coercions = GuardPolicy.from_catalog(self.catalog).coercions

    def bounds(self, sql: str) -> tuple[Bound, Bound] | str:
        """The size bound of the one column and the bound on the rows, or why the model does not analyse it."""
        try:
            query = Analyzer(self.catalog, self.coercions).analyze_statement(parse_select(sql))
        except (AnalysisError, Unsupported) as error:
            return f"{type(error).__name__}: {error}"
        model = SizeModel(self.catalog, query)
        targets = [t for t in query.targets if not t.junk]
        return model.size(targets[0].expr, query), model.rows(query)


@dataclass(frozen=True)
class Violation:
    """A case whose value (or rows) the server made larger than the model's bound."""

    case: Case
    bound: Bound
    rows_bound: Bound
    measure: Measure

    def __str__(self) -> str:
        sql = self.case.sql if len(self.case.sql) <= 240 else self.case.sql[:240] + "..."
        return (f"[{self.case.rule}] {sql}\n    bound {self.bound.fixed} bytes, {self.rows_bound.fixed} rows; "
                f"server: text {self.measure.text_bytes}, held {self.measure.stored_bytes}, rows {self.measure.rows}")


@dataclass
class Tally:
    """What happened to one rule's cases."""

    checked: int = 0
    """Cases whose constant size bound was compared with the server's measures."""
    rows_checked: int = 0
    """Cases whose constant bound on the rows was compared with the rows the server made."""
    many_rows: int = 0
    """Checked cases whose value spanned more than one row (an aggregate's input, a set's output)."""
    server_errors: Counter[str] = field(default_factory=Counter)
    model_errors: int = 0
    unbounded: int = 0
    """Cases the model does not bound (``unknown``): sound, nothing to compare."""
    data: int = 0
    """Cases whose bound counts the administrator's data (``D``), which constants cannot measure."""


@dataclass
class Report:
    tallies: dict[str, Tally]
    violations: list[Violation]

    def describe(self, limit: int = 60) -> str:
        by_rule = Counter(v.case.rule for v in self.violations)
        lines = [f"{len(self.violations)} violations in {len(by_rule)} rules: {dict(by_rule.most_common())}"]
        shown: Counter[str] = Counter()
        for violation in sorted(self.violations, key=lambda v: v.case.rule):
            if shown[violation.case.rule] < 3 and sum(shown.values()) < limit:
                shown[violation.case.rule] += 1
                lines.append(str(violation))
        return "\n".join(lines)


def check(cases: list[Case], measures: dict[str, Measure | str], model: BoundModel) -> Report:
    """Every case's measures against the model's bounds."""
    tallies: dict[str, Tally] = {}
    violations = []
    for case in cases:
        tally = tallies.setdefault(case.rule, Tally())
        measured = measures[case.sql]
        if isinstance(measured, str):
            tally.server_errors[measured.split(":")[0]] += 1
            continue
        bounds = model.bounds(case.sql)
        if isinstance(bounds, str):
            tally.model_errors += 1
            continue
        size, rows = bounds
        too_large = too_many = False
        if size.unknown:
            tally.unbounded += 1
        elif not size.is_constant:
            tally.data += 1
        else:
            tally.checked += 1
            tally.many_rows += measured.rows > 1 or " FROM " in case.sql
            too_large = max(measured.text_bytes, measured.stored_bytes) > size.fixed
        if rows.is_constant:
            tally.rows_checked += 1
            too_many = measured.rows > rows.fixed
        if too_large or too_many:
            violations.append(Violation(case, size, rows, measured))
    return Report(tallies, violations)
