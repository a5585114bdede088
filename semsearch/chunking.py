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
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token

PATH_SEPARATOR = " › "
CHUNKER_VERSION = 3
"""Raised whenever the same file and settings would give other chunks, so that the next build
re-chunks every file instead of reusing old chunks. 2: lead-ins stay with what they introduce.
3: a heading path too long for the budget is cut (and stored cut) instead of leaving no room;
headings after a list nested over 10 deep open their sections again; HTML comments are removed;
the lines of a setext heading are joined with a space."""

TokenCounter = Callable[[str], int]
"""Counts tokens of a text (tiktoken cl100k_base in production)."""

TextFits = Callable[[str], bool]
"""Extra limit on an embedded text, e.g. the model's own input length."""


@dataclass(frozen=True)
class Chunk:
    id: str
    source: str
    headings: tuple[str, ...]
    """The section's heading path as embedded. A title too long for the budget is stored cut (at
    a word boundary, ending in "…"), and outer headings dropped if cutting is not enough."""
    text: str
    """Lines ``start_line``..``end_line`` of the source without their HTML comments."""
    start_line: int
    end_line: int
    tokens: int

    @property
    def section(self) -> str:
        return PATH_SEPARATOR.join(self.headings)

    @property
    def location(self) -> str:
        """``file › heading path (lines a–b)``: where a reader finds the chunk."""
        lines = (
            f"line {self.start_line}"
            if self.start_line == self.end_line
            else f"lines {self.start_line}–{self.end_line}"
        )
        return f"{PATH_SEPARATOR.join([self.source, *self.headings])} ({lines})"

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "source": self.source,
            "section": self.section,
            "headings": list(self.headings),
            "text": self.text,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "tokens": self.tokens,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Chunk:
        return cls(
            id=data["id"],
            source=data["source"],
            headings=tuple(data["headings"]),
            text=data["text"],
            start_line=int(data["start_line"]),
            end_line=int(data["end_line"]),
            tokens=int(data["tokens"]),
        )


def context_prefix(headings: tuple[str, ...] | list[str], source: str) -> str:
    """What precedes a chunk's text when embedded: its heading path, or the file name."""
    return PATH_SEPARATOR.join(headings) if headings else source.rsplit("/", 1)[-1]


def embedding_text(chunk: Chunk) -> str:
    """The exact text embedded for ``chunk``: the heading path, a blank line, the chunk text."""
    return f"{context_prefix(chunk.headings, chunk.source)}\n\n{chunk.text}"


@dataclass
class _Block:
    """A top-level Markdown block: a slice of the source by character offsets."""

    start: int
    end: int
    # Offsets where the block may be cut first: list items and table rows.
    cut_points: list[int] = field(default_factory=list)


@dataclass
class _Section:
    headings: tuple[str, ...]
    blocks: list[_Block] = field(default_factory=list)
    hidden: list[tuple[int, int]] = field(default_factory=list)
    """HTML comments (with their spaces) in the section, also those of blocks left out."""


@dataclass
class ParsedDocument:
    sections: list[_Section]
    front_matter: str | None
    text: str
    line_starts: list[int]
    """Offset of the first character of each line."""

    def line_of(self, offset: int) -> int:
        """1-based line number of the character at ``offset``."""
        return bisect_right(self.line_starts, offset)


_MAX_NESTING = 100
"""Token levels markdown-it parses before giving up (its "default" preset's value). The
"commonmark" preset stops at 20, i.e. a list nested 10 deep, and everything after it was then
filed into that list: later headings opened no section. ~2 stack frames a level, far from
Python's recursion limit."""

_CONTAINERS = {"list_item_open", "blockquote_open"}
_LISTS = {"bullet_list_open", "ordered_list_open"}
_COLUMN_ZERO_BLOCK = re.compile(r"^(?![ \t>]|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))\S", re.MULTILINE)
"""A line that cannot continue a list or quote: it starts at column 0 without a list or quote marker."""


