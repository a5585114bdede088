"""The index format: its files, and meta.json's fields, checked once when read so that no
reader meets a missing field or a wrong type (older layouts are brought up to date here)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from semsearch.encode.keywords import FILES as KEYWORD_FILES
from semsearch.encode.keywords import stemmer_name
from semsearch.errors import IndexCorruptError, MetaUnreadableError
from semsearch.store.chunkfile import CHECKSUMS_FILE, CHUNKS_FILE, OFFSETS_FILE

INDEX_FORMAT = 1
INDEX_KIND = "semsearch-index"
META_FILE = "meta.json"
STAGING_MARKER = ".semsearch-staging"
"""Written first into every folder a build stages: only such folders are ever removed as leftovers."""
CHUNKS_DIGEST = "chunks_sha256"
"""The meta.json field holding the sha256 of chunks.json (absent in indexes written before it)."""
INDEX_FILES = (
    "vectors.npy",
    "offtopic.npy",
    CHUNKS_FILE,
    OFFSETS_FILE,
    CHECKSUMS_FILE,
    *KEYWORD_FILES,
    META_FILE,
)

# meta.json fields, checked once so that no reader meets a wrong type


def _integer(value: Any) -> bool:
    return type(value) is int


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _cosine(value: Any) -> bool:
    return _number(value) and -1 <= value <= 1


def _optional_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _scalar(value: Any) -> bool:
    return isinstance(value, str | bool | int) or _number(value)


def _front_matter(value: Any) -> bool:
    """A file's front-matter fields: names to scalars or lists of scalars (see ``frontmatter``)."""
    return isinstance(value, dict) and all(
        isinstance(name, str) and (_scalar(v) or (isinstance(v, list) and all(map(_scalar, v))))
        for name, v in value.items()
    )


def _front_matter_problem(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("problem"), str) and _integer(value.get("line"))


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
        and _front_matter(value.get("front_matter", {}))
        and ("front_matter_problem" not in value or _front_matter_problem(value["front_matter_problem"]))
    )


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


FIELDS: dict[str, Callable[[Any], bool]] = {
    "format": lambda v: _integer(v) and v >= 0,
    "model": lambda v: isinstance(v, dict) and isinstance(v.get("spec"), str) and bool(v["spec"]),
    "model.dim": lambda v: _integer(v) and v > 0,
    "chunks": lambda v: _integer(v) and v >= 0,
    "docs_root": lambda v: isinstance(v, str) and bool(v),
    "chunking": lambda v: isinstance(v, dict) and _integer(v.get("max_tokens")),
    "files": lambda v: isinstance(v, dict) and all(_file_record(r) for r in v.values()),
    "min_score": lambda v: (
        isinstance(v, dict)
        and _cosine(v.get("value"))
        and (v.get("gate") is None or _integer(v["gate"]))  # the rule's version, looked up in RULES
        and _language_offsets(v.get("language_offsets", {}))
    ),
    "offtopic": lambda v: (
        isinstance(v, dict)
        and isinstance(v.get("background_rows"), list)
        and all(map(_integer, v["background_rows"]))
        and isinstance(v.get("languages", []), list)
        and all(isinstance(language, str) for language in v.get("languages", []))
    ),
}
OPTIONAL_FIELDS: dict[str, Callable[[Any], bool]] = {
    "skipped": lambda v: isinstance(v, dict) and all(_skipped_record(r) for r in v.values()),
    "excludes": lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v),
    "keywords": lambda v: isinstance(v, dict) and _keyword_language(v),
    "calibrated": lambda v: isinstance(v, dict) and _cosine(v.get("value")),
    "front_matter": lambda v: isinstance(v, dict) and _integer(v.get("version")),
    "corpus_language": _optional_text,
    CHUNKS_DIGEST: lambda v: isinstance(v, str),
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
        raise MetaUnreadableError(f"{problem} has unreadable metadata (not a JSON object)")
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
