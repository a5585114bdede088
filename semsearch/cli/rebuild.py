"""A rebuild is a build as the index was built: the settings its record holds (``semsearch build``
with no DOCS or options; what they are is ``build.as_built``'s)."""

from __future__ import annotations

from pathlib import Path

from semsearch.build.as_built import BuildSettings
from semsearch.store.location import Location


def recorded_settings(index: Location) -> BuildSettings | None:
    """The docs folder, model, chunk budget and exclusions the index at ``index`` was built with
    (None: a new index, or one whose record cannot be read)."""
    from semsearch.build.as_built import settings_as_built
    from semsearch.store.meta import peek_meta
    from semsearch.store.stores import open_store

    if isinstance(index, Path):
        meta = peek_meta(index) if (index / "meta.json").is_file() else None
    else:
        meta = open_store(index).peek_meta()
    return settings_as_built(meta) if meta else None


def recorded_docs(index: Location, recorded: Path | None) -> Path:
    """The documents folder the index records (a rebuild), else ``docs``; a recorded folder that
    is gone is an error, never a silent switch to another folder."""
    from semsearch.errors import UsageError

    if recorded is None:
        return Path("docs")
    if not recorded.is_dir():
        raise UsageError(
            f"the index at {index}/ was built from {recorded}/, which no longer exists; "
            f"name the documents folder: semsearch build DOCS --index {index}"
        )
    return recorded
