"""Each file's part of meta.json (see ``records`` for how a record reads and writes its JSON):
a file's fingerprint, rows, title and front matter, a skipped file and why, and what the files'
records say together."""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from semsearch.ingest.frontmatter import RECORD_KEYS, FrontMatter
from semsearch.store.records import Check, Json, Record, _any, _int_or_none, _text_or_none, is_int

_FILE_KEYS = frozenset({"sha256", "size", "mtime_ns", "chunks", "rows", "title", *RECORD_KEYS})
_NO_FRONT_MATTER = FrontMatter({})
_NOTHING: Mapping[str, Json] = {}
_KEYS_READ: dict[tuple[str, ...], tuple[str, ...]] = {}


def _built_problem(problem: Mapping[str, Json]) -> bool:
    """Whether a checked ``front_matter_problem`` is as a build writes it (``FrontMatter.record``)."""
    return len(problem) == 2 and bool(problem["problem"])


"""The few orders of fields file records are read in, each kept once (a million files share them)."""


@dataclass(frozen=True, eq=False)
class FileRecord(Record):
    """A file a build indexed: its fingerprint (``size`` None: a link not followed), its rows
    [start, end) (None: an index built before path filters) and its front matter."""

    sha256: str | None = None
    size: int | None = None
    mtime_ns: int | None = None
    chunks: int | None = None
    rows: tuple[int, int] | None = None
    front_matter: FrontMatter = _NO_FRONT_MATTER
    """Held in meta.json as ``front_matter`` and ``front_matter_problem`` (``FrontMatter.record``)."""
    title: str | None = None
    """Its first ``#`` heading, else its front matter's title (None: neither, or a build that did
    not record titles; written only when it has one)."""

    TYPED: ClassVar[Mapping[str, Check]] = dict.fromkeys(
        ("sha256", "size", "mtime_ns", "chunks", "rows"), _any
    )

    @classmethod
    def from_json(cls, obj: Mapping[str, Json]) -> FileRecord:
        """Made without the generic steps of ``Record.from_json`` or the frozen ``__init__`` (one
        attribute set at a time): an index holds a record per file, and `ask` reads them all."""
        read = tuple(obj)
        keys = _KEYS_READ.setdefault(read, read)
        other, front_matter = _NOTHING, _NO_FRONT_MATTER
        if not _FILE_KEYS.issuperset(keys):
            other = {key: value for key, value in obj.items() if key not in _FILE_KEYS}
        fields, problem = obj.get("front_matter"), obj.get("front_matter_problem")
        if fields or problem:
            front_matter = FrontMatter(
                fields or {}, *((problem["problem"], problem["line"]) if problem else ())
            )
        if ("front_matter" in obj and not fields) or (problem is not None and not _built_problem(problem)):
            other = {**other, **{key: obj[key] for key in RECORD_KEYS if key in obj}}  # kept as read
        rows, title = obj.get("rows"), obj.get("title")
        if title is not None and not isinstance(title, str):
            other, title = {**other, "title": title}, None  # kept as read, not used
        record = object.__new__(cls)  # the fields set as __init__ would, at a fifth of its cost
        record.__dict__.update(
            sha256=obj.get("sha256"),
            size=obj.get("size"),
            mtime_ns=obj.get("mtime_ns"),
            chunks=obj.get("chunks"),
            rows=(rows[0], rows[1]) if rows is not None else None,
            front_matter=front_matter,
            title=title,
            other=other,
            read=keys,
        )
        return record

    def fields_json(self) -> dict[str, Json]:
        titled = {"title": self.title} if self.title is not None else {}
        return {**super().fields_json(), **titled, **self.front_matter.record()}

    def refreshed(self, size: int | None, mtime_ns: int | None, front_matter: FrontMatter) -> FileRecord:
        """The record of the file unchanged, with its size and mtime as they are now."""
        other = {key: value for key, value in self.other.items() if key not in RECORD_KEYS}
        return replace(self, size=size, mtime_ns=mtime_ns, front_matter=front_matter, other=other)

    @property
    def has_text(self) -> bool:
        """Whether a search can return it (a file of only front matter and headings has no chunk)."""
        return self.chunks != 0


