"""The embed step of a build: passages embedded in batches with progress in tokens, vectors
reused from the previous index or from an interrupted build's journal (a dry run times a few
of the same batches: ``estimate``). ``Step`` is the progress update every build phase reports."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from semsearch.encode.embedders import Embedder, prepare_batches
from semsearch.ingest.chunking import Chunk, embedding_text
from semsearch.store.journal import Journal, embedding_key

EMBED_BATCH = 16


@dataclass(frozen=True)
class Step:
    """One progress update of a build: a phase, and how far it is (``total`` None: no measure)."""

    phase: str
    """finding, reading, splitting, embedding, calibrating, keywords, writing."""
    done: int = 0
    total: int | None = None
    unit: str = ""
    chunks: int | None = None
    """Chunks so far (splitting, embedding)."""
    chunks_total: int | None = None


Progress = Callable[[Step], None]


@dataclass(frozen=True)
class Embedded:
    vectors: np.ndarray
    embedded: int
    """Chunks embedded now."""
    resumed: int
    """Chunks taken from an interrupted build's journal."""
    tokens: int
    """Tokens of the chunks embedded now."""


def model_lengths(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """Each text's length in the model's own tokens, what a batch's padding is made of (with the
    runtime of batches loaded first, whose count may be the cheaper)."""
    if texts:
        prepare_batches(embedder)
    return [embedder.passage_tokens(text) for text in texts]


def batch_order(lengths: Sequence[int]) -> list[int]:
    """Texts longest first (``lengths``: ``model_lengths``): cut into ``EMBED_BATCH``es, each
    batch holds texts of similar length, so little padding. In characters instead, a batch of
    16 chunks spent 1.8 times the attention its texts needed (otel-es, obsidian-tasks-docs); in
    the model's tokens, 1.05. ``estimate`` times batches of this order."""
    return sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)


def batches(lengths: Sequence[int]) -> list[list[int]]:
    """The batches of ``batch_order`` in the order a build embeds them: the shortest first.

    A build killed late then has the most chunks kept (the journal keeps every batch done) and
    the fewest left, the longest: with the longest first, the last tenth of the time held a
    fifth of the chunks (the shortest), and a build killed at 85% of its time embedded 20% of
    them again (issue 25; tests/end_to_end/test_killed_late.py). Each batch still holds texts of
    similar length (little padding), and the total time is the same."""
    order = batch_order(lengths)
    return [order[start : start + EMBED_BATCH] for start in range(0, len(order), EMBED_BATCH)][::-1]


def embed_in_batches(
    embedder: Embedder,
    texts: Sequence[str],
    progress: Progress | None = None,
    weights: Sequence[int] | None = None,
    on_batch: Callable[[list[int], np.ndarray], None] | None = None,
) -> np.ndarray:
    """Embed passages in ``batches``; the vectors come back in input order.

    Progress is counted in ``weights`` (tokens per text; default 1 each), known up front, so a
    rate and a time left can be shown from the first batch on. ``on_batch(indices, vectors)``
    sees each batch as it is embedded (the build's journal keeps them).
    """
    weights = list(weights) if weights is not None else [1] * len(texts)
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    done, total, chunks = 0, sum(weights), 0
    for batch in batches(model_lengths(embedder, texts)):
        vectors[batch] = embedder.embed_passages([texts[i] for i in batch])
        if on_batch:
            on_batch(batch, vectors[batch])
        done += sum(weights[i] for i in batch)
        chunks += len(batch)
        if progress:
            progress(Step("embedding", done, total, "tokens", chunks, len(texts)))
    return vectors


def embed_or_reuse(
    embedder: Embedder,
    chunks: list[Chunk],
    rows: list[int | None],
    previous_vectors: np.ndarray | None,
    journal: Journal,
    progress: Progress | None = None,
) -> Embedded:
    """The vectors of ``chunks``: copied from ``previous_vectors`` where ``rows`` gives a row,
    taken from the journal of an interrupted build, else embedded (and journaled as they come)."""
    vectors = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
    old_rows = [(i, row) for i, row in enumerate(rows) if row is not None]
    if old_rows and previous_vectors is not None:
        vectors[[i for i, _ in old_rows]] = previous_vectors[[row for _, row in old_rows]]
    fresh = [i for i, row in enumerate(rows) if row is None]
    keys = {i: embedding_key(embedder.spec, embedding_text(chunks[i])) for i in fresh}
    journaled = journal.load()
    resumed = [i for i in fresh if keys[i] in journaled]
    if resumed:
        vectors[resumed] = np.stack([journaled[keys[i]] for i in resumed])
    missing = [i for i in fresh if keys[i] not in journaled]

    def keep(batch: list[int], embedded: np.ndarray) -> None:
        journal.add([keys[missing[j]] for j in batch], embedded)

    journal.expect(len(missing))
    weights = [chunks[i].tokens for i in missing]
    try:
        texts = [embedding_text(chunks[i]) for i in missing]
        vectors[missing] = embed_in_batches(embedder, texts, progress, weights, on_batch=keep)
    finally:
        journal.flush()  # also when interrupted: what was embedded is kept
    return Embedded(vectors, len(missing), len(resumed), sum(weights))
