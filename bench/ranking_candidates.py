"""Ranking candidates for `bench_ranking.py`. Each is a ranker, (case, question number) -> rows:
either semsearch's own pipeline (``Searcher.ranked``: fusion with BM25, page evidence, passages
holding a named code first) with other weights (``Ranking``), or with another dense score of
every chunk in place of the cosine, so that a candidate changes only what it is about. Plain
cosine, the default itself and the previous default (before this round's page evidence) are
rankers too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache

import numpy as np

from semsearch.encode.keywords import build_keyword_index, tokenize
from semsearch.ingest.chunking import Chunk
from semsearch.retrieve.pages import PageWeights
from semsearch.retrieve.search import top_k
from semsearch.retrieve.searcher import DEFAULT_RANKING, Ranking, Searcher

DEPTH = 50
"""Passages ranked per question: enough for the file-level figures' ten files."""
Dense = Callable[["object", int], np.ndarray]  # (case, question number) -> a score per chunk


def rows_plain_cosine(case, i: int) -> np.ndarray:
    """The tutorial design: one matrix product, the top k, no other rule."""
    return top_k(case.cosines[i], DEPTH)


PREVIOUS = Ranking(pages=None, subject_names_first=True)
"""The default before this round: passages alone, no page evidence, and every name as code writes
it putting its heading's rows first."""


def rows_default(
    case, i: int, dense: np.ndarray | None = None, ranking: Ranking = DEFAULT_RANKING
) -> np.ndarray:
    """semsearch's ranking (hybrid mode) with ``ranking``'s weights (the default's unless given),
    with ``dense`` in place of the cosine."""
    searcher = Searcher(case.index, ranking)
    question = searcher.parse(case.questions[i].question)
    scores = case.cosines[i] if dense is None else dense
    ranked = searcher.ranked(question, case.vectors[i], DEPTH, cosine=np.asarray(scores, np.float32))
    return np.array([r.row for r in ranked], dtype=np.int64)


def rows_previous(case, i: int) -> np.ndarray:
    """The default before this round (``PREVIOUS``)."""
    return rows_default(case, i, ranking=PREVIOUS)


def weighed(ranking: Ranking) -> Callable:
    """The default with ``ranking``'s weights: a ranker."""
    return lambda case, i: rows_default(case, i, ranking=ranking)


# --- document-level aggregation -------------------------------------------------------------


def doc_softmax(case, scores: np.ndarray, tau: float) -> np.ndarray:
    """Per chunk, its file's soft maximum ``tau log sum exp(s / tau)`` over the file's chunks:
    the best chunk's score, raised by each other chunk of the file that comes near it."""
    top = float(scores.max())
    weights = np.exp((scores - top) / tau)
    per_doc = np.bincount(case.docs, weights=weights)
    return top + tau * np.log(per_doc[case.docs])


def doc_top_mean(case, scores: np.ndarray, m: int) -> np.ndarray:
    """Per chunk, the mean of its file's ``m`` best chunk scores (fewer when it has fewer)."""
    out = np.empty_like(scores)
    for doc in np.unique(case.docs):
        rows = np.flatnonzero(case.docs == doc)
        best = np.sort(scores[rows])[::-1][:m]
        out[rows] = best.mean()
    return out


def docagg(kind: str, value: float, weight: float) -> Dense:
    def dense(case, i: int) -> np.ndarray:
        scores = case.cosines[i].astype(np.float64)
        agg = (
            doc_softmax(case, scores, value) if kind == "softmax" else doc_top_mean(case, scores, int(value))
        )
        return (1 - weight) * scores + weight * agg

    return dense


# --- headings and titles as their own field ---------------------------------------------------


def heading_text(chunk: Chunk) -> str:
    """A chunk's headings and its file's name: what a title field holds."""
    stem = chunk.source.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("-", " ").replace("_", " ")
    return " ".join([*chunk.headings, stem])


@cache
def _heading_bm25(case):
    index = case.index
    texts = [heading_text(chunk) for chunk in index.chunks]
    return build_keyword_index(texts, index.keywords.language)


def _rescaled(cosine: np.ndarray) -> np.ndarray:
    """Cosines so that the median chunk is 0 and the best 1 (as ``fuse`` does)."""
    reference, best = float(np.median(cosine)), float(cosine.max())
    return (cosine - reference) / (best - reference) if best > reference else np.zeros_like(cosine)


def heading_bm25(weight: float) -> Dense:
    def dense(case, i: int) -> np.ndarray:
        keyword = _heading_bm25(case).scores(case.questions[i].question)
        top = float(keyword.max())
        return _rescaled(case.cosines[i]) + (weight * keyword / top if top > 0 else 0.0)

    return dense


def trigrams(text: str) -> set[str]:
    words = tokenize(text, None)
    return {f" {w} "[j : j + 3] for w in words for j in range(len(w))}


@cache
def _heading_trigrams(case) -> list[set[str]]:
    return [trigrams(heading_text(chunk)) for chunk in case.index.chunks]


