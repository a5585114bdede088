"""What an index holds, as its front ends tell it (``info``, MCP's ``index_info``): one record,
made once from the opened index (``Collection.summary``), so that no front end reads the index's
files or its ``meta.json`` itself."""

from __future__ import annotations

from dataclasses import dataclass

from semsearch.retrieve.index import Index
from semsearch.store.file_records import fields_seen, fields_unread, with_text, without_text
from semsearch.store.records import CalibratedRecord, ChunkingRecord, MarginRecord, ModelRecord, PagesRecord


@dataclass(frozen=True)
class IndexSummary:
    """An index in a reader's terms: where it is, what it holds, how its gate was set."""

    path: str
    docs_root: str
    model: ModelRecord
    chunking: ChunkingRecord
    chunk_budget: int
    """The budget chunks were cut to: the one recorded, or the model's input limit when less."""
    files: list[str]
    """The files with text to search, in recorded order."""
    without_text: list[str]
    chunks: int
    margin: float
    """The no-answer gate's margin in force (a cosine floor for an index built before the rule)."""
    legacy_gate: bool
    calibrated: CalibratedRecord | None
    """The calibration in force (``eval --calibrate``; None: the build's own margin)."""
    build_margin: MarginRecord
    built_at: str | None
    semsearch_version: str | None
    excludes: tuple[str, ...]
    skipped: dict[str, str]
    """Skipped files and why."""
    front_matter: dict[str, int] | None
    """Each front-matter field and how many files have it (None: not recorded, an older index)."""
    front_matter_unread: list[dict]
    pages: PagesRecord | None
    """The page index's record: pages, and the share whose title another page names (None: an
    index built before page evidence)."""


def summarize(index: Index) -> IndexSummary:
    """The summary of ``index``."""
    meta = index.meta
    files = meta.files
    calibrated = meta.calibrated
    in_force = calibrated if calibrated is not None and index.gate.margin == calibrated.value else None
    budget, limit = meta.chunking.max_tokens, meta.model.max_input_tokens
    return IndexSummary(
        path=str(index.path),
        docs_root=meta.docs_root,
        model=meta.model,
        chunking=meta.chunking,
        chunk_budget=min(budget, limit) if limit is not None else budget,
        files=with_text(files),
        without_text=without_text(files),
        chunks=len(index.chunks),
        margin=index.gate.margin,
        legacy_gate=index.gate.legacy,
        calibrated=in_force,
        build_margin=meta.margin,
        built_at=meta.built_at,
        semsearch_version=meta.semsearch_version,
        excludes=tuple(meta.excludes),
        skipped={path: record.reason for path, record in meta.skipped.items()},
        front_matter=fields_seen(files) if index.front_matter_recorded else None,
        front_matter_unread=fields_unread(files),
        pages=meta.pages,
    )
