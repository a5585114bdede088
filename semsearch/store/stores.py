"""The store behind an index: one small interface that the index folder (the default) and a
PostgreSQL schema both implement, so that a build, ``ask``, ``info`` and ``eval`` run the same
code whatever holds the index (another engine is one more class, picked in ``open_store``).

A store keeps and gives back what a build made: the vectors, the chunks, ``meta.json``'s
record, the off-topic bank's vectors and the keyword index. The folder index ranks nothing: the
ranking and the no-answer gate run in ``retrieve`` and ``gate`` on what ``read`` returns. A store
that also has ``store.engine``'s ``SearchEngine`` methods (PostgreSQL) scores a question's
candidates itself, and ``read`` gives parts read on demand: no client reads every vector.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from pathlib import Path
from types import ModuleType
from typing import Protocol, runtime_checkable

from semsearch.store import meta as meta_file
from semsearch.store import reader
from semsearch.store.built import Built
from semsearch.store.location import Location, PostgresLocation, parse_location
from semsearch.store.meta import IndexMeta
from semsearch.store.reader import StoredIndex
from semsearch.store.schema import META_FILE


def _folder() -> ModuleType:
    """The folder index's writer (``store.folder``), imported when a build or eval --calibrate
    writes: a question only reads (``reader``), and a cold ``ask`` imports what it uses."""
    from semsearch.store import folder

    return folder


@runtime_checkable
class Store(Protocol):
    location: Location

    def writable_target(self, docs: Path | None = None) -> Store:
        """The store a build of ``docs`` may write (checked: nothing of the user's is replaced)."""

    def exists(self) -> bool:
        """Whether something that may be an index is there (read it to know)."""

    def peek_meta(self) -> IndexMeta | None:
        """The index's checked record, None when there is none readable."""

    def read(self, keywords: bool = True) -> StoredIndex:
        """The whole index, checked (``keywords`` False: not its keyword index)."""

    def lock(self) -> AbstractContextManager[None]:
        """Held by a build: a second one is refused (``IndexBusyError``)."""

    def build_running(self) -> bool:
        """Whether another process holds the lock now (asked by a dry run; takes nothing)."""

    def write(self, built: Built, incremental: bool = False) -> None:
        """Put a build in place at once: readers get the old or the new index, never a mix
        (``incremental``: the previous index had this model and chunking; a store may keep what
        did not change). The caller holds the lock."""

    def replace_meta(self, meta: IndexMeta) -> None:
        """Replace the record alone (the lock is held)."""

    def update_meta(
        self, read_as: tuple[int, int, str], meta: IndexMeta, change: Callable[[IndexMeta], IndexMeta]
    ) -> IndexMeta:
        """Write ``change(meta)`` under the lock if the index is still the one read as ``read_as``."""

    def journal_folder(self) -> Path:
        """The folder beside which a build keeps its journal (see ``store.journal``)."""

    def stamp(self) -> Hashable | None:
        """What changes when a build replaces the index or a calibration rewrites its record,
        read without reading the index (the MCP server asks it on every call: a new value, and it
        reopens the index); None when there is no index there."""


class FolderStore:
    """The index folder: each method is the function the folder index always used."""

    def __init__(self, path: Path):
        self.location = Path(path)

    def writable_target(self, docs: Path | None = None) -> FolderStore:
        return FolderStore(_folder().writable_target(self.location, docs))

    def exists(self) -> bool:
        return (self.location / META_FILE).exists()

    def peek_meta(self) -> IndexMeta | None:
        return meta_file.peek_meta(self.location)

    def read(self, keywords: bool = True) -> StoredIndex:
        return reader.read_index(self.location, keywords=keywords)

    def lock(self) -> AbstractContextManager[None]:
        return _folder().index_lock(self.location)

    def build_running(self) -> bool:
        return _folder().build_running(self.location)

    def write(self, built: Built, incremental: bool = False) -> None:
        _folder().write_index(self.location, *built)

    def replace_meta(self, meta: IndexMeta) -> None:
        meta_file.replace_meta(self.location, meta)

    def update_meta(
        self, read_as: tuple[int, int, str], meta: IndexMeta, change: Callable[[IndexMeta], IndexMeta]
    ) -> IndexMeta:
        return _folder().update_meta(self.location, read_as, meta, change)

    def journal_folder(self) -> Path:
        return self.location

    def stamp(self) -> tuple[int, ...] | None:
        """A build swaps the folder (a new inode), a calibration replaces meta.json."""
        try:
            folder = os.stat(self.location)
            meta = os.stat(self.location / META_FILE)
        except OSError:
            return None
        return (folder.st_dev, folder.st_ino, meta.st_ino, meta.st_mtime_ns, meta.st_size)


def open_store(where: Location | str | Store) -> Store:
    """The store at ``where``: a folder path, a ``postgresql:`` URL or location, or a store itself."""
    if isinstance(where, Store):
        return where
    location = parse_location(where)
    if isinstance(location, PostgresLocation):
        from semsearch.store.postgres.store import PostgresStore

        return PostgresStore(location)
    return FolderStore(location)
