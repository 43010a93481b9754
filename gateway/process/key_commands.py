"""``dbgateway generate-key`` and ``dbgateway rotate-key``: the key that encrypts passwords at rest.

``rotate-key`` reads the registry with the old key (by default the configured
``secret_key``; none when it holds clear passwords), and rewrites it with every
password encrypted under the new key: a file under the registry's file lock,
replaced atomically; a PostgreSQL registry in one transaction. When the old key
does not open it, it exits non-zero and the registry stays as it was. Gateways
serving the registry keep the old key in memory: restart them with the new one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet

from gateway.settings.config import ConfigError, load_config
from gateway.registry import RegistryLoadError, RegistryRefused, RegistryUnreachable, open_registry
from gateway.registry.secrets_at_rest import generate_key

EXIT_FAILED = 2


def add_key_commands(commands: Any) -> None:
    """Add ``generate-key`` and ``rotate-key`` to the ``dbgateway`` sub-command parser."""
    commands.add_parser(
        "generate-key",
        help="print a new key for the secret_key setting",
        description="Print a new random Fernet key for the secret_key setting (DBGATEWAY_SECRET_KEY).",
    )
    rotate = commands.add_parser(
        "rotate-key",
        help="re-encrypt the registry's passwords under a new key",
        description="Re-encrypt every database password in the registry under --new-key, atomically and "
        "under the registry lock. Then set secret_key to the new key and restart every gateway using the registry. "
        "Write keys as --new-key=KEY: a key may begin with '-'.",
    )
    # A key may begin with "-", which argparse takes for an option unless written --new-key=KEY.
    rotate.add_argument(
        "--new-key", required=True, metavar="KEY", help="the key to encrypt with from now on; write --new-key=KEY"
    )
    rotate.add_argument(
        "--old-key", metavar="KEY",
        help="the key the file is encrypted with now, written --old-key=KEY (default: the configured secret_key; "
        "without one, the file must hold clear passwords)",
    )
    rotate.add_argument(
        "--config", type=Path, metavar="FILE", help="TOML settings file; default: $DBGATEWAY_CONFIG if set, else none"
    )
    rotate.add_argument("--data-dir", type=Path, metavar="D", help="folder of registry.json (default ./data)")
    rotate.add_argument(
        "--registry-url", metavar="URL", help="the registry, if not the file: file:PATH or postgresql://..."
    )


def run_key_command(arguments: argparse.Namespace) -> int:
    """Run ``generate-key`` or ``rotate-key``; the process exit code."""
    if arguments.command == "generate-key":
        print(generate_key())
        return 0
    return _rotate_key(arguments)


def _rotate_key(arguments: argparse.Namespace) -> int:
    try:
        config = load_config(
            arguments.config, overrides={"data_dir": arguments.data_dir, "registry_url": arguments.registry_url}
        )
        new_key = _valid_key("--new-key", arguments.new_key)
        old_key = _valid_key("--old-key", arguments.old_key) if arguments.old_key is not None else config.secret_key
        store = open_registry(config.registry_location, old_key)
        count = store.rotate_key(new_key)
    except (ConfigError, RegistryLoadError, RegistryRefused, RegistryUnreachable) as error:
        print(f"dbgateway rotate-key: {error}", file=sys.stderr)
        if _old_key_missing(error, arguments):
            print("dbgateway rotate-key: give the key the file is encrypted with as --old-key", file=sys.stderr)
        return EXIT_FAILED
    print(
        f"re-encrypted {count} database password(s) in the {store.location} under the new key; "
        "set secret_key to it and restart every gateway using this registry"
    )
    return 0


def _old_key_missing(error: Exception, arguments: argparse.Namespace) -> bool:
    """True when the file could not be read because no old key was given or configured."""
    return isinstance(error, RegistryLoadError) and arguments.old_key is None and "no secret_key" in str(error)


def _valid_key(option: str, key: str) -> str:
    try:
        Fernet(key.strip())
    except (ValueError, TypeError):
        raise ConfigError(
            f"{option} is not a Fernet key (32 bytes in URL-safe base64); make one with `dbgateway generate-key`"
        ) from None
    return key.strip()
