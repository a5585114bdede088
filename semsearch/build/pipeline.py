"""Building an index: plan what changed → chunk → embed or reuse → calibrate → keywords → write.

Incremental: files whose content hash, model and chunking settings are unchanged keep their
chunks and vectors; only new and changed files are embedded and removed files are dropped. The
result equals a full build of the same folder.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from semsearch import __version__
from semsearch.build.budget import chunk_budget
from semsearch.build.embedding import Progress, Step, embed_or_reuse
from semsearch.build.estimate import build_seconds, estimate_basis, still_to_embed
from semsearch.build.files import (
    file_records,
    no_text_skipped,
    outcomes,
    page_texts,
    refreshed_records,
    skipped_records,
)
from semsearch.build.report import BuildReport, Changes
from semsearch.build.reuse import gate_current, keep_index, keywords_current, pages_current, reusable_index
from semsearch.build.splitting import split_files
from semsearch.encode import embedders
from semsearch.encode.corpus import keyword_index_of
from semsearch.encode.embedders import DEFAULT_MODEL, Embedder, canonical_spec, load_embedder
from semsearch.encode.keywords import settings as keyword_settings
from semsearch.encode.pages import build_page_index
from semsearch.encode.pages import settings as page_settings
from semsearch.errors import DocsError
from semsearch.gate.bank import bank_sha256, bank_vectors
from semsearch.gate.calibration import calibrate_with, measure_references
from semsearch.gate.threshold import GATE
from semsearch.ingest import markup
from semsearch.ingest.chunking import CHUNKER_VERSION, Chunk
from semsearch.ingest.frontmatter import FRONT_MATTER_VERSION, FrontMatter, current_front_matter
from semsearch.ingest.pages import TITLES_VERSION
from semsearch.ingest.patterns import check_patterns, list_files
from semsearch.ingest.sources import Listed, Skipped, SourceFile, read_source, unmatched_excludes
from semsearch.retrieve.index import Index
from semsearch.store.built import Built
from semsearch.store.file_records import FileRecord
from semsearch.store.journal import Journal
from semsearch.store.location import Location, parse_location
from semsearch.store.meta import IndexMeta
from semsearch.store.records import (
    CalibratedRecord,
    ChunkingRecord,
    KeywordsRecord,
    MarkupRecord,
    ModelRecord,
    OfftopicRecord,
    PagesRecord,
)
from semsearch.store.stores import Store, open_store

TOKENIZER = "tiktoken:cl100k_base"
CALIBRATION_SURVIVES = 0.10
"""A calibrated threshold is kept while at most this share of the passages changed since."""


@dataclass
class Plan:
    """What a build starts from: the files read, and what the previous index lets it reuse."""

    docs: Path
    store: Store
    sources: list[SourceFile]
    skipped: list[Skipped]
    previous: Index | None
    old_meta: IndexMeta | None
    """The previous index's meta.json, when readable (also when its vectors cannot be reused)."""
    unchanged: set[str]
    """Files whose chunks and vectors are reused from ``previous``."""
    report: BuildReport
    front_matter: dict[str, FrontMatter]
    """Each file's, kept from the previous index when unchanged, else read."""
    full: bool = False
    """``--full``: nothing is reused, not even an interrupted build's journal."""
    same_texts: Index | None = None
    """The previous index when only the chunking changed: unchanged passages keep their vectors."""

    @property
    def vector_source(self) -> Index | None:
        """The index whose vectors the rows of ``split_files`` point into."""
        return self.previous or self.same_texts


def chunking_settings(max_tokens: int) -> ChunkingRecord:
    return ChunkingRecord(
        max_tokens=max_tokens,
        tokenizer=TOKENIZER,
        context="heading path",
        chunker_version=CHUNKER_VERSION,
        markup=MarkupRecord.from_json(markup.APPLIED),
        titles=TITLES_VERSION,
    )


