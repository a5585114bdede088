"""``eval --init``: a starter question file drafted from the index's headings, then what to do next."""

from __future__ import annotations

from pathlib import Path

from semsearch.store.location import Location


def start_questions(questions: Path, index: Location) -> None:
    """Write ``questions`` (a new file) with drafts from the headings of the documents ``index``
    holds, and say what was written and what the user does next."""
    from semsearch.cli.render.eval import starter_written
    from semsearch.evaluation.starter import draft_questions, write_starter
    from semsearch.retrieve.opening import load_index

    rows = draft_questions(load_index(index, keywords=False).chunks)
    write_starter(questions, rows)
    starter_written(questions, rows)
