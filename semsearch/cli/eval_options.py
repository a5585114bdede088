"""``eval``'s arguments and their help: what a question file's fields mean, and how its options
differ from ``ask``'s (``-k`` is a list here; ``--calibrate`` writes into the index)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

QuestionsArgument = Annotated[
    Path,
    typer.Argument(
        help='JSON Lines, one question a line: {"question": ..., "source": FILE, "answer": TEXT}. '
        "source: the file holding the answer, relative to the documents folder (guide/setup.md; "
        "also as the shell completes it, docs/guide/setup.md, or absolute); "
        "answer: text the right passage must contain (case and spacing aside); either or both, "
        "each may be a list (any one counts); neither: the question is unanswerable, and right "
        "when refused.",
        metavar="QUESTIONS",
    ),
]
RecallOption = Annotated[
    str,
    typer.Option(
        "-k",
        "--top",
        help="A comma list of k (unlike `ask -k`, one number): recall@k, the right passage in "
        "the top k, for each: 1,3,10,50.",
    ),
]
CalibrateOption = Annotated[
    bool,
    typer.Option(
        "--calibrate",
        help="Write the suggested no-answer margin into the index (its meta.json), where `ask` "
        "then reads it; the build's own stays beside it.",
    ),
]
EvalJsonOption = Annotated[
    bool, typer.Option("--json", help="Print one JSON object: the figures, and every question's outcome.")
]
EvalJsonlOption = Annotated[
    bool, typer.Option("--jsonl", help="Print one JSON object per question, one per line, for pipes.")
]
InitOption = Annotated[
    bool,
    typer.Option(
        "--init",
        help="Start a question file: write QUESTIONS (a new file, never over one) with drafts drawn "
        "from the indexed documents' headings, to reword and complete.",
    ),
]