@lru_cache(maxsize=2)
def _parser(front_matter: bool = True):
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    # Only the block structure is needed: skipping inline parsing of every paragraph keeps
    # memory and time low on large files. Heading text is parsed inline on its own.
    parser = MarkdownIt("commonmark", {"maxNesting": _MAX_NESTING}).enable("table").disable("inline")
    return parser.use(front_matter_plugin) if front_matter else parser


def _swallowed_from(tokens: list[Token], text: str, line_offsets: list[int], first: int) -> int | None:
    """The line where a list nested past ``_MAX_NESTING`` should have ended, if one swallowed
    the rest of the document.

    At the limit markdown-it skips the rest of the innermost container, and for a list item that
    rest runs to the end of the input. (A quote's extent is found before its content is parsed,
    so it keeps it.) The list ends at the next line that cannot continue it.
    """
    top = None
    for token in tokens:
        if token.level == 0 and token.nesting == 1:
            top = token
        if token.type in _CONTAINERS and token.level >= _MAX_NESTING - 1 and top and top.type in _LISTS:
            after = line_offsets[min(first + token.map[0] + 1, len(line_offsets) - 1)]
            match = _COLUMN_ZERO_BLOCK.search(text, after)
            return None if match is None else bisect_right(line_offsets, match.start()) - 1
    return None


def _block_tokens(text: str, line_offsets: list[int]) -> list[Token]:
    """Block tokens of ``text`` (maps in its lines), parsed again after a list nested too deep."""
    tokens: list[Token] = []
    first = 0
    while True:
        part = _parser(front_matter=first == 0).parse(text[line_offsets[first] :])
        resume = _swallowed_from(part, text, line_offsets, first)
        for token in part:
            if token.map is not None:
                start, end = (first + line for line in token.map)
                token.map = [start, end] if resume is None else [min(start, resume), min(end, resume)]
        tokens += part
        if resume is None:
            return tokens
        first = resume


@lru_cache(maxsize=1)
def _inline_parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def _plain_inline(markdown: str) -> str:
    """Heading text without inline markup (emphasis, links, code ticks) or HTML comments."""
    children = [child for token in _inline_parser().parseInline(markdown) for child in token.children or []]
    shown = [c for c in children if not (c.type == "html_inline" and _COMMENT.fullmatch(c.content))]
    parts = [
        " " if child.type in {"softbreak", "hardbreak"} else child.content  # setext titles' lines
        for child in shown
        if child.type in {"text", "code_inline", "html_inline", "softbreak", "hardbreak"}
    ]
    if not parts and children and not shown:
        return ""  # only comments
    return " ".join("".join(parts or [markdown]).split())


def normalize_newlines(text: str) -> str:
    """Drop a BOM and turn CRLF / CR into LF; line numbers are unchanged."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def parse_markdown(text: str) -> ParsedDocument:
    """Split a Markdown document (LF newlines) into heading-scoped sections of blocks."""
    line_offsets = [0]
    for match in re.finditer("\n", text):
        line_offsets.append(match.end())
    line_offsets.append(len(text))
    tokens = _block_tokens(text, line_offsets)

    def offset(line: int) -> int:
        return line_offsets[min(line, len(line_offsets) - 1)]

    sections = [_Section(headings=())]
    stack: list[tuple[int, str]] = []  # (level, title)
    front_matter = None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.level != 0 or token.map is None:
            i += 1
            continue
        if token.type == "front_matter":
            front_matter = token.content
        elif token.type == "heading_open":
            level = int(token.tag[1])
            title = _plain_inline(tokens[i + 1].content)
            while stack and stack[-1][0] >= level:
                stack.pop()
            if title:
                stack.append((level, title))
            sections.append(_Section(headings=tuple(t for _, t in stack)))
        else:
            close = _close_index(tokens, i)
            _add_block(sections[-1], text, tokens[i : close + 1], offset)
            i = close
        i += 1
    return ParsedDocument(
        sections=sections, front_matter=front_matter, text=text, line_starts=line_offsets[:-1]
    )


def _close_index(tokens: list[Token], i: int) -> int:
    """Index of the token that closes the one at ``i`` (``i`` itself if it opens nothing)."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth <= 0:
            return j
    return len(tokens) - 1


