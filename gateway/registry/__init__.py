"""The registry: which databases are registered, their tables' local names, and grants.

``protocol.Registry`` is what the app uses; ``location.open_registry`` picks the
store (a JSON file, or a PostgreSQL database shared by replicas) for a location.

May import: ``gateway.errors`` and ``gateway.contract`` (a database's connection
and catalog are the driver contract's types); the settings above it read its
locations.
"""

from __future__ import annotations

from gateway.registry.location import RegistryKind, RegistryLocation, open_registry
from gateway.registry.models import (
    NO_LIMITS,
    DatabaseRecord,
    GrantLimits,
    RegistryState,
    TableAddress,
    TableRecord,
    utc_now,
)
from gateway.registry.protocol import (
    Registry,
    RegistryLoadError,
    RegistryNotEmpty,
    RegistryRefused,
    RegistryStatus,
    RegistryUnreachable,
)
from gateway.registry.store import FileRegistryStore

__all__ = [
    "DatabaseRecord",
    "FileRegistryStore",
    "GrantLimits",
    "NO_LIMITS",
    "Registry",
    "RegistryKind",
    "RegistryLoadError",
    "RegistryLocation",
    "RegistryNotEmpty",
    "RegistryRefused",
    "RegistryState",
    "RegistryStatus",
    "RegistryUnreachable",
    "TableAddress",
    "TableRecord",
    "open_registry",
    "utc_now",
]
