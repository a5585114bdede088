"""An index in a Qdrant collection (see ``layout``), behind the ``Store`` interface.

A collection is named by an alias (``qdrant://HOST:PORT/NAME``; ``semsearch`` in a local-mode
folder). A build whose model and chunking are those of the index in place updates it: it adds
the points of new and changed files, then replaces the record in one write (readers read the
record first and take only the points it names, so they see the old or the new index), then
removes the points no record names. Any other build (a new index, another model or chunking,
``--full``) writes a new collection and moves the alias to it in one request, then drops the
old one. Only collections semsearch made are ever changed: a collection without semsearch's
record is refused, never overwritten.

What runs where: Qdrant keeps the points and applies the writes and the alias switch; reading
fetches the vectors once and the ranking, filters and gate run in semsearch, exactly as on a
folder index (so both give identical scores).
"""

from __future__ import annotations

import re
import secrets
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np

from semsearch.encode.keywords import FILES as KEYWORD_FILES
from semsearch.encode.keywords import KeywordIndex
from semsearch.encode.pages import FILES as PAGE_FILES
from semsearch.encode.pages import PageIndex
from semsearch.errors import IndexChangedError, IndexCorruptError, IndexLocationError, IndexMissingError
from semsearch.ingest.chunk import Chunk
from semsearch.store.built import Built
from semsearch.store.folder import _check_vectors
from semsearch.store.location import QdrantLocation
from semsearch.store.meta import IndexMeta
from semsearch.store.qdrant import points, record
from semsearch.store.qdrant.client import connected, durable, fast_commits
from semsearch.store.qdrant.layout import (
    STAGING,
    STAGING_ID,
    VECTOR,
    blob_index,
    chunks_digest,
    meta_identity,
    record_payload,
    with_text,
)
from semsearch.store.qdrant.local import check_folder, journal_folder, lock_held, server_lock, store_stamp
from semsearch.store.reader import StoredIndex, _load_keywords, _load_matrix, check_vectors, load_pages
from semsearch.store.schema import INDEX_KIND

OFFTOPIC_FILE = "offtopic.npy"
ATTEMPTS = 3


