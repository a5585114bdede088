"""How an index is laid out in its PostgreSQL schema.

- ``semsearch_index``: the *record*, one row: semsearch's marker (``kind``), the layout's
  ``format``, the ``version`` of the tables below that are the index now, a ``stamp`` new at each
  write of the row, ``meta.json``'s record as one JSON text (written and checked by the folder
  index's own functions; its ``files`` in a table, below), the dimension and counts, the
  off-topic bank's vectors and each page's first row and topic share as plain little-endian
  arrays (``bytea``: nothing is unpickled).
- one set of tables per build, named by its ``version`` (twelve hex digits), never changed once
  the record names them:

  - ``chunks_V``: one row per passage: its ``row`` (the folder index's row), its ``page`` (file),
    the chunk as JSON text and its ``embedding`` (``vector(dim)``, unit length: inner product is
    the cosine), with an HNSW index for inner product and a btree on ``(page, row)``;
  - ``terms_V``: the keyword index, one row per token (``COLLATE "C"``: byte order, as the folder
    index's sorted vocabulary): the rows holding it and their BM25 weights, as two arrays;
  - ``page_terms_V``: the same over whole pages (``encode.pages``);
  - ``pages_V``: each page's ``centroid`` (the mean of its passages' vectors: a page's mean cosine
    is one inner product);
  - ``samples_V``: a fixed random sample of the passages' vectors (``what`` 0) and of the pages'
    centroids (``what`` 1), from which a big index's median cosines are estimated;
  - ``files_V``: each file's record (meta.json's ``files`` entry, as JSON text), by its
    ``position`` in the build's order and its ``source``, with its rows (``files``): the record's
    meta holds no files, so that opening an index reads a few kilobytes whatever its size.

A build writes a new version's tables and the record in one transaction, then drops the tables
of the versions before the one it replaced: a reader reads the tables of the version it opened,
which never change, so it sees the old or the new index, never a mix, and one that opened the
version a build replaced reads on until the next build drops it.
"""

from __future__ import annotations

import re
from typing import Any

RECORD = "semsearch_index"
FORMAT = 2
"""The layout of the tables; a record of another format is refused (an older or newer
semsearch's: format 1 held every file's record in the record's meta)."""
PARTS = ("chunks", "terms", "page_terms", "pages", "samples", "files")
VERSION = re.compile(r"[0-9a-f]{12}")
PART_TABLE = re.compile(rf"({'|'.join(PARTS)})_([0-9a-f]{{12}})")
"""The name of a version's table: only tables so named, in a schema holding semsearch's record,
are ever dropped."""
HNSW_MAX_DIM = 2000
"""pgvector's HNSW indexes ``vector`` columns of up to 2,000 dimensions: a bigger model's index is
searched by exact scans."""
HNSW_M, HNSW_EF_CONSTRUCTION = 32, 128
"""The HNSW graph's links per passage and the candidates each insertion weighs. pgvector's
defaults (16, 64) found 0.67 of the exact top 10 at 10^6 passages, a quarter of the questions not
even their own nearest passage; these 0.994 at the same ``ef_search`` (``bench/
postgres_recall_probe.py``), the graph built in 3.8 times as long: an hour of a busy 2-core
machine at 10^6 passages, whose embedding takes about a day there."""
SAMPLE_ROWS = 4096
"""Passages (and pages) in the sample a big index's median cosine is estimated from."""
SAMPLE_SEED = 20_250_601
ROW_SAMPLE, PAGE_SAMPLE = 0, 1

RECORD_COLUMNS = (
    "kind",
    "format",
    "version",
    "stamp",
    "meta",
    "dim",
    "rows",
    "pages",
    "offtopic",
    "offtopic_rows",
    "page_starts",
    "page_topics",
)


def sql() -> Any:
    from psycopg import sql

    return sql


def table(part: str, version: str) -> Any:
    """The quoted name of ``part``'s table of ``version`` (in the schema first on the search path)."""
    if part not in PARTS or not VERSION.fullmatch(version):
        raise ValueError(f"no table {part!r} of version {version!r}")
    return sql().Identifier(f"{part}_{version}")


def record_table() -> Any:
    s = sql()
    return s.SQL(
        "CREATE TABLE IF NOT EXISTS {} ("
        " singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),"
        " kind text NOT NULL, format integer NOT NULL, version text NOT NULL, stamp text NOT NULL,"
        " meta text NOT NULL, dim integer NOT NULL, rows integer NOT NULL, pages integer NOT NULL,"
        " offtopic bytea NOT NULL, offtopic_rows integer NOT NULL,"
        " page_starts bytea NOT NULL, page_topics bytea NOT NULL)"
    ).format(s.Identifier(RECORD))


def version_tables(version: str, dim: int) -> list[Any]:
    """The statements creating ``version``'s tables for vectors of ``dim`` dimensions."""
    s = sql()
    vector = s.SQL("vector({})").format(s.Literal(int(dim)))
    return [
        s.SQL(
            "CREATE TABLE {} (row integer PRIMARY KEY, page integer NOT NULL, chunk text NOT NULL,"
            " embedding {} NOT NULL)"
        ).format(table("chunks", version), vector),
        s.SQL(
            'CREATE TABLE {} (token text COLLATE "C" PRIMARY KEY, rows integer[] NOT NULL,'
            " weights real[] NOT NULL)"
        ).format(table("terms", version)),
        s.SQL(
            'CREATE TABLE {} (token text COLLATE "C" PRIMARY KEY, rows integer[] NOT NULL,'
            " weights real[] NOT NULL)"
        ).format(table("page_terms", version)),
        s.SQL("CREATE TABLE {} (page integer PRIMARY KEY, centroid {} NOT NULL)").format(
            table("pages", version), vector
        ),
        s.SQL(
            "CREATE TABLE {} (what smallint NOT NULL, id integer NOT NULL, embedding {} NOT NULL,"
            " PRIMARY KEY (what, id))"
        ).format(table("samples", version), vector),
        s.SQL(
            'CREATE TABLE {} (position integer PRIMARY KEY, source text COLLATE "C" NOT NULL UNIQUE,'
            " first_row integer, end_row integer, record text NOT NULL)"
        ).format(table("files", version)),
    ]


def version_indexes(version: str, dim: int) -> list[Any]:
    """The indexes made once ``version``'s rows are in (faster than growing them row by row)."""
    s = sql()
    chunks = table("chunks", version)
    made = [s.SQL("CREATE INDEX ON {} (page, row)").format(chunks)]
    if dim <= HNSW_MAX_DIM:
        made.append(
            s.SQL(
                "CREATE INDEX ON {} USING hnsw (embedding vector_ip_ops) WITH (m = {}, ef_construction = {})"
            ).format(chunks, s.Literal(HNSW_M), s.Literal(HNSW_EF_CONSTRUCTION))
        )
    return made
