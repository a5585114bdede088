"""Front matter that is not YAML, and a document's title from its front matter.

Hugo writes TOML between ``+++`` lines or a JSON object; some generators write ``key: value``
lines closed by a ``---`` line without an opening one (which CommonMark reads as a setext
heading). All are metadata: the parser starts after them, so they are never a chunk or a heading.
"""

from __future__ import annotations

import json
import re

_TOML = re.compile(r"\+\+\+[ \t]*\n(?:[\s\S]*?\n)?\+\+\+[ \t]*(?:\n|$)")
_JSON_END = re.compile(r"^\}[ \t]*$", re.MULTILINE)
_FIELD = re.compile(r"[A-Za-z][\w-]*:(?:[ \t].*)?")
_KNOWN_FIELDS = {"title", "date", "layout", "tags", "author", "description", "slug", "id", "sidebar_position"}
_TOML_TITLE = re.compile(r"""^title[ \t]*=[ \t]*(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)')""", re.MULTILINE)
_FIELD_TITLE = re.compile(r"^title:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
MAX_BLOCK = 1 << 20
"""Characters of a file's start looked at for such a block (a JSON object is parsed whole)."""


def other_front_matter(text: str) -> tuple[str, int] | None:
    """``(block, lines)``: the non-YAML front matter at the start of ``text`` and how many lines
    it takes, or None."""
    head = text[:MAX_BLOCK]
    if match := _TOML.match(head):
        return match.group(), match.group().count("\n") + (not match.group().endswith("\n"))
    if head.startswith("{") and (close := _JSON_END.search(head)):
        block = head[: close.end()]
        try:
            parsed = json.loads(block)
        except ValueError:
            return None
        if isinstance(parsed, dict):
            return block, block.count("\n") + 1
        return None
    lines = head.split("\n", 64)[:64]
    for number, line in enumerate(lines):
        if re.fullmatch(r"-{3,}[ \t]*", line) and number > 0:
            names = {line.split(":", 1)[0].lower() for line in lines[:number]}
            if number >= 2 or names & _KNOWN_FIELDS:
                return "\n".join(lines[: number + 1]), number + 1
            return None
        if not _FIELD.fullmatch(line):
            return None
    return None


def title_of(block: str) -> str | None:
    """The ``title`` of a non-YAML front matter block, if it has one as text."""
    if block.startswith("+++"):
        match = _TOML_TITLE.search(block)
        return None if match is None else (match.group(1) or match.group(2) or "").replace('\\"', '"')
    if block.startswith("{"):
        title = json.loads(block).get("title")
        return title if isinstance(title, str) else None
    match = _FIELD_TITLE.search(block)
    return match.group(1).strip("\"'") if match else None


def yaml_title(text: str) -> str | None:
    """The ``title:`` field of a file's YAML front matter, read as ``--where`` reads it."""
    from semsearch.ingest.frontmatter import read_front_matter

    title = read_front_matter(text).fields.get("title")
    return title if isinstance(title, str) else None
