"""Raw HTML and JSX in Markdown, reduced to the text a reader sees.

Tags are found as CommonMark defines an HTML tag (the spec's open/closing tag grammar), JSX
components (``<Tabs>``, ``<Aside title="…">``, attribute values in braces, over several lines)
by a small scanner, since no HTML library gives source offsets for a fragment. Entities are
decoded with the stdlib's ``html.unescape``. ``<script>``/``<style>`` go with their content;
``<img>`` leaves its ``alt`` text; a component leaves its ``title``/``label`` text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from semsearch.ingest.markup.edits import Edit
from semsearch.ingest.markup.scan import NextMatch, closed_matches

_ATTRIBUTE = r"""\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?"""
_TAG = re.compile(rf"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:{_ATTRIBUTE})*)\s*/?>")
_RAW_OPEN = re.compile(r"<(script|style)\b[^>]{0,2000}>", re.IGNORECASE)
_RAW_CLOSE = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in ("script", "style")}
RAW_TEXT_LONGEST = 200_000
"""The most characters a ``<script>``/``<style>`` element holds to go whole."""
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_ALT = re.compile(r"""\balt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)
_BREAKING = {
    "br", "p", "div", "li", "tr", "td", "th", "hr", "table", "thead", "tbody", "ul", "ol", "dl",
    "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "section", "details", "summary", "blockquote",
    "figure", "figcaption", "pre", "center", "select", "option", "iframe",
}  # fmt: skip
"""Tags that separate words when rendered: they leave a space, the others nothing."""
_JSX_OPEN = re.compile(r"<(/?)([A-Z][\w]*(?:\.[\w]+)*)(?=[\s/>])")
_JSX_SHOWN = re.compile(r"""\b(?:title|label)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_MDX_COMMENT = re.compile(r"\{/\*[\s\S]{0,5000}?\*/\}")


def raw_text_elements(text: str, start: int, end: int) -> Iterator[Edit]:
    """``<script>``/``<style>`` elements, content and all (closed within ``RAW_TEXT_LONGEST``
    characters; each closing tag is searched for once, however many openers come before it)."""
    closers = {name: NextMatch(pattern, text, end) for name, pattern in _RAW_CLOSE.items()}
    position = start
    while (opener := _RAW_OPEN.search(text, position, end)) is not None:
        close = closers[opener.group(1).lower()].at_or_after(opener.end())
        if close is None or close.start() - opener.end() > RAW_TEXT_LONGEST:
            position = opener.start() + 1
            continue
        yield Edit(opener.start(), close.end(), "", "html")
        position = close.end()


def mdx_comments(text: str, start: int, end: int) -> Iterator[Edit]:
    for match in closed_matches(_MDX_COMMENT, "{/*", "*/}", 5_010, text, start, end):
        yield Edit(match.start(), match.end(), "", "jsx")


def html_tags(text: str, start: int, end: int) -> Iterator[Edit]:
    """Each HTML tag: gone, a space for one that breaks words, its ``alt`` text for an image."""
    for match in _TAG.finditer(text, start, end):
        name = match.group(2).lower()
        shown = ""
        if name == "img" and (alt := _ALT.search(match.group(3))):
            shown = f" {next(group for group in alt.groups() if group is not None)} "
        elif name in _BREAKING:
            shown = " "
        yield Edit(match.start(), match.end(), shown, "html")


JSX_TAG_LONGEST = 20_000
"""The most characters a JSX tag's attributes span (props over many lines)."""
JSX_SCAN_SHORT = 200
"""The window each tag gets once the scans of a text have read ``_jsx_budget`` characters."""


def jsx_tags(text: str, start: int, end: int) -> Iterator[Edit]:
    """Each JSX component tag (a capitalised name): gone, its ``title``/``label`` kept.

    A tag's end is scanned for (quotes and braces skipped) over at most ``JSX_TAG_LONGEST``
    characters; the scans of one text read at most a few times its length in all, after which
    each tag is given a short window (10,000 ``<A {`` on a line read 20,000 characters each)."""
    budget = 4 * (end - start) + 100_000
    position = start
    while (match := _JSX_OPEN.search(text, position, end)) is not None:
        window = JSX_TAG_LONGEST if budget > 0 else JSX_SCAN_SHORT
        close, reached = _tag_end(text, match.end(), min(end, match.end() + window))
        budget -= reached - match.end()
        if close is None:
            position = match.end()
            continue
        shown = " ".join(
            next(g for g in m.groups() if g is not None)
            for m in _JSX_SHOWN.finditer(text, match.end(), close)
        )
        yield Edit(match.start(), close, f" {shown} " if shown else " ", "jsx")
        position = close


def _tag_end(text: str, position: int, end: int) -> tuple[int | None, int]:
    """The offset after the ``>`` closing a JSX tag whose attributes start at ``position``
    (quotes and braces, nested, skipped; None if it does not close before ``end``), and the
    offset the scan reached."""
    depth, quote = 0, ""
    for i in range(position, end):
        char = text[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'`" and (depth or text[i - 1] in "= \t\n{"):
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == ">" and depth <= 0:
            return i + 1, i + 1
        elif char == "<" and depth <= 0:
            return None, i
    return None, end


def entities(text: str, start: int, end: int) -> Iterator[Edit]:
    """Character references, decoded (``&nbsp;`` as a plain space)."""
    for match in _ENTITY.finditer(text, start, end):
        decoded = html.unescape(match.group()).replace("\xa0", " ")
        if decoded != match.group():
            yield Edit(match.start(), match.end(), decoded, "entity")
