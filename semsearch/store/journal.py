"""Vectors a build has embedded, kept on disk as it goes, so that a build that is killed,
interrupted or fails resumes where it stopped instead of embedding everything again.

The journal is a hidden folder beside the index (``.INDEX.partial``), marked as ours like a
staging folder, holding shards of (key, vector) rows: ``NNNNNN.npy`` (float32 vectors) and
``NNNNNN.keys`` (one key per row: the sha256 of the model and the exact embedded text). A shard
is written to a temporary name and renamed, so a shard is whole or absent. The finished index
is still written and swapped in by ``store``; the journal is removed after that.

A journal serves the build that was interrupted, and no other: a build that completes removes
it, ``--full`` removes it before it starts (it reuses nothing), and a build that finds the index
up to date removes it when it holds nothing the index lacks (an interrupted rebuild of these
same files); a journal of other content is kept for the build it belongs to.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

import numpy as np

from semsearch.store import cleanup
from semsearch.store.reader import bad_rows
from semsearch.store.schema import STAGING_MARKER, journal_folder
from semsearch.util.jsonparse import parse_json
from semsearch.util.regular import ARRAY_BOUND, load_array, read_text

KEYS_BOUND = 1 << 26
"""The largest keys file of a shard read (a shard holds a few hundred 65-byte keys)."""
FLUSH_ROWS = 256
FLUSH_SECONDS = 5.0
"""A shard is written every this many rows or seconds, whichever comes first: a killed build
loses at most a few seconds of embedding, and a fast one writes few files."""


def embedding_key(spec: str, text: str) -> str:
    return hashlib.sha256(f"{spec}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


class Journal:
    """Append-only store of embedded vectors for one index and model. The build lock is held."""

    def __init__(self, index_dir: Path, spec: str, dim: int):
        self.folder = journal_folder(index_dir)
        self.spec, self.dim = spec, dim
        self._keys: list[str] = []
        self._vectors: list[np.ndarray] = []
        self._flushed_at = time.monotonic()
        self.flush_rows = FLUSH_ROWS
        self.damaged = 0
        """Rows of the shards found damaged (a NaN, infinite, zero or not unit-length row in the
        shard), skipped: embedded again."""

    def expect(self, rows: int) -> None:
        """``rows`` are about to be embedded: write a shard at least every 5% of them, so that
        a killed build, short or long, loses little."""
        self.flush_rows = max(1, min(FLUSH_ROWS, rows // 20))

    def _model_record(self) -> dict:
        return {"spec": self.spec, "dim": self.dim}

    @property
    def ours(self) -> bool:
        """The folder is a real folder (not a link) carrying the marker semsearch writes, or
        an empty one (a removal killed after the marker went: see ``cleanup``)."""
        return cleanup.ours(self.folder)

    @property
    def usable(self) -> bool:
        """False when something not made by semsearch holds the journal's name: it is left
        alone, and this build keeps no journal (it cannot resume, and says so)."""
        return self.ours or not (self.folder.exists() or self.folder.is_symlink())

    def _same_model(self) -> bool:
        try:
            return parse_json(read_text(self.folder / "model.json", 1 << 16)) == self._model_record()
        except (OSError, ValueError):
            return False

    def load(self) -> dict[str, np.ndarray]:
        """Vectors kept by an earlier, unfinished build with the same model (others are dropped)."""
        if not self.ours:
            return {}
        if not self._same_model():
            self.discard()
            return {}
        found: dict[str, np.ndarray] = {}
        for keys, vectors in self._shards():
            found.update(zip(keys, vectors, strict=True))
        return found

    def resumable(self) -> set[str]:
        """The keys of the vectors ``load`` would return, found without reading the vectors
        (their headers only) or changing anything: what ``build --dry-run`` counts as resumed."""
        if not self.ours or not self._same_model():
            return set()
        return {key for keys, _ in self._shards(mmap_mode="r") for key in keys}

    def keys(self) -> set[str]:
        """The keys of every whole shard (none when the folder is not ours)."""
        found: set[str] = set()
        for keys_file in sorted(self.folder.glob("*.keys")) if self.ours else []:
            try:
                found.update(read_text(keys_file, KEYS_BOUND, "ascii").split())
            except (OSError, ValueError):
                continue  # a damaged shard holds nothing a build could use
        return found

    def discard_if_within(self, texts: Iterable[str]) -> bool:
        """Remove the journal when every vector it holds is this model's embedding of one of
        ``texts`` (the passages of an index that has them all: nothing is left to resume)."""
        if not self.ours:
            return False
        left = self.keys()
        for text in texts:
            if not left:
                break
            left.discard(embedding_key(self.spec, text))
        if left:
            return False
        self.discard()
        return True

    def _shards(self, mmap_mode: Literal["r"] | None = None) -> Iterator[tuple[list[str], np.ndarray]]:
        """Every whole shard's keys and vectors, oldest first (``mmap_mode`` "r": the vectors are
        mapped, not read); a damaged shard is skipped, its rows embedded again."""
        for keys_file in sorted(self.folder.glob("*.keys")):
            try:
                keys = read_text(keys_file, KEYS_BOUND, "ascii").split()
                vectors = load_array(keys_file.with_suffix(".npy"), mmap=mmap_mode == "r", bound=ARRAY_BOUND)
            except (OSError, ValueError, EOFError):
                continue
            if vectors.dtype != np.float32 or vectors.shape != (len(keys), self.dim):
                continue
            if len(bad_rows(vectors)):  # NaN, infinite, zero: never put into an index
                self.damaged += len(keys)
                continue
            yield keys, vectors

    def warnings(self) -> list[str]:
        """What ``load`` found damaged, for the build's report."""
        if not self.damaged:
            return []
        return [
            f"{self.damaged:,} vector(s) kept by an interrupted build in {self.folder} were damaged "
            "(NaN, infinite, zero or not unit length): embedded again"
        ]

    def add(self, keys: list[str], vectors: np.ndarray) -> None:
        """Keep rows just embedded (written out as a shard now and then: see ``FLUSH_ROWS``)."""
        self._keys.extend(keys)
        self._vectors.append(np.asarray(vectors, dtype=np.float32))
        if len(self._keys) >= self.flush_rows or time.monotonic() - self._flushed_at >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if not self._keys or not self.usable:
            return
        if not cleanup.marked(self.folder):
            if not self.ours:
                self.folder.mkdir(mode=0o777)  # fails if anything appeared there meanwhile
            (self.folder / STAGING_MARKER).touch()
            (self.folder / "model.json").write_text(json.dumps(self._model_record()))
        name = f"{time.time_ns():020d}-{secrets.token_hex(2)}"
        staging = self.folder / f".{name}"
        np.save(f"{staging}.npy", np.concatenate(self._vectors))
        os.replace(f"{staging}.npy", self.folder / f"{name}.npy")
        Path(f"{staging}.keys").write_text("\n".join(self._keys) + "\n", encoding="ascii")
        os.replace(f"{staging}.keys", self.folder / f"{name}.keys")  # last: the shard counts from here
        self._keys, self._vectors = [], []
        self._flushed_at = time.monotonic()

    def discard(self) -> None:
        """Remove the journal (only a folder carrying our marker)."""
        if self.ours:
            cleanup.remove_ours(self.folder)
