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
_TAB = re.compile(rf"^{_QUOTES}(===[+!]*[ \t]+\"(.*)\"[ \t]*)$", re.MULTILINE)
_DIV = re.compile(
    rf"^{_QUOTES}(:{{3,}}[ \t]*(?:\{{([^}}\n]*)\}}|([\w-]+))?[ \t]*"
    rf"(?:\[(.*)\]|\{{[^}}\n]*\}}|([^\n]*?))[ \t]*)$",
    re.MULTILINE,
)
_CALLOUT = re.compile(r"^(?:[ \t]*>)+[ \t]*(\[!([\w-]+)\][+-]?[ \t]*)(.*)$", re.MULTILINE)
_SNIPPET = re.compile(r"^[ \t]*(;?-{1,}8<-{1,}[ \t]*(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s]*)[ \t]*)$", re.MULTILINE)
_IMPORT = re.compile(
    r"^(?:import[ \t]+(?:[\w*{}\s,]+?[ \t\n]+from[ \t]+)?['\"][^'\"\n]+['\"];?[ \t]*(?=\n|\Z)|"
    r"export[ \t]+(?:const|let|var|function|default|class|async)\b[\s\S]*?(?=\n[ \t]*\n|\Z))",
    re.MULTILINE,
)
_REFERENCE = re.compile(
    r"^ {0,3}(\[[^\]\n]+\]:[ \t]*\S+(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*)$", re.MULTILINE
)
TYPES = {
    "note", "tip", "info", "caution", "danger", "warning", "important", "success", "question",
    "example", "quote", "abstract", "summary", "bug", "failure", "todo", "seealso", "attention",
    "hint", "error", "check", "done", "faq", "help", "fail", "missing", "cite", "tldr",
}  # fmt: skip
"""Admonition types whose name shows as the title when none is given (``!!! note`` → "Note")."""


def _type_title(kind: str | None) -> str:
    return kind.capitalize() if kind and kind.lower() in TYPES else ""


def admonitions(text: str, start: int, end: int) -> Iterator[Edit]:
    """``!!! note "Title"`` → "Title", ``??? tip`` → "Tip"; content tabs ``=== "Python"`` → "Python"."""
    for match in _ADMONITION.finditer(text, start, end):
        title = match.group(3) if match.group(3) is not None else _type_title(match.group(2))
        yield Edit(match.start(1), match.end(1), title, "admonition")
    for match in _TAB.finditer(text, start, end):
        yield Edit(match.start(1), match.end(1), match.group(2), "tab")


def divs(text: str, start: int, end: int) -> Iterator[Edit]:
    """``::: warning`` / ``:::tip[Title]`` / ``:::note Title`` / ``::: {.note}`` / ``:::``:
    the title given, else the type's name when it is an admonition type."""
    for match in _DIV.finditer(text, start, end):
        kind = match.group(3) or (match.group(2) or "").strip().lstrip(".").split(" ")[0]
        title = match.group(4) if match.group(4) is not None else (match.group(5) or "").strip()
        yield Edit(match.start(1), match.end(1), title or _type_title(kind), "div")


def callouts(text: str, start: int, end: int) -> Iterator[Edit]:
    """``> [!note] Title`` (Obsidian callouts, GitHub alerts): the title, else the type's name."""
    for match in _CALLOUT.finditer(text, start, end):
        shown = "" if match.group(3).strip() else match.group(2).capitalize()
        yield Edit(match.start(1), match.end(1), shown, "callout")


def statements(text: str, start: int, end: int) -> Iterator[Edit]:
    """Snippets lines (``--8<--``), MDX ``import``/``export`` statements and link reference
    definitions (``[id]: url``): no text for a reader."""
    for match in _SNIPPET.finditer(text, start, end):
        yield Edit(match.start(1), match.end(1), "", "snippet")
    for match in _IMPORT.finditer(text, start, end):
        yield Edit(match.start(), match.end(), "", "mdx")
    for match in _REFERENCE.finditer(text, start, end):
        yield Edit(match.start(1), match.end(1), "", "link")
