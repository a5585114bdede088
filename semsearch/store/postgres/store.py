"""An index in a PostgreSQL schema (see ``layout``), behind the ``Store`` interface, searched
inside the server (``store.engine``'s ``SearchEngine``: ``queries``).

One index per schema (``?schema=NAME`` in the URL). semsearch makes the schema, or takes one
that is empty, and afterwards changes only a schema holding its record: a schema with anything
else in it is refused, never written. A build writes a new version's tables and switches the
record to them in one transaction (a reader reads the old version or the new, never a mix; a
build killed at any point leaves the previous index as it was), then drops the tables of the
versions before the one it replaced (a reader that opened that one reads on until the next
build). Two builds never interleave: each holds a session advisory lock on the schema, which
the server releases when the build's connection ends, killed or not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from semsearch.encode.pages import PAGES_VERSION, PageIndex
from semsearch.errors import (
    IndexBusyError,
    IndexChangedError,
    IndexCorruptError,
    IndexLocationError,
    IndexMissingError,
)
from semsearch.store.built import Built
from semsearch.store.engine import Candidates, PageFigures
from semsearch.store.folder import _check_vectors
from semsearch.store.location import PostgresLocation
from semsearch.store.meta import IndexMeta
from semsearch.store.postgres.connection import Connections, connect, failures
from semsearch.store.postgres.files import RemoteFiles
from semsearch.store.postgres.layout import RECORD, sql
from semsearch.store.postgres.queries import EXACT_ROWS, Queries
from semsearch.store.postgres.reader import (
    Record,
    check_tables,
    read_record,
    record_exists,
    record_kinds,
    schema_tables,
)
from semsearch.store.postgres.remote import (
    RemoteChunks,
    RemoteKeywords,
    RemoteTerms,
    RemoteVectors,
    Tables,
    texts_digest,
)
from semsearch.store.postgres.writer import (
    Payload,
    chunk_json,
    current_version,
    drop_stale,
    ensure_schema,
    new_version,
    put_meta,
    write_version,
)
from semsearch.store.reader import StoredIndex, check_vectors
from semsearch.store.schema import INDEX_KIND

LOCK_CLASS = 0x5E5E
"""The first key of a build's advisory lock (the second: the schema's name hashed)."""


class PostgresStore:
    def __init__(self, location: PostgresLocation):
        self.location = location
        self.where = f"the index at {location}"
        self.connections = Connections(location)
        self.exact_rows = EXACT_ROWS
        """Up to this many passages, a question scores every one (see ``queries``)."""
        self._queries: Queries | None = None

    # Reading

    def exists(self) -> bool:
        def work(connection: Any) -> bool:
            if not record_exists(connection, self.location.schema):
                return False
            return bool(
                connection.execute(sql().SQL("SELECT count(*) FROM {}").format(_record())).fetchone()[0]
            )

        return self.connections.run(work)

    def peek_meta(self) -> IndexMeta | None:
        """The index's meta with every file's record (a build's, ``watch``'s), None without one."""
        try:
            record, tables = self._opened_version()
            return replace(record.meta, files=RemoteFiles(tables).loaded())
        except (IndexMissingError, IndexCorruptError):
            return None

    def _opened_version(self) -> tuple[Record, Tables]:
        """The record, checked, and the tables of the version it names (checked to be there)."""

        def work(connection: Any) -> Record:
            record = read_record(connection, self.location)
            check_tables(connection, self.location, record)
            return record

        record = self.connections.run(work)
        return record, Tables(self.connections, record.version, record.dim, record.rows)

    def stamp(self) -> tuple | None:
        """The record's version and stamp (a build or a calibration changes one), None without
        an index: a few bytes, read on every call of the MCP server."""

        def work(connection: Any) -> list[tuple]:
            if not record_exists(connection, self.location.schema):
                return []
            return connection.execute(
                sql().SQL("SELECT kind, version, stamp FROM {}").format(_record())
            ).fetchall()

        found = self.connections.run(work)
        return (found[0][1], found[0][2]) if len(found) == 1 and found[0][0] == INDEX_KIND else None

    def read(self, keywords: bool = True) -> StoredIndex:
        """The index as a search reads it: the record, checked, and its chunks, vectors and keyword
        columns read from the tables of its version when asked for."""
        record, tables = self._opened_version()
        self._queries = Queries(tables, self.exact_rows)
        meta = replace(record.meta, files=RemoteFiles(tables))
        offtopic = record.offtopic
        check_vectors(offtopic, self.location, "its off-topic bank")  # type: ignore[arg-type]
        rows = list(meta.offtopic.background_rows)
        if not all(0 <= r < len(offtopic) for r in rows):
            raise IndexCorruptError(f"{self.where} has inconsistent off-topic rows")
        language = meta.keywords.language if meta.keywords is not None else None
        return StoredIndex(
            path=self.location,  # type: ignore[arg-type]
            meta=meta,
            chunks=RemoteChunks(tables),  # type: ignore[arg-type]
            vectors=RemoteVectors(tables),  # type: ignore[arg-type]
            offtopic=offtopic,
            background=np.asarray(offtopic[rows]),
            keywords=RemoteKeywords(RemoteTerms(tables, "terms", record.rows), language)
            if keywords and meta.keywords is not None
            else None,
            identity=record.identity,
            pages=self._pages(record, tables, language) if keywords else None,
        )

    def _pages(self, record: Record, tables: Tables, language: str | None) -> PageIndex | None:
        found = record.meta.pages
        if found is None or found.version != PAGES_VERSION or record.meta.keywords is None:
            return None
        count = len(record.page_starts) - 1
        if count != found.pages or len(record.page_topics) != count:
            raise IndexCorruptError(f"{self.where} has {count} pages where its record says {found.pages}")
        terms = RemoteTerms(tables, "page_terms", count)
        return PageIndex(
            RemoteKeywords(terms, language), record.page_starts, record.page_topics, float(found.linked)
        )

    # Searching inside the engine (store.engine.SearchEngine)

    def _opened(self) -> Queries:
        if self._queries is None:
            raise IndexMissingError(f"{self.where} was not read before being searched")
        return self._queries

    def candidates(
        self, vector: np.ndarray, tokens: Sequence[str] | None, depth: int, allowed: np.ndarray | None,
        include: np.ndarray,
    ) -> Candidates:  # fmt: skip
        return self._opened().candidates(vector, tokens, depth, allowed, include)

    def page_figures(self, vector: np.ndarray, tokens: Sequence[str], pages: np.ndarray) -> PageFigures:
        return self._opened().page_figures(vector, tokens, pages)

    # Writing

    def writable_target(self, docs: Path | None = None) -> PostgresStore:
        """This store, when a build may write its schema: missing, empty, or semsearch's."""
        self.connections.run(self._refuse_foreign, reading=False)
        return self

    def _refuse_foreign(self, connection: Any) -> None:
        schema = self.location.schema
        tables = schema_tables(connection, schema)
        if not tables:
            return
        if RECORD in tables:
            kinds = record_kinds(connection, schema)
            if kinds is not None and all(kind == INDEX_KIND for kind in kinds):
                return
        raise IndexLocationError(
            f"the schema {schema!r} at {self.location.server} holds tables semsearch did not make "
            f"({', '.join(tables[:3])}{', …' if len(tables) > 3 else ''}); refusing to write there "
            "(name another schema: ?schema=NAME)"
        )

    @contextmanager
    def lock(self) -> Iterator[None]:
        """A build's lock: a session advisory lock on the schema, on a connection of its own
        held for the build (the server drops it with the connection, a killed build's too). Let
        go of before the connection closes: a backend releases its locks as it exits, after the
        client has moved on, so a build just ended could still be seen running."""
        connection = connect(self.location)
        key, taken = [LOCK_CLASS, self.location.schema], False
        try:
            with failures(self.location, reading=False):
                taken = connection.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", key).fetchone()[0]
            if not taken:
                raise IndexBusyError(f"another semsearch build is writing {self.location}")
            yield
        finally:
            with suppress(Exception):
                if taken:
                    connection.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", key)
            with suppress(Exception):
                connection.close()

    def build_running(self) -> bool:
        key = [LOCK_CLASS, self.location.schema]

        def work(connection: Any) -> bool:
            taken = connection.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", key).fetchone()[0]
            if taken:
                connection.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", key)
            return not taken

        return self.connections.run(work, reading=False)

    def journal_folder(self) -> Path:
        """Where a build keeps its journal: a folder in the user's cache named after the server,
        database and schema (never the password)."""
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "semsearch" / "postgres"
        with suppress(OSError):
            cache.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{self.location.server}-{self.location.schema}").strip("-")
        return cache / name[:200]

    def write(self, built: Built, incremental: bool = False) -> None:
        """The build as a new version's tables and the record naming them, in one transaction;
        then the tables of the versions before the one it replaced dropped."""
        vectors, chunks, meta, offtopic, keywords, pages = built
        _check_vectors(vectors, chunks, offtopic)
        digest = texts_digest(chunk_json(chunk) for chunk in chunks)
        payload = Payload(meta.written(digest), vectors, chunks, offtopic, keywords, pages)
        version = new_version()
        connection = connect(self.location, create_extension=True)
        try:
            with failures(self.location, reading=False):
                with connection.transaction():
                    ensure_schema(connection, self.location.schema)
                    connection.execute(sql().SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(_record()))
                    self._refuse_foreign(connection)
                    previous = current_version(connection)
                    write_version(connection, payload, version)
                drop_stale(connection, self.location.schema, keep={version, previous or version})
        finally:
            with suppress(Exception):
                connection.close()

    def replace_meta(self, meta: IndexMeta) -> None:
        def work(connection: Any) -> None:
            with connection.transaction():
                read_record(connection, self.location)
                put_meta(connection, meta)

        self.connections.run(work, reading=False)

    def update_meta(
        self, read_as: tuple[int, int, str], meta: IndexMeta, change: Callable[[IndexMeta], IndexMeta]
    ) -> IndexMeta:
        def work(connection: Any) -> IndexMeta:
            with connection.transaction():
                connection.execute(sql().SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(_record()))
                if read_record(connection, self.location).identity != read_as:
                    raise IndexChangedError(
                        f"{self.where} changed since it was read (a build finished meanwhile): "
                        "nothing was written"
                    )
                changed = change(meta)
                put_meta(connection, changed)
                return changed

        with self.lock():
            return self.connections.run(work, reading=False)


def _record() -> Any:
    return sql().Identifier(RECORD)
