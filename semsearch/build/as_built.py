"""The settings to rebuild an index as it was built: the docs folder, model, chunk budget and
exclusions its record holds (``semsearch build`` with no DOCS or options, ``Collection.refresh``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from semsearch.store.meta import IndexMeta


@dataclass(frozen=True)
class BuildSettings:
    """What ``build_index`` needs, besides the index, to build it again as it was built."""

    docs: Path
    model: str
    max_tokens: int
    excludes: tuple[str, ...]


def settings_as_built(meta: IndexMeta) -> BuildSettings:
    """The settings ``meta`` records its index was built with."""
    return BuildSettings(
        docs=Path(meta.docs_root),
        model=meta.model.spec,
        max_tokens=meta.chunking.max_tokens,
        excludes=tuple(meta.excludes),
    )
