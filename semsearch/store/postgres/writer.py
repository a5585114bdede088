"""Writing a build into its schema (the tables: ``layout``): a new version's tables filled,
indexed and named by the record in one transaction, then the tables no record names dropped."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.encode.pages import PageIndex
from semsearch.encode.vocabulary import column_tokens
from semsearch.ingest.chunk import Chunk
from semsearch.store.meta import IndexMeta
from semsearch.store.postgres.files import files_rows
from semsearch.store.postgres.layout import (
    FORMAT,
    HNSW_M,
    PAGE_SAMPLE,
    PART_TABLE,
    PARTS,
    RECORD,
    RECORD_COLUMNS,
    ROW_SAMPLE,
    SAMPLE_ROWS,
    SAMPLE_SEED,
    record_table,
    sql,
    table,
    version_indexes,
    version_tables,
)
from semsearch.store.schema import INDEX_KIND

BUILD_MEMORY = os.environ.get("SEMSEARCH_PG_BUILD_MEMORY")
"""``maintenance_work_mem`` while a build makes its HNSW index; by default what the graph of its
passages needs (``build_memory``): the server's own default, 64 MB, makes a graph of 100,000
passages spill to disk, and building from disk is several times slower."""
MAX_BUILD_MEMORY_MB = 1024
DROP_WAIT = "2s"
"""How long dropping an old version's tables waits for readers still on it (then the next build
drops them)."""


@dataclass(frozen=True)
class Payload:
    """What one build writes: the record's fields but the version and stamp, and the rows."""

    meta: IndexMeta
    vectors: np.ndarray
    chunks: Sequence[Chunk]
    offtopic: np.ndarray
    keywords: KeywordIndex
    pages: PageIndex | None

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def page_of_rows(self) -> np.ndarray:
        if self.pages is None:
            return np.zeros(len(self.chunks), dtype=np.int64)
        return self.pages.page_of_rows()

    def page_starts(self) -> np.ndarray:
        if self.pages is None:
            return np.array([0, len(self.chunks)] if len(self.chunks) else [0], dtype=np.int64)
        return np.asarray(self.pages.starts, dtype=np.int64)


def build_memory(payload: Payload) -> str:
    """``maintenance_work_mem`` for ``payload``'s HNSW graph: its vectors and links, at least
    64 MB, at most ``MAX_BUILD_MEMORY_MB`` (``SEMSEARCH_PG_BUILD_MEMORY`` sets it instead)."""
    if BUILD_MEMORY:
        return BUILD_MEMORY
    links = 2 * HNSW_M * 16  # the bottom layer's neighbours, a pointer and a distance each
    needed = len(payload.chunks) * (payload.dim * 4 + links + 100) * 1.3 / (1 << 20)
    return f"{int(min(MAX_BUILD_MEMORY_MB, max(64, needed)))}MB"


def new_version() -> str:
    return secrets.token_hex(6)


def ensure_schema(connection: Any, schema: str) -> None:
    """The schema and the record's table, made when missing (the caller checked they are ours)."""
    s = sql()
    connection.execute(s.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(s.Identifier(schema)))
    connection.execute(record_table())


def write_version(connection: Any, payload: Payload, version: str) -> None:
    """``payload`` as ``version``'s tables and the record naming them; the caller holds a
    transaction (nothing is seen before it commits, nothing is left if it does not). The rows go
    in frozen (``COPY … FREEZE``: the tables are this transaction's own), so that the first
    questions do not set every page's hint bits, and analyzed."""
    connection.execute("SELECT set_config('maintenance_work_mem', %s, true)", [build_memory(payload)])
    for statement in version_tables(version, payload.dim):
        connection.execute(statement)
    _copy_chunks(connection, payload, version)
    _copy_terms(connection, table("terms", version), payload.keywords)
    if payload.pages is not None:
        _copy_terms(connection, table("page_terms", version), payload.pages.keywords)
    centroids = _centroids(payload.vectors, payload.page_starts())
    _copy_rows(
        connection,
        table("pages", version),
        {"page": "int4", "centroid": "vector"},
        ((page, vector) for page, vector in enumerate(centroids)),
    )
    _copy_samples(connection, version, payload.vectors, centroids)
    _copy_rows(
        connection,
        table("files", version),
        {"position": "int4", "source": "text", "first_row": "int4", "end_row": "int4", "record": "text"},
        files_rows(payload.meta.files),
    )
    for statement in version_indexes(version, payload.dim):
        connection.execute(statement)
    for part in PARTS:  # the planner's statistics, before the first question (not autovacuum's later)
        connection.execute(sql().SQL("ANALYZE {}").format(table(part, version)))
    _put_record(connection, payload, version)


def _copy_rows(connection: Any, name: Any, columns: dict[str, str], rows: Iterable[tuple]) -> None:
    """``rows`` into the table ``name``'s ``columns`` (each name and its type), by binary
    ``COPY``, frozen: every version's table is made in the transaction that fills it."""
    s = sql()
    listed = s.SQL(", ").join(map(s.Identifier, columns))
    statement = s.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY, FREEZE)").format(name, listed)
    with connection.cursor() as cursor, cursor.copy(statement) as copy:
        copy.set_types(list(columns.values()))
        for row in rows:
            copy.write_row(row)


