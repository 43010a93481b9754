"""Whole statements for scripts/interrupt_audit.py --statements (issue 19): time *and* memory, direct and through a gateway.

Issue 8's audit times one call of one built-in over inputs built from constants.
Issue 19 showed runaways it could not see: several calls in one statement
(PostgreSQL does not check for interrupts between the calls of one expression),
inputs read from table columns (the executor, where constants would have been
folded by the planner), memory rather than time, aggregates, window functions,
set-returning functions, array casts and planner work, and literals whose
printed form is far larger than their text. A ``StatementProbe`` is one whole
``SELECT`` with a size ``{n}`` in it; ``statement_catalogue`` holds them.

Each probe runs on a new connection under ``statement_timeout = <limit>``
at growing sizes until it *overruns*: its backend stays busy past limit + grace
(``interrupt_measure.GRACE_SECONDS``) or its memory grows by more than
``MEMORY_LIMIT_MB``. An overrun by time of less than
``interrupt_measure.CLEAR_OVERRUN_SECONDS`` past the limit is run again, and
must overrun again; if it does not, growing goes on. Growing also ends after two prompt cancels in a row
(within ``PROMPT_CANCEL_SECONDS`` of the limit: it *stops*), at an error (a size limit of PostgreSQL, or a broken probe
when the first size fails), at the probe's largest size, or when the next size
could take the backend past ``SAFE_MEMORY_MB`` (peak × the probe's
``memory_growth`` per step): the server is shared. A statement that has not
answered after --max-seconds is abandoned (its connection closed) and its
backend watched until it ends, so its busy time is still measured.

With a gateway (``interrupt_gateway``), the deciding size is then sent through
``POST /GetData`` as a user would: the answer's status and error code say
whether the guard accepted it, and when it ran, its backend's busy time and
peak memory are measured the same way (``interrupt_backend``).
"""

from __future__ import annotations

import enum
import select
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs
import psycopg2
import psycopg2.extensions

from scripts.interrupt_backend import POLL_SECONDS, ActivityMonitor, MemoryPeak
from scripts.interrupt_gateway import Answer, Gateway
from scripts.interrupt_measure import CLEAR_OVERRUN_SECONDS, GRACE_SECONDS, Limits
from scripts.interrupt_runner import APPLICATION_NAME, Outcome, ScratchDatabase, first_line

MEMORY_LIMIT_MB = 500.0
"""A backend whose resident memory grew by more than this overran (issue 19: "memory over a threshold such as
500 MB"); growth, not the peak, because a gateway's pooled backend starts with what earlier statements left."""
SAFE_MEMORY_MB = 2500.0
"""No size is tried whose predicted peak (last peak × memory_growth) passes this: the server is shared."""
CANCELS_TO_STOP = 2
"""Growing ends after this many prompt cancels in a row."""
PROMPT_CANCEL_SECONDS = 0.25
"""A cancel this soon after the limit is prompt; a later one (still within the grace) shows some part that does not
check for interrupts, which a larger size may make overrun, so it does not count toward stopping."""
DRAIN_SECONDS = 120.0
"""How long an abandoned backend is watched until it ends (its busy time is then known)."""


class Dimension(enum.Enum):
    """What issue 19 says the first audit missed."""

    MANY_CALLS = "many_calls"
    """Several calls of a linear built-in in one expression over one large value."""
    EXECUTOR = "executor"
    """Inputs read or computed from table columns (not folded by the planner)."""
    PRINTED_SIZE = "printed_size"
    """Literals whose text is short but whose value prints long (numbers with large exponents)."""
    ESCAPING = "escaping"
    """Functions nested so each doubles (or more) its input by escaping, over a literal the guard calls bounded."""
    MEMORY = "memory"
    """Built-ins that take a lot of memory from a small query."""
    AGGREGATE = "aggregate"
    WINDOW = "window"
    SET_RETURNING = "set_returning"
    ARRAY_CAST = "array_cast"
    PLANNER = "planner"
    """Work done while planning (``= ANY`` of a big constant array, long ``IN`` lists)."""


AUDIT_TABLES_SQL = """
CREATE TABLE public.audit_one (id integer PRIMARY KEY);
CREATE TABLE public.audit_rows (id integer PRIMARY KEY, cat integer NOT NULL);
CREATE TABLE public.audit_values (size integer PRIMARY KEY, body text NOT NULL, doc json NOT NULL, list integer[] NOT NULL);
"""
"""The audit's tables, empty (the guard's tests type the audit's statements against them)."""

