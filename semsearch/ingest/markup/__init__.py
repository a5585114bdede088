"""The text a reader sees, in the Markdown flavours people write: markup found as edits.

Each rule (``blocks``, ``inline``, ``html``) finds one flavour's constructs outside code (fenced
and indented code from markdown-it's tokens, code spans) and says what a reader sees instead:
usually nothing, a link's text, an alias, an admonition's title. The chunker shows chunk text
and heading paths with these edits applied, and keeps each chunk's lines exact (the edits only
replace spans of the file). ``APPLIED`` goes into meta.json's chunking settings, so that an
index built with other rules is re-chunked rather than mixed.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from semsearch.ingest.markup import blocks, html, inline, myst
from semsearch.ingest.markup.edits import Edit, apply, resolve
from semsearch.ingest.markup.scan import NextMatch

if TYPE_CHECKING:
    from markdown_it.token import Token

MARKUP_VERSION = 4
"""Raised when a rule changes what chunk text holds (2: MyST, escapes, icons, keys, reference
definitions between blocks; 3: pymdownx.blocks, alt texts read as Markdown, mdBook includes;
4: code spans in link text, Hugo shortcodes as a URL or alone in indented code, Docsy tab labels,
reference definitions quoted or with their URL on the next line)."""
Rule = Callable[[str, int, int], Iterator[Edit]]
RULES: tuple[Rule, ...] = (
    inline.escapes,
    myst.roles,
    html.raw_text_elements,
    html.mdx_comments,
    inline.shortcodes,
    inline.includes,
    inline.liquid,
    blocks.statements,
    myst.statements,
    blocks.admonitions,
    blocks.divs,
    blocks.callouts,
    inline.wikilinks,
    inline.footnotes,
    inline.links,
    inline.attributes,
    inline.icons,
    html.jsx_tags,
    html.html_tags,
    html.entities,
    inline.highlights,
)
"""In order: where two constructs overlap, the one found first by start (then the longer) wins."""
APPLIED = {
    "version": MARKUP_VERSION,
    "rules": [f"{rule.__module__.rsplit('.', 1)[-1]}.{rule.__name__}" for rule in RULES],
    "parser_plugins": ["front_matter", "admon", "content_tabs", "dollarmath", "amsmath"],
}
"""What meta.json records of the markup applied (see the module docstring)."""

_TITLED = {"admonition", "tab", "div", "callout", "myst-directive", "html", "jsx"}
"""Kinds of edit whose shown text is written in Markdown (a title, an image's alt text)."""
_RULES_TOKENS = {"hr"}
"""Blocks that show no text: a thematic break (``---``, ``***``) is a line, not words."""
_MDBOOK_INCLUDE = re.compile(
    r"^[ \t]*\{\{#(?:include|rustdoc_include|playground)\b[^}\n]*\}\}[ \t]*\n?", re.MULTILINE
)
"""An mdBook include alone on a line of code (``{{#rustdoc_include ../listings/main.rs}}``)."""
_HUGO_LINES = re.compile(r"(?:(?:[ \t]*(?:\{\{<[^{}\n]*>\}\}|\{\{%[^{}\n]*%\}\}))+[ \t]*(?:\n|\Z)|[ \t]*\n)+")
"""Lines of Hugo shortcodes and nothing else (``{{% /tab %}} {{% tab Docker %}}``)."""
_BACKTICKS = re.compile(r"`+")
_NOT_IN_HEADINGS = {inline.ESCAPE, myst.FIELD}
_HEADING_KEYS = re.compile(r"[ \t]+\{[ \t]*[\w-]+(?:[ \t]+[\w-]+)*[ \t]*\}[ \t]*$")
BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_BLANK_LINES = re.compile(r"(?:[ \t]*\n)*")
_LINE_BREAK = re.compile("\n")
_AFTER_ALL = sys.maxsize


def code_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Inline code spans in ``text[start:end]`` (backtick runs closed by as many in the paragraph)."""
    spans, position = [], start
    blank_lines = NextMatch(BLANK_LINE, text, end)
    while (opener := _BACKTICKS.search(text, position, end)) is not None:
        close = code_span_end(text, opener, end, blank_lines)
        spans.append((opener.start(), close)) if close else None
        position = close or opener.end()
    return spans


def _segments(text: str, code: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of ``text`` between the code spans ``code`` (sorted)."""
    segments, position = [], 0
    for start, end in code:
        if start > position:
            segments.append((position, start))
        position = max(position, end)
    return [*segments, (position, len(text))] if position < len(text) else segments


def find_edits(text: str, code_blocks: list[tuple[int, int]] = ()) -> list[Edit]:
    """The markup edits of ``text`` outside ``code_blocks`` (offset spans) and code spans."""
    found: list[Edit] = myst.comments(text, _segments(text, sorted(code_blocks)))
    segments = _segments(text, sorted([*code_blocks, *((edit.start, edit.end) for edit in found)]))
    spans = [span for start, end in segments for span in code_spans(text, start, end)]
    prose = _segments(text, sorted([*code_blocks, *spans]))
    found += inline.obsidian_comments(text, prose)
    if labels := blocks.reference_labels(text, segments):
        found += inline.shortcut_references(text, prose, labels)
    for start, end in segments:
        for rule in RULES:
            found += [e for e in rule(text, start, end) if not _cuts_into(e, spans)]
    return _blank_lines_taken(text, [_title_read(edit) for edit in resolve(found)])


def _title_read(edit: Edit) -> Edit:
    """A block's title (an admonition's, a tab's…) or an alt text is Markdown too: shown as a
    reader sees it (``=== ":material-apple: macOS"`` → "macOS"), the spaces around it kept."""
    core = edit.shown.strip()
    if edit.kind not in _TITLED or not core:
        return edit
    start = edit.shown.index(core)
    read = apply(core, find_edits(core)).strip()
    return edit._replace(shown=edit.shown[:start] + read + edit.shown[start + len(core) :])


def _cuts_into(edit: Edit, spans: list[tuple[int, int]]) -> bool:
    """Whether ``edit`` lies in a code span or starts or ends inside one (one it holds whole is
    fine). ``spans``: sorted, apart."""
    i = bisect_right(spans, (edit.start, _AFTER_ALL)) - 1
    if i >= 0 and edit.start < spans[i][1]:
        return True
    j = bisect_right(spans, (edit.end, _AFTER_ALL)) - 1
    return j >= 0 and spans[j][0] < edit.end < spans[j][1]


def _blank_lines_taken(text: str, edits: list[Edit]) -> list[Edit]:
    """Lines the edits leave blank go whole, with their line break, and when a blank line comes
    before them, the blank lines after them too (as an HTML comment alone on its line does).

    Each span of lines is read once, whatever number of edits it holds (10,000 tags on one
    line: one look at that line, not 10,000), and found by its line breaks' offsets, not by
    searching back from each edit: linear in the text and the edits."""
    breaks = [match.start() for match in _LINE_BREAK.finditer(text)]
    left_blank: dict[tuple[int, int], bool] = {}
    extra = []
    for edit in edits:
        line_start, line_end = _line_around(breaks, len(text), edit.start, edit.end)
        if (line_start, line_end) not in left_blank:
            shown = apply(text, edits, line_start, line_end)
            left_blank[line_start, line_end] = not shown.strip() and bool(text[line_start:line_end].strip())
        if not left_blank[line_start, line_end]:
            continue
        end = min(line_end + 1, len(text))
        if (
            line_start == 0
            or not text[_line_around(breaks, len(text), line_start - 1)[0] : line_start].strip()
        ):
            end = _BLANK_LINES.match(text, end).end()
        extra.append(Edit(line_start, end, "", "line"))
    return resolve(edits + extra) if extra else edits


def _line_around(breaks: list[int], length: int, start: int, end: int | None = None) -> tuple[int, int]:
    """The span of the lines that hold ``[start, end)`` (``end`` None: the line of ``start``),
    line breaks excluded; ``breaks``: the offsets of the text's line breaks."""
    before = bisect_left(breaks, start)
    after = bisect_left(breaks, start if end is None else end)
    return (breaks[before - 1] + 1 if before else 0), (breaks[after] if after < len(breaks) else length)


def document_edits(text: str, tokens: list[Token], line_offsets: list[int]) -> list[Edit]:
    """The markup edits of a parsed document: outside its fences, indented code and front matter."""
    last = len(line_offsets) - 1
    code, markers = myst.code_and_directives(text, [t for t in tokens if not _hugo_lines(t)], line_offsets)
    rules = [
        Edit(line_offsets[min(t.map[0], last)], line_offsets[min(t.map[1], last)], "", "rule")
        for t in tokens
        if t.type in _RULES_TOKENS and t.map
    ]
    included = [  # mdBook's includes in code: the file shown there is not this text
        Edit(match.start(), match.end(), "", "include")
        for start, end in code
        for match in _MDBOOK_INCLUDE.finditer(text, start, end)
    ]
    return resolve(markers + find_edits(text, code) + rules + included)


def _hugo_lines(token: Token) -> bool:
    """Whether ``token`` is indented code made only of Hugo shortcodes: Hugo expands them before
    Markdown is read, so a reader sees their output (a tab pane), not code. They stand indented
    to match a list item that a fence at the margin had closed (``    {{% /tab %}}``)."""
    return token.type == "code_block" and _HUGO_LINES.fullmatch(token.content) is not None


def clean(text: str) -> str:
    """``text`` (a heading's or title's Markdown) as a reader sees it, but for its backslash
    escapes (the inline parser that reads headings after this resolves those itself) and what
    looks like a field list's name (``## :smile: Hi`` is an emoji). A heading may also end in an
    attribute list of bare keys (``{ data-search-exclude }``, MkDocs)."""
    if not text:
        return text
    shown = apply(text, [edit for edit in find_edits(text) if edit.kind not in _NOT_IN_HEADINGS])
    return _HEADING_KEYS.sub("", shown)


def markup_within(
    edits: list[Edit], start: int, end: int, avoid: list[tuple[int, int]]
) -> list[tuple[int, int, str]]:
    """The edits (sorted, apart) on ``[start, end)``, except those overlapping a span of
    ``avoid`` (HTML comments, which go whole): ``(start, end, shown)`` each. One that starts
    before ``start`` is cut to start there; one may end after ``end`` (into the blank lines
    after a block, or on into the next block)."""
    found = []
    for i in range(max(0, bisect_right(edits, (start,)) - 1), len(edits)):
        edit = edits[i]
        if edit.start >= end:
            break
        if edit.end <= start or any(a < edit.end and edit.start < b for a, b in avoid):
            continue
        shown = edit.shown if edit.start >= start else ""
        found.append((max(edit.start, start), edit.end, shown))
    return found


def code_span_end(
    text: str, opener: re.Match[str], end: int, blank_lines: NextMatch | None = None
) -> int | None:
    """End of the code span that the backticks ``opener`` open: at the next run of as many
    backticks within the paragraph; None if there is none (the backticks are then literal).
    ``blank_lines``: where the paragraph ends, kept across the openers of one text (each
    searching to the end of a long paragraph read it once per opener)."""
    blank_lines = blank_lines or NextMatch(BLANK_LINE, text, end)
    blank_line = blank_lines.at_or_after(opener.end())
    stop = blank_line.start() if blank_line else end
    for run in _BACKTICKS.finditer(text, opener.end(), stop):
        if len(run.group()) == len(opener.group()):
            return run.end()
    return None
