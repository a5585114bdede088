"""``get_passage``'s pages: the passages of a file cut into pages that never split a line."""

from __future__ import annotations

from collections.abc import Iterable

from semsearch.ingest.chunk import Chunk
from semsearch.mcp.schema import Passage

MAX_PASSAGE_CHARS = 20_000
"""What ``get_passage`` returns at most (about 5,000 tokens), but for a single line longer than
that, which comes whole; it says where to continue."""


def page(chunks: Iterable[Chunk]) -> tuple[list[Passage], int | None]:
    """The passages of one page, and the line the next page starts at (None: this is the last).
    A page stops before the chunk that would take it past ``MAX_PASSAGE_CHARS``, but never inside
    a line: a chunk that starts on a line the page already reaches joins it, past the cap if need
    be. So the next page, which starts at a whole line, repeats nothing and always moves on, even
    through a line longer than the cap (a paragraph without line breaks, split into chunks that
    all start and end on it)."""
    passages: list[Passage] = []
    size, reached = 0, 0
    for chunk in chunks:
        if passages and size + len(chunk.text) > MAX_PASSAGE_CHARS and chunk.start_line > reached:
            return passages, chunk.start_line
        passages.append(passage(chunk))
        size += len(chunk.text)
        reached = max(reached, chunk.end_line)
    return passages, None


def passage(chunk: Chunk) -> Passage:
    return Passage(
        section=chunk.section, start_line=chunk.start_line, end_line=chunk.end_line, text=chunk.text
    )
