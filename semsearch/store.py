"""The index on disk: which folder may hold one, the build lock, atomic writes, and reading it
back with every file and field checked.

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
import hashlib
import json
import math
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .chunkfile import CHUNKS_FILE, OFFSETS_FILE, ChunkFile, write_chunks
from .chunking import Chunk
from .errors import (
    IndexBusyError,
    IndexChangedError,
    IndexCorruptError,
    IndexLocationError,
    IndexMissingError,
    IndexWriteError,
    SemsearchError,
)
from .keywords import FILES as KEYWORD_FILES
from .keywords import KeywordIndex

INDEX_FORMAT = 1
INDEX_KIND = "semsearch-index"
META_FILE = "meta.json"
STAGING_MARKER = ".semsearch-staging"
"""Written first into every folder a build stages: only such folders are ever removed as leftovers."""
INDEX_FILES = ("vectors.npy", "offtopic.npy", CHUNKS_FILE, OFFSETS_FILE, *KEYWORD_FILES, META_FILE)
_META_TEMP_PREFIX = ".meta-"
READ_ERRORS = (OSError, ValueError, EOFError, KeyError, TypeError, IndexError, UnicodeDecodeError)
"""What reading a damaged file can raise (numpy, json, our own checks)."""


@dataclass(frozen=True)
class StoredIndex:
    """Everything read from an index folder, checked for consistency."""

    path: Path
    meta: dict
    chunks: ChunkFile
    vectors: np.ndarray
    offtopic: np.ndarray
    background: np.ndarray
    keywords: KeywordIndex | None
    identity: tuple[int, int, str]
    """The folder's (device, inode) and the sha256 of its meta.json when read."""


# Where an index may be written


def _is_index_file(name: str) -> bool:
    return name in INDEX_FILES or name == STAGING_MARKER or name.startswith(_META_TEMP_PREFIX)


def _read_meta_object(folder: Path) -> dict | None:
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def is_semsearch_index(folder: Path) -> bool:
    """Whether ``folder`` is provably an index written by semsearch: its meta.json has the
    format marker (``kind``, or for indexes written before it existed, an integer ``format``
    with ``semsearch_version`` and ``model``), and it holds nothing but index files."""
    meta = _read_meta_object(folder)
    if meta is None:
        return False
    legacy = type(meta.get("format")) is int and "semsearch_version" in meta and "model" in meta
    if meta.get("kind") != INDEX_KIND and not legacy:
        return False
    try:
        return all(
            _is_index_file(entry.name) and entry.is_file(follow_symlinks=False)
            for entry in os.scandir(folder)
        )
    except OSError:
        return False


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def writable_target(index_dir: Path, docs: Path | None = None) -> Path:
    """The real folder a build of ``docs`` may write its index to, or an error that explains why
    ``index_dir`` cannot be one. A symlink is followed to its target folder."""
    index_dir = Path(index_dir)
    if index_dir.is_symlink():
        target = index_dir.resolve()
        if not target.exists():
            raise IndexLocationError(f"--index {index_dir} is a symlink to {target}, which does not exist")
        index_dir = target
    index_dir = index_dir.absolute()
    if index_dir.exists() and not index_dir.is_dir():
        raise IndexLocationError(f"{index_dir} is a file, not an index folder")
    if docs is not None:
        real_docs, real_index = Path(docs).resolve(), index_dir.resolve()
        if _inside(real_index, real_docs):
            raise IndexLocationError(f"the index {index_dir} would be inside the documents folder {docs}")
        if _inside(real_docs, real_index):
            raise IndexLocationError(f"the documents folder {docs} is inside the index folder {index_dir}")
    if index_dir.is_dir() and any(index_dir.iterdir()) and not is_semsearch_index(index_dir):
        raise IndexLocationError(
            f"{index_dir} is not empty and is not a semsearch index; refusing to replace it "
            "(choose an empty or new folder for --index)"
        )
    return index_dir


# The lock


def _lock_path(index_dir: Path) -> Path:
    return index_dir.parent / f".{index_dir.name}.lock"


