"""Edits: spans of the source that chunk text shows otherwise (mostly nothing).

The chunk text stays the file's text with some spans replaced, so each character left has its
place in the file and line numbers stay exact.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple


class Edit(NamedTuple):
    start: int
    end: int
    shown: str
    """What the reader sees instead (usually "")."""
    kind: str
    """The flavour rule that made it (``html``, ``wikilink``…), for tests and counts."""


def resolve(edits: list[Edit]) -> list[Edit]:
    """Edits sorted, an edit overlapping one already taken dropped (earlier start wins, then the
    longer): rules run in order on the whole text, so the outermost construct wins."""
    taken: list[Edit] = []
    for edit in sorted(edits, key=lambda e: (e.start, -e.end)):
        if edit.end <= edit.start and not edit.shown:
            continue
        if taken and edit.start < taken[-1].end:
            continue
        taken.append(edit)
    return taken


def apply(text: str, edits: list[Edit], start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` with ``edits`` (resolved) applied."""
    end = len(text) if end is None else end
    parts, position = [], start
    for i in range(max(0, bisect_right(edits, (start,)) - 1), len(edits)):
        edit = edits[i]
        if edit.start >= end:
            break
        if edit.end <= start:
            continue
        parts.append(text[position : max(position, edit.start)])
        parts.append(edit.shown if edit.start >= start else "")
        position = max(position, min(edit.end, end))
    parts.append(text[position:end])
    return "".join(parts)
