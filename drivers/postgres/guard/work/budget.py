"""The budget of one row's evaluation: the time and memory its calls add up to, held to the limits.

PostgreSQL checks for interrupts between rows, not between the calls that
produce one row, so every call a query level makes for one row (and the
output of the row's values to the client) runs as one stretch that
``statement_timeout`` cannot cut; sub-selects pulled up into the level that
reads them join its stretch (``levels.py``). ``RowBudget`` sums what each
call of every level of the statement costs at the bounded sizes of its
arguments (``costs.py``, ``conversions.py``), times how often it runs per
row, and refuses a statement whose sum, with the administrator's data at
``assumed_data_value_bytes``, passes ``max_expression_milliseconds`` or
``max_expression_memory_bytes``. The refusal names the costliest call.
"""

from __future__ import annotations

from drivers.postgres.guard.model.catalog import Catalog
from drivers.postgres.guard.model.ir import Expr
from drivers.postgres.guard.model.render import describe
from drivers.postgres.guard.model.types import FunctionInfo
from drivers.postgres.guard.policy import GuardLimits
from drivers.postgres.guard.sizes.bounds import Bound
from gateway.errors import QueryRejected, RefusalReason

_WITHOUT_BOUND = 1 << 62


def kib(size: int) -> str:
    """A byte count for people: bytes, KiB or MiB."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    if size >= 1024:
        return f"{size / 1024:.0f} KiB"
    return f"{size} bytes"


class RowBudget:
    """What one row's evaluation at one query level spends, and the call that spends the most time."""

    def __init__(self, limits: GuardLimits, catalog: Catalog) -> None:
        self.limits = limits
        self.catalog = catalog
        self.time = Bound()
        self.memory = Bound()
        self._costliest: tuple[int, Expr | None, str] = (0, None, "it")
        self._largest: tuple[int, str] = (0, "")
        self.repeats = 1
        """How many times what is spent now runs per row (a pulled-up sub-select's column read twice: 2)."""

    def spend(self, expr: Expr, doer: FunctionInfo | str | None, time: Bound, memory: Bound = Bound()) -> None:
        """Count ``time`` (nanoseconds) and ``memory`` (bytes) that ``doer`` spends evaluating ``expr``.

        A memory bound that is unknown counts nothing: the value's own size check refuses what no rule
        bounds, and the time of any call that reads it is unknown too.
        """
        if self.repeats > 1:
            time, memory = time.scaled(self.repeats), memory.scaled(self.repeats)
        self.time = self.time + time
        nanoseconds = self._nanoseconds(time)
        if nanoseconds > self._costliest[0]:
            name = doer.name if isinstance(doer, FunctionInfo) else (doer or "it")
            self._costliest = (nanoseconds, expr, name)
        if not memory.unknown:
            self.memory = self.memory + memory
            taken = memory.value(self.limits.assumed_data_value_bytes)
            if taken > self._largest[0]:
                name = doer.name if isinstance(doer, FunctionInfo) else (doer or "it")
                self._largest = (taken, f"{name} ({describe(expr, self.catalog.type_display)}), up to {kib(taken)}")

    def _nanoseconds(self, time: Bound) -> int:
        return time.value(self.limits.assumed_data_value_bytes) if not time.unknown else _WITHOUT_BOUND

    def check(self) -> None:
        """Raise ``QueryRejected`` if the row's time or memory passes its limit."""
        limits = self.limits
        nominal = limits.assumed_data_value_bytes
        spent = self._nanoseconds(self.time)
        if spent > limits.max_expression_milliseconds * 1_000_000:
            _, expr, name = self._costliest
            shown = describe(expr, self.catalog.type_display) if expr is not None else "a call"
            estimate = "without a bound" if spent >= _WITHOUT_BOUND else f"about {spent / 1e9:.1f} s"
            raise QueryRejected(
                f"{shown} is not allowed: PostgreSQL cannot interrupt {name} while it runs, and at the sizes its "
                f"arguments can have here one row's evaluation could take {estimate}, over the limit of "
                f"{limits.max_expression_milliseconds} ms (max_expression_milliseconds); make the inputs smaller "
                f"(stored data counts as {kib(nominal)} wherever the query multiplies it)",
                reason=RefusalReason.FUNCTION)
        used = self.memory.value(nominal)
        if used > limits.max_expression_memory_bytes:
            raise QueryRejected(
                f"this query can hold up to {kib(used)} of memory at once, over the limit of "
                f"{kib(limits.max_expression_memory_bytes)} (max_expression_memory_bytes); the largest part: "
                f"{self._largest[1]}", reason=RefusalReason.FUNCTION)
