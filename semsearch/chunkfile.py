"""``chunks.json`` that `ask` can read without parsing all of it.

The file stays plain, human-readable JSON (a list), written one chunk per line; the byte offset
of each line goes to ``chunks.offsets.npy``. `ask` reads only the k chunks it shows, so a
million-chunk index costs it a few small reads instead of parsing hundreds of megabytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, overload

import numpy as np

from .chunking import Chunk

CHUNKS_FILE = "chunks.json"
OFFSETS_FILE = "chunks.offsets.npy"


def write_chunks(folder: Path, chunks: Sequence[Chunk]) -> None:
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    with open(folder / CHUNKS_FILE, "wb") as handle:
        handle.write(b"[\n")
        for i, chunk in enumerate(chunks):
            offsets[i] = handle.tell()
            handle.write(json.dumps(chunk.to_dict(), ensure_ascii=False).encode("utf-8"))
            handle.write(b",\n" if i + 1 < len(chunks) else b"\n")
        offsets[len(chunks)] = handle.tell()
        handle.write(b"]\n")
    np.save(folder / OFFSETS_FILE, offsets)


class ChunkFile(Sequence[Chunk]):
    """The chunks of an index, read on demand from a file opened once (so a concurrent swap of
    the index folder cannot mix two indexes)."""

    def __init__(self, handle: BinaryIO, offsets: np.ndarray):
        self._handle = handle
        self._offsets = offsets
        self._all: list[Chunk] | None = None

    @classmethod
    def open(cls, folder: Path) -> ChunkFile:
        """Open and check; raises OSError or ValueError when the files are missing or inconsistent."""
        handle = open(folder / CHUNKS_FILE, "rb")  # noqa: SIM115 - kept open for lazy reads
        try:
            offsets = np.load(folder / OFFSETS_FILE, allow_pickle=False)
            size = handle.seek(0, 2)
            if offsets.ndim != 1 or len(offsets) < 1 or offsets.dtype.kind != "i":
                raise ValueError(f"{OFFSETS_FILE} is not a list of offsets")
            if np.any(np.diff(offsets) <= 0) or offsets[-1] + 2 != size:
                raise ValueError(f"{CHUNKS_FILE} does not match {OFFSETS_FILE} (truncated or edited?)")
        except BaseException:
            handle.close()
            raise
        return cls(handle, offsets)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _read(self, i: int) -> Chunk:
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        self._handle.seek(start)
        line = self._handle.read(end - start).rstrip(b",\n")
        return Chunk.from_dict(json.loads(line))

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
            self._handle.seek(0)
            self._all = [Chunk.from_dict(c) for c in json.load(self._handle)]
            if len(self._all) != len(self):
                raise ValueError(f"{CHUNKS_FILE} holds {len(self._all)} chunks, offsets say {len(self)}")
        return self._all
