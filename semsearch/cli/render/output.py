"""All terminal output: Rich for people (results on stdout, problems on stderr) and --json.

User text (paths, headings, snippets, questions, error messages) is never read as Rich markup:
the consoles parse no markup and no emoji codes, and styled output is built from ``(text,
style)`` pairs into ``rich.text.Text`` (see ``_line``). A file named ``[bold]x.md`` prints as
that name, and a path like ``[/x]`` cannot break the printing of an error. Nor is it read by
the terminal: every line printed here shows control characters and bidi overrides escaped
(``printable``: a heading with ``ESC [2J`` cannot clear the screen). JSON keeps the real text.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from semsearch.cli.render.terminal import Notes, _say, flush_stdout, index_shown, silence_stdout
from semsearch.util.printable import printable, readable

if TYPE_CHECKING:
    from semsearch.collection import Answer, Collection
    from semsearch.context.prompt import Prompt
    from semsearch.retrieve.question import ParsedQuestion
    from semsearch.retrieve.search import Hit
    from semsearch.retrieve.summary import IndexSummary

INDENT = " " * 7
"""Where a result's text starts, under its score."""


@contextmanager
def results_output() -> Iterator[None]:
    """Printing results: a reader that stops reading (``| head -1``) ends the printing, not the
    command, whose exit code still says whether there was an answer."""
    try:
        yield
    except BrokenPipeError:
        silence_stdout()
    else:
        flush_stdout()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(_readable_data(data), ensure_ascii=_ascii_only(), indent=2) + "\n")


def print_json_lines(rows: Iterable[Any]) -> None:
    """One compact JSON object per line (``jq -c``-style), for pipes."""
    ascii_only = _ascii_only()
    for row in rows:
        sys.stdout.write(json.dumps(_readable_data(row), ensure_ascii=ascii_only) + "\n")


def _ascii_only() -> bool:
    """JSON's own ``\\uXXXX`` escapes when stdout's encoding is not a Unicode one
    (``PYTHONIOENCODING=ascii``): still the real text, as any JSON reader reads it."""
    import codecs

    try:
        return not codecs.lookup(sys.stdout.encoding or "ascii").name.startswith("utf")
    except LookupError:
        return True


