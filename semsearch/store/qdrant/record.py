"""The index's record (what a folder index keeps in ``meta.json``, ``IndexMeta``) as the Qdrant
store writes and reads it: one JSON text in the record point, made and checked by the functions
the folder index uses (``IndexMeta.to_json``, ``IndexMeta.from_json``). Every reading of the
record's fields in ``store/qdrant/`` is here, so that a change of the record's form is a change
of this module alone."""

from __future__ import annotations

import json

from semsearch.errors import IndexCorruptError
from semsearch.store.meta import IndexMeta
from semsearch.store.qdrant.layout import file_key
from semsearch.util.jsonparse import parse_json

FileRows = dict[str, tuple[str, int, int]]
"""Each file's sha256 and rows (start, end), by its path."""


def meta_text(meta: IndexMeta) -> str:
    return json.dumps(meta.to_json(), ensure_ascii=False)


def meta_of(text: object, where: str) -> IndexMeta:
    """The record read back from its text and checked, as a folder's meta.json is."""
    try:
        obj = parse_json(str(text))
    except ValueError as exc:
        raise IndexCorruptError(f"{where} has an unreadable record ({exc})") from exc
    return IndexMeta.from_json(obj, where)


def whole_meta(meta: IndexMeta, chunks_sha256: str) -> IndexMeta:
    """The record as a build's ``write_index`` completes it: the format marker and the chunks' digest."""
    return meta.written(chunks_sha256)


def sizes(meta: IndexMeta) -> tuple[int, int]:
    """The index's chunks and the vectors' dimension."""
    return meta.chunks, meta.model.dim


def background_rows(meta: IndexMeta) -> list[int]:
    return list(meta.offtopic.background_rows)


def file_rows(meta: IndexMeta) -> FileRows:
    rows = {}
    for source, entry in meta.files.items():
        start, end = entry.rows or (0, 0)
        rows[source] = (entry.sha256 or "", start, end)
    return rows


def file_keys(meta: IndexMeta) -> list[str]:
    """The ``file`` payload of every chunk point the record names (see ``layout``)."""
    return sorted(file_key(source, sha256) for source, (sha256, _, _) in file_rows(meta).items())


def same_layout(old: IndexMeta, new: IndexMeta) -> bool:
    """Whether the points of ``old``'s files can stay for ``new``: same model and chunking."""
    return old.model == new.model and old.chunking == new.chunking