def _add_block(section: _Section, text: str, tokens: list[Token], offset: Callable[[int], int]) -> None:
    """Add the top-level block made of ``tokens`` to ``section``, unless it shows no text."""
    start, end = offset(tokens[0].map[0]), offset(tokens[0].map[1])
    comments = _comment_spans(text, start, end, tokens, offset)
    section.hidden.extend(comments)
    start, end = _Hidden(comments).bounds(text, start, end)
    if end > start:
        cut_points = [
            offset(t.map[0]) for t in tokens[1:] if t.type in {"list_item_open", "tr_open"} and t.map
        ]
        section.blocks.append(_Block(start=start, end=end, cut_points=cut_points))


_CODE = {"fence", "code_block"}
_COMMENT = re.compile(r"<!---?>|<!--[\s\S]*?-->")
_MARKDOWN_SCAN = re.compile(r"\\[\s\S]|`+|<!--")
_HTML_SCAN = re.compile(r"<!--")
_BACKTICKS = re.compile(r"`+")
_SPACES = re.compile(r"[ \t]*")
_BLANK_START = re.compile(r"[ \t]*\n")
_NEWLINE_AND_BLANK_LINES = re.compile(r"(?:\n(?:[ \t]*\n)*)?")


def _comment_spans(
    text: str, start: int, end: int, tokens: list[Token], offset: Callable[[int], int]
) -> list[tuple[int, int]]:
    """Spans of the HTML comments in a top-level block, with the spaces they would leave behind.

    Comments in code (fences, indented code, code spans) and escaped ``\\<!--`` are content and
    stay. In an HTML block backticks and backslashes mean nothing.
    """
    if tokens[0].type in _CODE or text.find("<!--", start, end) < 0:
        return []
    scan = _HTML_SCAN if tokens[0].type == "html_block" else _MARKDOWN_SCAN
    code = [(offset(t.map[0]), offset(t.map[1])) for t in tokens if t.type in _CODE and t.map]
    comments: list[tuple[int, int]] = []
    for code_start, code_end in [*code, (end, end)]:
        comments += _comments_in(text, start, code_start, scan)
        start = code_end
    merged: list[tuple[int, int]] = []
    for comment in comments:  # comments apart only by spaces go as one
        if merged and not text[merged[-1][1] : comment[0]].strip(" \t"):
            merged[-1] = (merged[-1][0], comment[1])
        else:
            merged.append(comment)
    return [_with_spaces(text, *comment) for comment in merged]


def _comments_in(text: str, start: int, end: int, scan: re.Pattern[str]) -> list[tuple[int, int]]:
    """Comments in ``text[start:end]``, skipping code spans and backslash escapes that ``scan`` finds."""
    comments = []
    while (found := scan.search(text, start, end)) is not None:
        start = found.end()
        if found.group() == "<!--":
            comment = _COMMENT.match(text, found.start(), end)
            if comment is not None:
                comments.append(comment.span())
                start = comment.end()
        elif found.group().startswith("`"):
            start = _code_span_end(text, found, end) or start
    return comments


def _code_span_end(text: str, opener: re.Match[str], end: int) -> int | None:
    """End of the code span that the backticks ``opener`` open: at the next run of as many
    backticks within the paragraph; None if there is none (the backticks are then literal)."""
    blank_line = _BLANK_LINE.search(text, opener.end(), end)
    stop = blank_line.start() if blank_line else end
    for run in _BACKTICKS.finditer(text, opener.end(), stop):
        if len(run.group()) == len(opener.group()):
            return run.end()
    return None


def _with_spaces(text: str, start: int, end: int) -> tuple[int, int]:
    """A comment's span widened so that removing it leaves no doubled space or empty line: a
    comment alone on its line takes the line and the blank lines after it."""
    after = _SPACES.match(text, end).end()
    if after < len(text) and text[after] != "\n":
        return start, after
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    if before > 0 and text[before - 1] != "\n":
        return before, after
    return before, _NEWLINE_AND_BLANK_LINES.match(text, after).end()


