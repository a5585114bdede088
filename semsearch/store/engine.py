"""What a store that searches inside its engine gives a question (``retrieve.engine`` ranks on
it): the scores of its best candidates and the figures over every row the ranking rescales by,
so that no client reads every vector. A store without these methods (the folder index) is
searched in memory by ``retrieve.searcher``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Candidates:
    """A question's candidates: each with its cosine (and BM25), and the figures over every row."""

    rows: np.ndarray
    """The rows scored, in order (int64); every row when ``complete``."""
    cosine: np.ndarray
    """Their cosine to the question (float32)."""
    keyword: np.ndarray | None
    """Their BM25 score (float32); None in dense mode, or when ``complete`` (the keyword index
    scores every row then)."""
    median: float
    """The median cosine over every row (exact, or estimated from a fixed sample of rows)."""
    best: float
    """The best cosine over every row."""
    keyword_best: float
    """The best BM25 score over every row (0 without keywords)."""
    complete: bool
    """Every row is scored: the ranking is the folder index's, exactly."""


@dataclass(frozen=True)
class PageFigures:
    """What page evidence reads of the pages of a question's candidates (``retrieve.pages``)."""

    pages: np.ndarray
    """The pages asked about (int64)."""
    mean: np.ndarray
    """Each one's mean cosine over its passages."""
    mean_median: float
    """The median of the pages' mean cosines over every page (or a fixed sample of pages)."""
    mean_best: float
    """The best mean cosine of a page (those asked about and the sample)."""
    top_two: np.ndarray
    """Each one's two best cosines (pages x 2; the second NaN for a page of one passage)."""
    keyword: np.ndarray
    """Each one's BM25 score as a whole page."""
    keyword_best: float
    """The best page BM25 score over every page."""


@runtime_checkable
class SearchEngine(Protocol):
    """A store that ranks inside its engine (see the module docstring)."""

    def candidates(
        self,
        vector: np.ndarray,
        tokens: Sequence[str] | None,
        depth: int,
        allowed: np.ndarray | None,
        include: np.ndarray,
    ) -> Candidates:
        """The best ``depth`` rows by cosine and by BM25 over ``tokens`` (None: dense only) among
        the rows ``allowed`` (a mask; None: every row), the rows of the best cosine and the best
        BM25 over every row, and the rows ``include``, each scored."""
        ...

    def page_figures(self, vector: np.ndarray, tokens: Sequence[str], pages: np.ndarray) -> PageFigures:
        """The figures of ``pages`` for a question (its vector, its page keyword ``tokens``)."""
        ...