def _readable_data(data: Any) -> Any:
    """``data`` with every string readable (a path given in bytes that are not UTF-8, say)."""
    if isinstance(data, str):
        return readable(data)
    if isinstance(data, dict):
        return {_readable_data(key): _readable_data(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_readable_data(item) for item in data]
    return data


def counted(number: int, noun: str) -> str:
    """``1 file``, ``2 files``, ``3,355 chunks``."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def files_counted(files: int, without_text: int) -> str:
    """``2 files (1 more with no text)``: the files searched, and those read that hold no text
    (only front matter or headings), which a search never returns."""
    more = f" ({without_text:,} more with no text)" if without_text else ""
    return counted(files, "file") + more


def display_path(path: str) -> str:
    """A path as ripgrep shows it: relative to the current folder when inside it, else absolute."""
    import os

    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def where(hit: Hit, line: int | None = None) -> str:
    """``docs/zwroty.md:41``: a location a terminal and an editor can open, at ``line`` (the
    first line shown of the passage) or at the passage's first line."""
    return f"{display_path(hit.path or hit.source)}:{line or hit.chunk.start_line}"


def hit_dict(hit: Hit, question: str | ParsedQuestion | None = None) -> dict:
    """A result for --json; with ``question``, also its snippet and the lines it shows."""
    chunk = hit.chunk
    shown = None if question is None else hit.snippet(question)
    return {
        "rank": hit.rank,
        "score": round(hit.score, 6),
        **({} if hit.ranking_score is None else {"ranking_score": round(hit.ranking_score, 6)}),
        "exact": hit.exact,
        "location": hit.location,
        "file_line": where(hit, shown.start_line if shown else None),
        "path": hit.path,
        "source": chunk.source,
        "section": chunk.section,
        "headings": list(chunk.headings),
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "text": chunk.text,
        **({} if hit.keyword_score is None else {"keyword_score": round(hit.keyword_score, 6)}),
        **(
            {}
            if shown is None
            else {"snippet": {"text": shown.text, "start_line": shown.start_line, "end_line": shown.end_line}}
        ),
    }


def ask_json(question: str, result: Answer) -> dict:
    return {
        "question": question,
        "mode": result.mode,
        "answered": result.answered,
        "reason": result.reason,
        "ranked_by": result.ranked_by,
        **_decision(result),
        "results": [hit_dict(hit, result.asked) for hit in result.hits],
        "closest": None if result.closest is None else hit_dict(result.closest, result.asked),
    }


def _decision(result: Answer) -> dict:
    """What ``--json`` and ``--context --json`` both say of the gate and the named codes."""
    return {
        "missing": list(result.missing),
        "missing_elsewhere": result.missing_elsewhere,
        "unheld": list(result.unheld),
        "threshold": round(result.threshold, 6),
        "best_score": None if result.best_score is None else round(result.best_score, 6),
    }


def prompt_json(question: str, prompt: Prompt, result: Answer) -> dict:
    return {
        "question": question,
        "answered": result.answered,
        **_decision(result),
        "prompt": prompt.text,
        "tokens": prompt.tokens,
        "sources": [
            {"number": n, **hit_dict(hit), **_given(prompt, n)} for n, hit in enumerate(prompt.sources, 1)
        ],
        "left_out": prompt.left_out,
    }


def _given(prompt: Prompt, number: int) -> dict:
    """With --expand: what source ``number`` gives the model (its lines, the results it holds)."""
    if prompt.blocks is None:
        return {}
    block = prompt.blocks[number - 1]
    chunks = block.chunks
    return {
        "context": {
            "location": block.location,
            "start_line": chunks[0].start_line,
            "end_line": chunks[-1].end_line,
            "ranks": [hit.rank for hit in block.hits],
            "text": block.text,
        }
    }


def print_prompt(prompt: Prompt, notes: Notes) -> None:
    """The prompt alone on stdout (ready to pipe or paste); a note on stderr when sources were cut.
    Piped, it is the documents' real text, for a model; on a terminal, its control characters
    are escaped as everywhere else (``printable``)."""
    text = readable(prompt.text)
    sys.stdout.write(printable(text, lines=True) if sys.stdout.isatty() else text)
    if prompt.left_out:
        notes.warning(
            f"{prompt.left_out:,} more source(s) did not fit --max-context-tokens "
            f"(the prompt has {prompt.tokens:,} tokens)"
        )


def no_answer(result: Answer) -> None:
    """The refusal on stderr, where ``--context | llm`` and ``--jsonl | …`` do not read it."""
    _say(f"No answer: {result.reason}.", stderr=True)
    closest(result, stderr=True)


def closest(result: Answer, stderr: bool = False) -> None:
    """After a refusal: the passage that came nearest, as a location with its score, marked as
    below the line, so that a reader can judge the refusal (and open the file)."""
    hit = result.closest
    if hit is None:
        return
    label = (
        f"Closest, not about {', '.join(result.unheld)}: "
        if result.unheld
        else "Closest, below the threshold: "
    )
    _say(
        label,
        (where(hit), "magenta"),
        f" {hit.section or hit.source} (similarity {hit.score:.3f})",
        stderr=stderr,
        style="dim",
    )


def missing_names(result: Answer, stderr: bool = False) -> None:
    """Say which codes or references the question names appear in no searched passage (and
    where they are, when a filter left their files out); not when the refusal said it already."""
    said = set(result.unmentioned) if not result.answered else set()  # the refusal names them
    missing = [name for name in result.missing if name not in said]
    if not missing or result.unheld:
        return
    named = [
        f"{name} (in {', '.join(result.missing_elsewhere[name])}, not searched)"
        if name in result.missing_elsewhere
        else name
        for name in missing
    ]
    them = "them" if len(named) > 1 else "it"
    above = f" The passages above do not mention {them}." if result.answered and not stderr else ""
    _say(f"Not found in the searched documents: {', '.join(named)}.{above}", stderr=stderr)


def print_result(result: Answer, full: bool = False) -> None:
    """Each result's score (the one the list is ordered by), location (at the first line shown)
    and snippet (``full``: its whole passage), then what the scores are when they are not the
    cosine the gate reads."""
    if not result.answered:
        _say(f"No answer: {result.reason}.")
        closest(result)
        missing_names(result)
        return
    for hit in result.hits:
        lines = (
            f"line {hit.lines[0]}" if hit.lines[0] == hit.lines[1] else f"lines {hit.lines[0]}–{hit.lines[1]}"
        )
        snippet = None if full else hit.snippet(result.asked)
        _say(
            (shown_score(hit), "bold cyan"),
            "  ",
            (where(hit, snippet.start_line if snippet else None), "bold magenta"),
            "  ",
            (f"{hit.section or hit.source} ({lines})", "bold"),
        )
        text = hit.chunk.text if snippet is None else snippet.text
        for line in text.split("\n"):
            if line.strip() or full:  # a snippet's paragraphs stay apart from the next result
                _say(INDENT + line if line.strip() else "", style="dim" if hit.rank > 1 else None)
        _say()
    legend = score_legend(result)
    if legend:
        _say(legend, style="dim")
    missing_names(result)


EXACT = "exact"
"""Printed for a passage listed first because it holds what the question names verbatim."""


def shown_score(hit: Hit) -> str:
    """The number the list is ordered by (``Hit.ranking_score``), in five characters as a cosine
    is (``0.897``, ``1.318``, a BM25 ``12.47``); ``exact`` for a passage listed first for holding
    what the question names."""
    if hit.exact:
        return EXACT
    value = hit.score if hit.ranking_score is None else hit.ranking_score
    digits = 3 if abs(value) < 10 else 2 if abs(value) < 100 else 1
    return f"{value:.{digits}f}"


def score_legend(result: Answer) -> str | None:
    """One line saying what the printed scores are, when they are not the cosine the gate reads
    (hybrid and keyword modes), and what ``exact`` means when one is printed."""
    exact = any(hit.exact for hit in result.hits)
    rest = "the rest" if exact else "the list"
    if result.mode == "keyword":
        scores = f"Scores are keyword (BM25) scores, ordering {rest}"
    elif result.fused:
        scores = f"Scores combine meaning and keywords, ordering {rest}"
    else:
        return None
    first = f"{EXACT}: holds what the question names verbatim, listed first. " if exact else ""
    return f"{first}{scores}; to answer, a passage needs enough similarity in meaning alone (--json: score)."


def question_cut(asked: str, searched: str, limit: int, notes: Notes) -> None:
    """Say how much of a question longer than the model reads is searched: in words, or in
    characters when the cut fell inside its only or last word (a "word" of 3,000 letters)."""
    words, total = len(searched.split()), len(asked.split())
    kept = (
        f"{words:,} of its {total:,} words"
        if words < total
        else f"{len(searched):,} of its {len(asked):,} characters"
    )
    notes.warning(
        f"the question is longer than the model reads ({limit} tokens): only its first {kept} are searched"
    )


def stale_warning(collection: Collection, notes: Notes) -> None:
    """What ``ask`` says before its answer when the documents folder ``collection`` was built from
    changed since: its changed files are looked up only in a folder on this machine (an index a
    server holds is often asked from another), and its files listed only when every one may have
    changed (a server streams them)."""
    from semsearch.store.staleness import any_recorded_left

    docs_root, index = collection.docs_root, collection.path
    if not os.path.isdir(docs_root):
        notes.warning(f"the documents folder the index was built from, {docs_root}/, no longer exists")
        return
    changed = collection.changed_files()
    if (
        changed
        and set(changed) == set(files := collection.files)
        and not any_recorded_left(Path(docs_root), files)
    ):  # a build would find nothing to index: no advice to run one
        notes.warning(
            f"every indexed file was removed from {docs_root}/ since the build; "
            "what follows comes from their indexed text"
        )
        return
    if changed:
        from semsearch.hints import command_to_build

        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3:,} more" if len(changed) > 3 else "")
        command = command_to_build(docs_root, index)
        notes.warning(
            f"{len(changed):,} file(s) changed since the index was built ({shown}); run `{command}`"
        )


def search_details(
    summary: IndexSummary,
    filtered: tuple[int, int] | None,
    filters: Sequence[str],
    answer: Answer,
    notes: Notes,
) -> None:
    """``ask --verbose``: the index, what the filters left to search (``filtered``: files and
    chunks, None without filters; ``filters`` as given), and the gate's decision."""
    files, chunks = len(summary.files), summary.chunks
    shown = f"{summary.model.spec}, {counted(files, 'file')}, {counted(chunks, 'chunk')}"
    notes.note(f"index: {index_shown(summary.path)} ({shown})")
    if filtered is not None:
        searched, rows = filtered
        notes.note(
            f"searched: {searched:,} of {files:,} files, {rows:,} of {chunks:,} chunks ({' '.join(filters)})"
        )
    if answer.answered:  # a refusal's reason is printed as the result itself
        notes.note(f"{answer.mode} search: {answer.reason}")
    else:  # how the line it missed was drawn
        notes.note(f"{answer.mode} search: the first passage had to reach {answer.threshold_in_words}")
