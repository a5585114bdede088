"""MyST Markdown (Sphinx, Jupyter Book), as edits: what a reader of the built page sees.

- targets ``(label)=``, comments ``% text`` (``comments``) and block breaks ``+++``: lines that
  show nothing;
- roles ``{ref}`text <target>```: the text (``{doc}`page``` the target);
- directives in a fence whose body is prose (```` ```{note} ````, ```` ```{admonition} Title ````,
  ``{dropdown}``, ``{list-table}``…): the fence lines go (the title shows), so do the options at
  the top of the body (``:class: tip``, or a ``---`` block of them), and the body is Markdown
  like any other; every other directive (``{code-block}``, ``{math}``, ``{toctree}``…) stays code.
  Colon fences ``:::{note}`` are fenced divs (``blocks.divs``); their options go here.

mdit-py-plugins' ``myst_blocks``/``myst_role`` recognise some of these but give no character
offsets inside a line, and none of them reads a directive's body, so these are expressions over
the source like the other rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from semsearch.ingest.markup.blocks import TYPES
from semsearch.ingest.markup.edits import Edit
from semsearch.ingest.markup.inline import ICON_SETS
from semsearch.ingest.markup.parser import block_parser

if TYPE_CHECKING:
    from markdown_it.token import Token

_LINES = re.compile(r"^[ \t]{0,3}(?:\([^()\s]{1,500}\)=|\+\+\+(?:[ \t][^\n]*)?)[ \t]*$", re.MULTILINE)
"""A target ``(label)=``, a block break ``+++``."""
_COMMENT = re.compile(r"^[ \t]{0,3}%(?!%)(?:[ \t][^\n]*)?$\n?", re.MULTILINE)
"""A comment ``% text`` (not Obsidian's ``%%``), backticks in it too."""
_FIELD = re.compile(
    rf"^[ \t]{{0,3}}(:(?!(?:{ICON_SETS})-)([\w-]+(?: [\w-]+)*):)(?=[ \t]|$)",
    re.MULTILINE,
)
"""A field list's name (``:class: CSS classes``, docutils and MyST): shown as "class:"."""
FIELD = "myst-field"
_ROLE = re.compile(r"\{([A-Za-z][\w+:-]{0,100})\}(`+)(?!`)([^\n`]{1,2000}?)\2(?!`)")
_ROLE_TARGET = re.compile(r"^(.*?)\s*<[^<>]*>$", re.DOTALL)
_COLON_DIRECTIVE = re.compile(r"^[ \t]*:{3,}[ \t]*\{[\w:-]+\}[^\n]*\n", re.MULTILINE)
_OPTION = re.compile(r"[ \t]*:[\w-]+:(?:[ \t][^\n]*)?(?:\n|$)")
_DIRECTIVE = re.compile(r"\{([\w:-]+)\}[ \t]*(.*)")
PROSE = TYPES | {
    "admonition", "dropdown", "versionadded", "versionchanged", "deprecated", "topic", "sidebar",
    "margin", "epigraph", "pull-quote", "highlights", "rubric", "card", "grid", "grid-item",
    "grid-item-card", "tab-set", "tab-item", "figure", "list-table", "glossary", "div", "container",
    "centered", "hlist", "only", "button-ref", "button-link", "image", "toctree",
}  # fmt: skip
"""Directives whose body is Markdown a reader sees as text, or nothing but options (an image);
the rest is code or generated."""
_TITLED = {"admonition", "dropdown", "topic", "sidebar", "rubric", "card", "grid-item-card", "tab-item"}
"""Directives whose argument is a title a reader sees."""


def statements(text: str, start: int, end: int) -> Iterator[Edit]:
    """Targets and block breaks (lines that show nothing), the options opening a colon-fenced
    directive's body (``:::{note}`` then ``:class: tip``), the names of field lists."""
    for match in _LINES.finditer(text, start, end):
        yield Edit(match.start(), match.end(), "", "myst")
    for match in _COLON_DIRECTIVE.finditer(text, start, end):
        yield from _options(text, match.end(), end)
    for match in _FIELD.finditer(text, start, end):
        yield Edit(match.start(1), match.end(1), f"{match.group(2)}:", FIELD)


def comments(text: str, segments: list[tuple[int, int]]) -> list[Edit]:
    """The comment lines ``% text`` in ``segments`` (outside code blocks): found before code spans,
    since a comment may hold an unclosed backtick fence (``% ```mermaid``)."""
    return [
        Edit(match.start(), match.end(), "", "myst-comment")
        for start, end in segments
        for match in _COMMENT.finditer(text, start, end)
    ]


def roles(text: str, start: int, end: int) -> Iterator[Edit]:
    """``{ref}`text <target>``` → "text"; ``{term}`word``` → "word" (the role and its code span)."""
    for match in _ROLE.finditer(text, start, end):
        content = match.group(3).strip()
        titled = _ROLE_TARGET.match(content)
        yield Edit(match.start(), match.end(), titled.group(1) if titled else content, "myst-role")


def directive_fence(text: str, fence: Token, line_offsets: list[int]) -> list[Edit] | None:
    """The edits of a fenced directive whose body is prose (its fence lines, its options); None
    when the fence is code (any other info string, or a directive whose body is not prose)."""
    found = _DIRECTIVE.fullmatch(fence.info.strip())
    if found is None or found.group(1).lower() not in PROSE or fence.map is None:
        return None
    name, argument = found.group(1).lower(), found.group(2).strip()
    last = len(line_offsets) - 1
    opening, body = line_offsets[min(fence.map[0], last)], line_offsets[min(fence.map[0] + 1, last)]
    end = line_offsets[min(fence.map[1], last)]
    title = argument if name in _TITLED else name.capitalize() if name in TYPES and not argument else ""
    edits = [Edit(opening, body, f"{title}\n" if title else "", "myst-directive")]
    closing = text.rfind("\n", body, max(body, end - 1)) + 1
    if closing > body and text[closing:end].strip().strip("`~") == "":
        edits.append(Edit(closing, end, "", "myst-directive"))
    return edits + list(_options(text, body, closing if closing > body else end))


def _options(text: str, start: int, end: int) -> Iterator[Edit]:
    """A directive's options at ``start``: ``:key: value`` lines, or a ``---`` block of them."""
    if text.startswith("---", start):
        close = text.find("\n---", start + 3, end)
        if close >= 0:
            after = text.find("\n", close + 4)
            yield Edit(start, end if after < 0 else min(after + 1, end), "", "myst-options")
        return
    position = start
    while position < end and (option := _OPTION.match(text, position, end)):
        yield Edit(option.start(), option.end(), "", "myst-options")
        position = option.end()


CODE_TOKENS = {"fence", "code_block", "front_matter", "math_block", "amsmath"}
"""Tokens of code (and front matter): no rule reads inside them, but a fenced directive's body."""


def code_and_directives(
    text: str, tokens: list[Token], line_offsets: list[int]
) -> tuple[list[tuple[int, int]], list[Edit]]:
    """The code among ``tokens`` (offset spans) and the edits of the fenced directives whose body
    is prose (``directive_fence``), whose own code and directives are found the same way (a
    ``{div}`` holding ``{button-ref}`` fences): the body parsed as a document of its own."""
    last = len(line_offsets) - 1
    code: list[tuple[int, int]] = []
    edits: list[Edit] = []
    for token in tokens:
        if token.type not in CODE_TOKENS or not token.map:
            continue
        end = line_offsets[min(token.map[1], last)]
        directive = directive_fence(text, token, line_offsets) if token.type == "fence" else None
        if directive is None:
            code.append((line_offsets[min(token.map[0], last)], end))
            continue
        start = directive[0].end
        body = text[start:end]
        offsets = [start, *(start + m.end() for m in re.finditer("\n", body)), end]
        inner = block_parser(front_matter=False).parse(body)
        inner_code, inner_edits = code_and_directives(text, inner, offsets)
        code += inner_code
        edits += directive + inner_edits
    return code, edits
