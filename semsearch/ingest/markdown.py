"""Parsing Markdown into heading-scoped sections of blocks, for the chunker.

markdown-it-py (CommonMark + tables + YAML front matter): a ``#`` line inside a code fence is
not a heading, setext headings are. HTML comments are found here (outside code) so that the
chunker can leave them out of chunk text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from semsearch.ingest.markup import BLANK_LINE, clean, code_span_end, document_edits, markup_within
from semsearch.ingest.markup.edits import Edit
from semsearch.ingest.markup.meta import other_front_matter, title_of, yaml_title
from semsearch.ingest.markup.parser import MAX_NESTING, block_parser
from semsearch.ingest.markup.scan import NextMatch

if TYPE_CHECKING:
    from markdown_it.token import Token


@dataclass
class Block:
    """A top-level Markdown block: a slice of the source by character offsets."""

    start: int
    end: int
    # Offsets where the block may be cut first: list items and table rows.
    cut_points: list[int] = field(default_factory=list)
    header: tuple[int, int] | None = None
    """A table's header and delimiter rows, repeated in each chunk of a table cut in several."""


@dataclass
class _Section:
    headings: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)
    hidden: list[tuple[int, int]] = field(default_factory=list)
    """HTML comments (with their spaces) in the section, also those of blocks left out."""
    markup: list[tuple[int, int, str]] = field(default_factory=list)
    """Flavour markup in the section's blocks and what a reader sees instead (``markup``)."""


@dataclass
class ParsedDocument:
    sections: list[_Section]
    front_matter: str | None
    text: str
    line_starts: list[int]
    """Offset of the first character of each line."""
    title: str = ""
    """Its first ``#`` heading, else its front matter's title, as a reader sees them ("": none)."""

    def line_of(self, offset: int) -> int:
        """1-based line number of the character at ``offset``."""
        return bisect_right(self.line_starts, offset)


_CONTAINERS = {"list_item_open", "blockquote_open"}
_LISTS = {"bullet_list_open", "ordered_list_open"}
_COLUMN_ZERO_BLOCK = re.compile(r"^(?![ \t>]|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))\S", re.MULTILINE)
"""A line that cannot continue a list or quote: it starts at column 0 without a list or quote marker."""


def _swallowed_from(tokens: list[Token], text: str, line_offsets: list[int], first: int) -> int | None:
    """The line where a list nested past ``MAX_NESTING`` should have ended, if one swallowed
    the rest of the document.

    At the limit markdown-it skips the rest of the innermost container, and for a list item that
    rest runs to the end of the input. (A quote's extent is found before its content is parsed,
    so it keeps it.) The list ends at the next line that cannot continue it.
    """
    top = None
    for token in tokens:
        if token.level == 0 and token.nesting == 1:
            top = token
        if token.type in _CONTAINERS and token.level >= MAX_NESTING - 1 and top and top.type in _LISTS:
            after = line_offsets[min(first + token.map[0] + 1, len(line_offsets) - 1)]
            match = _COLUMN_ZERO_BLOCK.search(text, after)
            return None if match is None else bisect_right(line_offsets, match.start()) - 1
    return None


def _block_tokens(text: str, line_offsets: list[int], first: int = 0, mdx: bool = False) -> list[Token]:
    """Block tokens of ``text`` from line ``first`` (maps in its lines), parsed again after a
    list nested too deep."""
    tokens: list[Token] = []
    origin = first
    while True:
        part = block_parser(first == origin == 0, mdx).parse(text[line_offsets[first] :])
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


_PLAIN_TITLE = re.compile(r"(?!import\b|export\b)[^\\`*_\[\]<>!?&~{}:=^+%$|#/@\x00-\x1f]*")
"""A heading with none of the characters markup starts with (nor a line a rule reads as a
statement): read as it is, its spaces collapsed. A million headings had each run every flavour
rule and the inline parser (``tests/unit/ingest/test_markup.py`` holds them to the same titles)."""


def heading_title(markdown: str) -> str:
    """A heading's text as a reader sees it: no markup, no comments, spaces collapsed."""
    if _PLAIN_TITLE.fullmatch(markdown):
        return " ".join(markdown.split())
    return _plain_inline(clean(markdown))


