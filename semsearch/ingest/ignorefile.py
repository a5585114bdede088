"""The docs folder's own ``.semsearchignore``: more patterns to leave files out, read as the
folder's files are (never through a symlink out of the folder, never from a FIFO or a device)
and within bounds (a 400 MB file linked in, or a million patterns, is a trap, not a list).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from semsearch.ingest.beneath import not_regular, open_beneath
from semsearch.ingest.gitignore import BadPattern, PathPatterns

IGNORE_FILE = ".semsearchignore"
IGNORE_FILE_BYTES = 1 << 20
"""The most of a ``.semsearchignore`` read (a thousand long patterns)."""
IGNORE_FILE_PATTERNS = 1000
"""The most patterns of a ``.semsearchignore`` applied: each costs every file a match."""


def exclude_spec(docs: Path, patterns: Sequence[str] = (), warnings: list[str] | None = None):
    """``--exclude`` patterns plus the docs folder's ``.semsearchignore`` (see ``ignore_lines``),
    in .gitignore syntax; None when there are none. A line of the file that is not a pattern
    raises ``BadPattern`` with its number in the file."""
    lines = ignore_lines(docs, warnings if warnings is not None else [])
    try:
        spec = PathPatterns([*patterns, *lines])
    except BadPattern as exc:
        raise BadPattern(exc.number - len(patterns), exc.line) from None
    return spec or None


def ignore_lines(docs: Path, warnings: list[str]) -> list[str]:
    """The lines of the folder's own ``.semsearchignore``: never read through a symlink that
    leads out of the folder, nor from a FIFO or a device; at most ``IGNORE_FILE_BYTES`` of it
    and its first ``IGNORE_FILE_PATTERNS`` patterns (what is not read is said in ``warnings``)."""
    path = docs / IGNORE_FILE
    if not os.path.lexists(path):
        return []
    root = Path(os.path.realpath(docs))
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(root) or real == root:
        warnings.append(f"{path} leads outside the documents folder (a symbolic link): not read")
        return []
    try:
        with os.fdopen(open_beneath(root, real.relative_to(root).parts), "rb") as handle:
            if reason := not_regular(os.fstat(handle.fileno()).st_mode):
                warnings.append(f"{path} is {reason}: not read")
                return []
            raw = handle.read(IGNORE_FILE_BYTES + 1)
    except OSError as exc:
        warnings.append(f"{path} cannot be read ({exc.strerror or exc}): no pattern of it applied")
        return []
    return _bounded_lines(path, raw, warnings)


def _bounded_lines(path: Path, raw: bytes, warnings: list[str]) -> list[str]:
    """The lines of an ignore file's bytes, cut at ``IGNORE_FILE_BYTES`` (at the last whole line)
    and after its ``IGNORE_FILE_PATTERNS``-th pattern, with a warning when cut."""
    if len(raw) > IGNORE_FILE_BYTES:
        raw = raw[: raw.rfind(b"\n", 0, IGNORE_FILE_BYTES) + 1]
        warnings.append(
            f"{path} is over {IGNORE_FILE_BYTES // 2**20} MiB: only its first {len(raw):,} bytes are read"
        )
    lines = raw.decode("utf-8", errors="replace").splitlines()
    patterns = [n for n, line in enumerate(lines) if line.strip() and not line.startswith("#")]
    if len(patterns) > IGNORE_FILE_PATTERNS:
        lines = lines[: patterns[IGNORE_FILE_PATTERNS]]
        warnings.append(
            f"{path} holds {len(patterns):,} patterns: only its first {IGNORE_FILE_PATTERNS:,} are applied"
        )
    return lines
