"""Terminal output of an evaluation: its figures, per-kind table and misses (or --json)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semsearch.cli.render.info import gate_rule
from semsearch.cli.render.output import _line, _say, console, counted
from semsearch.ingest.chunking import PATH_SEPARATOR

if TYPE_CHECKING:
    from semsearch.evaluation.quality import EvalReport, QuestionResult


def _first_location(result: QuestionResult) -> str:
    chunk = result.first
    return "—" if chunk is None else PATH_SEPARATOR.join([chunk.source, *chunk.headings])


def eval_json(report: EvalReport, calibrated: bool = False) -> dict:
    return {
        **report.metrics,
        "mode": report.mode,
        "k": report.k,
        "gate": {
            "rule": gate_rule(report.legacy_gate),
            "value": round(report.margin, 6),
            "suggested": _round(report.suggested_margin),
        },
        "calibrated": calibrated,
        "by_kind": report.by_kind,
        "misses": [
            {
                "line": r.question.line,
                "question": r.question.question,
                "expected": r.question.expected(),
                "first": _first_location(r),
                "score": _round(r.first_score),
                "rank": r.rank,
                "answered": r.passes,
                "refused": r.refused,
                "threshold": _round(r.threshold),
            }
            for r in report.misses
        ],
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _pct(value: float | int | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def print_eval(report: EvalReport, calibrated: bool = False) -> None:
    from rich.table import Table

    m = report.metrics
    suggested = report.suggested_margin
    recall = m.get("recall") or {}
    shown_in_recall = str(report.k) in recall and set(recall) - {"1", "3"}
    topk = (
        f"   top-{report.k} {_pct(m[f'top{report.k}'])}"
        if report.k not in (1, 3) and not shown_in_recall
        else ""
    )
    _say(
        (counted(m["questions"], "question"), "bold"),
        f" ({m['answerable']:,} answerable, {m['unanswerable']:,} not), {report.mode} search",
    )
    _say(f"  top-1 {_pct(m['top1'])}   top-3 {_pct(m['top3'])}{topk}   MRR@10 {_number(m['mrr'])}")
    if set(recall) - {"1", "3"}:
        _say(
            "  recall@k (the right passage anywhere in the top k): "
            + "   ".join(f"@{n} {_pct(value)}" for n, value in recall.items())
        )
    _say(
        f"  {_cut_words(report)}: answered {_pct(m['answered'])} of answerable "
        f"({_pct(m['answered_correct'])} answered and right first), "
        f"rejected {_pct(m['rejected'])} of unanswerable"
    )
    _say(
        f"  cosine of the first result: lowest correct {_number(m['lowest_correct_first_score'])}, "
        f"highest unanswerable {_number(m['highest_unanswerable_score'])}; "
        f"suggested {_cut_words(report, suggested)}",
        (" (written to the index)", "green") if calibrated and suggested is not None else "",
    )
    if report.by_kind:
        kinds = Table(title="By kind", expand=False)
        for column in ("kind", "questions", "top-1", "top-3", "answered", "rejected"):
            kinds.add_column(column, justify="left" if column == "kind" else "right")
        for kind, km in report.by_kind.items():
            kinds.add_row(
                _line(kind),
                f"{km['questions']:,}",
                *(_pct(km[key]) for key in ("top1", "top3", "answered", "rejected")),
            )
        console().print(kinds)
    if not report.misses:
        return
    table = Table(title="Misses", expand=True)
    for column in ("question", "expected", "came first", "score"):
        table.add_column(column, overflow="fold")
    for r in report.misses:
        table.add_row(
            _line(r.question.question),
            _line(r.question.expected()),
            _line(_first_location(r), _outcome(r)),
            _miss_score(r),
        )
    console().print(table)


def _outcome(result: QuestionResult) -> tuple[str, str]:
    """After where a missed question's first result came from: whether the gate refused it (the
    other misses were answered, wrongly)."""
    return (" (refused by the no-answer gate)", "yellow") if result.refused else ("", "")


def _miss_score(result: QuestionResult) -> str:
    """The first result's cosine, its rank when not first, and for a question the gate refused
    the threshold it missed (how close it came)."""
    text = f"{result.first_score:.3f}"
    if result.refused:
        text += f" < threshold {result.threshold:.3f}"
    return text + (f" (#{result.rank})" if result.rank and result.rank > 1 else "")


def _cut_words(report: EvalReport, value: float | None = None) -> str:
    """The cut as ``info`` names it: a margin over each question's baseline (a cosine floor for
    an index built before the relevance rule)."""
    value = report.margin if value is None else value
    if value is None:
        return "margin —"
    if report.legacy_gate:
        return f"cosine floor {value:.3f}"
    return f"no-answer margin {value:+.3f}"
