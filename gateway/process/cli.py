"""The ``dbgateway`` command: ``dbgateway serve`` runs the gateway until Ctrl-C, SIGTERM or SIGHUP.

A start that fails is one line on stderr. Exit status 2: a setting, the
registry's content, the data folder or the listening address cannot be used, or
the registry database refuses the account or database ``registry_url`` names (a
restart will not help). Exit status 1: the registry database does not answer (a
restart may).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from gateway import __version__
from gateway.web.app import create_app
from gateway.process.banner import announce
from gateway.settings.config import ConfigError, LoadedConfig, load_settings
from gateway.process.config_command import run_config_command
from gateway.process.key_commands import add_key_commands, run_key_command
from gateway.web.keys import LOGGER
from gateway.registry import RegistryLoadError, RegistryRefused, RegistryUnreachable
from gateway.process.registry_commands import add_registry_commands, run_registry_command
from gateway.process.serving import StartupError, listening_sockets, prepare_data_dir, serve, worker_sockets
from gateway.process.workers import WorkerSupervisor


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dbgateway",
        description="An HTTP gateway that lets token holders run read-only SQL over the tables an administrator granted.",
    )
    parser.add_argument("--version", action="version", version=f"dbgateway {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = commands.add_parser(
        "serve",
        help="run the HTTP gateway",
        description="Run the HTTP gateway. Settings come from defaults, then the config file, then DBGATEWAY_* "
        "environment variables, then these options.",
    )
    add_setting_options(serve)
    show = commands.add_parser(
        "config",
        help="print the settings in effect and where each came from",
        description="Print every setting as `serve` with the same options would use it, and where it came from "
        "(default, file, environment, option); secrets show as [set]. Checks the settings and each driver's options "
        "as `serve` does: exit status 2 with the same sentence when one is invalid; start-up warnings on stderr.",
    )
    add_setting_options(show)
    add_key_commands(commands)
    add_registry_commands(commands)
    return parser


def add_setting_options(command: argparse.ArgumentParser) -> None:
    """The options ``serve`` and ``config`` share; each overrides a setting (see ``OPTION_FLAGS``)."""
    command.add_argument(
        "--config", type=Path, metavar="FILE", help="TOML settings file (see config/gateway.example.toml); "
        "default: $DBGATEWAY_CONFIG if set, else none"
    )
    command.add_argument("--host", metavar="H", help="address to listen on (default 127.0.0.1)")
    command.add_argument("--port", type=int, metavar="P", help="port to listen on (default 8080)")
    command.add_argument("--workers", type=int, metavar="N", help="serving processes sharing the port (default 1)")
    command.add_argument(
        "--log-level", metavar="LEVEL", help="lowest level logged: debug, info, warning or error (default info)"
    )
    command.add_argument(
        "--data-dir", type=Path, metavar="D",
        help="folder of registry.json and the generated admin_token file (default ./data)",
    )
    command.add_argument(
        "--registry-url", metavar="URL",
        help="where the registry is: file:PATH, or postgresql://user:password@host:port/dbname for a registry shared "
        "by several gateways (default: the file <data-dir>/registry.json); prefer DBGATEWAY_REGISTRY_URL when the "
        "URL holds a password",
    )


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    if arguments.command in {"generate-key", "rotate-key"}:
        return run_key_command(arguments)
    if arguments.command == "registry":
        return run_registry_command(arguments)
    try:
        loaded = load_settings(
            arguments.config,
            overrides={
                "listen_host": arguments.host,
                "listen_port": arguments.port,
                "workers": arguments.workers,
                "log_level": arguments.log_level,
                "data_dir": arguments.data_dir,
                "registry_url": arguments.registry_url,
            },
        )
        if arguments.command == "config":
            return run_config_command(loaded)
        return run_serve(loaded)
    except (ConfigError, RegistryLoadError, RegistryRefused, StartupError) as error:
        print(f"dbgateway: {error}", file=sys.stderr)
        return 2
    except RegistryUnreachable as error:
        print(f"dbgateway: {error}", file=sys.stderr)
        return 1


def run_serve(loaded: LoadedConfig) -> int:
    """``dbgateway serve``: check the data folder, bind, build the app, then serve until told to stop."""
    config = loaded.config
    prepare_data_dir(config)
    # Bound before anything else, so a taken port is one sentence on stderr and nothing claims to listen.
    bound = worker_sockets(config, config.workers) if config.workers > 1 else [listening_sockets(config)]
    app = create_app(config)
    # The app built above checked the settings and the registry once; each worker builds its own.
    supervisor = WorkerSupervisor(config, create_app, app[LOGGER], bound) if config.workers > 1 else None
    for warning in loaded.warnings:
        app[LOGGER].warning("config_warning", message=warning)
    announce(app, loaded)
    return supervisor.run() if supervisor is not None else serve(app, config, bound[0])


if __name__ == "__main__":
    sys.exit(main())
