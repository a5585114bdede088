"""Terminal output of a build: progress while it runs, then its summary (or --json)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from semsearch.cli.render.durations import duration
from semsearch.cli.render.output import counted, files_counted
from semsearch.cli.render.terminal import SHOWN, Notes, _say, console, index_shown

if TYPE_CHECKING:
    from semsearch.build.embedding import Step
    from semsearch.build.files import FileOutcome
    from semsearch.build.report import BuildReport, EstimateBasis


def _changes(report: BuildReport) -> str:
    c = report.changes
    return f"{c.new:,} new, {c.changed:,} changed, {c.removed:,} removed, {c.unchanged:,} unchanged"


def print_build_summary(report: BuildReport, notes: Notes, verbose: bool = False) -> None:
    """Warnings and notes on stderr (none with --quiet; every file with --verbose), then the
    one-line summary on stdout."""
    if verbose:
        for outcome in report.outcomes:
            notes.note(f"{outcome.status:<10} {outcome.path}{_outcome_words(outcome)}")
        for path in report.excluded:
            notes.note(f"{'excluded':<10} {path}")
    for message in report.warnings:
        notes.warning(message)
    if not verbose:
        for skipped in report.skipped:
            notes.warning(f"skipped {skipped.relative}: {skipped.reason}")
    if report.full_reason:
        kept = "; passages whose text did not change keep their vectors" if report.rechunked else ""
        notes.note(f"Full rebuild: {report.full_reason}{kept}")
    where = index_shown(report.index_dir)
    files = files_counted(report.files, len(report.without_text))
    content = f"{files}, {counted(report.chunks, 'chunk')}"
    if report.dry_run:
        _print_dry_run(report, content, where)
        return
    if report.up_to_date:
        _say(
            ("Up to date", "green"),
            f": {content} in {where} ({_changes(report)}; nothing embedded)",
        )
        return
    if report.runtime_refused and report.embedded:
        notes.note(f"Embedded with {report.runtime}, not ONNX Runtime: {report.runtime_refused}")
    resumed = f", {report.resumed:,} kept from an interrupted build" if report.resumed else ""
    by = f" by {report.runtime.split()[0]}" if report.runtime and report.embedded else ""  # its version: info
    _say(
        ("Indexed", "green"),
        f" {files} into {counted(report.chunks, 'chunk')} in {duration(report.seconds)}"
        f" → {where} ({_files_changed(report)}; {counted(report.embedded, 'chunk')} embedded{by}{resumed}; "
        f"no-answer margin {report.margin:+.3f})",
    )


WATCHED_FOLDER = {
    "removed": "is gone (removed or moved away): watching for a folder at that path",
    "replaced": "was replaced by another folder: watching the new one",
    "back": "is back: watching it",
}
"""What ``watch`` says when its documents folder goes or comes (by the path it watches)."""


def watched_folder(folder: object, state: str) -> None:
    """``watch``'s line (stdout, with the build summaries) when its documents folder ``state``."""
    _say(("Documents folder", "yellow"), f" {folder}/ {WATCHED_FOLDER[state]}")


def after_reading(progress: Callable[[Step], None]) -> Callable[[Step], None]:
    """``progress`` from the phase after reading on: an up-to-date index (``ask --refresh``
    with nothing changed) shows none."""
    return lambda step: None if step.phase in ("finding", "reading") else progress(step)


def refresh_note(report: BuildReport, notes: Notes) -> None:
    """After ``ask --refresh`` rebuilt the index: what changed, on stderr (stdout is the answer)."""
    for message in report.warnings:
        notes.warning(message)
    why = f" ({report.full_reason})" if report.full_reason else ""  # why unchanged files were redone
    notes.note(
        f"Refreshed {index_shown(report.index_dir)}: {_files_changed(report)}{why}; "
        f"{counted(report.embedded, 'chunk')} embedded in {duration(report.seconds)}"
    )


def _print_dry_run(report: BuildReport, content: str, where: str) -> None:
    """A dry run's summary: what a build with the same options would embed, up to date or not."""
    if report.up_to_date:
        _say(
            f"Dry run: {content} ({_changes(report)}); ",
            ("up to date", "green"),
            f": a build would embed nothing; nothing written to {where}",
        )
        return
    if report.busy:
        _say(
            f"Dry run: {content} ({_files_changed(report)}); another build is writing this index now: "
            f"a build started now is refused until it finishes; nothing written to {where}"
        )
        return
    resumed = (
        f" and reuse {counted(report.resumed, 'chunk')} already embedded by an interrupted build"
        if report.resumed
        else ""
    )
    _say(
        f"Dry run: {content} ({_files_changed(report)}); a build would "
        f"embed {counted(report.embedded, 'chunk')} ({report.tokens:,} tokens){resumed}, about "
        f"{duration(report.estimated_seconds or 0.0)}{_assumed(report.estimate_basis, report.runtime)}; "
        f"nothing written to {where}"
    )


