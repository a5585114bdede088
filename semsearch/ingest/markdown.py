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

if TYPE_CHECKING:
    from markdown_it.token import Token

BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")


@dataclass
class Block:
    """A top-level Markdown block: a slice of the source by character offsets."""

    start: int
    end: int
    # Offsets where the block may be cut first: list items and table rows.
    cut_points: list[int] = field(default_factory=list)


@dataclass
class _Section:
    headings: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)
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
    start, end = Hidden(comments).bounds(text, start, end)
    if end > start:
        cut_points = [
            offset(t.map[0]) for t in tokens[1:] if t.type in {"list_item_open", "tr_open"} and t.map
        ]
        section.blocks.append(Block(start=start, end=end, cut_points=cut_points))


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
    blank_line = BLANK_LINE.search(text, opener.end(), end)
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


class Hidden:
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
