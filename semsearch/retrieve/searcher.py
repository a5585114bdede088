"""Searching an index: a question parsed once, its passages ranked, the gate's decision and the
answer (``ask``, ``eval`` and MCP all decide through ``Searcher.judge``; the index itself:
``index``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from semsearch.defaults import DEFAULT_MODE, MODES
from semsearch.errors import UsageError
from semsearch.gate.decision import GATE_DEPTH, Verdict, read_passage
from semsearch.gate.threshold import is_answer
from semsearch.retrieve.answer import Answer, Judged, Ranked
from semsearch.retrieve.exact import exact_scores, exact_scores_of
from semsearch.retrieve.filters import Condition
from semsearch.retrieve.index import Index, files_among
from semsearch.retrieve.named import missing_outside, named_rows, names_unmentioned
from semsearch.retrieve.names import all_unheld
from semsearch.retrieve.pages import PageWeights, page_evidence
from semsearch.retrieve.question import ParsedQuestion
from semsearch.retrieve.search import KEYWORD_WEIGHT, PLAIN_KEYWORD_WEIGHT, Hit, fuse, rank, rescale
from semsearch.store.reader import check_unit_rows
from semsearch.util.sorted_lookup import find_sorted


@dataclass(frozen=True)
class Ranking:
    """What the hybrid ranking weighs, as constants of the code (the bench measures others)."""

    exact_keywords: float = KEYWORD_WEIGHT
    """BM25's weight for a question naming something exact (``search.KEYWORD_WEIGHT``)."""
    plain_keywords: float = PLAIN_KEYWORD_WEIGHT
    """BM25's weight for a question in plain words (``search.PLAIN_KEYWORD_WEIGHT``)."""
    pages: PageWeights | None = PageWeights()
    """Each passage raised by its page's evidence (``retrieve.pages``; None: not)."""
    subject_names_first: bool = False
    """A name as code writes it that half the files mention puts its heading's rows first all
    the same (the rule before ``Searcher.specific``)."""


DEFAULT_RANKING = Ranking()


@dataclass(frozen=True)
class QuestionScores:
    """A question's scores over the rows scored (``rows``: every row of the index, or an
    engine's candidates), as ``ranked`` and the gate read them (``Searcher.scores``; an index
    searched inside its engine: ``retrieve.engine``)."""

    cosine: np.ndarray
    """Each row's cosine to the question."""
    allowed: np.ndarray | None
    """The rows that may rank (a mask; None: every row scored): the filter's."""
    keyword: np.ndarray | None = None
    """Each row's BM25 score (None in dense mode)."""
    page: np.ndarray | None = None
    """What each row gains from its page's evidence, when given (else ``page_scores``)."""
    rows: np.ndarray | None = None
    """The rows these arrays describe, ascending (None: every row of the index, in order)."""
    median: float = float("nan")
    """With ``rows``: the median cosine over every row of the index (the fusion's 0)."""
    best: float = float("nan")
    """With ``rows``: the best cosine over every row (the fusion's 1)."""
    keyword_best: float = 0.0
    """With ``rows``: the best BM25 score over every row."""

    def fused(self, keyword_weight: float) -> np.ndarray:
        """``fuse`` of the cosines and BM25 scores, rescaled by the figures over every row."""
        if self.rows is None or self.keyword is None:
            return fuse(self.cosine, self.keyword, keyword_weight)  # type: ignore[arg-type]
        top = self.keyword_best
        scaled = rescale(self.cosine, self.median, self.best)
        return scaled + (keyword_weight * self.keyword / top if top > 0 else 0.0)

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """Where ``rows`` (ascending) are in these arrays; those not scored left out."""
        if self.rows is None or not len(self.rows):
            return rows if self.rows is None else np.empty(0, dtype=np.int64)
        at, found = find_sorted(self.rows, rows)
        return at[found]

    def row_of(self, positions: np.ndarray) -> np.ndarray:
        """The index's rows at ``positions`` of these arrays."""
        return positions if self.rows is None else self.rows[positions]


