"""The rooms keep to docs/architecture.md's "Layers": imports its table allows, every module in a room, no cycle.

Imports are read from the source with ``ast``: at the top of a module, inside
functions and under ``if TYPE_CHECKING:`` alike, since a cycle hidden behind a
type-checking import is still a cycle a reader has to follow. ``from a import b``
is an import of the module ``a.b`` when there is one, else of ``a``; a package's
``__init__`` imported on the way to a submodule is not counted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"

SOURCE_ROOTS = (ROOT, ROOT / "examples" / "sqlite-driver")
"""Where the checked packages live: ``gateway`` and ``drivers`` in the repository, the example driver in its own."""

PACKAGES = ("gateway", "drivers", "dbgateway_sqlite")
"""The packages whose modules are checked (tests, bench and scripts may import anything)."""

ROOT_MEMBERS = {"gateway": "gateway", "gateway.errors": "gateway", "gateway.__main__": "gateway.process"}
"""The modules at the top of ``gateway/`` and the room of each; every other module is in the room it lies in."""

KNOWN_CYCLES: dict[frozenset[str], str] = {}
"""Cycles the docs name and the test lets pass; each must still exist, so the list cannot outlive its reason."""


@attrs.frozen
class Import:
    """One import statement's target, where it is written."""

    importer: str
    imported: str
    line: int
    where: str
    """``top``, ``function`` or ``TYPE_CHECKING``: shown when the import is refused."""


