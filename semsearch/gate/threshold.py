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

The cut on that relevance is chosen per corpus at build time, without labels, midway between
two reference distributions measured on the corpus itself: the 85th percentile of the bank
questions' relevance (every language, each leave-one-out: its own row is not its neighbour) and
the 10th percentile of the corpus's section titles asked as questions (both with their
language's share taken off: the titles are in the documents' language). Bank questions that the
corpus itself seems to answer (scoring at or above the titles' 10th percentile of best scores:
say, the cooking questions over a cookbook) are dropped first, from both the reference and the
background. A passage then answers a question when its cosine reaches ``cut + baseline``
(``answer_threshold``): one function for ``ask`` and ``eval``. Indexes built before the
relevance rule (no ``gate`` in their record) keep theirs: the cosine must reach both their floor
and the nearest bank question's similarity.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from semsearch.encode.embedders import Embedder
from semsearch.encode.keywords import KeywordIndex
from semsearch.gate.bank import NO_LANGUAGE, offtopic_bank
from semsearch.ingest.chunk import Chunk
from semsearch.store.records import MarginRecord

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
ONTOPIC_QUANTILE = 10
OFFTOPIC_QUANTILE = 85
BASELINE_IN_WORDS = (
    "how close it comes to everyday questions that no documents answer, such as the weather's, "
    "in its language, less the words it shares with the documents"
)
"""A question's baseline as ``ask``, ``info`` and the MCP server explain it."""
MIN_LANGUAGE_QUESTIONS = 5
"""A bank language with fewer kept questions on this corpus gets no offset (too few to measure)."""
NEIGHBOURS = 3
EVIDENCE_PASSAGES = 3
"""Word coverage is read in the question's best passages by cosine."""
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
