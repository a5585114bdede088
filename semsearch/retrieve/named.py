"""What a question names and where the folder holds it: the codes, references and names as code
writes them it names verbatim, each with its rows (the gate refuses a question whose every such
name the folder lacks), those the searched files lack, and the names it writes as words that the
folder never mentions (said under the results: ``names``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.gate.decision import GATE_DEPTH
from semsearch.ingest.chunk import Chunk
from semsearch.retrieve.answer import Ranked
from semsearch.retrieve.index import Index
from semsearch.retrieve.names import camel_parts, counted, unmentioned
from semsearch.retrieve.question import ParsedQuestion


def named_rows(keywords: KeywordIndex | None, question: ParsedQuestion) -> list[tuple[str, np.ndarray]]:
    """The codes, references and names as code writes them that ``question`` names verbatim
    (see ``Searcher.identifier_rows``), each with the rows that hold it; none without a keyword
    index. A code name counts as held by the rows that write it or lie under a heading naming it."""
    if keywords is None:
        return []
    named = [(code, keywords.rows_with(code)) for code in question.identifiers]
    named += [(" ".join(parts), keywords.rows_with_all(parts)) for parts in question.references]
    named += [(name, code_name_rows(keywords, name)) for name in question.code_names]
    return named


def code_name_rows(keywords: KeywordIndex, name: str) -> np.ndarray:
    """The rows that write the name, lie under a heading naming it, or, for a name glued in
    CamelCase, hold its words (``ApplePay`` in a folder writing ``Apple Pay``)."""
    rows = np.union1d(keywords.rows_with(name), keywords.rows_named(name))
    parts = camel_parts(name)
    if parts and not len(rows):
        rows = keywords.rows_with_words(parts)
    return rows


def names_unmentioned(
    index: Index, question: ParsedQuestion, query_vector: np.ndarray, ranked: Sequence[Ranked]
) -> tuple[str, ...]:
    """The names ``question`` writes as words (``DHL``, ``Revolut Pay``) that the folder never
    mentions (see ``names``), said under the results; ``query_vector`` tells its language,
    ``ranked`` holds its passages, best first (the first ``GATE_DEPTH`` may spell an acronym
    out). None in a question in another language than the documents'."""
    if not question.proper_names or index.keywords is None:
        return ()
    language = index.gate.question_language(query_vector)
    names = counted(question.proper_names, language, index.corpus_language)
    if not names:
        return ()
    passages = [index.chunks[r.row].text for r in ranked[:GATE_DEPTH]]
    return unmentioned(index.keywords, names, passages)


def missing_outside(
    chunks: Sequence[Chunk], named: list[tuple[str, np.ndarray]], allowed: np.ndarray | None = None
) -> dict[str, list[str]]:
    """Those of ``named`` (see ``named_rows``) that no row where ``allowed`` holds, each with
    the files outside ``allowed`` that do (a code asked about under ``--path`` may sit in a
    file not searched): asked about ``tasks.delete()``, a passage on ``tasks.archive()``
    ranks first, and the reader is told it is not the one asked about."""
    found: dict[str, list[str]] = {}
    for name, rows in named:
        if name not in found and not (len(rows) if allowed is None else allowed[rows].any()):
            found[name] = sorted({chunks[int(row)].source for row in rows})
    return found
