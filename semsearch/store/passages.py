"""The indexed text of one file, read back as ``get_passage`` (``mcp_server``) returns it: its
chunks in document order, those of a section, or those on a range of lines cut to those lines.

A chunk's text is lines ``start_line``..``end_line`` of the file as indexed, without its HTML
comments (``chunking``): it may start or end inside a line, and a comment alone on its lines or
one spanning lines takes line breaks with it. While no line break was taken, character ``i`` of
the text is on line ``start_line`` plus the line breaks before it. Otherwise the lines are found
by aligning the text with the file, only if the file is still the one indexed (its sha256); a
chunk that cannot be aligned is returned whole, with its own lines. Either way every passage is a
slice of the indexed text: the file only tells where its lines fall.
"""

from __future__ import annotations

import difflib
import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING

from semsearch.errors import UsageError
from semsearch.ingest.chunk import PATH_SEPARATOR, Chunk
from semsearch.ingest.frontmatter import normalize_newlines
from semsearch.ingest.markdown import Hidden, ParsedDocument, is_mdx, parse_markdown
from semsearch.ingest.sources import SourceFile, read_source
from semsearch.util.printable import quoted, unreadable

if TYPE_CHECKING:
    from semsearch.retrieve.index import Index

_BLANK_LINES = re.compile(r"(?:[ \t]*\n)+")

Parsed = tuple[ParsedDocument, Hidden]
"""A file as the chunker parsed it, and the HTML comments its chunks leave out."""