def is_mdx(source: str) -> bool:
    """Whether the file ``source`` (a path) is read as MDX."""
    return source.lower().endswith(".mdx")


def parse_markdown(text: str, mdx: bool = False) -> ParsedDocument:
    """Split a Markdown document (LF newlines) into heading-scoped sections of blocks (``mdx``:
    read as MDX, where indented lines are not code)."""
    line_offsets = [0]
    for match in re.finditer("\n", text):
        line_offsets.append(match.end())
    line_offsets.append(len(text))
    other = other_front_matter(text)
    tokens = _block_tokens(text, line_offsets, other[1] if other else 0, mdx)
    edits = document_edits(text, tokens, line_offsets)

    def offset(line: int) -> int:
        return line_offsets[min(line, len(line_offsets) - 1)]

    sections = [_Section(headings=())]
    stack: list[tuple[int, str]] = []  # (level, title)
    front_matter = None
    titled = False  # a level-1 heading seen
    title = ""  # the first level-1 heading's text
    block_end = 0  # where the previous top-level token ended
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.level != 0 or token.map is None:
            i += 1
            continue
        # Lines between blocks that make no token (link reference definitions) lie in chunk text
        sections[-1].markup.extend(markup_within(edits, block_end, offset(token.map[0]), []))
        block_end = offset(token.map[1])
        if token.type == "front_matter":
            front_matter = token.content
        elif token.type == "heading_open":
            level = int(token.tag[1])
            heading = heading_title(tokens[i + 1].content)
            titled = titled or level == 1
            title = title or (heading if level == 1 else "")
            while stack and stack[-1][0] >= level:
                stack.pop()
            if heading:
                stack.append((level, heading))
            sections.append(_Section(headings=tuple(t for _, t in stack)))
        else:
            close = _close_index(tokens, i)
            _add_block(sections[-1], text, tokens[i : close + 1], offset, edits)
            i = close
        i += 1
    if not titled and (title := _front_matter_title(text, front_matter, other)):
        for section in sections:
            section.headings = (title, *section.headings)
    return ParsedDocument(
        sections=sections, front_matter=front_matter, text=text, line_starts=line_offsets[:-1], title=title
    )


def _front_matter_title(text: str, front_matter: str | None, other: tuple[str, int] | None) -> str:
    """The title a document without a ``#`` heading has in its front matter, as a reader sees it."""
    title = yaml_title(text) if front_matter is not None else title_of(other[0]) if other else None
    return _plain_inline(clean(" ".join(title.split()))) if title else ""