SETUP_SQL = AUDIT_TABLES_SQL + """
INSERT INTO public.audit_one VALUES (1);
INSERT INTO public.audit_rows SELECT i, i % 1000 FROM generate_series(1, 100000) i;
ALTER TABLE public.audit_rows ALTER COLUMN cat SET STATISTICS 1000;
ANALYZE public.audit_rows;
INSERT INTO public.audit_values
SELECT s, repeat('a', s), ('[' || repeat('1,', s - 1) || '1]')::json, array_fill(1, ARRAY[s])
FROM unnest(ARRAY[262144, 524288, 1048576, 2097152, 4194304, 8388608, 16777216]) s;
"""
"""The scratch database's tables (the gateway registers and grants all three):

- ``audit_one``: one row, so ``{n} + o.id - o.id`` is a size the planner cannot fold;
- ``audit_rows``: 100 000 rows, ``cat`` with 1 000 values and a 1 000-entry statistics target (planner probes);
- ``audit_values``: stored large values, one row per size: ``body`` text of ``size`` characters, ``doc`` a json
  array of ``size`` elements, ``list`` an integer array of ``size`` elements.
"""
AUDIT_TABLES = frozenset({("public", "audit_one"), ("public", "audit_rows"), ("public", "audit_values")})
"""The tables SETUP_SQL makes, as (schema, table): the gateway grants them all to the audit's token."""
STORED_SIZES = (262144, 524288, 1048576, 2097152, 4194304, 8388608, 16777216)
"""The sizes ``audit_values`` holds."""


@attrs.frozen
class StatementProbe:
    """One statement, run at growing sizes."""

    dimension: Dimension
    name: str
    build: Callable[[int], str] = attrs.field(repr=False)
    """The statement at a size."""
    sizes: tuple[int, ...]
    """The sizes tried, smallest first."""
    unit: str
    example: str = ""
    """Which of issue 19's examples it reproduces, if one."""
    memory_growth: float = 2.0
    """How much the peak memory may grow from one size to the next (the safety check's factor)."""
    harmless: str = ""
    """Why the guard may accept it although it overran, with the evidence (empty: it may not)."""

    def statement(self, size: int) -> str:
        return self.build(size)


def template(text: str) -> Callable[[int], str]:
    """A builder from a text with ``{n}`` for the size (every other brace is SQL)."""
    return lambda size: text.replace("{n}", str(size))


@attrs.frozen
class StatementRun:
    """One statement, direct or through the gateway: its answer, how long its backend was busy, its peak memory."""

    size: int
    route: str
    """``direct`` or ``gateway``."""
    outcome: Outcome | None
    """How the database answered (None: through the gateway, where ``http_status`` says)."""
    seconds: float
    """From sending the statement (or request) to its answer."""
    busy_seconds: float | None
    """From sending until the backend was no longer active; None when no backend ran it (refused)."""
    peak_mb: float | None
    """The backend's peak resident size (interrupt_backend: VmHWM after a reset)."""
    anon_mb: float | None
    memory_method: str | None
    grown_mb: float | None = None
    """Peak minus the backend's resident size when the statement began: what the statement took."""
    sqlstate: str | None = None
    message: str | None = None
    http_status: int | None = None
    error_code: str | None = None
    still_running: bool = False
    """The backend was still busy when the watch gave up (busy_seconds is then a lower bound)."""

    def overran_time(self, limits: Limits) -> bool:
        return self.still_running or (self.busy_seconds or 0.0) > limits.statement_seconds + GRACE_SECONDS

    def overran_memory(self) -> bool:
        return (self.grown_mb or 0.0) > MEMORY_LIMIT_MB

    def overran(self, limits: Limits) -> bool:
        return self.overran_time(limits) or self.overran_memory()

    def as_json(self) -> dict[str, Any]:
        fields = {
            "size": self.size,
            "route": self.route,
            "outcome": self.outcome.value if self.outcome else None,
            "seconds": round(self.seconds, 3),
            "busy_seconds": None if self.busy_seconds is None else round(self.busy_seconds, 3),
            "peak_mb": self.peak_mb,
            "grown_mb": self.grown_mb,
            "anon_mb": self.anon_mb,
            "memory_method": self.memory_method,
            "sqlstate": self.sqlstate,
            "message": self.message,
            "still_running": self.still_running,
        }
        if self.route == "gateway":
            fields.update(http_status=self.http_status, error_code=self.error_code)
        return fields