def _assumed(basis: EstimateBasis | None, runtime: str | None) -> str:
    """What a dry run's estimate assumed (the runtime a build would embed with, measured), and
    that the build's own time left corrects it (the speed of a shared machine changes)."""
    if basis is None:
        return " on this machine now"
    load = "" if basis.load is None else f", load average {basis.load:.2f}"
    timed = f"{counted(basis.timed_chunks, 'chunk')} of this folder" if basis.timed_chunks else "its titles"
    by = f" of {runtime}" if runtime else ""
    return (
        f" at the speed{by} measured on {timed} on this machine now ({counted(basis.cores, 'core')}{load}); "
        "the build's progress corrects it as it runs"
    )


def _outcome_words(outcome: FileOutcome) -> str:
    if outcome.reason:
        return f": {outcome.reason}"
    if outcome.chunks is None:
        return ""
    words = f": {counted(outcome.chunks, 'chunk')}" if outcome.chunks else ": no text to index"
    return words + (f"; front matter: {', '.join(outcome.fields)}" if outcome.fields else "")


def _files_changed(report: BuildReport) -> str:
    """``_changes``, saying that the unchanged files a full rebuild embeds again (``full_reason``:
    a new model or chunking, ``--full``) are."""
    if report.rechunked:
        again = " to re-chunk" if report.dry_run else " but re-chunked"
    else:
        again = " to re-embed" if report.dry_run else " but re-embedded"
    return _changes(report) + (again if report.full_reason and report.changes.unchanged else "")


def build_json(report: BuildReport) -> dict:
    return {
        "index": str(report.index_dir),
        "files": report.files,
        "chunks": report.chunks,
        "seconds": round(report.seconds, 3),
        "margin": None if report.dry_run and not report.up_to_date else round(report.margin, 6),
        "new": report.changes.new,
        "changed": report.changes.changed,
        "removed": report.changes.removed,
        "unchanged": report.changes.unchanged,
        "embedded": report.embedded,
        "resumed": report.resumed,
        "tokens_embedded": report.tokens,
        "runtime": report.runtime,
        "runtime_refused": report.runtime_refused,
        "up_to_date": report.up_to_date,
        "dry_run": report.dry_run,
        "another_build_running": report.busy,
        "estimated_seconds": None if report.estimated_seconds is None else round(report.estimated_seconds, 1),
        "estimate_basis": _basis_json(report.estimate_basis),
        "full_reason": report.full_reason,
        "warnings": report.warnings,
        "skipped": [{"path": s.relative, "reason": s.reason} for s in report.skipped],
        "without_text": report.without_text,
        "excluded": report.excluded,
    }


def _basis_json(basis: EstimateBasis | None) -> dict | None:
    if basis is None:
        return None
    return {"timed_chunks": basis.timed_chunks, "cores": basis.cores, "load_average": basis.load}


PHASES = {
    "finding": "Finding Markdown files",
    "reading": "Reading files",
    "splitting": "Splitting into chunks",
    "embedding": "Embedding",
    "calibrating": "Calibrating the no-answer gate",
    "keywords": "Building the keyword index",
    "writing": "Writing the index",
}


LOG_INTERVAL = 10.0
"""Seconds between two progress lines of one phase in a log or a pipe."""


@contextmanager
def build_progress(disable: bool = False) -> Iterator[Callable[[Step], None]]:
    """Build progress on stderr from the first update on: a live bar on a terminal, plain lines
    in a log or a pipe (``ProgressLines``), nothing with ``disable`` (--quiet, --json)."""
    if disable:
        yield lambda step: None
    elif console(stderr=True).is_terminal:
        with _bar() as update:
            yield update
    else:
        yield ProgressLines(SHOWN.note)  # --quiet has none (``disable``)