@dataclass(frozen=True, eq=False)
class SkippedRecord(Record):
    """A file a build skipped, and why (its size and mtime: for `ask`'s staleness check)."""

    reason: str
    size: int | None = None
    mtime_ns: int | None = None

    TYPED: ClassVar[Mapping[str, Check]] = {"reason": _any, "size": _int_or_none, "mtime_ns": _int_or_none}


def files_json(files: Mapping[str, FileRecord | SkippedRecord]) -> dict[str, Json]:
    return {path: record.to_json() for path, record in files.items()}


def with_text(files: Mapping[str, FileRecord]) -> list[str]:
    """The files a search can return (all but ``without_text``), in recorded order: what build,
    info, ``ask -v`` and the MCP server count as files."""
    return [path for path, record in files.items() if record.has_text]


def without_text(files: Mapping[str, FileRecord]) -> list[str]:
    """The files recorded with no chunk: read, but all front matter, headings or comments."""
    return sorted(path for path, record in files.items() if not record.has_text)


def fields_seen(files: Mapping[str, FileRecord]) -> dict[str, int]:
    """Each front-matter field and how many files have it, most common first."""
    counts: dict[str, int] = {}
    for record in files.values():
        for name in record.front_matter.fields:
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def fields_unread(files: Mapping[str, FileRecord]) -> list[dict]:
    """The files whose front matter could not be read: ``{"path", "problem", "line"}`` each."""
    return [
        {"path": path, "problem": record.front_matter.problem, "line": record.front_matter.line}
        for path, record in files.items()
        if record.front_matter.problem
    ]


class HeldFiles(Mapping[str, FileRecord]):
    """File records a server holds (``store.postgres.files``): each read when it is looked up,
    and what needs them all asked of the server at once, not read one by one."""

    @abstractmethod
    def loaded(self) -> dict[str, FileRecord]:
        """Every record, read whole (a build compares each file with its record)."""

    @abstractmethod
    def row_starts(self) -> np.ndarray:
        """As ``file_row_starts``."""


def file_row_starts(files: Mapping[str, FileRecord]) -> np.ndarray:
    """The first row of each file with text, in row order (int64); the records a server holds
    give theirs by one query (``HeldFiles.row_starts``)."""
    if isinstance(files, HeldFiles):
        return files.row_starts()
    starts = sorted(r.rows[0] for r in files.values() if r.rows and r.rows[1] > r.rows[0])
    return np.array(starts, dtype=np.int64)


# The checks meta.json's reader makes of each file's record


def _scalar(value: Any) -> bool:
    return isinstance(value, str | bool | int) or (type(value) is float and math.isfinite(value))


def _front_matter(value: Any) -> bool:
    """A file's front-matter fields: names to scalars or lists of scalars (see ``frontmatter``)."""
    return isinstance(value, dict) and all(
        isinstance(name, str) and (_scalar(v) or (isinstance(v, list) and all(map(_scalar, v))))
        for name, v in value.items()
    )


def _front_matter_problem(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("problem"), str) and is_int(value.get("line"))


def valid_file_record(value: Any) -> bool:
    """Whether ``value`` is a file's record as meta.json holds it, typed."""
    if not isinstance(value, dict):
        return False
    rows = value.get("rows", [0, 0])
    return (
        isinstance(rows, list)
        and len(rows) == 2
        and all(map(is_int, rows))
        and all(_int_or_none(value.get(key)) for key in ("size", "mtime_ns", "chunks"))
        and _text_or_none(value.get("sha256"))
        and _front_matter(value.get("front_matter", {}))
        and ("front_matter_problem" not in value or _front_matter_problem(value["front_matter_problem"]))
    )