class QdrantStore:
    def __init__(self, location: QdrantLocation):
        self.location = location
        self.name = location.collection
        self.where = f"the index at {location}"

    @contextmanager
    def _client(self, create: bool = False) -> Iterator[Any]:
        check_folder(self.location, create)
        with connected(self.location) as client:
            yield client

    # Reading

    def exists(self) -> bool:
        try:
            with self._client() as client:
                return points.resolve(client, self.name) is not None
        except IndexMissingError:
            return False

    def _ours(self, client: Any) -> tuple[str, dict]:
        """The collection the name stands for and its record; an error if none or not ours."""
        collection = points.resolve(client, self.name)
        if collection is None:
            raise IndexMissingError(f"no index at {self.location} (no collection {self.name!r})")
        payload = points.record(client, collection)
        if payload is None or payload.get("semsearch") != INDEX_KIND:
            raise IndexMissingError(
                f"the collection {collection!r} at {self.location.server} was not made by semsearch"
            )
        return collection, payload

    def _meta(self, payload: dict) -> IndexMeta:
        return record.meta_of(payload.get("meta"), self.where)

    def stamp(self) -> tuple | None:
        """Local mode: the store's files (``store_stamp``: opening would read every point); a
        server: the collection the alias names and its record's version and stamp."""
        if self.location.directory is not None:
            return store_stamp(self.location.directory)
        with self._client() as client:
            return points.record_stamp(client, self.name)

    def peek_meta(self) -> IndexMeta | None:
        try:
            with self._client() as client:
                return self._meta(self._ours(client)[1])
        except (IndexMissingError, IndexCorruptError):
            return None

    def read(self, keywords: bool = True) -> StoredIndex:
        """The index, read whole: the record, then the points it names, then the record again
        (a build that replaced it meanwhile: read again, as a folder reader does)."""
        page = 1 << 30 if self.location.local else points.PAGE
        for _ in range(ATTEMPTS):
            with self._client() as client:
                collection, payload = self._ours(client)
                meta = self._meta(payload)
                found = points.read_points(client, collection, meta, page, self.where)
                blobs = points.read_blobs(client, collection, payload)
                again = points.record(client, collection)
            if again is not None and meta_identity(again) == meta_identity(payload):
                if found is None or blobs is None:
                    raise IndexCorruptError(
                        f"{self.where} is incomplete (points its record names are missing)"
                    )
                return self._stored(meta, payload, found, blobs, keywords)
        raise IndexCorruptError(f"{self.where} kept changing while being read; try again")

    def _stored(
        self, meta: IndexMeta, payload: dict, found: tuple, blobs: dict[str, bytes], keywords: bool
    ) -> StoredIndex:
        vectors, chunks = found
        check_vectors(vectors, self.location, "its vectors")
        with tempfile.TemporaryDirectory(prefix="semsearch-qdrant-") as folder:
            for name, data in blobs.items():
                (Path(folder) / name).write_bytes(data)
            try:  # memory-mapped: the maps outlive the folder
                offtopic = _load_matrix(Path(folder) / OFFTOPIC_FILE, record.sizes(meta)[1])
                kept = _load_keywords(Path(folder), meta, len(chunks), self.where) if keywords else None
                pages = load_pages(Path(folder), meta, len(chunks), self.where) if keywords else None
            except IndexCorruptError as exc:
                raise IndexCorruptError(str(exc).replace(f"{folder}/", str(self.location))) from None
        rows = record.background_rows(meta)
        if not all(0 <= r < len(offtopic) for r in rows):
            raise IndexCorruptError(f"{self.where} has inconsistent off-topic rows")
        check_vectors(offtopic, self.location, OFFTOPIC_FILE)
        return StoredIndex(
            path=self.location,
            meta=meta,
            chunks=chunks,
            vectors=vectors,
            offtopic=offtopic,
            background=np.asarray(offtopic[rows]),
            keywords=kept,
            identity=meta_identity(payload),
            pages=pages,
        )

    # Writing

    def writable_target(self, docs: Path | None = None) -> QdrantStore:
        """This store, when a build of ``docs`` may write it: a local folder that is Qdrant's (or
        new, or empty) and not inside ``docs``, and a name that is no one else's collection."""
        check_folder(self.location, create=True, docs=docs)
        if self.exists():  # a new local store is not made here: a dry run writes nothing
            with self._client() as client:
                self._refuse_foreign(client)
        return self

    def _refuse_foreign(self, client: Any) -> str | None:
        collection = points.resolve(client, self.name)
        if (
            collection is not None
            and (points.record(client, collection) or {}).get("semsearch") != INDEX_KIND
        ):
            raise IndexLocationError(
                f"the collection {collection!r} at {self.location.server} was not made by semsearch; "
                "refusing to overwrite it (name another collection for the index)"
            )
        return collection

    def lock(self) -> Any:
        check_folder(self.location, create=True)
        if self.location.local:  # local mode: the client's own lock on the folder, held
            return connected(self.location, translate=False)
        return server_lock(self.location)

    def build_running(self) -> bool:
        return lock_held(self.location)

    def journal_folder(self) -> Path:
        return journal_folder(self.location)

    def write(self, built: Built, incremental: bool = False) -> None:
        vectors, chunks, meta, offtopic, keywords, pages = built
        _check_vectors(vectors, chunks, offtopic)
        version = secrets.token_hex(6)
        files = _index_files(offtopic, keywords, pages)
        whole = record.whole_meta(meta, chunks_digest(chunks))
        payload = record_payload(record.meta_text(whole), version, blob_index(files), INDEX_KIND)
        rows = record.file_rows(whole)
        with self._client(create=True) as client:
            current = self._refuse_foreign(client)
            previous = points.record(client, current) if current else None
            old = self._meta(previous) if incremental and previous is not None else None
            if old is not None and record.same_layout(old, whole):
                fast_commits(client, current)
                kept = set(record.file_keys(old))
                points.upsert(client, current, points.chunk_points(vectors, chunks, rows, kept))
                points.upsert(client, current, points.blob_points(version, files))
                durable(client, current)  # all the new points on disk before the record names them
                points.upsert(client, current, [points.record_point(payload)])
                points.delete_stale(client, current, record.file_keys(whole), version)
            else:
                self._replace(client, current, version, vectors, chunks, rows, files, payload)

    def _replace(
        self, client: Any, current: str | None, version: str, vectors: np.ndarray,
        chunks: list[Chunk], rows: record.FileRows, files: dict, payload: dict,
    ) -> None:  # fmt: skip
        """Write a new collection, then move the alias to it (one request), then drop the old."""
        m = points.models()
        if current == self.name:
            raise IndexLocationError(
                f"{self.name!r} at {self.location.server} is a collection, not an alias: a new build "
                "cannot replace it in one step (name another collection for the index)"
            )
        _remove_leftovers(client, self.name, current)
        fresh = f"{self.name}-{version}"
        client.create_collection(
            fresh, vectors_config={VECTOR: m.VectorParams(size=vectors.shape[1], distance=m.Distance.DOT)}
        )
        fast_commits(client, fresh)
        try:
            marker = {"kind": STAGING, "semsearch": INDEX_KIND, "alias": self.name}
            client.upsert(fresh, points=[m.PointStruct(id=STAGING_ID, vector={}, payload=marker)])
            if not self.location.local:  # filters on these are what a server indexes
                for field in ("kind", "file", "version"):
                    client.create_payload_index(fresh, field, field_schema=m.PayloadSchemaType.KEYWORD)
            points.upsert(client, fresh, points.chunk_points(vectors, chunks, rows, set()))
            points.upsert(client, fresh, points.blob_points(version, files))
            points.upsert(client, fresh, [points.record_point(payload)])
            client.delete(fresh, points_selector=m.PointIdsList(points=[STAGING_ID]))
            durable(client, fresh)  # the whole collection on disk before the alias names it
            moves = (
                [m.DeleteAliasOperation(delete_alias=m.DeleteAlias(alias_name=self.name))] if current else []
            )
            moves.append(
                m.CreateAliasOperation(
                    create_alias=m.CreateAlias(collection_name=fresh, alias_name=self.name)
                )
            )
            client.update_collection_aliases(change_aliases_operations=moves)
        except BaseException:
            with suppress(Exception):
                client.delete_collection(fresh)
            raise
        if current is not None:
            client.delete_collection(current)

    def replace_meta(self, meta: IndexMeta) -> None:
        with self._client() as client:
            collection, payload = self._ours(client)
            payload = with_text(payload, record.meta_text(meta))
            points.upsert(client, collection, [points.record_point(payload)])

    def update_meta(
        self, read_as: tuple[int, int, str], meta: IndexMeta, change: Callable[[IndexMeta], IndexMeta]
    ) -> IndexMeta:
        with self.lock():
            with self._client() as client:
                payload = self._ours(client)[1]
            if meta_identity(payload) != read_as:
                raise IndexChangedError(
                    f"{self.where} changed since it was read (a build finished meanwhile): "
                    "nothing was written"
                )
            meta = change(meta)
            self.replace_meta(meta)
        return meta