def heading_trigram(weight: float) -> Dense:
    """Trigram overlap of the question with each chunk's headings (share of the question's)."""

    def dense(case, i: int) -> np.ndarray:
        question = trigrams(case.questions[i].question)
        if not question:
            return case.cosines[i]
        overlap = np.array([len(question & h) / len(question) for h in _heading_trigrams(case)])
        return _rescaled(case.cosines[i]) + weight * overlap

    return dense


# --- the chunk embedded without its heading path ----------------------------------------------


@cache
def _plain_cosines(case, model) -> np.ndarray:
    vectors = model.embed_passages([chunk.text for chunk in case.index.chunks])
    return case.vectors @ vectors.T


def without_headings(model, share: float) -> Dense:
    """Cosine to the chunk embedded alone (``share`` 1), or a mix with the default's vector."""

    def dense(case, i: int) -> np.ndarray:
        return (1 - share) * case.cosines[i] + share * _plain_cosines(case, model)[i]

    return dense


# --- pseudo-relevance feedback ----------------------------------------------------------------


def prf(m: int, beta: float) -> Dense:
    """Rocchio: the question's vector moved toward the mean of its ``m`` best chunks."""

    def dense(case, i: int) -> np.ndarray:
        vectors = np.asarray(case.index.vectors)
        best = top_k(case.cosines[i], m)
        moved = case.vectors[i] + beta * vectors[best].mean(axis=0)
        return vectors @ (moved / np.linalg.norm(moved))

    return dense


# --- a page's opening chunk against its sections ----------------------------------------------


@cache
def _openings(case) -> np.ndarray:
    """1 for a chunk that opens a file with sections (its heading path only the page title, the
    file holding chunks under deeper headings), else 0."""
    chunks = case.index.chunks
    sectioned = {c.source for c in chunks if len(c.headings) > 1}
    return np.array([len(c.headings) <= 1 and c.source in sectioned for c in chunks], dtype=np.float64)


def opening_penalty(penalty: float) -> Dense:
    """The cosine less ``penalty`` for a page's opening chunk (it speaks of the whole page, so
    it comes near every question about the page, while the answer sits in a section)."""
    return lambda case, i: case.cosines[i].astype(np.float64) - penalty * _openings(case)


def candidates(model) -> dict[str, Callable]:
    """Every candidate measured, by name: rankers, (case, question number) -> rows."""
    found: dict[str, Dense] = {}
    for tau in (0.005, 0.01, 0.02):
        for weight in (0.25, 0.5, 0.75):
            found[f"doc softmax tau={tau} w={weight}"] = docagg("softmax", tau, weight)
    for m in (2, 3):
        for weight in (0.25, 0.5):
            found[f"doc top-{m} mean w={weight}"] = docagg("top", m, weight)
    for weight in (0.1, 0.2, 0.3, 0.5):
        found[f"heading BM25 w={weight}"] = heading_bm25(weight)
    for weight in (0.1, 0.2, 0.3):
        found[f"heading trigrams w={weight}"] = heading_trigram(weight)
    for share in (1.0, 0.5):
        found[f"embedded without heading path, share {share}"] = without_headings(model, share)
    for m, beta in ((3, 0.3), (3, 0.6), (5, 0.3)):
        found[f"PRF m={m} beta={beta}"] = prf(m, beta)
    for penalty in (0.002, 0.005, 0.01):
        found[f"page opening chunk less {penalty}"] = opening_penalty(penalty)
    rankers = {name: _ranker(dense) for name, dense in found.items()}
    rankers["previous default: no page evidence, names the whole folder mentions first"] = rows_previous
    rankers["BM25 fused only into questions naming something exact"] = weighed(Ranking(plain_keywords=0.0))
    for weight in (0.2, 0.3, 0.35, 0.45, 0.5, 0.6):
        rankers[f"plain questions: BM25 weight {weight}"] = weighed(Ranking(plain_keywords=weight))
    for weight in (0.25, 0.4, 0.6, 0.75, 1.0):
        rankers[f"exact questions: BM25 weight {weight}"] = weighed(Ranking(exact_keywords=weight))
    rankers.update(page_candidates())
    return rankers


def page_candidates() -> dict[str, Callable]:
    """Page evidence (``retrieve.pages``) without each kind, and each weight halved and doubled."""
    default = PageWeights()
    found = {
        "no page evidence": weighed(Ranking(pages=None)),
        "names the whole folder mentions put their heading's rows first": weighed(
            Ranking(subject_names_first=True)
        ),
    }
    for kind in ("bm25", "mean", "pair", "topics"):
        value = getattr(default, kind)
        for factor, label in ((0.0, "without"), (0.5, "half"), (2.0, "twice")):
            weights = replace(default, **{kind: value * factor})
            found[f"page evidence, {kind} {label} ({value * factor:g})"] = weighed(Ranking(pages=weights))
    return found


def _ranker(dense: Dense) -> Callable:
    return lambda case, i: rows_default(case, i, dense(case, i))
