"""Finding and reading the Markdown files of a docs folder, and noticing when they change.

Nothing here raises for a bad file: each one is either read (perhaps repaired, with a warning)
or skipped with a reason, so one odd file never stops a build.

Files are named by their path relative to the docs folder, in POSIX form, as the index records
them. A name that is not valid UTF-8 (Linux allows any bytes) is written with ``\\xNN`` escapes
for those bytes (see ``readable``), so that JSON files and terminals can hold it; the file is
still read through its real path.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from semsearch.errors import DocsError
from semsearch.util.printable import readable

MARKDOWN_SUFFIXES = {".md", ".markdown"}
IGNORE_FILE = ".semsearchignore"
BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class SourceFile:
    path: Path
    """The real path, to read the file by."""
    relative: str
    """Its name in the index (see ``readable``)."""
    text: str
    sha256: str
    size: int
    mtime_ns: int
    warning: str | None = None


@dataclass(frozen=True)
class Skipped:
    relative: str
    reason: str
    size: int | None = None
    mtime_ns: int | None = None


def exclude_spec(docs: Path, patterns: Sequence[str] = ()):
    """``--exclude`` patterns plus the docs folder's ``.semsearchignore``, in .gitignore syntax."""
    import pathspec

    lines = list(patterns)
    ignore_file = docs / IGNORE_FILE
    if ignore_file.is_file():
        lines += ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def unmatched_excludes(patterns: Sequence[str], excluded: Sequence[str]) -> list[str]:
    """The ``--exclude`` patterns that left out no Markdown file or folder of ``excluded`` (a
    typo, or what they named is gone); negations (``!keep.md``) exclude nothing by design."""
    import pathspec

    return [
        pattern
        for pattern in patterns
        if not pattern.startswith("!")
        and not any(pathspec.GitIgnoreSpec.from_lines([pattern]).match_file(path) for path in excluded)
    ]


def _relative(path: Path, docs: Path) -> str:
    return readable(path.relative_to(docs).as_posix())


_KINDS = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISDIR, "folder"),
)


