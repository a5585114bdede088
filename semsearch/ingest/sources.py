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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from semsearch.errors import DocsError
from semsearch.ingest.beneath import LinkInTheWay, not_regular, open_beneath, refused_target
from semsearch.ingest.gitignore import PathPatterns
from semsearch.ingest.ignorefile import exclude_spec
from semsearch.util.printable import readable

MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdx"}
BINARY_SNIFF_BYTES = 8192
LARGEST_FILE_BYTES = 32 * 1024 * 1024
"""A bigger file is skipped (with the reason), not read: a build holds each file's text, and its
parse and chunks, in memory (a few times the file's size), and no hand-written Markdown file is
this big (a 32 MiB file is some 30,000 chunks, hours of embedding)."""


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
class Listed:
    """A file ``discover`` found, and where it is read from."""

    path: Path
    """Its path under the docs folder (a symlink's own path, for a link)."""
    target: tuple[str, ...]
    """Where it leads, relative to the docs folder's real path: the file read (see
    ``beneath``), which is the one checked to be inside the folder, not hidden, not excluded."""


@dataclass(frozen=True)
class Skipped:
    relative: str
    reason: str
    size: int | None = None
    mtime_ns: int | None = None


def unmatched_excludes(patterns: Sequence[str], excluded: Sequence[str]) -> list[str]:
    """The ``--exclude`` patterns that left out no Markdown file or folder of ``excluded`` (a
    typo, or what they named is gone); negations (``!keep.md``) exclude nothing by design."""
    return [
        pattern
        for pattern in patterns
        if not pattern.startswith("!")
        and not any(PathPatterns([pattern]).match_file(path) for path in excluded)
    ]


def _relative(path: Path, docs: Path) -> str:
    return readable(path.relative_to(docs).as_posix())


def discover(
    docs: Path, excludes: Sequence[str] = (), excluded: list[str] | None = None
) -> tuple[list[Path], list[Skipped]]:
    """The paths of the Markdown files ``list_files`` finds, and what was passed over."""
    listed, skipped = list_files(docs, excludes, excluded)
    return [item.path for item in listed], skipped


def list_files(
    docs: Path,
    excludes: Sequence[str] = (),
    excluded: list[str] | None = None,
    warnings: list[str] | None = None,
) -> tuple[list[Listed], list[Skipped]]:
    """Markdown files under ``docs`` sorted by relative POSIX path, and what was passed over.

    Hidden files and folders are skipped silently, excluded ones too (appended to ``excluded``
    when given: folders with a trailing ``/``, not entered); what of ``.semsearchignore`` is not
    read goes to ``warnings`` (see ``ignore_lines``). Symlinked folders are not
    followed (no loops, nothing outside the root); a symlinked file is read only when it leads
    to a file inside the docs root that is neither hidden nor excluded (the rules apply to where
    a link leads, not only to its name); a symlink loop is skipped. FIFOs, sockets and devices
    are skipped too (only ``stat`` is called on them: opening a FIFO would block).

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
    spec = exclude_spec(docs, excludes, warnings)
    found: list[Listed] = []
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
            listed = _listed(path, docs, root, spec)
            if isinstance(listed, Skipped):
                skipped.append(listed)
            else:
                found.append(listed)
    return _one_per_name(found, docs, skipped), skipped


def _listed(path: Path, docs: Path, root: Path, spec) -> Listed | Skipped:
    """A file the walk met (not hidden, not excluded by its name), or why it is not read."""
    relative = _relative(path, docs)
    target = path.relative_to(docs).parts
    if path.is_symlink():
        real = Path(os.path.realpath(path))  # unlike Path.resolve, never raises on a loop
        if not real.is_relative_to(root):
            return Skipped(relative, "symlink to outside the docs folder, not followed")
        target = real.relative_to(root).parts
        if reason := refused_target(target, spec, readable):
            return Skipped(relative, reason)
    try:
        info = path.stat()
    except OSError as exc:
        # a loop (a.md -> b.md -> a.md) is skipped here; read_source says why others fail
        if exc.errno == errno.ELOOP:
            return Skipped(relative, "symlink loop, not followed")
        return Listed(path, target)
    if reason := not_regular(info.st_mode):
        return Skipped(relative, reason)
    return Listed(path, target)


def _too_big(size: int) -> str | None:
    if size <= LARGEST_FILE_BYTES:
        return None
    return f"larger than {LARGEST_FILE_BYTES // 2**20} MiB ({size / 2**20:.1f} MiB), not read"


def _one_per_name(listed: list[Listed], docs: Path, skipped: list[Skipped]) -> list[Listed]:
    """``listed`` sorted by name; of files that get the same name (see ``readable``: a name that
    is not UTF-8 and one with a literal ``\\xNN`` in it) the first valid UTF-8 one is kept, the
    others skipped under a name no file can have (a Python bytes literal)."""
    by_name: dict[str, list[Listed]] = {}
    for item in sorted(listed, key=lambda item: os.fsencode(item.path)):
        by_name.setdefault(_relative(item.path, docs), []).append(item)
    kept = []
    for name, same in sorted(by_name.items()):
        same.sort(key=lambda item: item.path.relative_to(docs).as_posix() != name)  # valid UTF-8 first
        kept.append(same[0])
        skipped += [
            Skipped(
                repr(os.fsencode(item.path.relative_to(docs))),
                f"its name is not UTF-8 and reads {name}, as another file's does",
            )
            for item in same[1:]
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


def read_source(path: Path, docs: Path, target: Sequence[str] | None = None) -> SourceFile | Skipped:
    """Read one file (UTF-8, or UTF-16/UTF-32 with a BOM); undecodable bytes are replaced (and
    reported), unreadable, binary or too big files skipped.

    ``target``: where the file leads, as ``list_files`` checked it (None: found now, and read
    only if inside the docs folder). That path is opened with no symlink followed (see
    ``beneath``): a link swapped in since the listing is skipped, never read. The file is opened
    without blocking and checked to be a regular file before it is read: a FIFO put in place
    after ``discover`` is skipped too, not waited on.
    """
    relative = _relative(path, docs)
    root = Path(os.path.realpath(docs))
    if target is None:
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(root) or real == root:
            return Skipped(relative, "symlink to outside the docs folder, not followed")
        target = real.relative_to(root).parts
    try:
        with os.fdopen(open_beneath(root, target), "rb") as handle:
            info = os.fstat(handle.fileno())
            if reason := not_regular(info.st_mode):
                return Skipped(relative, reason)
            if reason := _too_big(info.st_size):  # recorded with its size: a later change is seen
                return Skipped(relative, reason, info.st_size, info.st_mtime_ns)
            raw = handle.read(LARGEST_FILE_BYTES + 1)
    except LinkInTheWay:
        return Skipped(relative, "a symlink was put on its path while it was being indexed, not followed")
    except OSError as exc:
        return Skipped(relative, f"cannot read ({exc.strerror or exc})")
    if reason := _too_big(len(raw)):  # it grew since fstat
        return Skipped(relative, reason, info.st_size, info.st_mtime_ns)
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
