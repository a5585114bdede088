"""How an index is laid out in a Qdrant collection: the points, their ids and payloads.

- one point per chunk: its vector (named ``dense``, dot product: the vectors are unit length, so
  it is the cosine, and Qdrant keeps them as given) and a payload holding the chunk, its file
  and that file's sha256 (``file``: ``sha256:path``), and its place in the file (``n``);
- one *record* point without a vector: ``meta.json``'s record as one JSON text (written and
  checked by the functions the folder index uses), the build's ``version``, the files below and
  a ``stamp`` new at each write;
- the rest of the index files (``offtopic.npy``, ``keywords.*``) as *blob* points of the
  build's version, their bytes in base64 parts.

A chunk point's id comes from its file's path, sha256 and place, so an unchanged file's points
are the same from one build to the next and an incremental build writes only the new ones.
Rows are the folder index's: each file's ``rows`` in the record say where its chunks go.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import uuid
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise

from semsearch.ingest.chunk import Chunk

NAMESPACE = uuid.UUID("5d0c3f5e-2b8c-4b6e-9a53-7f1f6f0e2a61")
VECTOR = "dense"
META_ID = str(uuid.uuid5(NAMESPACE, "semsearch record"))
BLOB_PART = 4 << 20
"""Bytes per blob point (a server takes requests up to 32 MB by default)."""
CHUNK, RECORD, BLOB, STAGING = "chunk", "record", "blob", "staging"
"""Payload ``kind`` of each point (``staging``: a collection a build is still writing)."""
STAGING_ID = str(uuid.uuid5(NAMESPACE, "semsearch staging"))
STAMP = "stamp"
"""The record's payload field that changes at each write of the record."""


def file_key(source: str, sha256: str) -> str:
    return f"{sha256}:{source}"


def chunk_id(source: str, sha256: str, n: int) -> str:
    return str(uuid.uuid5(NAMESPACE, f"chunk\0{source}\0{sha256}\0{n}"))


def blob_id(version: str, name: str, part: int) -> str:
    return str(uuid.uuid5(NAMESPACE, f"blob\0{version}\0{name}\0{part}"))


def chunk_payloads(
    chunks: Sequence[Chunk], files: dict[str, tuple[str, int, int]]
) -> Iterator[tuple[str, int, dict]]:
    """(id, row, payload) of each chunk, ``files`` giving each file's sha256 and rows."""
    for source, (sha256, start, end) in files.items():
        for n, row in enumerate(range(start, end)):
            chunk = chunks[row]
            payload = {
                "kind": CHUNK,
                "file": file_key(source, sha256),
                "source": source,
                "n": n,
                "chunk": chunk.to_dict(),
            }
            yield chunk_id(source, sha256, n), row, payload


def blob_payloads(version: str, files: dict[str, bytes]) -> Iterator[tuple[str, dict]]:
    for name, data in files.items():
        for part, start in enumerate(range(0, max(len(data), 1), BLOB_PART)):
            text = base64.b64encode(data[start : start + BLOB_PART]).decode("ascii")
            yield blob_id(version, name, part), {"kind": BLOB, "version": version, "name": name, "data": text}


def blob_index(files: dict[str, bytes]) -> dict[str, dict]:
    """What the record says of each blob: its parts and sha256."""
    return {
        name: {"parts": max(1, -(-len(data) // BLOB_PART)), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in files.items()
    }


def blob_ids(version: str, index: dict[str, dict]) -> list[str]:
    return [blob_id(version, name, part) for name, entry in index.items() for part in range(entry["parts"])]


def joined_blobs(version: str, index: dict[str, dict], payloads: dict[str, dict]) -> dict[str, bytes] | None:
    """Each blob's bytes from the blob points' ``payloads`` (by id); None when one is missing or
    not what the record says (a build replaced them meanwhile, or damage)."""
    files = {}
    for name, entry in index.items():
        parts = [payloads.get(blob_id(version, name, part)) for part in range(entry["parts"])]
        if any(part is None or not isinstance(part.get("data"), str) for part in parts):
            return None
        data = b"".join(base64.b64decode(part["data"]) for part in parts)
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            return None
        files[name] = data
    return files


def record_payload(text: str, version: str, blobs: dict[str, dict], marker: str) -> dict:
    """The record point's payload: the record's JSON ``text``, the build's version and blobs,
    and a ``stamp`` new at each write of the record (see ``with_text``)."""
    payload = {"kind": RECORD, "semsearch": marker, "version": version, "blobs": blobs}
    return with_text(payload, text)


def with_text(payload: dict, text: str) -> dict:
    """The record ``payload`` holding ``text``, with a new ``stamp``: a reader that asks for the
    stamp alone (a few bytes, where the text lists every file) tells that the record changed."""
    return {**payload, "meta": text, STAMP: secrets.token_hex(8)}


def meta_identity(payload: dict) -> tuple[int, int, str]:
    """What ``update_meta`` compares: the sha256 of the record's text (as a folder's meta.json)."""
    return (0, 0, hashlib.sha256(str(payload.get("meta", "")).encode("utf-8")).hexdigest())


def chunks_digest(chunks: Iterable[Chunk]) -> str:
    """The sha256 ``chunks.json`` would have with these chunks (``chunkfile.write_chunks``'s
    bytes): the record holds it as a folder's meta.json does, and ``info`` checks it."""
    digest = hashlib.sha256(b"[\n")
    lines = [json.dumps(chunk.to_dict(), ensure_ascii=False).encode("utf-8") for chunk in chunks]
    for line, following in pairwise([*lines, None]):
        digest.update(line + (b",\n" if following is not None else b"\n"))
    digest.update(b"]\n")
    return digest.hexdigest()


class StoredChunks(list):
    """The chunks read from a collection, in row order; what ``ChunkFile`` offers the index."""

    def load(self) -> list[Chunk]:
        return self

    def sha256(self) -> str:
        return chunks_digest(self)

    def close(self) -> None:
        """Nothing to close: the chunks were read whole."""