def _copy_chunks(connection: Any, payload: Payload, version: str) -> None:
    pages = payload.page_of_rows()
    rows = (
        (row, int(pages[row]), chunk_json(chunk), payload.vectors[row])
        for row, chunk in enumerate(payload.chunks)
    )
    columns = {"row": "int4", "page": "int4", "chunk": "text", "embedding": "vector"}
    _copy_rows(connection, table("chunks", version), columns, rows)


def chunk_json(chunk: Chunk) -> str:
    """A chunk as the folder index's chunks.json holds it (one line of ``write_chunks``)."""
    return json.dumps(chunk.to_dict(), ensure_ascii=False)


def _copy_terms(connection: Any, name: Any, keywords: KeywordIndex) -> None:
    columns = {"token": "text", "rows": "int4[]", "weights": "float4[]"}
    _copy_rows(connection, name, columns, _columns(keywords))


def _columns(keywords: KeywordIndex) -> Iterator[tuple[str, list[int], list[float]]]:
    indptr = np.asarray(keywords.indptr, dtype=np.int64)
    for column, token in enumerate(column_tokens(keywords.vocab)):
        start, end = int(indptr[column]), int(indptr[column + 1])
        yield token, keywords.indices[start:end].tolist(), keywords.data[start:end].tolist()


def _centroids(vectors: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each page's mean vector (rows ``starts[p]`` to ``starts[p + 1]``)."""
    if len(starts) < 2:
        return np.empty((0, vectors.shape[1]), dtype=np.float32)
    sums = np.add.reduceat(np.asarray(vectors, dtype=np.float64), starts[:-1], axis=0)
    return (sums / np.diff(starts)[:, None]).astype(np.float32)


def sample(count: int, size: int | None = None) -> np.ndarray:
    """A fixed random ``size`` of ``range(count)`` (``SAMPLE_ROWS``), in order (all of it when it
    is no bigger)."""
    size = SAMPLE_ROWS if size is None else size
    if count <= size:
        return np.arange(count, dtype=np.int64)
    return np.sort(np.random.default_rng(SAMPLE_SEED).choice(count, size, replace=False))


def _copy_samples(connection: Any, version: str, vectors: np.ndarray, centroids: np.ndarray) -> None:
    def rows() -> Iterator[tuple]:
        for what, matrix in ((ROW_SAMPLE, vectors), (PAGE_SAMPLE, centroids)):
            for i in sample(len(matrix)):
                yield what, int(i), matrix[i]

    columns = {"what": "int2", "id": "int4", "embedding": "vector"}
    _copy_rows(connection, table("samples", version), columns, rows())


def _put_record(connection: Any, payload: Payload, version: str) -> None:
    s = sql()
    starts = payload.page_starts()
    topics = (
        np.asarray(payload.pages.topics, dtype="<f4") if payload.pages is not None else np.zeros(0, "<f4")
    )
    values = {
        "kind": INDEX_KIND,
        "format": FORMAT,
        "version": version,
        "stamp": secrets.token_hex(8),
        "meta": meta_text(payload.meta),
        "dim": payload.dim,
        "rows": len(payload.chunks),
        "pages": len(starts) - 1,
        "offtopic": np.ascontiguousarray(payload.offtopic, dtype="<f4").tobytes(),
        "offtopic_rows": len(payload.offtopic),
        "page_starts": np.ascontiguousarray(starts, dtype="<i8").tobytes(),
        "page_topics": topics.tobytes(),
    }
    columns = s.SQL(", ").join(map(s.Identifier, RECORD_COLUMNS))
    placeholders = s.SQL(", ").join(map(s.Placeholder, RECORD_COLUMNS))
    updates = s.SQL(", ").join(s.SQL("{0} = EXCLUDED.{0}").format(s.Identifier(c)) for c in RECORD_COLUMNS)
    connection.execute(
        s.SQL("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT (singleton) DO UPDATE SET {}").format(
            s.Identifier(RECORD), columns, placeholders, updates
        ),
        values,
    )


def meta_text(meta: IndexMeta) -> str:
    """The record's meta: meta.json's record but its files (the version's ``files`` table)."""
    return json.dumps(replace(meta, files={}).to_json(), ensure_ascii=False)


def put_meta(connection: Any, meta: IndexMeta) -> None:
    """Replace the record's ``meta`` (and its stamp) alone."""
    s = sql()
    connection.execute(
        s.SQL("UPDATE {} SET meta = %s, stamp = %s").format(s.Identifier(RECORD)),
        [meta_text(meta), secrets.token_hex(8)],
    )


def current_version(connection: Any) -> str | None:
    """The version the record names now (None: no record yet); the caller holds its lock."""
    found = connection.execute(
        sql().SQL("SELECT version FROM {}").format(sql().Identifier(RECORD))
    ).fetchall()
    return str(found[0][0]) if len(found) == 1 else None


def drop_stale(connection: Any, schema: str, keep: set[str]) -> None:
    """Drop the tables of every version but those in ``keep`` (the new one, and the one it
    replaced: a reader that opened that one reads on until the next build): only tables named
    as ``layout`` names them, each waiting at most ``DROP_WAIT`` for readers (else the next
    build drops it)."""
    s = sql()
    found = connection.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename", [schema]
    ).fetchall()
    for (name,) in found:
        matched = PART_TABLE.fullmatch(name)
        if matched is None or matched.group(2) in keep:
            continue
        with suppress(Exception), connection.transaction():
            connection.execute("SELECT set_config('lock_timeout', %s, true)", [DROP_WAIT])
            connection.execute(s.SQL("DROP TABLE IF EXISTS {}").format(s.Identifier(name)))
