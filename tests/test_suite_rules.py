"""Rules of the test suite itself (issue 21): each fixture defined once, no test edits the import path."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_FILES = sorted([*ROOT.glob("tests/*.py"), *ROOT.glob("examples/*/tests/*.py")])


def _fixture_names(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            "fixture" in ast.unparse(decorator) for decorator in node.decorator_list
        ):
            names.append(node.name)
    return names


def test_each_fixture_is_defined_once() -> None:
    """A fixture name has one definition in the suite: a module varies a shared one by its constants."""
    places = collections.defaultdict(list)
    for path in TEST_FILES:
        for name in _fixture_names(path):
            places[name].append(str(path.relative_to(ROOT)))
    assert {name: where for name, where in places.items() if len(where) > 1} == {}


def test_no_test_edits_the_import_path() -> None:
    """No test module changes ``sys.path``: what a test imports is what an installed gateway imports."""
    editing = [str(path.relative_to(ROOT)) for path in TEST_FILES
               if "sys.path" in path.read_text() and path.name != Path(__file__).name]
    assert editing == []
