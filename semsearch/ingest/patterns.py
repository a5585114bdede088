"""Checking .gitignore-style patterns (``--exclude``, ``--path``, MCP ``paths``) before use.

``pathspec`` refuses a few patterns outright (``!`` alone, a trailing ``\\``, a range such as
``[z-a]``) with its own exceptions, which would reach the user as a bug; here each is a usage
error naming the pattern (a long one cut short). Patterns are matched by ``gitignore`` in
linear time; a pattern longer than any path, or more patterns than anyone writes, is refused
before any matching.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from semsearch.errors import SHOWN_PATH_CHARS, UsageError
from semsearch.ingest.gitignore import BadPattern, pattern_problem
from semsearch.ingest.ignorefile import IGNORE_FILE
from semsearch.util.printable import quoted

if TYPE_CHECKING:
    from semsearch.ingest.sources import Listed, Skipped

LONGEST_PATTERN = 4096
"""The longest pattern taken, in characters (the longest path Linux opens, PATH_MAX)."""
MOST_PATTERNS = 1000
"""The most patterns taken at once (``--path``, ``--exclude``, MCP ``paths``)."""


def check_patterns(patterns: Sequence[str], given_as: str) -> None:
    """Raise ``UsageError`` for too many ``patterns``, or for the first that is too long or is
    not .gitignore syntax; ``given_as`` names where they came from (``--exclude``)."""
    if len(patterns) > MOST_PATTERNS:
        raise UsageError(
            f"{len(patterns):,} patterns given as {given_as}; at most {MOST_PATTERNS:,} are taken"
        )
    for pattern in patterns:
        if len(pattern) > LONGEST_PATTERN:  # worded as the system says it of such a path
            shown = f"{pattern[: SHOWN_PATH_CHARS - 1]}…"
            raise UsageError(
                f"File name too long: {shown} ({len(pattern):,} characters), given as {given_as}; "
                f"a pattern is at most {LONGEST_PATTERN:,}"
            )
        if (problem := pattern_problem(pattern)) is not None:
            raise UsageError(f"{given_as} {quoted(pattern)} is not a .gitignore-style pattern{problem}")


def list_files(
    docs: Path, excludes: Sequence[str], excluded: list[str], warnings: list[str] | None = None
) -> tuple[list[Listed], list[Skipped]]:
    """``sources.list_files``, where a pattern of the folder's ``.semsearchignore`` that is not
    .gitignore syntax is a usage error naming the file and the line (``excludes`` are checked
    before)."""
    from semsearch.ingest import sources

    try:
        return sources.list_files(docs, excludes, excluded, warnings)
    except BadPattern as exc:
        problem = pattern_problem(exc.line) or ""
        raise UsageError(
            f"{docs / IGNORE_FILE}: line {exc.number:,}, {quoted(exc.line)}, is not a "
            f".gitignore-style pattern{problem}"
        ) from None
