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

_ATTRIBUTE = r"""\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?"""
_TAG = re.compile(rf"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:{_ATTRIBUTE})*)\s*/?>")
_RAW_TEXT = re.compile(r"<(script|style)\b[^>]{0,2000}>[\s\S]{0,200000}?</\1\s*>", re.IGNORECASE)
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
    """``<script>``/``<style>`` elements, content and all."""
    for match in _RAW_TEXT.finditer(text, start, end):
        yield Edit(match.start(), match.end(), "", "html")


def mdx_comments(text: str, start: int, end: int) -> Iterator[Edit]:
    for match in _MDX_COMMENT.finditer(text, start, end):
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


def jsx_tags(text: str, start: int, end: int) -> Iterator[Edit]:
    """Each JSX component tag (a capitalised name): gone, its ``title``/``label`` kept."""
    position = start
    while (match := _JSX_OPEN.search(text, position, end)) is not None:
        close = _tag_end(text, match.end(), end)
        if close is None:
            position = match.end()
            continue
        shown = " ".join(
            next(g for g in m.groups() if g is not None)
            for m in _JSX_SHOWN.finditer(text, match.end(), close)
        )
        yield Edit(match.start(), close, f" {shown} " if shown else " ", "jsx")
        position = close


def _tag_end(text: str, position: int, end: int) -> int | None:
    """The offset after the ``>`` closing a JSX tag whose attributes start at ``position``:
    quotes and braces (nested) are skipped; None if it does not close before ``end``."""
    depth, quote = 0, ""
    for i in range(position, min(end, position + 20_000)):
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
            return i + 1
        elif char == "<" and depth <= 0:
            return None
    return None


def entities(text: str, start: int, end: int) -> Iterator[Edit]:
    """Character references, decoded (``&nbsp;`` as a plain space)."""
    for match in _ENTITY.finditer(text, start, end):
        decoded = html.unescape(match.group()).replace("\xa0", " ")
        if decoded != match.group():
            yield Edit(match.start(), match.end(), decoded, "entity")
