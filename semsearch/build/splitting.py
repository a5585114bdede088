"""The splitting step of a build: every file's chunks in file order, each with the row it had in
the previous index (its vector kept) or None (to embed), and each file's title."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semsearch.build.embedding import Progress, Step
from semsearch.build.progress import progress_within_file
from semsearch.encode import embedders
from semsearch.encode.embedders import Embedder
from semsearch.errors import DocsError
from semsearch.ingest.chunking import Chunk, chunk_document, embedding_text
from semsearch.retrieve.index import Index

if TYPE_CHECKING:
    from semsearch.build.pipeline import Plan


def split_files(
    plan: Plan, embedder: Embedder, max_tokens: int, progress: Progress
) -> tuple[list[Chunk], list[int | None], dict[str, str]]:
    """Every chunk in file order, the row each had in the previous index (None: to embed), and
    each file's title (an unchanged file's as the previous index recorded it)."""
    from semsearch.ingest.tokens import count_tokens

    limit = embedder.max_input_tokens
    reused = _chunks_by_source(plan.previous) if plan.previous else {}
    by_text = _rows_by_text(plan.same_texts) if plan.same_texts else {}
    chunks: list[Chunk] = []
    rows: list[int | None] = []
    titles: dict[str, str] = {}
    to_split = sum(s.relative not in plan.unchanged for s in plan.sources)
    if to_split:  # what embeds the new chunks, loaded now: its token counts are the cheaper
        embedders.prepare_batches(embedder)
    split = 0
    for source in plan.sources:
        if source.relative in plan.unchanged:
            titles[source.relative] = plan.previous.meta.files[source.relative].title or ""
            for chunk, row in reused.get(source.relative, []):
                chunks.append(chunk)
                rows.append(row)
            continue
        document = chunk_document(
            source.text,
            source.relative,
            max_tokens=max_tokens,
            count_tokens=count_tokens,
            fits=lambda text: embedder.passage_tokens(text) <= limit,
            progress=progress_within_file(progress, split, to_split, len(chunks)),
        )
        titles[source.relative] = document.title
        for chunk in document.chunks:
            chunks.append(chunk)
            rows.append(by_text.get(embedding_text(chunk)))
        split += 1
        progress(Step("splitting", split, to_split, "files", chunks=len(chunks)))
    if not chunks:
        raise DocsError(f"the Markdown files under {plan.docs} hold no text to index")
    return chunks, rows, titles


def _rows_by_text(index: Index) -> dict[str, int]:
    """The row of each passage of ``index`` by the text it was embedded from."""
    return {embedding_text(chunk): row for row, chunk in enumerate(index.chunks)}


def _chunks_by_source(index: Index) -> dict[str, list[tuple[Chunk, int]]]:
    grouped: dict[str, list[tuple[Chunk, int]]] = {}
    for row, chunk in enumerate(index.chunks):
        grouped.setdefault(chunk.source, []).append((chunk, row))
    return grouped
