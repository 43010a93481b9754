"""Finding drivers by ``base_type`` through the ``dbgateway.drivers`` entry-point group; the fields they declare."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import attrs
import structlog

from gateway.settings.config import ConfigError
from gateway.contract.connection_fields import ConnectionField, declaration_problem, secret_names
from gateway.contract.driver_protocol import Driver
from gateway.errors import UnsupportedBaseType

ENTRY_POINT_GROUP = "dbgateway.drivers"


def declared_fields(driver: Driver) -> tuple[ConnectionField, ...]:
    """The driver's connection fields; a driver that declares none takes none."""
    return tuple(getattr(driver, "connection_fields", ()))


def connection_parameters(drivers: Iterable[Driver]) -> list[ConnectionField]:
    """Every connection field an installed driver declares, once, in the order first declared (API description).

    A field is ``required`` when every driver declaring it requires it, and secret
    when any does; its kind and description are the first declaring driver's.
    """
    found: dict[str, ConnectionField] = {}
    for driver in drivers:
        for field in declared_fields(driver):
            known = found.get(field.name)
            found[field.name] = field if known is None else attrs.evolve(
                known, required=known.required and field.required, secret=known.secret or field.secret
            )
    return list(found.values())


class DriverCatalog:
    """The installed drivers, each built once with its ``[drivers.<name>]`` options."""

    def __init__(self, drivers: Mapping[str, Driver], failed: Mapping[str, str] | None = None) -> None:
        for name, driver in drivers.items():
            problem = declaration_problem(declared_fields(driver))
            if problem is not None:
                raise ValueError(f"driver {name!r}: {problem}")
        self._drivers = dict(drivers)
        self.failed = dict(failed or {})
        """Installed drivers that could not be loaded or built, by name: why (for the operator's answers)."""

    @classmethod
    def from_entry_points(
        cls, options: Mapping[str, Mapping[str, Any]], logger: structlog.typing.FilteringBoundLogger
    ) -> DriverCatalog:
        drivers: dict[str, Driver] = {}
        failed: dict[str, str] = {}

        def skip(entry: EntryPoint, error: str) -> None:
            logger.error("driver_load_failed", driver=entry.name, target=entry.value, error=error)
            failed[entry.name] = error

        for entry in entry_points(group=ENTRY_POINT_GROUP):
            # One broken plugin must not take the gateway down: it is served without it, the log and
            # AddDatabase for its base_type say why.
            try:
                factory = entry.load()
            except Exception as error:
                skip(entry, f"{type(error).__name__}: {error}")
                continue
            try:
                drivers[entry.name] = factory(options.get(entry.name, {}))
            except ValueError as error:
                if entry.name in options:  # the operator's [drivers.<name>] table is what the driver refuses
                    raise ConfigError(f"[drivers.{entry.name}] is invalid: {error}") from None
                skip(entry, f"it needs a [drivers.{entry.name}] table: {error}")
                continue
            except Exception as error:
                skip(entry, f"{type(error).__name__}: {error}")
                continue
            try:
                problem = declaration_problem(declared_fields(drivers[entry.name]))
            except Exception as error:  # a declaration that is not even a sequence of fields
                problem = f"its connection_fields cannot be read: {type(error).__name__}: {error}"
            if problem is not None:  # the driver's bug, not the operator's: served without it, as if it failed to import
                skip(entry, problem)
                del drivers[entry.name]
                continue
            # Optional hook: a driver may name settings that weaken a protection, for the operator to see.
            for event, fields in getattr(drivers[entry.name], "startup_warnings", list)():
                logger.warning(event, driver=entry.name, **fields)
        unknown = set(options) - set(drivers)
        if unknown:
            logger.warning("driver_options_unused", drivers=sorted(unknown))
        return cls(drivers, failed)

    @property
    def names(self) -> list[str]:
        return sorted(self._drivers)

    @property
    def drivers(self) -> list[Driver]:
        """Every installed driver, by name."""
        return [self._drivers[name] for name in self.names]

    @property
    def refusal_reasons(self) -> frozenset[str]:
        """The refusal reason slugs the installed drivers declare (``refusal_reasons``), for the metric's labels."""
        return frozenset(reason for driver in self.drivers for reason in getattr(driver, "refusal_reasons", ()))

    @property
    def secret_fields(self) -> tuple[str, ...]:
        """The connection field names any installed driver declares secret."""
        return secret_names(declared_fields(driver) for driver in self.drivers)

    @property
    def field_names(self) -> frozenset[str]:
        """Every connection field name an installed driver declares."""
        return frozenset(field.name for driver in self.drivers for field in declared_fields(driver))

    def connection_fields(self, base_type: str) -> tuple[ConnectionField, ...]:
        """The connection fields ``base_type``'s driver declares; ``UnsupportedBaseType`` if none serves it."""
        return declared_fields(self.get(base_type))

    def get(self, base_type: str) -> Driver:
        driver = self._drivers.get(base_type)
        if driver is None:
            served = ", ".join(self.names) or "none"
            if base_type in self.failed:
                raise UnsupportedBaseType(
                    f"the driver for base_type {base_type!r} is installed but failed to load ({self.failed[base_type]}); "
                    f"served: {served}"
                )
            raise UnsupportedBaseType(f"base_type {base_type!r} is not served by an installed driver; served: {served}")
        return driver
