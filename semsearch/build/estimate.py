"""How long a build would take, for ``build --dry-run``: measured on this machine now, on the
folder's own chunks, the way the build will run.

The embedding rate is not one number: counted in the chunker's tokens it went from 770 tokens/s
(English API docs and code) to 3,200 (Chinese) on the same machine, because the model reads its
own tokens (1.3 of them per cl100k token in English and code, 0.5 in Chinese) and the length of
the chunks matters. A fixed Polish probe text said 1,700 for all of them. So a dry run embeds a
few of the build's own batches: the chunks to embed, longest first as the build orders them, cut
into its batches, of which up to ``SAMPLE_BATCHES`` evenly spread are timed and scaled to all
(three came within 6% of the whole embedding on three corpora; one, within 36%). Calibration
embeds every section title as a question (and the off-topic bank when its vectors are neither
shipped nor cached): a sample of those is timed too. What the dry run spent reading and
splitting, a build spends again; the keyword index and the writing (1-2% of a build) are left
out, and so are the chunks an interrupted build's journal holds (``still_to_embed``): the build
takes their vectors from it.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from semsearch.build.embedding import EMBED_BATCH, batches, model_lengths
from semsearch.build.report import EstimateBasis
from semsearch.encode.embedders import Embedder, available_cores, prepare_batches
from semsearch.gate.bank import offtopic_bank, stored_bank_vectors
from semsearch.gate.calibration import section_titles
from semsearch.ingest.chunking import Chunk, embedding_text
from semsearch.retrieve.index import Index
from semsearch.store.journal import Journal, embedding_key

SAMPLE_BATCHES = 3
"""Batches timed at most; one per ten of the build's batches (one for under twenty)."""
SAMPLE_QUERIES = 16
T = TypeVar("T")


def build_seconds(
    embedder: Embedder, fresh: Sequence[Chunk], chunks: list[Chunk], previous: Index | None
) -> float:
    """Seconds a build would spend embedding the ``fresh`` chunks and calibrating on all
    ``chunks`` (with the off-topic bank's vectors of ``previous``, shipped or cached, or else
    embedded too). A build calibrates even with nothing to embed (files removed, or every chunk
    in an interrupted build's journal)."""
    kept = (previous is not None and previous.offtopic_reusable) or stored_bank_vectors(embedder) is not None
    bank = [] if kept else offtopic_bank()
    queries = section_titles(chunks) + [question for _, question in bank]
    texts = [embedding_text(chunk) for chunk in fresh]
    return embedding_seconds(embedder, texts) + queries_seconds(embedder, queries)


def still_to_embed(
    chunks: Sequence[Chunk], rows: Sequence[int | None], journal: Journal | None
) -> tuple[list[Chunk], int]:
    """The chunks a build would embed: those without a row in the previous index (``rows``
    None) whose vectors the journal of an interrupted build does not hold; and how many it
    holds, which the build takes from it (``embed_or_reuse``). ``journal`` None: ``--full``,
    which empties it first."""
    fresh = [chunk for chunk, row in zip(chunks, rows, strict=True) if row is None]
    held = journal.resumable() if journal else set()
    if not held:
        return fresh, 0
    left = [chunk for chunk in fresh if embedding_key(journal.spec, embedding_text(chunk)) not in held]
    return left, len(fresh) - len(left)


def _picks(batches: int) -> int:
    """How many of a build's ``batches`` a dry run times: at most a tenth, beyond the first."""
    return 0 if not batches else max(1, min(SAMPLE_BATCHES, batches // 10))


def estimate_basis(fresh: Sequence[Chunk]) -> EstimateBasis:
    """What an estimate for embedding ``fresh`` assumed: the chunks ``embedding_seconds`` times,
    the cores and the load now."""
    full, rest = divmod(len(fresh), EMBED_BATCH)
    timed = sum(_timed([EMBED_BATCH] * full + ([rest] if rest else [])))  # the batches' sizes
    try:
        load: float | None = round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        load = None
    return EstimateBasis(timed, available_cores(), load)


def _longest_first(embedder: Embedder, texts: Sequence[str]) -> list[list[int]]:
    """The build's batches (``embedding.batches``), the longest first."""
    return batches(model_lengths(embedder, texts))[::-1]


def _timed(all_batches: list[T]) -> list[T]:
    """The batches a dry run times: ``_picks`` of them, evenly spread."""
    picks = _picks(len(all_batches))
    return [all_batches[(2 * pick + 1) * len(all_batches) // (2 * picks)] for pick in range(picks)]


def embedding_seconds(embedder: Embedder, texts: Sequence[str]) -> float:
    """Seconds ``embed_in_batches`` would take for ``texts``: a few of its batches, timed, after
    the runtime that embeds them is loaded (timed too: a build loads it once)."""
    if not texts:
        return 0.0
    loading = _seconds(lambda _: prepare_batches(embedder), [])
    all_batches = _longest_first(embedder, texts)
    timed = _timed(all_batches)
    seconds = [_seconds(embedder.embed_passages, [texts[i] for i in batch]) for batch in timed]
    return loading + statistics.mean(seconds) * len(all_batches)


def queries_seconds(embedder: Embedder, queries: Sequence[str]) -> float:
    """Seconds to embed ``queries`` as questions, from an even sample of them."""
    if not queries:
        return 0.0
    step = max(1, len(queries) // SAMPLE_QUERIES)
    sample = list(queries[::step][:SAMPLE_QUERIES])
    return _seconds(embedder.embed_queries, sample) * len(queries) / len(sample)


def _seconds(embed: Callable[[list[str]], object], texts: list[str]) -> float:
    started = time.perf_counter()
    embed(texts)
    return time.perf_counter() - started
