"""The "no answer" decision, derived from the indexed data itself (issue 14).

Cosine scores mean nothing across models (one model's unrelated pairs score 0.8, another's 0.1),
and within one model a question's scores shift with its language, length and style. So the
decision reads a *relevance*: the best passage's cosine minus the question's *baseline*, made
of two pieces of evidence (weights per gate version: ``RULES``):

- its *background similarity*, the mean of its ``NEIGHBOURS`` highest cosines to a bank of
  everyday questions in eleven languages (``data/offtopic_questions.tsv``: weather, cooking,
  sport, health, travel...) that documentation does not answer, and inputs in no language
  (``asdf``, ``test``, lorem ipsum): an off-topic question sits as close to its bank neighbours
  as to the best passage, an answerable one closer to its passage;
- its *word coverage*: the share of its words, weighted by rarity in the corpus, that its best
  passages contain (``KeywordIndex.coverage``): off-topic questions name things the folder never
  mentions. It lowers the baseline, so shared words help a question in and never keep it out;
- its *language*: a question in another language than the documents scores lower against
  every passage (German questions on Polish documents, answerable or not, lose ~0.05). The bank
  measures that loss per language on the corpus itself (its questions' median relevance per
  language against all of them), and half of it is taken off the question's baseline. The
  language is the bank language whose questions' mean direction lies nearest the question's
  vector (``language_centroids``): no text classifier, nothing to load at query time.

The cut on that relevance is chosen per corpus at build time, without labels, from the corpus
itself (``calibration``). A passage then answers a question when its cosine reaches
``cut + baseline`` (``answer_threshold``): one function for ``ask`` and ``eval``. Indexes built
before the relevance rule (no ``gate`` in their record) keep theirs: the cosine must reach both
their floor and the nearest bank question's similarity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.gate.bank import NO_LANGUAGE
from semsearch.ingest.chunk import Chunk

GATE = 4
"""Version of the rule; recorded with the cut (a record without it holds a legacy cosine floor)."""


@dataclass(frozen=True)
class Rule:
    """How a gate version turns a question's evidence into its *baseline* (what its best cosine
    must exceed, beyond the cut): ``background_weight`` x background similarity minus
    ``evidence_weight`` x word coverage (see ``KeywordIndex.coverage``)."""

    background_weight: float
    evidence_weight: float
    language_weight: float = 0.0
    """Share of the bank's per-language loss on this corpus taken off the baseline."""


RULES = {2: Rule(1.0, 0.0), 3: Rule(0.75, 0.03), 4: Rule(0.75, 0.03, 0.5)}
"""Gate 4's weights and quantiles were chosen on the tuned-on sets and held on the reported-on
ones (bench/gate/RESULTS.md); gates 2 and 3 stay readable for indexes built with them."""
BASELINE_IN_WORDS = (
    "how close it comes to everyday questions that no documents answer, such as the weather's, "
    "in its language, less the words it shares with the documents"
)
"""A question's baseline as ``ask``, ``info`` and the MCP server explain it."""
NEIGHBOURS = 3
EVIDENCE_PASSAGES = 3
"""Word coverage is read in the question's best passages by cosine."""


def top_mean(similarities: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """Per row, the mean of its ``k`` highest values (all of them when fewer)."""
    if similarities.shape[1] == 0:
        return np.full(len(similarities), -1.0, dtype=np.float32)
    k = min(k, similarities.shape[1])
    return np.partition(similarities, -k, axis=1)[:, -k:].mean(axis=1)


def coverages(
    keywords: KeywordIndex | None,
    texts: Sequence[str | Sequence[str]],
    rows: np.ndarray,
    chunks: Sequence[Chunk],
) -> np.ndarray:
    """Word coverage of each text (or its keyword tokens) in its own best passages (0 without a
    keyword index)."""
    if keywords is None:
        return np.zeros(len(texts), dtype=np.float32)
    pairs = zip(texts, rows, strict=True)
    return np.array([keywords.coverage(text, [chunks[int(r)].text for r in row]) for text, row in pairs])


def language_centroids(vectors: np.ndarray, languages: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Each language's direction in the model's space: the normalized mean of its questions'
    vectors (a question's vector carries its language: the nearest centroid names it)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    names = sorted(set(languages) - {NO_LANGUAGE})
    if not names:
        return [], np.empty((0, vectors.shape[-1]), dtype=np.float32)
    tags = np.asarray(languages)
    centroids = np.stack([vectors[tags == name].mean(axis=0) for name in names])
    return names, centroids / np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)


def nearest_languages(vectors: np.ndarray, names: list[str], centroids: np.ndarray) -> list[str]:
    """The language of each row of ``vectors`` (see ``language_centroids``)."""
    if not names or len(vectors) == 0:
        return [""] * len(vectors)
    return [names[i] for i in np.argmax(np.asarray(vectors, dtype=np.float32) @ centroids.T, axis=1)]


def baseline(
    rule: Rule, background: np.ndarray | float, coverage: np.ndarray | float, language_offset: float = 0.0
) -> np.ndarray | float:
    """What a question's best cosine must exceed beyond the cut, under ``rule`` (see ``Rule``);
    ``language_offset`` is its language's entry of ``language_offsets`` (weight included)."""
    return rule.background_weight * background - rule.evidence_weight * coverage + language_offset


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


def answer_threshold(cut: float, baseline: float, legacy: bool = False) -> float:
    """The cosine a passage must reach to answer a question whose baseline is ``baseline``:
    ``cut + baseline`` (legacy rule: the higher of the floor ``cut`` and the nearest bank
    question's similarity, its baseline). ``ask`` and ``eval`` both decide through this."""
    if legacy:
        return max(cut, baseline)
    return cut + baseline


def background_floor(query_vector: np.ndarray, background: np.ndarray | None) -> float:
    """Similarity of the question to its nearest off-topic bank question (-1 without a bank)."""
    return background_similarity(query_vector, background, legacy=True)
