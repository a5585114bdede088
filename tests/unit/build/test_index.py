"""Index building, writing and loading with a fake embedder (the real ones are in end-to-end tests)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semsearch.build.embedding import embed_in_batches
from semsearch.build.pipeline import build_index
from semsearch.errors import DocsError, ModelError
from semsearch.gate.calibration import calibrate
from semsearch.gate.threshold import background_floor
from semsearch.ingest import markup
from semsearch.ingest.chunking import CHUNKER_VERSION, embedding_text
from semsearch.ingest.pages import TITLES_VERSION
from semsearch.ingest.sources import discover
from semsearch.retrieve.opening import load_index
from tests.helpers import pierogi_chunks, write


@pytest.fixture
def docs(tmp_path):
    root = tmp_path / "docs"
    write(root / "b.md", "# Beta\n\n## Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write(root / "a.markdown", "# Alpha\n\nPogoda nie jest tematem.\n")
    write(root / "sub dir/ł ó.md", "Tekst bez nagłówka.\n")
    write(root / ".hidden/secret.md", "# Hidden\n\nnope\n")
    write(root / "notes.txt", "not markdown")
    return root


def test_finds_markdown_recursively_skipping_hidden(docs):
    found = [p.relative_to(docs).as_posix() for p in discover(docs)[0]]
    assert found == ["a.markdown", "b.md", "sub dir/ł ó.md"]


def test_build_writes_a_consistent_index(docs, tmp_path, fake_embedder):
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder, max_tokens=64)
    assert (report.files, report.chunks) == (3, 3)
    index = load_index(tmp_path / "index")
    assert [c.source for c in index.chunks] == ["a.markdown", "b.md", "sub dir/ł ó.md"]
    assert index.vectors.shape == (3, fake_embedder.dim)
    assert index.vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(index.vectors, axis=1), 1, rtol=1e-6)
    np.testing.assert_allclose(
        index.vectors, fake_embedder.embed_passages([embedding_text(c) for c in index.chunks]), rtol=1e-6
    )
    meta = index.meta.to_json()
    assert meta["model"]["spec"] == "fake:hashing"
    assert meta["chunking"] == {
        "max_tokens": 64,
        "tokenizer": "tiktoken:cl100k_base",
        "context": "heading path",
        "chunker_version": CHUNKER_VERSION,
        "markup": markup.APPLIED,
        "titles": TITLES_VERSION,
    }
    assert set(meta["files"]) == {"a.markdown", "b.md", "sub dir/ł ó.md"}
    assert (
        meta["files"]["b.md"]["sha256"]
        == __import__("hashlib").sha256((docs / "b.md").read_bytes()).hexdigest()
    )
    assert meta["min_score"]["source"] == "build"
    chunks_json = (tmp_path / "index" / "chunks.json").read_text(encoding="utf-8")
    assert "ł ó.md" in chunks_json  # human-readable UTF-8, not \u escapes


def test_rebuild_replaces_the_index_and_leaves_no_staging_folders(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    (docs / "a.markdown").unlink()
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert [c.source for c in load_index(tmp_path / "index").chunks] == ["b.md", "sub dir/ł ó.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "index"]


def test_a_failed_build_keeps_the_previous_index(docs, tmp_path, fake_embedder):
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    before = (tmp_path / "index" / "meta.json").read_text()

    class Exploding(type(fake_embedder)):
        def embed_passages(self, texts):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(docs, tmp_path / "index", embedder=Exploding(), full=True)
    assert (tmp_path / "index" / "meta.json").read_text() == before
    assert load_index(tmp_path / "index").chunks


def test_invalid_utf8_is_replaced_and_reported(docs, tmp_path, fake_embedder):
    (docs / "bad.md").write_bytes("# Zła\n\nżółw ".encode() + b"\xff\xfe" + b" koniec\n")
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert any(w.startswith("bad.md: invalid UTF-8") for w in report.warnings)
    bad = [c for c in load_index(tmp_path / "index").chunks if c.source == "bad.md"]
    assert "\ufffd" in bad[0].text and "koniec" in bad[0].text


def test_build_input_errors(tmp_path, fake_embedder):
    with pytest.raises(DocsError, match="not found"):
        build_index(tmp_path / "nope", tmp_path / "index", embedder=fake_embedder)
    write(tmp_path / "empty" / "only.md", "# Title only\n")
    with pytest.raises(DocsError, match="no text"):
        build_index(tmp_path / "empty", tmp_path / "index", embedder=fake_embedder)
    with pytest.raises(ModelError, match="unknown model spec"):
        build_index(tmp_path / "empty", tmp_path / "index", model="glove")
    assert not (tmp_path / "index").exists()


def test_embedding_order_does_not_change_results(fake_embedder):
    texts = [f"tekst numer {i} " + "słowo " * (i % 7) for i in range(40)]
    np.testing.assert_allclose(embed_in_batches(fake_embedder, texts), fake_embedder.embed_passages(texts))


def test_progress_reports_every_chunk(fake_embedder):
    steps = []
    embed_in_batches(fake_embedder, ["a"] * 37, progress=steps.append, weights=[2] * 37)
    assert (steps[-1].done, steps[-1].total, steps[-1].chunks, steps[-1].chunks_total) == (74, 74, 37, 37)
    assert [s.done for s in steps] == sorted(s.done for s in steps) and len(steps) == 3


def test_calibration_drops_bank_questions_the_corpus_answers(fake_embedder, monkeypatch):
    from semsearch.gate import calibration as calibrating

    bank = [("pl", f"pogoda jutro {i}") for i in range(10)] + [
        ("pl", f"przepis na pierogi {i}") for i in range(10)
    ]
    monkeypatch.setattr(calibrating, "offtopic_bank", lambda: bank)
    chunks = pierogi_chunks()
    vectors = fake_embedder.embed_passages([embedding_text(c) for c in chunks])
    calibration = calibrate(fake_embedder, vectors, chunks)
    kept = calibration.background
    assert calibration.record.other["bank_dropped_as_on_topic"] >= 5
    pierogi = fake_embedder.embed_queries(["przepis na pierogi 3"])[0]
    weather = fake_embedder.embed_queries(["pogoda jutro 3"])[0]
    assert background_floor(pierogi, kept) < float((vectors @ pierogi).max())  # still answerable
    assert background_floor(weather, kept) == pytest.approx(1.0)  # the weather question is in the bank
    assert json.dumps(calibration.record.to_json())  # JSON-serializable for meta.json


def test_background_floor_without_a_bank():
    assert background_floor(np.ones(4, np.float32) / 2, np.zeros((0, 4), np.float32)) == -1.0
