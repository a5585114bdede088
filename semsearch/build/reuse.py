"""What a build may keep from the index it replaces: its vectors (same model and chunking; its
keyword index too, unless damaged: that is derived data, rebuilt from the chunks), and, when no
file changed, the whole index (its keyword index and gate made as this version makes them)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semsearch.encode.keywords import settings as keyword_settings
from semsearch.encode.pages import PAGES_VERSION
from semsearch.errors import SemsearchError
from semsearch.gate.threshold import GATE
from semsearch.ingest.chunking import embedding_text
from semsearch.retrieve.index import Index
from semsearch.retrieve.opening import load_index
from semsearch.store.file_records import FileRecord, SkippedRecord
from semsearch.store.journal import Journal
from semsearch.store.location import Location
from semsearch.store.meta import replace_meta
from semsearch.store.reader import check_chunks, check_unit_rows
from semsearch.store.records import ChunkingRecord, KeywordsRecord
from semsearch.store.stores import Store, open_store

CHECKED_ROWS = 65_536
"""Vectors checked per step when a damaged index's vectors are to be reused (bounded memory)."""


@dataclass(frozen=True)
class Reusable:
    index: Index | None
    """The previous index, when its vectors can be reused."""
    full_reason: str | None = None
    """Why nothing can be reused (None: no previous index, or reused)."""
    repair: str | None = None
    """What of the reused index is damaged and rebuilt (its keyword index), for the report."""
    same_texts: Index | None = None
    """The previous index, whole, when only its chunking differs: a passage whose text (heading
    path and all) is unchanged keeps its vector, the model being the same."""


def reusable_index(target: Location | Store, spec: str, settings: ChunkingRecord, full: bool) -> Reusable:
    """The previous index when its vectors can be reused, else None and why not."""
    if full:
        return Reusable(None, "--full")
    store = open_store(target)
    if not store.exists():
        return Reusable(None)
    target = store.location
    repair = None
    try:
        previous = load_index(store)
        previous.meta = previous.meta.with_files_read()
    except SemsearchError as exc:
        intact = _without_keywords(store)
        if intact is None:
            return Reusable(None, f"the previous index is unreadable ({exc})")
        previous, repair = intact, f"{exc}: rebuilt from its chunks, nothing embedded again"
    if previous.model != spec:
        return Reusable(None, f"the model changed ({previous.model} → {spec})")
    if repair is None:  # else ``_without_keywords`` checked the chunks
        try:
            check_chunks(previous.chunks, previous.meta, target)
        except SemsearchError as exc:
            return Reusable(None, f"the previous index is damaged ({exc})")
    if previous.meta.chunking != settings:
        change = settings_change(previous.meta.chunking.to_json(), settings.to_json())
        return Reusable(None, f"the chunking changed ({change})", same_texts=previous)
    return Reusable(previous, None, repair)


def _without_keywords(store: Store) -> Index | None:
    """The index at ``target`` read without its keyword index, when everything else is whole:
    its chunks as written (``check_chunks``) and every vector of unit length (None otherwise).
    Its keyword index is None, so that ``keywords_current`` has a build make it again."""
    target = store.location
    try:
        index = load_index(store, keywords=False)
        index.meta = index.meta.with_files_read()
        check_chunks(index.chunks, index.meta, target)
        for start in range(0, len(index.vectors), CHECKED_ROWS):
            rows = np.arange(start, min(start + CHECKED_ROWS, len(index.vectors)))
            check_unit_rows(index.vectors, rows, target)
    except SemsearchError:
        return None
    return index


def settings_change(old: dict, new: dict) -> str:
    """``max_tokens 300 → 200, markup v2 → v3``: only what differs (a group of settings of one
    version whose contents differ: ``markup rules``)."""
    keys = [key for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)]
    return ", ".join(_setting_change(key, old.get(key), new.get(key)) for key in keys)


def _setting_change(key: str, old: object, new: object) -> str:
    if isinstance(old, dict) and isinstance(new, dict) and old.get("version") == new.get("version"):
        return f"{key} rules"
    return f"{key} {_setting(old)} → {_setting(new)}"


def _setting(value: object) -> object:
    """A setting as the change names it: a group of settings (``markup``) by its version."""
    if isinstance(value, dict):
        return f"v{value.get('version', '?')}"
    return "—" if value is None else value


def keywords_current(index: Index) -> bool:
    """Whether the index's keyword index was read whole and made the way this version makes it
    (if not, a build with no file changes still rebuilds it, reusing every chunk and vector)."""
    made = index.meta.keywords == KeywordsRecord.from_json(keyword_settings(index.corpus_language))
    return made and index.keywords is not None


def pages_current(index: Index) -> bool:
    """Whether the index's page index was read whole and made the way this version makes it (if
    not, a build with no file changes still makes it anew, reusing every chunk and vector)."""
    return (
        index.pages is not None and index.meta.pages is not None and index.meta.pages.version == PAGES_VERSION
    )


def gate_current(index: Index) -> bool:
    """Whether the index's no-answer gate was derived by this version's rule from this bank (else
    an unchanged folder is recalibrated: vectors are reused, nothing is re-embedded)."""
    return index.offtopic_reusable and index.meta.margin.gate == GATE


def keep_index(
    index: Index,
    docs: Path,
    records: dict[str, FileRecord],
    skipped: dict[str, SkippedRecord],
    excludes: Sequence[str],
) -> None:
    """Keep an up-to-date index: record where the docs are, their sizes and mtimes (for `ask`'s
    staleness check), their front matter and the checksum of its chunks (an older index gains
    both; its chunks were parsed whole by ``check_chunks``), and remove the journal of
    an interrupted build that holds nothing the index lacks (see ``journal``). The lock is held."""
    meta = index.meta.kept(str(docs.resolve()), records, skipped, tuple(excludes), index.chunks.sha256)
    if meta != index.meta:
        if index.store is not None:
            index.store.replace_meta(meta)
        else:
            replace_meta(index.path, meta)
    journal_at = index.store.journal_folder() if index.store is not None else index.path
    journal = Journal(journal_at, index.model, index.meta.model.dim)
    with suppress(SemsearchError):  # a chunk is unreadable: the journal is kept
        journal.discard_if_within(embedding_text(chunk) for chunk in index.chunks)
