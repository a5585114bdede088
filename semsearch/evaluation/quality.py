"""Measuring search quality on a labelled question set (``semsearch eval``).

Questions are JSON Lines: ``question`` (required), ``answer`` (text the right chunk must contain,
compared case-insensitively with whitespace folded; or a list of acceptable texts), ``source``
(a path relative to the docs root, or a list of acceptable paths). A row with neither ``answer``
nor ``source`` is a question the folder cannot answer: the right outcome is no result above the
threshold.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path

import numpy as np

from semsearch.defaults import DEFAULT_MODE
from semsearch.encode.embedders import Embedder
from semsearch.errors import QuestionsError, QuestionsMissingError, path_problem
from semsearch.gate.decision import GATE_DEPTH, Verdict, decide
from semsearch.ingest.chunk import Chunk
from semsearch.ingest.sources import docs_relative
from semsearch.retrieve.index import Index
from semsearch.store.records import CalibratedRecord
from semsearch.util.jsonparse import parse_json

MRR_DEPTH = 10


@dataclass(frozen=True)
class Question:
    line: int
    question: str
    answers: tuple[str, ...] = ()
    """Texts of which the right chunk must contain one (none: any text)."""
    sources: tuple[str, ...] = ()
    kind: str | None = None
    """Optional label (e.g. "paraphrase", "offtopic") for a per-kind breakdown."""

    @property
    def answerable(self) -> bool:
        return bool(self.answers or self.sources)

    def expected(self) -> str:
        if not self.answerable:
            return "no answer"
        parts = [" | ".join(self.sources)] if self.sources else []
        if self.answers:
            parts.append(" | ".join(f"“{answer}”" for answer in self.answers))
        return " ".join(parts)


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


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def is_hit(question: Question, chunk: Chunk) -> bool:
    """Whether ``chunk`` meets every expectation the question gives."""
    if question.sources and chunk.source not in question.sources:
        return False
    return not question.answers or any(fold(answer) in fold(chunk.text) for answer in question.answers)


KNOWN_KEYS = ("question", "answer", "source", "kind", "lang", "id", "note", "also")
"""``lang``, ``id``, ``note`` and ``also`` (other files touching the topic) are for people: not scored."""


def load_questions(path: Path, warn: Callable[[str], None] | None = None) -> list[Question]:
    """Read a question file; ``warn`` hears of keys it does not know (a typo such as ``answr``
    would otherwise make an answerable question count as unanswerable)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise QuestionsMissingError(f"question file not found: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        too_long = path_problem(exc) if isinstance(exc, OSError) else None  # the path once, cut short
        raise QuestionsError(
            f"cannot read question file: {too_long}"
            if too_long
            else f"cannot read question file {path}: {exc}"
        ) from exc
    questions = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            row = parse_json(line)
        except json.JSONDecodeError as exc:
            raise QuestionsError(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise QuestionsError(f"{where}: expected a JSON object")
        unknown = sorted(set(row) - set(KNOWN_KEYS))
        if unknown and warn:
            names = ", ".join(map(repr, unknown))
            warn(f"{where}: unknown key {names} ignored (known: {', '.join(KNOWN_KEYS)})")
        text, answer, source, kind = (row.get(key) for key in ("question", "answer", "source", "kind"))
        if not isinstance(text, str) or not text.strip():
            raise QuestionsError(f"{where}: 'question' must be a non-empty string")
        if not any(character.isalnum() for character in text):  # as ``ask`` refuses it
            raise QuestionsError(f"{where}: the question {text.strip()!r} has no words to search for")
        if isinstance(answer, str):
            answer = [answer]
        if answer is not None and (
            not isinstance(answer, list)
            or not answer
            or not all(isinstance(a, str) and a.strip() for a in answer)
        ):
            raise QuestionsError(f"{where}: 'answer' must be a non-empty text or a list of them")
        if isinstance(source, str):
            source = [source]
        if source is not None and (
            not isinstance(source, list) or not source or not all(isinstance(s, str) and s for s in source)
        ):
            raise QuestionsError(f"{where}: 'source' must be a path or a list of paths")
        questions.append(
            Question(
                line=number,
                question=text.strip(),
                answers=tuple(answer or ()),
                sources=tuple(source or ()),
                kind=kind if isinstance(kind, str) else None,
            )
        )
    if not questions:
        raise QuestionsError(f"no questions in {path}")
    return questions


def suggest_margin(results: list[QuestionResult]) -> float | None:
    """The ``min_score`` that best separates answerable from unanswerable questions here.

    Maximizes balanced accuracy (the mean of ``answered`` and ``rejected``) of the calibrated
    decision; among equally good values it takes the median (with one kind of question only,
    the value closest to the other kind's side).
    """
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
    index: Index,
    embedder: Embedder,
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
    docs_root = index.meta.docs_root
    if docs_root:  # sources given as the shell completes them (docs/faq.md) or absolute
        questions = [
            replace(q, sources=tuple(docs_relative(source, Path(docs_root)) for source in q.sources))
            for q in questions
        ]
    indexed = set(index.meta.files)
    for question in questions:
        if warn and question.sources and not indexed.intersection(question.sources):
            warn(
                f"line {question.line}: source {', '.join(question.sources)} is no indexed file "
                "(paths are relative to the docs folder, or as the shell gives them); it can only miss"
            )
    vectors = embedder.embed_queries([q.question for q in questions])
    depth = max(k, 3, GATE_DEPTH, MRR_DEPTH, *ks)
    results = []
    for number, (question, vector) in enumerate(zip(questions, vectors, strict=True), 1):
        judged = index.judge(question.question, vector, depth, mode=mode)  # as ``ask`` decides
        ranking, read = judged.ranked, judged.read
        rank = next((n for n, r in enumerate(ranking, 1) if is_hit(question, index.chunks[r.row])), None)
        results.append(
            QuestionResult(
                question=question,
                first=index.chunks[ranking[0].row] if ranking else None,
                read_score=read.score if read else float("-inf"),
                read_exact=bool(read and read.exact),
                read_rank=ranking.index(read) + 1 if read else None,
                rank=rank if question.answerable else None,
                baseline=float(judged.baseline),
                margin=index.gate.margin,
                legacy=index.gate.legacy,
                unheld=judged.unheld,
            )
        )
        if progress:
            progress(number, len(questions))
    report = EvalReport(
        k=k,
        margin=index.gate.margin,
        results=results,
        suggested_margin=suggest_margin(results),
        mode=mode,
        legacy_gate=index.gate.legacy,
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
    }
    return metrics


def write_margin(index: Index, value: float, questions_file: Path, count: int) -> None:
    """Record a calibrated threshold in meta.json, beside the build-time one (which stays). A
    build keeps it while the passages stay mostly the same (see ``build``)."""
    calibrated = CalibratedRecord(
        value=round(value, 6),
        gate=index.meta.margin.gate,
        method=f"balanced accuracy on {count} labelled questions",
        questions_file=str(questions_file),
        questions=count,
    )
    index.update_meta(lambda meta: meta.with_calibration(calibrated))
