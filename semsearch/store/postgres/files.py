"""The index's file records (what meta.json's ``files`` holds in a folder index), one row each
in the version's ``files`` table, read when asked for: a question reads the records of the files
it shows, a filter streams them once, and no client holds every record (a million passages are
some 100,000 files: their records, read whole, were most of an ``ask``'s memory and 2 s of its
opening). A build reads them all (``loaded``)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from semsearch.store.file_records import FileRecord, HeldFiles, valid_file_record
from semsearch.store.postgres.layout import sql
from semsearch.store.postgres.remote import BATCH, Tables
from semsearch.util.jsonparse import parse_json

RECORD_BOUND = 16 << 20
"""The largest file record read (a path, a fingerprint and front matter: a bigger one is damage)."""
CACHED_RECORDS = 4096
"""File records kept between lookups (a question shows a few files, a context a few more)."""


def files_rows(files: Mapping[str, FileRecord]) -> Iterator[tuple[int, str, int | None, int | None, str]]:
    """The ``files`` table's rows of a build's records: position, source, first and end row, record."""
    for position, (source, record) in enumerate(files.items()):
        start, end = record.rows if record.rows is not None else (None, None)
        yield position, source, start, end, json.dumps(record.to_json(), ensure_ascii=False)


class RemoteFiles(HeldFiles):
    """A version's file records as a mapping from source to record, in the build's order."""

    def __init__(self, tables: Tables):
        self.tables = tables
        self._count: int | None = None
        self._cache: dict[str, FileRecord | None] = {}

    def _name(self) -> Any:
        return self.tables.name("files")

    def __len__(self) -> int:
        if self._count is None:
            query = sql().SQL("SELECT count(*) FROM {}").format(self._name())
            self._count = int(self.tables.fetch(query)[0][0])
        return self._count

    def __getitem__(self, source: str) -> FileRecord:
        if not isinstance(source, str):
            raise KeyError(source)
        if source not in self._cache:
            query = sql().SQL("SELECT source, {} FROM {} WHERE source = %s")
            found = self.tables.fetch(query.format(_bounded_record(), self._name()), [source])
            if len(self._cache) >= CACHED_RECORDS:
                self._cache = {}
            self._cache[source] = self._record(*found[0]) if found else None
        record = self._cache[source]
        if record is None:
            raise KeyError(source)
        return record

    def __iter__(self) -> Iterator[str]:
        for source, _ in self._rows(with_records=False):
            yield source

    def items(self) -> Iterator[tuple[str, FileRecord]]:  # type: ignore[override]
        """Every source and record in order, a batch at a time (one request per ``BATCH``)."""
        for source, text in self._rows(with_records=True):
            yield source, self._record(source, text)

    def values(self) -> Iterator[FileRecord]:  # type: ignore[override]
        for _, record in self.items():
            yield record

    def loaded(self) -> dict[str, FileRecord]:
        return dict(self.items())

    def row_starts(self) -> np.ndarray:
        query = sql().SQL(
            "SELECT count(*), string_agg(int4send(first_row), ''::bytea ORDER BY first_row) "
            "FROM {} WHERE end_row > first_row"
        )  # one array's bytes, not a row per file (a million passages are some 100,000 files)
        count, data = self.tables.fetch(query.format(self._name()))[0]
        if len(data or b"") != 4 * count:
            raise self.tables.damaged("its files' rows do not add up")
        return np.frombuffer(data or b"", dtype=">i4").astype(np.int64)

    def _rows(self, with_records: bool) -> Iterator[tuple[str, str | None]]:
        s = sql()
        record = _bounded_record() if with_records else s.SQL("NULL")
        query = s.SQL("SELECT position, source, {} FROM {} WHERE position > %s ORDER BY position LIMIT %s")
        query = query.format(record, self._name())
        after = -1
        while True:
            found = self.tables.fetch(query, [after, BATCH])
            for _, source, text in found:
                yield source, text
            if len(found) < BATCH:
                return
            after = found[-1][0]

    def _record(self, source: str, text: str | None) -> FileRecord:
        if text is None:
            raise self.tables.damaged(f"the record of a file is larger than {RECORD_BOUND:,} bytes")
        try:
            obj = parse_json(text)
        except ValueError as exc:
            raise self.tables.damaged(f"an unreadable file record: {exc}") from None
        if not isinstance(obj, dict) or not _valid(obj, self.tables.rows):
            raise self.tables.damaged(f"the record of {source!r} is not one semsearch writes")
        return FileRecord.from_json(obj)


def _bounded_record() -> Any:
    s = sql()
    return s.SQL("CASE WHEN octet_length(record) <= {} THEN record END").format(s.Literal(RECORD_BOUND))


def _valid(obj: dict, rows: int) -> bool:
    """Whether a file record holds what ``FileRecord`` reads, typed, its rows within the index."""
    if not valid_file_record(obj):
        return False
    found = obj.get("rows")
    return found is None or (0 <= found[0] <= found[1] <= rows)
