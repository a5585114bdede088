"""Rebuilds reuse exactly what they may, and say what they did.

Each test here reproduces a finding of an outside probe and failed before its fix: `--full`
resumed from an interrupted build's journal (and "up to date" left that journal behind), files
re-chunked were reported as new, a damaged keyword index had every chunk embedded again, and an
index holding one file of the user's was refused as "not a semsearch index".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from semsearch.build import pipeline as build_module
from semsearch.build.pipeline import build_index
from semsearch.build.reuse import reusable_index
from semsearch.cli.commands import app
from semsearch.encode.keywords import FILES as KEYWORD_FILES
from semsearch.encode.pages import FILES as PAGE_FILES
from semsearch.retrieve.opening import load_index
from tests.helpers import FAKE_MODEL, write
from tests.unit.store.test_safety import snapshot

runner = CliRunner()


FILES = 17
"""One chunk each: two embedding batches (1 + 16, the shorter first) with the real model."""


def built_with(root: Path, *model: str) -> tuple[Path, Path]:
    for i in range(FILES):
        write(root / "docs" / f"plik-{i:02}.md", f"# Plik {i}\n\nTreść numer {i} o zwrotach i dostawie.\n")
    build(root / "docs", "--index", root / "index", *model)
    return root / "docs", root / "index"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """A folder and its index, built once with the hashing fake (tests take copies; rebuilds keep it)."""
    return built_with(tmp_path_factory.mktemp("built"), "--model", FAKE_MODEL)


@pytest.fixture(scope="module")
def built_real(tmp_path_factory) -> tuple[Path, Path]:
    """The same, built with the real default model (slow tests whose questions need its answers)."""
    return built_with(tmp_path_factory.mktemp("built-real"))


def copied(built: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the built folder at ``tmp_path/docs``, its index (copied too) at ``tmp_path/index``."""
    shutil.copytree(built[0], tmp_path / "docs")
    shutil.copytree(built[1], tmp_path / "index")
    return tmp_path / "docs"


@pytest.fixture
def docs(built, tmp_path) -> Path:
    return copied(built, tmp_path)


@pytest.fixture
def docs_real(built_real, tmp_path) -> Path:
    return copied(built_real, tmp_path)


