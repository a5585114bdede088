"""Which of the files an index records changed since its build, found by looking at those files
alone: never by walking the documents folder meta.json names (a crafted ``docs_root`` of ``/``
would make every ``ask`` walk the disk and list names from anywhere).

Each recorded path, relative to ``docs_root``, is looked up with one ``stat``; a path that
leaves ``docs_root`` (``..``, an absolute path, or a symlink leading outside it) is not
followed and counts as changed. Files added since the build are not looked for here: a
``build`` (or ``build --dry-run``) finds them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from semsearch.store.file_records import FileRecord, SkippedRecord
from semsearch.util.printable import unreadable


def changed_recorded(
    docs_root: Path, recorded: Iterable[tuple[str, FileRecord | SkippedRecord]]
) -> list[str]:
    """The recorded files (each path and its record, read once) removed, modified (size or
    mtime) or no longer reachable inside ``docs_root`` since the build, sorted; entries without
    a size (symlinks not followed at build time) are not files to compare."""
    compared = ((path, entry) for path, entry in recorded if entry.size is not None)
    try:
        root = Path(os.path.realpath(docs_root))
        if not stat.S_ISDIR(os.stat(root).st_mode):
            return sorted(path for path, _ in compared)
    except (OSError, ValueError):
        return sorted(path for path, _ in compared)
    folders: dict[str, bool] = {}
    changed = []
    for relative, entry in compared:
        info = _stat_recorded(root, relative, folders)
        if info is None or (entry.size, entry.mtime_ns) != (info.st_size, info.st_mtime_ns):
            changed.append(relative)
    return sorted(changed)


def any_recorded_left(docs_root: Path, names: Iterable[str]) -> bool:
    """Whether any of the recorded ``names`` is still a file inside ``docs_root``, looked up as
    ``changed_recorded`` looks (by its real name: ``bad\\xff.md`` is recorded for the byte 0xFF)."""
    try:
        root = Path(os.path.realpath(docs_root))
    except (OSError, ValueError):
        return False
    folders: dict[str, bool] = {}
    return any(_stat_recorded(root, relative, folders) is not None for relative in names)


def _stat_recorded(root: Path, relative: str, folders: dict[str, bool]) -> os.stat_result | None:
    """``_stat_inside`` of a recorded name: as written, else as the name with the bytes that are
    not UTF-8 it records readably (``readable``; a UTF-8 name may hold ``\\xff`` itself)."""
    info = _stat_inside(root, relative, folders)
    if info is None and (real := unreadable(relative)) != relative:
        info = _stat_inside(root, real, folders)
    return info


def _stat_inside(root: Path, relative: str, folders: dict[str, bool]) -> os.stat_result | None:
    """The stat of ``root/relative`` when that is a regular file inside ``root`` (a symlink
    leading elsewhere inside counts, as the build followed it), else None. ``folders`` caches
    whether each parent folder's real path is inside ``root``."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    path = os.path.join(root, *parts)
    parent = os.path.dirname(path)
    if parent not in folders:
        folders[parent] = _inside(os.path.realpath(parent), root)
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            if not _inside(os.path.realpath(path), root):
                return None
            info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info if folders[parent] and stat.S_ISREG(info.st_mode) else None


def _inside(path: str, root: Path) -> bool:
    return path == str(root) or path.startswith(str(root).rstrip("/") + "/")
