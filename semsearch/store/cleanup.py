"""Removing a folder semsearch made (a staging folder, a swapped-out index, a build's journal)
so that a removal killed at any step leaves a folder still provably ours.

Such a folder carries ``STAGING_MARKER``, the proof that semsearch made it. Removed in the
order the files are listed, the marker could go first, and a kill after that would leave a
half-deleted folder no later build may touch. So everything else goes first, then the marker,
then the folder: killed before the marker goes, the folder is marked; after it, it is empty.
An empty folder of one of our exact names is taken as ours (nothing of anyone's is in it).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from contextlib import suppress
from pathlib import Path

from semsearch.store.schema import STAGING_MARKER


def marked(folder: Path) -> bool:
    """Whether ``folder`` is a real folder (not a link) holding our marker as a regular file."""
    try:
        return stat.S_ISDIR(os.lstat(folder).st_mode) and stat.S_ISREG(
            os.lstat(folder / STAGING_MARKER).st_mode
        )
    except OSError:
        return False


def empty_folder(folder: Path) -> bool:
    """Whether ``folder`` is a real folder (not a link) with nothing in it."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def ours(folder: Path) -> bool:
    """Whether a folder of one of our exact names may be removed: marked, or left empty by a
    removal killed after its marker went."""
    return marked(folder) or empty_folder(folder)


def remove_ours(folder: Path) -> None:
    """Remove ``folder`` (the caller checked it is ``ours``): every entry but the marker, then the
    marker, then the folder itself. Errors are ignored, as a later build tries again."""
    try:
        with os.scandir(folder) as listing:
            entries = [entry for entry in listing if entry.name != STAGING_MARKER]
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with suppress(OSError):
                os.unlink(entry.path)
    with suppress(OSError):
        os.unlink(folder / STAGING_MARKER)
    with suppress(OSError):
        os.rmdir(folder)


def remove_leftovers(index_dir: Path) -> None:
    """Remove folders left by a build killed while writing: our names only, and only when marked,
    or empty under exactly the name a build gives them (killed after the marker went)."""
    prefixes = (f".{index_dir.name}.new-", f".{index_dir.name}.old-")
    for entry in os.scandir(index_dir.parent):
        folder = Path(entry.path)
        if entry.name.startswith(prefixes) and (
            marked(folder) or (_staging_name(entry.name, index_dir) and empty_folder(folder))
        ):
            remove_ours(folder)


def _staging_name(name: str, index_dir: Path) -> bool:
    """Whether ``name`` is exactly one ``_new_staging`` makes (or its swapped-out ``.old-`` twin)."""
    return re.fullmatch(rf"\.{re.escape(index_dir.name)}\.(new|old)-[0-9a-f]{{8}}", name) is not None
