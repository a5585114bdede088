"""The "no answer" decision, derived from the indexed data itself.

Cosine scores mean nothing across models (one model's unrelated pairs score 0.8, another's 0.1),
so nothing here is a fixed cosine. The decision rests on a bank of everyday questions in ten
languages (``data/offtopic_questions.tsv``: weather, cooking, sport, health, travel...) that
documentation does not answer, embedded with the index's own model at build time:

1. *Background rule* (per question): a passage is an answer only if it is at least as close to
   the question as the nearest bank question in the corpus's language is. A question about the
   weather sits next to the bank's weather questions, whatever the model's score scale; and a
   question asked in another language than the corpus is compared across the same language gap
   on both sides.
2. *Floor* (``min_score``): no passage scoring below what a typical off-topic question scores
   against this corpus is an answer: the median of the bank questions' best scores, taken per
   language, lowest language (so that questions in another language than the corpus, whose
   scores all run lower, still get their answers).

Bank questions that the corpus itself seems to answer (scoring at or above the 10th percentile of
the corpus's own section titles asked as questions: say, the cooking questions over a cookbook)
are dropped from both before use.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bank import offtopic_bank
from .chunking import Chunk
from .embedders import Embedder

ONTOPIC_QUANTILE = 10
MAX_TITLES = 1000  # enough for a 10th percentile; keeps calibration fast on huge corpora
MIN_PER_LANGUAGE = 5
METHOD = (
    "floor: lowest per-language median of off-topic bank best scores; "
    "per question: at least as close as the nearest off-topic bank question"
)


@dataclass
class Calibration:
    min_score: float
    offtopic: np.ndarray
    """Query vectors of every bank question (k x dim), in bank order."""
    background_rows: list[int]
    """The bank questions kept as the background of the no-answer rule."""
    record: dict
    """What meta.json records about how ``min_score`` was obtained."""

    @property
    def background(self) -> np.ndarray:
        return self.offtopic[self.background_rows]


def section_titles(chunks: list[Chunk], limit: int = MAX_TITLES) -> list[str]:
    """One pseudo-question per distinct section (its own heading); an even sample of ``limit``."""
    titles = list(dict.fromkeys(chunk.headings[-1] for chunk in chunks if chunk.headings))
    if len(titles) <= limit:
        return titles
    return [titles[i] for i in np.linspace(0, len(titles) - 1, limit).round().astype(int)]


def best_scores(vectors: np.ndarray, queries: np.ndarray, block: int = 16384) -> np.ndarray:
    """For each query row, its highest cosine against ``vectors`` (in blocks: bounded memory)."""
    if len(vectors) == 0 or len(queries) == 0:
        return np.empty(0, dtype=np.float32)
    best = np.full(len(queries), -np.inf, dtype=np.float32)
    for start in range(0, len(vectors), block):
        np.maximum(best, (queries @ np.asarray(vectors[start : start + block]).T).max(axis=1), out=best)
    return best


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


def calibrate(
    embedder: Embedder, vectors: np.ndarray, chunks: list[Chunk], bank_vectors: np.ndarray | None = None
) -> Calibration:
    """Derive ``min_score`` and the background set for a freshly embedded index.

    ``bank_vectors``: the bank's query vectors for this model (from a previous build, shipped or
    cached: see ``bank``); embedded here when missing.
    """
    bank = offtopic_bank()
    if bank_vectors is None or len(bank_vectors) != len(bank):
        bank_vectors = embedder.embed_queries([question for _, question in bank])
    offtopic = best_scores(vectors, bank_vectors)
    titles = section_titles(chunks)
    ontopic = best_scores(vectors, embedder.embed_queries(titles)) if titles else np.empty(0)

    # Bank questions scoring like the corpus's own section titles look answerable here: drop them.
    on_low = float(np.percentile(ontopic, ONTOPIC_QUANTILE)) if len(ontopic) else np.inf
    keep = offtopic < on_low
    language_of = np.array([language for language, _ in bank])
    medians = {
        language: float(np.median(offtopic[keep & (language_of == language)]))
        for language in sorted(set(language_of))
        if (keep & (language_of == language)).sum() >= MIN_PER_LANGUAGE
    }
    min_score = min(medians.values()) if medians else float(np.median(offtopic))
    # The background holds the bank questions in the corpus's own language (the one whose questions
    # score highest against it): a question in another language is then compared with passages
    # and bank questions across the same language gap, not with its own language's bank questions.
    corpus_language = max(medians, key=medians.get) if medians else None
    background = keep & (language_of == corpus_language) if corpus_language else keep
    return Calibration(
        min_score=min_score,
        offtopic=np.ascontiguousarray(bank_vectors, dtype=np.float32),
        background_rows=[int(i) for i in np.flatnonzero(background)],
        record={
            "value": round(min_score, 6),
            "source": "build",
            "method": METHOD,
            "offtopic": _summary(offtopic),
            "offtopic_median_by_language": {k: round(v, 4) for k, v in medians.items()},
            "ontopic": _summary(ontopic),
            "corpus_language": corpus_language,
            "background_questions": int(background.sum()),
            "bank_dropped_as_on_topic": int((~keep).sum()),
        },
    )


def is_answer(score: float, exact: bool, threshold: float) -> bool:
    """The no-answer decision for one passage: its cosine reaches the question's threshold, or
    it contains a code or reference the question names verbatim (an answer at any score)."""
    return exact or score >= threshold


def background_floor(query_vector: np.ndarray, background: np.ndarray | None) -> float:
    """Similarity of the question to its nearest off-topic bank question (-1 without a bank)."""
    if background is None or len(background) == 0:
        return -1.0
    return float((background @ np.asarray(query_vector, dtype=np.float32).reshape(-1)).max())