def _close_index(tokens: list[Token], i: int) -> int:
    """Index of the token that closes the one at ``i`` (``i`` itself if it opens nothing)."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth <= 0:
            return j
    return len(tokens) - 1


def _add_block(
    section: _Section, text: str, tokens: list[Token], offset: Callable[[int], int], edits: list[Edit]
) -> None:
    """Add the top-level block made of ``tokens`` to ``section``, unless it shows no text."""
    start, end = offset(tokens[0].map[0]), offset(tokens[0].map[1])
    comments = _comment_spans(text, start, end, tokens, offset)
    section.hidden.extend(comments)
    markup = markup_within(edits, start, end, comments)
    section.markup.extend(markup)
    start, end = Hidden([*comments, *markup]).bounds(text, start, end)
    if end > start:
        cut_points = [
            offset(t.map[0]) for t in tokens[1:] if t.type in {"list_item_open", "tr_open"} and t.map
        ]
        header = next(
            ((offset(t.map[0]), offset(t.map[1] + 1)) for t in tokens if t.type == "thead_open" and t.map),
            None,
        )
        section.blocks.append(Block(start=start, end=end, cut_points=cut_points, header=header))


_CODE = {"fence", "code_block", "math_block", "amsmath"}
_COMMENT = re.compile(r"<!---?>|<!--[\s\S]*?-->")
_COMMENT_CLOSE = re.compile("-->")
_MARKDOWN_SCAN = re.compile(r"\\[\s\S]|`+|<!--")
_HTML_SCAN = re.compile(r"<!--")
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
    closers = NextMatch(_COMMENT_CLOSE, text, end)  # one search per closer: 20,000 "<!--" stay linear
    blank_lines = NextMatch(BLANK_LINE, text, end)
    while (found := scan.search(text, start, end)) is not None:
        start = found.end()
        if found.group() == "<!--":
            if closers.at_or_after(found.start() + 2) is None:
                break  # no "-->" left: no later comment closes either
            comment = _COMMENT.match(text, found.start(), end)
            if comment is not None:
                comments.append(comment.span())
                start = comment.end()
        elif found.group().startswith("`"):
            start = code_span_end(text, found, end, blank_lines) or start
    return comments


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


class Hidden:
    """Sorted spans of the source that chunk text leaves out (HTML comments) or shows otherwise
    (flavour markup: ``markup``)."""

    def __init__(self, spans: list[tuple[int, int]] | list[tuple[int, int, str]]):
        """``spans``: ``(start, end)`` to leave out, or ``(start, end, shown)`` to show otherwise."""
        self.spans: list[tuple[int, int]] = []
        self.shown: list[str] = []
        """What each span shows instead ("" for most)."""
        for start, end, *shown in sorted(spans):
            # joined when they overlap, or touch and the second shows nothing (a title stays the
            # start of its own span, so a chunk starting there shows it)
            if self.spans and (start < self.spans[-1][1] or (start == self.spans[-1][1] and not any(shown))):
                self.spans[-1] = (self.spans[-1][0], max(end, self.spans[-1][1]))
                self.shown[-1] += shown[0] if shown else ""
            else:
                self.spans.append((start, end))
                self.shown.append(shown[0] if shown else "")
        self.starts = [start for start, _ in self.spans]
        self.blank = [not shown.strip() for shown in self.shown]

    def covering(self, position: int, blank: bool = False) -> tuple[int, int] | None:
        """The span holding ``position``; with ``blank``, only one that shows no text instead."""
        i = bisect_right(self.starts, position) - 1
        if i < 0 or position >= self.spans[i][1] or (blank and not self.blank[i]):
            return None
        return self.spans[i]

    def strictly_inside(self, position: int) -> bool:
        span = self.covering(position)
        return span is not None and span[0] < position

    def remove(self, text: str, start: int, end: int) -> str:
        """``text[start:end]`` without the hidden spans."""
        if not self.spans:
            return text[start:end]
        parts = []
        for i in range(max(0, bisect_right(self.starts, start) - 1), len(self.spans)):
            (hidden_start, hidden_end), shown = self.spans[i], self.shown[i]
            if hidden_start >= end:
                break
            if hidden_start > start:
                parts.append(text[start:hidden_start])
            if hidden_start >= start and hidden_end > start:
                parts.append(shown)
            start = max(start, hidden_end)
        return "".join(parts) + text[start:end]

    def widened(self, text: str, start: int, end: int) -> tuple[int, int]:
        """``[start, end)`` grown back over the hidden spans and spaces ``bounds`` trimmed on its
        first and last lines (a link's ``[``, an HTML tag): what a snippet shows of those lines
        is then as written, not cut after the markup. A span from another line is not taken."""
        while start > 0 and text[start - 1] != "\n":
            span = self.covering(start - 1, blank=True)
            if span is not None and "\n" not in text[span[0] : start]:
                start = span[0]
            elif text[start - 1] in " \t":
                start -= 1
            else:
                break
        while end < len(text) and text[end] != "\n":
            span = self.covering(end, blank=True)
            if span is not None and "\n" not in text[end : span[1]]:
                end = span[1]
            elif text[end] in " \t":
                end += 1
            else:
                break
        return start, end

    def bounds(self, text: str, start: int, end: int) -> tuple[int, int]:
        """``[start, end)`` without hidden spans or blank lines at its start, hidden spans or
        whitespace at its end (a first line keeps its indentation). Empty: ``end <= start``."""
        while start < end:
            if span := self.covering(start, blank=True):
                start = min(span[1], end)
            elif blank := _BLANK_START.match(text, start, end):
                start = blank.end()
            else:
                break
        while end > start:
            if span := self.covering(end - 1, blank=True):
                end = span[0]
            elif text[end - 1].isspace():
                end -= 1
            else:
                break
        return start, end
