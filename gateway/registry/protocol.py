"""What the gateway needs from the place that keeps its registry: the ``Registry`` protocol.

Two stores implement it, chosen by the setting ``registry_url``:

- ``FileRegistryStore`` (``store.py``): a JSON file, shared by the gateway
  processes of one host through ``flock``; the embedded default.
- ``PostgresRegistryStore`` (``postgres_store.py``): a schema of its own in a
  PostgreSQL database, shared by gateways on several hosts.

Both keep the registry's content as a ``RegistryState`` in memory, so reading
it (``state``) costs no I/O, and both apply a change the same way: ``update``
calls a ``change`` function on the current state and saves what it returns, so
``models.RegistryState`` alone says what a change does. Both store the file
format's JSON (``file_format``) with passwords sealed by ``secret_key``.

The blocking methods (``open``, ``rotate_key``, ``read_existing``,
``replace``) run at start-up and in the ``dbgateway`` commands, never while
requests are served.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Protocol, TypeVar

import structlog

from gateway.registry.models import RegistryState

T = TypeVar("T")

Change = Callable[[RegistryState], tuple[RegistryState, T]]
"""A change: the new state (the same object when nothing changes) and what the caller answers."""


class RegistryStatus(enum.StrEnum):
    """How the registry stands, as ``GET /readyz`` reports it in its ``registry`` field."""

    LOADED = "loaded"
    """In step with the stored registry; changes are saved."""
    UNAVAILABLE = "unavailable"
    """The registry database cannot be reached: the state held is served, changes answer 503."""
    UNWRITABLE = "unwritable"
    """The last change could not be written (storage full); the registry is as it was until a write succeeds."""
    STALE = "stale"
    """Out of reach for longer than ``registry_max_staleness``: the state held may have been changed elsewhere
    (a revoked grant), so the gateway answers 503 instead of serving from it, and is not ready."""


class RegistryLoadError(Exception):
    """The stored registry exists but cannot be used; the gateway must not start over it, nor overwrite it."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where} cannot be loaded: {problem}; it was left as it is")
        self.where = where


class RegistryUnreachable(Exception):
    """The registry database does not answer now; the message says where (never with a password) and why."""


class RegistryRefused(Exception):
    """The registry database answered and refused the account or database ``registry_url`` names (no such
    database or role, authentication failed, no pg_hba.conf entry): a setting to fix, which a restart will not."""


class RegistryNotEmpty(Exception):
    """``replace`` without ``force`` found a registry holding databases, tables, grants or minted tokens."""


def is_empty(state: RegistryState) -> bool:
    """True when replacing ``state`` loses nothing but its token salt (no token hash depends on it)."""
    return not (state.databases or state.tables or state.grants or state.minted_tokens)


class Registry(Protocol):
    """A registry store, as the app, the handlers and the commands use it."""

    @property
    def location(self) -> str:
        """Where the registry is, for messages: ``registry file PATH`` or ``registry database URL`` (no password)."""

    @property
    def state(self) -> RegistryState:
        """The registry's content as held now; no I/O beyond a file's ``stat``."""

    @property
    def status(self) -> RegistryStatus:
        """Whether the store is in step and writable, or too long out of step to be served from (``stale``)."""

    @property
    def unconfirmed_seconds(self) -> float:
        """Seconds since the store last confirmed that the state held is the stored one (0 for a file)."""

    @property
    def encrypts_passwords(self) -> bool:
        """True when passwords are stored encrypted (a secret key was given)."""

    def open(self) -> RegistryState:
        """Load the registry, creating an empty one when there is none; blocking, at start-up."""

    def watch(self, callback: Callable[[RegistryState], None]) -> None:
        """Call ``callback`` with every state loaded from now on, changes made elsewhere included."""

    async def start(self, logger: structlog.typing.FilteringBoundLogger) -> None:
        """Begin following changes made elsewhere, on the running event loop."""

    async def close(self) -> None:
        """Stop following changes and close connections."""

    async def update(self, change: Change[T]) -> T:
        """Apply ``change`` to the current stored state and save its result before returning.

        Raises what ``change`` raises (nothing is saved then), ``RegistryUnavailable``
        (503) or ``RegistryUnwritable`` (507) when the result cannot be saved.
        """

    def rotate_key(self, new_key: str) -> int:
        """Store every password sealed under ``new_key``; how many there are. Blocking."""

    def read_existing(self) -> RegistryState:
        """The stored registry, without creating one (``RegistryLoadError`` when there is none). Blocking."""

    def replace(self, state: RegistryState, *, force: bool) -> None:
        """Store ``state`` as the whole registry; ``RegistryNotEmpty`` unless empty or ``force``. Blocking."""