class _Hidden:
    """Sorted spans of the source that chunk text leaves out (HTML comments)."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.spans: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if self.spans and start <= self.spans[-1][1]:
                self.spans[-1] = (self.spans[-1][0], max(end, self.spans[-1][1]))
            else:
                self.spans.append((start, end))
        self.starts = [start for start, _ in self.spans]

    def covering(self, position: int) -> tuple[int, int] | None:
        i = bisect_right(self.starts, position) - 1
        return self.spans[i] if i >= 0 and position < self.spans[i][1] else None

    def strictly_inside(self, position: int) -> bool:
        span = self.covering(position)
        return span is not None and span[0] < position

    def remove(self, text: str, start: int, end: int) -> str:
        """``text[start:end]`` without the hidden spans."""
        if not self.spans:
            return text[start:end]
        parts = []
        for hidden_start, hidden_end in self.spans[max(0, bisect_right(self.starts, start) - 1) :]:
            if hidden_start >= end:
                break
            if hidden_start > start:
                parts.append(text[start:hidden_start])
            start = max(start, hidden_end)
        return "".join(parts) + text[start:end]

    def bounds(self, text: str, start: int, end: int) -> tuple[int, int]:
        """``[start, end)`` without hidden spans or blank lines at its start, hidden spans or
        whitespace at its end (a first line keeps its indentation). Empty: ``end <= start``."""
        while start < end:
            if span := self.covering(start):
                start = min(span[1], end)
            elif blank := _BLANK_START.match(text, start, end):
                start = blank.end()
            else:
                break
        while end > start:
            if span := self.covering(end - 1):
                end = span[0]
            elif text[end - 1].isspace():
                end -= 1
            else:
                break
        return start, end


_SENTENCE_END = re.compile(r"(?<=[.!?…;:])[\"'”»)\]]*\s+")
_WHITESPACE = re.compile(r"\s+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_NEWLINE = re.compile(r"\n\s*")


def _cuts(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[int]:
    """Offsets (in ``text``) just after each separator match inside [start, end)."""
    return [m.end() for m in pattern.finditer(text, start, end) if start < m.end() < end]


class _Splitter:
    """Cuts a section into spans of the source whose shown text (``shown``) fits the budget."""

    def __init__(
        self,
        text: str,
        prefix: str,
        max_tokens: int,
        count: TokenCounter,
        fits: TextFits,
        hidden: _Hidden,
    ):
        self.text = text
        self.prefix = prefix
        self.max_tokens = max_tokens
        self.count = count
        self.extra_fits = fits
        self.hidden = hidden
        self.prefix_tokens = count(prefix + "\n\n")

    def shown(self, start: int, end: int) -> str:
        """The chunk text of a span: the source slice without its HTML comments."""
        return self.hidden.remove(self.text, start, end)

    def tokens_of(self, start: int, end: int) -> int:
        return self.count(f"{self.prefix}\n\n{self.shown(start, end)}")

    def fits(self, start: int, end: int) -> bool:
        embedded = f"{self.prefix}\n\n{self.shown(start, end)}"
        return self.count(embedded) <= self.max_tokens and self.extra_fits(embedded)

    def pieces(self, block: _Block) -> Iterator[tuple[int, int]]:
        """Cut a block into spans that each fit, preferring the coarsest boundaries."""
        levels: list[Callable[[int, int], list[int]]] = [
            lambda s, e: self._outside_comments([c for c in block.cut_points if s < c < e]),
            lambda s, e: self._outside_comments(_cuts(_BLANK_LINE, self.text, s, e)),
            lambda s, e: self._outside_comments(_cuts(_NEWLINE, self.text, s, e)),
            lambda s, e: self._outside_comments(_cuts(_SENTENCE_END, self.text, s, e)),
            lambda s, e: self._outside_comments(_cuts(_WHITESPACE, self.text, s, e)),
        ]
        yield from self._split(block.start, block.end, levels)

    def _outside_comments(self, cuts: list[int]) -> list[int]:
        return [cut for cut in cuts if not self.hidden.strictly_inside(cut)] if self.hidden.spans else cuts

    def _split(self, start: int, end: int, levels) -> Iterator[tuple[int, int]]:
        if self.fits(start, end):
            yield (start, end)
            return
        for depth, level in enumerate(levels):
            cuts = level(start, end)
            if cuts:
                bounds = [start, *cuts, end]
                spans = [self.hidden.bounds(self.text, a, b) for a, b in pairwise(bounds)]
                finer = levels[depth + 1 :]
                pieces = [piece for s, e in spans if e > s for piece in self._split(s, e, finer)]
                yield from self.pack(pieces)
                return
        yield from self._hard_split(start, end)

    def _hard_split(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """Last resort for one unbroken 'word' over the budget: cut by characters."""
        while start < end:
            stop = self._longest_fitting(start, end)
            yield (start, stop)
            start = stop

    def _longest_fitting(self, start: int, end: int) -> int:
        """End of the longest slice from ``start`` that fits (at least one character)."""
        return start + max(1, _longest(end - start, lambda k: self.fits(start, start + k)))

    def glue_lead_ins(self, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Join a span that introduces the next one (ends with a colon) to it, when both fit.

        Otherwise packing can end a chunk on "on this basis we:" and start the next with the
        list it introduces, leaving each half without the other's meaning.
        """
        glued: list[tuple[int, int]] = []
        for span in spans:
            if glued and self.text[glued[-1][1] - 1] == ":" and self.fits(glued[-1][0], span[1]):
                glued[-1] = (glued[-1][0], span[1])
            else:
                glued.append(span)
        return glued

    def pack(self, spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        """Greedily merge consecutive spans while the merged slice still fits (lead-ins first
        joined to what they introduce)."""
        current: tuple[int, int] | None = None
        estimate = 0
        for span in self.glue_lead_ins(spans):
            span_tokens = self.tokens_of(*span) - self.prefix_tokens
            if current is None:
                current, estimate = span, self.prefix_tokens + span_tokens
                continue
            # Token counts are close to additive across whitespace; confirm exactly only when
            # the estimate says the merge could fit.
            if estimate + span_tokens + 1 <= self.max_tokens and self.fits(current[0], span[1]):
                current = (current[0], span[1])
                estimate = self.tokens_of(*current)
            else:
                yield current
                current, estimate = span, self.prefix_tokens + span_tokens
        if current is not None:
            yield current


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


def chunk_markdown(
    text: str,
    source: str,
    *,
    max_tokens: int,
    count_tokens: TokenCounter,
    fits: TextFits | None = None,
) -> list[Chunk]:
    """Chunk one Markdown document. ``text`` is the file's content, ``source`` its relative path.

    ``count_tokens`` measures the budget on the embedded text (heading path + chunk text);
    ``fits`` is an extra check every embedded text must pass (the model's own input limit).
    """
    if max_tokens < 16:
        raise ValueError("max_tokens must be at least 16")
    text = normalize_newlines(text)
    document = parse_markdown(text)
    extra_fits = fits or (lambda _text: True)
    chunks: list[Chunk] = []
    for section in document.sections:
        if not section.blocks:
            continue
        headings = _headings_within(section.headings, source, max_tokens, count_tokens, extra_fits)
        prefix = context_prefix(headings, source)
        splitter = _Splitter(text, prefix, max_tokens, count_tokens, extra_fits, _Hidden(section.hidden))
        spans = [span for block in section.blocks for span in splitter.pieces(block)]
        for start, end in splitter.pack(spans):
            chunks.append(
                Chunk(
                    id=f"{source}#{len(chunks)}",
                    source=source,
                    headings=headings,
                    text=splitter.shown(start, end),
                    start_line=document.line_of(start),
                    end_line=document.line_of(end),
                    tokens=splitter.tokens_of(start, end),
                )
            )
    return chunks