@contextmanager
def index_lock(index_dir: Path) -> Iterator[None]:
    """Hold the index's lock (a hidden file beside it, removed on release); another holder
    makes this fail at once. Unix ``flock``: released by the kernel if the process dies."""
    import fcntl

    index_dir = Path(index_dir).absolute()
    path = _lock_path(index_dir)
    try:
        index_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IndexWriteError(f"cannot create {index_dir.parent}: {exc.strerror or exc}") from exc
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise IndexWriteError(f"cannot create the lock file {path}: {exc.strerror or exc}") from exc
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


def _remove_leftovers(index_dir: Path) -> None:
    """Remove folders left by a build killed while writing: exact names only, marker required."""
    prefixes = (f".{index_dir.name}.new-", f".{index_dir.name}.old-")
    for entry in os.scandir(index_dir.parent):
        if (
            entry.name.startswith(prefixes)
            and entry.is_dir(follow_symlinks=False)
            and os.path.isfile(os.path.join(entry.path, STAGING_MARKER))
        ):
            shutil.rmtree(entry.path, ignore_errors=True)


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _write_json(path: Path, data: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, indent=1)
        handle.write("\n")


def write_index(
    index_dir: Path,
    vectors: np.ndarray,
    chunks: list[Chunk],
    meta: dict,
    offtopic: np.ndarray,
    keywords: KeywordIndex,
) -> None:
    """Write the index files to a staging folder, then swap it in place of ``index_dir``.

    The caller holds the lock and has checked ``index_dir`` with ``writable_target``.
    """
    index_dir = Path(index_dir)
    try:
        _remove_leftovers(index_dir)
        staging: Path | None = _new_staging(index_dir)
    except OSError as exc:
        raise IndexWriteError(f"cannot write next to {index_dir}: {exc.strerror or exc}") from exc
    try:
        np.save(staging / "vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))
        np.save(staging / "offtopic.npy", np.ascontiguousarray(offtopic, dtype=np.float32))
        write_chunks(staging, chunks)
        keywords.save(staging)
        _write_json(staging / META_FILE, {"kind": INDEX_KIND, **meta})
        for name in INDEX_FILES:
            _fsync(staging / name)
        staging = _swap_in(staging, index_dir)
    except OSError as exc:
        raise IndexWriteError(f"cannot write the index to {index_dir}: {exc.strerror or exc}") from exc
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    with suppress(OSError):
        (index_dir / STAGING_MARKER).unlink()


def _swap_in(staging: Path, index_dir: Path) -> Path | None:
    """Put ``staging`` at ``index_dir``; return the folder left to remove (the old index)."""
    if index_dir.exists() and any(index_dir.iterdir()):
        if not is_semsearch_index(index_dir):  # checked before the build too; it may have changed
            raise IndexLocationError(f"{index_dir} is not a semsearch index; refusing to replace it")
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


def replace_meta(folder: Path, meta: dict) -> None:
    """Replace ``folder``'s meta.json atomically (a reader sees the old or the new one). The
    caller holds the lock."""
    staging = folder / f"{_META_TEMP_PREFIX}{secrets.token_hex(4)}.json"
    try:
        _write_json(staging, meta)
        _fsync(staging)
        os.replace(staging, folder / META_FILE)
    except OSError as exc:
        staging.unlink(missing_ok=True)
        raise IndexWriteError(f"cannot write {folder / META_FILE}: {exc.strerror or exc}") from exc
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


def update_meta(stored: StoredIndex, change: Callable[[dict], dict]) -> dict:
    """Write ``change(meta)`` into the index that ``stored`` was read from, under its lock, and
    only if that index is still the one on disk (a build may have replaced it since)."""
    with index_lock(stored.path):
        if _identity(stored.path) != stored.identity:
            raise IndexChangedError(
                f"the index at {stored.path}/ changed since it was read (a build finished meanwhile); "
                "nothing was written"
            )
        meta = change(stored.meta)
        replace_meta(stored.path, meta)
    return meta


# Reading


def _identity(folder: Path) -> tuple[int, int, str] | None:
    try:
        stat = folder.stat()
        digest = hashlib.sha256((folder / META_FILE).read_bytes()).hexdigest()
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino, digest)


