"""A starter question file for ``eval --init``: drafts drawn from the folder's own headings, for
the user to reword and complete; written only where no file is.

Each draft is a section heading as a question, with the file it is in as its ``source`` (so
``eval`` can score it as it stands) and a note saying what to do with it; the last row shows a
question the documents cannot answer (no ``source``, no ``answer``), which the gate must refuse.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from semsearch.errors import QuestionsError
from semsearch.ingest.chunk import Chunk

PER_FILE = 3
"""Drafts taken from one file at most: a starter file should reach across the folder."""
DRAFTS = 30
"""Drafts in a starter file at most."""
DRAFT_NOTE = (
    'a draft from this file\'s heading: ask it as a reader would, and add "answer": a short text '
    "the passage that answers holds"
)
UNANSWERABLE = {
    "question": "What will the weather be like tomorrow?",
    "kind": "offtopic",
    "note": "a question the documents cannot answer (no source, no answer): the gate should "
    "refuse it; write a few in your readers' language",
}


def draft_questions(chunks: Iterable[Chunk], per_file: int = PER_FILE, limit: int = DRAFTS) -> list[dict]:
    """Rows of a starter file: the section headings of ``chunks`` as questions, up to ``per_file``
    from each file (its sections before its title), taken from each file in turn up to ``limit``."""
    headings: dict[str, list[tuple[int, str]]] = {}
    for chunk in chunks:
        found = headings.setdefault(chunk.source, [])
        if chunk.headings and chunk.headings[-1] not in (heading for _, heading in found):
            found.append((len(chunk.headings), chunk.headings[-1]))
    picked = {source: _sections_first(found)[:per_file] for source, found in headings.items()}
    rows: list[dict] = []
    for turn in range(per_file):
        for source, found in picked.items():
            if turn < len(found) and len(rows) < limit:
                rows.append({"question": found[turn], "source": source, "kind": "draft", "note": DRAFT_NOTE})
    return rows


def _sections_first(headings: Sequence[tuple[int, str]]) -> list[str]:
    """A file's headings, its sections before its title (a section asks something, a title rarely)."""
    return [heading for depth, heading in sorted(headings, key=lambda found: found[0] == 1)]


def write_starter(path: Path, rows: Sequence[dict]) -> None:
    """``rows`` and the unanswerable example as JSON Lines at ``path``, which must not exist."""
    lines = [json.dumps(row, ensure_ascii=False) + "\n" for row in [*rows, UNANSWERABLE]]
    try:
        with open(path, "x", encoding="utf-8") as file:
            file.writelines(lines)
    except FileExistsError as exc:
        raise QuestionsError(
            f"{path} already exists: --init writes a new file only (give another name: "
            f"semsearch eval --init my-questions.jsonl)"
        ) from exc
    except OSError as exc:
        raise QuestionsError(f"cannot write {path}: {exc.strerror}") from exc
