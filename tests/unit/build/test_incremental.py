"""Incremental, crash-safe builds."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys

import numpy as np
import pytest

from semsearch.build import pipeline as build_module
from semsearch.build.pipeline import build_index
from semsearch.errors import IndexBusyError
from semsearch.retrieve.opening import load_index
from semsearch.store import reader
from semsearch.store.folder import index_lock
from semsearch.store.schema import STAGING_MARKER
from tests.helpers import REPO, SAMPLE_DOCS, write


@pytest.fixture
def docs(tmp_path):
    root = tmp_path / "docs"
    write(
        root / "a.md",
        "# Alfa\n\n## Jeden\n\nPierwszy akapit o zwrotach.\n\n## Dwa\n\nDrugi akapit o dostawie.\n",
    )
    write(root / "b.md", "# Beta\n\nTekst o płatnościach kartą i BLIK-iem.\n")
    write(root / "c.md", "# Gamma\n\nTekst o koncie i haśle.\n")
    return root


def assert_same_index(left, right):
    a, b = load_index(left), load_index(right)
    assert [c.to_dict() for c in a.chunks] == [c.to_dict() for c in b.chunks]
    np.testing.assert_allclose(a.vectors, b.vectors, atol=1e-5)
    assert a.gate.margin == pytest.approx(b.gate.margin, abs=1e-5)
    np.testing.assert_allclose(a.background, b.background, atol=1e-5)
    assert {k: (v.sha256, v.rows) for k, v in a.meta.files.items()} == {
        k: (v.sha256, v.rows) for k, v in b.meta.files.items()
    }
    # The keyword index follows every change too.
    assert (a.path / "keywords.vocab.txt").read_bytes() == (b.path / "keywords.vocab.txt").read_bytes()
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(a.keywords, name), getattr(b.keywords, name))


def edit_docs(root):
    write(root / "a.md", "# Alfa\n\n## Jeden\n\nPierwszy akapit o zwrotach, zmieniony.\n")  # changed
    (root / "c.md").unlink()  # removed
    write(root / "d" / "nowy.md", "# Delta\n\nNowy plik o reklamacjach.\n")  # new


@pytest.mark.slow
def test_incremental_build_equals_full_build_with_the_real_model(docs, tmp_path):
    incremental = tmp_path / "incremental"
    build_index(docs, incremental)
    edit_docs(docs)
    report = build_index(docs, incremental)
    c = report.changes
    assert (c.new, c.changed, c.removed, c.unchanged) == (1, 1, 1, 1)
    assert report.embedded == 2 and report.full_reason is None
    build_index(docs, tmp_path / "full", full=True)
    assert_same_index(incremental, tmp_path / "full")


@pytest.mark.slow
def test_unchanged_rebuild_embeds_nothing_and_loads_no_model(docs, tmp_path, monkeypatch):
    build_index(docs, tmp_path / "index")
    before = (tmp_path / "index" / "vectors.npy").read_bytes()

    def no_model(spec):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(build_module, "load_embedder", no_model)
    os.utime(docs / "b.md")  # touched, same content
    report = build_index(docs, tmp_path / "index")
    assert report.up_to_date and report.embedded == 0
    assert (report.changes.unchanged, report.files) == (3, 3)
    assert (tmp_path / "index" / "vectors.npy").read_bytes() == before
    assert load_index(tmp_path / "index").meta.files["b.md"].mtime_ns == (docs / "b.md").stat().st_mtime_ns


def test_incremental_with_fake_embedder_reuses_vectors(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    embedded_first = fake_embedder.passages_embedded
    edit_docs(docs)
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert fake_embedder.passages_embedded - embedded_first == report.embedded == 2
    build_index(docs, tmp_path / "full", embedder=fake_embedder, full=True)
    assert_same_index(tmp_path / "index", tmp_path / "full")


def test_model_or_chunking_change_forces_a_full_rebuild(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    write(docs / "a.md", "# A\n\n" + "Długi akapit o dostawie paczek do paczkomatu. " * 12 + "\n")
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder, max_tokens=64)
    assert "the chunking changed (max_tokens 300 → 64)" in report.full_reason and report.rechunked
    # every file chunked again; embedded: only the passages whose text changed (a.md's, now cut)
    assert 0 < report.embedded < report.chunks
    build_index(docs, tmp_path / "full", embedder=fake_embedder, max_tokens=64, full=True)
    assert_same_index(tmp_path / "index", tmp_path / "full")

    class Other(type(fake_embedder)):
        spec = "fake:other"

    report = build_index(docs, tmp_path / "index", embedder=Other(), max_tokens=64)
    assert "model changed (fake:hashing → fake:other)" in report.full_reason and not report.rechunked
    assert report.embedded == report.chunks
    report = build_index(docs, tmp_path / "index", embedder=Other(), max_tokens=64, full=True)
    assert report.full_reason == "--full"


def test_a_keyword_index_made_by_an_older_tokenizer_is_rebuilt_without_embedding(
    docs, tmp_path, fake_embedder
):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    meta_path = tmp_path / "index" / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    current = meta["keywords"]
    meta["keywords"] = {**current, "tokenizer_version": current["tokenizer_version"] - 1}
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    embedded_before = fake_embedder.passages_embedded

    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert not report.up_to_date and report.embedded == 0 and report.full_reason is None
    assert fake_embedder.passages_embedded == embedded_before
    assert load_index(tmp_path / "index").meta.keywords.to_json() == current
    assert build_index(docs, tmp_path / "index", embedder=fake_embedder).up_to_date


def test_a_second_build_of_the_same_index_is_refused(docs, tmp_path, fake_embedder):
    with index_lock(tmp_path / "index"), pytest.raises(IndexBusyError, match="another semsearch process"):
        build_index(docs, tmp_path / "index", embedder=fake_embedder)
    build_index(docs, tmp_path / "index", embedder=fake_embedder)  # free again


# A build in a child process that says when half its chunks are embedded, then waits to be
# killed there: the kill lands mid-embedding on any machine, however fast or loaded.
BUILD_UNTIL_HALFWAY = """
import os, sys
from pathlib import Path
from semsearch.build.pipeline import build_index

