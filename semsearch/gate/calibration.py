"""The gate's cut, measured when a build calibrates, on the corpus itself and without labels
(``threshold`` says what the cut is on: a question's relevance, its best cosine less its
baseline).

The cut lies midway between two reference distributions: the 85th percentile of the bank
questions' relevance (every language, each leave-one-out: its own row is not its neighbour) and
the 10th percentile of the corpus's section titles asked as questions (both with their
language's share taken off: the titles are in the documents' language). Bank questions that the
corpus itself seems to answer (scoring at or above the titles' 10th percentile of best scores:
say, the cooking questions over a cookbook) are dropped first, from both the reference and the
background. The per-language offsets are measured here too (``language_offsets``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from semsearch.encode.embedders import Embedder
from semsearch.encode.keywords import KeywordIndex
from semsearch.gate.bank import NO_LANGUAGE, offtopic_bank
from semsearch.gate.threshold import (
    EVIDENCE_PASSAGES,
    GATE,
    RULES,
    baseline,
    coverages,
    language_centroids,
    nearest_languages,
    top_mean,
)
from semsearch.ingest.chunk import Chunk
from semsearch.store.records import MarginRecord

ONTOPIC_QUANTILE = 10
OFFTOPIC_QUANTILE = 85
MIN_LANGUAGE_QUESTIONS = 5
"""A bank language with fewer kept questions on this corpus gets no offset (too few to measure)."""
MAX_TITLES = 1000  # enough for a 10th percentile; keeps calibration fast on huge corpora
METHOD = (
    "relevance = best cosine - (0.75 x mean of the question's 3 highest cosines to the bank "
    "- 0.03 x the share of its words, weighted by rarity, found in its best of 3 passages "
    "+ half its language's offset: the bank's median relevance in that language minus its "
    "overall median); cut midway between the 85th percentile of the bank questions' relevance "
    "(leave-one-out, every language) and the 10th percentile of the section titles' relevance"
)


@dataclass
class References:
    """What calibration measures on a freshly embedded corpus (before its keyword index exists)."""

    bank_vectors: np.ndarray
    bank_best: np.ndarray
    bank_rows: np.ndarray
    title_texts: list[str]
    title_vectors: np.ndarray
    title_best: np.ndarray
    title_rows: np.ndarray
    keep: np.ndarray
    """Bank questions kept as background (those the corpus seems to answer are dropped)."""


@dataclass
class Calibration:
    """What a build measured to set the gate: the margin, the bank and its measurements."""

    margin: float
    """The margin: the cut on relevance (best cosine minus the question's baseline)."""
    offtopic: np.ndarray
    """Query vectors of every bank question (k x dim), in bank order."""
    background_rows: list[int]
    """The bank questions kept as the background of the no-answer rule."""
    languages: list[str]
    """The language of each bank question, in bank order (``language_offsets`` are keyed by it)."""
    record: MarginRecord
    """The margin as meta.json records it, with how it was obtained."""

    @property
    def background(self) -> np.ndarray:
        return self.offtopic[self.background_rows]


def section_titles(chunks: list[Chunk], limit: int = MAX_TITLES) -> list[str]:
    """One pseudo-question per distinct section (its own heading); an even sample of ``limit``."""
    titles = list(dict.fromkeys(chunk.headings[-1] for chunk in chunks if chunk.headings))
    if len(titles) <= limit:
        return titles
    return [titles[i] for i in np.linspace(0, len(titles) - 1, limit).round().astype(int)]


def best_rows(
    vectors: np.ndarray, queries: np.ndarray, k: int = EVIDENCE_PASSAGES, block: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For each query row, its highest cosine against ``vectors`` and the rows of its ``k`` best.
    In blocks of rows (by default about 4 million cosines at a time): bounded memory."""
    k = min(k, len(vectors))
    best = np.full(len(queries), -np.inf, dtype=np.float32)
    rows = np.zeros((len(queries), k), dtype=np.int64)
    if k == 0 or len(queries) == 0:
        return best, rows
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    block = block or max(256, 4_000_000 // len(queries))
    for start in range(0, len(vectors), block):
        cos = queries @ np.asarray(vectors[start : start + block]).T
        top = min(k, cos.shape[1])
        local = np.argpartition(-cos, top - 1, axis=1)[:, :top]
        both = np.concatenate([scores, np.take_along_axis(cos, local, 1)], axis=1)
        both_rows = np.concatenate([rows, local + start], axis=1)
        keep = np.argpartition(-both, k - 1, axis=1)[:, :k]
        scores = np.take_along_axis(both, keep, 1)
        rows = np.take_along_axis(both_rows, keep, 1)
    return scores.max(axis=1), rows


def _summary(scores: np.ndarray) -> dict:
    percentiles = (5, 10, 25, 50, 75, 90, 95)
    values = np.percentile(scores, percentiles) if len(scores) else [None] * len(percentiles)
    return {
        "n": int(len(scores)),
        **{
            f"p{p}": None if v is None else round(float(v), 4)
            for p, v in zip(percentiles, values, strict=True)
        },
    }


def choose_cut(offtopic: np.ndarray, ontopic: np.ndarray) -> float:
    """The cut between off-topic and on-topic relevances (see the module's docstring)."""
    high_off = float(np.percentile(offtopic, OFFTOPIC_QUANTILE)) if len(offtopic) else None
    low_on = float(np.percentile(ontopic, ONTOPIC_QUANTILE)) if len(ontopic) else None
    if high_off is None and low_on is None:
        return 0.0
    if high_off is None or low_on is None:  # one reference only: its own side's quantile
        return high_off if low_on is None else low_on
    return (high_off + low_on) / 2


def measure_references(
    embedder: Embedder, vectors: np.ndarray, chunks: list[Chunk], bank_vectors: np.ndarray | None = None
) -> References:
    """Score the bank and the corpus's section titles against a freshly embedded corpus.

    ``bank_vectors``: the bank's query vectors for this model (from a previous build, shipped or
    cached: see ``bank``); embedded here when missing.
    """
    bank = offtopic_bank()
    if bank_vectors is None or len(bank_vectors) != len(bank):
        bank_vectors = embedder.embed_queries([question for _, question in bank])
    bank_vectors = np.ascontiguousarray(bank_vectors, dtype=np.float32)
    bank_best, bank_rows = best_rows(vectors, bank_vectors)
    titles = section_titles(chunks)
    title_vectors = (
        np.asarray(embedder.embed_queries(titles), dtype=np.float32)
        if titles
        else np.empty((0, bank_vectors.shape[1]), dtype=np.float32)
    )
    title_best, title_rows = best_rows(vectors, title_vectors)
    # Bank questions scoring like the corpus's own section titles look answerable here: dropped.
    on_low = float(np.percentile(title_best, ONTOPIC_QUANTILE)) if len(title_best) else np.inf
    keep = bank_best < on_low
    return References(bank_vectors, bank_best, bank_rows, titles, title_vectors, title_best, title_rows, keep)


def language_offsets(relevance: np.ndarray, languages: Sequence[str], weight: float) -> dict[str, float]:
    """``weight`` x (median relevance of the bank questions in each language - their overall
    median): how much a language's questions lose against this corpus (see the docstring)."""
    tags = np.asarray(languages)
    if not weight or not np.any(tags != NO_LANGUAGE):
        return {}
    overall = float(np.median(relevance[tags != NO_LANGUAGE]))
    return {
        str(name): round(weight * (float(np.median(relevance[tags == name])) - overall), 6)
        for name in sorted(set(languages) - {NO_LANGUAGE})
        if (tags == name).sum() >= MIN_LANGUAGE_QUESTIONS
    }


def _titles_language(title_vectors: np.ndarray, names: list[str], centroids: np.ndarray) -> str | None:
    """The documents' language among the bank's: the one most section titles lie nearest."""
    found = Counter(nearest_languages(title_vectors, names, centroids))
    return found.most_common(1)[0][0] if found else None


def calibrate_with(references: References, keywords: KeywordIndex | None, chunks: list[Chunk]) -> Calibration:
    """Derive the cut, the background and the language offsets (see the module's docstring).

    The bank's inputs in no language join the background only at query time (``asdf`` then
    sits close to its kind): the references are measured without them, because section titles,
    short as they are, sit close to them too, and would drag the cut down on every corpus."""
    rule = RULES[GATE]
    refs = references
    bank = offtopic_bank()
    in_language = np.array([language != NO_LANGUAGE for language, _ in bank], dtype=bool)
    kept = np.flatnonzero(refs.keep & in_language)
    background = refs.bank_vectors[kept]
    within = background @ background.T
    np.fill_diagonal(within, -np.inf)  # leave one out: a bank question is not its own neighbour
    bank_coverage = coverages(keywords, [bank[i][1] for i in kept], refs.bank_rows[kept], chunks)
    bank_relevance = (
        refs.bank_best[kept] - baseline(rule, top_mean(within), bank_coverage)
        if len(background) > 1
        else np.empty(0)
    )
    kept_languages = [bank[i][0] for i in kept][: len(bank_relevance)]
    offsets = language_offsets(bank_relevance, kept_languages, rule.language_weight)
    names, centroids = language_centroids(refs.bank_vectors, [language for language, _ in bank])
    titles_language = _titles_language(refs.title_vectors, names, centroids)
    title_relevance = refs.title_best
    if len(refs.title_best):
        title_background = top_mean(refs.title_vectors @ background.T)
        title_coverage = coverages(keywords, refs.title_texts, refs.title_rows, chunks)
        title_offset = offsets.get(titles_language or "", 0.0)
        title_relevance = refs.title_best - baseline(rule, title_background, title_coverage, title_offset)
    bank_relevance = bank_relevance - np.array([offsets.get(language, 0.0) for language in kept_languages])
    cut = choose_cut(bank_relevance, title_relevance)
    return Calibration(
        margin=cut,
        offtopic=refs.bank_vectors,
        background_rows=[int(i) for i in np.flatnonzero(refs.keep)],
        languages=[language for language, _ in bank],
        record=MarginRecord(
            value=round(cut, 6),
            gate=GATE,
            source="build",
            method=METHOD,
            language_offsets=offsets,
            titles_language=titles_language,
            other={
                "offtopic_relevance": _summary(bank_relevance),
                "ontopic_relevance": _summary(title_relevance),
                "offtopic": _summary(refs.bank_best),
                "ontopic": _summary(refs.title_best),
                "background_questions": int(refs.keep.sum()),
                "bank_dropped_as_on_topic": int((~refs.keep).sum()),
            },
        ),
    )


def calibrate(
    embedder: Embedder, vectors: np.ndarray, chunks: list[Chunk], bank_vectors: np.ndarray | None = None
) -> Calibration:
    """``measure_references`` and ``calibrate_with`` in one step, with a keyword index made here
    (a build makes its own between the two: see ``build``)."""
    from semsearch.encode.corpus import keyword_index_of

    references = measure_references(embedder, vectors, chunks, bank_vectors)
    return calibrate_with(references, keyword_index_of(chunks), chunks)
