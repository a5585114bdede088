"""The parts of an index a search reads on demand from the tables of the version it opened
(chunks, vectors, keyword columns), checked as they come: a row out of range, a missing one, a
column longer than the index or a weight that is not a number is an ``IndexCorruptError`` (one
line), and no read is bigger than what it asks for."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.errors import IndexCorruptError
from semsearch.ingest.chunk import Chunk
from semsearch.store.chunkfile import _chunk_from
from semsearch.store.postgres.connection import Connections
from semsearch.store.postgres.layout import sql, table
from semsearch.util.jsonparse import parse_json

CHUNK_BOUND = 64 << 20
"""The largest chunk read (a chunk is a few hundred tokens: a bigger one is damage or a trap)."""
BATCH = 4096
"""Rows per request when many are read (a build reusing vectors, ``info`` checking chunks)."""
CACHED_POSTINGS = 4_000_000
"""Keyword postings kept between calls (a question looks the same token up several times)."""
CACHED_COUNTS = 100_000
"""Tokens whose count of rows is kept between calls (``RemoteTerms.frequency``)."""


class Tables:
    """The tables of one version, read through one connection per thread."""

    def __init__(self, connections: Connections, version: str, dim: int, rows: int):
        self.connections = connections
        self.location = connections.location
        self.version = version
        self.dim = dim
        self.rows = rows

    @property
    def where(self) -> str:
        return f"the index at {self.location}"

    def name(self, part: str) -> Any:
        return table(part, self.version)

    def fetch(self, query: Any, params: Any = None) -> list[tuple]:
        return self.connections.run(lambda connection: connection.execute(query, params).fetchall())

    def damaged(self, what: str) -> IndexCorruptError:
        return IndexCorruptError(f"{self.where} is damaged ({what})")


class RemoteChunks(Sequence[Chunk]):
    """The chunks, in row order, read when asked for (a few per question)."""

    def __init__(self, tables: Tables):
        self.tables = tables
        self._cache: dict[int, Chunk] = {}

    def __len__(self) -> int:
        return self.tables.rows

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return self.fetch(range(len(self))[key])
        row = int(key)
        if not -len(self) <= row < len(self):
            raise IndexError(row)
        return self.fetch([row % len(self)])[0]

    def fetch(self, rows: Sequence[int]) -> list[Chunk]:
        """The chunks of ``rows`` (each in range), in that order."""
        wanted = sorted({int(row) for row in rows} - set(self._cache))
        for start in range(0, len(wanted), BATCH):
            batch = wanted[start : start + BATCH]
            for row, text in self._texts(sql().SQL("row = ANY(%s)"), [batch], len(batch)):
                self._remember(row, _chunk(text, self.tables))
        return [self._cache[int(row)] for row in rows]

    def _remember(self, row: int, chunk: Chunk) -> None:
        if len(self._cache) >= BATCH:
            self._cache = {}
        self._cache[row] = chunk

    def _texts(self, condition: Any, params: list, expected: int) -> list[tuple[int, str]]:
        s = sql()
        query = s.SQL(
            "SELECT row, CASE WHEN octet_length(chunk) <= %s THEN chunk END FROM {} WHERE {} ORDER BY row"
        )
        found = self.tables.fetch(query.format(self.tables.name("chunks"), condition), [CHUNK_BOUND, *params])
        if len(found) != expected:
            raise self.tables.damaged(f"{expected - len(found):,} of its passages are missing")
        return found

    def texts(self) -> Iterator[str]:
        """Every chunk's stored JSON text, in row order, a batch at a time."""
        for start in range(0, len(self), BATCH):
            end = min(start + BATCH, len(self))
            for row, text in self._texts(sql().SQL("row >= %s AND row < %s"), [start, end], end - start):
                if text is None:
                    raise self.tables.damaged(
                        f"the passage of row {row} is larger than {CHUNK_BOUND:,} bytes"
                    )
                yield text

    def __iter__(self) -> Iterator[Chunk]:
        for text in self.texts():
            yield _chunk(text, self.tables)

    def load(self) -> list[Chunk]:
        return list(self)

    def sha256(self) -> str:
        """The sha256 of the chunks as stored (the record holds it, as a folder's meta.json holds
        that of chunks.json): any change to one shows."""
        return texts_digest(self.texts())

    def close(self) -> None:
        self.tables.connections.close()


