"""Measuring search quality on a labelled question set (``semsearch eval``; the set's format:
``questions``): each question asked as ``ask`` asks it, its passage and file ranks, the gate's
decision, and the figures over the set."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path

import numpy as np

from semsearch.collection import Collection
from semsearch.defaults import DEFAULT_MODE
from semsearch.evaluation.files import FILE_DEPTH, NDCG_AT, first_relevant, ndcg, ranked_files
from semsearch.evaluation.questions import Question, is_hit
from semsearch.gate.decision import GATE_DEPTH, Verdict, decide
from semsearch.ingest.chunk import Chunk
from semsearch.ingest.sources import docs_relative

MRR_DEPTH = 10
FILE_RANKING_DEPTH = 50
"""Passages ranked per question so that the file-level figures see ``FILE_DEPTH`` files."""


@dataclass(frozen=True)
class QuestionResult:
    question: Question
    first: Chunk | None
    """The first-ranked passage (None: nothing ranked)."""
    read_score: float
    """The cosine of the passage the gate read (``gate.decision.read_passage``; -inf: none)."""
    rank: int | None
    """1-based rank of the first result that meets the expectations (None: not in the top 10)."""
    baseline: float
    """What the question's best cosine must exceed beyond the cut (see ``threshold``)."""
    margin: float
    """The index's margin in force (``Gate.margin``)."""

    read_exact: bool = False
    """The passage the gate read holds what the question names verbatim (an answer at any score)."""
    read_rank: int | None = None
    """Where the passage the gate read ranked (1-based; None: nothing ranked)."""
    legacy: bool = False
    """The index predates the relevance rule (see ``threshold.answer_threshold``)."""
    unheld: tuple[str, ...] = ()
    """The names the question asks about when the folder mentions none of them: refused for it
    (``names.all_unheld``, ``decide``)."""
    files: tuple[str, ...] = ()
    """The distinct files of its ranking, best first (``files.ranked_files``): the file-level figures'."""

    @property
    def file_rank(self) -> int | None:
        """1-based rank of the first right file (None: none in the first ``FILE_DEPTH`` files)."""
        return first_relevant(self.files, self.question.sources)

    @property
    def names_unheld(self) -> bool:
        return bool(self.unheld)

    def verdict_at(self, margin: float) -> Verdict:
        """The gate's decision on the passage it read with the margin ``margin``: ``ask``'s own
        (``gate.decision.decide``)."""
        read_score = self.read_score if self.first is not None else None
        return decide(read_score, self.read_exact, self.baseline, margin, self.legacy, self.names_unheld)

    def threshold_at(self, margin: float) -> float:
        """The cosine the passage the gate read had to reach with the margin ``margin``."""
        return self.verdict_at(margin).threshold

    def passes_at(self, margin: float) -> bool:
        """Whether the passage the gate read counts as an answer with the margin ``margin``."""
        return self.verdict_at(margin).answered

    @property
    def relevance(self) -> float:
        """The read passage's cosine on the scale of the cut (see ``passes_at``)."""
        return self.read_score if self.legacy else self.read_score - self.baseline

    @property
    def passes(self) -> bool:
        return self.passes_at(self.margin)

    @property
    def threshold(self) -> float:
        """The question's own threshold: the cosine its first result had to reach."""
        return self.threshold_at(self.margin)

    @property
    def refused(self) -> bool:
        """An answerable question the no-answer gate answered with nothing."""
        return self.question.answerable and not self.passes


@dataclass
class EvalReport:
    k: int
    margin: float
    results: list[QuestionResult]
    suggested_margin: float | None
    mode: str = DEFAULT_MODE
    legacy_gate: bool = False
    """``margin`` is the cosine floor of an index built before the relevance rule, not a margin."""
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    by_kind: dict[str, dict[str, float | int | None]] = field(default_factory=dict)

    @property
    def misses(self) -> list[QuestionResult]:
        """Answerable questions not answered first or refused by the no-answer gate (``refused``),
        and unanswerable ones answered anyway."""
        return [
            r
            for r in self.results
            if (r.question.answerable and (r.rank != 1 or r.refused))
            or (not r.question.answerable and r.passes)
        ]


def suggest_margin(results: list[QuestionResult]) -> float | None:
    """The ``min_score`` that best separates answerable from unanswerable questions here.

    Maximizes balanced accuracy (the mean of ``answered`` and ``rejected``) of the calibrated
    decision; among equally good values it takes the median (with one kind of question only,
    the value closest to the other kind's side). Rounded to six places, as ``--calibrate``
    records it: what is suggested is what would be in force, to the digit (scores a server adds
    up in another order differ in the seventh place and no more).
    """
    value = _best_margin(results)
    return None if value is None else round(value, 6)


def _best_margin(results: list[QuestionResult]) -> float | None:
    scores = sorted({r.relevance for r in results if r.first is not None})
    if not scores:
        return None
    candidates = [scores[0] - 1e-4] + [(a + b) / 2 for a, b in pairwise(scores)] + [scores[-1] + 1e-4]
    groups = [
        [r for r in results if r.question.answerable],
        [r for r in results if not r.question.answerable],
    ]

    def balanced_accuracy(t: float) -> float:
        answered = [np.mean([r.passes_at(t) for r in groups[0]])] if groups[0] else []
        rejected = [np.mean([not r.passes_at(t) for r in groups[1]])] if groups[1] else []
        return float(np.mean(answered + rejected))

    values = [balanced_accuracy(t) for t in candidates]
    best = [t for t, v in zip(candidates, values, strict=True) if v == max(values)]
    if not groups[1]:  # only answerable questions: the highest value that still answers them
        return float(max(best))
    if not groups[0]:  # only unanswerable ones: the lowest value that still rejects them
        return float(min(best))
    return float(np.median(best))