def module_files() -> dict[str, Path]:
    """Every checked module by dotted name (a package by its own name, for its ``__init__.py``)."""
    found: dict[str, Path] = {}
    for source in SOURCE_ROOTS:
        for package in PACKAGES:
            for path in sorted((source / package).rglob("*.py")) if (source / package).is_dir() else ():
                parts = list(path.relative_to(source).with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts.pop()
                found[".".join(parts)] = path
    return found


MODULES = module_files()


def _placement(tree: ast.Module) -> dict[int, str]:
    """Where each import node sits: inside a function, under ``TYPE_CHECKING``, or at the top."""
    placed: dict[int, str] = {}

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inner = "function" if where == "top" else where
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                inner = "TYPE_CHECKING"
            if isinstance(child, ast.Import | ast.ImportFrom):
                placed[id(child)] = where
            visit(child, inner)

    visit(tree, "top")
    return placed


def _known(name: str) -> str | None:
    """The checked module ``name`` is, or lies in (``a.b.C`` -> ``a.b``); None outside the checked packages."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path) -> Iterator[Import]:
    """Every import of a checked module that ``module`` writes, wherever it is written."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    placed = _placement(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        for target in targets:
            imported = _known(target)
            if imported is not None and imported != module:
                yield Import(module, imported, node.lineno, placed.get(id(node), "top"))


def all_imports() -> list[Import]:
    return [found for module, path in sorted(MODULES.items()) for found in imports_of(module, path)]


def layer_table(text: str) -> dict[str, frozenset[str]]:
    """docs/architecture.md's "Layers" table: each room and the rooms it may import."""
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    table: dict[str, frozenset[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            room = cells[0].strip("`")
            table[room] = frozenset(re.findall(r"`([\w.]+)`", cells[2]))
    return table


RULES = layer_table(ARCHITECTURE.read_text(encoding="utf-8"))


def room_of(module: str, rules: Mapping[str, Iterable[str]] = RULES) -> str | None:
    """The room ``module`` belongs to: the longest room name it lies in; None when it lies in none."""
    if module in ROOT_MEMBERS:
        return ROOT_MEMBERS[module]
    rooms = [room for room in rules if room != "gateway" and (module == room or module.startswith(room + "."))]
    return max(rooms, key=len) if rooms else None


def refused(imports: Iterable[Import], rules: Mapping[str, frozenset[str]] = RULES) -> list[str]:
    """Each import the table does not allow, said as a sentence."""
    problems = []
    for found in imports:
        importer, imported = room_of(found.importer, rules), room_of(found.imported, rules)
        if importer is None or imported is None or importer == imported or imported in rules.get(importer, ()):
            continue
        allowed = ", ".join(sorted(rules.get(importer, ()))) or "nothing"
        problems.append(
            f"{MODULES[found.importer].relative_to(ROOT)}:{found.line} ({found.where}) imports {found.imported}:"
            f" room {importer} may import {allowed}, not {imported}"
        )
    return problems


def cycles(imports: Iterable[Import]) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for found in imports:
        graph[found.importer].add(found.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                connect(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return components


def test_the_table_names_every_room_and_only_rooms() -> None:
    """Every room the table names is a package of the repository, and every room it allows is one of its rooms."""
    assert RULES, "docs/architecture.md has no Layers table"
    for room, allowed in RULES.items():
        assert room in MODULES, f"the Layers table names {room}, which is no package"
        assert allowed <= set(RULES), f"{room} may import {sorted(allowed - set(RULES))}, which are no rooms"


def test_every_module_lies_in_a_room() -> None:
    """A new module at the top of gateway/ (or anywhere outside the table's rooms) has no place yet."""
    homeless = [module for module in MODULES if room_of(module) is None]
    assert not homeless, f"modules in no room of docs/architecture.md's Layers table: {homeless}"


def test_every_room_says_what_it_owns_and_may_import() -> None:
    """Each room's ``__init__.py`` has a docstring naming what the room may import."""
    for room in RULES:
        if room in ("gateway", "drivers", "drivers.postgres", "drivers.postgres.guard", "dbgateway_sqlite"):
            continue  # the package itself, or a driver's: its docstring describes it to its users (or to the guard's)
        docstring = ast.get_docstring(ast.parse(MODULES[room].read_text(encoding="utf-8"))) or ""
        assert "May import" in docstring, f"{MODULES[room].relative_to(ROOT)} does not say what the room may import"


def test_imports_keep_to_the_layers() -> None:
    problems = refused(all_imports())
    assert not problems, "imports against docs/architecture.md's Layers:\n" + "\n".join(problems)


def test_no_import_cycles() -> None:
    found = {frozenset(component): component for component in cycles(all_imports())}
    unknown = [component for key, component in found.items() if key not in KNOWN_CYCLES]
    assert not unknown, f"import cycles (TYPE_CHECKING and function-level imports count): {unknown}"
    gone = [sorted(key) for key in KNOWN_CYCLES if key not in found]
    assert not gone, f"these cycles are gone: take them out of KNOWN_CYCLES and docs/architecture.md: {gone}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # a room importing one above it, from a function: the HTTP layer from the logs
        ("def f():\n    from gateway.web.keys import LOGGER\n", "room gateway.observability may import"),
        # a type-checking import counts too
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gateway.process.cli import main\n",
            "(TYPE_CHECKING)",
        ),
        # and a driver
        ("import drivers.postgres.pool\n", "not drivers.postgres"),
    ],
)
def test_a_forbidden_import_is_named(source: str, expected: str, tmp_path: Path) -> None:
    """The check itself: an import against the table, written anywhere in a module, is refused and located."""
    module = "gateway.observability.log_ring"
    path = tmp_path / "log_ring.py"
    path.write_text(source, encoding="utf-8")
    found = list(imports_of(module, path))
    assert found
    problems = refused(found[:1])
    assert len(problems) == 1 and expected in problems[0], problems


def test_a_cycle_is_found_whatever_hides_it() -> None:
    """Two modules importing each other, one of them only for type checking, make a cycle."""
    imports = [
        Import("gateway.observability.audit", "gateway.observability.metrics", 1, "top"),
        Import("gateway.observability.metrics", "gateway.observability.audit", 1, "TYPE_CHECKING"),
    ]
    assert cycles(imports) == [["gateway.observability.audit", "gateway.observability.metrics"]]
