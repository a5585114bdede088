"""meta.json as a typed record (``store.meta``): what is read is what is written back, byte for
byte; older layouts read as before; every check refuses what it refused; patches are new records."""

from __future__ import annotations

import copy
import json
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest

from semsearch.build.pipeline import build_index
from semsearch.collection import Collection
from semsearch.errors import IndexCorruptError, MetaUnreadableError
from semsearch.retrieve.opening import load_index
from semsearch.store.file_records import FileRecord
from semsearch.store.meta import IndexMeta, write_meta
from semsearch.store.records import CalibratedRecord
from tests.helpers import DATA, write

FROZEN = DATA / "meta"
"""meta.json files written by earlier versions, on a folder of five files (front matter read and
broken, a binary file skipped, one of headings only) with the hashing fake: ``current-*`` by the
version before the typed record (built, then ``eval --calibrate``), ``older-*`` by the version of
commit 0c483e7 (the calibrated margin and the corpus language inside ``min_score``); each
``older-*.read.json`` is what the version before the typed record read them as."""


def _text(meta: IndexMeta, tmp_path: Path) -> str:
    write_meta(tmp_path / "meta.json", meta)
    return (tmp_path / "meta.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["current-built", "current-calibrated"])
def test_a_meta_json_read_and_written_again_is_the_same_file(name, tmp_path):
    text = (FROZEN / f"{name}.json").read_text(encoding="utf-8")
    meta = IndexMeta.from_json(json.loads(text), "index")
    assert _text(meta, tmp_path) == text
    assert meta.files["zwroty.md"].front_matter.fields == {
        "title": "Zwroty",
        "year": 2024,
        "tags": ["a", "b"],
    }
    assert meta.files["dostawa.md"].front_matter.problem and meta.files["sub/empty.md"].chunks == 0
    assert meta.skipped["bin.md"].reason == "binary file (NUL bytes), not Markdown"
    assert (meta.calibrated is not None) == (name == "current-calibrated")


@pytest.mark.parametrize("name", ["older-built", "older-calibrated"])
def test_an_older_layout_reads_as_before_and_its_rewrite_is_stable(name, tmp_path):
    meta = IndexMeta.from_json(json.loads((FROZEN / f"{name}.json").read_text(encoding="utf-8")), "index")
    expected = (FROZEN / f"{name}.read.json").read_text(encoding="utf-8")
    assert json.dumps(meta.to_json(), ensure_ascii=False, indent=1) == expected  # same fields, same order
    again = IndexMeta.from_json(json.loads(_text(meta, tmp_path)), "index")
    assert again == meta and _text(again, tmp_path) == _text(meta, tmp_path)
    assert meta.front_matter_version is None and meta.chunks_digest is None and meta.kind is None
    assert meta.margin.gate is None  # a cosine floor: the gate before the relevance rule
    if name == "older-calibrated":
        assert meta.calibrated is not None and meta.calibrated.value == 0.123457
        assert meta.margin.value == json.loads(expected)["min_score"]["value"] != meta.calibrated.value
        assert meta.corpus_language == "pl"


def test_what_a_build_writes_reads_back_the_same_through_rebuild_and_calibration(tmp_path, fake_embedder):
    docs = tmp_path / "docs"
    write(docs / "a.md", "---\ntype: umowa\nyear: 2024\n---\n# Umowa\n\nTreść umowy o dzieło.\n")
    write(docs / "b.md", "# Zwroty\n\nZwrot w ciągu 14 dni.\n")
    write(docs / "empty.md", "# Tylko nagłówek\n")
    index_dir = tmp_path / "index"
    calibrated = []
    for step in ("build", "rebuild", "calibrate", "rebuild", "changed"):
        if step == "calibrate":
            Collection.opened(load_index(index_dir)).calibrate(0.25, tmp_path / "q.jsonl", 40)
        else:
            if step == "changed":
                write(docs / "c.md", "# Nowy\n\nNowy plik.\n")
            build_index(docs, index_dir, embedder=fake_embedder)
        text = (index_dir / "meta.json").read_text(encoding="utf-8")
        meta = load_index(index_dir).meta
        assert _text(meta, tmp_path) == text, step
        calibrated.append(meta.calibrated.value if meta.calibrated else None)
    assert calibrated == [None, None, 0.25, 0.25, None]  # dropped when a third of the passages changed
    assert set(meta.files) == {"a.md", "b.md", "c.md", "empty.md"}


def test_fields_this_version_does_not_know_are_kept_where_they_were(tmp_path):
    obj = json.loads((FROZEN / "current-calibrated.json").read_text(encoding="utf-8"))
    obj = {"from_the_future": [1, {"x": None}], **obj}
    obj["model"]["quantized"] = True
    obj["chunking"]["markup"]["extra"] = "x"
    obj["files"]["zwroty.md"]["language"] = "pl"
    obj["min_score"]["note"] = None
    obj["front_matter"]["schema"] = 2
    obj["offtopic"]["bank_sha256"] = 12  # not of the type semsearch writes: kept as it is
    obj["model"]["max_input_tokens"] = "many"
    meta = IndexMeta.from_json(copy.deepcopy(obj), "index")
    assert meta.to_json() == obj and list(meta.to_json()) == list(obj)
    assert meta.model.max_input_tokens is None and meta.offtopic.bank_sha256 is None
    assert meta.front_matter_version == 1 and meta.front_matter_recorded
    assert meta.chunking.markup is not None and meta.chunking.markup.other == {"extra": "x"}
    assert json.loads(_text(meta.with_calibration(meta.calibrated), tmp_path)) == obj


def test_a_patch_is_a_new_record_and_the_old_one_is_unchanged():
    meta = IndexMeta.from_json(json.loads((FROZEN / "current-built.json").read_text(encoding="utf-8")), "i")
    calibrated = CalibratedRecord(0.3, gate=meta.margin.gate, method="m", questions_file="q", questions=3)
    patched = meta.with_calibration(calibrated)
    assert meta.calibrated is None and patched.calibrated == calibrated and patched != meta
    assert list(patched.to_json())[-1] == "calibrated"  # added after the fields read, as before
    with pytest.raises(FrozenInstanceError):
        patched.docs_root = "/elsewhere"  # type: ignore[misc]
    kept = meta.kept(meta.docs_root, meta.files, meta.skipped, meta.excludes, lambda: "unused")
    assert kept == meta  # nothing changed: a build that keeps the index writes nothing
    moved = replace(meta.files["zwroty.md"], size=1)
    assert meta.kept(meta.docs_root, {**meta.files, "zwroty.md": moved}, {}, (), str) != meta


def _damaged(path: str, value: object) -> dict:
    obj = json.loads((FROZEN / "current-built.json").read_text(encoding="utf-8"))
    *parents, last = path.split(".")
    target = obj
    for key in parents:
        target = target[key]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return obj


INCOMPLETE = [
    ("format", "1", "format"),
    ("format", -1, "format"),
    ("model", KeyError, "model"),
    ("model.spec", "", "model"),
    ("model.dim", 0, "model.dim"),
    ("model.dim", True, "model.dim"),
    ("chunks", -1, "chunks"),
    ("docs_root", "", "docs_root"),
    ("chunking.max_tokens", 1.5, "chunking"),
    ("files", [], "files"),
    ("min_score.value", 1.5, "min_score"),
    ("min_score.gate", "4", "min_score"),
    ("min_score.language_offsets", {"pl": "x"}, "min_score"),
    ("offtopic.background_rows", [1, "2"], "offtopic"),
    ("offtopic.languages", [1], "offtopic"),
]


@pytest.mark.parametrize(("path", "value", "name"), INCOMPLETE)
def test_a_missing_or_mistyped_field_is_incomplete_metadata(path, value, name):
    with pytest.raises(IndexCorruptError) as raised:
        IndexMeta.from_json(_damaged(path, value), "index at x/")
    assert str(raised.value) == f"index at x/ has incomplete metadata ({name!r} missing or invalid)"


FILE_DAMAGE = [
    {"sha256": 1},
    {"size": "1"},
    {"mtime_ns": 1.5},
    {"chunks": "2"},
    {"rows": [0]},
    {"front_matter": {"year": {"nested": 1}}},
    {"front_matter": ["year"]},
    {"front_matter_problem": {"problem": "bad", "line": "3"}},
]


@pytest.mark.parametrize("damage", FILE_DAMAGE)
def test_a_damaged_file_record_is_incomplete_metadata(damage):
    obj = _damaged("format", 1)
    obj["files"]["zwroty.md"].update(damage)
    with pytest.raises(IndexCorruptError, match="incomplete metadata \\('files' missing or invalid\\)"):
        IndexMeta.from_json(obj, "index")


INVALID = [
    ("skipped", {"bin.md": {"size": 3}}),
    ("excludes", ["a", 1]),
    ("keywords", {"language": ""}),
    ("keywords", {"language": "pl", "stemmer": "english"}),
    ("calibrated", {"value": 2}),
    ("front_matter", {"version": "1"}),
    ("corpus_language", 3),
    ("chunks_sha256", None),
    ("built_at", 1),
    ("semsearch_version", []),
]


@pytest.mark.parametrize(("name", "value"), INVALID)
def test_a_mistyped_optional_field_is_invalid_metadata(name, value):
    with pytest.raises(IndexCorruptError) as raised:
        IndexMeta.from_json(_damaged(name, value), "index at x/")
    assert str(raised.value) == f"index at x/ has invalid metadata ({name!r})"


def test_not_an_object_is_unreadable_and_a_newer_format_asks_for_an_upgrade():
    for obj in (None, [], "meta"):
        with pytest.raises(MetaUnreadableError, match="unreadable metadata \\(not a JSON object\\)"):
            IndexMeta.from_json(obj, "index")
    with pytest.raises(IndexCorruptError, match=r"written by a newer semsearch \(9\.9\); upgrade semsearch"):
        IndexMeta.from_json({**_damaged("format", 2), "semsearch_version": "9.9"}, "index")


def test_a_file_record_made_by_a_build_has_the_fields_in_the_order_a_build_writes():
    record = FileRecord(sha256="s", size=1, mtime_ns=2, chunks=0, rows=(0, 0))
    assert list(record.to_json()) == ["sha256", "size", "mtime_ns", "chunks", "rows"]
    assert not record.has_text


def test_a_keyword_record_without_its_language_is_an_unreadable_keyword_index(tmp_path, fake_embedder):
    write(tmp_path / "docs" / "a.md", "# Zwroty\n\nZwrot w ciągu 14 dni.\n")
    build_index(tmp_path / "docs", tmp_path / "index", embedder=fake_embedder)
    path = tmp_path / "index" / "meta.json"
    obj = json.loads(path.read_text(encoding="utf-8"))
    del obj["keywords"]["language"], obj["keywords"]["stemmer"]
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(IndexCorruptError, match=r"has an unreadable keyword index \('language'\)$"):
        load_index(tmp_path / "index")
    assert load_index(tmp_path / "index", keywords=False).meta.keywords.language is None
