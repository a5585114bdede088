"""Section-aware chunking of Markdown.

The document is parsed with markdown-it-py (CommonMark + tables + YAML front matter), so a ``#``
line inside a code fence is not a heading and setext headings are. Each heading opens a section;
a chunk never crosses a section and carries the section's heading path. A section over the token
budget is split at block boundaries (paragraphs, lists, tables, code), then list items / table
rows / lines, then sentences, then words; never inside a word.

Chunk text is a slice of the source file (lines ``start_line``..``end_line``) with its HTML
comments removed, with the spaces or the line they leave behind: a reader never sees them, and
comment-only chunks (``<!-- YAML added: v0.3.3 -->`` all over the Node.js docs) won top-1 for
unrelated questions. A block or section of only comments gives no chunk. Comments in code
(fences, indented code, code spans) are content and stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import chain, pairwise
from typing import Any

from semsearch.ingest.chunk import PATH_SEPARATOR, Chunk
from semsearch.ingest.frontmatter import normalize_newlines
from semsearch.ingest.markdown import Block, Hidden, is_mdx, parse_markdown
from semsearch.ingest.markup import BLANK_LINE
from semsearch.ingest.packing import Packer, last_accepted
from semsearch.ingest.tokens import LONGEST_TOKEN_BYTES, count_tokens

CHUNKER_VERSION = 4
"""Raised whenever the same file and settings would give other chunks, so that the next build
re-chunks every file instead of reusing old chunks. 2: lead-ins stay with what they introduce.
3: a heading path too long for the budget is cut (and stored cut) instead of leaving no room;
headings after a list nested over 10 deep open their sections again; HTML comments are removed;
the lines of a setext heading are joined with a space. 4: flavour markup shown as a reader sees it
(``markup``, also recorded apart in the settings), titles from front matter, non-YAML front
matter left out, a table cut in several chunks repeats its header."""

TokenCounter = Callable[[str], int]
"""Counts tokens of a text (tiktoken cl100k_base in production)."""

TextFits = Callable[[str], bool]
"""Extra limit on an embedded text, e.g. the model's own input length."""


def context_prefix(headings: tuple[str, ...] | list[str], source: str) -> str:
    """What precedes a chunk's text when embedded: its heading path, or the file name."""
    return PATH_SEPARATOR.join(headings) if headings else source.rsplit("/", 1)[-1]


def embedding_text(chunk: Chunk) -> str:
    """The exact text embedded for ``chunk``: the heading path, a blank line, the chunk text."""
    return f"{context_prefix(chunk.headings, chunk.source)}\n\n{chunk.text}"


_CHARACTERS_PER_TOKEN = 4
"""About how many characters a token holds in prose: where the search for a cut starts."""
_SENTENCE_END = re.compile(r"(?<=[.!?…;:])[\"'”»)\]]*\s+")
_WHITESPACE = re.compile(r"\s+")
_NEWLINE = re.compile(r"\n\s*")


def _cuts(pattern: re.Pattern[str], text: str, start: int, end: int) -> Iterator[int]:
    """Offsets (in ``text``) just after each separator match inside [start, end), as found:
    a long paragraph has millions of words, never all held at once."""
    return (m.end() for m in pattern.finditer(text, start, end) if start < m.end() < end)


