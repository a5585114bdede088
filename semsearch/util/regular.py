"""Opening the files semsearch itself wrote (an index's, a journal's, a lock) only when they
are regular files: never through a symlink at the last step, never waiting on a FIFO or a
device, never reading more than a bound. Anything else raises ``NotRegularFile``, which the
readers turn into their one-line damaged-index error."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import numpy as np

NO_FOLLOW = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
TEXT_BOUND = 1 << 30
"""The largest JSON or text file of an index read whole (meta.json of a million files is
about 300 MB): a bigger one is damage or a trap, not something to read into memory."""
ARRAY_BOUND = 1 << 40
"""The largest array file memory-mapped (vectors of ten million chunks at 1024 dimensions are
40 GB): only its header is read, the rest is mapped on demand."""
SMALL_ARRAY_BOUND = 1 << 31
"""The largest array file read into memory whole (offsets, checksums)."""


class NotRegularFile(ValueError):
    """A file of semsearch's is a symlink, FIFO, device, folder or too big to read."""


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


def open_regular(path: Path | str, bound: int, flags: int = NO_FOLLOW) -> int:
    """A descriptor of ``path`` opened without following a final symlink and without blocking,
    checked to be a regular file of at most ``bound`` bytes (else ``NotRegularFile``; a missing
    file is ``FileNotFoundError``)."""
    name = os.path.basename(path)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise NotRegularFile(f"{name} is a symbolic link, not a file semsearch wrote") from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader, opened for writing
            raise NotRegularFile(f"{name} is a FIFO, not a file semsearch wrote") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise NotRegularFile(f"{name} is {kind}, not a file semsearch wrote")
        if info.st_size > bound:
            raise NotRegularFile(f"{name} is {info.st_size:,} bytes, more than an index file can be")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path | str, bound: int = TEXT_BOUND) -> bytes:
    """The whole of ``path``, a regular file of at most ``bound`` bytes (see ``open_regular``)."""
    fd = open_regular(path, bound)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(bound + 1)
    if len(data) > bound:  # it grew while read
        raise NotRegularFile(f"{os.path.basename(path)} is more than {bound:,} bytes")
    return data


def read_text(path: Path | str, bound: int = TEXT_BOUND, encoding: str = "utf-8") -> str:
    return read_regular(path, bound).decode(encoding)


def load_array(path: Path | str, mmap: bool = True, bound: int | None = None) -> np.ndarray:
    """A ``.npy`` array read from a regular file: memory-mapped (``mmap``) or read whole. Only
    plain dtypes (never pickled objects); the file's size must be exactly what its header says,
    so a truncated or padded file is an error here rather than a short read later."""
    bound = (ARRAY_BOUND if mmap else SMALL_ARRAY_BOUND) if bound is None else bound
    name = os.path.basename(path)
    fd = open_regular(path, bound)
    with os.fdopen(fd, "rb") as handle:
        shape, fortran, dtype = _header(handle, name)
        if dtype.hasobject:
            raise ValueError(f"{name} holds Python objects (pickled data), which are never loaded")
        offset = handle.tell()
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        size = os.fstat(fd).st_size
        if size != offset + nbytes:
            raise ValueError(f"{name} is {size:,} bytes, its header says {offset + nbytes:,}")
        order = "F" if fortran else "C"
        if nbytes == 0:
            return np.empty(shape, dtype=dtype, order=order)
        if mmap:
            return np.memmap(handle, dtype=dtype, mode="r", shape=shape, order=order, offset=offset)
        data = handle.read(nbytes)
    return np.frombuffer(data, dtype=dtype).reshape(shape, order=order)


def _header(handle, name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """The shape, order and dtype a ``.npy`` header gives; ValueError for any damage (numpy
    parses the header as a Python literal: a flipped bit can raise nearly anything)."""
    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            return np.lib.format.read_array_header_1_0(handle)
        if version == (2, 0):
            return np.lib.format.read_array_header_2_0(handle)
    except Exception as exc:  # noqa: BLE001 - SyntaxError, TokenError, MemoryError...
        raise ValueError(f"{name} has a damaged header") from exc
    raise ValueError(f"{name} has an unknown .npy version {version}")


def lock_file_held(path: Path) -> bool:
    """Whether another process holds a ``flock`` on the regular file ``path`` (opened read-only;
    none there: False)."""
    import fcntl

    try:
        fd = open_regular(path, 1 << 20)
    except (OSError, ValueError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False
