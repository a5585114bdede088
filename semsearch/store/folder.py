"""The index on disk: which folder may hold one, the build lock, and atomic writes (reading it
back: ``reader``; its format: ``schema``; meta.json: ``meta``).

An index is a folder holding only the files in ``INDEX_FILES``. A build writes a fresh folder
beside the old one and swaps the two with one atomic rename, so an interrupted build never
leaves a half-written index and a reader sees the old or the new one, never a mix.

Safety rules, each enforced here and nowhere else:

- a folder is replaced only when it is provably a semsearch index (``meta.json`` carrying the
  format marker, and nothing but index files) or empty; anything else is refused untouched;
- leftovers of a killed build are removed only when their name is exactly ours (no globbing)
  and they carry the marker file a build writes into every folder it stages;
- every write (a build, ``eval --calibrate``) holds the index's lock and checks that the index
  on disk is still the one it read.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np

from semsearch.encode.keywords import KeywordIndex
from semsearch.encode.pages import PageIndex
from semsearch.errors import (
    IndexBusyError,
    IndexChangedError,
    IndexLocationError,
    IndexWriteError,
    ModelError,
)
from semsearch.ingest.chunk import Chunk
from semsearch.store.chunkfile import write_chunks
from semsearch.store.cleanup import remove_leftovers, remove_ours
from semsearch.store.meta import (
    META_TEMP_PREFIX,
    IndexMeta,
    discard,
    fsync_file,
    marked_as_index,
    replace_meta,
    write_meta,
)
from semsearch.store.reader import bad_rows, identity
from semsearch.store.schema import INDEX_FILES, META_FILE, STAGING_MARKER
from semsearch.util.regular import lock_file_held, open_regular

# Where an index may be written


def _is_index_file(name: str) -> bool:
    return name in INDEX_FILES or name == STAGING_MARKER or name.startswith(META_TEMP_PREFIX)


def _foreign_entries(folder: Path) -> list[str] | None:
    """The names in ``folder`` that semsearch did not create (a folder or link named like an
    index file included), sorted; None when the folder cannot be listed."""
    try:
        return sorted(
            entry.name
            for entry in os.scandir(folder)
            if not (_is_index_file(entry.name) and entry.is_file(follow_symlinks=False))
        )
    except OSError:
        return None


def is_semsearch_index(folder: Path) -> bool:
    """Whether ``folder`` is provably an index written by semsearch: its meta.json has the
    format marker, and it holds nothing but index files."""
    return marked_as_index(folder) and _foreign_entries(folder) == []


def _refusal(index_dir: Path) -> IndexLocationError:
    """Why the non-empty folder ``index_dir``, not provably an index, is not replaced."""
    foreign = _foreign_entries(index_dir)
    if foreign and marked_as_index(index_dir):  # an index, with files of the user's added
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        return IndexLocationError(
            f"{index_dir} holds files semsearch did not create ({shown}); refusing to replace it: "
            "move them out, or choose another folder for the index"
        )
    try:
        names = {entry.name for entry in os.scandir(index_dir)}
    except OSError:
        names = set()
    if META_FILE in names and all(map(_is_index_file, names)):
        return IndexLocationError(
            f"{index_dir} looks like a damaged semsearch index (meta.json unreadable) that cannot "
            "be proven ours, so it is left as it is: remove it yourself, or choose another folder"
        )
    return IndexLocationError(
        f"{index_dir} is not empty and is not a semsearch index; refusing to replace it "
        "(choose an empty or new folder for the index)"
    )


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def writable_target(index_dir: Path, docs: Path | None = None) -> Path:
    """The real folder a build of ``docs`` may write its index to, or an error that explains why
    ``index_dir`` cannot be one. A symlink is followed to its target folder."""
    index_dir = Path(index_dir)
    if index_dir.is_symlink():
        target = index_dir.resolve()
        if not target.exists():
            raise IndexLocationError(
                f"the index path {index_dir} is a symlink to {target}, which does not exist"
            )
        index_dir = target
    index_dir = index_dir.absolute()
    if index_dir.exists() and not index_dir.is_dir():
        raise IndexLocationError(f"{index_dir} is a file, not an index folder")
    if docs is not None:
        real_docs, real_index = Path(docs).resolve(), index_dir.resolve()
        if _inside(real_index, real_docs):
            beside = shlex.quote(str(real_docs.parent / f"{real_docs.name}-index"))
            raise IndexLocationError(
                f"the index {index_dir} would be inside the documents folder {docs}; "
                f"keep it beside the folder, for example --index {beside}"
            )
        if _inside(real_docs, real_index):
            raise IndexLocationError(f"the documents folder {docs} is inside the index folder {index_dir}")
    if index_dir.is_dir() and any(index_dir.iterdir()) and not is_semsearch_index(index_dir):
        raise _refusal(index_dir)
    return index_dir


# The lock


def _lock_path(index_dir: Path) -> Path:
    return index_dir.parent / f".{index_dir.name}.lock"


LOCK_MARK = b"semsearch build lock\n"
"""Written into a lock file semsearch creates: only such a file is ever removed."""


def _open_lock(path: Path) -> tuple[int, bool]:
    """The lock file's descriptor, and whether it is semsearch's (created now, or marked by an
    earlier build). Never follows a symlink, never waits on a FIFO, never writes to a file it did
    not create; a mark that cannot be written (disk full) leaves no file behind."""
    flags = os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        fd = open_regular(path, 1 << 20, flags)
        return fd, os.pread(fd, len(LOCK_MARK) + 1, 0) == LOCK_MARK
    try:
        if os.write(fd, LOCK_MARK) != len(LOCK_MARK):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except BaseException:
        discard(path)
        os.close(fd)
        raise
    return fd, True


def build_running(index_dir: Path) -> bool:
    """Whether another process holds the index's lock now (a build writing it). Opens an
    existing lock file read-only and creates none: a dry run may ask and write nothing."""
    return lock_file_held(_lock_path(Path(index_dir).absolute()))


@contextmanager
def index_lock(index_dir: Path) -> Iterator[None]:
    """Hold the index's lock (a hidden file beside it, removed on release when semsearch made
    it); another holder makes this fail at once. Unix ``flock``: released if the process dies."""
    import fcntl

    index_dir = Path(index_dir).absolute()
    path = _lock_path(index_dir)
    try:
        index_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IndexWriteError(f"cannot create {index_dir.parent}: {exc.strerror or exc}") from exc
    while True:
        try:
            fd, ours = _open_lock(path)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise IndexWriteError(f"cannot create the lock file {path}: {reason}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise IndexBusyError(
                f"another semsearch process is writing {index_dir}/ (lock {path}); wait for it to finish"
            ) from None
        if _same_file(fd, path):
            break
        os.close(fd)  # the previous holder removed the file we opened: lock the one there now
    try:
        yield
    finally:
        if ours:
            with suppress(OSError):
                path.unlink()
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)


# Writing


def _new_staging(index_dir: Path) -> Path:
    """A fresh hidden folder beside the index, created with the user's umask (not 0700),
    marked as ours before anything else is written into it."""
    staging = index_dir.parent / f".{index_dir.name}.new-{secrets.token_hex(4)}"
    staging.mkdir(mode=0o777)
    (staging / STAGING_MARKER).touch()
    return staging


def write_index(
    index_dir: Path,
    vectors: np.ndarray,
    chunks: list[Chunk],
    meta: IndexMeta,
    offtopic: np.ndarray,
    keywords: KeywordIndex,
    pages: PageIndex | None = None,
) -> None:
    """Write the index files to a staging folder, then swap it in place of ``index_dir``.

    The caller holds the lock and has checked ``index_dir`` with ``writable_target``.
    """
    index_dir = Path(index_dir)
    _check_vectors(vectors, chunks, offtopic)
    try:
        remove_leftovers(index_dir)
        staging: Path | None = _new_staging(index_dir)
    except OSError as exc:
        raise IndexWriteError(f"cannot write next to {index_dir}: {exc.strerror or exc}") from exc
    try:
        np.save(staging / "vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))
        np.save(staging / "offtopic.npy", np.ascontiguousarray(offtopic, dtype=np.float32))
        digest = write_chunks(staging, chunks)
        keywords.save(staging)
        if pages is not None:
            pages.save(staging)
        write_meta(staging / META_FILE, meta.written(digest))
        for name in INDEX_FILES:
            if (staging / name).exists():
                fsync_file(staging / name)
        staging = _swap_in(staging, index_dir)
    except OSError as exc:
        raise IndexWriteError(f"cannot write the index to {index_dir}: {exc.strerror or exc}") from exc
    finally:
        if staging is not None:
            remove_ours(staging)
    with suppress(OSError):
        (index_dir / STAGING_MARKER).unlink()


def _check_vectors(vectors: np.ndarray, chunks: list[Chunk], offtopic: np.ndarray) -> None:
    """An index is never written with a vector that is NaN, infinite, zero or not unit length
    (one would silently answer nothing): the model, or what a build reused, is broken."""
    bad, bank = bad_rows(vectors), bad_rows(offtopic)
    if len(bad) or len(bank):
        where = f"in {chunks[int(bad[0])].source}" if len(bad) else "of the off-topic bank's questions"
        raise ModelError(
            f"the embedding of {len(bad) + len(bank):,} text(s) is NaN, infinite, zero or not unit "
            f"length (the first {where}); the model is broken, and the index was not written"
        )


def _swap_in(staging: Path, index_dir: Path) -> Path | None:
    """Put ``staging`` at ``index_dir``; return the folder left to remove (the old index)."""
    if index_dir.exists() and any(index_dir.iterdir()):
        if not is_semsearch_index(index_dir):  # checked before the build too; it may have changed
            raise _refusal(index_dir)
        (index_dir / STAGING_MARKER).touch()  # the old index, once swapped out, is a marked leftover
        if _exchange(staging, index_dir):
            return staging
        retired = staging.with_name(staging.name.replace(".new-", ".old-"))
        index_dir.rename(retired)
        staging.rename(index_dir)
        return retired
    os.replace(staging, index_dir)  # a missing or empty folder
    return None


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in {errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.ENOTSUP}:
        return False
    raise OSError(err, os.strerror(err), str(b))


def update_meta(
    folder: Path, read_as: tuple[int, int, str], meta: IndexMeta, change: Callable[[IndexMeta], IndexMeta]
) -> IndexMeta:
    """Write ``change(meta)`` into the index at ``folder``, under its lock, and only if that index
    is still the one that was read (``read_as``: its identity then; a build may have replaced it)."""
    with index_lock(folder):
        if identity(folder) != read_as:
            raise IndexChangedError(
                f"the index at {folder}/ changed since it was read (a build finished meanwhile); "
                "nothing was written"
            )
        meta = change(meta)
        replace_meta(folder, meta)
    return meta