class _Splitter:
    """Cuts a section into spans of the source whose shown text (``shown``) fits the budget."""

    def __init__(
        self,
        text: str,
        prefix: str,
        max_tokens: int,
        count: TokenCounter,
        fits: TextFits,
        hidden: Hidden,
    ):
        self.text = text
        self.prefix = prefix
        self.max_tokens = max_tokens
        self.count = count
        self.extra_fits = fits
        self.hidden = hidden
        self.prefix_tokens = count(prefix + "\n\n")
        # A slice longer than this cannot fit (cl100k_base tokens are at most 128 bytes each):
        # the search for where to cut an unbroken run of text starts from its whole length.
        self.max_chars = max_tokens * LONGEST_TOKEN_BYTES if count is count_tokens else None
        self.packer = Packer(max_tokens, self.prefix_tokens, self.tokens_of, self._extra_fits_slice)

    def shown(self, start: int, end: int) -> str:
        """The chunk text of a span: the source slice without its HTML comments."""
        return self.hidden.remove(self.text, start, end)

    def tokens_of(self, start: int, end: int) -> int:
        return self.count(f"{self.prefix}\n\n{self.shown(start, end)}")

    def fits(self, start: int, end: int) -> bool:
        embedded = f"{self.prefix}\n\n{self.shown(start, end)}"
        if self.max_chars is not None and len(embedded) > self.max_chars:
            return False
        return self.count(embedded) <= self.max_tokens and self.extra_fits(embedded)

    def pieces(self, block: Block) -> Iterator[tuple[int, int]]:
        """Cut a block into spans that each fit, preferring the coarsest boundaries."""
        levels: list[Callable[[int, int], Iterable[int]]] = [
            lambda s, e: self._outside_comments(c for c in block.cut_points if s < c < e),
            lambda s, e: self._outside_comments(_cuts(BLANK_LINE, self.text, s, e)),
            lambda s, e: self._outside_comments(_cuts(_NEWLINE, self.text, s, e)),
            lambda s, e: self._outside_comments(_cuts(_SENTENCE_END, self.text, s, e)),
            lambda s, e: self._outside_comments(_cuts(_WHITESPACE, self.text, s, e)),
        ]
        yield from self._split(block.start, block.end, levels)

    def _outside_comments(self, cuts: Iterable[int]) -> Iterator[int]:
        return (
            (cut for cut in cuts if not self.hidden.strictly_inside(cut)) if self.hidden.spans else iter(cuts)
        )

    def _split(self, start: int, end: int, levels) -> Iterator[tuple[int, int]]:
        """The spans of ``[start, end)`` cut at the first level that cuts it, each split finer
        if it does not fit, packed; all as a stream (memory: a chunk's worth of spans)."""
        if self.fits(start, end):
            yield (start, end)
            return
        for depth, level in enumerate(levels):
            cuts = iter(level(start, end))
            first_cut = next(cuts, None)
            if first_cut is not None:
                bounds = chain((start, first_cut), cuts, (end,))
                spans = (self.hidden.bounds(self.text, a, b) for a, b in pairwise(bounds))
                finer = levels[depth + 1 :]
                yield from self.pack(piece for s, e in spans if e > s for piece in self._split(s, e, finer))
                return
        yield from self._hard_split(start, end)

    def _hard_split(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """Last resort for one unbroken 'word' over the budget: cut by characters."""
        while start < end:
            stop = self._longest_fitting(start, end)
            yield (start, stop)
            start = stop

    def _longest_fitting(self, start: int, end: int) -> int:
        """End of the longest slice from ``start`` that fits (at least one character): galloping
        out from about a chunk's length, not bisecting the longest slice that could fit (each
        probe of which counted up to 128 times a chunk's characters)."""
        guess = self.max_tokens * _CHARACTERS_PER_TOKEN
        longest = last_accepted(0, end - start + 1, guess, lambda k: self.fits(start, start + k))
        return start + max(1, longest)

    def pack(self, spans: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        """Greedily merge consecutive spans while the merged slice still fits (lead-ins first
        joined to what they introduce); see ``packing``."""
        yield from self.packer.pack(self.packer.glue_lead_ins(spans, self._lead_in))

    def _lead_in(self, span: tuple[int, int]) -> bool:
        return self.text[span[1] - 1] == ":"

    def _extra_fits_slice(self, start: int, end: int) -> bool:
        return self.extra_fits(f"{self.prefix}\n\n{self.shown(start, end)}")


def _longest(n: int, accepted: Callable[[int], bool]) -> int:
    """The largest ``k`` in 1..n that ``accepted`` takes (it takes every smaller one too), else 0."""
    low, high = 0, n
    while low < high:
        middle = (low + high + 1) // 2
        if accepted(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _cut_title(title: str, accepted: Callable[[str], bool]) -> str | None:
    """The longest cut of ``title`` that ``accepted`` takes: whole words and " …", or when not even
    one word is taken, the start of the first word and "…". None if nothing is taken."""
    words = title.split(" ")
    kept = _longest(len(words) - 1, lambda k: accepted(" ".join(words[:k]) + " …"))
    if kept:
        return " ".join(words[:kept]) + " …"
    kept = _longest(len(words[0]) - 1, lambda k: accepted(words[0][:k] + "…"))
    return words[0][:kept] + "…" if kept else None


def _headings_within(
    headings: tuple[str, ...], source: str, max_tokens: int, count: TokenCounter, fits: TextFits
) -> tuple[str, ...]:
    """The heading path as embedded: cut so that its prefix leaves at least half the budget (and
    about half the model's own limit) to the chunk text.

    The longest titles are cut first, at a word boundary with an ellipsis; outer headings are
    dropped only when even one word of each is too long. Without this a long setext heading (a
    paragraph followed by ``---``) left no room, and its section came out one character a chunk.
    """

    def leaves_room(titles: list[str]) -> bool:
        prefix = context_prefix(titles, source)
        return count(prefix) <= max_tokens // 2 and fits(f"{prefix}\n\n{prefix}")

    def leaves_room_with(i: int, title: str) -> bool:
        return leaves_room([*titles[:i], title, *titles[i + 1 :]])

    titles = list(headings)
    for i in sorted(range(len(titles)), key=lambda i: -len(titles[i])):
        if leaves_room(titles):
            return tuple(titles)
        cut = _cut_title(titles[i], partial(leaves_room_with, i))
        titles[i] = cut or titles[i].split(" ")[0] + (" …" if " " in titles[i] else "")
    while len(titles) > 1 and not leaves_room(titles):
        titles.pop(0)
    if titles and not leaves_room(titles):
        titles = [_cut_title(titles[0], lambda title: leaves_room([title])) or "…"]
    return tuple(titles)


@dataclass(frozen=True)
class ChunkedDocument:
    """One document's chunks, and its title (see ``markdown.ParsedDocument.title``)."""

    chunks: list[Chunk]
    title: str


def chunk_markdown(text: str, source: str, **options: Any) -> list[Chunk]:
    """The chunks of one Markdown document (``chunk_document`` without its title)."""
    return chunk_document(text, source, **options).chunks


def chunk_document(
    text: str,
    source: str,
    *,
    max_tokens: int,
    count_tokens: TokenCounter,
    fits: TextFits | None = None,
    progress: Callable[[int], None] | None = None,
) -> ChunkedDocument:
    """Chunk one Markdown document, and tell its title. ``text`` is the file's content, ``source``
    its relative path.

    ``count_tokens`` measures the budget on the embedded text (heading path + chunk text);
    ``fits`` is an extra check every embedded text must pass (the model's own input limit);
    ``progress`` is told the chunks so far at each section and each chunk (a file of 30 MB
    takes minutes: a build shows it going).
    """
    if max_tokens < 16:
        raise ValueError("max_tokens must be at least 16")
    text = normalize_newlines(text)
    document = parse_markdown(text, mdx=is_mdx(source))
    extra_fits = fits or (lambda _text: True)
    chunks: list[Chunk] = []
    told = progress or (lambda _chunks: None)
    for section in document.sections:
        told(len(chunks))
        if not section.blocks:
            continue
        headings = _headings_within(section.headings, source, max_tokens, count_tokens, extra_fits)
        prefix = context_prefix(headings, source)
        hidden = Hidden([*section.hidden, *section.markup])
        splitter = _Splitter(text, prefix, max_tokens, count_tokens, extra_fits, hidden)
        comments = Hidden(section.hidden)
        for start, end, header in _section_spans(splitter, section.blocks):
            shown = splitter.shown(start, end)
            raw = comments.remove(text, *hidden.widened(text, start, end))
            if header is not None:
                shown = f"{splitter.shown(*header).rstrip()}\n{shown}"
            chunks.append(
                Chunk(
                    id=f"{source}#{len(chunks)}",
                    source=source,
                    headings=headings,
                    text=shown,
                    start_line=document.line_of(start),
                    end_line=document.line_of(end),
                    tokens=count_tokens(f"{prefix}\n\n{shown}"),
                    raw=None if raw == shown else raw,
                )
            )
            told(len(chunks))
    return ChunkedDocument(chunks, document.title)


def _section_spans(
    splitter: _Splitter, blocks: list[Block]
) -> Iterator[tuple[int, int, tuple[int, int] | None]]:
    """The chunks of a section as ``(start, end, header)``: blocks packed together, except a
    table too long for one chunk, whose chunks are packed apart and each after the first
    repeats its header rows (``header``: their span; None for other chunks)."""
    spans: list[tuple[int, int]] = []
    for block in blocks:
        header = block.header
        if header is None or splitter.fits(block.start, block.end):
            spans += splitter.pieces(block)
            continue
        yield from ((start, end, None) for start, end in splitter.pack(spans))
        spans = []
        rows = _Splitter(
            splitter.text,
            f"{splitter.prefix}\n\n{splitter.shown(*header).rstrip()}",
            splitter.max_tokens,
            splitter.count,
            splitter.extra_fits,
            splitter.hidden,
        )
        for start, end in rows.pack(list(rows.pieces(block))):
            yield start, end, header if start >= header[1] else None
    yield from ((start, end, None) for start, end in splitter.pack(spans))
