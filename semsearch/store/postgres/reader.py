"""Reading an index's record from its schema, checked and bounded before anything is fetched:
nothing read is unpickled or executed, and nothing is trusted (a record claiming more than a
bound, a column of the wrong type or a table missing is an ``IndexCorruptError``, one line).
The parts a search reads on demand: ``remote``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from semsearch.errors import IndexCorruptError, IndexMissingError
from semsearch.store.location import PostgresLocation
from semsearch.store.meta import IndexMeta
from semsearch.store.postgres.layout import FORMAT, PARTS, RECORD, RECORD_COLUMNS, VERSION, sql
from semsearch.store.schema import INDEX_KIND
from semsearch.util.jsonparse import parse_json
from semsearch.util.regular import TEXT_BOUND

MAX_DIM = 16_000
"""The most dimensions pgvector's ``vector`` holds: a record claiming more is damage."""
MAX_ROWS = 1 << 31
MAX_BANK = 100_000
"""The most off-topic questions a record may hold (the bank ships some 370)."""


@dataclass(frozen=True)
class Record:
    """The record row, checked (see ``layout``)."""

    version: str
    stamp: str
    text: str
    meta: IndexMeta
    dim: int
    rows: int
    offtopic: np.ndarray
    page_starts: np.ndarray
    page_topics: np.ndarray

    @property
    def identity(self) -> tuple[int, int, str]:
        """What ``update_meta`` compares: the sha256 of the record's text (as of a meta.json)."""
        return (0, 0, hashlib.sha256(self.text.encode("utf-8")).hexdigest())


def record_exists(connection: Any, schema: str) -> bool:
    found = connection.execute(
        "SELECT to_regclass(format('%%I.%%I', %s::text, %s::text)) IS NOT NULL", [schema, RECORD]
    ).fetchone()
    return bool(found and found[0])


def schema_tables(connection: Any, schema: str) -> list[str]:
    rows = connection.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'v', 'm', 'p', 'f') ORDER BY c.relname",
        [schema],
    ).fetchall()
    return [name for (name,) in rows]


_RECORD_QUERY = """
SELECT kind, format, version, stamp, dim, rows, pages, offtopic_rows,
       CASE WHEN octet_length(meta) <= %(text_bound)s THEN meta END,
       CASE WHEN dim BETWEEN 1 AND %(max_dim)s AND offtopic_rows BETWEEN 0 AND %(max_bank)s
             AND octet_length(offtopic)::bigint = offtopic_rows::bigint * dim * 4 THEN offtopic END,
       CASE WHEN pages BETWEEN 0 AND rows AND octet_length(page_starts)::bigint = (pages + 1)::bigint * 8
             AND octet_length(page_topics)::bigint = pages::bigint * 4 THEN page_starts END,
       CASE WHEN pages BETWEEN 0 AND rows AND octet_length(page_topics)::bigint = pages::bigint * 4
             THEN page_topics END
FROM {} LIMIT 2
"""


def record_kinds(connection: Any, schema: str) -> list[object] | None:
    """The ``kind`` of each row of the schema's record table (semsearch's marker, when semsearch
    wrote it); None when the schema has no such table or one of other columns than ``layout``'s."""
    columns = connection.execute(
        "SELECT array_agg(a.attname::text) FROM pg_attribute a "
        "WHERE a.attrelid = to_regclass(format('%%I.%%I', %s::text, %s::text)) AND a.attnum > 0 "
        "AND NOT a.attisdropped",
        [schema, RECORD],
    ).fetchone()[0]
    if not columns or not set(RECORD_COLUMNS) <= set(columns):
        return None
    query = sql().SQL("SELECT kind FROM {} LIMIT 2").format(sql().Identifier(RECORD))
    return [kind for (kind,) in connection.execute(query).fetchall()]


