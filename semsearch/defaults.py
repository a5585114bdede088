"""The defaults the command line, the library and the MCP server share: one place each."""

from __future__ import annotations

from enum import Enum


class Mode(str, Enum):
    """How ``ask`` ranks passages (see ``retrieve.searcher.Searcher.ranked``)."""

    hybrid = "hybrid"
    dense = "dense"
    keyword = "keyword"


class Expand(str, Enum):
    """What ``ask --context`` gives a model around each hit (see ``context.expand``)."""

    chunk = "chunk"
    section = "section"
    file = "file"


MODES = tuple(mode.value for mode in Mode)
DEFAULT_MODE = Mode.hybrid.value
DEFAULT_K = 3
"""Passages shown at most, in ``ask``, ``Collection.search`` and MCP ``search``."""
