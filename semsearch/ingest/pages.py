"""What a page is called: its title and its aliases, as a reader of the folder names it.

The title is the document's first ``#`` heading, else its front matter's ``title``
(``markdown.ParsedDocument.title``), else its file name when that is words (``Block-Anchors.md``
is "Block Anchors"; ``index.md``, ``README.md`` or ``0042.md`` name no topic). Aliases are the
front matter's ``aliases`` (Obsidian's other names for a note); those written as paths or URLs
(Hugo's ``aliases`` are old addresses of the page) name nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from semsearch.ingest.frontmatter import Value

TITLES_VERSION = 1
"""Recorded in the chunking settings (``titles``): an index without it recorded no titles, and its
next build re-chunks every file (keeping the vectors of unchanged texts) to learn them."""

_NOT_A_TOPIC = re.compile(r"_?(?:index|readme|home|default|main|untitled)", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{2,}")
ALIAS_FIELDS = ("aliases", "alias")


def file_title(source: str) -> str:
    """The file name of ``source`` as words ("" when it names no topic: an id, ``index.md``)."""
    stem = source.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if _NOT_A_TOPIC.fullmatch(stem) or not _WORD.search(stem):
        return ""
    return " ".join(stem.replace("_", " ").replace("-", " ").split())


def page_names(title: str, source: str, fields: Mapping[str, Value]) -> tuple[str, ...]:
    """The names of a page: its title (``title``, else ``file_title``) first, then its aliases;
    empty when it has none."""
    names = [title.strip() or file_title(source)] if (title.strip() or file_title(source)) else []
    for key in ALIAS_FIELDS:
        value = fields.get(key)
        for alias in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            if isinstance(alias, str) and _is_name(alias) and alias.strip() not in names:
                names.append(alias.strip())
    return tuple(names)


def _is_name(alias: str) -> bool:
    alias = alias.strip()
    return bool(alias) and "/" not in alias and "://" not in alias and not alias.startswith((".", "#"))
