"""Exact top-k search over normalized vectors: one matrix product, one partial selection."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from semsearch.ingest.chunk import Chunk
from semsearch.retrieve.question import ParsedQuestion

if TYPE_CHECKING:
    from semsearch.encode.keywords import KeywordIndex
    from semsearch.retrieve.snippets import Snippet


@dataclass(frozen=True)
class Hit:
    """One passage found: its rank, its scores, its chunk and where it is."""

    rank: int
    score: float
    """Cosine similarity to the question."""
    chunk: Chunk
    keyword_score: float | None = None
    """BM25 score (None in dense mode)."""
    path: str | None = None
    """The file's absolute path (the docs folder the index records, and ``source``)."""
    row: int | None = None
    """The chunk's row in the index (None for a hit made outside an index)."""
    keywords: KeywordIndex | None = field(default=None, repr=False, compare=False)
    """The index's keyword side: its stemmer and word rarities choose the snippet."""
    exact: bool = False
    """The passage holds a code, reference or heading name the question writes verbatim: such
    passages are listed first, and answer whatever their cosine (not in dense mode)."""
    ranking_score: float | None = None
    """The score the list is ordered by: the cosine in dense mode, BM25 in keyword mode, the
    cosine fused with BM25 in hybrid mode (see ``fuse``), after the ``exact`` passages, which
    come first whatever it is (among themselves by the rest of the question: ``exact``). None
    for a hit made outside an index's ranking."""

    def snippet(
        self, question: str | ParsedQuestion, chars: int | None = None, lines: int | None = None
    ) -> Snippet:
        """The lines of the passage that answer ``question`` (its text, or the question as its
        search parsed it: ``Answer.parsed``; see ``snippets``): at most ``chars`` characters and
        ``lines`` lines, by default twice the room for the first result."""
        from semsearch.errors import UsageError
        from semsearch.retrieve import snippets

        if not isinstance(question, str | ParsedQuestion):
            raise UsageError(f"a question is text, not {type(question).__name__}")
        keywords = self.keywords
        language = keywords.language if keywords else None
        asked = question if isinstance(question, str) else question.tokens_in(language)
        terms = snippets.question_terms(asked, language, keywords.idf if keywords else None)
        chunk = self.chunk
        first = self.rank == 1
        return snippets.best_snippet(
            chunk.shown,
            chunk.start_line,
            terms.without(chunk.headings[-1]) if chunk.headings else terms,
            end_line=chunk.end_line,
            chars=chars or (snippets.FIRST_CHARS if first else snippets.SNIPPET_CHARS),
            max_lines=lines or (snippets.FIRST_LINES if first else snippets.SNIPPET_LINES),
        )

    @property
    def source(self) -> str:
        """The file, relative to the docs folder."""
        return self.chunk.source

    @property
    def section(self) -> str:
        return self.chunk.section

    @property
    def location(self) -> str:
        """``file › heading path (lines a–b)``."""
        return self.chunk.location

    @property
    def text(self) -> str:
        return self.chunk.text

    @property
    def lines(self) -> tuple[int, int]:
        """First and last line of the passage in its file (1-based, inclusive)."""
        return (self.chunk.start_line, self.chunk.end_line)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first; ties go to the lower index.

    Equals ``np.argsort(-scores, kind="stable")[:k]`` but costs O(n + k log k): ``argpartition``
    finds the k-th best score, then only the candidates at or above it are sorted.
    """
    n = scores.shape[0]
    k = max(0, min(k, n))
    if k == 0:
        return np.empty(0, dtype=np.int64)
    if k < n:
        kth_best = scores[np.argpartition(scores, n - k)[n - k]]
        above = np.flatnonzero(scores > kth_best)
        tied = np.flatnonzero(scores == kth_best)[: k - above.size]
        candidates = np.concatenate([above, tied])
    else:
        candidates = np.arange(n)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order]


KEYWORD_WEIGHT = 0.5
"""BM25's weight against the cosine where hybrid mode fuses them for a question naming something
exact (``searcher.Ranking``). Equal weights put the default below plain cosine on PoQuAD (quoted
names and numbers in plain questions: "Jaka wytwórnia wydała 11 album RHCP?"); half weight
is the only setting measured where no set falls below plain cosine or below equal weights
(0.4 loses a `docs/` chunk, 0.6 a PoQuAD doc@3: bench/bench_ranking.py, bench/RESULTS.md)."""

PLAIN_KEYWORD_WEIGHT = 0.4
"""BM25's weight where hybrid mode fuses it into a question in plain words (naming nothing exact;
``KEYWORD_WEIGHT`` is the other questions'). Chosen on the tuned-on sets alone: against fusing
only exact questions, 0.4 wins doc@1 on `docs/` 3 questions for 1, the English guide 2 for 1 and
PoQuAD 9 for 1 (chunk@1 +0, +3, +11), cooking and API unchanged; against 0.4, 0.35 and 0.45
each lose a `docs/` and a PoQuAD question, 0.3 and 0.2 more, 0.5 a PoQuAD doc@1 and an English
chunk@1, 0.6 more (bench/bench_ranking.py, bench/RESULTS.md)."""


def fuse(cosine: np.ndarray, keyword: np.ndarray, keyword_weight: float = 1.0) -> np.ndarray:
    """Dense and BM25 scores on one scale, BM25 weighted by ``keyword_weight``.

    Neither scale means anything across models or corpora, so each is rescaled within the
    question: cosines so that the median chunk is 0 and the best 1, BM25 by its best score.
    """
    top = float(keyword.max()) if len(keyword) else 0.0
    return rescaled(cosine) + (keyword_weight * keyword / top if top > 0 else 0.0)


def rescaled(values: np.ndarray) -> np.ndarray:
    """``values`` with their median at 0 and their best at 1 (all 0 when they are equal)."""
    return rescale(values, median(values), float(values.max()))


def rescale(values: np.ndarray, reference: float, best: float) -> np.ndarray:
    """``values`` with ``reference`` at 0 and ``best`` at 1 (all 0 when ``best`` is no higher):
    ``rescaled`` with figures taken over rows the caller does not hold (an engine's candidates)."""
    return (values - reference) / (best - reference) if best > reference else np.zeros_like(values)


def median(values: np.ndarray) -> float:
    """``np.median`` of a non-empty 1-D array, computed as it computes it (the middle value, or
    the mean of the two middle ones; NaN if any is), without the ``numpy.ma`` its NaN check
    imports: some 10 ms of a cold ``ask``'s CPU (``bench/bench_cold.py``)."""
    half, odd = divmod(len(values), 2)
    middle = [half] if odd else [half - 1, half]
    part = np.partition(values, [*middle, -1])  # the largest last: NaNs sort there
    if np.isnan(part[-1]):
        return float("nan")
    return float(np.mean(part[middle[0] : half + 1]))


def rank(
    scores: np.ndarray,
    k: int,
    first: np.ndarray | None = None,
    allowed: np.ndarray | None = None,
) -> np.ndarray:
    """Rows of the best ``k`` ``scores``, best first.

    Rows listed in ``first`` rank above all others (by their own scores among themselves); with
    ``allowed`` (a boolean mask) only those rows rank at all: a filter applied before the top k,
    so it never empties a result that exists.
    """
    if (first is None or not len(first)) and allowed is None:
        return top_k(scores, k)
    ranking = np.array(scores, dtype=np.float64)
    if first is not None and len(first):
        ranking[first] += float(ranking.max() - ranking.min()) + 1.0
    if allowed is None:
        return top_k(ranking, k)
    rows = np.flatnonzero(allowed)  # in order: ties still go to the lower row
    return rows[top_k(ranking[rows], k)]


def search_vectors(
    vectors: np.ndarray, query: np.ndarray, k: int, min_score: float | None = None
) -> list[tuple[int, float]]:
    """Best ``k`` rows of ``vectors`` by dot product with ``query``, dropping those under ``min_score``."""
    scores = vectors @ np.asarray(query, dtype=vectors.dtype).reshape(-1)
    found = [(int(i), float(scores[i])) for i in top_k(scores, k)]
    if min_score is not None:
        found = [(i, s) for i, s in found if s >= min_score]
    return found
