"""Page evidence in the ranking: the page a reader would pick comes first.

Hybrid search ranks passages (``search.fuse``); a reader picks a page. Among the passages near
the top, each is raised by what its page as a whole says of the question (``encode.pages``):

- ``bm25``: the page's BM25 score over its whole text, title and aliases (divided by the
  best page's): a page that speaks of the question throughout, or is named after it, outranks a
  long one mentioning it once;
- ``mean``: how close the page's passages are to the question on average (the mean cosine,
  rescaled across pages as ``fuse`` rescales passages): the page is about it, not one line;
- ``pair``: the mean of its two best passages' rescaled cosines (its one best for a page of
  one passage): a second passage agreeing;
- ``topics``, subtracted: the share of the other pages' titles the page mentions. A
  glossary, an index or an FAQ touches every topic in a line, and loses to the page about it.

All four are weighed by ``PageIndex.linked``, the share of the folder's pages whose title another
page mentions: about 1 in a doc site or a note vault, about 0 in a set of independent articles,
where page evidence is passage evidence again and the ranking stays as it was.

The weights were chosen on the tuned-on sets alone (`bench/bench_ranking.py`: `docs/`, the
English guide, cooking, the API reference, PoQuAD, foam-docs), on a coarse grid; bench/RESULTS.md
has every candidate measured, kept or not, on every set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semsearch.encode.pages import PageIndex
from semsearch.retrieve.search import rescaled


@dataclass(frozen=True)
class PageWeights:
    """How much each kind of page evidence weighs (see the module docstring)."""

    bm25: float = 0.2
    mean: float = 0.1
    pair: float = 0.2
    topics: float = 0.5


def page_evidence(
    pages: PageIndex,
    page_of_row: np.ndarray,
    cosine: np.ndarray,
    page_keywords: np.ndarray,
    weights: PageWeights = PageWeights(),
) -> np.ndarray:
    """What each page adds to its passages' scores (see the module docstring): one per page.
    ``page_of_row``: each row's page; ``page_keywords``: each page's BM25 score."""
    if pages.linked <= 0:
        return np.zeros(pages.count)
    mean = rescaled(np.bincount(page_of_row, weights=cosine, minlength=pages.count) / np.diff(pages.starts))
    pair = best_two(rescaled(cosine), pages.starts, page_of_row)
    return page_score(
        pages.linked, page_keywords, float(page_keywords.max()), mean, pair, pages.topics, weights
    )


def page_score(
    linked: float,
    page_keywords: np.ndarray,
    best_keywords: float,
    mean: np.ndarray,
    pair: np.ndarray,
    topics: np.ndarray,
    weights: PageWeights,
) -> np.ndarray:
    """What pages add to their passages (see the module docstring), from their BM25 scores (and
    the best page's), their rescaled mean cosines, their two best passages' rescaled cosines
    (``best_two``) and their topic shares: the same sum whether every page is scored (a folder
    index) or only those of a question's candidates (an index searched inside its engine)."""
    keywords = page_keywords / best_keywords if best_keywords > 0 else np.zeros(len(page_keywords))
    score = weights.bm25 * keywords + weights.mean * mean + weights.pair * pair - weights.topics * topics
    return linked * score


def best_two(values: np.ndarray, starts: np.ndarray, page_of_row: np.ndarray) -> np.ndarray:
    """Per page (rows ``starts[p]`` to ``starts[p + 1]``, none empty): the mean of its two highest
    ``values``, or its one value."""
    first = np.maximum.reduceat(values, starts[:-1])
    at_best = np.flatnonzero(values == first[page_of_row])
    _, where = np.unique(page_of_row[at_best], return_index=True)  # each page's first best row
    rest = np.array(values, dtype=np.float64)
    rest[at_best[where]] = -np.inf
    second = np.maximum.reduceat(rest, starts[:-1])
    return np.where(np.isfinite(second), (first + second) / 2, first)
