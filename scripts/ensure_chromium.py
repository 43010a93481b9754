"""Make sure the console's browser tests have a Chromium; install Debian's package where it is missing.

Exit 0 when a browser is found (``DBGATEWAY_CHROMIUM``, else ``chromium``,
``chromium-browser``, ``google-chrome`` or ``google-chrome-stable`` on the PATH)
or has just been installed with ``apt-get install -y chromium`` (as root, with
``apt-get update`` first only if the install fails on a stale package list);
otherwise print exactly why and exit 3. ``make test`` runs it after
``ensure_postgres.py``, as it does for PostgreSQL: a test machine needs nothing
set up by hand. The tests use the system's browser rather than one a Python
package downloads (docs/console.md, "Tests").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""What the browser's command may be called; ``DBGATEWAY_CHROMIUM`` names another."""

PACKAGE = "chromium"
"""Debian's package (bookworm and later; Ubuntu's chromium-browser is a snap stub, so Debian's is what we name)."""


def find_chromium() -> str | None:
    """The browser's command: ``DBGATEWAY_CHROMIUM`` when set (it must exist), else the first of ``NAMES``."""
    named = os.environ.get("DBGATEWAY_CHROMIUM")
    if named:
        return shutil.which(named)
    return next((found for name in NAMES if (found := shutil.which(name))), None)


def apt_get(*arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", *arguments], capture_output=True, text=True, env=environment, check=False)


def install() -> str | None:
    """Install Debian's chromium; None when done, else why it could not be."""
    if shutil.which("apt-get") is None:
        return "apt-get is not available here (not Debian or Ubuntu)"
    if os.geteuid() != 0:
        return f"installing needs root: run `sudo apt-get install -y {PACKAGE}`"
    result = apt_get("install", "-y", PACKAGE)
    if result.returncode != 0:  # a package list that is missing or stale: update it once and try again
        apt_get("update")
        result = apt_get("install", "-y", PACKAGE)
    if result.returncode != 0:
        return f"apt-get install -y {PACKAGE} failed: {result.stderr.strip()[-500:]}"
    return None


def main() -> int:
    if os.environ.get("DBGATEWAY_CHROMIUM") and find_chromium() is None:
        print(f"DBGATEWAY_CHROMIUM={os.environ['DBGATEWAY_CHROMIUM']} names no command", file=sys.stderr)
        return 3
    if find_chromium() is not None:
        return 0
    print(f"The console's browser tests need Chromium; installing Debian's {PACKAGE} package...", file=sys.stderr)
    reason = install()
    found = find_chromium()
    if reason is None and found is not None:
        print(f"Chromium installed: {found}", file=sys.stderr)
        return 0
    print(
        "The console's browser tests need a Chromium and none could be had.\n"
        f"  reason: {reason or 'the package installed, but no chromium command is on the PATH'}\n"
        f"Install it (Debian: apt-get install -y {PACKAGE}), or set DBGATEWAY_CHROMIUM to a Chromium or Chrome command.",
        file=sys.stderr,
    )
    return 3


if __name__ == "__main__":
    sys.exit(main())
