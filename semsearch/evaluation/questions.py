"""A labelled question set, as ``semsearch eval`` reads it: JSON Lines, each row a ``question``
(required), ``answer`` (text the right chunk must contain, compared case-insensitively with
whitespace folded; or a list of acceptable texts), ``source`` (a path relative to the docs root,
or a list of acceptable paths) and ``partial`` (files answering in part, for the file-level
nDCG). A row with neither ``answer`` nor ``source`` is a question the folder cannot answer: the
right outcome is no result above the threshold.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from semsearch.errors import QuestionsError, QuestionsMissingError, path_problem
from semsearch.ingest.chunk import Chunk
from semsearch.util.jsonparse import parse_json


@dataclass(frozen=True)
class Question:
    line: int
    question: str
    answers: tuple[str, ...] = ()
    """Texts of which the right chunk must contain one (none: any text)."""
    sources: tuple[str, ...] = ()
    kind: str | None = None
    """Optional label (e.g. "paraphrase", "offtopic") for a per-kind breakdown."""
    partial: tuple[str, ...] = ()
    """Files that answer in part: they count half in the file-level nDCG (as peers' golden sets
    grade them), and are not a hit."""

    @property
    def answerable(self) -> bool:
        return bool(self.answers or self.sources)

    def expected(self) -> str:
        if not self.answerable:
            return "no answer"
        parts = [" | ".join(self.sources)] if self.sources else []
        if self.answers:
            parts.append(" | ".join(f"“{answer}”" for answer in self.answers))
        return " ".join(parts)


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def is_hit(question: Question, chunk: Chunk) -> bool:
    """Whether ``chunk`` meets every expectation the question gives."""
    if question.sources and chunk.source not in question.sources:
        return False
    return not question.answers or any(fold(answer) in fold(chunk.text) for answer in question.answers)


KNOWN_KEYS = ("question", "answer", "source", "partial", "kind", "lang", "id", "note", "also")
"""``lang``, ``id``, ``note`` and ``also`` (other files touching the topic) are for people: not scored."""


def load_questions(path: Path, warn: Callable[[str], None] | None = None) -> list[Question]:
    """Read a question file; ``warn`` hears of keys it does not know (a typo such as ``answr``
    would otherwise make an answerable question count as unanswerable)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise QuestionsMissingError(f"question file not found: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        too_long = path_problem(exc) if isinstance(exc, OSError) else None  # the path once, cut short
        raise QuestionsError(
            f"cannot read question file: {too_long}"
            if too_long
            else f"cannot read question file {path}: {exc}"
        ) from exc
    questions = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            row = parse_json(line)
        except json.JSONDecodeError as exc:
            raise QuestionsError(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise QuestionsError(f"{where}: expected a JSON object")
        unknown = sorted(set(row) - set(KNOWN_KEYS))
        if unknown and warn:
            names = ", ".join(map(repr, unknown))
            warn(f"{where}: unknown key {names} ignored (known: {', '.join(KNOWN_KEYS)})")
        text, answer, kind = (row.get(key) for key in ("question", "answer", "kind"))
        if not isinstance(text, str) or not text.strip():
            raise QuestionsError(f"{where}: 'question' must be a non-empty string")
        if not any(character.isalnum() for character in text):  # as ``ask`` refuses it
            raise QuestionsError(f"{where}: the question {text.strip()!r} has no words to search for")
        if isinstance(answer, str):
            answer = [answer]
        if answer is not None and (
            not isinstance(answer, list)
            or not answer
            or not all(isinstance(a, str) and a.strip() for a in answer)
        ):
            raise QuestionsError(f"{where}: 'answer' must be a non-empty text or a list of them")
        source, partial = (_paths(row, key, where) for key in ("source", "partial"))
        if partial and not (source or answer):
            raise QuestionsError(
                f"{where}: 'partial' needs a 'source' (an unanswerable question has neither)"
            )
        questions.append(
            Question(
                line=number,
                question=text.strip(),
                answers=tuple(answer or ()),
                sources=source,
                kind=kind if isinstance(kind, str) else None,
                partial=partial,
            )
        )
    if not questions:
        raise QuestionsError(f"no questions in {path}")
    return questions


def _paths(row: dict, key: str, where: str) -> tuple[str, ...]:
    """A row's ``key`` (``source``, ``partial``): one path or a list of them."""
    paths = row.get(key)
    if isinstance(paths, str):
        paths = [paths]
    if paths is not None and (
        not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths)
    ):
        raise QuestionsError(f"{where}: '{key}' must be a path or a list of paths")
    return tuple(paths or ())