def build_index(
    docs: Path,
    index_dir: Location | str,
    *,
    model: str = DEFAULT_MODEL,
    max_tokens: int | None = None,
    full: bool = False,
    excludes: Sequence[str] = (),
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    dry_run: bool = False,
) -> BuildReport:
    """Index every Markdown file under ``docs`` into ``index_dir``, a folder or a ``postgresql:`` URL
    (see ``store.stores``; ``full``: reuse nothing).

    ``max_tokens``: the chunk budget (None: 300, or the model's input limit when less; more than
    that limit is refused, see ``budget``). ``dry_run``: plan only; the report says what a build
    would embed (chunks, tokens) and how long that would take, and nothing is written.
    """
    started = time.perf_counter()
    report_step = progress or (lambda step: None)
    spec = embedder.spec if embedder else canonical_spec(model)  # a bad --model fails first
    docs = Path(docs)
    if docs.is_file():
        raise DocsError(f"{docs} is a file; DOCS is the folder of Markdown files (e.g. {docs.parent})")
    if not docs.is_dir():
        raise DocsError(f"documents folder not found: {docs}")
    excludes = [pattern for pattern in excludes if pattern.strip()]  # '' clears, matches nothing
    check_patterns(excludes, "--exclude")  # before any work is shown
    store = open_store(index_dir).writable_target(docs)
    max_tokens, embedder = chunk_budget(max_tokens, spec, store, embedder)  # before any work
    report_step(Step("finding"))
    excluded: list[str] = []
    ignore_warnings: list[str] = []
    paths, skipped = list_files(docs, excludes, excluded, ignore_warnings)
    report_step(Step("finding", len(paths), len(paths), "files"))
    if not paths:
        kept = f" ({index_dir}/ still holds its last build: remove it if you no longer need it)"
        raise DocsError(
            f"no Markdown files (.md, .markdown, .mdx) under {docs}{kept if store.peek_meta() else ''}"
        )
    settings = chunking_settings(max_tokens)
    with nullcontext() if dry_run else store.lock():  # a dry run writes nothing, not even a lock
        plan = _plan(docs, store, paths, skipped, spec, settings, full, report_step)
        plan.report.index_dir = parse_location(index_dir)
        plan.report.excluded = sorted(excluded)
        plan.report.warnings += ignore_warnings + [
            f"--exclude {pattern!r} matched no Markdown file or folder"
            for pattern in unmatched_excludes(excludes, excluded)
        ]
        previous = plan.previous
        current = (
            previous and keywords_current(previous) and gate_current(previous) and pages_current(previous)
        )
        if current and not plan.report.changes.any:
            records = refreshed_records(previous.meta.files, plan.sources, plan.front_matter)
            if not dry_run:
                keep_index(previous, plan.docs, records, skipped_records(plan.skipped), excludes)
            plan.report.chunks, plan.report.margin = len(previous.chunks), previous.gate.margin
            plan.report.up_to_date = True
        else:
            embedder = embedder or load_embedder(spec)
            chunks, rows, titles = split_files(plan, embedder, max_tokens, report_step)
            records = file_records(plan.sources, chunks, plan.front_matter, titles)
            if dry_run:
                _estimate(plan, embedder, chunks, rows, time.perf_counter() - started)
            else:
                _build(plan, embedder, settings, excludes, chunks, rows, records, report_step)
    old_files = plan.old_meta.files if plan.old_meta else {}
    plan.report.outcomes = outcomes(records, old_files, plan.skipped)
    no_text = no_text_skipped(records)
    plan.report.without_text = [skipped.relative for skipped in no_text]
    plan.report.files, plan.report.skipped = len(records) - len(no_text), plan.skipped + no_text
    plan.report.dry_run = dry_run
    plan.report.seconds = time.perf_counter() - started
    return plan.report


def _plan(
    docs: Path,
    store: Store,
    paths: list[Listed],
    skipped: list[Skipped],
    spec: str,
    settings: ChunkingRecord,
    full: bool,
    progress: Progress,
) -> Plan:
    reusable = reusable_index(store, spec, settings, full)
    previous = reusable.index
    old_meta = previous.meta if previous else store.peek_meta()
    old_files = old_meta.files if old_meta else {}  # compared with, even when nothing is reused
    sources: list[SourceFile] = []
    warnings: list[str] = [reusable.repair] if reusable.repair else []
    for number, listed in enumerate(paths, 1):
        source = read_source(listed.path, docs, listed.target)
        progress(Step("reading", number, len(paths), "files"))
        if isinstance(source, Skipped):
            skipped.append(source)
            continue
        if source.warning:
            warnings.append(f"{source.relative}: {source.warning}")
        sources.append(source)
    same = {s.relative for s in sources if (old_files.get(s.relative) or FileRecord()).sha256 == s.sha256}
    front_matter = _front_matter(sources, previous, warnings)
    changes = Changes(
        new=sum(s.relative not in old_files for s in sources),
        changed=sum(s.relative in old_files and s.relative not in same for s in sources),
        removed=len(set(old_files) - {s.relative for s in sources}),
        unchanged=len(same),
    )
    report = BuildReport(
        index_dir=store.location,
        files=len(sources),
        warnings=warnings,
        skipped=skipped,
        changes=changes,
        full_reason=reusable.full_reason,
        rechunked=reusable.same_texts is not None,
    )
    unchanged = same if previous else set()
    return Plan(
        docs, store, sources, skipped, previous, old_meta, unchanged, report, front_matter, full,
        same_texts=reusable.same_texts,
    )  # fmt: skip


def _front_matter(sources: list[SourceFile], previous: Index | None, warnings: list[str]) -> dict:
    """Each file's front matter (see ``current_front_matter``); a problem in it is a warning."""
    records = previous.meta.files if previous and previous.front_matter_recorded else {}
    found = {}
    for source in sources:
        record = records.get(source.relative)
        kept = record.front_matter if record is not None and record.sha256 == source.sha256 else None
        found[source.relative] = current_front_matter(source.text, kept)
        if message := found[source.relative].warning(source.relative):
            warnings.append(message)
    return found