def read_record(connection: Any, location: PostgresLocation) -> Record:
    """The record of the index at ``location``, checked; IndexMissingError when the schema holds
    none, or holds one semsearch did not write."""
    if not record_exists(connection, location.schema):
        raise IndexMissingError(f"no index at {location} (no semsearch index in schema {location.schema!r})")
    if record_kinds(connection, location.schema) is None:
        raise IndexMissingError(
            f"the schema {location.schema!r} at {location.server} was not made by semsearch"
        )
    s = sql()
    query = s.SQL(_RECORD_QUERY).format(s.Identifier(RECORD))
    bounds = {"text_bound": TEXT_BOUND, "max_dim": MAX_DIM, "max_bank": MAX_BANK}
    found = connection.execute(query, bounds).fetchall()
    where = f"the index at {location}"
    if not found:
        raise IndexMissingError(f"no index at {location} (its record is empty)")
    kind, form, version, stamp, dim, rows, pages, bank, text, offtopic, starts, topics = found[0]
    if len(found) > 1 or kind != INDEX_KIND:
        raise IndexMissingError(
            f"the schema {location.schema!r} at {location.server} was not made by semsearch"
        )
    if form != FORMAT:
        older = isinstance(form, int) and form < FORMAT
        raise IndexCorruptError(
            f"{where} has tables of {'an older' if older else 'another'} format ({form}; this semsearch "
            f"reads {FORMAT}){': build it again' if older else ''}"
        )
    if not isinstance(version, str) or not VERSION.fullmatch(version):
        raise IndexCorruptError(f"{where} has a record naming no version of its tables")
    if text is None:
        raise IndexCorruptError(f"{where} has a record larger than {TEXT_BOUND:,} bytes")
    if offtopic is None or starts is None or topics is None or not 0 <= rows < MAX_ROWS:
        raise IndexCorruptError(f"{where} has a record whose sizes do not add up (dim {dim}, {rows} rows)")
    meta = meta_of(text, where)
    if meta.model.dim != dim or meta.chunks != rows:
        raise IndexCorruptError(
            f"{where}: the record says {rows} rows of {dim} dimensions, "
            f"its meta {meta.chunks} of {meta.model.dim}"
        )
    return Record(
        version=version,
        stamp=str(stamp),
        text=text,
        meta=meta,
        dim=dim,
        rows=rows,
        offtopic=np.frombuffer(offtopic, dtype="<f4").astype(np.float32).reshape(bank, dim),
        page_starts=_page_starts(np.frombuffer(starts, dtype="<i8").astype(np.int64), rows, where),
        page_topics=_page_topics(np.frombuffer(topics, dtype="<f4").astype(np.float32), where),
    )


def meta_of(text: str, where: str) -> IndexMeta:
    try:
        obj = parse_json(text)
    except ValueError as exc:
        raise IndexCorruptError(f"{where} has an unreadable record ({exc})") from exc
    return IndexMeta.from_json(obj, where)


def _page_starts(starts: np.ndarray, rows: int, where: str) -> np.ndarray:
    if len(starts) and (
        starts[0] != 0 or starts[-1] != rows or (len(starts) > 1 and (np.diff(starts) <= 0).any())
    ):
        raise IndexCorruptError(f"{where} has pages that do not cover its {rows:,} rows in order")
    return starts


def _page_topics(topics: np.ndarray, where: str) -> np.ndarray:
    if not np.isfinite(topics).all():
        raise IndexCorruptError(f"{where} has page figures that are not finite numbers")
    return topics


def check_tables(connection: Any, location: PostgresLocation, record: Record) -> None:
    """Raise unless the record's version has its tables, with vectors of the record's dimension
    (a table of another dimension or type would make every score wrong)."""
    names = [f"{part}_{record.version}" for part in PARTS]
    found = dict(
        connection.execute(
            "SELECT c.relname, format_type(a.atttypid, a.atttypmod) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname IN ('embedding', 'centroid') "
            "WHERE n.nspname = %s AND c.relname = ANY(%s)",
            [location.schema, names],
        ).fetchall()
    )
    where = f"the index at {location}"
    missing = [name for name in names if name not in found]
    if missing:
        raise IndexCorruptError(f"{where} is incomplete (its table {missing[0]!r} is missing)")
    expected = f"vector({record.dim})"
    for name in (names[0], names[3], names[4]):
        if found[name] != expected:
            raise IndexCorruptError(f"{where}: {name} holds {found[name]}, expected {expected}")