def read_index(index_dir: Path, attempts: int = 3) -> StoredIndex:
    """Read and check an index; vectors are memory-mapped, never unpickled.

    A build swaps a new index folder in while a reader may be reading: if the folder changed
    during the read, the read starts over, so the result is wholly the old or the new index.
    """
    index_dir = Path(index_dir)
    for attempt in range(attempts):
        before = _identity(index_dir)
        try:
            stored = _read(index_dir, before)
        except SemsearchError:
            if attempt + 1 < attempts and _identity(index_dir) != before:
                continue
            raise
        if _identity(index_dir) == before:
            return stored
    raise IndexCorruptError(f"the index at {index_dir}/ kept changing while being read; try again")


def _read(index_dir: Path, identity: tuple[int, int, str] | None) -> StoredIndex:
    if index_dir.exists() and not index_dir.is_dir():
        raise IndexMissingError(f"{index_dir} is a file, not an index folder")
    if not (index_dir / META_FILE).is_file() or identity is None:
        raise IndexMissingError(f"no index at {index_dir}/ (meta.json missing)")
    problem = f"index at {index_dir}/"
    try:
        meta = json.loads((index_dir / META_FILE).read_text(encoding="utf-8"))
    except READ_ERRORS as exc:
        raise IndexCorruptError(f"{problem} has unreadable metadata ({exc})") from exc
    meta = check_meta(meta, problem)
    try:
        chunks = ChunkFile.open(index_dir)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"{problem} is incomplete ({Path(exc.filename).name} missing)") from exc
    except READ_ERRORS as exc:
        raise IndexCorruptError(f"{problem} has unreadable chunks ({exc})") from exc
    dim = meta["model"]["dim"]
    vectors = _load_matrix(index_dir / "vectors.npy", dim)
    offtopic = _load_matrix(index_dir / "offtopic.npy", dim)
    rows = meta["offtopic"]["background_rows"]
    if not all(0 <= r < len(offtopic) for r in rows):
        raise IndexCorruptError(f"{problem} has inconsistent off-topic rows")
    check_unit_rows(offtopic, np.asarray(rows, dtype=np.int64), index_dir)
    if vectors.shape[0] != len(chunks) or meta["chunks"] != len(chunks):
        raise IndexCorruptError(
            f"{problem}: {vectors.shape[0]} vectors for {len(chunks)} chunks (meta says {meta['chunks']})"
        )
    for source, record in meta["files"].items():
        start, end = record.get("rows", (0, 0))
        if not 0 <= start <= end <= len(chunks):
            raise IndexCorruptError(f"{problem}: rows of {source!r} out of range")
    return StoredIndex(
        path=index_dir,
        meta=meta,
        chunks=chunks,
        vectors=vectors,
        offtopic=offtopic,
        background=np.asarray(offtopic[rows]),
        keywords=_load_keywords(index_dir, meta, len(chunks), problem),
        identity=identity,
    )


def _load_keywords(index_dir: Path, meta: dict, rows: int, problem: str) -> KeywordIndex | None:
    if "keywords" not in meta:
        return None  # built before keyword search existed
    try:
        return KeywordIndex.load(index_dir, rows, meta["keywords"]["language"])
    except READ_ERRORS as exc:
        raise IndexCorruptError(f"{problem} has an unreadable keyword index ({exc})") from exc


def _load_matrix(path: Path, dim: int) -> np.ndarray:
    """A float32 (N, dim) array, memory-mapped; anything else is a corrupt index."""
    problem = f"index at {path.parent}/"
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"{problem} is incomplete ({path.name} missing)") from exc
    except READ_ERRORS as exc:
        raise IndexCorruptError(
            f"{problem} has an unreadable {path.name} ({exc or type(exc).__name__})"
        ) from exc
    if (
        not isinstance(matrix, np.ndarray)
        or matrix.dtype != np.float32
        or matrix.ndim != 2
        or matrix.shape[1] != dim
    ):
        raise IndexCorruptError(
            f"{problem}: {path.name} is {getattr(matrix, 'dtype', '?')} {getattr(matrix, 'shape', '?')}, "
            f"expected float32 (N, {dim})"
        )
    return matrix


def check_unit_rows(matrix: np.ndarray, rows: np.ndarray, where: Path) -> None:
    """Rows of an index are L2-normalized (or zero): anything else is damage, not a score. Checked
    on the rows a reader uses, so a damaged vector file is an error rather than a wrong answer."""
    norms = np.linalg.norm(np.asarray(matrix[rows], dtype=np.float64), axis=1)
    if not np.all((np.abs(norms - 1) < 1e-3) | (norms == 0)):
        raise IndexCorruptError(f"index at {where}/ has damaged vectors (rows that are not unit length)")


