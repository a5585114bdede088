"""--where: conditions on front matter, applied before the top k, checked against brute force."""

from __future__ import annotations

import datetime as dt
import operator
from dataclasses import replace

import numpy as np
import pytest

from semsearch.errors import IndexCorruptError, UsageError
from semsearch.ingest.chunking import Chunk
from semsearch.ingest.frontmatter import FRONT_MATTER_VERSION, FrontMatter
from semsearch.retrieve.filters import Condition, allowed_rows
from semsearch.retrieve.index import Index
from semsearch.retrieve.searcher import Searcher
from semsearch.store.file_records import FileRecord
from tests.helpers import meta_record

TYPES = ["umowa", "regulamin", "faq"]
TAGS = ["faq", "prawo", "zwroty", "dostawa"]
START = dt.date(2020, 1, 1)
OPS = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def random_front_matter(rng: np.random.Generator) -> dict:
    fields: dict = {}
    if rng.random() < 0.8:
        fields["type"] = str(rng.choice(TYPES))
    if rng.random() < 0.8:
        fields["year"] = int(rng.integers(2018, 2027))
    if rng.random() < 0.6:
        fields["tags"] = [str(t) for t in rng.choice(TAGS, size=int(rng.integers(0, 4)), replace=False)]
    if rng.random() < 0.6:
        fields["date"] = (START + dt.timedelta(days=int(rng.integers(0, 2000)))).isoformat()
    if rng.random() < 0.3:
        fields["draft"] = bool(rng.random() < 0.5)
    if rng.random() < 0.3:
        fields["score"] = round(float(rng.normal()), 2)
    return fields


def random_index(rng: np.random.Generator, tmp_path) -> Index:
    files, chunks, row = {}, [], 0
    for number in range(int(rng.integers(1, 40))):
        source = f"dir{number % 3}/f{number}.md"
        count = int(rng.integers(0, 4))
        fields = random_front_matter(rng)
        files[source] = FileRecord(chunks=count, rows=(row, row + count), front_matter=FrontMatter(fields))
        chunks += [Chunk(f"{source}#{i}", source, ("T",), f"t{i}", 1, 1, 1) for i in range(count)]
        row += count
    vectors = rng.normal(size=(max(row, 1), 8)).astype(np.float32)[:row]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    meta = meta_record(
        files=files, docs_root=str(tmp_path), chunks=row, front_matter_version=FRONT_MATTER_VERSION
    )
    empty = np.zeros((0, 8), dtype=np.float32)
    return Index(tmp_path, meta, chunks, vectors, empty, empty)


def random_condition(rng: np.random.Generator) -> str:
    field = str(rng.choice(["type", "year", "tags", "date", "draft", "score"] * 3 + ["missing"]))
    if field in ("type", "tags", "missing"):
        values = {"type": [*TYPES, "Umowa"], "tags": TAGS, "missing": TYPES}[field]
        return f"{field}{rng.choice(['=', '!='])}{rng.choice(values)}"
    if field == "draft":
        return f"draft{rng.choice(['=', '!='])}{rng.choice(['true', 'false', 'yes', 'no'])}"
    op = str(rng.choice(list(OPS)))
    if field == "year":
        return f"year{op}{int(rng.integers(2017, 2028))}"
    if field == "score":
        return f"score{op}{round(float(rng.normal()), 1)}"
    return f"date{op}{(START + dt.timedelta(days=int(rng.integers(-10, 2010)))).isoformat()}"


def reference(fields: dict, condition: str) -> bool:
    """The meaning of a condition, written out per field type (no shared code with ``filters``)."""
    field, op, value = next(
        (condition[: condition.index(o)], o, condition[condition.index(o) + len(o) :])
        for o in ("!=", "<=", ">=", "=", "<", ">")
        if o in condition
    )
    if field not in fields:
        return False
    have = fields[field]
    if field == "tags":
        return (value in have) if op == "=" else (value not in have)
    if field == "draft":
        return OPS[op](have, value in ("true", "yes"))
    if field in ("year", "score"):
        return OPS[op](float(have), float(value))
    if field == "date":
        return OPS[op](dt.date.fromisoformat(have), dt.date.fromisoformat(value))
    return OPS[op](have, value)


def brute_force(index: Index, scores: np.ndarray, allowed_sources: set[str], k: int) -> list[int]:
    rows = [row for row, chunk in enumerate(index.chunks) if chunk.source in allowed_sources]
    return sorted(rows, key=lambda row: (-scores[row], row))[:k]