def _estimate(plan: Plan, embedder: Embedder, chunks: list[Chunk], rows: list, prepared: float) -> None:
    """What a build would embed and resume (``still_to_embed``), and how long it would take on this
    machine now (``estimate``): reading and splitting as long as this dry run did, then the rest."""
    journal = None if plan.full else Journal(plan.store.journal_folder(), embedder.spec, embedder.dim)
    fresh, plan.report.resumed = still_to_embed(chunks, rows, journal)
    plan.report.chunks, plan.report.embedded = len(chunks), len(fresh)
    plan.report.tokens = sum(chunk.tokens for chunk in fresh)
    plan.report.busy = plan.store.build_running()  # then no build can start: nothing to time
    if not plan.report.busy:
        plan.report.estimated_seconds = prepared + build_seconds(embedder, fresh, chunks, plan.previous)
        plan.report.estimate_basis = estimate_basis(fresh)
        plan.report.runtime, plan.report.runtime_refused = embedders.runtime_used(embedder)


def _build(
    plan: Plan,
    embedder: Embedder,
    settings: ChunkingRecord,
    excludes: Sequence[str],
    chunks: list[Chunk],
    rows: list[int | None],
    records: dict[str, FileRecord],
    progress: Progress,
) -> None:
    journal = _journal(plan, embedder)
    previous_vectors = plan.vector_source.vectors if plan.vector_source else None
    result = embed_or_reuse(embedder, chunks, rows, previous_vectors, journal, progress)
    vectors = result.vectors
    plan.report.warnings.extend(journal.warnings())
    report = plan.report
    report.embedded, report.resumed, report.tokens = result.embedded, result.resumed, result.tokens
    report.runtime, report.runtime_refused = embedders.runtime_used(embedder)
    previous = plan.previous
    progress(Step("calibrating"))
    reusable = previous is not None and previous.offtopic_reusable
    bank = np.asarray(previous.offtopic) if reusable else bank_vectors(embedder)
    references = measure_references(embedder, vectors, chunks, bank_vectors=bank)
    progress(Step("keywords"))
    keywords = keyword_index_of(chunks)
    language = keywords.language
    pages = build_page_index(page_texts(chunks, records), language)
    calibration = calibrate_with(references, keywords, chunks)
    calibrated = _surviving_calibration(plan, plan.report.embedded + plan.report.resumed, len(chunks))
    meta = IndexMeta(
        semsearch_version=__version__,
        built_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        docs_root=str(plan.docs.resolve()),
        model=_model_record(plan, embedder),
        chunking=settings,
        chunks=len(chunks),
        files=records,
        skipped=skipped_records(plan.skipped),
        front_matter_version=FRONT_MATTER_VERSION,
        excludes=tuple(excludes),
        corpus_language=language,
        margin=calibration.record,
        calibrated=calibrated,
        keywords=KeywordsRecord.from_json(keyword_settings(language)),
        pages=PagesRecord.from_json(page_settings(pages)),
        offtopic=OfftopicRecord(
            bank_sha256=bank_sha256(),
            questions=len(calibration.offtopic),
            background_rows=tuple(calibration.background_rows),
            languages=tuple(calibration.languages),
        ),
    )
    progress(Step("writing"))
    built = Built(vectors, chunks, meta, calibration.offtopic, keywords, pages)
    plan.store.write(built, incremental=previous is not None)
    journal.discard()
    plan.report.chunks = len(chunks)
    plan.report.margin = calibrated.value if calibrated else calibration.margin


def _model_record(plan: Plan, embedder: Embedder) -> ModelRecord:
    """The model, and what ran it: this build's runtime, or the last one's if this embedded none."""
    runtime = plan.report.runtime
    if plan.report.embedded == 0 and plan.previous is not None:
        runtime = plan.previous.meta.model.runtime
    return ModelRecord(embedder.spec, embedder.dim, embedder.max_input_tokens, runtime=runtime)


def _journal(plan: Plan, embedder: Embedder) -> Journal:
    """This build's journal (see ``journal``), emptied first by ``--full``, which reuses nothing."""
    journal = Journal(plan.store.journal_folder(), embedder.spec, embedder.dim)
    if plan.full:
        journal.discard()
    if not journal.usable:
        plan.report.warnings.append(
            f"{journal.folder} exists and was not made by semsearch: it is left alone, and this "
            "build keeps no journal (if interrupted, it starts over)"
        )
    return journal


def _surviving_calibration(plan: Plan, embedded: int, total: int) -> CalibratedRecord | None:
    """The previous index's calibrated threshold, if this build leaves it valid: same model and
    chunking, and at most ``CALIBRATION_SURVIVES`` of the passages changed. Dropping it is
    reported."""
    calibrated = plan.old_meta.calibrated if plan.old_meta else None
    if calibrated is None:
        return None
    previous = plan.previous
    reused = total - embedded
    share = 1 - reused / max(total, len(previous.chunks) if previous else 1, 1)
    same_gate = calibrated.gate == GATE
    if previous is not None and share <= CALIBRATION_SURVIVES and same_gate:
        return calibrated
    why = plan.report.full_reason or (
        f"{share:.0%} of the passages changed" if same_gate else "it was made for an older no-answer rule"
    )
    plan.report.warnings.append(
        f"the calibrated no-answer margin {calibrated.value:+.3f} was dropped ({why}); the "
        "build's own margin applies until you calibrate again"
    )
    return None