class StatementVerdict(enum.Enum):
    STOPS = "stops"
    OVERRUNS = "overruns"
    ERROR = "error"


@attrs.frozen
class StatementFinding:
    probe: StatementProbe
    limits: Limits
    runs: tuple[StatementRun, ...]
    """The direct runs, smallest size first (a borderline overrun followed by its confirming run)."""
    verdict: StatementVerdict
    deciding: StatementRun
    capped: bool = False
    """Growing stopped because the next size could have passed SAFE_MEMORY_MB."""
    gateway: StatementRun | None = None

    @property
    def overran(self) -> list[str]:
        """``time`` and/or ``memory``: how the deciding run (direct or through the gateway) overran."""
        kinds = []
        runs = [run for run in (self.deciding, self.gateway) if run is not None]
        if any(run.overran_time(self.limits) for run in runs):
            kinds.append("time")
        if any(run.overran_memory() for run in runs):
            kinds.append("memory")
        return kinds

    def as_json(self) -> dict[str, Any]:
        probe, deciding = self.probe, self.deciding
        gateway = self.gateway
        return {
            "dimension": probe.dimension.value,
            "name": probe.name,
            "example": probe.example or None,
            "harmless": probe.harmless or None,
            "verdict": self.verdict.value,
            "overran": self.overran,
            "unit": probe.unit,
            "size": deciding.size,
            "statement": probe.statement(deciding.size),
            "statement_bytes": len(probe.statement(deciding.size).encode()),
            "busy_seconds": deciding.busy_seconds,
            "overrun_seconds": round(max(0.0, (deciding.busy_seconds or 0.0) - self.limits.statement_seconds), 3),
            "peak_mb": deciding.peak_mb,
            "grown_mb": deciding.grown_mb,
            "capped": self.capped,
            "gateway": None if gateway is None else {
                "accepted": gateway.error_code != "query_rejected" and gateway.http_status not in (None, 0),
                **gateway.as_json(),
                "overrun_seconds": None if gateway.busy_seconds is None else
                round(max(0.0, gateway.busy_seconds - self.limits.statement_seconds), 3),
            },
            "sizes": list(probe.sizes),
            "runs": [run.as_json() for run in self.runs],
        }


