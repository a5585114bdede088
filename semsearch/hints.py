"""What to do after a library error: the hint after its message, for the command line and for
an MCP client alike, with the real documents folder and index path in a suggested command when
they are known (the error carries its index, ``SemsearchError.index``). Pure: nothing is
remembered between calls."""

from __future__ import annotations

import shlex
from pathlib import Path

from semsearch.errors import (
    BuildInterruptedError,
    IndexChangedError,
    IndexCorruptError,
    IndexMissingError,
    MetaUnreadableError,
    QuestionsMissingError,
    SemsearchError,
)
from semsearch.store.location import Location

UNKNOWN_DOCS = "<your docs folder>"
"""Stands for the documents folder in a command suggested to an MCP client (a language model)
when the index does not tell it; a person at the command line reads ``DOCS``."""


def message(exc: SemsearchError, *, agent: bool = False) -> str:
    """``exc``'s message, then what to do about it when there is something to say (``hint``)."""
    said = hint(exc, agent=agent)
    return f"{exc}; {said}" if said else str(exc)


def hint(exc: SemsearchError, *, agent: bool = False) -> str | None:
    """What to do about ``exc``, None when there is nothing to add. ``agent``: for an MCP client,
    which runs no command itself: every index problem gets the whole build command, the
    documents folder a placeholder it will not take literally when the index does not tell it."""
    if isinstance(exc, MetaUnreadableError):  # before IndexCorruptError, its base class
        if agent:
            return f"remove the folder, then build again: `{build_command(exc.index, UNKNOWN_DOCS)}`"
        return (
            "nothing proves semsearch made that folder, so `semsearch build` leaves it alone: "
            "remove it yourself, then build again"
        )
    if isinstance(exc, IndexCorruptError):
        return f"rebuild it with `{build_command(exc.index, UNKNOWN_DOCS if agent else 'DOCS')}`"
    if isinstance(exc, BuildInterruptedError):
        docs = UNKNOWN_DOCS if agent else "DOCS"
        return f"run the same build again to go on from there: `{build_command(exc.index, docs)}`"
    if isinstance(exc, IndexMissingError):  # the path given may be a file or another folder
        if agent:
            return f"build it with `{build_command(exc.index, UNKNOWN_DOCS)}`"
        return "build one with `semsearch build DOCS --index INDEX`"
    if isinstance(exc, IndexChangedError) and not agent:
        return "run the command again"
    if isinstance(exc, QuestionsMissingError):
        return QUESTION_FILE
    return None


QUESTION_FILE = (
    'a question file is JSON Lines, a question a line: {"question": "How do I return an item?", '
    '"source": "returns.md", "answer": "within 14 days"} (source: the file that answers; answer: '
    "text the passage that answers holds; neither: a question the documents cannot answer); "
    "`semsearch eval --init` starts one from your documents' headings, and semsearch's source "
    "has a sample, tests/data/docs_questions.jsonl"
)
"""What ``eval`` says when it finds no question file: what a row looks like, and how to start."""


def build_command(index: Location | None, unknown_docs: str = "DOCS") -> str:
    """``semsearch build DOCS --index INDEX`` with the index path, and the documents folder its
    meta.json records when that folder still exists: placeholders only for what is not known
    (``unknown_docs`` for the folder)."""
    return command_to_build(_recorded_docs(index) if index is not None else None, index, unknown_docs)


def command_to_build(docs: str | None, index: Location | None, unknown_docs: str = "DOCS") -> str:
    """``semsearch build DOCS --index INDEX``, each path shell-quoted, placeholders for what is None."""
    where = shlex.quote(str(index)) if index is not None else "INDEX"
    return f"semsearch build {shlex.quote(docs) if docs else unknown_docs} --index {where}"


def _recorded_docs(index: Location) -> str | None:
    """``docs_root`` from the meta.json of a damaged index: read as plain JSON, since the rest of
    it may be what is damaged; None when unreadable or the folder is gone."""
    from semsearch.store.meta import recorded_docs_root

    if not isinstance(index, Path):  # a postgresql: index has no meta.json to read apart
        return None
    docs = recorded_docs_root(index)
    return docs if docs and Path(docs).is_dir() else None
