"""Temporary files of registry writes that never finished, removed safely.

A write of the registry file goes to ``.<name>.<8 random characters>.tmp`` in
the same folder (``tempfile.mkstemp``), is fsynced, then renamed over the
registry: a crash at any instant leaves the old file or the new one. A process
killed between the two (SIGKILL, the out-of-memory killer, a power cut) also
leaves the temporary file, which nothing removed: issue 20 found 6 in 10
rounds of SIGKILL, up to 171 KB each, holding a copy of the registry (database
passwords, token hashes) outside the file operators back up and rotate.

``remove_leftovers`` runs under the registry's exclusive file lock, which
every writer of the file holds from before it creates its temporary file until
after the rename: while the lock is held no write is in progress, so every
temporary file found then was left by a writer that died. It removes only what
our writes create: regular files (not symlinks, not directories) whose name is
exactly that pattern, owned by this process's user; anything else, even a
look-alike, is left alone.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

TEMPORARY_SUFFIX = ".tmp"
_RANDOM_PART = r"[a-z0-9_]{8}"
"""What ``tempfile.mkstemp`` puts between the prefix and the suffix (its ``_RandomNameSequence``)."""


def temporary_prefix(registry: Path) -> str:
    """The prefix of the registry's temporary files: ``.<name>.``."""
    return f".{registry.name}."


def leftover_pattern(registry: Path) -> re.Pattern[str]:
    """The exact name of a temporary file a write of ``registry`` makes."""
    return re.compile(re.escape(temporary_prefix(registry)) + _RANDOM_PART + re.escape(TEMPORARY_SUFFIX))


def remove_leftovers(registry: Path) -> list[str]:
    """Remove the temporary files dead writers of ``registry`` left; their names. Call it holding the file lock."""
    pattern = leftover_pattern(registry)
    removed: list[str] = []
    try:
        names = os.listdir(registry.parent)
    except OSError:
        return removed  # the folder is checked and reported by the write or load that follows
    for name in names:
        if not pattern.fullmatch(name):
            continue
        path = registry.parent / name
        try:
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                continue
            os.unlink(path)
        except OSError:
            continue  # gone meanwhile, or not ours to remove: never a reason to refuse a write
        removed.append(name)
    return sorted(removed)
