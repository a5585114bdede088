"""Which index a command uses when none is named: the nearest ``index/`` from the current
folder upwards, within what the user owns (see ``find_index``)."""

from __future__ import annotations

import os
from pathlib import Path

from semsearch.store.folder import is_semsearch_index


def _owner(path: Path) -> int | None:
    """The uid owning ``path`` (the link itself, not followed), None when it cannot be seen."""
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def find_index(start: Path, name: str = "index") -> Path | None:
    """The nearest ``name/`` folder that is a semsearch index, from ``start`` upwards (as git finds
    ``.git``), or None. The search stops, as git's ``safe.directory`` does, at the user's home
    folder (its own index counts, nothing above it) and at a folder, or an index, owned by
    someone other than the user: an index planted in ``/tmp`` or a shared folder is never used
    unasked."""
    me = os.geteuid()
    home = _home()
    for folder in (start, *start.parents):
        if _owner(folder) != me:
            return None
        candidate = folder / name
        if _owner(candidate) == me and candidate.is_dir() and is_semsearch_index(candidate):
            return candidate
        if home is not None and folder == home:
            return None
    return None


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (OSError, RuntimeError):
        return None
