"""An index as a search reads it: rows ranked for a question, filters, and the answer that passes
the gate (building it: ``build``; its files on disk, written and read: ``store``).

An index is a folder of: ``vectors.npy`` (N x dim float32, L2-normalized rows: dot product =
cosine), ``chunks.json`` (the N chunks, in row order), ``meta.json`` (model, chunking settings,
per-file fingerprints, thresholds), ``offtopic.npy`` (query vectors of the off-topic bank, see
``threshold``) and ``keywords.*`` (the BM25 side of hybrid search, see ``keywords``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from semsearch.defaults import DEFAULT_MODE, MODES
from semsearch.encode.keywords import KeywordIndex
from semsearch.encode.pages import PageIndex
from semsearch.errors import IndexCorruptError, UsageError, about_index
from semsearch.gate.bank import bank_sha256
from semsearch.gate.decision import GATE_DEPTH, Gate, Verdict, read_passage
from semsearch.gate.threshold import is_answer
from semsearch.ingest.chunk import Chunk
from semsearch.retrieve.answer import Answer, Judged, Ranked
from semsearch.retrieve.exact import exact_scores
from semsearch.retrieve.filters import Condition, allowed_rows, conditions
from semsearch.retrieve.names import all_unheld, camel_parts, counted, unmentioned
from semsearch.retrieve.pages import page_evidence
from semsearch.retrieve.question import ParsedQuestion
from semsearch.retrieve.search import Hit, fuse, keyword_weight, rank
from semsearch.store.meta import IndexMeta
from semsearch.store.reader import check_chunks, check_unit_rows
from semsearch.store.staleness import changed_recorded
from semsearch.store.stores import Store

MASKS_KEPT = 8


@dataclass
class Index:
    """A stored index opened for searching: its record, chunks, vectors, keywords and gate."""

    path: Path
    meta: IndexMeta
    chunks: Sequence[Chunk]
    """Read lazily (`ChunkFile`) when loaded from disk."""
    vectors: np.ndarray
    offtopic: np.ndarray
    """Query vectors of the whole off-topic bank (reused by incremental builds)."""
    background: np.ndarray
    """The bank questions kept as the background of the no-answer rule."""
    keywords: KeywordIndex | None = None
    """None for an index built before keyword search existed."""
    pages: PageIndex | None = None
    """The page side (``encode.pages``); None for an index built before it, or read without keywords."""
    identity: tuple[int, int, str] | None = None
    """What the index was when read from disk (see ``store.update_meta``); None when made in memory."""
    store: Store | None = None
    """Where it was read from (see ``store.stores``); None when made in memory."""
    _masks: dict = field(default_factory=dict, repr=False, compare=False)
    """The last few filters' row masks (``allowed_rows``): computed once for many questions."""
    _gate: Gate | None = field(default=None, init=False, repr=False, compare=False)
    _page_of_row: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _file_starts: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    def verify(self) -> None:
        """Raise IndexCorruptError unless every chunk is the one the build wrote (reads the whole
        chunks file: ``info``, not ``ask``, which checks only the chunks it shows)."""
        with about_index(self.path):
            check_chunks(self.chunks, self.meta, self.path)

    def changed_files(self) -> list[str]:
        """The files the index records that were removed or modified since the build (sizes,
        mtimes), each looked up alone: the docs root is never walked (see ``staleness``)."""
        return changed_recorded(Path(self.meta.docs_root), self.meta.recorded)

    @property
    def offtopic_reusable(self) -> bool:
        return self.meta.offtopic.bank_sha256 == bank_sha256()

    @property
    def front_matter_recorded(self) -> bool:
        """Whether its build recorded each file's front matter (``--where`` needs it)."""
        return self.meta.front_matter_recorded

    @property
    def model(self) -> str:
        return self.meta.model.spec

    def cosines(self, query_vector: np.ndarray) -> np.ndarray:
        return self.vectors @ np.asarray(query_vector, dtype=self.vectors.dtype).reshape(-1)

    @property
    def gate(self) -> Gate:
        """The no-answer gate as this index's build recorded it (made anew after ``update_meta``)."""
        if self._gate is None:
            self._gate = Gate(self.meta, self.offtopic, self.background, self.chunks, self.keywords)
        return self._gate

    @property
    def corpus_language(self) -> str | None:
        return self.meta.corpus_language

    def update_meta(self, change: Callable[[IndexMeta], IndexMeta]) -> None:
        """Write ``change(meta)`` to disk, under the lock, if the index is still the one read."""
        from semsearch.store.folder import update_meta  # here: only eval --calibrate writes

        if self.identity is None:
            raise UsageError("this index was not read from disk")
        if self.store is not None:
            self.meta = self.store.update_meta(self.identity, self.meta, change)
        else:
            self.meta = update_meta(self.path, self.identity, self.meta, change)
        self._masks.clear()
        self._gate = None

    def parse(self, question: str) -> ParsedQuestion:
        """``question`` parsed once for every step of its search (see ``question``)."""
        return ParsedQuestion.parse(question, self.keywords.language if self.keywords else None)

    def identifier_rows(self, question: ParsedQuestion) -> np.ndarray:
        """Rows whose chunk contains a code the question names verbatim (see ``identifiers``),
        case-insensitively, or every part of a reference it names (see ``references``:
        ``art. 6 ust. 1 lit. a`` is in the chunk that cites it, not in those citing lit. b), or
        that lie under a heading consisting of a name as code writes it that the question names
        (see ``code_names``: "What does events.once() return?" and the section
        "events.once(emitter, name[, options])", not every chunk mentioning it)."""
        if not question.names_anything:
            return np.empty(0, dtype=np.int64)
        keywords = self.keyword_index()
        found = [keywords.rows_with(code) for code in question.identifiers]
        found += [keywords.rows_with_all(parts) for parts in question.references]
        found += [keywords.rows_named(name) for name in self.specific(question.code_names)]
        return np.unique(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)

    def specific(self, names: Sequence[str]) -> list[str]:
        """Those of ``names`` (names as code writes them) that fewer than half of the folder's
        files mention. A name most files mention is the folder's subject (``OpenTelemetry`` in
        its own docs, in 87 files of 109): a section titled by it, a glossary's entry, is not
        where a question naming it is answered. Half, because a word in more than half of the
        documents tells them apart no more (its Robertson-Spärck Jones weight is negative)."""
        keywords = self.keyword_index()
        starts = self.file_starts()
        return [name for name in names if 2 * _files_among(keywords.rows_with(name), starts) < len(starts)]

    def file_starts(self) -> np.ndarray:
        """The first row of each file with text, in row order (from the record)."""
        if self._file_starts is None:
            starts = sorted(r.rows[0] for r in self.meta.files.values() if r.rows and r.rows[1] > r.rows[0])
            self._file_starts = np.array(starts, dtype=np.int64)
        return self._file_starts

    def page_scores(self, question: ParsedQuestion, cosine: np.ndarray) -> np.ndarray | None:
        """What each row gains from its page's evidence (``retrieve.pages``); None for an index
        without a page side."""
        pages = self.pages
        if pages is None:
            return None
        if self._page_of_row is None:
            self._page_of_row = pages.page_of_rows()
        page_keywords = pages.keywords.token_scores(question.tokens_in(pages.keywords.language))
        return page_evidence(pages, self._page_of_row, cosine, page_keywords)[self._page_of_row]

    def allowed_rows(
        self, paths: Sequence[str] = (), where: Sequence[str | Condition] = ()
    ) -> np.ndarray | None:
        """Mask of the rows of files matching one of the ``.gitignore``-style ``paths`` (``faq/**``,
        ``regulamin.md``) and every ``where`` condition on front matter (``type=umowa``, see
        ``filters``); None without a filter."""
        key = (tuple(paths), tuple(conditions(where)))
        mask = self._masks.get(key)
        if mask is None and key != ((), ()):
            mask = allowed_rows(self.meta, len(self.chunks), *key, self.path)
            mask.flags.writeable = False  # shared by every search with this filter
            if len(self._masks) >= MASKS_KEPT:
                self._masks = {}  # replaced, not emptied: a search in another thread may hold it
            self._masks[key] = mask
        return mask

    def keyword_index(self) -> KeywordIndex:
        if self.keywords is None:
            raise IndexCorruptError(
                f"the index at {self.path}/ has no keyword index (built by an older semsearch; "
                "dense mode needs none)"
            )
        return self.keywords

    def ranked(
        self,
        question: ParsedQuestion,
        query_vector: np.ndarray,
        k: int,
        mode: str = DEFAULT_MODE,
        paths: Sequence[str] = (),
        where: Sequence[str | Condition] = (),
        cosine: np.ndarray | None = None,
    ) -> list[Ranked]:
        """The best ``k`` rows for ``question`` under ``mode``, only from files matching ``paths``
        and ``where`` (see ``filters``).

        - ``dense``: cosine similarity alone.
        - ``keyword``: BM25 alone (rows sharing no token with the question are not results).
        - ``hybrid``: cosine similarity fused with BM25 (see ``fuse``), BM25 weighed more when
          the question names something exact (a number, a code, a quoted phrase: embeddings
          blur exact strings) than when it is in plain words (see ``search.keyword_weight``).

        Outside dense mode, chunks containing a code or reference the question names verbatim
        come first (see ``identifier_rows``); in hybrid mode the rest of the question orders
        them (see ``exact``: the name they all hold tells them apart no more).
        """
        if mode not in MODES:
            raise UsageError(f"unknown search mode {mode!r} (one of {', '.join(MODES)})")
        cosine = self.cosines(query_vector) if cosine is None else cosine
        allowed = self.allowed_rows(paths, where)
        keyword = None
        exact = np.empty(0, dtype=np.int64)
        ranking = cosine
        if mode != "dense":
            keywords = self.keyword_index()
            keyword = keywords.token_scores(question.tokens_in(keywords.language))
            exact = self.identifier_rows(question)
            if mode == "keyword":
                ranking = keyword
                matched = keyword > 0
                allowed = matched if allowed is None else allowed & matched
            elif fuses(mode):
                ranking = fuse(cosine, keyword, keyword_weight(question.names_exact))
                page = self.page_scores(question, cosine)
                ranking = ranking if page is None else ranking + page
        if mode == "hybrid" and len(exact) > 1:  # they come first, ordered by the rest of the question
            ranking = np.array(ranking, dtype=np.float64)
            ranking[exact] = exact_scores(self.keyword_index(), question, cosine)[exact]
        exact_rows = set(exact.tolist())
        rows = rank(ranking, k, first=exact, allowed=allowed)
        check_unit_rows(self.vectors, rows, self.path)
        return [
            Ranked(
                row=int(i),
                score=float(cosine[i]),
                exact=int(i) in exact_rows,
                keyword_score=None if keyword is None else float(keyword[i]),
                order=float(ranking[i]),
            )
            for i in rows
        ]

    def _hit(self, rank: int, ranked: Ranked) -> Hit:
        chunk = self.chunks[ranked.row]
        path = _absolute(self.meta.docs_root, chunk.source)
        return Hit(
            rank=rank,
            score=ranked.score,
            chunk=chunk,
            keyword_score=ranked.keyword_score,
            path=path,
            row=ranked.row,
            keywords=self.keywords,
            exact=ranked.exact,
            ranking_score=ranked.order,
        )

    def search(
        self,
        question: str,
        query_vector: np.ndarray,
        k: int,
        min_score: float | None = None,
        mode: str = DEFAULT_MODE,
        paths: Sequence[str] = (),
        where: Sequence[str | Condition] = (),
    ) -> Answer:
        """Top ``k`` chunks that pass the threshold, in any mode.

        The decision reads cosine similarity whatever ranked the rows (fused or BM25 scores
        have no threshold of their own): without ``min_score`` a passage must reach the index's
        cut plus the question's baseline (see ``threshold``). An explicit ``min_score`` is a
        plain cosine threshold instead. A passage containing a code or reference the question
        names verbatim is an answer whatever its score (not in dense mode).

        The gate reads one of the first ``GATE_DEPTH`` ranked passages (``read_passage``: the
        first holding what the question names verbatim, else the best cosine), as in ``eval``:
        so ``k`` changes how many passages are shown, never whether there is an answer. Shown
        are the first ``k`` of those ranked passages that pass. ``question`` is parsed here,
        once (``parse``), for every step.
        """
        judged = self.judge(question, query_vector, max(k, GATE_DEPTH), min_score, mode, paths, where)
        read = judged.read
        hits = [self._hit(n, r) for n, r in enumerate(judged.passing[:k], 1)]
        missing = self.missing_outside(judged.named, judged.allowed)
        missing.update((name, []) for name in judged.unmentioned if name not in missing)
        return Answer(
            question,
            hits,
            float(judged.verdict.threshold),
            judged.baseline,
            mode,
            fused=fuses(mode),
            missing=tuple(missing),
            missing_elsewhere={name: files for name, files in missing.items() if files},
            best_score=read.score if read else None,
            unheld=judged.unheld,
            unmentioned=judged.unmentioned,
            closest=self._hit(1, read) if read and not hits else None,
        )

    def judge(
        self,
        question: str,
        query_vector: np.ndarray,
        depth: int,
        min_score: float | None = None,
        mode: str = DEFAULT_MODE,
        paths: Sequence[str] = (),
        where: Sequence[str | Condition] = (),
    ) -> Judged:
        """``question`` ranked ``depth`` deep and judged: the one decision ``ask`` (``search``),
        ``eval`` and MCP make (see ``search``)."""
        parsed = self.parse(question)
        cosine = self.cosines(query_vector)
        allowed = self.allowed_rows(paths, where)
        ranked = self.ranked(parsed, query_vector, depth, mode, paths, where, cosine)
        read = read_passage(ranked)
        read_score, read_exact = (read.score, read.exact) if read else (None, False)
        named = self.named_rows(parsed)
        unmentioned = self.names_unmentioned(parsed, query_vector, ranked)
        if min_score is not None:  # the user's own cosine cutoff: the names rule is the gate's
            answered = read_score is not None and is_answer(read_score, read_exact, min_score)
            verdict = Verdict(min_score, answered)
            return Judged(parsed, ranked, read, None, verdict, (), named, allowed, unmentioned)
        unheld = all_unheld(named)
        own_baseline = self.gate.baseline(question, query_vector, cosine, allowed)
        verdict = self.gate.decide(read_score, read_exact, own_baseline, bool(unheld))
        return Judged(parsed, ranked, read, own_baseline, verdict, unheld, named, allowed, unmentioned)

    def named_rows(self, question: ParsedQuestion) -> list[tuple[str, np.ndarray]]:
        """The codes, references and names as code writes them that ``question`` names verbatim
        (see ``identifier_rows``), each with the rows that hold it; none without a keyword index.
        A code name counts as held by the rows that write it or lie under a heading naming it."""
        keywords = self.keywords
        if keywords is None:
            return []
        named = [(code, keywords.rows_with(code)) for code in question.identifiers]
        named += [(" ".join(parts), keywords.rows_with_all(parts)) for parts in question.references]
        named += [(name, self._code_name_rows(keywords, name)) for name in question.code_names]
        return named

    @staticmethod
    def _code_name_rows(keywords: KeywordIndex, name: str) -> np.ndarray:
        """The rows that write the name, lie under a heading naming it, or, for a name glued in
        CamelCase, hold its words (``ApplePay`` in a folder writing ``Apple Pay``)."""
        rows = np.union1d(keywords.rows_with(name), keywords.rows_named(name))
        parts = camel_parts(name)
        if parts and not len(rows):
            rows = keywords.rows_with_words(parts)
        return rows

    def names_unmentioned(
        self, question: ParsedQuestion, query_vector: np.ndarray, ranked: Sequence[Ranked]
    ) -> tuple[str, ...]:
        """The names ``question`` writes as words (``DHL``, ``Revolut Pay``) that the folder never
        mentions (see ``names``), said under the results; ``query_vector`` tells its language,
        ``ranked`` holds its passages, best first (the first ``GATE_DEPTH`` may spell an acronym
        out). None in a question in another language than the documents'."""
        if not question.proper_names or self.keywords is None:
            return ()
        language = self.gate.question_language(query_vector)
        names = counted(question.proper_names, language, self.corpus_language)
        if not names:
            return ()
        passages = [self.chunks[r.row].text for r in ranked[:GATE_DEPTH]]
        return unmentioned(self.keywords, names, passages)

    def missing_outside(
        self, named: list[tuple[str, np.ndarray]], allowed: np.ndarray | None = None
    ) -> dict[str, list[str]]:
        """Those of ``named`` (see ``named_rows``) that no row where ``allowed`` holds, each with
        the files outside ``allowed`` that do (a code asked about under ``--path`` may sit in a
        file not searched): asked about ``tasks.delete()``, a passage on ``tasks.archive()``
        ranks first, and the reader is told it is not the one asked about."""
        found: dict[str, list[str]] = {}
        for name, rows in named:
            if name not in found and not (len(rows) if allowed is None else allowed[rows].any()):
                found[name] = sorted({self.chunks[int(row)].source for row in rows})
        return found


def fuses(mode: str) -> bool:
    """Whether ``mode`` ranks a question by cosine fused with BM25 (see ``Index.ranked``): in
    hybrid mode, every question (its weight: ``search.keyword_weight``)."""
    return mode == "hybrid"


def _files_among(rows: np.ndarray, starts: np.ndarray) -> int:
    """How many files the ``rows`` lie in (``starts``: each file's first row, sorted)."""
    return len(np.unique(np.searchsorted(starts, rows, side="right"))) if len(rows) else 0


def _absolute(docs_root: str, source: str) -> str:
    return os.path.join(docs_root, *source.split("/"))
