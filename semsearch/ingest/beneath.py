"""Where a symlink in the docs folder may lead, and opening a file inside the folder without
following any symlink, so that what is read is the file that was checked.

A file is listed (and its symlink, if any, checked to lead inside the folder, to no hidden or
excluded path) some time before it is read. Opening its path then would follow whatever link
was put there since: replace ``a.md`` by a link to ``~/.ssh/config`` in between, and that file
was indexed (issue 22). So a file is opened by the path it was checked at, relative to the
folder's real path, one component at a time from the folder's descriptor, with ``O_NOFOLLOW``
at each step: a link swapped in anywhere on that path makes the open fail instead of being
followed, and nothing outside the folder can be reached.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
SUPPORTED = bool(_NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd
"""Where descriptors relative to a folder exist (Linux, macOS, the BSDs)."""

LINK_ERRORS = {errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", errno.ELOOP)}
"""What ``O_NOFOLLOW`` gives for a link in the way: ELOOP (Linux, macOS), EMLINK (FreeBSD),
ENOTDIR (a link, or a file, where a folder was)."""


def refused_target(target: tuple[str, ...], spec, readable: Callable[[str], str]) -> str | None:
    """Why a symlink inside the docs folder is not followed to ``target`` (its real path,
    relative to the folder): a hidden file or folder, or an excluded one, on the way. ``spec``:
    the exclusions (``ignorefile.exclude_spec``), matched against names made ``readable``."""
    if not target:
        return "symlink to the docs folder itself, not followed"
    if any(part.startswith(".") for part in target):
        return "symlink to a hidden file or folder, not followed"
    names = [readable("/".join(target[:depth])) for depth in range(1, len(target) + 1)]
    if spec and (any(spec.match_file(name + "/") for name in names[:-1]) or spec.match_file(names[-1])):
        return f"symlink to an excluded path ({names[-1]}), not followed"
    return None


_KINDS = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISDIR, "folder"),
)


def not_regular(mode: int) -> str | None:
    """Why a file of this mode is not read (None: a regular file). Reading a FIFO or a device
    can block forever or never end, so only regular files are read."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "special file")
    return f"not a regular file ({kind})"


class LinkInTheWay(OSError):
    """A symlink (or a file where a folder was) on the path appeared after it was listed."""


def open_beneath(root: Path, parts: Sequence[str]) -> int:
    """A read-only, non-blocking descriptor of ``root/parts...``, where ``root`` is a real path
    (no symlink in it) and no component of ``parts`` may be a symlink.

    Raises ``LinkInTheWay`` when one is, ``OSError`` when the file cannot be opened."""
    if not parts or any(part in ("", ".", "..") or "/" in part for part in parts):
        raise ValueError(f"not a plain relative path: {parts!r}")
    if not SUPPORTED:  # no race-free walk here: open, then check where the file really is
        return _open_then_check(root, parts)
    folder = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = _step(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, folder)
            os.close(folder)
            folder = inner
        return _step(parts[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, folder)
    finally:
        os.close(folder)


def _step(name: str, flags: int, folder: int) -> int:
    try:
        return os.open(name, flags, dir_fd=folder)
    except OSError as exc:
        if exc.errno in LINK_ERRORS:
            raise LinkInTheWay(exc.errno, exc.strerror) from None
        raise


def _open_then_check(root: Path, parts: Sequence[str]) -> int:
    path = root.joinpath(*parts)
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    if Path(os.path.realpath(path)) != path:
        os.close(fd)
        raise LinkInTheWay(errno.ELOOP, "a symlink is on the path")
    return fd
