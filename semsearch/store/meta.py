"""meta.json, known here alone: the typed record of an index (``IndexMeta``, its parts in
``records``), checked once when read so that no reader meets a missing field or a wrong type,
older layouts brought up to date, patches made as new records, and the file read and written
(atomically) here.

``IndexMeta.to_json`` gives back the layout semsearch writes: an index read and written again
holds the same JSON, fields this version does not read included (see ``records``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

from semsearch.encode.keywords import stemmer_name
from semsearch.errors import IndexCorruptError, IndexWriteError, MetaUnreadableError
from semsearch.ingest.frontmatter import FRONT_MATTER_VERSION
from semsearch.store.file_records import FileRecord, HeldFiles, SkippedRecord, valid_file_record
from semsearch.store.records import (
    CalibratedRecord,
    Check,
    ChunkingRecord,
    Json,
    KeywordsRecord,
    MarginRecord,
    ModelRecord,
    OfftopicRecord,
    PagesRecord,
    Record,
    _text_or_none,
    as_json,
    is_int,
)
from semsearch.store.schema import CHUNKS_DIGEST, INDEX_FORMAT, INDEX_KIND, META_FILE
from semsearch.util.jsonparse import parse_json
from semsearch.util.regular import read_text

META_TEMP_PREFIX = ".meta-"
"""The name of meta.json's next version while it is written (``replace_meta``)."""

# The checks, made once so that no reader meets a wrong type


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _cosine(value: Any) -> bool:
    return _number(value) and -1 <= value <= 1


def _language_offsets(value: Any) -> bool:
    return isinstance(value, dict) and all(_number(offset) for offset in value.values())


def _keyword_language(value: dict) -> bool:
    """The keyword index's language: a name, or None, and the stemmer recorded beside it is that
    language's (one changed alone would stem questions unlike the documents: no keyword match)."""
    language = value.get("language")
    if not (language is None or (isinstance(language, str) and language)):
        return False
    return "stemmer" not in value or value["stemmer"] == stemmer_name(language)


def _skipped_record(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("reason"), str)


FIELDS: dict[str, Check] = {
    "format": lambda v: is_int(v) and v >= 0,
    "model": lambda v: isinstance(v, dict) and isinstance(v.get("spec"), str) and bool(v["spec"]),
    "model.dim": lambda v: is_int(v) and v > 0,
    "chunks": lambda v: is_int(v) and v >= 0,
    "docs_root": lambda v: isinstance(v, str) and bool(v),
    "chunking": lambda v: isinstance(v, dict) and is_int(v.get("max_tokens")),
    "files": lambda v: isinstance(v, dict) and all(valid_file_record(r) for r in v.values()),
    "min_score": lambda v: (
        isinstance(v, dict)
        and _cosine(v.get("value"))
        and (v.get("gate") is None or is_int(v["gate"]))  # the rule's version, looked up in RULES
        and _language_offsets(v.get("language_offsets", {}))
    ),
    "offtopic": lambda v: (
        isinstance(v, dict)
        and isinstance(v.get("background_rows"), list)
        and all(map(is_int, v["background_rows"]))
        and isinstance(v.get("languages", []), list)
        and all(isinstance(language, str) for language in v.get("languages", []))
    ),
}
OPTIONAL_FIELDS: dict[str, Check] = {
    "skipped": lambda v: isinstance(v, dict) and all(_skipped_record(r) for r in v.values()),
    "excludes": lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v),
    "keywords": lambda v: isinstance(v, dict) and _keyword_language(v),
    "calibrated": lambda v: isinstance(v, dict) and _cosine(v.get("value")),
    "front_matter": lambda v: isinstance(v, dict) and is_int(v.get("version")),
    "pages": PagesRecord.fits,
    "corpus_language": _text_or_none,
    CHUNKS_DIGEST: lambda v: isinstance(v, str),
    "built_at": _text_or_none,
    "semsearch_version": _text_or_none,
}


def _lookup(meta: dict, dotted: str) -> Any:
    value: Any = meta
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _check(obj: Any, problem: str) -> dict:
    """``obj`` with every field a reader uses checked (and older layouts brought up to date);
    a missing or mistyped field is a corrupt index."""
    if not isinstance(obj, dict):
        raise MetaUnreadableError(f"{problem} has unreadable metadata (not a JSON object)")
    if is_int(obj.get("format")) and obj["format"] > INDEX_FORMAT:
        raise IndexCorruptError(
            f"{problem} was written by a newer semsearch ({obj.get('semsearch_version')}); upgrade semsearch"
        )
    obj = _upgrade(obj)
    for name, valid in FIELDS.items():
        if not valid(_lookup(obj, name)):
            raise IndexCorruptError(f"{problem} has incomplete metadata ({name!r} missing or invalid)")
    for name, valid in OPTIONAL_FIELDS.items():
        if name in obj and not valid(obj[name]):
            raise IndexCorruptError(f"{problem} has invalid metadata ({name!r})")
    return obj