def _not_regular(mode: int) -> str | None:
    """Why a file of this mode is not read (None: a regular file). Reading a FIFO or a device
    can block forever or never end, so only regular files are read."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "special file")
    return f"not a regular file ({kind})"


def discover(
    docs: Path, excludes: Sequence[str] = (), excluded: list[str] | None = None
) -> tuple[list[Path], list[Skipped]]:
    """Markdown files under ``docs`` sorted by relative POSIX path, and what was passed over.

    Hidden files and folders are skipped silently, excluded ones too (appended to ``excluded``
    when given: folders with a trailing ``/``, not entered). Symlinked folders are not
    followed (no loops, nothing outside the root); a symlinked file is read only when it points
    to a file inside the docs root; a symlink loop is skipped. FIFOs, sockets and devices are
    skipped too (only ``stat`` is called on them: opening a FIFO would block).

    Raises ``DocsError`` when the path of ``docs`` itself is not valid UTF-8 (the index records
    it), before anything is read.
    """
    docs = Path(docs)
    root = Path(os.path.realpath(docs))
    if readable(str(root)) != str(root):
        raise DocsError(
            f"the path of the documents folder, {readable(str(root))}, is not valid UTF-8 "
            "(the index records it); rename the folder or one above it"
        )
    spec = exclude_spec(docs, excludes)
    found: list[Path] = []
    skipped: list[Skipped] = []
    for current, dirs, files in os.walk(docs):
        base = Path(current)
        kept_dirs = []
        for name in sorted(dirs):
            path = base / name
            relative = _relative(path, docs)
            if name.startswith("."):
                continue
            if spec and spec.match_file(relative + "/"):
                if excluded is not None:
                    excluded.append(relative + "/")
                continue
            if path.is_symlink():
                skipped.append(Skipped(relative + "/", "symlinked folder, not followed"))
                continue
            kept_dirs.append(name)
        dirs[:] = kept_dirs
        for name in files:
            path = base / name
            relative = _relative(path, docs)
            if name.startswith(".") or Path(name).suffix.lower() not in MARKDOWN_SUFFIXES:
                continue
            if spec and spec.match_file(relative):
                if excluded is not None:
                    excluded.append(relative)
                continue
            if path.is_symlink():
                target = Path(os.path.realpath(path))  # unlike Path.resolve, never raises on a loop
                if not target.is_relative_to(root):
                    skipped.append(Skipped(relative, "symlink to outside the docs folder, not followed"))
                    continue
            try:
                reason = _not_regular(path.stat().st_mode)
            except OSError as exc:
                # a loop (a.md -> b.md -> a.md) is skipped here; read_source says why others fail
                reason = "symlink loop, not followed" if exc.errno == errno.ELOOP else None
            if reason:
                skipped.append(Skipped(relative, reason))
                continue
            found.append(path)
    return _one_per_name(found, docs, skipped), skipped


def _one_per_name(paths: list[Path], docs: Path, skipped: list[Skipped]) -> list[Path]:
    """``paths`` sorted by name; of files that get the same name (see ``readable``: a name that
    is not UTF-8 and one with a literal ``\\xNN`` in it) the first valid UTF-8 one is kept, the
    others skipped under a name no file can have (a Python bytes literal)."""
    by_name: dict[str, list[Path]] = {}
    for path in sorted(paths, key=lambda p: os.fsencode(p)):
        by_name.setdefault(_relative(path, docs), []).append(path)
    kept = []
    for name, same in sorted(by_name.items()):
        same.sort(key=lambda p: p.relative_to(docs).as_posix() != name)  # a valid UTF-8 name first
        kept.append(same[0])
        skipped += [
            Skipped(
                repr(os.fsencode(p.relative_to(docs))),
                f"its name is not UTF-8 and reads {name}, as another file's does",
            )
            for p in same[1:]
        ]
    return kept


NOT_TEXT_SHARE = 0.3
"""Above this share of undecodable bytes and control characters a file is binary. Text in a
legacy encoding (Polish in cp1250: its letters with diacritics, 6% of docs/zwroty.md) stays
well below it; random bytes are about 55% (measured)."""


def _mostly_not_text(text: str) -> bool:
    odd = sum(1 for c in text if c == "\ufffd" or (c < " " and c not in "\t\n\r\f"))
    return odd > NOT_TEXT_SHARE * max(len(text), 1)


_BOMS = (  # UTF-32 first: its little-endian BOM starts with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
)


NUL_BYTES = "binary file (NUL bytes), not Markdown"


class _NotText(Exception):
    """A file's bytes are not text: the message says why."""


def _nul_reason(head: bytes) -> str:
    """Why a file with NUL bytes and no BOM is skipped: UTF-16 text without one (every NUL at
    even or every one at odd offsets, and at least half the bytes there: Latin text) cannot be
    told from binary data for sure, so it is said rather than guessed."""
    for parity in (0, 1):
        if b"\x00" not in head[1 - parity :: 2] and head[parity::2].count(0) * 2 >= len(head[parity::2]):
            return "UTF-16 text without a byte order mark, it seems; save it as UTF-8"
    return NUL_BYTES