class StatementRunner:
    """Runs statement probes in one scratch database (and through one gateway, if given)."""

    def __init__(self, database: ScratchDatabase, limits: Limits, monitor: ActivityMonitor,
                 gateway: Gateway | None = None) -> None:
        self.database = database
        self.limits = limits
        self.monitor = monitor
        self.gateway = gateway

    # -- one statement ---------------------------------------------------------------------------------

    def direct(self, sql: str, size: int) -> StatementRun:
        """``sql`` on a new connection of its own, its backend watched from the monitor's."""
        options = psycopg2.extensions.parse_dsn(self.database.dsn)
        options["dbname"] = self.database.name
        connection = psycopg2.connect(
            **options, async_=True, application_name=APPLICATION_NAME,
            options=f"-c statement_timeout={round(self.limits.statement_seconds * 1000)}",
        )
        peak = MemoryPeak()
        abandoned = False
        try:
            self._drive(connection, time.monotonic() + 10, None, None)
            pid = connection.get_backend_pid()
            peak.reset([pid])
            cursor = connection.cursor()
            started = time.monotonic()
            cursor.execute(sql)
            outcome, sqlstate, message = Outcome.COMPLETED, None, None
            try:
                self._drive(connection, started + self.limits.max_seconds, pid, peak)
            except TimeoutError:
                outcome, abandoned = Outcome.ABANDONED, True
            except psycopg2.extensions.QueryCanceledError as error:
                outcome, sqlstate = Outcome.CANCELLED, error.pgcode
            except psycopg2.Error as error:
                outcome, sqlstate, message = Outcome.ERROR, error.pgcode, first_line(error)
            answered = time.monotonic()
            peak.sample(pid)
        except KeyboardInterrupt:
            self.database.abandoned.append(connection.get_backend_pid())
            raise
        finally:
            connection.close()
        busy: float | None = answered - started
        still_running = False
        if abandoned:
            ended = self.monitor.wait_until_not_active(pid, time.monotonic() + DRAIN_SECONDS, peak)
            if ended is None:
                self.database.abandoned.append(pid)
                still_running, busy = True, time.monotonic() - started
            else:
                busy = ended - started
        return StatementRun(size, "direct", outcome, answered - started, busy, peak.rss_mb, peak.anon_mb,
                            peak.method.value, peak.grown_mb, sqlstate, message, still_running=still_running)

    @staticmethod
    def _drive(connection: psycopg2.extensions.connection, deadline: float, pid: int | None,
               peak: MemoryPeak | None) -> None:
        """Poll an asynchronous connection until its operation is done (sampling ``pid``); TimeoutError at deadline."""
        while True:
            state = connection.poll()
            if state == psycopg2.extensions.POLL_OK:
                return
            if peak is not None and pid is not None:
                peak.sample(pid)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            wait = min(remaining, POLL_SECONDS)
            if state == psycopg2.extensions.POLL_READ:
                select.select([connection.fileno()], [], [], wait)
            elif state == psycopg2.extensions.POLL_WRITE:
                select.select([], [connection.fileno()], [], wait)

    def through_gateway(self, sql: str, size: int) -> StatementRun:
        """``sql`` through POST /GetData; the pool's backends in the scratch database watched meanwhile."""
        assert self.gateway is not None
        gateway = self.gateway
        gateway.restart()  # a new pool, so a new backend: its memory is this statement's own
        peak = MemoryPeak()
        peak.reset(self.monitor.client_backends(self.database.name))
        answers: list[Answer] = []
        request = threading.Thread(
            target=lambda: answers.append(gateway.get_data(sql, timeout=self.limits.max_seconds + DRAIN_SECONDS)),
            daemon=True,
        )
        started = time.monotonic()
        request.start()
        deadline = started + self.limits.max_seconds + DRAIN_SECONDS
        seen_active: float | None = None
        ended: float | None = None
        while time.monotonic() < deadline:
            backends = self.monitor.client_backends(self.database.name)
            for pid in backends:
                peak.sample(pid)
            active = any(state == "active" for state in backends.values())
            now = time.monotonic()
            if active:
                seen_active, ended = now, None
            elif seen_active is not None and ended is None:
                ended = now
            if not request.is_alive() and not active:
                break
            time.sleep(POLL_SECONDS)
        request.join(timeout=1)
        still_running = request.is_alive() or (seen_active is not None and ended is None)
        answer = answers[0] if answers else Answer(0, None, "no answer", time.monotonic() - started)
        if answer.error == "query_rejected":
            busy = None
        elif seen_active is None:
            busy = answer.seconds  # ran between two polls
        else:
            busy = (ended if ended is not None else time.monotonic()) - started
        ran = busy is not None
        return StatementRun(size, "gateway", None, answer.seconds, busy, peak.rss_mb if ran else None,
                            peak.anon_mb if ran else None, peak.method.value, peak.grown_mb if ran else None, None,
                            answer.message, http_status=answer.status, error_code=answer.error,
                            still_running=still_running)

    # -- one probe -------------------------------------------------------------------------------------

    def audit(self, probe: StatementProbe) -> StatementFinding:
        runs: list[StatementRun] = []
        cancels, capped = 0, False
        verdict = StatementVerdict.STOPS
        for index, size in enumerate(probe.sizes):
            run = self.direct(probe.statement(size), size)
            runs.append(run)
            if run.overran(self.limits):
                if run.overran_memory() or (run.busy_seconds or 0.0) >= (
                        self.limits.statement_seconds + CLEAR_OVERRUN_SECONDS):
                    verdict = StatementVerdict.OVERRUNS
                    break
                runs.append(self.direct(probe.statement(size), size))  # borderline: confirm
                if runs[-1].overran(self.limits):
                    verdict = StatementVerdict.OVERRUNS
                    break
                continue  # not confirmed: the next size tells

            if run.outcome is Outcome.ERROR:
                verdict = StatementVerdict.ERROR if index == 0 else StatementVerdict.STOPS
                break
            prompt = (run.outcome is Outcome.CANCELLED
                      and (run.busy_seconds or 0.0) <= self.limits.statement_seconds + PROMPT_CANCEL_SECONDS)
            cancels = cancels + 1 if prompt else 0
            if cancels == CANCELS_TO_STOP:
                break
            if (run.peak_mb or 0.0) * probe.memory_growth > SAFE_MEMORY_MB and index + 1 < len(probe.sizes):
                capped = True
                break
        deciding = runs[-1]
        gateway = self.through_gateway(probe.statement(deciding.size), deciding.size) if self.gateway else None
        return StatementFinding(probe, self.limits, tuple(runs), verdict, deciding, capped, gateway)
