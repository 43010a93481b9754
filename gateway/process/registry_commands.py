"""``dbgateway registry copy --from URL --to URL``: move a registry between a file and a PostgreSQL database.

Both URLs are written as the setting ``registry_url`` is (``file:PATH`` or
``postgresql://...``). The source is read with the configured ``secret_key``
and the target written with it, so sealed passwords stay sealed (clear ones
stay clear in a file without a key; a PostgreSQL target needs the key). The
whole registry is copied, token salt included, so every token keeps working. A
target that already holds a registry with content is left alone unless
``--force``; a PostgreSQL target gets its tables on the way, and the gateways
following it reload within a second.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gateway.registry import (
    RegistryKind,
    RegistryLoadError,
    RegistryLocation,
    RegistryNotEmpty,
    RegistryRefused,
    RegistryState,
    RegistryUnreachable,
    open_registry,
)
from gateway.settings.config import POSTGRESQL_NEEDS_KEY, ConfigError, load_config

EXIT_FAILED = 2


def add_registry_commands(commands: Any) -> None:
    """Add ``registry copy`` to the ``dbgateway`` sub-command parser."""
    registry = commands.add_parser(
        "registry",
        help="move the registry between a file and a PostgreSQL database",
        description="Commands on a registry as a whole.",
    )
    actions = registry.add_subparsers(dest="registry_command", metavar="ACTION", required=True)
    copy = actions.add_parser(
        "copy",
        help="copy a whole registry from one place to another",
        description="Copy the whole registry (databases, local table names, grants, minted tokens and the token "
        "salt) from --from to --to, each written file:PATH or postgresql://user:password@host:port/dbname. "
        "Passwords are read and written with the configured secret_key.",
    )
    copy.add_argument("--from", dest="source", required=True, metavar="URL", help="the registry to read")
    copy.add_argument("--to", dest="target", required=True, metavar="URL", help="where to write it")
    copy.add_argument(
        "--force", action="store_true", help="replace a target that already holds databases, grants or tokens"
    )
    copy.add_argument(
        "--config", type=Path, metavar="FILE", help="TOML settings file (for secret_key); default: $DBGATEWAY_CONFIG"
    )


def run_registry_command(arguments: argparse.Namespace) -> int:
    """Run ``registry copy``; the process exit code."""
    try:
        config = load_config(arguments.config)
        source = _location("--from", arguments.source)
        target = _location("--to", arguments.target)
        if source == target:
            raise ConfigError("--from and --to name the same registry")
        if target.kind is RegistryKind.POSTGRESQL and config.secret_key is None:
            raise ConfigError(POSTGRESQL_NEEDS_KEY)
        state = open_registry(source, config.secret_key).read_existing()
        open_registry(target, config.secret_key).replace(state, force=arguments.force)
    except RegistryNotEmpty as error:
        print(f"dbgateway registry copy: {error}; add --force to replace it", file=sys.stderr)
        return EXIT_FAILED
    except (ConfigError, RegistryLoadError, RegistryRefused, RegistryUnreachable) as error:
        print(f"dbgateway registry copy: {error}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as error:
        print(f"dbgateway registry copy: cannot write {target.display}: {error.strerror or error}", file=sys.stderr)
        return EXIT_FAILED
    sealing = "encrypted with secret_key" if config.secret_key else "in clear (no secret_key)"
    print(f"copied {_summary(state)} from {source.display} to {target.display}; passwords {sealing}")
    return 0


def _location(option: str, text: str) -> RegistryLocation:
    try:
        return RegistryLocation.parse(text)
    except ValueError as error:
        raise ConfigError(f"{option}: {error}") from None


def _summary(state: RegistryState) -> str:
    grants = sum(len(tables) for tables in state.grants.values())
    return (
        f"{len(state.databases)} database(s), {len(state.tables)} table(s), {grants} grant(s) to "
        f"{len(state.grants)} token(s) and {len(state.minted_tokens)} minted token(s)"
    )
