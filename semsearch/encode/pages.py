"""The page side of an index: each file as one page, for ranking the page a reader would pick.

A chunk is a passage; a reader picks a *page*: the one whose title is the topic, whose text is
about it throughout, rather than a glossary or an index page that mentions every topic in a line.
A build records, per page (an indexed file, in row order):

- a BM25 index over the whole page (its title, names and every chunk's text), so that a page
  that speaks of the question throughout outranks one that mentions it once (BM25 normalises
  by length: a long hub page gains little from one mention);
- how many of the other pages' titles it mentions (``topics``: the share of the folder's topics
  a page touches; a glossary, an index or an FAQ touches many);
- where its rows start (its chunks are contiguous).

And one figure for the folder: ``linked``, the share of pages whose title another page mentions.
Doc sites and note vaults name their pages in each other (0.7-1.0 on every such set measured);
a collection of independent articles (Wikipedia extracts, a blog) does not (0.0-0.05): there a
page's evidence is no different from its passages', and ``retrieve.pages`` weighs it by this
share, so it adapts to the folder.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semsearch.encode.keywords import K1, B, KeywordIndex, columns_in_order, keyword_files, tokenize
from semsearch.util.regular import load_array

PAGES_VERSION = 1
PREFIX = "pages"
STARTS_FILE = f"{PREFIX}.starts.npy"
TOPICS_FILE = f"{PREFIX}.topics.npy"
FILES = (*keyword_files(PREFIX), STARTS_FILE, TOPICS_FILE)


@dataclass(frozen=True)
class PageText:
    """What a build knows of one page: its names (its title first, then its aliases; none for a
    page without a title), its passages' texts and its rows."""

    names: tuple[str, ...]
    texts: tuple[str, ...]
    rows: tuple[int, int]


@dataclass(frozen=True)
class PageIndex:
    """The pages of an index (see the module docstring), in row order."""

    keywords: KeywordIndex
    """BM25 over the pages: row ``p`` is page ``p``."""
    starts: np.ndarray
    """Page ``p`` holds rows ``starts[p]`` to ``starts[p + 1]`` (int64, one more than the pages)."""
    topics: np.ndarray
    """Per page, the share of the other pages whose title it mentions (float32, 0 to 1)."""
    linked: float
    """The share of pages whose title another page mentions."""

    @property
    def count(self) -> int:
        return len(self.starts) - 1

    def page_of_rows(self) -> np.ndarray:
        """Each row's page (int64, one per row)."""
        return np.repeat(np.arange(self.count, dtype=np.int64), np.diff(self.starts))

    def pages_of(self, rows: np.ndarray) -> np.ndarray:
        """The page of each of ``rows``."""
        return np.searchsorted(self.starts, rows, side="right") - 1

    def save(self, folder: Path) -> None:
        self.keywords.save(folder, PREFIX)
        np.save(folder / STARTS_FILE, self.starts)
        np.save(folder / TOPICS_FILE, self.topics)

    @classmethod
    def load(cls, folder: Path, rows: int, language: str | None, linked: float) -> PageIndex:
        """Raises OSError or ValueError when the files are missing or do not fit ``rows`` chunks."""
        starts, topics = load_array(folder / STARTS_FILE), load_array(folder / TOPICS_FILE)
        if starts.ndim != 1 or starts.dtype.kind != "i" or len(starts) < 2:
            raise ValueError(f"{STARTS_FILE} is not a list of rows")
        if starts[0] != 0 or starts[-1] != rows or (np.diff(starts) <= 0).any():
            raise ValueError(f"{STARTS_FILE} does not cover the index's {rows} chunks in order")
        pages = len(starts) - 1
        if topics.shape != (pages,) or topics.dtype.kind != "f" or not np.isfinite(topics).all():
            raise ValueError(f"{TOPICS_FILE} does not hold a share per page")
        keywords = KeywordIndex.load(folder, pages, language, PREFIX)
        return cls(keywords, np.asarray(starts, dtype=np.int64), topics, linked)


def build_page_index(pages: Sequence[PageText], language: str | None) -> PageIndex:
    """The page index of ``pages`` (in row order, none empty), stemmed in ``language``."""
    keywords = page_keywords(pages, language)
    titles = [tokenize(page.names[0], language) if page.names else [] for page in pages]
    mentioned_by: list[np.ndarray] = [
        keywords.rows_with_tokens(sorted(set(tokens))) if tokens else np.empty(0, np.int64)
        for tokens in titles
    ]
    mentions = np.zeros(len(pages), dtype=np.float64)
    linked = 0
    for page, rows in enumerate(mentioned_by):
        others = rows[rows != page]
        mentions[others] += 1
        linked += bool(len(others))
    topics = (mentions / max(1, len(pages) - 1)).astype(np.float32)
    starts = np.array([page.rows[0] for page in pages] + [pages[-1].rows[1] if pages else 0], dtype=np.int64)
    return PageIndex(keywords, starts, topics, linked / max(1, len(pages)))


def page_keywords(pages: Sequence[PageText], language: str | None) -> KeywordIndex:
    """BM25 over whole pages (Lucene's variant, as bm25s computes it for passages), from each
    page's token counts, its names and passages tokenized one at a time: a page of a 30 MB file
    is never one stream of tokens in memory, only its distinct tokens and their counts."""
    columns: dict[str, int] = {}
    counted, lengths = [], np.zeros(len(pages), dtype=np.float64)
    for page, found in enumerate(pages):
        counts: Counter[int] = Counter()
        for text in (*found.names, *found.texts):
            tokens = tokenize(text, language)
            lengths[page] += len(tokens)
            counts.update(columns.setdefault(token, len(columns)) for token in tokens)
        counted.append(counts)
    column = np.fromiter((c for counts in counted for c in counts), dtype=np.int64)
    row = np.repeat(np.arange(len(pages), dtype=np.int64), [len(counts) for counts in counted])
    tf = np.fromiter((n for counts in counted for n in counts.values()), dtype=np.float64)
    df = np.bincount(column, minlength=len(columns)).astype(np.float64)
    idf = np.log(1 + (len(pages) - df + 0.5) / (df + 0.5))
    norm = K1 * ((1 - B) + B * lengths / max(float(lengths.mean()) if len(pages) else 1.0, 1e-9))
    weight = (idf[column] * tf / (norm[row] + tf)).astype(np.float32)
    by_column = np.lexsort((row, column))
    indptr = np.zeros(len(columns) + 1, dtype=np.int64)
    np.cumsum(np.bincount(column, minlength=len(columns)), out=indptr[1:])
    tokens = list(columns)
    order = np.array(sorted(range(len(tokens)), key=tokens.__getitem__), dtype=np.int64)
    data, indices, indptr = columns_in_order(
        weight[by_column], row[by_column].astype(np.int32), indptr, order
    )
    vocab = {tokens[old]: new for new, old in enumerate(order.tolist())}
    return KeywordIndex(data, indices, indptr, vocab, len(pages), language)


def settings(index: PageIndex) -> dict:
    """What meta.json records of the page index (``store.records.PagesRecord``)."""
    return {"version": PAGES_VERSION, "pages": index.count, "linked": round(index.linked, 6)}