def _index_files(offtopic: np.ndarray, keywords: KeywordIndex, pages: PageIndex | None) -> dict[str, bytes]:
    """The index files kept as blobs, as a folder index writes them."""
    with tempfile.TemporaryDirectory(prefix="semsearch-qdrant-") as name:
        folder = Path(name)
        np.save(folder / OFFTOPIC_FILE, np.ascontiguousarray(offtopic, dtype=np.float32))
        keywords.save(folder)
        if pages is not None:
            pages.save(folder)
        names = (OFFTOPIC_FILE, *KEYWORD_FILES, *(PAGE_FILES if pages is not None else ()))
        return {file: (folder / file).read_bytes() for file in names}


_LEFTOVER = re.compile(r"-[0-9a-f]{12}")


def _remove_leftovers(client: Any, alias: str, current: str | None) -> None:
    """Collections an interrupted build of ``alias`` left (its name, a version, and the staging
    point semsearch writes first into each): nothing else is ever removed."""
    for name in points.collection_names(client) - {current}:
        if name.startswith(alias) and _LEFTOVER.fullmatch(name[len(alias) :]):
            found = client.retrieve(name, ids=[STAGING_ID], with_payload=True)
            marker = found[0].payload if found else {}
            if marker.get("semsearch") == INDEX_KIND and marker.get("alias") == alias:
                client.delete_collection(name)
