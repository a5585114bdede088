"""The "no answer" decision, derived from the indexed data itself (issue 14).

Cosine scores mean nothing across models (one model's unrelated pairs score 0.8, another's 0.1),
and within one model a question's scores shift with its language, length and style. So the
decision reads a *relevance* instead of a cosine: the best passage's cosine minus the question's
*background similarity*, the mean of its ``NEIGHBOURS`` highest cosines to a bank of everyday
questions in eleven languages (``data/offtopic_questions.tsv``: weather, cooking, sport, health,
travel...) that documentation does not answer. An off-topic question sits as close to its bank
neighbours as to the best passage; an answerable one sits closer to its passage.

The cut on that relevance is chosen per corpus at build time, without labels, between two
reference distributions measured on the corpus itself:

- off-topic: the bank questions in the corpus's own language (the language whose bank questions
  score highest against it), each with its relevance computed leave-one-out (its own row is not
  its neighbour);
- on-topic: the corpus's section titles asked as questions.

``cut`` = midway between the off-topic 90th percentile and the on-topic 10th percentile. Bank
questions that the corpus itself seems to answer (scoring at or above the on-topic 10th
percentile of best scores: say, the cooking questions over a cookbook) are dropped first, from
both the reference and the background. A passage then answers a question when its cosine
reaches ``cut + background similarity`` (``answer_threshold``): one function for ``ask`` and
``eval``. Indexes built before this rule (no ``gate`` in their record) keep the old one: the
cosine must reach both their floor and the nearest bank question's similarity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bank import offtopic_bank
from .chunking import Chunk
from .embedders import Embedder

GATE = 2
"""Version of the rule; recorded with the cut (a record without it holds a legacy cosine floor)."""
ONTOPIC_QUANTILE = 10
OFFTOPIC_QUANTILE = 90
NEIGHBOURS = 3
MAX_TITLES = 1000  # enough for a 10th percentile; keeps calibration fast on huge corpora
MIN_PER_LANGUAGE = 5
METHOD = (
    "relevance = best cosine - mean of the question's 3 highest cosines to the bank (all languages); "
    "cut midway between the 90th percentile of the corpus-language bank questions' relevance "
    "(leave-one-out) and the 10th percentile of the section titles' relevance"
)


@dataclass
class Calibration:
    min_score: float
    """The cut on relevance (best cosine minus background similarity)."""
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


def top_mean(similarities: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """Per row, the mean of its ``k`` highest values (all of them when fewer)."""
    if similarities.shape[1] == 0:
        return np.full(len(similarities), -1.0, dtype=np.float32)
    k = min(k, similarities.shape[1])
    return np.partition(similarities, -k, axis=1)[:, -k:].mean(axis=1)


def choose_cut(offtopic: np.ndarray, ontopic: np.ndarray) -> float:
    """The cut between off-topic and on-topic relevances (see the module's docstring)."""
    high_off = float(np.percentile(offtopic, OFFTOPIC_QUANTILE)) if len(offtopic) else None
    low_on = float(np.percentile(ontopic, ONTOPIC_QUANTILE)) if len(ontopic) else None
    if high_off is None and low_on is None:
        return 0.0
    if high_off is None or low_on is None:  # one reference only: its own side's quantile
        return high_off if low_on is None else low_on
    return (high_off + low_on) / 2


def calibrate(
    embedder: Embedder, vectors: np.ndarray, chunks: list[Chunk], bank_vectors: np.ndarray | None = None
) -> Calibration:
    """Derive the cut and the background for a freshly embedded index.

    ``bank_vectors``: the bank's query vectors for this model (from a previous build, shipped or
    cached: see ``bank``); embedded here when missing.
    """
    bank = offtopic_bank()
    if bank_vectors is None or len(bank_vectors) != len(bank):
        bank_vectors = embedder.embed_queries([question for _, question in bank])
    bank_vectors = np.ascontiguousarray(bank_vectors, dtype=np.float32)
    offtopic = best_scores(vectors, bank_vectors)
    titles = section_titles(chunks)
    title_vectors = embedder.embed_queries(titles) if titles else np.empty((0, bank_vectors.shape[1]))
    ontopic = best_scores(vectors, title_vectors) if titles else np.empty(0)

    # Bank questions scoring like the corpus's own section titles look answerable here: drop them.
    on_low = float(np.percentile(ontopic, ONTOPIC_QUANTILE)) if len(ontopic) else np.inf
    keep = offtopic < on_low
    language_of = np.array([language for language, _ in bank])
    medians = {
        language: float(np.median(offtopic[keep & (language_of == language)]))
        for language in sorted(set(language_of))
        if (keep & (language_of == language)).sum() >= MIN_PER_LANGUAGE
    }
    corpus_language = max(medians, key=medians.get) if medians else None
    background = bank_vectors[keep]
    within = background @ background.T
    np.fill_diagonal(within, -np.inf)  # leave one out: a bank question is not its own neighbour
    bank_relevance = offtopic[keep] - top_mean(within) if len(background) > 1 else np.empty(0)
    reference = bank_relevance
    if corpus_language is not None and len(bank_relevance):
        reference = bank_relevance[language_of[keep] == corpus_language]
    title_relevance = (
        ontopic - top_mean(np.asarray(title_vectors) @ background.T) if len(ontopic) else ontopic
    )
    cut = choose_cut(reference, title_relevance)
    return Calibration(
        min_score=cut,
        offtopic=bank_vectors,
        background_rows=[int(i) for i in np.flatnonzero(keep)],
        record={
            "value": round(cut, 6),
            "gate": GATE,
            "source": "build",
            "method": METHOD,
            "offtopic_relevance": _summary(reference),
            "ontopic_relevance": _summary(title_relevance),
            "offtopic": _summary(offtopic),
            "offtopic_median_by_language": {k: round(v, 4) for k, v in medians.items()},
            "ontopic": _summary(ontopic),
            "corpus_language": corpus_language,
            "background_questions": int(keep.sum()),
            "bank_dropped_as_on_topic": int((~keep).sum()),
        },
    )


def is_answer(score: float, exact: bool, threshold: float) -> bool:
    """The no-answer decision for one passage: its cosine reaches the question's threshold, or
    it contains a code or reference the question names verbatim (an answer at any score)."""
    return exact or score >= threshold


def background_similarity(
    query_vector: np.ndarray, background: np.ndarray | None, legacy: bool = False
) -> float:
    """How close the question sits to the off-topic bank: the mean of its ``NEIGHBOURS`` highest
    cosines to the background questions (legacy rule: the highest one); -1 without a bank."""
    if background is None or len(background) == 0:
        return -1.0
    similarities = np.asarray(background, dtype=np.float32) @ np.asarray(
        query_vector, dtype=np.float32
    ).reshape(-1)
    if legacy:
        return float(similarities.max())
    return float(top_mean(similarities.reshape(1, -1))[0])


def answer_threshold(cut: float, background: float, legacy: bool = False) -> float:
    """The cosine a passage must reach to answer a question whose background similarity is
    ``background``: ``cut + background`` (legacy rule: the higher of the floor ``cut`` and the
    nearest bank question's similarity). ``ask`` and ``eval`` both decide through this."""
    if legacy:
        return max(cut, background)
    return cut + background


def background_floor(query_vector: np.ndarray, background: np.ndarray | None) -> float:
    """Similarity of the question to its nearest off-topic bank question (-1 without a bank)."""
    return background_similarity(query_vector, background, legacy=True)