class Searcher:
    """Searches one ``Index``: parses a question, ranks its passages, judges them (see ``judge``)."""

    def __init__(self, index: Index, ranking: Ranking = DEFAULT_RANKING):
        self.index = index
        self.ranking = ranking

    def parse(self, question: str) -> ParsedQuestion:
        """``question`` parsed once for every step of its search (see ``question``)."""
        keywords = self.index.keywords
        return ParsedQuestion.parse(question, keywords.language if keywords else None)

    def identifier_rows(self, question: ParsedQuestion) -> np.ndarray:
        """Rows whose chunk contains a code the question names verbatim (see ``identifiers``),
        case-insensitively, or every part of a reference it names (see ``references``:
        ``art. 6 ust. 1 lit. a`` is in the chunk that cites it, not in those citing lit. b), or
        that lie under a heading consisting of a name as code writes it that the question names
        (see ``code_names``: "What does events.once() return?" and the section
        "events.once(emitter, name[, options])", not every chunk mentioning it) and that fewer
        than half of the files mention (see ``specific``)."""
        if not question.names_anything:
            return np.empty(0, dtype=np.int64)
        keywords = self.index.keyword_index()
        found = [keywords.rows_with(code) for code in question.identifiers]
        found += [keywords.rows_with_all(parts) for parts in question.references]
        found += [keywords.rows_named(name) for name in self.specific(question.code_names)]
        return np.unique(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)

    def specific(self, names: Sequence[str]) -> list[str]:
        """Those of ``names`` (names as code writes them) that one file mentions, or fewer than
        half of the folder's files. A name most files mention is the folder's subject
        (``OpenTelemetry`` in its own docs, in 87 files of 109): a section titled by it, a
        glossary's entry, is not where a question naming it is answered. Half, because a word in
        more than half of the documents tells them apart no more (its Robertson-Spärck Jones
        weight is negative); one file (an API reference written as one page) tells nothing."""
        if self.ranking.subject_names_first:
            return list(names)
        keywords, starts = self.index.keyword_index(), self.index.file_starts()
        return [
            name for name in names if _specific(files_among(keywords.rows_with(name), starts), len(starts))
        ]

    def page_scores(self, question: ParsedQuestion, cosine: np.ndarray) -> np.ndarray | None:
        """What each row gains from its page's evidence (``retrieve.pages``); None for an index
        without a page side."""
        pages, page_of_row = self.index.pages, self.index.page_of_row()
        weights = self.ranking.pages
        if pages is None or page_of_row is None or weights is None:
            return None
        page_keywords = pages.keywords.token_scores(question.tokens_in(pages.keywords.language))
        return page_evidence(pages, page_of_row, cosine, page_keywords, weights)[page_of_row]

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
        """Every row's cosine (``cosine`` when given) and, outside dense mode, BM25 score, and
        the rows the filter allows (``depth``: how many will be ranked; every row is scored here)."""
        index = self.index
        keyword = None
        if mode != "dense":
            keywords = index.keyword_index()
            keyword = keywords.token_scores(question.tokens_in(keywords.language))
        cosine = index.cosines(query_vector) if cosine is None else cosine
        return QuestionScores(cosine, index.allowed_rows(paths, where), keyword)

    def ranked(
        self,
        question: ParsedQuestion,
        query_vector: np.ndarray,
        k: int,
        mode: str = DEFAULT_MODE,
        paths: Sequence[str] = (),
        where: Sequence[str | Condition] = (),
        cosine: np.ndarray | None = None,
        scores: QuestionScores | None = None,
    ) -> list[Ranked]:
        """The best ``k`` rows for ``question`` under ``mode``, only from files matching ``paths``
        and ``where`` (see ``filters``).

        - ``dense``: cosine similarity alone.
        - ``keyword``: BM25 alone (rows sharing no token with the question are not results).
        - ``hybrid``: cosine similarity fused with BM25 (see ``fuse``), BM25 weighed more when
          the question names something exact (a number, a code, a quoted phrase: embeddings
          blur exact strings) than when it is in plain words (see ``Ranking``),
          each passage raised by its page's evidence (``page_scores``).

        Outside dense mode, chunks containing a code or reference the question names verbatim
        come first (see ``identifier_rows``); in hybrid mode the rest of the question orders
        them (see ``exact``: the name they all hold tells them apart no more). ``scores``: the
        question's (``scores``), when its caller has them.
        """
        if mode not in MODES:
            raise UsageError(f"unknown search mode {mode!r} (one of {', '.join(MODES)})")
        index = self.index
        if scores is None:
            scores = self.scores(question, query_vector, mode, paths, where, k, cosine)
        cosine, allowed, keyword = scores.cosine, scores.allowed, scores.keyword
        exact = np.empty(0, dtype=np.int64)  # positions in the arrays of ``scores``, as below
        ranking = cosine
        if mode != "dense":
            exact = scores.positions(self.identifier_rows(question))
            if mode == "keyword":
                ranking = keyword
                matched = keyword > 0
                allowed = matched if allowed is None else allowed & matched
            elif fuses(mode):
                weight = self.ranking.exact_keywords if question.names_exact else self.ranking.plain_keywords
                ranking = scores.fused(weight)
                page = scores.page if scores.page is not None else self.page_scores(question, cosine)
                ranking = ranking if page is None else ranking + page
        if mode == "hybrid" and len(exact) > 1:  # they come first, ordered by the rest of the question
            ranking = np.array(ranking, dtype=np.float64)
            ranking[exact] = self.exact_order(question, scores, exact)
        exact_at = set(exact.tolist())
        found = rank(ranking, k, first=exact, allowed=allowed)
        rows = scores.row_of(found)
        check_unit_rows(index.vectors, rows, index.path)
        return [
            Ranked(
                row=int(row),
                score=float(cosine[i]),
                exact=int(i) in exact_at,
                keyword_score=None if keyword is None else float(keyword[i]),
                order=float(ranking[i]),
            )
            for i, row in zip(found.tolist(), rows.tolist(), strict=True)
        ]

    def exact_order(self, question: ParsedQuestion, scores: QuestionScores, exact: np.ndarray) -> np.ndarray:
        """The scores ordering the rows at ``exact`` (positions in ``scores``), which hold what
        ``question`` names, among themselves (see ``exact``)."""
        keywords = self.index.keyword_index()
        if scores.rows is None:
            return exact_scores(keywords, question, scores.cosine)[exact]
        rows = scores.rows[exact]
        return exact_scores_of(keywords, question, scores.cosine[exact], rows, scores.median, scores.best)

    def hit(self, rank: int, ranked: Ranked) -> Hit:
        """The passage ``ranked`` as a result (``rank``: its place, 1-based)."""
        index = self.index
        chunk = index.chunks[ranked.row]
        return Hit(
            rank=rank,
            score=ranked.score,
            chunk=chunk,
            keyword_score=ranked.keyword_score,
            path=os.path.join(index.meta.docs_root, *chunk.source.split("/")),
            row=ranked.row,
            keywords=index.keywords,
            exact=ranked.exact,
            ranking_score=ranked.order,
        )

    def search(
        self,
        question: str,
        query_vector: np.ndarray,
        k: int,
        min_score: float | None = None,
        mode: str = DEFAULT_MODE,
        paths: Sequence[str] = (),
        where: Sequence[str | Condition] = (),
    ) -> Answer:
        """Top ``k`` chunks that pass the threshold, in any mode.

        The decision reads cosine similarity whatever ranked the rows (fused or BM25 scores
        have no threshold of their own): without ``min_score`` a passage must reach the index's
        cut plus the question's baseline (see ``threshold``). An explicit ``min_score`` is a
        plain cosine threshold instead. A passage containing a code or reference the question
        names verbatim is an answer whatever its score (not in dense mode).

        The gate reads one of the first ``GATE_DEPTH`` ranked passages (``read_passage``: the
        first holding what the question names verbatim, else the best cosine), as in ``eval``:
        so ``k`` changes how many passages are shown, never whether there is an answer. Shown
        are the first ``k`` of those ranked passages that pass. ``question`` is parsed once
        (``judge``), for every step.
        """
        judged = self.judge(question, query_vector, max(k, GATE_DEPTH), min_score, mode, paths, where)
        read = judged.read
        hits = [self.hit(n, r) for n, r in enumerate(judged.passing[:k], 1)]
        missing = missing_outside(self.index.chunks, judged.named, judged.allowed)
        missing.update((name, []) for name in judged.unmentioned if name not in missing)
        return Answer(
            question,
            hits,
            float(judged.verdict.threshold),
            judged.baseline,
            mode,
            fused=fuses(mode),
            missing=tuple(missing),
            missing_elsewhere={name: files for name, files in missing.items() if files},
            best_score=read.score if read else None,
            unheld=judged.unheld,
            unmentioned=judged.unmentioned,
            closest=self.hit(1, read) if read and not hits else None,
            parsed=judged.parsed,
        )

    def judge(
        self,
        question: str,
        query_vector: np.ndarray,
        depth: int,
        min_score: float | None = None,
        mode: str = DEFAULT_MODE,
        paths: Sequence[str] = (),
        where: Sequence[str | Condition] = (),
    ) -> Judged:
        """``question`` ranked ``depth`` deep and judged: the one decision ``ask`` (``search``),
        ``eval`` and MCP make (see ``search``)."""
        index = self.index
        parsed = self.parse(question)
        scores = self.scores(parsed, query_vector, mode, paths, where, depth)
        allowed = index.allowed_rows(paths, where)
        ranked = self.ranked(parsed, query_vector, depth, mode, paths, where, scores=scores)
        read = read_passage(ranked)
        read_score, read_exact = (read.score, read.exact) if read else (None, False)
        named = named_rows(index.keywords, parsed)
        unmentioned = names_unmentioned(index, parsed, query_vector, ranked)
        if min_score is not None:  # the user's own cosine cutoff: the names rule is the gate's
            answered = read_score is not None and is_answer(read_score, read_exact, min_score)
            verdict = Verdict(min_score, answered)
            return Judged(parsed, ranked, read, None, verdict, (), named, allowed, unmentioned)
        unheld = all_unheld(named)
        tokens = parsed.tokens_in(index.keywords.language) if index.keywords else None
        own_baseline = index.gate.baseline(
            question, query_vector, scores.cosine, scores.allowed, tokens, rows=scores.rows
        )
        verdict = index.gate.decide(read_score, read_exact, own_baseline, bool(unheld))
        return Judged(parsed, ranked, read, own_baseline, verdict, unheld, named, allowed, unmentioned)


def _specific(files_mentioning: int, files: int) -> bool:
    """Whether a name ``files_mentioning`` of the folder's ``files`` mention tells them apart."""
    return files_mentioning <= 1 or 2 * files_mentioning < files


def fuses(mode: str) -> bool:
    """Whether ``mode`` ranks a question by cosine fused with BM25 (see ``Searcher.ranked``): in
    hybrid mode, every question (its weights: ``Ranking``)."""
    return mode == "hybrid"
