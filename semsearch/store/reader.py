"""Reading an index back: every file checked, vectors memory-mapped (never unpickled), and a
read that a concurrent build's swap interrupted started over."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.encode.pages import PAGES_VERSION, PageIndex
from semsearch.errors import (
    BuildInterruptedError,
    IndexCorruptError,
    IndexMissingError,
    MetaUnreadableError,
    SemsearchError,
)
from semsearch.store.chunkfile import CHUNKS_FILE, ChunkFile
from semsearch.store.meta import IndexMeta, read_meta_json
from semsearch.store.schema import META_FILE, journal_folder
from semsearch.util.regular import load_array, read_regular

READ_ERRORS = (OSError, ValueError, EOFError, KeyError, TypeError, IndexError, UnicodeDecodeError)
"""What reading a damaged file can raise (numpy, json, our own checks)."""


@dataclass(frozen=True)
class StoredIndex:
    """Everything read from an index folder, checked for consistency."""

    path: Path
    meta: IndexMeta
    chunks: ChunkFile
    vectors: np.ndarray
    offtopic: np.ndarray
    background: np.ndarray
    keywords: KeywordIndex | None
    identity: tuple[int, int, str]
    """The folder's (device, inode) and the sha256 of its meta.json when read."""
    pages: PageIndex | None = None
    """None when not read with the keywords, or built before page evidence (or by another version
    of it: the next build makes it anew)."""


# Reading


def identity(folder: Path) -> tuple[int, int, str] | None:
    try:
        stat = folder.stat()
        digest = hashlib.sha256(read_regular(folder / META_FILE)).hexdigest()
    except (OSError, ValueError):
        return None
    return (stat.st_dev, stat.st_ino, digest)


def read_index(index_dir: Path, attempts: int = 3, keywords: bool = True) -> StoredIndex:
    """Read and check an index; vectors are memory-mapped, never unpickled (``keywords`` False:
    its keyword index is not read, and is None).

    A build swaps a new index folder in while a reader may be reading: if the folder changed
    during the read, the read starts over, so the result is wholly the old or the new index.
    """
    index_dir = Path(index_dir)
    for attempt in range(attempts):
        before = identity(index_dir)
        try:
            stored = _read(index_dir, before, keywords)
        except SemsearchError:
            if attempt + 1 < attempts and identity(index_dir) != before:
                continue
            raise
        if identity(index_dir) == before:
            return stored
    raise IndexCorruptError(f"the index at {index_dir}/ kept changing while being read; try again")


def _read(index_dir: Path, identity: tuple[int, int, str] | None, keywords: bool = True) -> StoredIndex:
    if index_dir.exists() and not index_dir.is_dir():
        raise IndexMissingError(f"{index_dir} is a file, not an index folder")
    if not index_dir.exists():
        from semsearch.store.cleanup import marked  # only when there is no index

        if marked(journal_folder(index_dir)):
            raise BuildInterruptedError(
                f"no index at {index_dir}/ yet: its first build was interrupted "
                "(the vectors it embedded are kept)"
            )
        raise IndexMissingError(f"no index at {index_dir}/ (no such folder)")
    if not os.path.lexists(index_dir / META_FILE):
        raise IndexMissingError(f"no index at {index_dir}/ (the folder holds no meta.json)")
    problem = f"index at {index_dir}/"
    try:
        obj = read_meta_json(index_dir)
    except READ_ERRORS as exc:
        raise MetaUnreadableError(f"{problem} has unreadable metadata ({exc})") from exc
    if identity is None:  # replaced between the two reads: read_index starts over
        raise IndexCorruptError(f"{problem} changed while being read")
    meta = IndexMeta.from_json(obj, problem)
    try:
        chunks = ChunkFile.open(index_dir)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"{problem} is incomplete ({Path(exc.filename).name} missing)") from exc
    except READ_ERRORS as exc:
        raise IndexCorruptError(f"{problem} has unreadable chunks ({exc})") from exc
    dim = meta.model.dim
    vectors = _load_matrix(index_dir / "vectors.npy", dim)
    offtopic = _load_matrix(index_dir / "offtopic.npy", dim)
    rows = list(meta.offtopic.background_rows)
    if not all(0 <= r < len(offtopic) for r in rows):
        raise IndexCorruptError(f"{problem} has inconsistent off-topic rows")
    check_vectors(offtopic, index_dir, "offtopic.npy")
    if vectors.shape[0] != len(chunks) or meta.chunks != len(chunks):
        raise IndexCorruptError(
            f"{problem}: {vectors.shape[0]} vectors for {len(chunks)} chunks (meta says {meta.chunks})"
        )
    check_vectors(vectors, index_dir, "vectors.npy")
    for source, record in meta.files.items():
        start, end = record.rows or (0, 0)
        if not 0 <= start <= end <= len(chunks):
            raise IndexCorruptError(f"{problem}: rows of {source!r} out of range")
    return StoredIndex(
        path=index_dir,
        meta=meta,
        chunks=chunks,
        vectors=vectors,
        offtopic=offtopic,
        background=np.asarray(offtopic[rows]),
        keywords=_load_keywords(index_dir, meta, len(chunks), problem) if keywords else None,
        identity=identity,
        pages=load_pages(index_dir, meta, len(chunks), problem) if keywords else None,
    )


