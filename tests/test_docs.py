"""The documentation names what the code has: every operation in docs/api.md, every module in architecture.md's layout.

The settings are held to docs/operations.md and config/gateway.example.toml by
tests/test_operations.py; the import rules of architecture.md's "Layers" by
tests/test_layers.py.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from gateway.web.operations import handler_operations

ROOT = Path(__file__).resolve().parent.parent
API_PAGE = ROOT / "docs" / "api.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

LAID_OUT = (ROOT / "gateway", ROOT / "drivers", ROOT / "examples" / "sqlite-driver" / "dbgateway_sqlite")
"""Every module under these must be named in the layout (a package's ``__init__.py`` only when it holds code)."""

DESCRIPTION_COLUMN = 20
"""A layout line indented this far or more continues the description above it; less, it names an entry."""


def headings(markdown: str) -> Iterator[str]:
    """The page's heading lines, outside fenced code blocks."""
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            yield line


def documented_operations(markdown: str) -> set[tuple[str, str]]:
    """Each ``METHOD /path`` a heading of the page names in backticks, without query string or trailing slash."""
    found = set()
    for heading in headings(markdown):
        for method, path in re.findall(r"`([A-Z]+) (/[^`?…]*)", heading):
            found.add((method, path.rstrip("/") or "/"))
    return found


def served_operations() -> dict[tuple[str, str], str]:
    """Each method and path (aliases too) the gateway declares, and the operation serving it."""
    served = {}
    for operation in handler_operations():
        for path in (operation.path, *operation.aliases):
            for method in operation.methods:
                served[(method, path)] = operation.operation_id
    return served


def test_every_operation_has_its_section_in_the_api_page() -> None:
    """Each operation's method and path is named in a heading of docs/api.md (its section)."""
    documented = documented_operations(API_PAGE.read_text(encoding="utf-8"))
    primary = {
        (method, operation.path): operation.operation_id
        for operation in handler_operations()
        for method in operation.methods
    }
    missing = sorted(
        f"{name}: {method} {path}" for (method, path), name in primary.items() if (method, path) not in documented
    )
    assert not missing, f"operations without a section in docs/api.md: {missing}"


def test_every_operation_the_api_page_names_is_served() -> None:
    documented = documented_operations(API_PAGE.read_text(encoding="utf-8"))
    served = served_operations()
    unknown = sorted(f"{method} {path}" for method, path in documented if (method, path) not in served)
    assert not unknown, f"docs/api.md has sections for operations the gateway does not declare: {unknown}"


def layout_block(markdown: str) -> str:
    """The code block of architecture.md's "Layout" section."""
    section = markdown.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```\n", 2)[1]


def named_in_layout(block: str) -> tuple[set[Path], set[tuple[Path, str]]]:
    """What the layout names: its entries (one a line, indented two spaces a level) and the ``*.py`` in descriptions.

    Entries are paths from the repository's root. A name in a description is kept with the folder it is read
    from: a directory entry's description names files inside it (``structure/  the raw tree: walk.py ...``),
    a file entry's names files beside it; a name may also be a path from the root.
    """
    entries: set[Path] = set()
    mentioned: set[tuple[Path, str]] = set()
    folders: list[Path] = []
    here = Path()
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent < DESCRIPTION_COLUMN:
            name, _, description = line.strip().partition(" ")
            del folders[indent // 2 :]
            parent = folders[-1] if folders else Path()
            path = parent / name.rstrip("/")
            entries.add(path)
            if name.endswith("/"):
                folders.append(path)
            here = path if name.endswith("/") else parent
        else:
            description = line.strip()
        for name in re.findall(r"(?<![\w./-])((?:\w+/)*\w+\.py)\b", description):
            mentioned.add((here, name))
    return entries, mentioned


def holds_code(path: Path) -> bool:
    """Whether an ``__init__.py`` holds more than its docstring (and ``from __future__``)."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        for node in body
    )


def modules_to_lay_out() -> set[Path]:
    """Every module under ``LAID_OUT``, from the root; an ``__init__.py`` only when it holds code."""
    return {
        path.relative_to(ROOT)
        for top in LAID_OUT
        for path in top.rglob("*.py")
        if path.name != "__init__.py" or holds_code(path)
    }


LAYOUT = named_in_layout(layout_block(ARCHITECTURE.read_text(encoding="utf-8")))


def test_the_layout_names_every_module() -> None:
    entries, mentioned = LAYOUT
    named = entries | {folder / name for folder, name in mentioned} | {Path(name) for _, name in mentioned}
    missing = sorted(str(path) for path in modules_to_lay_out() - named)
    assert not missing, f"modules docs/architecture.md's layout does not name: {missing}"


def test_every_file_the_layout_names_exists() -> None:
    entries, mentioned = LAYOUT
    gone = sorted(str(path) for path in entries if not (ROOT / path).exists())
    gone += sorted(
        f"{name} (in {folder}/)"
        for folder, name in mentioned
        if not (ROOT / folder / name).exists() and not (ROOT / name).exists()
    )
    assert not gone, f"docs/architecture.md's layout names files that do not exist: {gone}"
