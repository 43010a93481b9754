"""The repository's ``scripts/`` folder, imported as the package ``scripts`` from where it lies.

The scripts run as ``python -m scripts.<name>`` from the repository root and
import one another as ``scripts.<name>``. Tests import them the same way without
adding the root to the module search path (by hand, or by pytest's
``pythonpath`` setting): the package is registered under its name from its
location, and its modules are then found through the package's own ``__path__``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

FOLDER = Path(__file__).resolve().parent.parent / "scripts"
"""The repository's ``scripts/``."""


def script(name: str) -> ModuleType:
    """The module ``scripts.<name>`` of ``FOLDER``, imported (the package ``scripts`` first, if need be)."""
    if "scripts" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "scripts", FOLDER / "__init__.py", submodule_search_locations=[str(FOLDER)]
        )
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules["scripts"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"scripts.{name}")
