"""What a Qdrant index needs beside the collection: which local-mode folder may hold one, the
build lock (local mode: the client's lock on the folder; a server: a lock collection), and where
a build keeps its journal."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from semsearch.errors import IndexBusyError, IndexLocationError, IndexMissingError, StoreUnavailableError
from semsearch.store.location import QdrantLocation
from semsearch.store.qdrant.client import connected, failures
from semsearch.util.jsonparse import parse_json
from semsearch.util.regular import lock_file_held, read_text

STORE_FILES = {"meta.json", "meta.json.tmp", ".lock", "collection"}
"""What Qdrant's local mode keeps in its folder."""
LOCK_SUFFIX = "-semsearch-lock"


def _is_local_store(folder: Path) -> bool:
    try:
        names = set(os.listdir(folder))
        meta = parse_json(read_text(folder / "meta.json"))
    except (OSError, ValueError):
        return False
    return names <= STORE_FILES and isinstance(meta, dict) and {"collections", "aliases"} <= set(meta)


def check_folder(location: QdrantLocation, create: bool = False, docs: Path | None = None) -> None:
    """Raise unless ``location`` (a server: always fine) is a folder Qdrant's local mode may open:
    its own store, or (``create``) missing or empty. Nothing of the user's is opened as a store."""
    folder = location.directory
    if folder is None:
        return
    problem = IndexLocationError if create else IndexMissingError
    if folder.exists() and not folder.is_dir():
        raise problem(f"{folder} is a file, not a Qdrant store folder")
    if not folder.exists() or not any(folder.iterdir()):
        if not create:
            raise IndexMissingError(f"no index at {location} (no Qdrant store in {folder}/)")
    elif not _is_local_store(folder):
        raise problem(
            f"{folder} is not empty and is not a Qdrant local store; refusing to use it "
            "(choose an empty or new folder)"
        )
    if docs is not None:
        real_docs, real_store = Path(docs).resolve(), folder.resolve()
        if real_store == real_docs or real_docs in real_store.parents:
            raise IndexLocationError(f"the index {folder} would be inside the documents folder {docs}")
        if real_store in real_docs.parents:
            raise IndexLocationError(f"the documents folder {docs} is inside the index folder {folder}")


TRANSIENT = ("-wal", "-shm", "-journal")
"""The files sqlite makes beside a database while a connection is open (every open makes them
anew, a read too); a finished write is in the database itself, checkpointed when its writer
closes the store, which local mode lets one process open at a time."""


def store_stamp(folder: Path) -> tuple | None:
    """The files of a local-mode store, by name, inode, time and size (None: no files), but its
    lock and sqlite's transient files. Every finished write changes one: ``meta.json`` for a
    new collection or an alias moved, a collection's sqlite file for points. Opening the store
    to read changes none, so a reader tells a new index without opening it (which reads every
    point)."""
    found = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root) / name
            if (path.parent == folder and name == ".lock") or name.endswith(TRANSIENT):
                continue
            with suppress(OSError):  # gone meanwhile: the next look sees what replaced it
                seen = path.stat()
                found.append((str(path.relative_to(folder)), seen.st_ino, seen.st_mtime_ns, seen.st_size))
    return tuple(sorted(found)) or None


def lock_held(location: QdrantLocation) -> bool:
    """Whether a build holds ``location`` now (opens nothing for writing)."""
    if location.directory is not None:
        return lock_file_held(location.directory / ".lock")
    from semsearch.store.qdrant.points import collection_names

    with connected(location) as client:
        return location.collection + LOCK_SUFFIX in collection_names(client)


@contextmanager
def server_lock(location: QdrantLocation) -> Iterator[None]:
    """A build's lock on a server: a collection named after the index, made at the start (a
    server makes a name once: a second build fails to) and dropped at the end. A build killed
    meanwhile leaves it: the refusal says so."""
    from semsearch.store.qdrant.points import models

    name = location.collection + LOCK_SUFFIX
    with connected(location, translate=False) as client:
        try:
            with failures(location):  # the smallest collection every server version makes
                client.create_collection(name, vectors_config=models().VectorParams(size=1, distance="Dot"))
        except StoreUnavailableError as exc:
            if "already exists" not in str(exc):
                raise
            raise IndexBusyError(
                f"another semsearch build is writing {location} (the collection {name!r} marks it; "
                "if no build is running, a killed one left it: delete that collection)"
            ) from None
        try:
            yield
        finally:
            with suppress(StoreUnavailableError), failures(location):
                client.delete_collection(name)


def journal_folder(location: QdrantLocation) -> Path:
    """The folder beside which a build keeps its journal: the local-mode folder itself, else one
    in the user's cache named after the server and collection."""
    if location.directory is not None:
        return location.directory
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "semsearch" / "qdrant"
    with suppress(OSError):
        cache.mkdir(parents=True, exist_ok=True)
    return cache / f"{location.host}-{location.port}-{location.collection}"