def file_chunks(index: Index, source: str) -> Iterator[Chunk]:
    """The chunks of ``source`` in document order, read one by one (a file may have thousands)."""
    files = index.meta.files
    record = files.get(source)
    if record is None:
        close = difflib.get_close_matches(source, list(files), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; index_info lists the files"
        raise UsageError(f"no indexed file {quoted(source)}{hint}")
    if not record.has_text:
        raise UsageError(f"{source} has no indexed text")
    if record.rows is not None:
        start, end = record.rows
        return (index.chunks[row] for row in range(start, end))
    return (chunk for chunk in index.chunks if chunk.source == source)  # an index older than rows


def in_section(chunks: Iterable[Chunk], source: str, section: str) -> list[Chunk]:
    """The chunks of ``section`` (a heading path), subsections included."""
    wanted = tuple(part.strip() for part in section.split(PATH_SEPARATOR.strip()) if part.strip())
    listed = list(chunks)
    found = [chunk for chunk in listed if chunk.headings[: len(wanted)] == wanted]
    if not found:
        sections = list(dict.fromkeys(chunk.section for chunk in listed))
        raise UsageError(
            f"{source} has no section {quoted(section)}; its sections: " + "; ".join(sections[:30])
        )
    return found


def in_lines(
    index: Index, chunks: Iterable[Chunk], source: str, start: int | None, end: int | None
) -> list[Chunk]:
    """The chunks' text on lines ``start``..``end`` (either open), each cut to those lines."""
    low = start or 1
    high = end if end is not None else max(low, sys.maxsize)  # a start past any file: "lines from"
    if high < low:
        raise UsageError(f"end_line {end} is before start_line {start}")
    listed = list(chunks)
    overlapping = [chunk for chunk in listed if chunk.end_line >= low and chunk.start_line <= high]
    indexed = _IndexedFile(index, source)
    found = [cut for chunk in overlapping if (cut := cut_to_lines(chunk, low, high, indexed.parsed))]
    if not found:
        asked = f"lines {low}–{end}" if end else f"lines from {low}"
        if overlapping:
            raise UsageError(f"{asked} of {source} hold no indexed text (only blank lines or HTML comments)")
        span = f"lines {listed[0].start_line}–{listed[-1].end_line}" if listed else "no lines"
        raise UsageError(f"no indexed text of {source} in {asked} (its indexed text spans {span})")
    return found


def cut_to_lines(chunk: Chunk, low: int, high: int, indexed: Callable[[], Parsed | None]) -> Chunk | None:
    """``chunk`` with only its text on lines ``low``..``high``, without the blank lines it would
    start with or the spaces it would end with (None: no text there). ``indexed`` gives the file
    as indexed, parsed, or None when it is not what was indexed any more."""
    if low <= chunk.start_line and chunk.end_line <= high:
        return chunk
    lines = character_lines(chunk, indexed)
    if lines is None:
        return chunk  # its lines are not known exactly: all of it, as it says
    first, last = bisect_left(lines, low), bisect_right(lines, high)
    text = chunk.text[first:last]
    if blank := _BLANK_LINES.match(text):
        first += blank.end()
    last -= len(text) - len(text.rstrip())
    if last <= first:
        return None
    return replace(chunk, text=chunk.text[first:last], start_line=lines[first], end_line=lines[last - 1])


def character_lines(chunk: Chunk, indexed: Callable[[], Parsed | None]) -> list[int] | None:
    """The file line of each character of ``chunk.text`` (see the module docstring); None when
    they cannot be known exactly."""
    text = chunk.text
    if text.count("\n") == chunk.end_line - chunk.start_line:  # no line break was removed
        return list(accumulate((char == "\n" for char in text[:-1]), initial=chunk.start_line))
    parsed = indexed()
    return None if parsed is None else _aligned(chunk, *parsed)


def _aligned(chunk: Chunk, parsed: ParsedDocument, hidden: Hidden) -> list[int] | None:
    """The lines of ``chunk.text`` found in the document as the chunker saw it: the characters of
    its lines left once comments are removed. None unless found at exactly one set of lines."""
    document = parsed.text
    starts = [*parsed.line_starts, len(document)]
    if not 1 <= chunk.start_line <= chunk.end_line < len(starts):
        return None
    shown: list[str] = []
    offsets: list[int] = []
    position, end = starts[chunk.start_line - 1], starts[chunk.end_line]
    for hidden_start, hidden_end in [*hidden.spans, (end, end)]:
        if hidden_end <= position:
            continue
        stop = min(max(hidden_start, position), end)
        shown.append(document[position:stop])
        offsets.extend(range(position, stop))
        position = max(position, hidden_end)
        if position >= end:
            break
    visible = "".join(shown)
    found = set()
    at = visible.find(chunk.text)
    while at >= 0 and parsed.line_of(offsets[at]) == chunk.start_line:
        lines = tuple(parsed.line_of(offset) for offset in offsets[at : at + len(chunk.text)])
        if lines[-1] == chunk.end_line:
            found.add(lines)
        at = visible.find(chunk.text, at + 1)
    return list(found.pop()) if len(found) == 1 else None


class _IndexedFile:
    """A file as indexed, read and parsed once when first needed: None when the file is not the
    one indexed any more (another sha256, or gone)."""

    def __init__(self, index: Index, source: str):
        self.docs = Path(index.meta.docs_root)
        self.source = source
        record = index.meta.files.get(source)
        self.sha256 = record.sha256 if record is not None else None
        self._parsed: Parsed | None = None
        self._read = False

    def parsed(self) -> Parsed | None:
        """The document as the chunker parsed it, and its HTML comments."""
        if not self._read:
            self._read = True
            read = self._read_indexed() if self.sha256 else None
            if read is not None:
                document = parse_markdown(normalize_newlines(read.text), mdx=is_mdx(self.source))
                comments = Hidden([span for section in document.sections for span in section.hidden])
                self._parsed = (document, comments)
        return self._parsed

    def _read_indexed(self) -> SourceFile | None:
        """The file as indexed, found by its recorded name, else by the name that recorded name
        stands for when it escapes bytes that are not UTF-8 (``bad\\xff.md``, see ``unreadable``)."""
        for name in dict.fromkeys((self.source, unreadable(self.source))):
            read = read_source(self.docs / name, self.docs)
            if isinstance(read, SourceFile) and read.sha256 == self.sha256:
                return read
        return None