@contextmanager
def _bar() -> Iterator[Callable[[Step], None]]:
    """One line per phase (those done stay, ticked); the embedding line has a rate and a time
    left counted in tokens."""
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

    bar = Progress(
        SpinnerColumn(finished_text="[green]✓[/]"),
        TextColumn("{task.description}"),
        BarColumn(bar_width=20),
        TextColumn("{task.fields[count]}"),
        *_time_columns(),
        console=console(stderr=True),
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def update(step: Step) -> None:
        if not bar.live.is_started:
            bar.start()
        if step.phase not in tasks:
            for task in tasks.values():  # the previous phase is over
                bar.update(task, total=1, completed=1)
            tasks[step.phase] = bar.add_task("", total=None, count="", unit=step.unit)
        label = PHASES.get(step.phase, step.phase)
        if step.chunks is not None:
            label += (
                f" ({step.chunks:,}{'' if step.chunks_total is None else f'/{step.chunks_total:,}'} chunks)"
            )
        count = f"{step.done:,}/{step.total:,} {step.unit}" if step.total is not None else ""
        bar.update(tasks[step.phase], description=label, completed=step.done, total=step.total, count=count)

    try:
        yield update
    finally:
        if bar.live.is_started:
            bar.stop()


class ProgressLines:
    """Build progress for a log or a pipe: a plain line when a phase starts, then one every
    ``interval`` seconds while it lasts, with how far it is and, once measured, the time left and
    the phase's whole time (``Embedding: 1,200/3,355 chunks (36% of the text), about 2 min 10 s
    left, about 3 min 20 s in all``). The first measure (the second batch embedded: the rate of
    one batch) is said at once, not an interval later: a long build says how long it will take
    from its start. No bar, no carriage return, no colour: what a CI log or ``| tee`` shows as it
    comes."""

    def __init__(
        self,
        say: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        interval: float = LOG_INTERVAL,
    ):
        self.say = say
        self.clock = clock
        self.interval = interval
        self.phase: str | None = None
        self.said = 0.0
        self.first: tuple[float, int] = (0.0, 0)
        """When the phase's first update came, and how far it was then."""
        self.timed = False
        """Whether a line of this phase has said its time yet (embedding says it at once)."""

    def __call__(self, step: Step) -> None:
        now = self.clock()
        if step.phase != self.phase:
            self.phase, self.said, self.first, self.timed = step.phase, now, (now, step.done), False
            self.say(progress_line(step))
            return
        rate = self._rate(step, now)
        first_measure = rate is not None and not self.timed and step.phase == "embedding"
        if now - self.said >= self.interval or first_measure:
            self.said, self.timed = now, self.timed or rate is not None
            if rate is None or step.total is None:
                self.say(progress_line(step))
            else:
                self.say(progress_line(step, (step.total - step.done) / rate, step.total / rate))

    def _rate(self, step: Step, now: float) -> float | None:
        """The phase's rate (units a second) since its first update (None: no measure yet)."""
        since, done_then = self.first
        if step.total is None or step.done <= done_then or now <= since:
            return None
        return (step.done - done_then) / (now - since)


def progress_line(step: Step, seconds_left: float | None = None, seconds_in_all: float | None = None) -> str:
    """One plain line of build progress: the phase, how far it is, the time left and the
    phase's whole time if known."""
    label = PHASES.get(step.phase, step.phase)
    if step.total is None:
        return f"{label}..."
    share = f" ({100 * step.done // step.total}%)" if step.total else ""
    if step.chunks is not None and step.chunks_total is not None:  # embedding: chunks, share of tokens
        share = share.replace("%)", "% of the text)")  # long chunks take longer: the work done
        count = f"{step.chunks:,}/{step.chunks_total:,} chunks{share}"
    else:
        count = f"{step.done:,}/{step.total:,} {step.unit}".rstrip() + share
        if step.chunks is not None:
            count += f", {step.chunks:,} chunk{'s' * (step.chunks != 1)} so far"
    left = f", about {duration(seconds_left)} left" if seconds_left is not None else ""
    in_all = f", about {duration(seconds_in_all)} in all" if seconds_in_all is not None else ""
    return f"{label}: {count}{left}{in_all}"


def _time_columns() -> tuple:
    """Two columns: units per second and the time left, for a phase with a measure; the time
    the phase has taken. Both in ``duration``'s words (rich is imported here only, when a build
    shows progress)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class TimeLeft(ProgressColumn):
        def render(self, task) -> Text:
            if task.total is None or not task.speed or task.finished:
                return Text("")
            left = (task.total - task.completed) / task.speed
            in_all = (task.elapsed or 0.0) + left
            return Text(f"{task.speed:,.0f}/s, {duration(left)} left of about {duration(in_all)}")

    class Elapsed(ProgressColumn):
        def render(self, task) -> Text:
            return Text(duration(task.finished_time if task.finished else task.elapsed or 0.0))

    return TimeLeft(), Elapsed()
