"""The "no answer" decision, derived from the indexed data itself.

Cosine scores mean nothing across models (one model's unrelated pairs score 0.8, another's 0.1),
so nothing here is a fixed cosine. At build time two distributions are measured on the new index:

- *off-topic*: the best score of each question in a bank of everyday questions in ten languages
  (``data/offtopic_questions.tsv``: weather, cooking, sport, health...), which documentation
  does not answer;
- *on-topic*: the best score of pseudo-questions made from the corpus itself (each section's own
  heading, asked as a query).

``min_score`` is the midpoint between the off-topic high end (the 90th percentile of the best
scores, taken per bank language and then the highest language, so that a corpus in one language
is not flattered by the other nine) and the on-topic low end (the 10th percentile).

At query time a second, per-question rule uses the same bank as a background model: a passage
is an answer only if it is closer to the question than the nearest off-topic bank question is.
Bank questions the corpus itself seems to answer (scoring above the on-topic low end, e.g. the
cooking questions over a cookbook) are dropped from the background at build time.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np

from .chunking import Chunk
from .embedders import Embedder

OFFTOPIC_FILE = "offtopic_questions.tsv"
OFFTOPIC_QUANTILE = 90
ONTOPIC_QUANTILE = 10
METHOD = (
    f"midpoint of off-topic bank p{OFFTOPIC_QUANTILE} (highest language) and "
    f"section-title pseudo-questions p{ONTOPIC_QUANTILE}; plus per-question background rule"
)


@dataclass
class Calibration:
    min_score: float
    background: np.ndarray
    """Query vectors of the off-topic bank questions kept as the background (k x dim)."""
    record: dict
    """What meta.json records about how ``min_score`` was obtained."""


def offtopic_bank() -> list[tuple[str, str]]:
    """(language, question) pairs of the shipped off-topic bank."""
    text = resources.files("semsearch.data").joinpath(OFFTOPIC_FILE).read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            language, question = line.split("\t", 1)
            rows.append((language, question.strip()))
    return rows


def section_titles(chunks: list[Chunk]) -> list[str]:
    """One pseudo-question per distinct section: its own (deepest) heading."""
    return list(dict.fromkeys(chunk.headings[-1] for chunk in chunks if chunk.headings))


def best_scores(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each query row, its highest cosine against ``vectors``."""
    if len(vectors) == 0 or len(queries) == 0:
        return np.empty(0, dtype=np.float32)
    return (queries @ np.asarray(vectors).T).max(axis=1)


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


def calibrate(embedder: Embedder, vectors: np.ndarray, chunks: list[Chunk]) -> Calibration:
    """Derive ``min_score`` and the background set for a freshly embedded index."""
    bank = offtopic_bank()
    bank_vectors = embedder.embed_queries([question for _, question in bank])
    offtopic = best_scores(vectors, bank_vectors)
    titles = section_titles(chunks)
    ontopic = best_scores(vectors, embedder.embed_queries(titles)) if titles else np.empty(0)

    languages = sorted({language for language, _ in bank})
    language_of = np.array([language for language, _ in bank])
    per_language = {
        language: float(np.percentile(offtopic[language_of == language], OFFTOPIC_QUANTILE))
        for language in languages
    }
    off_high = max(per_language.values())
    # A corpus without headings has no pseudo-questions: stay at the off-topic end.
    on_low = float(np.percentile(ontopic, ONTOPIC_QUANTILE)) if len(ontopic) else float(offtopic.max())
    min_score = (off_high + on_low) / 2
    keep = offtopic < on_low
    return Calibration(
        min_score=min_score,
        background=np.ascontiguousarray(bank_vectors[keep], dtype=np.float32),
        record={
            "value": round(min_score, 6),
            "source": "build",
            "method": METHOD,
            "offtopic_high": round(off_high, 6),
            "ontopic_low": round(on_low, 6),
            "offtopic": _summary(offtopic),
            "offtopic_by_language": {k: round(v, 4) for k, v in per_language.items()},
            "ontopic": _summary(ontopic),
            "background_questions": int(keep.sum()),
            "background_dropped": int((~keep).sum()),
        },
    )


def background_floor(query_vector: np.ndarray, background: np.ndarray | None) -> float:
    """Similarity of the question to its nearest off-topic bank question (-1 without a bank)."""
    if background is None or len(background) == 0:
        return -1.0
    return float((background @ np.asarray(query_vector, dtype=np.float32).reshape(-1)).max())