def _upgrade(obj: dict) -> dict:
    """Indexes written before the calibrated margin and the corpus language had fields of their
    own kept both inside ``min_score``: move them out (nothing else changed)."""
    record = obj.get("min_score")
    if not isinstance(record, dict):
        return obj
    obj = dict(obj)
    if record.get("source") == "calibrate" and "calibrated" not in obj:
        obj["calibrated"] = {k: v for k, v in record.items() if k not in ("build", "source")}
        build = record.get("build")
        obj["min_score"] = record = build if isinstance(build, dict) else {}
    if "corpus_language" not in obj:
        obj["corpus_language"] = record.get("corpus_language")
    return obj


# The record


def _records(make: Callable[[Mapping[str, Json]], Any]) -> Callable[[Json], dict]:
    return lambda obj: {path: make(record) for path, record in obj.items()}


@dataclass(frozen=True, eq=False, kw_only=True)
class IndexMeta(Record):
    """An index's meta.json. Its fields are named as in meta.json but for three: ``margin``
    (``min_score``: the gate's margin, see ``MarginRecord``), ``front_matter_version``
    (``front_matter``'s ``version``: None in an index that predates front matter) and
    ``chunks_digest`` (``chunks_sha256``: None in an index written before it)."""

    kind: str | None = None
    """The format marker (``INDEX_KIND``; None in indexes written before it)."""
    format: int = INDEX_FORMAT
    semsearch_version: str | None = None
    built_at: str | None = None
    docs_root: str
    model: ModelRecord
    chunking: ChunkingRecord
    chunks: int
    files: Mapping[str, FileRecord]
    skipped: Mapping[str, SkippedRecord] = field(default_factory=dict)
    front_matter_version: int | None = None
    excludes: tuple[str, ...] = ()
    corpus_language: str | None = None
    margin: MarginRecord
    calibrated: CalibratedRecord | None = None
    """A margin calibrated on labelled questions (``eval --calibrate``; None: none)."""
    keywords: KeywordsRecord | None = None
    """None in an index built before keyword search."""
    offtopic: OfftopicRecord
    chunks_digest: str | None = None
    pages: PagesRecord | None = None
    """The page index's record (None: built before page evidence; see ``encode.pages``)."""

    KEYS: ClassVar[Mapping[str, str]] = {
        "margin": "min_score",
        "front_matter_version": "front_matter",
        "chunks_digest": CHUNKS_DIGEST,
    }
    """The attributes named otherwise in meta.json."""
    PARTS: ClassVar[Mapping[str, Callable[[Json], Any]]] = {
        "model": ModelRecord.from_json,
        "chunking": ChunkingRecord.from_json,
        "files": _records(FileRecord.from_json),
        "skipped": _records(SkippedRecord.from_json),
        "front_matter": lambda obj: obj["version"],
        "excludes": tuple,
        "min_score": MarginRecord.from_json,
        "calibrated": CalibratedRecord.from_json,
        "keywords": KeywordsRecord.from_json,
        "offtopic": OfftopicRecord.from_json,
        "pages": PagesRecord.from_json,
    }
    DEFAULTS: ClassVar[Mapping[str, Json]] = {"skipped": {}, "excludes": []}

    @classmethod
    def from_json(cls, obj: Json, problem: str = "") -> IndexMeta:  # type: ignore[override]
        """The record of meta.json's ``obj``, checked (IndexCorruptError, MetaUnreadableError
        naming ``problem``, the index) and brought up to date."""
        obj = _check(obj, problem)
        names = {key: attribute for attribute, key in cls.KEYS.items()}
        typed = {
            names.get(key, key): cls.PARTS[key](value) if key in cls.PARTS else value
            for key, value in obj.items()
            if names.get(key, key) in _ATTRIBUTES
        }
        if not isinstance(typed.get("kind"), str | None):
            del typed["kind"]
        other = {key: value for key, value in obj.items() if names.get(key, key) not in typed}
        if set(obj.get("front_matter", {"version": None})) != {"version"}:  # more than its version
            other["front_matter"] = obj["front_matter"]
        return cls(**typed, other=other, read=tuple(obj))

    def fields_json(self) -> dict[str, Json]:
        values = {self.KEYS.get(name, name): as_json(getattr(self, name)) for name in _ATTRIBUTES}
        version = self.front_matter_version
        values["front_matter"] = {"version": version} if version is not None else None
        if self.read is None:  # a new record: what a build writes
            return {key: value for key, value in values.items() if value is not None or key in _NULL_WRITTEN}
        return values

    # Patches: each a new record

    def written(self, chunks_digest: str) -> IndexMeta:
        """The record a build writes, with the format marker and the checksum of its chunks."""
        return replace(self, kind=INDEX_KIND, chunks_digest=chunks_digest)

    def with_calibration(self, calibrated: CalibratedRecord) -> IndexMeta:
        return replace(self, calibrated=calibrated)

    def kept(
        self,
        docs_root: str,
        files: Mapping[str, FileRecord],
        skipped: Mapping[str, SkippedRecord],
        excludes: tuple[str, ...],
        chunks_digest: Callable[[], str],
    ) -> IndexMeta:
        """The record of an index a build keeps as it is (see ``build.reuse.keep_index``): where
        the docs are, the files as they are now, and the checksum of its chunks (``chunks_digest``
        computed only when the record lacks it)."""
        return replace(
            self,
            docs_root=docs_root,
            files=files,
            skipped=skipped,
            excludes=excludes,
            front_matter_version=FRONT_MATTER_VERSION,
            chunks_digest=self.chunks_digest or chunks_digest(),
        )

    # What its fields say

    @property
    def front_matter_recorded(self) -> bool:
        """Whether its build recorded each file's front matter (``--where`` needs it)."""
        return self.front_matter_version == FRONT_MATTER_VERSION

    def recorded(self) -> Iterator[tuple[str, FileRecord | SkippedRecord]]:
        """Every file the build saw, indexed or skipped, with its record (read a batch at a time
        from an index whose files a server holds)."""
        skipped = self.skipped  # a path in both is the skipped one's, as it always was
        yield from (item for item in self.files.items() if item[0] not in skipped)
        yield from skipped.items()

    def with_files_read(self) -> IndexMeta:
        """This meta with every file's record in memory (a build compares each file with its own;
        a search reads those of the files it shows, from the server that holds them)."""
        return replace(self, files=self.files.loaded()) if isinstance(self.files, HeldFiles) else self