def texts_digest(texts: Iterable[str]) -> str:
    """The sha256 of the chunks' JSON ``texts`` as ``chunks.json`` would hold them (one a line,
    between brackets)."""
    digest = hashlib.sha256(b"[\n")
    first = True
    for text in texts:
        digest.update((b"" if first else b",\n") + text.encode("utf-8"))
        first = False
    digest.update(b"]\n" if first else b"\n]\n")
    return digest.hexdigest()


def _chunk(text: str | None, tables: Tables) -> Chunk:
    if text is None:
        raise tables.damaged(f"a passage is larger than {CHUNK_BOUND:,} bytes")
    try:
        return _chunk_from(parse_json(text))
    except ValueError as exc:
        raise tables.damaged(f"an unreadable passage: {exc}") from None


class RemoteVectors:
    """The vectors, as an array of ``shape`` (rows, dim) read a few rows at a time: ``[rows]``
    fetches those (a build reusing them, the check of the passages shown), ``np.asarray`` all."""

    dtype = np.dtype(np.float32)
    ndim = 2

    def __init__(self, tables: Tables):
        self.tables = tables
        self.shape = (tables.rows, tables.dim)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> np.ndarray:
        if isinstance(key, tuple):
            return self[key[0]][(slice(None), *key[1:])]
        rows = np.arange(len(self))[key] if isinstance(key, slice | int | np.integer) else np.asarray(key)
        single = np.ndim(rows) == 0
        rows = np.atleast_1d(rows).astype(np.int64)
        if len(rows) and (rows.min() < -len(self) or rows.max() >= len(self)):
            raise IndexError("row out of range")
        found = self.fetch(rows % max(len(self), 1))
        return found[0] if single else found

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        found = self.fetch(np.arange(len(self)))
        return found if dtype is None else found.astype(dtype)

    def fetch(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of ``rows`` (in range), in that order."""
        unique, inverse = np.unique(rows, return_inverse=True)
        out = np.empty((len(unique), self.tables.dim), dtype=np.float32)
        for start in range(0, len(unique), BATCH):
            batch = unique[start : start + BATCH]
            out[start : start + len(batch)] = self._batch(batch.tolist())
        return out[inverse.reshape(-1)] if len(rows) else out

    def _batch(self, rows: list[int]) -> np.ndarray:
        s = sql()
        query = s.SQL(
            "SELECT count(*), string_agg(vector_send(embedding), ''::bytea ORDER BY row) "
            "FROM {} WHERE row = ANY(%s)"
        ).format(self.tables.name("chunks"))
        count, data = self.tables.fetch(query, [rows])[0]
        dim = self.tables.dim
        if count != len(rows):
            raise self.tables.damaged(f"{len(rows) - count:,} of its vectors are missing")
        return decode_vectors(data or b"", count, dim, self.tables)


def decode_vectors(data: bytes, count: int, dim: int, tables: Tables) -> np.ndarray:
    """``count`` vectors as pgvector sends them (a 2-byte dimension, 2 unused, big-endian floats)."""
    if len(data) != count * (dim + 1) * 4:
        raise tables.damaged("vectors of another dimension")
    raw = np.frombuffer(data, dtype=">f4").reshape(count, dim + 1)
    header = np.frombuffer(data, dtype=">u2").reshape(count, 2 * (dim + 1))[:, :2]
    if count and ((header[:, 0] != dim).any() or (header[:, 1] != 0).any()):
        raise tables.damaged("vectors of another dimension")
    return raw[:, 1:].astype(np.float32)


class RemoteTerms:
    """A keyword index's vocabulary and columns (``terms`` or ``page_terms``), looked up token by
    token (see ``RemoteKeywords``)."""

    def __init__(self, tables: Tables, part: str, rows: int):
        self.tables = tables
        self.part = part
        self.rows = rows
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._cached = 0
        self._counts: dict[str, int] = {}

    def get(self, token: str) -> int | None:
        return 0 if self.frequency(token) else None

    def frequency(self, token: str) -> int:
        """How many rows hold ``token``, counted in the database (a common word's column is
        as long as the index: a question's word weights need its length alone)."""
        found = self._cache.get(token)
        if found is not None:
            return len(found[0])
        counted = self._counts.get(token)
        if counted is None:
            query = sql().SQL("SELECT cardinality(rows) FROM {} WHERE token = %s")
            rows = self.tables.fetch(query.format(self.tables.name(self.part)), [token])
            counted = int(rows[0][0]) if rows else 0
            if not 0 <= counted <= self.rows:
                raise self.tables.damaged("a keyword column longer than the index")
            if len(self._counts) >= CACHED_COUNTS:
                self._counts = {}
            self._counts[token] = counted
        return counted

    def column(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding ``token`` and their weights, checked (empty when none does)."""
        found = self._cache.get(token)
        if found is None:
            found = self._read(token)
            if self._cached + len(found[0]) > CACHED_POSTINGS:
                self._cache, self._cached = {}, 0
            self._cache[token] = found
            self._cached += len(found[0])
        return found

    def _read(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        s = sql()
        query = s.SQL(
            "SELECT CASE WHEN cardinality(rows) <= %s AND cardinality(rows) = cardinality(weights) "
            "THEN rows END, CASE WHEN cardinality(rows) <= %s THEN weights END FROM {} WHERE token = %s"
        ).format(self.tables.name(self.part))
        found = self.tables.fetch(query, [self.rows, self.rows, token])
        if not found:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        rows, weights = found[0]
        if rows is None or weights is None:
            raise self.tables.damaged("a keyword column longer than the index or not matching its weights")
        rows = np.asarray(rows, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float32)
        if len(rows) and (rows.min() < 0 or rows.max() >= self.rows):
            raise self.tables.damaged("a keyword column refers to passages the index does not hold")
        if not np.isfinite(weights).all():
            raise self.tables.damaged("keyword weights that are not finite numbers")
        return rows, weights

    def has_prefix(self, prefix: str, longest: int | None = None) -> bool:
        """As ``SortedVocabulary.has_prefix``: the first ``PREFIX_SCAN`` tokens from ``prefix`` on."""
        from semsearch.encode.vocabulary import PREFIX_SCAN

        s = sql()
        query = s.SQL("SELECT token FROM {} WHERE token >= %s ORDER BY token LIMIT %s")
        found = self.tables.fetch(query.format(self.tables.name(self.part)), [prefix, PREFIX_SCAN + 1])
        for (token,) in found[:PREFIX_SCAN]:
            if not token.startswith(prefix):
                return False
            if longest is None or len(token) <= longest:
                return True
        return len(found) > PREFIX_SCAN

    def tokens(self) -> list[str]:
        query = sql().SQL("SELECT token FROM {} ORDER BY token").format(self.tables.name(self.part))
        return [token for (token,) in self.tables.fetch(query)]


class RemoteKeywords(KeywordIndex):
    """A ``KeywordIndex`` whose columns are read from the database when asked for: every method
    of the folder index's (BM25 scores, rows holding a code, coverage) runs unchanged on it."""

    def __init__(self, terms: RemoteTerms, language: str | None):
        empty = np.empty(0)
        super().__init__(
            data=empty, indices=empty, indptr=empty, vocab=terms, rows=terms.rows, language=language
        )

    def _column(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        return self.vocab.column(token)  # type: ignore[union-attr]

    def document_frequency(self, token: str) -> int:
        return self.vocab.frequency(token)  # type: ignore[union-attr]
