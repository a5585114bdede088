"""Terminal output of an evaluation: its figures, per-kind table and misses (or --json)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semsearch.cli.render.gate_picture import picture_json, print_picture
from semsearch.cli.render.info import gate_rule
from semsearch.cli.render.output import counted
from semsearch.cli.render.terminal import _line, _say, console
from semsearch.evaluation.picture import GatePicture, gate_picture
from semsearch.ingest.chunk import PATH_SEPARATOR

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

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
        "gate_picture": picture_json(_picture(report)),
        "by_kind": report.by_kind,
        "misses": [question_row(r) for r in report.misses],
        "results": question_rows(report),
    }


def _picture(report: EvalReport) -> GatePicture:
    return gate_picture(report.results, report.margin, report.suggested_margin)


def question_row(result: QuestionResult) -> dict:
    """One question's outcome for --json and --jsonl: the rank of its right passage, its first
    passage, the cosine of the passage the gate read and where that ranked, and the gate's
    decision at the question's threshold (``unheld``: the names that refused it whatever its
    cosine, as ``ask --json`` gives them)."""
    first = result.first
    return {
        "line": result.question.line,
        "question": result.question.question,
        "kind": result.question.kind,
        "answerable": result.question.answerable,
        "expected": result.question.expected(),
        "rank": result.rank,
        "first": _first_location(result),
        "first_file_line": None if first is None else f"{first.source}:{first.start_line}",
        "score": None if first is None else _round(result.read_score),
        "score_rank": result.read_rank,
        "threshold": _round(result.threshold),
        "answered": result.passes,
        "refused": result.refused,
        "unheld": list(result.unheld),
        "right": _right(result),
    }


def question_rows(report: EvalReport) -> list[dict]:
    return [question_row(r) for r in report.results]


def _right(result: QuestionResult) -> bool:
    """Whether the outcome is the one wanted: the right passage first and answered, or an
    unanswerable question refused (the opposite of a miss)."""
    if result.question.answerable:
        return result.rank == 1 and result.passes
    return not result.passes


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _pct(value: float | int | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def print_eval(report: EvalReport, calibrated: bool = False) -> None:
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
    _say(
        f"  passage-level: top-1 {_pct(m['top1'])}   top-3 {_pct(m['top3'])}{topk}   "
        f"MRR@10 {_number(m['mrr'])}{_sources_only(report)}"
    )
    if set(recall) - {"1", "3"}:
        _say(
            "  passage-level recall@k (the right passage anywhere in the top k): "
            + "   ".join(f"@{n} {_pct(value)}" for n, value in recall.items())
        )
    if (files := m.get("file")) and files["questions"]:
        _say(
            f"  right file (of {counted(files['questions'], 'question')} naming their source): "
            f"Hit@1 {_pct(files['hit1'])}   Hit@3 {_pct(files['hit3'])}   MRR@{files['depth']} "
            f"{_number(files['mrr'])}   nDCG@5 {_number(files['ndcg5'])}"
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
    print_picture(_picture(report), report.legacy_gate)
    if console().is_terminal:
        _print_tables(report)
    else:
        _print_plain(report)


def _sources_only(report: EvalReport) -> str:
    """What "the right passage" is for questions labelled with a file alone: any of its passages."""
    if any(r.question.sources and not r.question.answers for r in report.results):
        return " (a question with a source and no answer: any passage of that file is right)"
    return ""


def _print_tables(report: EvalReport) -> None:
    """On a terminal: the per-kind figures and the misses as tables, fitted to its width."""
    from rich.table import Table

    if report.by_kind:
        kinds = Table(title="By kind", expand=False)
        for column in ("kind", "questions", "passage top-1", "passage top-3", "answered", "rejected"):
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
    for column in ("question", "expected", "came first", "outcome"):
        table.add_column(column, overflow="fold")
    for r in report.misses:
        table.add_row(
            _line(r.question.question),
            _line(r.question.expected()),
            _line(_first_location(r), _outcome(r)),
            _miss_score(r, report.k),
        )
    console().print(table)


_KIND_FIGURES = (
    ("passage top-1", "top1"),
    ("passage top-3", "top3"),
    ("answered", "answered"),
    ("rejected", "rejected"),
)


def _print_plain(report: EvalReport) -> None:
    """Piped or in a log: one line per kind and per miss, each field labelled, never wrapped
    (``grep`` finds a question's whole row)."""
    if report.by_kind:
        _say("By kind:")
        for kind, km in report.by_kind.items():
            figures = ", ".join(f"{label} {_pct(km[key])}" for label, key in _KIND_FIGURES)
            _say("  ", kind, f": {counted(km['questions'], 'question')}, {figures}")
    if not report.misses:
        return
    _say(f"Misses ({len(report.misses):,}):")
    for r in report.misses:
        _say(
            f"  line {r.question.line}: ",
            _one_line(r.question.question),
            " | expected: ",
            _one_line(r.question.expected()),
            " | came first: ",
            _first_location(r),
            _outcome(r),
            f" | {_miss_score(r, report.k)}",
        )


def _one_line(text: str) -> str:
    """A question or an expected answer written over lines in its file, on one line."""
    return " ".join(text.split())


def _outcome(result: QuestionResult) -> tuple[str, str]:
    """After where a missed question's first result came from: whether the gate refused it (the
    other misses were answered, wrongly)."""
    return (" (refused by the no-answer gate)", "yellow") if result.refused else ("", "")


def _miss_score(result: QuestionResult, k: int) -> str:
    """The cosine the gate read, labelled (the first passage's, or the best of the first few
    with its rank), with where the right passage ranked when not first, and for a question the
    gate refused the threshold it missed (how close it came)."""
    if result.first is None:
        return "no passage ranked"
    if result.read_rank == 1:
        text = f"first score {result.read_score:.3f}"
    else:
        text = f"best score {result.read_score:.3f} (#{result.read_rank})"
    if result.refused and result.unheld:  # refused whatever its score
        text += f", refused: the documents never mention {', '.join(result.unheld)}"
    elif result.refused:
        text += f" < threshold {result.threshold:.3f}"
    if not result.question.answerable:  # answered: what it passed
        return text + f", passing its threshold {result.threshold:.3f}"
    if result.rank is None:
        return text + f", right passage not in the top {k}"
    return text + (f", right passage at #{result.rank}" if result.rank > 1 else "")


def _cut_words(report: EvalReport, value: float | None = None) -> str:
    """The cut as ``info`` names it: a margin over each question's baseline (a cosine floor for
    an index built before the relevance rule)."""
    value = report.margin if value is None else value
    if value is None:
        return "margin —"
    if report.legacy_gate:
        return f"cosine floor {value:.3f}"
    return f"no-answer margin {value:+.3f}"


def starter_written(path: Path, rows: Sequence[dict]) -> None:
    """After ``eval --init``: what the starter file holds, and what to do with it."""
    import shlex

    files = len({row["source"] for row in rows})
    drafts = (
        f"{counted(len(rows), 'draft question')} from the headings of {counted(files, 'file')}"
        if rows
        else "no draft (the indexed documents have no headings: write your own questions)"
    )
    run = "semsearch eval" + ("" if str(path) == "questions.jsonl" else f" {shlex.quote(str(path))}")
    _say(
        f"Wrote {path}: {drafts}, and one question the documents cannot answer. Reword each as a "
        f'reader would ask it, add an "answer" (text the passage that answers holds) where you can, '
        f"then run `{run}`."
    )
