"""What the guard reads of a jsonpath literal: how large it prints, and whether it computes or compares sequences.

The guard does not parse jsonpath: it scans the literal's characters with
string literals removed, and every answer errs towards the costly side.

- ``jsonpath_printed``: ``jsonpath_out`` prints keys quoted, spaces around
  operators and numbers in full (``$ ? (@ > 1e99999)`` prints 100 000 digits):
  at most three characters per character written, six per character of a
  string (JSON escapes), and each number at its printed size.
- ``computes``: the path makes values that are not parts of the document:
  arithmetic (``$.a * 2``, which runs numeric's long division for ``/``),
  item methods (``.keyvalue()``, ``.double()``, ``.datetime()``...). A path
  that does not returns parts of the document only.
- ``compares_sequences``: the path reads the document (``$``, or a variable
  ``$name``) more than once. ``executePredicate`` compares every item of one
  side with every item of the other without checking for interrupts
  (``$[*] > $[*]`` over 30 000 elements: 11 s under a 1 s limit), and a filter
  that reads ``$[*]`` per item keeps n² values in memory (3 000 elements:
  590 MB). A path of one ``$`` (``$.arr[*] ? (@ > 1)``) visits each item once.
"""

from __future__ import annotations

import re
from typing import Final

from drivers.postgres.guard.sizes.literals import numeric_printed

_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_NUMBER: Final = re.compile(r"(?<![\w$@.])(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_ACCESSORS: Final = re.compile(r"\.\*\*|\.\*|\[\s*\*\s*\]")
_ARITHMETIC: Final = re.compile(r"[-+*/%]")
_METHOD: Final = re.compile(r"\.\s*[A-Za-z_]\w*\s*\(")
_ROOT: Final = re.compile(r"\$")


def _code(path: str) -> tuple[str, int]:
    """The path without its string literals, and the characters those held."""
    held = sum(len(match.group(0)) for match in _STRING.finditer(path))
    return _STRING.sub('""', path), held


def jsonpath_printed(path: str) -> int:
    """The most characters ``jsonpath_out`` prints for this literal."""
    code, held = _code(path)
    numbers = list(_NUMBER.finditer(code))
    written = sum(len(match.group(0)) for match in numbers)
    return 3 * (len(code) - written) + 6 * held + sum(numeric_printed(match.group(0)) for match in numbers)


def computes(path: str | None) -> bool:
    """True unless the literal ``path`` certainly returns parts of the document only."""
    if path is None:
        return True
    code = _ACCESSORS.sub("", _code(path)[0])
    return bool(_ARITHMETIC.search(code) or _METHOD.search(code))


def compares_sequences(path: str | None) -> bool:
    """True unless the literal ``path`` certainly reads the document (or a variable) once."""
    if path is None:
        return True
    return len(_ROOT.findall(_code(path)[0])) > 1