_ATTRIBUTES = tuple(f.name for f in fields(IndexMeta) if f.name not in ("other", "read"))
_NULL_WRITTEN = frozenset({"semsearch_version", "built_at", "corpus_language"})
"""The fields a build writes even when null."""


# The file


def read_meta_json(folder: Path) -> Json:
    """meta.json parsed, unchecked (``IndexMeta.from_json`` checks it); OSError or ValueError
    when it cannot be read."""
    return parse_json(read_text(folder / META_FILE))


def _meta_object(folder: Path) -> dict | None:
    try:
        obj = read_meta_json(folder)
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def peek_meta(folder: Path) -> IndexMeta | None:
    """The checked meta.json of the index at ``folder``, or None when there is none readable."""
    try:
        return IndexMeta.from_json(_meta_object(folder), "")
    except IndexCorruptError:
        return None


def marked_as_index(folder: Path) -> bool:
    """Whether ``folder``'s meta.json has semsearch's format marker (``kind``, or for indexes
    written before it existed, an integer ``format`` with ``semsearch_version`` and ``model``)."""
    obj = _meta_object(folder)
    if obj is None:
        return False
    legacy = type(obj.get("format")) is int and "semsearch_version" in obj and "model" in obj
    return obj.get("kind") == INDEX_KIND or legacy


def recorded_docs_root(folder: Path) -> str | None:
    """``docs_root`` from the meta.json of an index that may be damaged: read as plain JSON,
    since the rest of it may be what is damaged; None when unreadable or not a folder name."""
    obj = _meta_object(folder)  # a regular file only: never a FIFO
    docs = obj.get("docs_root") if obj is not None else None
    return docs if isinstance(docs, str) and docs else None


def fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def write_meta(path: Path, meta: IndexMeta) -> None:
    """Write ``meta`` to ``path`` (a build's staging folder; ``replace_meta`` replaces it in place)."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(meta.to_json(), handle, ensure_ascii=False, indent=1)
        handle.write("\n")


def replace_meta(folder: Path, meta: IndexMeta) -> None:
    """Replace ``folder``'s meta.json atomically (a reader sees the old or the new one). The
    caller holds the lock."""
    import secrets  # here: only a write needs it, a cold ask does not

    staging = folder / f"{META_TEMP_PREFIX}{secrets.token_hex(4)}.json"
    try:
        write_meta(staging, meta)
        fsync_file(staging)
        os.replace(staging, folder / META_FILE)
    except OSError as exc:
        discard(staging)
        raise IndexWriteError(f"cannot write {folder / META_FILE}: {exc.strerror or exc}") from exc
    except BaseException:
        discard(staging)
        raise


def discard(path: Path) -> None:
    """Remove a file a failed write may have left. On a read-only file system removing even a
    missing file fails (EROFS): that must not hide the write's own error."""
    with suppress(OSError):
        path.unlink(missing_ok=True)
