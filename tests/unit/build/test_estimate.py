"""A dry run's time is the build's: reading and splitting as long as the dry run itself did,
embedding timed on a few of the build's own batches, calibration on a sample of its titles.

Time here is a fake clock that the fake model moves (no sleeping, no timing of this machine)."""

from __future__ import annotations

import types

import pytest

from semsearch.build import estimate
from semsearch.build import pipeline as build
from semsearch.build.embedding import embed_in_batches
from semsearch.build.pipeline import build_index
from tests.helpers import HashingEmbedder, pierogi_chunks, write


class SlowModel(HashingEmbedder):
    """Counts passage tokens in 10 ms, embeds a batch in time by its longest text (padding),
    a question in 5 ms: on ``clock``, a fake one."""

    spec = "fake:slow"

    def __init__(self, clock: types.SimpleNamespace):
        super().__init__()
        self.clock = clock

    def passage_tokens(self, text):
        self.clock.now += 0.01
        return super().passage_tokens(text)

    def embed_passages(self, texts):
        self.clock.now += 0.0002 * max(len(text) for text in texts) ** 1.2 * len(texts)
        return super().embed_passages(texts)

    def embed_queries(self, texts):
        self.clock.now += 0.005 * len(texts)
        return super().embed_queries(texts)


@pytest.fixture
def clock(monkeypatch) -> types.SimpleNamespace:
    fake = types.SimpleNamespace(now=0.0)
    fake.perf_counter = lambda: fake.now
    monkeypatch.setattr(build, "time", fake)
    monkeypatch.setattr(estimate, "time", fake)
    return fake


def test_embedding_is_timed_on_a_few_of_the_builds_own_batches(clock):
    model = SlowModel(clock)
    texts = [" ".join(["słowo"] * (5 + (i * 37) % 290)) for i in range(700)]  # 5-300 words
    estimated = estimate.embedding_seconds(model, texts)
    assert model.passages_embedded <= estimate.SAMPLE_BATCHES * 16
    clock.now = 0.0
    embed_in_batches(model, texts)
    assert estimated == pytest.approx(clock.now, rel=0.1)


def test_a_dry_run_foresees_the_whole_build_reading_and_splitting_included(clock, tmp_path):
    for i in range(60):
        paragraphs = "\n\n".join(
            f"Akapit {j} " + "treść " * (20 + 17 * ((i + j) % 9)) for j in range(1 + i % 5)
        )
        write(tmp_path / "docs" / f"plik-{i:02}.md", f"# Plik {i}\n\n## Sekcja {i}\n\n{paragraphs}\n")
    model = SlowModel(clock)
    planned = build_index(tmp_path / "docs", tmp_path / "index", embedder=model, dry_run=True)
    clock.now = 0.0
    built = build_index(tmp_path / "docs", tmp_path / "index", embedder=model)
    assert planned.estimated_seconds == pytest.approx(built.seconds, rel=0.1)
    assert planned.estimated_seconds > planned.seconds * 0.5  # no longer the embedding alone


def test_a_build_with_nothing_to_embed_is_still_timed_calibrating(clock):
    """Files removed, or every chunk in an interrupted build's journal: the build embeds nothing
    but still calibrates (it embeds the section titles as questions)."""
    assert estimate.build_seconds(SlowModel(clock), [], pierogi_chunks(), None) > 0
