"""What a build records of each file it saw (fingerprint, rows, front matter; the skipped ones
with their reason), and the per-file account ``build --verbose`` prints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from semsearch.encode.pages import PageText
from semsearch.ingest.chunking import Chunk
from semsearch.ingest.frontmatter import FrontMatter
from semsearch.ingest.pages import page_names
from semsearch.ingest.sources import Skipped, SourceFile
from semsearch.store.file_records import FileRecord, SkippedRecord, without_text


@dataclass(frozen=True)
class FileOutcome:
    """One file in a build: ``status`` is new, changed, unchanged, removed or skipped."""

    path: str
    status: str
    chunks: int | None = None
    fields: tuple[str, ...] = ()
    reason: str | None = None
    """Why it was skipped."""


def row_ranges(chunks: Iterable[Chunk]) -> dict[str, tuple[int, int]]:
    """Each file's rows [start, end): a build appends a file's chunks together."""
    ranges: dict[str, tuple[int, int]] = {}
    for row, chunk in enumerate(chunks):
        start, end = ranges.get(chunk.source, (row, row))
        if end != row:
            raise AssertionError(f"the chunks of {chunk.source} are not contiguous")
        ranges[chunk.source] = (start, row + 1)
    return ranges


def file_records(
    sources: list[SourceFile],
    chunks: list[Chunk],
    front_matter: dict[str, FrontMatter],
    titles: Mapping[str, str] | None = None,
) -> dict[str, FileRecord]:
    """Each file's fingerprint, rows, front matter and title (``titles``: "" or none for a file
    without one)."""
    ranges = row_ranges(chunks)
    records = {}
    for source in sources:
        start, end = ranges.get(source.relative, (0, 0))
        records[source.relative] = FileRecord(
            sha256=source.sha256,
            size=source.size,
            mtime_ns=source.mtime_ns,
            chunks=end - start,
            rows=(start, end),
            front_matter=front_matter[source.relative],
            title=(titles or {}).get(source.relative) or None,
        )
    return records


def page_texts(chunks: list[Chunk], records: Mapping[str, FileRecord]) -> list[PageText]:
    """Each file with text as a page (``encode.pages``), in row order: its names (title and
    aliases), its chunks' text and its rows."""
    pages = []
    for source, record in sorted(records.items(), key=lambda item: item[1].rows or (0, 0)):
        start, end = record.rows or (0, 0)
        if end > start:
            names = page_names(record.title or "", source, record.front_matter.fields)
            pages.append(PageText(names, tuple(chunk.text for chunk in chunks[start:end]), (start, end)))
    return pages


def refreshed_records(
    files: Mapping[str, FileRecord], sources: list[SourceFile], front_matter: dict[str, FrontMatter]
) -> dict[str, FileRecord]:
    """The records of an index whose files are all unchanged, with their sizes and mtimes as they
    are now (for `ask`'s staleness check) and their front matter (added to an older index's)."""
    refreshed = {}
    for source in sources:
        record = files[source.relative]
        refreshed[source.relative] = record.refreshed(
            source.size, source.mtime_ns, front_matter[source.relative]
        )
    return refreshed


NO_TEXT = "no text to index (only headings or front matter)"


def no_text_skipped(records: Mapping[str, FileRecord]) -> list[Skipped]:
    """The files ``without_text``, as a build reports them: skipped, with the reason."""
    return [Skipped(path, NO_TEXT) for path in without_text(records)]


def skipped_records(skipped: list[Skipped]) -> dict[str, SkippedRecord]:
    return {s.relative: SkippedRecord(s.reason, s.size, s.mtime_ns) for s in skipped}


def outcomes(
    records: Mapping[str, FileRecord], old_files: Mapping[str, FileRecord], skipped: list[Skipped]
) -> list[FileOutcome]:
    """Every file a build met, in path order, with what became of it (see ``FileOutcome``):
    compared with ``old_files``, the previous index's records (whether or not it was reused)."""
    found = [
        FileOutcome(
            path, _status(record, old_files.get(path)), record.chunks, tuple(record.front_matter.fields)
        )
        for path, record in records.items()
    ]
    found += [FileOutcome(path, "removed") for path in old_files if path not in records]
    found += [FileOutcome(s.relative, "skipped", reason=s.reason) for s in skipped]
    return sorted(found, key=lambda outcome: outcome.path)


def _status(record: FileRecord, old: FileRecord | None) -> str:
    if old is None:
        return "new"
    return "unchanged" if old.sha256 == record.sha256 else "changed"