@pytest.mark.parametrize("seed", range(200))
def test_where_and_path_filter_before_the_top_k_as_brute_force_does(seed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(seed)
    index = random_index(rng, tmp_path)
    where = [random_condition(rng) for _ in range(int(rng.choice([1, 1, 1, 2, 2, 3])))]
    paths = [f"dir{int(rng.integers(0, 3))}/**"] if rng.random() < 0.3 else []
    expected = {
        source
        for source, record in index.meta.files.items()
        if all(reference(record.front_matter.fields, c) for c in where)
        and (not paths or source.startswith(paths[0][:5]))
    }
    query = rng.normal(size=8).astype(np.float32)
    question = Searcher(index).parse("q")
    if not expected:
        with pytest.raises(UsageError, match="no indexed file matches"):
            Searcher(index).ranked(question, query, 3, mode="dense", paths=paths, where=where)
        return
    if not any(index.meta.files[s].chunks for s in expected):  # nothing to search: said so
        with pytest.raises(UsageError, match="match only files with no text to search"):
            Searcher(index).ranked(question, query, 3, mode="dense", paths=paths, where=where)
        return
    scores = index.vectors @ query
    for k in (1, 3, len(index.chunks) + 1):
        ranked = [
            r.row for r in Searcher(index).ranked(question, query, k, mode="dense", paths=paths, where=where)
        ]
        assert ranked == brute_force(index, scores, expected, k), (where, paths)
    mask = allowed_rows(index.meta, len(index.chunks), paths, where)
    assert {index.chunks[row].source for row in np.flatnonzero(mask)} == {
        s for s in expected if index.meta.files[s].chunks
    }


@pytest.mark.parametrize(
    "condition, fields, matches",
    [
        ("tags=faq", {"tags": ["faq", "prawo"]}, True),
        ("tags!=faq", {"tags": ["faq", "prawo"]}, False),
        ("tags!=faq", {"tags": []}, True),
        ("tags!=faq", {}, False),  # without the field, never
        ("type!=umowa", {}, False),
        ("year>=2024", {"year": 2024}, True),
        ("year>=2024", {"year": "2024"}, True),  # quoted in YAML: still a number
        ("year=2024", {"year": 2024.0}, True),
        ("year>2024", {"year": "dawno"}, False),
        ("year!=abc", {"year": 2024}, True),
        ("date<2024-05-02", {"date": "2024-05-01"}, True),
        ("date<2024-05-01", {"date": "2024-05-01T23:00:00"}, False),
        ("date>=2024-05-01", {"date": "2024-05-01T10:00:00+02:00"}, True),  # 08:00 UTC
        ("date>2024-05-01T09:00", {"date": "2024-05-01T10:00:00+02:00"}, False),
        ("date=2024-05-01", {"date": "2024-05-01"}, True),
        ("date<2025-01-01", {"date": ["2026-01-01", "2024-03-01"]}, True),  # one item is enough
        ("draft=false", {"draft": False}, True),
        ("draft=no", {"draft": False}, True),
        ("draft=maybe", {"draft": False}, False),
        ("type=umowa", {"type": "Umowa"}, False),  # text compares exactly
        ("type==umowa", {"type": "umowa"}, True),
        ("author.name=Ala", {"author.name": "Ala"}, True),
        ("title=Regulamin sklepu", {"title": "Regulamin sklepu"}, True),
        ("year=2024", {"year": True}, False),
    ],
)
def test_condition_meanings(condition, fields, matches):
    assert Condition.parse(condition).matches(fields) is matches


@pytest.mark.parametrize(
    "text, message",
    [
        ("type", "expected FIELD OP VALUE"),
        ("=umowa", "expected FIELD OP VALUE"),
        ("type=", "has no value"),
        ("type>umowa", "needs a number or a date"),
        ("year<=soon", "needs a number or a date"),
    ],
)
def test_a_condition_that_cannot_work_is_a_usage_error(text, message):
    with pytest.raises(UsageError, match=message):
        Condition.parse(text)


def test_an_index_without_front_matter_says_to_rebuild(tmp_path):
    index = random_index(np.random.default_rng(0), tmp_path)
    index.meta = replace(index.meta, front_matter_version=None)
    with pytest.raises(IndexCorruptError, match="predates front-matter filters"):
        index.allowed_rows((), ["type=umowa"])
    assert index.allowed_rows(("dir0/**",), ()) is not None  # --path alone still works