def _decode(raw: bytes) -> tuple[str, str | None]:
    """A file's text, and a warning when bytes had to be replaced. UTF-8 (a BOM is dropped), or
    UTF-16/UTF-32 when a BOM says so (as Windows editors save "Unicode"); the sha256 stays that
    of the bytes, so a file re-saved in another encoding counts as changed.

    Raises ``_NotText`` for binary data: NUL characters, or mostly undecodable bytes."""
    codec, name = next(
        ((codec, name) for bom, codec, name in _BOMS if raw.startswith(bom)), ("utf-8-sig", "UTF-8")
    )
    if codec == "utf-8-sig" and b"\x00" in raw[:BINARY_SNIFF_BYTES]:
        raise _NotText(_nul_reason(raw[:BINARY_SNIFF_BYTES]))
    warning = None
    try:
        text = raw.decode(codec)
    except UnicodeDecodeError as exc:
        text = raw.decode(codec, errors="replace")
        if _mostly_not_text(text[:BINARY_SNIFF_BYTES]):
            raise _NotText("binary file (mostly not text), not Markdown") from None
        warning = f"invalid {name} at byte {exc.start}; undecodable bytes replaced with U+FFFD"
    if "\x00" in text[:BINARY_SNIFF_BYTES]:  # a NUL character: UTF-16 or UTF-32 of no text
        raise _NotText(NUL_BYTES)
    return text, warning


def read_source(path: Path, docs: Path) -> SourceFile | Skipped:
    """Read one file (UTF-8, or UTF-16/UTF-32 with a BOM); undecodable bytes are replaced (and
    reported), unreadable or binary files skipped.

    The file is opened without blocking and checked to be a regular file before it is read: a
    FIFO put in place after ``discover`` is skipped too, not waited on.
    """
    relative = _relative(path, docs)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            reason = _not_regular(info.st_mode)
            if reason:
                return Skipped(relative, reason)
            raw = handle.read()
    except OSError as exc:
        return Skipped(relative, f"cannot read ({exc.strerror or exc})")
    try:
        text, warning = _decode(raw)
    except _NotText as exc:
        return Skipped(relative, str(exc), info.st_size, info.st_mtime_ns)
    if not text.strip():
        return Skipped(relative, "empty file", info.st_size, info.st_mtime_ns)
    return SourceFile(
        path=path,
        relative=relative,
        text=text,
        sha256=hashlib.sha256(raw).hexdigest(),
        size=info.st_size,
        mtime_ns=info.st_mtime_ns,
        warning=warning,
    )


def docs_relative(pattern: str, docs: Path) -> str:
    """A path pattern as the index knows files: relative to the docs folder. A pattern that
    starts with a folder (or names a file) that exists inside the docs folder, written relative
    to the current folder as shell completion gives it (``docs/faq/*.md``) or absolute, is made
    relative to the docs folder; anything else is taken as given (a ``.gitignore``-style pattern
    relative to the docs folder)."""
    root = Path(docs).resolve()
    parts = pattern.split("/")
    for cut in range(len(parts), 0, -1):
        head = "/".join(parts[:cut]) or "/"
        candidate = Path(head).expanduser()
        if not candidate.exists() or (cut < len(parts) and not candidate.is_dir()):
            continue
        try:
            relative = candidate.resolve().relative_to(root).as_posix()
        except ValueError:
            return pattern
        if cut == len(parts):  # the pattern is that file or folder
            return "**" if relative == "." else relative + ("/" if candidate.is_dir() else "")
        rest = "/".join(parts[cut:])
        return rest if relative == "." else f"{relative}/{rest}"
    return pattern


def changed_files(docs: Path, recorded: dict[str, dict], excludes: Sequence[str] = ()) -> list[str]:
    """Files added, removed or modified since the build, judged from sizes and mtimes only.

    ``recorded`` maps relative paths to their ``size`` and ``mtime_ns`` at build time; entries
    without a size (symlinks that were not followed) are not files to compare.
    """
    recorded = {path: entry for path, entry in recorded.items() if entry.get("size") is not None}
    if not docs.is_dir():
        return sorted(recorded)
    paths, _ = discover(docs, excludes)
    changed = []
    seen = set()
    for path in paths:
        relative = _relative(path, docs)
        seen.add(relative)
        try:
            stat = path.stat()
        except OSError:
            continue
        before = recorded.get(relative)
        if before is None or (before.get("size"), before.get("mtime_ns")) != (stat.st_size, stat.st_mtime_ns):
            changed.append(relative)
    return sorted(changed + [r for r in recorded if r not in seen])
