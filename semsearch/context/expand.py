"""Retrieve small, give big: the passages around each hit for a model's context (``--expand``).

Search ranks small chunks, which match a question sharply; a model answers better from the
whole section (or file) around them. A hit's scope is its section (the chunks with its file and
heading path, next to it) or its whole file. Hits sharing a scope become one source. Each source
starts as its hits' own chunks and grows to the chunks nearest them, the best source first,
while the prompt fits its budget: so an expanded context always holds every chunk the default
context would have held at the same budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from semsearch.errors import UsageError
from semsearch.ingest.chunking import PATH_SEPARATOR, Chunk
from semsearch.retrieve.search import Hit

if TYPE_CHECKING:
    from semsearch.retrieve.index import Index

SCOPES = ("chunk", "section", "file")

Scope = Callable[[Hit], Sequence[tuple[int, Chunk]]]
"""The rows and chunks, in document order, that a hit may expand to (its own among them)."""


@dataclass
class Block:
    """One source of the context: some of the consecutive chunks of one scope."""

    hits: list[Hit]
    """The hits it holds, best first."""
    scope: Sequence[tuple[int, Chunk]]
    whole_file: bool = False
    """The scope is a file: section headings are written where the section changes."""
    rows: set[int] = field(default_factory=set)
    """The rows of ``scope`` included so far."""

    @property
    def chunks(self) -> list[Chunk]:
        return [chunk for row, chunk in self.scope if row in self.rows]

    @property
    def location(self) -> str:
        """``file › section (lines a–b)`` of what the block holds (``file (lines a–b)`` for a file)."""
        chunks = self.chunks
        first, last = chunks[0].start_line, chunks[-1].end_line
        lines = f"line {first}" if first == last else f"lines {first}–{last}"
        place = [chunks[0].source] if self.whole_file else [chunks[0].source, *chunks[0].headings]
        return f"{PATH_SEPARATOR.join(place)} ({lines})"

    @property
    def text(self) -> str:
        """The chunks joined as the file has them; "…" where rows are left out between them."""
        parts: list[str] = []
        previous: tuple[int, Chunk] | None = None
        for row, chunk in self.scope:
            if row not in self.rows:
                continue
            if previous is not None:
                parts.append(_joint(previous, (row, chunk)))
            if self.whole_file and (previous is None or previous[1].headings != chunk.headings):
                parts.append(_heading(chunk) + "\n\n")
            parts.append(chunk.text.strip())
            previous = (row, chunk)
        return "".join(parts)

    def nearest_missing(self) -> list[int]:
        """Rows of the scope not included yet, nearest to an included row first (the following
        row before the preceding one at the same distance)."""
        included = sorted(self.rows)
        positions = {row: i for i, (row, _) in enumerate(self.scope)}
        held = [positions[row] for row in included if row in positions]

        def distance(i: int) -> tuple[int, int]:
            gap = min(abs(i - h) for h in held)
            return (gap, 0 if any(i - h == gap for h in held) else 1)

        missing = [i for i, (row, _) in enumerate(self.scope) if row not in self.rows]
        return [self.scope[i][0] for i in sorted(missing, key=distance)] if held else []


def _joint(previous: tuple[int, Chunk], current: tuple[int, Chunk]) -> str:
    (row_before, before), (row, chunk) = previous, current
    if row != row_before + 1:
        return "\n\n…\n\n"
    if chunk.start_line == before.end_line:
        return " "  # a paragraph cut between two chunks
    return "\n" if chunk.start_line == before.end_line + 1 else "\n\n"


def _heading(chunk: Chunk) -> str:
    return "#" * max(1, len(chunk.headings)) + " " + (chunk.headings[-1] if chunk.headings else chunk.source)


def scope_in(index: Index, name: str) -> Scope:
    """The scope called ``name`` ("section" or "file") of a hit in ``index``."""
    if name not in SCOPES[1:]:
        raise UsageError(f"unknown expansion {name!r} (one of {', '.join(SCOPES)})")

    def file_rows(hit: Hit) -> range:
        record = index.meta.files.get(hit.source)
        start, end = record.rows if record is not None and record.rows is not None else (hit.row, hit.row + 1)
        return range(start, end) if start <= hit.row < end else range(hit.row, hit.row + 1)

    def scope(hit: Hit) -> list[tuple[int, Chunk]]:
        if hit.row is None:
            return []
        rows = file_rows(hit)
        if name == "file":
            return [(row, index.chunks[row]) for row in rows]
        first = last = hit.row
        while first - 1 in rows and index.chunks[first - 1].headings == hit.chunk.headings:
            first -= 1
        while last + 1 in rows and index.chunks[last + 1].headings == hit.chunk.headings:
            last += 1
        return [(row, index.chunks[row]) for row in range(first, last + 1)]

    return scope


def gather(
    hits: Sequence[Hit], scope: Scope, fits: Callable[[list[Block]], bool], whole_file: bool = False
) -> list[Block]:
    """The hits that fit, best first, each as its own chunk (as without expansion) in the block
    of its scope: hits sharing a scope share a block, numbered by the best of them. Stops at the
    first hit that does not fit, as the default context does."""
    blocks: list[Block] = []
    by_scope: dict[tuple, Block] = {}
    for hit in hits:
        rows = scope(hit) or [(hit.row, hit.chunk)]
        key = (hit.source, rows[0][0], rows[-1][0])
        block = by_scope.get(key)
        if block is None:
            block = Block([], rows, whole_file)
            blocks.append(block)
        new_row = hit.row not in block.rows
        block.hits.append(hit)
        block.rows.add(hit.row)
        if not fits(blocks):
            block.hits.pop()
            if new_row:
                block.rows.discard(hit.row)
            if not block.hits:
                blocks.pop()
            break
        by_scope[key] = block
    return blocks


def grow(
    blocks: Sequence[Block], measure: Callable[[], int], budget: int, count: Callable[[str], int]
) -> None:
    """Add to each block (best first) the rows nearest its hits while the prompt, as
    ``measure()`` counts it, stays within ``budget`` tokens.

    A row whose own text (``count``) cannot fit what is left is skipped without measuring, so a
    long file costs one count per chunk plus one measure per chunk taken."""
    used = measure()
    for block in blocks:
        chunks = dict(block.scope)
        for row in block.nearest_missing():
            if used + count(chunks[row].text) > budget:
                continue
            block.rows.add(row)
            now = measure()
            if now > budget:
                block.rows.discard(row)
            else:
                used = now
