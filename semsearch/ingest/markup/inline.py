"""Inline markup of Markdown's flavours, as edits: what each construct shows a reader.

Regular expressions over the source, outside code (``markup.protected`` finds code): markdown-it
gives no character offsets inside a line, and none of these constructs has a plugin that does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from semsearch.ingest.markup.blocks import label_key
from semsearch.ingest.markup.edits import Edit
from semsearch.ingest.markup.scan import NextMatch, closed_matches

_SHORTCODE = re.compile(
    r"\{\{([<%])(?!/\*)\s{0,100}(/?)\s{0,100}([\w./-]{0,100})([\s\S]{0,2000}?)\s{0,100}\1?[>%]\}\}"
)
_SHORTCODE_TEXT = re.compile(r"""\b(?:text|title|alt|caption)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_TERM = re.compile(r"""\bterm_id\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_FIRST_ARGUMENT = re.compile(r"""^\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=]+)(?!\S))""")
"""A shortcode's first positional argument, quoted or a bare word (Hugo splits the rest at spaces)."""
_TAB_HEADER = re.compile(r"""\b(?:header|name)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
"""A tab's label given by name: Docsy's ``header=``, Kubernetes' ``name=``."""
_LIQUID_TAG = re.compile(r"\{%-?[\s\S]{0,2000}?-?%\}")
_OPENAPI = re.compile(r"""^\{%-?[ \t]*openapi(?:-operation)?\b""")
_ARGUMENT = re.compile(r"""\b(path|method)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_LIQUID_OUTPUT = re.compile(r"\{\{-?[\s\S]{0,2000}?-?\}\}")
_INCLUDE = re.compile(r"\{\*[\s\S]{0,2000}?\*\}")
_PERCENTS = re.compile(r"%%")
_FOOTNOTE = re.compile(r"\[\^[^\]\s]+\](?::[ \t]*)?")
_LABEL_END = re.compile(r"[\]\s]")
_EMBED = re.compile(r"!\[\[[^\]\n]{0,1000}\]\]")
_WIKILINK = re.compile(r"\[\[([^\]|\n]{0,1000})(?:\|([^\]\n]{0,1000}))?\]\]")
_CODE_OR_BACKTICK = r"`[^`\n]{1,500}`|`(?![^`\n]{1,500}`)"
"""In a link's text, a code span (its brackets are code: ``[`[[links]]` to pages](u)``), else a
lone backtick (text): one way to read each backtick, so a text that is no link fails fast."""
_BRACKETED = rf"\[((?:(?!\n[ \t]*\n)[^\[\]`]|{_CODE_OR_BACKTICK}|\[[^\[\]\n]{{0,500}}\]){{0,1000}})\]"
_HUGO_IN_URL = r"\{\{[<%][^{}\n]{0,500}[>%]\}\}|\{(?!\{[<%])"
"""A shortcode making a link's URL (``[issues]({{% param _issues %}})``, Hugo), else a brace
that opens none: one way to read each brace."""
_DESTINATION = (
    rf"\(\s*(?:<[^>\n]{{0,2000}}>|(?:[^()\s{{]|\([^()\s]{{0,500}}\)|{_HUGO_IN_URL}){{0,2000}})"
    r"(?:\s+(?:\"[^\"]{0,500}\"|'[^']{0,500}'|\([^)]{0,500}\)))?\s*\)"
)
_IMAGE = re.compile(rf"!{_BRACKETED}{_DESTINATION}")
_LINK = re.compile(rf"(?<![!\]\\]){_BRACKETED}(?:{_DESTINATION}|\[[^\]\n]*\])")
_SHORTCUT = re.compile(r"(?<![\]!\\])\[([^\[\]\n]{1,999})\](?![\[(:])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^\s<>]*)>")
_ATTR_ITEM = r"""(?:[#.][\w:-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[\w.%-]+)|-)"""
_ATTRIBUTE_LIST = re.compile(rf"\{{:?[ \t]*{_ATTR_ITEM}(?:[ \t]+{_ATTR_ITEM})*[ \t]*\}}")
"""``{ #id .class }``: goes with the spaces before it."""
_ATTRIBUTE_OPTIONS = re.compile(r"\{::[^}\n]*\}|\{:[ \t]*\}")
_BRACE_OR_LINE_END = re.compile(r"[}\n]")
ICON_SETS = "material|octicons|fontawesome|simple"
_ICON = re.compile(rf":(?:{ICON_SETS})-[a-z0-9]+(?:-[a-z0-9]+)*:")
"""pymdownx.emoji's icons (MkDocs Material): ``:material-check-all:``, ``:octicons-file-16:``."""
_BLOCK_ID = re.compile(r"(?:[ \t]+|^)\^[A-Za-z0-9-]+[ \t]*$", re.MULTILINE)
_ESCAPE = re.compile(r"\\(?:([!-/:-@\[-`{-~])|$)", re.MULTILINE)
"""CommonMark's backslash escapes (ASCII punctuation) and a hard line break's backslash."""
_HIGHLIGHT = re.compile(r"==(?=\S)([^=\n]+?)(?<=\S)==")
_INSERT_DELETE = re.compile(r"(\^\^|~~)(?=\S)([^\n]+?)(?<=\S)\1")
_KEYS = re.compile(r"\+\+([\w-]+(?:\+[\w-]+)*)\+\+")


ESCAPE = "escape"


def _first(match: re.Match[str] | None) -> str:
    return "" if match is None else next((g for g in match.groups() if g is not None), "")


def shortcodes(text: str, start: int, end: int) -> Iterator[Edit]:
    """Hugo ``{{< name … >}}`` / ``{{% name … %}}``: the ``text=``/``title=`` they show, the
    argument of ``heading``, the label of a ``tab``, the term of a ``glossary_tooltip``, else
    nothing (what they expand to is not in the file)."""
    for match in closed_matches(_SHORTCODE, "{{", "}}", 2_410, text, start, end):
        name, arguments = match.group(3), match.group(4)
        shown = _first(_SHORTCODE_TEXT.search(arguments))
        if not shown and name == "heading":
            shown = _first(_FIRST_ARGUMENT.match(arguments))
        elif not shown and name == "tab":  # Docsy: the tab's label, ``{{% tab Make %}}``
            shown = _first(_TAB_HEADER.search(arguments) or _FIRST_ARGUMENT.match(arguments))
        elif not shown and name == "glossary_tooltip":  # Kubernetes docs: the term, as shown
            shown = _first(_TERM.search(arguments))
        yield Edit(match.start(), match.end(), shown, "shortcode")


def liquid(text: str, start: int, end: int) -> Iterator[Edit]:
    """Jekyll/Liquid (and Jinja) ``{% tag %}`` and ``{{ value }}``: nothing a file holds (but
    for GitBook's API operations: their method and path)."""
    for pattern, opener, closer in ((_LIQUID_TAG, "{%", "%}"), (_LIQUID_OUTPUT, "{{", "}}")):
        for match in closed_matches(pattern, opener, closer, 2_010, text, start, end):
            yield Edit(match.start(), match.end(), _operation(match.group()), "liquid")


def _operation(tag: str) -> str:
    """What GitBook shows for ``{% openapi-operation path="/x" method="get" %}``: "GET /x"."""
    if not _OPENAPI.match(tag):
        return ""
    found = {
        m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in _ARGUMENT.finditer(tag)
    }
    return " ".join(part for part in (found.get("method", "").upper(), found.get("path", "")) if part)


def includes(text: str, start: int, end: int) -> Iterator[Edit]:
    """``{* ../docs_src/x.py hl[3] *}`` (FastAPI's docs): a file shown there, not text."""
    for match in closed_matches(_INCLUDE, "{*", "*}", 2_010, text, start, end):
        yield Edit(match.start(), match.end(), "", "include")


def obsidian_comments(text: str, segments: list[tuple[int, int]]) -> Iterator[Edit]:
    """``%% … %%`` (Obsidian comments), code inside them too: the ``%%`` outside code pair up."""
    marks = [m.start() for start, end in segments for m in _PERCENTS.finditer(text, start, end)]
    for opening, closing in zip(marks[::2], marks[1::2], strict=False):  # an unclosed %% hides nothing
        yield Edit(opening, closing + 2, "", "obsidian-comment")


def footnotes(text: str, start: int, end: int) -> Iterator[Edit]:
    """Footnote references ``[^1]`` and the marker of their definitions ``[^1]:``."""
    for match in _footnote_references(text, start, end):
        yield Edit(match.start(), match.end(), "", "footnote")


def _footnote_references(text: str, start: int, end: int) -> Iterator[re.Match[str]]:
    """``_FOOTNOTE.finditer``, each ``[^`` tried only when a ``]`` ends its label (20,000 ``[^``
    and no ``]`` read the rest of the line 20,000 times)."""
    label_ends = NextMatch(_LABEL_END, text, end)
    position = start
    while (found := text.find("[^", position, end)) >= 0:
        position = found + 1
        close = label_ends.at_or_after(found + 2)
        if close is None or close.group() != "]" or (match := _FOOTNOTE.match(text, found, end)) is None:
            continue
        yield match
        position = match.end()


def wikilinks(text: str, start: int, end: int) -> Iterator[Edit]:
    """``![[embed]]`` shows another file (nothing here); ``[[Page|alias]]`` the alias,
    ``[[Page#Heading]]`` "Page > Heading" as Obsidian renders it, ``[[Page#^id]]`` the page."""
    for match in _EMBED.finditer(text, start, end):
        yield Edit(match.start(), match.end(), "", "embed")
    for match in _WIKILINK.finditer(text, start, end):
        if match.start() > 0 and text[match.start() - 1] == "!":
            continue
        target, alias = match.group(1), match.group(2)
        if alias is None:
            page, _, anchor = target.partition("#")
            anchor = "" if anchor.startswith("^") else anchor.replace("#", " > ")
            alias = " > ".join(part.strip() for part in (page, anchor) if part.strip())
        yield Edit(match.start(), match.end(), alias.strip(), "wikilink")


def links(text: str, start: int, end: int) -> Iterator[Edit]:
    """Markdown links and images: their text (an image's alt text), not their URL."""
    for match in _IMAGE.finditer(text, start, end):
        yield Edit(match.start(), match.end(), match.group(1), "link")
    for match in _LINK.finditer(text, start, end):
        inner = match.start(1)
        yield Edit(match.start(), inner, "", "link")
        yield Edit(match.end(1), match.end(), "", "link")
    for match in _AUTOLINK.finditer(text, start, end):
        yield Edit(match.start(), match.start(1), "", "link")
        yield Edit(match.end(1), match.end(), "", "link")


def shortcut_references(text: str, segments: list[tuple[int, int]], labels: set[str]) -> Iterator[Edit]:
    """``[label]`` where a definition ``[label]: url`` gives it a target (a shortcut reference
    link): its text, without the brackets. Other brackets are text."""
    for start, end in segments:
        for match in _SHORTCUT.finditer(text, start, end):
            if label_key(match.group(1)) in labels:
                yield Edit(match.start(), match.start(1), "", "link")
                yield Edit(match.end(1), match.end(), "", "link")


def attributes(text: str, start: int, end: int) -> Iterator[Edit]:
    """Attribute lists: Python-Markdown/MkDocs ``{ #id .class }``, Pandoc ``{#id}``/``{-}``,
    kramdown IALs ``{: .class}`` and ``{::options}``; Obsidian block ids ``^id``."""
    yield from _attribute_lists(text, start, end)
    for match in _BLOCK_ID.finditer(text, start, end):
        yield Edit(match.start(), match.end(), "", "block-id")


def _attribute_lists(text: str, start: int, end: int) -> Iterator[Edit]:
    """Each ``{…}`` that is an attribute list, with the spaces before it: tried where a brace
    is (a run of spaces is not read again from each of its positions), kramdown's options only
    when a ``}`` comes before the line ends (10,000 ``{::`` on a line: not 10,000 reads of it)."""
    closers = NextMatch(_BRACE_OR_LINE_END, text, end)
    position = taken = start
    while (brace := text.find("{", position, end)) >= 0:
        position = brace + 1
        first = brace
        if (match := _ATTRIBUTE_LIST.match(text, brace, end)) is not None:
            while first > taken and text[first - 1] in " \t":
                first -= 1
        elif (
            (close := closers.at_or_after(position)) is None
            or close.group() != "}"
            or (match := _ATTRIBUTE_OPTIONS.match(text, brace, end)) is None
        ):
            continue
        yield Edit(first, match.end(), "", "attributes")
        position = taken = match.end()


def escapes(text: str, start: int, end: int) -> Iterator[Edit]:
    """``rewrite\\_tag``, ``\\(CNCF\\)``: the character escaped, as a reader sees it (and as
    keywords need it: ``rewrite_tag`` is one word); a backslash ending a line (a hard break)
    goes."""
    for match in _ESCAPE.finditer(text, start, end):
        yield Edit(match.start(), match.end(), match.group(1) or "", ESCAPE)


def icons(text: str, start: int, end: int) -> Iterator[Edit]:
    """MkDocs Material's icon shortcodes (``:material-github:``): a picture, no text."""
    for match in _ICON.finditer(text, start, end):
        yield Edit(match.start(), match.end(), "", "icon")


def highlights(text: str, start: int, end: int) -> Iterator[Edit]:
    """``==marked==`` (Obsidian, pymdownx.mark), ``^^inserted^^`` and ``~~deleted~~``
    (pymdownx, GitHub): the markers go; keys ``++ctrl+alt+del++`` (pymdownx.keys): "ctrl+alt+del"."""
    for pattern, group in ((_HIGHLIGHT, 1), (_INSERT_DELETE, 2), (_KEYS, 1)):
        for match in pattern.finditer(text, start, end):
            yield Edit(match.start(), match.start(group), "", "highlight")
            yield Edit(match.end(group), match.end(), "", "highlight")
