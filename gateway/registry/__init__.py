"""The registry: which databases are registered, their tables' local names, and grants.

``protocol.Registry`` is what the app uses; ``store.FileRegistryStore`` keeps it in a JSON file.
"""

from __future__ import annotations

from gateway.registry.models import DatabaseRecord, RegistryState, TableAddress, TableRecord
from gateway.registry.protocol import (
    Registry,
    RegistryLoadError,
    RegistryNotEmpty,
    RegistryStatus,
    RegistryUnreachable,
)
from gateway.registry.store import FileRegistryStore

__all__ = [
    "DatabaseRecord",
    "FileRegistryStore",
    "Registry",
    "RegistryLoadError",
    "RegistryNotEmpty",
    "RegistryState",
    "RegistryStatus",
    "RegistryUnreachable",
    "TableAddress",
    "TableRecord",
]