# meta.json fields, checked once so that no reader meets a wrong type


def _integer(value: Any) -> bool:
    return type(value) is int


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _cosine(value: Any) -> bool:
    return _number(value) and -1 <= value <= 1


def _optional_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _file_record(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    rows = value.get("rows", [0, 0])
    return (
        isinstance(rows, list)
        and len(rows) == 2
        and all(map(_integer, rows))
        and all(value.get(key) is None or _integer(value[key]) for key in ("size", "mtime_ns", "chunks"))
        and _optional_text(value.get("sha256"))
    )


def _skipped_record(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("reason"), str)


FIELDS: dict[str, Callable[[Any], bool]] = {
    "format": lambda v: _integer(v) and v >= 0,
    "model": lambda v: isinstance(v, dict) and isinstance(v.get("spec"), str) and bool(v["spec"]),
    "model.dim": lambda v: _integer(v) and v > 0,
    "chunks": lambda v: _integer(v) and v >= 0,
    "docs_root": lambda v: isinstance(v, str) and bool(v),
    "chunking": lambda v: isinstance(v, dict) and _integer(v.get("max_tokens")),
    "files": lambda v: isinstance(v, dict) and all(_file_record(r) for r in v.values()),
    "min_score": lambda v: isinstance(v, dict) and _cosine(v.get("value")),
    "offtopic": lambda v: (
        isinstance(v, dict)
        and isinstance(v.get("background_rows"), list)
        and all(map(_integer, v["background_rows"]))
    ),
}
OPTIONAL_FIELDS: dict[str, Callable[[Any], bool]] = {
    "skipped": lambda v: isinstance(v, dict) and all(_skipped_record(r) for r in v.values()),
    "excludes": lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v),
    "keywords": lambda v: isinstance(v, dict) and _optional_text(v.get("language")),
    "calibrated": lambda v: isinstance(v, dict) and _cosine(v.get("value")),
    "corpus_language": _optional_text,
    "built_at": _optional_text,
    "semsearch_version": _optional_text,
}


def _lookup(meta: dict, dotted: str) -> Any:
    value: Any = meta
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def check_meta(meta: Any, problem: str) -> dict:
    """``meta`` with every field a reader uses checked (and older layouts brought up to date);
    a missing or mistyped field is a corrupt index."""
    if not isinstance(meta, dict):
        raise IndexCorruptError(f"{problem} has unreadable metadata (not a JSON object)")
    if _integer(meta.get("format")) and meta["format"] > INDEX_FORMAT:
        raise IndexCorruptError(
            f"{problem} was written by a newer semsearch ({meta.get('semsearch_version')}); upgrade semsearch"
        )
    meta = _upgrade(meta)
    for name, valid in FIELDS.items():
        if not valid(_lookup(meta, name)):
            raise IndexCorruptError(f"{problem} has incomplete metadata ({name!r} missing or invalid)")
    for name, valid in OPTIONAL_FIELDS.items():
        if name in meta and not valid(meta[name]):
            raise IndexCorruptError(f"{problem} has invalid metadata ({name!r})")
    return meta


def _upgrade(meta: dict) -> dict:
    """Indexes written before the calibrated threshold and the corpus language had fields of their
    own kept both inside ``min_score``: move them out (nothing else changed)."""
    record = meta.get("min_score")
    if not isinstance(record, dict):
        return meta
    meta = dict(meta)
    if record.get("source") == "calibrate" and "calibrated" not in meta:
        meta["calibrated"] = {k: v for k, v in record.items() if k not in ("build", "source")}
        build = record.get("build")
        meta["min_score"] = record = build if isinstance(build, dict) else {}
    if "corpus_language" not in meta:
        meta["corpus_language"] = record.get("corpus_language")
    return meta


def peek_meta(folder: Path) -> dict | None:
    """The checked meta.json of the index at ``folder``, or None when there is none readable."""
    try:
        return check_meta(_read_meta_object(folder), "")
    except IndexCorruptError:
        return None
