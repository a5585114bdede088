"""Line markers of Markdown's flavours, as edits: the title a reader sees, or nothing.

Admonitions (``!!! note "Title"``, ``??? tip``: the body is parsed as Markdown by
mdit-py-plugins' ``admon`` plugin in ``markdown``), content tabs (``=== "Python"``), fenced divs
and Docusaurus/Starlight asides (``::: warning``, ``:::tip[Title]`` … ``:::``), callouts and
GitHub alerts (``> [!note] Title``), snippets (``--8<-- "file"``), MDX ``import``/``export``
statements and link reference definitions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from semsearch.ingest.markup.edits import Edit

_QUOTES = r"(?:[ \t]*>)*[ \t]*"
_ADMONITION = re.compile(
    rf"^{_QUOTES}((?:!!!|\?\?\?\+?)[ \t]+([\w-]+)(?:[ \t]+[\w-]+)*(?:[ \t]+\"(.*)\")?[ \t]*)$", re.MULTILINE
)
_BLOCK = re.compile(rf"^{_QUOTES}(/{{3,}}[ \t]*(?:([\w-]+)[ \t]*(?:\|[ \t]*(.*?))?)?[ \t]*)$", re.MULTILINE)
"""pymdownx.blocks (FastAPI's docs): ``/// note | Title`` … ``///``, ``//// tab | Python``."""
_BLOCK_OPTIONS = re.compile(r"(?:\n(?: {4}|\t)[\w-]+:[^\n]*)+")
"""The YAML options indented under a block's header (``    attrs: {class: x}``)."""
_TAB = re.compile(rf"^{_QUOTES}(===[+!]*[ \t]+\"(.*)\"[ \t]*)$", re.MULTILINE)
_DIV = re.compile(
    rf"^{_QUOTES}(:{{3,}}[ \t]*(?:\{{([^}}\n]*)\}}|([\w-]+))?[ \t]*"
    rf"(?:\[(.*)\]|\{{[^}}\n]*\}}|([^\n]*?))[ \t]*)$",
    re.MULTILINE,
)
_ATTRIBUTES_AFTER = re.compile(r"[ \t]*(?:\{[^{}\n]*\}[ \t]*)?$")
"""Attributes ending a container's title (VitePress ``::: details Title {open}``) and spaces."""
_CALLOUT = re.compile(r"^(?:[ \t]*>)+[ \t]*(\[!([\w-]+)\][+-]?[ \t]*)(.*)$", re.MULTILINE)
_SNIPPET = re.compile(r"^[ \t]*(;?-{1,}8<-{1,}[ \t]*(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s]*)[ \t]*)$", re.MULTILINE)
_IMPORT = re.compile(
    r"^(?:import[ \t]+(?:[\w*{}\s,]+?[ \t\n]+from[ \t]+)?['\"][^'\"\n]+['\"];?[ \t]*(?=\n|\Z)|"
    r"export[ \t]+(?:const|let|var|function|default|class|async)\b[\s\S]*?(?=\n[ \t]*\n|\Z))",
    re.MULTILINE,
)
_REFERENCE = re.compile(
    rf"^{_QUOTES}(\[([^\]\n]+)\]:[ \t]*(?:\n{_QUOTES})?(?:<[^>\n]*>|\S+)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*)$",
    re.MULTILINE,
)
"""A link reference definition ``[id]: url "Title"``, in a list item or a quote too, its URL
maybe in angle brackets (``<{{% param repo %}}>``) or on the next line."""
_NOTHING_SHOWN = re.compile(
    r"^[ \t]{0,3}(?:\[\[?toc\]\]?|<<<[ \t]+\S[^\n]*|\*\[[^\]\n]+\]:[^\n]*)[ \t]*$",
    re.MULTILINE | re.IGNORECASE,
)
"""A table of contents marker (``[[toc]]``, ``[TOC]``), a VitePress file include (``<<< @/x.js``),
an abbreviation's definition (``*[HTML]: Hyper Text Markup Language``, shown only as a tooltip)."""
TYPES = {
    "note", "tip", "info", "caution", "danger", "warning", "important", "success", "question",
    "example", "quote", "abstract", "summary", "bug", "failure", "todo", "seealso", "attention",
    "hint", "error", "check", "done", "faq", "help", "fail", "missing", "cite", "tldr",
}  # fmt: skip
"""Admonition types whose name shows as the title when none is given (``!!! note`` → "Note")."""


def _type_title(kind: str | None) -> str:
    return kind.capitalize() if kind and kind.lower() in TYPES else ""


def admonitions(text: str, start: int, end: int) -> Iterator[Edit]:
    """``!!! note "Title"`` → "Title", ``??? tip`` → "Tip"; content tabs ``=== "Python"`` → "Python";
    pymdownx.blocks ``/// note | Hinweis`` → "Hinweis" (its options go), ``///`` → nothing."""
    for match in _ADMONITION.finditer(text, start, end):
        title = match.group(3) if match.group(3) is not None else _type_title(match.group(2))
        yield Edit(match.start(1), match.end(1), title, "admonition")
    for match in _TAB.finditer(text, start, end):
        yield Edit(match.start(1), match.end(1), match.group(2), "tab")
    for match in _BLOCK.finditer(text, start, end):
        title = match.group(3) if match.group(3) else _type_title(match.group(2))
        options = _BLOCK_OPTIONS.match(text, match.end(1), end) if match.group(2) else None
        yield Edit(match.start(1), options.end() if options else match.end(1), title, "admonition")


def divs(text: str, start: int, end: int) -> Iterator[Edit]:
    """``::: warning`` / ``:::tip[Title]`` / ``:::note Title`` / ``::: {.note}`` / ``:::``:
    the title given, else the type's name when it is an admonition type."""
    for match in _DIV.finditer(text, start, end):
        kind = match.group(3) or (match.group(2) or "").strip().lstrip(".").split(" ")[0]
        title = match.group(4)
        if title is None:
            title = _ATTRIBUTES_AFTER.sub("", match.group(5) or "")
        yield Edit(match.start(1), match.end(1), title or _type_title(kind), "div")


def callouts(text: str, start: int, end: int) -> Iterator[Edit]:
    """``> [!note] Title`` (Obsidian callouts, GitHub alerts): the title, else the type's name."""
    for match in _CALLOUT.finditer(text, start, end):
        shown = "" if match.group(3).strip() else match.group(2).capitalize()
        yield Edit(match.start(1), match.end(1), shown, "callout")


def statements(text: str, start: int, end: int) -> Iterator[Edit]:
    """Snippets lines (``--8<--``), MDX ``import``/``export`` statements, link reference
    definitions (``[id]: url``) and the lines of ``_NOTHING_SHOWN``: no text for a reader."""
    for match in _SNIPPET.finditer(text, start, end):
        yield Edit(match.start(1), match.end(1), "", "snippet")
    for match in _IMPORT.finditer(text, start, end):
        yield Edit(match.start(), match.end(), "", "mdx")
    for match in _REFERENCE.finditer(text, start, end):
        yield Edit(match.start(), match.end(1), "", "link")  # a quote's ">" too: the line goes
    for match in _NOTHING_SHOWN.finditer(text, start, end):
        yield Edit(match.start(), match.end(), "", "marker")


def reference_labels(text: str, segments: list[tuple[int, int]]) -> set[str]:
    """The labels the link reference definitions in ``segments`` of ``text`` define, as
    CommonMark matches them (case-folded, inner spaces collapsed)."""
    return {
        label_key(match.group(2))
        for start, end in segments
        for match in _REFERENCE.finditer(text, start, end)
        if not match.group(2).startswith("^")  # a footnote's definition
    }


def label_key(label: str) -> str:
    return " ".join(label.split()).casefold()