def build(*args: object) -> dict:
    """``semsearch build ... --json`` with the real default model: its report."""
    result = runner.invoke(app, ["build", *map(str, args), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def interrupted_build(monkeypatch, *args: object, batches: int = 1) -> None:
    """``semsearch build ...`` with the real model, Ctrl-C after ``batches`` embedding batches."""
    real_load = build_module.load_embedder

    def load_then_die(spec):
        embedder = real_load(spec)
        embed = embedder.embed_passages
        left = [batches]

        def embed_passages(texts):
            if left[0] == 0:
                raise KeyboardInterrupt
            left[0] -= 1
            return embed(texts)

        embedder.embed_passages = embed_passages
        return embedder

    with monkeypatch.context() as patch:
        patch.setattr(build_module, "load_embedder", load_then_die)
        result = runner.invoke(app, ["build", *map(str, args), "-q"])
    assert result.exit_code == 130, result.output
    assert "error: interrupted" in result.stderr


# --full reuses nothing; a journal goes once it serves nothing


def test_full_reuses_no_interrupted_build_and_up_to_date_removes_its_journal(docs, tmp_path, monkeypatch):
    index, journal = tmp_path / "index", tmp_path / ".index.partial"
    interrupted_build(monkeypatch, docs, "--index", index, "--full")
    assert journal.is_dir()  # the first batch's vectors kept, all of them already in the index
    up_to_date = build(docs, "--index", index)
    assert up_to_date["up_to_date"] and not journal.exists()

    interrupted_build(monkeypatch, docs, "--index", index, "--full")
    full = build(docs, "--index", index, "--full")
    assert (full["embedded"], full["resumed"]) == (FILES, 0)
    assert (full["new"], full["changed"], full["removed"], full["unchanged"]) == (0, 0, 0, FILES)
    assert not journal.exists()  # a build that completes leaves no journal


@pytest.mark.slow
def test_an_interrupted_build_of_other_files_still_resumes_after_an_up_to_date_check(
    docs_real, tmp_path, monkeypatch
):
    """The crash-safety contract: the old index stays usable, and the interrupted build, run
    again, resumes, even after a build found the old index up to date meanwhile."""
    docs = docs_real  # "zwroty" must reach the real model's gate
    index, journal = tmp_path / "index", tmp_path / ".index.partial"
    before = snapshot(index)
    other = tmp_path / "other"
    for i in range(FILES):
        write(other / f"inny-{i:02}.md", f"# Inny {i}\n\nZupełnie inna treść {i} o płatnościach.\n")
    interrupted_build(monkeypatch, other, "--index", index)
    assert snapshot(index) == before
    asked = runner.invoke(app, ["ask", "zwroty", "--index", str(index), "-k", "1"])
    assert asked.exit_code == 0, asked.output
    assert build(docs, "--index", index)["up_to_date"]
    assert journal.is_dir()  # it holds vectors the index lacks: kept for the build they belong to
    resumed = build(other, "--index", index)
    assert (resumed["resumed"], resumed["embedded"]) == (1, FILES - 1)
    assert not journal.exists()


def test_a_users_folder_named_like_the_journal_survives_full_and_up_to_date_builds(
    docs, tmp_path, fake_embedder
):
    build_index(docs, tmp_path / "fake", embedder=fake_embedder)
    write(tmp_path / ".fake.partial" / "thesis.md", "my precious")
    write(tmp_path / ".fake.partial" / "00000000000000000001-abcd.keys", "not a key\n")
    before = snapshot(tmp_path / ".fake.partial")
    assert build_index(docs, tmp_path / "fake", embedder=fake_embedder).up_to_date
    build_index(docs, tmp_path / "fake", embedder=fake_embedder, full=True)
    assert snapshot(tmp_path / ".fake.partial") == before


# Files are counted against the previous index, reused or not


def test_a_chunking_change_reports_files_as_unchanged_and_re_chunked_not_new(docs, tmp_path):
    """Only the new and changed files' passages are embedded: an unchanged passage keeps its
    vector (an outside probe saw a markup change re-embed a whole folder for minutes)."""
    write(docs / "plik-00.md", "# Plik 0\n\nTreść zmieniona.\n")
    write(docs / "nowy.md", "# Nowy\n\nNowy plik.\n")
    (docs / "plik-01.md").unlink()
    result = runner.invoke(
        app, ["build", str(docs), "--index", str(tmp_path / "index"), "--max-tokens", "40", "-v"]
    )
    assert result.exit_code == 0, result.output
    kept = "; passages whose text did not change keep their vectors"
    assert f"Full rebuild: the chunking changed (max_tokens 300 → 40){kept}" in result.stderr
    summary = f"(1 new, 1 changed, 1 removed, {FILES - 2} unchanged but re-chunked; 2 chunks embedded"
    assert summary in result.stdout
    lines = [line.split() for line in result.stderr.splitlines()]
    status = {words[1].rstrip(":"): words[0] for words in lines if words[1:] and ".md" in words[1]}
    assert (status["nowy.md"], status["plik-00.md"], status["plik-01.md"], status["plik-02.md"]) == (
        "new",
        "changed",
        "removed",
        "unchanged",
    )


# A damaged keyword index is derived data: rebuilt from the chunks, nothing embedded again


@pytest.mark.slow
@pytest.mark.parametrize("damaged", ["keywords.vocab.txt", "keywords.indptr.npy"])
def test_a_damaged_keyword_index_is_rebuilt_without_embedding(docs_real, tmp_path, damaged):
    index = tmp_path / "index"
    intact = {name: (index / name).read_bytes() for name in (*KEYWORD_FILES, "vectors.npy")}
    (index / damaged).write_text("zz\n")
    broken = runner.invoke(app, ["ask", "zwroty", "--index", str(index)])
    assert broken.exit_code == 2 and "keyword index" in broken.stderr

    report = build("--index", index)  # a rebuild of the folder the index records
    assert (report["embedded"], report["resumed"], report["full_reason"]) == (0, 0, None)
    assert (report["new"], report["changed"], report["unchanged"]) == (0, 0, FILES)
    assert any("unreadable keyword index" in w and "nothing embedded" in w for w in report["warnings"])
    assert {name: (index / name).read_bytes() for name in intact} == intact
    assert runner.invoke(app, ["ask", "zwroty", "--index", str(index)]).exit_code == 0
    assert build("--index", index)["up_to_date"]


def test_damaged_keywords_with_damaged_vectors_or_chunks_reuse_nothing(docs, tmp_path):
    index = tmp_path / "index"
    meta = load_index(index).meta
    spec, settings = meta.model.spec, meta.chunking
    (index / "keywords.vocab.txt").write_text("zz\n")
    vectors = np.load(index / "vectors.npy")
    np.save(index / "vectors.npy", vectors * 2)  # not unit length: found when read, before the keywords
    reusable = reusable_index(index, spec, settings, full=False)
    assert reusable.index is None and "damaged vectors" in reusable.full_reason

    np.save(index / "vectors.npy", vectors)
    assert reusable_index(index, spec, settings, full=False).repair  # keywords alone: repaired
    chunks = (index / "chunks.json").read_text(encoding="utf-8")
    damaged = chunks.replace('"start_line": 3', '"start_line":"3"', 1).replace('"text": ', '"text":', 1)
    assert len(damaged) == len(chunks)  # the offsets still match: only reading the chunk finds it
    (index / "chunks.json").write_text(damaged, encoding="utf-8")
    reusable = reusable_index(index, spec, settings, full=False)
    assert reusable.index is None and "unreadable keyword index" in reusable.full_reason


# A folder holding files semsearch did not create says which


def test_an_index_with_a_users_file_added_is_refused_naming_the_file(docs, tmp_path):
    index = tmp_path / "index"
    write(index / "README.txt", "mine")
    before = snapshot(tmp_path)
    result = runner.invoke(app, ["build", str(docs), "--index", str(index)])
    assert result.exit_code == 2 and result.stderr.strip().count("\n") == 0
    assert f"error: {index} holds files semsearch did not create (README.txt); refusing" in result.stderr
    assert "is not a semsearch index" not in result.stderr
    assert snapshot(tmp_path) == before
    for name in ("notes.md", "a", "b"):
        write(index / name, "mine")
    (index / "vectors.npy").unlink()
    (index / "vectors.npy").mkdir()  # a folder named like an index file is not semsearch's either
    before = snapshot(tmp_path)
    many = runner.invoke(app, ["build", str(docs), "--index", str(index)])
    assert many.exit_code == 2 and "(README.txt, a, b and 2 more)" in many.stderr
    assert snapshot(tmp_path) == before


# An index built before page evidence


def test_an_index_without_titles_is_re_chunked_keeping_every_vector_and_gains_its_pages(docs, tmp_path):
    """An index of a version that recorded no page titles: its next build learns them by
    re-chunking (nothing embedded: the texts are the same) and writes the page index; until
    then it is searched without page evidence, not refused."""
    index = tmp_path / "index"
    meta = json.loads((index / "meta.json").read_text())
    del meta["chunking"]["titles"], meta["pages"]
    for record in meta["files"].values():
        record.pop("title", None)
    (index / "meta.json").write_text(json.dumps(meta))
    for name in PAGE_FILES:
        (index / name).unlink()
    old = load_index(index)
    assert old.pages is None and old.meta.files["plik-03.md"].title is None
    searched = runner.invoke(app, ["ask", "Plik 3 zwroty", "--index", str(index), "--json"])
    assert searched.exit_code in (0, 1) and json.loads(searched.stdout)["best_score"], searched.output

    result = runner.invoke(app, ["build", "--index", str(index), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["full_reason"] == "the chunking changed (titles — → 1)"
    assert (report["embedded"], report["resumed"]) == (0, 0)
    new = load_index(index)
    assert new.pages is not None and new.pages.count == FILES
    assert new.meta.files["plik-03.md"].title == "Plik 3"
    assert np.array_equal(np.asarray(new.vectors), np.asarray(old.vectors))
