"""The registry: which databases are registered, their tables' local names, and grants."""

from __future__ import annotations

from gateway.registry.models import DatabaseRecord, RegistryState, TableAddress, TableRecord
from gateway.registry.store import RegistryLoadError, RegistryStore

__all__ = ["DatabaseRecord", "RegistryLoadError", "RegistryState", "RegistryStore", "TableAddress", "TableRecord"]
