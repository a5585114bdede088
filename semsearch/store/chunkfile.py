"""``chunks.json`` that `ask` can read without parsing all of it.

The file stays plain, human-readable JSON (a list), written one chunk per line; the byte offset
of each line goes to ``chunks.offsets.npy``. `ask` reads only the k chunks it shows, so a
million-chunk index costs it a few small reads instead of parsing hundreds of megabytes.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from typing import BinaryIO, overload

import numpy as np

from semsearch.errors import IndexCorruptError
from semsearch.ingest.chunk import Chunk
from semsearch.util.jsonparse import parse_json
from semsearch.util.regular import ARRAY_BOUND, NotRegularFile, load_array, open_regular

CHUNKS_FILE = "chunks.json"
OFFSETS_FILE = "chunks.offsets.npy"
CHECKSUMS_FILE = "chunks.crc32.npy"
"""Each chunk's line's CRC-32: a chunk read is checked, so a line damaged in place (its length
kept, its offsets still right) is an error where it is read, not a wrong file name, line or
text shown. Indexes written before it have none, and their lines are read unchecked."""
DIGEST_BLOCK = 1 << 20
"""Bytes read at a time when ``chunks.json`` is checked against its digest."""


def write_chunks(folder: Path, chunks: Sequence[Chunk]) -> str:
    """Write ``chunks.json`` and its offsets; returns the sha256 of ``chunks.json`` (meta.json
    records it: see ``ChunkFile.sha256``)."""
    import hashlib  # a build's and its checks' (OpenSSL's library loads with it), not a cold ask's

    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    checksums = np.zeros(len(chunks), dtype=np.uint32)
    digest = hashlib.sha256()
    with open(folder / CHUNKS_FILE, "wb") as handle:

        def put(data: bytes) -> None:
            handle.write(data)
            digest.update(data)

        put(b"[\n")
        for i, chunk in enumerate(chunks):
            offsets[i] = handle.tell()
            line = json.dumps(chunk.to_dict(), ensure_ascii=False).encode("utf-8")
            checksums[i] = zlib.crc32(line)
            put(line)
            put(b",\n" if i + 1 < len(chunks) else b"\n")
        offsets[len(chunks)] = handle.tell()
        put(b"]\n")
    np.save(folder / OFFSETS_FILE, offsets)
    np.save(folder / CHECKSUMS_FILE, checksums)
    return digest.hexdigest()


class ChunkFile(Sequence[Chunk]):
    """The chunks of an index, read on demand from a file opened once (so a concurrent swap of
    the index folder cannot mix two indexes)."""

    def __init__(
        self, handle: BinaryIO, offsets: np.ndarray, checksums: np.ndarray | None = None, name: str = ""
    ):
        self._handle = handle
        self._name = name or str(getattr(handle, "name", CHUNKS_FILE))
        self._offsets = offsets
        self._checksums = checksums
        self._all: list[Chunk] | None = None

    @classmethod
    def open(cls, folder: Path) -> ChunkFile:
        """Open and check; raises OSError or ValueError when the files are missing or inconsistent."""
        handle = os.fdopen(open_regular(folder / CHUNKS_FILE, ARRAY_BOUND), "rb")  # kept for lazy reads
        try:
            offsets = load_array(folder / OFFSETS_FILE, mmap=False)
            size = handle.seek(0, 2)
            if offsets.ndim != 1 or len(offsets) < 1 or offsets.dtype.kind != "i":
                raise ValueError(f"{OFFSETS_FILE} is not a list of offsets")
            if offsets[0] != 2 or np.any(np.diff(offsets) <= 0) or offsets[-1] + 2 != size:
                raise ValueError(f"{CHUNKS_FILE} does not match {OFFSETS_FILE} (truncated or edited?)")
            checksums = _checksums(folder, len(offsets) - 1)
        except BaseException:
            handle.close()
            raise
        return cls(handle, offsets, checksums, str(folder / CHUNKS_FILE))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def close(self) -> None:
        self._handle.close()

    def _read(self, i: int) -> Chunk:
        """Chunk ``i``, read with one ``pread`` (no shared file position: safe across threads)."""
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        line = os.pread(self._handle.fileno(), end - start, start).rstrip(b",\n")
        self._check(i, line)
        try:
            return _chunk_from(parse_json(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise IndexCorruptError(f"chunk {i} in {self._name} is unreadable ({exc})") from exc

    def _check(self, i: int, line: bytes) -> None:
        """Raise IndexCorruptError unless chunk ``i``'s ``line`` is the one the build wrote."""
        if self._checksums is not None and zlib.crc32(line) != int(self._checksums[i]):
            raise IndexCorruptError(f"chunk {i} in {self._name} is damaged (not the text the build wrote)")

    def _check_lines(self, span: bytes, start: int, first: int, last: int) -> None:
        """``_check`` chunks ``first``..``last - 1``, whose lines ``span`` (read from byte ``start``
        of the file) holds; nothing to do in an index written before the checksums."""
        if self._checksums is None:
            return
        offsets = self._offsets[first : last + 1].tolist()
        for i, (begin, end) in enumerate(pairwise(offsets), first):
            self._check(i, span[begin - start : end - start].rstrip(b",\n"))

    def sha256(self) -> str:
        """The sha256 of the file as opened, read about ``DIGEST_BLOCK`` bytes of whole lines at a
        time (bounded memory), each line checked against its CRC-32 on the way. A build compares
        the digest with the one meta.json records: damage that keeps every line's length (a text
        edited in place) leaves the offsets consistent and shows nowhere else; a line that fails
        its CRC-32 (or a damaged checksum file) raises IndexCorruptError."""
        import hashlib

        digest = hashlib.sha256(os.pread(self._handle.fileno(), 2, 0))
        offsets, row = self._offsets, 0
        while row < len(self):
            last = min(len(self), max(row + 1, int(np.searchsorted(offsets, offsets[row] + DIGEST_BLOCK))))
            start, end = int(offsets[row]), int(offsets[last])
            span = os.pread(self._handle.fileno(), end - start, start)
            digest.update(span)
            self._check_lines(span, start, row, last)
            row = last
        digest.update(os.pread(self._handle.fileno(), 2, int(offsets[-1])))
        return digest.hexdigest()

    @overload
    def __getitem__(self, i: int) -> Chunk: ...

    @overload
    def __getitem__(self, i: slice) -> list[Chunk]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.load()[i]
        if self._all is not None:
            return self._all[i]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._read(i % len(self))

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.load())

    def load(self) -> list[Chunk]:
        """All chunks (parsed once, then kept)."""
        if self._all is None:
            size = int(self._offsets[-1]) + 2
            whole = os.pread(self._handle.fileno(), size, 0)
            self._check_lines(whole, 0, 0, len(self))
            try:
                chunks = [_chunk_from(c) for c in parse_json(whole)]
            except (ValueError, KeyError, TypeError) as exc:
                raise IndexCorruptError(f"{self._name} is unreadable ({exc})") from exc
            if len(chunks) != len(self):
                raise IndexCorruptError(f"{CHUNKS_FILE} holds {len(chunks)} chunks, offsets say {len(self)}")
            self._all = chunks
        return self._all