def _load_keywords(index_dir: Path, meta: IndexMeta, rows: int, problem: str) -> KeywordIndex | None:
    if meta.keywords is None:
        return None  # built before keyword search existed
    if not meta.keywords.holds("language"):
        raise IndexCorruptError(f"{problem} has an unreadable keyword index ('language')")
    try:
        return KeywordIndex.load(index_dir, rows, meta.keywords.language)
    except READ_ERRORS as exc:
        raise IndexCorruptError(f"{problem} has an unreadable keyword index ({exc})") from exc


def load_pages(index_dir: Path, meta: IndexMeta, rows: int, problem: str) -> PageIndex | None:
    """The page index (``encode.pages``) the record names; None when it names none or another
    version's (searched without page evidence until the next build)."""
    record = meta.pages
    if record is None or record.version != PAGES_VERSION or meta.keywords is None:
        return None
    try:
        pages = PageIndex.load(index_dir, rows, meta.keywords.language, float(record.linked))
    except READ_ERRORS as exc:
        raise IndexCorruptError(f"{problem} has an unreadable page index ({exc})") from exc
    if pages.count != record.pages:
        raise IndexCorruptError(
            f"{problem} has a page index of {pages.count} pages (meta says {record.pages})"
        )
    return pages


def _load_matrix(path: Path, dim: int) -> np.ndarray:
    """A float32 (N, dim) array, memory-mapped; anything else is a corrupt index."""
    problem = f"index at {path.parent}/"
    try:
        matrix = load_array(path)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"{problem} is incomplete ({path.name} missing)") from exc
    except READ_ERRORS as exc:
        raise IndexCorruptError(
            f"{problem} has an unreadable {path.name} ({exc or type(exc).__name__})"
        ) from exc
    if (
        not isinstance(matrix, np.ndarray)
        or matrix.dtype != np.float32
        or matrix.ndim != 2
        or matrix.shape[1] != dim
    ):
        raise IndexCorruptError(
            f"{problem}: {path.name} is {getattr(matrix, 'dtype', '?')} {getattr(matrix, 'shape', '?')}, "
            f"expected float32 (N, {dim})"
        )
    return matrix


UNIT_TOLERANCE = 1e-3
"""How far from 1 a stored row's length may be (float32 rounding is about 1e-6)."""


def bad_rows(matrix: np.ndarray) -> np.ndarray:
    """The rows of ``matrix`` that are not of unit length (NaN, infinite, zero or any other
    length): one vectorised pass over the squared norms in float32, no copy of the matrix (for
    100,000 rows of 384 dimensions, 20-40 ms: about what one question's cosines cost)."""
    squares = np.einsum("ij,ij->i", matrix, matrix)
    return np.flatnonzero(~(np.abs(squares - 1) < 2 * UNIT_TOLERANCE))


def check_vectors(matrix: np.ndarray, where: Path, name: str) -> None:
    """Raise IndexCorruptError unless every row of ``matrix`` is of unit length (see ``bad_rows``):
    a NaN or zero row is damage, never a score that silently answers nothing."""
    bad = bad_rows(matrix)
    if len(bad):
        raise IndexCorruptError(
            f"index at {where}/ has damaged vectors ({len(bad):,} of {len(matrix):,} rows of {name} "
            f"are NaN, infinite, zero or not unit length, the first row {int(bad[0])})"
        )


def check_unit_rows(matrix: np.ndarray, rows: np.ndarray, where: Path) -> None:
    """``check_vectors`` on the ``rows`` of ``matrix``."""
    if len(bad_rows(np.asarray(matrix[rows]))):
        raise IndexCorruptError(f"index at {where}/ has damaged vectors (rows that are not unit length)")


def check_chunks(chunks: ChunkFile, meta: IndexMeta, where: Path) -> None:
    """Raise IndexCorruptError unless ``chunks`` are the ones the build wrote: the file matches
    the sha256 meta.json records, or, in an index written before that digest, every chunk parses.
    Done before a build reuses them (`ask` reads only the chunks it shows, unchecked)."""
    recorded = meta.chunks_digest
    try:
        if recorded is None:
            chunks.load()
            return
        same = chunks.sha256() == recorded
    except OSError as exc:
        raise IndexCorruptError(f"index at {where}/ has unreadable chunks ({exc})") from exc
    if not same:
        raise IndexCorruptError(f"{CHUNKS_FILE} no longer matches the checksum in meta.json")
