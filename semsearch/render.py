"""All terminal output: Rich for people (results on stdout, problems on stderr) and --json."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

from .chunking import PATH_SEPARATOR
from .sources import readable

if TYPE_CHECKING:
    from rich.console import Console

    from .context import Prompt
    from .evaluation import EvalReport, QuestionResult
    from .index import BuildReport, Index, SearchResult
    from .search import Hit

SNIPPET_CHARS = 320


@cache
def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def error(message: str) -> None:
    console(stderr=True).print(f"[bold red]error:[/] {message}", markup=True, highlight=False)


def warning(message: str) -> None:
    console(stderr=True).print(f"[yellow]warning:[/] {_escape(message)}")


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(_readable_data(data), ensure_ascii=False, indent=2) + "\n")


def _readable_data(data: Any) -> Any:
    """``data`` with every string readable (a path given in bytes that are not UTF-8, say)."""
    if isinstance(data, str):
        return readable(data)
    if isinstance(data, dict):
        return {_readable_data(key): _readable_data(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_readable_data(item) for item in data]
    return data


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """Whitespace-folded text, cut at a word boundary."""
    folded = " ".join(text.split())
    if len(folded) <= limit:
        return folded
    cut = folded.rfind(" ", 0, limit)
    return folded[: cut if cut > limit // 2 else limit].rstrip(" ,;:") + " …"


def hit_dict(hit: Hit) -> dict:
    chunk = hit.chunk
    return {
        "rank": hit.rank,
        "score": round(hit.score, 6),
        "source": chunk.source,
        "section": chunk.section,
        "headings": list(chunk.headings),
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "text": chunk.text,
        **({} if hit.keyword_score is None else {"keyword_score": round(hit.keyword_score, 6)}),
    }


def ask_json(question: str, result: SearchResult) -> dict:
    return {
        "question": question,
        "mode": result.mode,
        "min_score": round(result.min_score, 6),
        "results": [hit_dict(hit) for hit in result.hits],
    }


def prompt_json(question: str, prompt: Prompt) -> dict:
    return {
        "question": question,
        "prompt": prompt.text,
        "tokens": prompt.tokens,
        "sources": [{"number": n, **hit_dict(hit)} for n, hit in enumerate(prompt.sources, 1)],
        "left_out": prompt.left_out,
    }


def print_prompt(prompt: Prompt) -> None:
    """The prompt alone on stdout (ready to pipe or paste); a note on stderr when sources were cut."""
    sys.stdout.write(prompt.text)
    if prompt.left_out:
        warning(
            f"{prompt.left_out} more source(s) did not fit --max-context-tokens "
            f"(the prompt has {prompt.tokens} tokens)"
        )


def print_result(result: SearchResult) -> None:
    out = console()
    if not result.hits:
        out.print(
            f"No answer: no passage reaches the threshold ({result.min_score:.3f}) "
            "for this question; the indexed documents seem not to cover it."
        )
        return
    for hit in result.hits:
        out.print(f"[bold cyan]{hit.score:.3f}[/]  [bold]{_escape(hit.chunk.location)}[/]")
        out.print(f"       {_escape(snippet(hit.chunk.text))}", style="dim" if hit.rank > 1 else None)
        out.print()


def _changes(report: BuildReport) -> str:
    c = report.changes
    return f"{c.new} new, {c.changed} changed, {c.removed} removed, {c.unchanged} unchanged"


def print_build_summary(report: BuildReport) -> None:
    for message in report.warnings:
        warning(message)
    for skipped in report.skipped:
        warning(f"skipped {skipped.relative}: {skipped.reason}")
    if report.full_reason:
        console(stderr=True).print(f"Full rebuild: {_escape(report.full_reason)}")
    where = _escape(str(report.index_dir))
    if report.up_to_date:
        console().print(
            f"[green]Up to date[/]: {report.files} files, {report.chunks} chunks in {where}/ "
            f"({_changes(report)}; nothing embedded)"
        )
        return
    console().print(
        f"[green]Indexed[/] {report.files} files into {report.chunks} chunks "
        f"in {report.seconds:.1f} s → {where}/ ({_changes(report)}; "
        f"{report.embedded} chunks embedded; min score {report.min_score:.3f})"
    )


def build_json(report: BuildReport) -> dict:
    return {
        "index": str(report.index_dir),
        "files": report.files,
        "chunks": report.chunks,
        "seconds": round(report.seconds, 3),
        "min_score": round(report.min_score, 6),
        "new": report.changes.new,
        "changed": report.changes.changed,
        "removed": report.changes.removed,
        "unchanged": report.changes.unchanged,
        "embedded": report.embedded,
        "up_to_date": report.up_to_date,
        "full_reason": report.full_reason,
        "warnings": report.warnings,
        "skipped": [{"path": s.relative, "reason": s.reason} for s in report.skipped],
    }


@contextmanager
def progress(description: str, disable: bool = False) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr, shown from the first update on; yields a ``(done, total)`` callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console(stderr=True),
        transient=True,
        disable=disable or not console(stderr=True).is_terminal,  # no bar in logs and pipes
    )
    task = bar.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        if not bar.live.is_started:
            bar.start()
        bar.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if bar.live.is_started:
            bar.stop()


def _first_location(result: QuestionResult) -> str:
    chunk = result.first
    return "—" if chunk is None else PATH_SEPARATOR.join([chunk.source, *chunk.headings])


def eval_json(report: EvalReport, calibrated: bool = False) -> dict:
    return {
        **report.metrics,
        "mode": report.mode,
        "k": report.k,
        "min_score": round(report.min_score, 6),
        "suggested_min_score": _round(report.suggested_min_score),
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
            }
            for r in report.misses
        ],
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _pct(value: float | int | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def print_eval(report: EvalReport, calibrated: bool = False) -> None:
    from rich.table import Table

    m = report.metrics
    suggested = report.suggested_min_score
    topk = f"   top-{report.k} {_pct(m[f'top{report.k}'])}" if report.k not in (1, 3) else ""
    out = console()
    out.print(
        f"[bold]{m['questions']} questions[/] ({m['answerable']} answerable, {m['unanswerable']} not), "
        f"{report.mode} search"
    )
    out.print(f"  top-1 {_pct(m['top1'])}   top-3 {_pct(m['top3'])}{topk}   MRR@10 {m['mrr']}")
    out.print(
        f"  threshold {report.min_score:.3f}: answered {_pct(m['answered'])} of answerable "
        f"({_pct(m['answered_correct'])} answered and right first), "
        f"rejected {_pct(m['rejected'])} of unanswerable"
    )
    out.print(
        f"  lowest correct first score {m['lowest_correct_first_score']}, "
        f"highest unanswerable score {m['highest_unanswerable_score']}, "
        f"suggested min score {'—' if suggested is None else f'{suggested:.3f}'}"
        + (" [green](written to the index)[/]" if calibrated and suggested is not None else "")
    )
    if report.by_kind:
        kinds = Table(title="By kind", expand=False)
        for column in ("kind", "questions", "top-1", "top-3", "answered", "rejected"):
            kinds.add_column(column, justify="left" if column == "kind" else "right")
        for kind, km in report.by_kind.items():
            kinds.add_row(
                _escape(kind),
                str(km["questions"]),
                *(_pct(km[key]) for key in ("top1", "top3", "answered", "rejected")),
            )
        out.print(kinds)
    if not report.misses:
        return
    table = Table(title="Misses", expand=True)
    for column in ("question", "expected", "came first", "score"):
        table.add_column(column, overflow="fold")
    for r in report.misses:
        table.add_row(
            _escape(r.question.question),
            _escape(r.question.expected()),
            _escape(_first_location(r)) + ("" if r.passes else " [dim](no answer)[/]"),
            f"{r.first_score:.3f}" + (f" (#{r.rank})" if r.rank and r.rank > 1 else ""),
        )
    out.print(table)


def question_cut(asked: str, searched: str, limit: int) -> None:
    warning(
        f"the question was cut to the model's {limit}-token input limit: the first "
        f"{len(searched.split()):,} of its {len(asked.split()):,} words are searched"
    )


def stale_warning(changed: list[str]) -> None:
    if changed:
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        warning(f"{len(changed)} file(s) changed since the index was built ({shown}); run `semsearch build`")


def info_json(index: Index) -> dict:
    meta = index.meta
    files = meta.get("files", {})
    return {
        "index": str(index.path),
        "docs_root": meta.get("docs_root"),
        "model": meta["model"],
        "chunking": meta.get("chunking"),
        "files": len(files),
        "chunks": len(index.chunks),
        "min_score": meta["min_score"],
        "built_at": meta.get("built_at"),
        "semsearch_version": meta.get("semsearch_version"),
        "excludes": meta.get("excludes", []),
        "skipped": [{"path": path, "reason": s["reason"]} for path, s in meta.get("skipped", {}).items()],
        "without_text": sorted(path for path, f in files.items() if f.get("chunks") == 0),
        "changed_since_build": index.changed_files(),
    }


def print_info(index: Index) -> None:
    data = info_json(index)
    threshold = data["min_score"]
    origin = (
        f"calibrated on {threshold.get('questions')} labelled questions"
        if threshold.get("source") == "calibrate"
        else "derived at build time from the off-topic bank"
    )
    out = console()
    out.print(f"[bold]{_escape(data['index'])}/[/] for {_escape(str(data['docs_root']))}/")
    out.print(f"  model      {_escape(data['model']['spec'])} ({data['model']['dim']} dimensions)")
    budget = data["chunking"]["max_tokens"]
    out.print(f"  content    {data['files']} files, {data['chunks']} chunks (≤ {budget} tokens)")
    out.print(f"  threshold  {threshold['value']:.3f}, {origin}")
    out.print(f"  built      {data['built_at']} by semsearch {data['semsearch_version']}")
    if data["excludes"]:
        out.print(f"  excludes   {_escape(', '.join(data['excludes']))}")
    for item in data["skipped"]:
        out.print(f"  skipped    {_escape(item['path'])}: {_escape(item['reason'])}")
    for path in data["without_text"]:
        out.print(f"  no text    {_escape(path)}")
    changed = data["changed_since_build"]
    if changed:
        out.print(f"  [yellow]changed since the build[/]: {_escape(', '.join(changed))}")
    else:
        out.print("  [green]up to date[/] with the docs folder")
