"""The index's record (what a folder index keeps in ``meta.json``) as the Qdrant store writes and
reads it: one JSON text in the record point, made and checked by the functions the folder index
uses. Every reading of the record's fields in ``store/qdrant/`` is here, so that a change of the
record's form is a change of this module alone."""

from __future__ import annotations

import json

from semsearch.store.qdrant.layout import file_key
from semsearch.store.schema import CHUNKS_DIGEST, INDEX_KIND, check_meta
from semsearch.util.jsonparse import parse_json

FileRows = dict[str, tuple[str, int, int]]
"""Each file's sha256 and rows (start, end), by its path."""


def meta_text(meta: dict) -> str:
    return json.dumps(meta, ensure_ascii=False)


def meta_of(text: object, where: str) -> dict:
    """The record read back from its text and checked (``check_meta``, as a folder's meta.json)."""
    from semsearch.errors import IndexCorruptError

    try:
        meta = parse_json(str(text))
    except ValueError as exc:
        raise IndexCorruptError(f"{where} has an unreadable record ({exc})") from exc
    return check_meta(meta, where)


def whole_meta(meta: dict, chunks_sha256: str) -> dict:
    """The record as a build's ``write_index`` completes it: the format marker and the chunks' digest."""
    return {"kind": INDEX_KIND, **meta, CHUNKS_DIGEST: chunks_sha256}


def sizes(meta: dict) -> tuple[int, int]:
    """The index's chunks and the vectors' dimension."""
    return meta["chunks"], meta["model"]["dim"]


def background_rows(meta: dict) -> list[int]:
    return meta["offtopic"]["background_rows"]


def file_rows(meta: dict) -> FileRows:
    rows = {}
    for source, entry in meta["files"].items():
        start, end = entry.get("rows", (0, 0))
        rows[source] = (str(entry.get("sha256", "")), start, end)
    return rows


def file_keys(meta: dict) -> list[str]:
    """The ``file`` payload of every chunk point the record names (see ``layout``)."""
    return sorted(file_key(source, sha256) for source, (sha256, _, _) in file_rows(meta).items())


def same_layout(old: dict, new: dict) -> bool:
    """Whether the points of ``old``'s files can stay for ``new``: same model and chunking."""
    return old.get("model") == new.get("model") and old.get("chunking") == new.get("chunking")