def progress(step):
    if step.phase == "embedding" and 2 * step.chunks >= step.chunks_total:
        print(f"halfway {step.chunks} {step.chunks_total}", flush=True)
        sys.stdin.read()  # the parent kills us here; should it close stdin instead, finish nothing
        os._exit(3)

build_index(Path(sys.argv[1]), Path(sys.argv[2]), progress=progress)
print("finished", flush=True)
"""


@pytest.mark.slow
def test_killing_a_build_mid_embedding_keeps_the_previous_index(docs, tmp_path):
    target = tmp_path / "index"
    build_index(docs, target)
    before = {p.name: p.read_bytes() for p in sorted(target.iterdir())}
    assert {"meta.json", "chunks.json", "vectors.npy"} <= set(before)
    other = tmp_path / "other"  # 4 files of the sample, 50-odd chunks: several embedding batches
    for name in ("zwroty.md", "dostawa.md", "kontakt.md", "konto.md"):
        write(other / name, (SAMPLE_DOCS / name).read_text(encoding="utf-8"))

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    build = subprocess.Popen(
        [sys.executable, "-c", BUILD_UNTIL_HALFWAY, str(other), str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        ready, _, _ = select.select([build.stdout], [], [], 300)
        line = build.stdout.readline() if ready else ""
        assert line.startswith("halfway "), (
            f"no halfway signal: {line!r} {build.poll()} {build.stderr.read()}"
        )
        done, total = map(int, line.split()[1:])
        assert 0 < done < total, line  # chunks embedded, chunks still to embed
        build.send_signal(signal.SIGKILL)
    finally:
        build.kill()
        build.communicate()
    assert build.returncode == -signal.SIGKILL

    assert {p.name: p.read_bytes() for p in sorted(target.iterdir())} == before
    assert {c.source for c in load_index(target).chunks} == {"a.md", "b.md", "c.md"}
    assert build_index(docs, target).up_to_date  # the lock is free and the old index is current
    report = build_index(other, target)  # the killed build, run again, completes
    assert report.embedded + report.resumed == report.chunks == total and report.resumed > 0  # resumed
    assert {c.source for c in load_index(target).chunks} == {
        "zwroty.md",
        "dostawa.md",
        "kontakt.md",
        "konto.md",
    }
    assert not [p for p in tmp_path.iterdir() if ".new-" in p.name or ".old-" in p.name]


def test_leftovers_of_a_build_killed_while_writing_are_removed(docs, tmp_path, fake_embedder):
    """Only folders named exactly like a staging folder and carrying the staging marker go."""
    write(tmp_path / ".index.new-abc123" / "vectors.npy", "half")
    (tmp_path / ".index.new-abc123" / STAGING_MARKER).touch()
    write(tmp_path / ".index.old-users" / "notes.md", "not ours: no marker")
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".index.old-users", "docs", "index"]


def test_a_reader_never_mixes_two_indexes(docs, tmp_path, fake_embedder, monkeypatch):
    """A build swapping the index in while `ask` reads it: the reader starts over on the new one."""
    target = tmp_path / "index"
    build_index(docs, target, embedder=fake_embedder)
    write(docs / "e.md", "# Epsilon\n\nDodany w trakcie czytania.\n")
    original = reader._read
    calls = []

    def read_while_a_build_lands(path, identity, keywords=True):
        first = original(path, identity, keywords)
        if not calls:
            build_index(docs, target, embedder=fake_embedder)  # swaps the folder mid-read
        calls.append(first)
        return first

    monkeypatch.setattr(reader, "_read", read_while_a_build_lands)
    index = load_index(target)
    assert len(calls) == 2
    assert "e.md" in {c.source for c in index.chunks}
    assert index.vectors.shape[0] == len(index.chunks) == index.meta.chunks


def test_other_markup_rules_force_a_full_rebuild(docs, tmp_path, fake_embedder, monkeypatch):
    """An index chunked with older markup rules (issue 24) is re-chunked, never mixed with new chunks."""
    from semsearch.ingest import markup

    monkeypatch.setattr(markup, "APPLIED", {**markup.APPLIED, "version": 0})
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    monkeypatch.undo()
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert f"the chunking changed (markup v0 → v{markup.MARKUP_VERSION})" in report.full_reason
    assert report.embedded == 0 and report.chunks == 4  # re-chunked; no passage's text changed
    meta = json.loads((tmp_path / "index" / "meta.json").read_text(encoding="utf-8"))
    assert meta["chunking"]["markup"] == markup.APPLIED
