"""Searching an index that its engine searches (a ``postgresql://`` index: ``store.engine``): the
same ranking and gate as ``searcher``, on what the engine returns instead of every vector.

A small index (``Candidates.complete``) comes back whole: every row's cosine, and the BM25 and
page evidence of the folder index, so its answers are the folder index's. A big one comes back as
its candidates: the best rows by cosine and by BM25 among those the filters allow, the rows naming
what the question names, and the figures the ranking rescales by over every row (the median and
best cosine, the best BM25, the pages' figures). The ranking and the gate work on the candidates'
arrays alone (``QuestionScores.rows``), rescaled by those figures: so ``fuse``, the exact rows'
order and the gate read the figures they read on a folder index, the first ``k`` come from the
candidates, and a question's memory is its candidates', whatever the size of the index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from semsearch.retrieve.answer import Ranked
from semsearch.retrieve.filters import Condition
from semsearch.retrieve.pages import page_score
from semsearch.retrieve.question import ParsedQuestion
from semsearch.retrieve.search import rescale
from semsearch.retrieve.searcher import QuestionScores, Searcher, fuses
from semsearch.store.engine import Candidates, SearchEngine

CANDIDATES = 100
"""Rows the engine returns by cosine, and again by BM25, for a question (more when ``-k`` asks)."""


class EngineSearcher(Searcher):
    """A ``Searcher`` whose scores come from the index's engine (see the module docstring)."""

    @property
    def engine(self) -> SearchEngine:
        store = self.index.store
        if not isinstance(store, SearchEngine):
            raise TypeError("an EngineSearcher searches an index whose store is a SearchEngine")
        return store

    def scores(
        self,
        question: ParsedQuestion,
        query_vector: np.ndarray,
        mode: str,
        paths: Sequence[str] = (),
        where: Sequence[str | Condition] = (),
        depth: int = 0,
        cosine: np.ndarray | None = None,
    ) -> QuestionScores:
        if cosine is not None:  # scores given (the bench): ranked as a folder index ranks them
            return super().scores(question, query_vector, mode, paths, where, depth, cosine)
        index = self.index
        allowed = index.allowed_rows(paths, where)
        keywords = index.keywords if mode != "dense" else None
        tokens = question.tokens_in(keywords.language) if keywords is not None else None
        # the rows naming what the question names (an index without keywords fails here, as in memory)
        include = self.identifier_rows(question) if mode != "dense" else np.empty(0, dtype=np.int64)
        found = self.engine.candidates(query_vector, tokens, max(CANDIDATES, depth), allowed, include)
        if found.complete:
            keyword = keywords.token_scores(tokens) if keywords is not None and tokens is not None else None
            return QuestionScores(found.cosine, allowed, keyword)
        rankable = None if allowed is None else allowed[found.rows]
        page = self.engine_page_scores(question, query_vector, found, rankable) if fuses(mode) else None
        figures = {"median": found.median, "best": found.best, "keyword_best": found.keyword_best}
        return QuestionScores(found.cosine, rankable, found.keyword, page, found.rows, **figures)

    def engine_page_scores(
        self,
        question: ParsedQuestion,
        query_vector: np.ndarray,
        found: Candidates,
        rankable: np.ndarray | None,
    ) -> np.ndarray | None:
        """What each candidate (``found.rows``; those that may rank: ``rankable``) gains from its
        page's evidence (``retrieve.pages``), from the figures the engine gives of their pages;
        0 for those that may not rank."""
        pages, weights = self.index.pages, self.ranking.pages
        if pages is None or weights is None:
            return None
        gain = np.zeros(len(found.rows), dtype=np.float64)
        at = np.flatnonzero(rankable) if rankable is not None else np.arange(len(found.rows))
        if pages.linked <= 0 or not len(at):
            return gain
        of_row = pages.pages_of(found.rows[at])
        asked = np.unique(of_row)
        figures = self.engine.page_figures(query_vector, question.tokens_in(pages.keywords.language), asked)
        mean = rescale(figures.mean.astype(np.float64), figures.mean_median, figures.mean_best)
        two = rescale(figures.top_two.astype(np.float64), found.median, found.best)
        pair = np.where(np.isnan(two[:, 1]), two[:, 0], (two[:, 0] + two[:, 1]) / 2)
        score = page_score(
            pages.linked, figures.keyword, figures.keyword_best, mean, pair, pages.topics[asked], weights
        )
        gain[at] = score[np.searchsorted(asked, of_row)]
        return gain

    def ranked(self, *args: object, **kwargs: object) -> list[Ranked]:
        """``Searcher.ranked``, the chunks of the rows ranked then read in one request."""
        found = super().ranked(*args, **kwargs)  # type: ignore[arg-type]
        fetch = getattr(self.index.chunks, "fetch", None)
        if fetch is not None and found:
            fetch([r.row for r in found])
        return found
