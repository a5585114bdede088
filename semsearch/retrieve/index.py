"""An index opened: its record, chunks, vectors, keyword and page sides, gate and filters, as a
search reads them (searching it: ``searcher``; building it: ``build``; its files on disk, written
and read: ``store``). A build reads the index it replaces as an ``Index`` too.

An index is a folder of: ``vectors.npy`` (N x dim float32, L2-normalized rows: dot product =
cosine), ``chunks.json`` (the N chunks, in row order), ``meta.json`` (model, chunking settings,
per-file fingerprints, thresholds), ``offtopic.npy`` (query vectors of the off-topic bank, see
``threshold``), ``keywords.*`` (the BM25 side of hybrid search, see ``keywords``) and ``pages.*``
(each file as a page, see ``encode.pages``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.encode.pages import PageIndex
from semsearch.errors import IndexCorruptError, UsageError, about_index
from semsearch.gate.bank import bank_sha256
from semsearch.gate.decision import Gate
from semsearch.ingest.chunk import Chunk
from semsearch.retrieve.filters import Condition, allowed_rows, conditions
from semsearch.store.file_records import file_row_starts
from semsearch.store.meta import IndexMeta
from semsearch.store.reader import check_chunks
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
        return changed_recorded(Path(self.meta.docs_root), self.meta.recorded())

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

    def file_starts(self) -> np.ndarray:
        """The first row of each file with text, in row order (from the record)."""
        if self._file_starts is None:
            self._file_starts = file_row_starts(self.meta.files)
        return self._file_starts

    def page_of_row(self) -> np.ndarray | None:
        """Each row's page (``encode.pages``; None without a page side), computed once."""
        if self._page_of_row is None and self.pages is not None:
            self._page_of_row = self.pages.page_of_rows()
        return self._page_of_row

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


def files_among(rows: np.ndarray, starts: np.ndarray) -> int:
    """How many files the ``rows`` lie in (``starts``: each file's first row, sorted)."""
    return len(np.unique(np.searchsorted(starts, rows, side="right"))) if len(rows) else 0
