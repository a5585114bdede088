"""Checking .gitignore-style patterns (``--exclude``, ``--path``, MCP ``paths``) before use.

``pathspec`` refuses a few patterns outright (``!`` alone, a trailing ``\\``) with its own
exception, which would reach the user as a bug; here it is a usage error naming the pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from semsearch.errors import UsageError

if TYPE_CHECKING:
    from semsearch.ingest.sources import Listed, Skipped


def check_patterns(patterns: Sequence[str], given_as: str) -> None:
    """Raise ``UsageError`` for the first of ``patterns`` that is not .gitignore syntax;
    ``given_as`` names where it came from (``--exclude``)."""
    import pathspec
    from pathspec.patterns.gitignore import GitIgnorePatternError

    for pattern in patterns:
        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except GitIgnorePatternError:
            raise UsageError(
                f"{given_as} {pattern!r} is not a .gitignore-style pattern{_why(pattern)}"
            ) from None


def _why(pattern: str) -> str:
    if pattern.strip() == "!":
        return ' ("!" negates the pattern after it, and none follows; "\\!" matches a "!")'
    if pattern.endswith("\\"):
        return ' (it ends in "\\", which escapes nothing)'
    return ""


def list_files(
    docs: Path, excludes: Sequence[str], excluded: list[str]
) -> tuple[list[Listed], list[Skipped]]:
    """``sources.list_files``, where a pattern of the folder's ``.semsearchignore`` that is not
    .gitignore syntax is a usage error naming the file (``excludes`` are checked before)."""
    from pathspec.patterns.gitignore import GitIgnorePatternError

    from semsearch.ingest import sources

    try:
        return sources.list_files(docs, excludes, excluded)
    except GitIgnorePatternError as exc:
        raise UsageError(
            f"{docs / sources.IGNORE_FILE}: {exc} (a line that is not a .gitignore-style pattern)"
        ) from None