def _checksums(folder: Path, count: int) -> np.ndarray | None:
    """The lines' CRC-32s (see ``CHECKSUMS_FILE``), None in an index written before them."""
    try:
        checksums = load_array(folder / CHECKSUMS_FILE)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        raise
    except (OSError, ValueError, EOFError) as exc:  # numpy's own words would not name the file
        raise ValueError(f"{CHECKSUMS_FILE} is unreadable") from exc
    if checksums.shape != (count,) or checksums.dtype != np.uint32:
        raise ValueError(f"{CHECKSUMS_FILE} does not match {OFFSETS_FILE}")
    return checksums


_CHUNK_FIELDS = {"id": str, "source": str, "text": str, "start_line": int, "end_line": int, "tokens": int}


def _chunk_from(data: object) -> Chunk:
    """A chunk from its JSON object; a missing or mistyped field raises ValueError."""
    if not isinstance(data, dict):
        raise ValueError("a chunk is not a JSON object")
    for key, kind in _CHUNK_FIELDS.items():
        if type(data.get(key)) is not kind:
            raise ValueError(f"field {key!r} missing or not {kind.__name__}")
    headings = data.get("headings")
    if not isinstance(headings, list) or not all(isinstance(h, str) for h in headings):
        raise ValueError("field 'headings' missing or not a list of texts")
    return Chunk.from_dict(data)
