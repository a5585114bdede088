"""Reading and writing the points of one collection (their layout: ``layout``), with a client
from ``client.connected``. Nothing here decides what a build keeps: ``store`` does."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

import numpy as np

from semsearch.errors import IndexCorruptError
from semsearch.ingest.chunk import Chunk
from semsearch.store.chunkfile import _chunk_from
from semsearch.store.meta import IndexMeta
from semsearch.store.qdrant.layout import (
    BLOB,
    CHUNK,
    META_ID,
    RECORD,
    STAMP,
    VECTOR,
    StoredChunks,
    blob_ids,
    blob_payloads,
    chunk_payloads,
    file_key,
    joined_blobs,
    meta_identity,
)
from semsearch.store.qdrant.record import FileRows, file_rows, sizes

BATCH = 256
"""Points per upsert request."""
PAGE = 2048
"""Points per scroll request to a server (local mode reads all at once: it has no network)."""


def models() -> Any:
    from qdrant_client import models

    return models


def kind_is(kind: str, **more: str) -> Any:
    m = models()
    must = [m.FieldCondition(key="kind", match=m.MatchValue(value=kind))]
    must += [m.FieldCondition(key=key, match=m.MatchValue(value=value)) for key, value in more.items()]
    return m.Filter(must=must)


def resolve(client: Any, name: str) -> str | None:
    """The collection ``name`` stands for: the one its alias points to, or the collection of that
    name; None when there is neither."""
    aliases = {alias.alias_name: alias.collection_name for alias in client.get_aliases().aliases}
    if name in aliases:
        return aliases[name]
    return name if name in collection_names(client) else None


def collection_names(client: Any) -> set[str]:
    return {collection.name for collection in client.get_collections().collections}


def record(client: Any, collection: str) -> dict | None:
    """The record point's payload (see ``layout``), None when the collection has none."""
    found = client.retrieve(collection, ids=[META_ID], with_payload=True, with_vectors=False)
    payload = found[0].payload if found else None
    return payload if isinstance(payload, dict) and payload.get("kind") == RECORD else None


def record_stamp(client: Any, name: str) -> tuple | None:
    """What changes when the index ``name`` stands for is replaced or its record rewritten: the
    collection, and the record's version and stamp, read without the record's text (None: no
    index). A record written before stamps: its text tells."""
    collection = resolve(client, name)
    if collection is None:
        return None
    found = client.retrieve(
        collection, ids=[META_ID], with_payload=["kind", "version", STAMP], with_vectors=False
    )
    payload = found[0].payload if found else None
    if not isinstance(payload, dict) or payload.get("kind") != RECORD:
        return None
    if STAMP not in payload:
        return (collection, str(payload.get("version")), meta_identity(record(client, collection) or {}))
    return (collection, str(payload.get("version")), str(payload[STAMP]))


def read_points(
    client: Any, collection: str, meta: IndexMeta, page: int, where: str
) -> tuple[np.ndarray, StoredChunks] | None:
    """The vectors and chunks of the files ``meta`` records, in row order; None when a point is
    missing (a build removed it since the record was read, or damage: the caller reads again).
    Points of other versions of a file (a build under way) are passed over."""
    rows, dim = sizes(meta)
    places = {
        file_key(source, sha256): (start, end) for source, (sha256, start, end) in file_rows(meta).items()
    }
    vectors = np.zeros((rows, dim), dtype=np.float32)
    chunks: list[Chunk | None] = [None] * rows
    offset = None
    while True:
        points, offset = client.scroll(
            collection, kind_is(CHUNK), limit=page, offset=offset, with_payload=True, with_vectors=[VECTOR]
        )
        for point in points:
            place = places.get(point.payload.get("file"))
            if place is None:
                continue
            row = _row(point.payload, place, where)
            vectors[row] = _vector(point.vector, dim, where)
            try:
                chunks[row] = _chunk_from(point.payload.get("chunk"))
            except ValueError as exc:
                raise IndexCorruptError(f"{where} has an unreadable chunk ({exc})") from exc
        if offset is None:
            break
    if any(chunk is None for chunk in chunks):
        return None
    return vectors, StoredChunks(chunks)


def _row(payload: dict, place: tuple, where: str) -> int:
    start, end = place
    n = payload.get("n")
    if type(n) is not int or not 0 <= n < end - start:
        raise IndexCorruptError(f"{where} has a chunk out of its file's rows")
    return start + n


def _vector(vector: Any, dim: int, where: str) -> np.ndarray:
    value = vector.get(VECTOR) if isinstance(vector, dict) else vector
    array = np.asarray(value, dtype=np.float32)
    if array.shape != (dim,):
        raise IndexCorruptError(f"{where} has a vector of shape {array.shape}, expected ({dim},)")
    return array


def read_blobs(client: Any, collection: str, payload: dict) -> dict[str, bytes] | None:
    """The index files kept as blobs of the record's version (see ``layout.joined_blobs``)."""
    version, index = str(payload.get("version")), payload.get("blobs")
    if not isinstance(index, dict):
        return None
    found = client.retrieve(collection, ids=blob_ids(version, index), with_payload=True)
    return joined_blobs(version, index, {str(point.id): point.payload for point in found})


def upsert(client: Any, collection: str, points: Iterable[Any]) -> None:
    iterator = iter(points)
    while batch := list(islice(iterator, BATCH)):
        client.upsert(collection, points=batch, wait=True)


def chunk_points(vectors: np.ndarray, chunks: list[Chunk], files: FileRows, skip: set[str]) -> Iterator[Any]:
    """The points of the chunks of ``files`` (see ``record.file_rows``), but those in ``skip``."""
    point = models().PointStruct
    for pid, row, payload in chunk_payloads(chunks, files):
        if payload["file"] not in skip:
            yield point(id=pid, vector={VECTOR: vectors[row].tolist()}, payload=payload)


def blob_points(version: str, files: dict[str, bytes]) -> Iterator[Any]:
    point = models().PointStruct
    for pid, payload in blob_payloads(version, files):
        yield point(id=pid, vector={}, payload=payload)


def record_point(payload: dict) -> Any:
    return models().PointStruct(id=META_ID, vector={}, payload=payload)


def delete_stale(client: Any, collection: str, keep_files: list[str], version: str) -> None:
    """Remove the chunk points of files the record no longer lists, and other versions' blobs."""
    m = models()
    stale_chunks = m.Filter(
        must=[m.FieldCondition(key="kind", match=m.MatchValue(value=CHUNK))],
        must_not=[m.FieldCondition(key="file", match=m.MatchAny(any=keep_files))] if keep_files else [],
    )
    stale_blobs = m.Filter(
        must=[m.FieldCondition(key="kind", match=m.MatchValue(value=BLOB))],
        must_not=[m.FieldCondition(key="version", match=m.MatchValue(value=version))],
    )
    for selector in (stale_chunks, stale_blobs):
        client.delete(collection, points_selector=m.FilterSelector(filter=selector), wait=True)