def evaluate(
    collection: Collection,
    questions: list[Question],
    k: int = 3,
    progress: Callable[[int, int], None] | None = None,
    mode: str = DEFAULT_MODE,
    ks: Sequence[int] = (),
    warn: Callable[[str], None] | None = None,
) -> EvalReport:
    """Ask every question as ``semsearch ask --mode MODE`` would and score the answers;
    ``ks``: also report recall@k (the right passage anywhere in the top k) for these k;
    ``warn`` hears of questions whose ``source`` names no indexed file (a certain miss)."""
    docs_root = collection.docs_root
    if docs_root:  # sources given as the shell completes them (docs/faq.md) or absolute
        questions = [
            replace(
                q,
                sources=tuple(docs_relative(source, Path(docs_root)) for source in q.sources),
                partial=tuple(docs_relative(source, Path(docs_root)) for source in q.partial),
            )
            for q in questions
        ]
    indexed = set(collection.files)
    for question in questions:
        if warn and question.sources and not indexed.intersection(question.sources):
            warn(
                f"line {question.line}: source {', '.join(question.sources)} is no indexed file "
                "(paths are relative to the docs folder, or as the shell gives them); it can only miss"
            )
    depth = max(k, 3, GATE_DEPTH, MRR_DEPTH, *ks)
    texts = [q.question for q in questions]
    every = collection.judge_many(texts, max(depth, FILE_RANKING_DEPTH), mode, progress)
    results = []
    gate = collection.gate
    for question, judged in zip(questions, every, strict=True):
        ranking, read = judged.ranked, judged.read  # as ``ask`` decides
        passages = [collection.passage(r.row) for r in ranking]
        rank = next((n for n, chunk in enumerate(passages[:depth], 1) if is_hit(question, chunk)), None)
        results.append(
            QuestionResult(
                question=question,
                first=passages[0] if passages else None,
                read_score=read.score if read else float("-inf"),
                read_exact=bool(read and read.exact),
                read_rank=ranking.index(read) + 1 if read else None,
                rank=rank if question.answerable else None,
                baseline=float(judged.baseline),
                margin=gate.margin,
                legacy=gate.legacy,
                unheld=judged.unheld,
                files=ranked_files(chunk.source for chunk in passages),
            )
        )
    report = EvalReport(
        k=k,
        margin=gate.margin,
        results=results,
        suggested_margin=suggest_margin(results),
        mode=mode,
        legacy_gate=gate.legacy,
    )
    report.metrics = _metrics(results, k, ks)
    kinds = sorted({r.question.kind for r in results if r.question.kind})
    report.by_kind = {
        kind: _metrics([r for r in results if r.question.kind == kind], k, ks) for kind in kinds
    }
    return report


def _metrics(results: list[QuestionResult], k: int, ks: Sequence[int] = ()) -> dict:
    answerable = [r for r in results if r.question.answerable]
    unanswerable = [r for r in results if not r.question.answerable]

    def share(items: list[QuestionResult], test: Callable[[QuestionResult], bool]) -> float | None:
        return round(sum(map(test, items)) / len(items), 4) if items else None

    correct_first = [r.read_score for r in answerable if r.rank == 1]
    metrics: dict[str, float | int | None] = {
        "questions": len(results),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "top1": share(answerable, lambda r: r.rank == 1),
        "top3": share(answerable, lambda r: r.rank is not None and r.rank <= 3),
        f"top{k}": share(answerable, lambda r: r.rank is not None and r.rank <= k),
        "recall": {
            str(n): share(answerable, lambda r, n=n: r.rank is not None and r.rank <= n)
            for n in sorted({1, 3, *ks})
        },
        "mrr": round(sum(1 / r.rank for r in answerable if r.rank) / len(answerable), 4)
        if answerable
        else None,
        "answered": share(answerable, lambda r: r.passes),
        "answered_correct": share(answerable, lambda r: r.passes and r.rank == 1),
        "rejected": share(unanswerable, lambda r: not r.passes),
        "lowest_correct_first_score": round(min(correct_first), 4) if correct_first else None,
        "highest_unanswerable_score": round(max(r.read_score for r in unanswerable), 4)
        if unanswerable
        else None,
        "file": _file_metrics(results),
    }
    return metrics


def _file_metrics(results: list[QuestionResult]) -> dict[str, float | int | None]:
    """The file-level figures (see ``files``) over the questions naming their ``source``."""
    sourced = [r for r in results if r.question.sources]

    def mean(values: list[float]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    ranks = [r.file_rank for r in sourced]
    return {
        "questions": len(sourced),
        "hit1": mean([float(rank == 1) for rank in ranks]),
        "hit3": mean([float(rank is not None and rank <= 3) for rank in ranks]),
        "mrr": mean([1 / rank if rank else 0.0 for rank in ranks]),
        f"ndcg{NDCG_AT}": mean([ndcg(r.files, r.question.sources, r.question.partial) for r in sourced]),
        "depth": FILE_DEPTH,
    }
