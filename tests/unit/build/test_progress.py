"""Big folders: progress from the first second, a dry run, and builds that resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from semsearch.build.embedding import EMBED_BATCH
from semsearch.build.estimate import SAMPLE_BATCHES
from semsearch.build.pipeline import build_index
from semsearch.errors import BuildInterruptedError
from semsearch.hints import message
from semsearch.retrieve.opening import load_index
from tests.helpers import REPO, SAMPLE_DOCS, HashingEmbedder, memo_env, write


@pytest.fixture
def docs(tmp_path):
    for i in range(40):
        write(
            tmp_path / "docs" / f"plik-{i:02}.md", f"# Plik {i}\n\n## Sekcja\n\nTreść numer {i} o zwrotach.\n"
        )
    return tmp_path / "docs"


def test_every_phase_is_reported_in_order_with_counts(docs, tmp_path, fake_embedder):
    steps = []
    report = build_index(docs, tmp_path / "index", embedder=fake_embedder, progress=steps.append)
    phases = list(dict.fromkeys(step.phase for step in steps))
    assert phases == ["finding", "reading", "splitting", "embedding", "calibrating", "keywords", "writing"]
    assert steps[0].phase == "finding"  # before any file is read
    last = {step.phase: step for step in steps}
    assert (last["finding"].done, last["reading"].done, last["splitting"].total) == (40, 40, 40)
    embedding = [step for step in steps if step.phase == "embedding"]
    assert embedding[0].total == report.tokens == sum(c.tokens for c in load_index(tmp_path / "index").chunks)
    assert embedding[-1].done == embedding[-1].total and (
        embedding[-1].chunks,
        embedding[-1].chunks_total,
    ) == (
        40,
        40,
    )


def test_a_dry_run_says_what_a_build_would_embed_and_writes_nothing(docs, tmp_path, fake_embedder):
    planned = build_index(docs, tmp_path / "index", embedder=fake_embedder, dry_run=True)
    assert not (tmp_path / "index").exists() and sorted(os.listdir(tmp_path)) == ["docs"]
    assert fake_embedder.passages_embedded <= SAMPLE_BATCHES * EMBED_BATCH  # a few batches, timed
    built = build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert (planned.chunks, planned.embedded, planned.tokens) == (built.chunks, built.embedded, built.tokens)
    assert planned.estimated_seconds is not None and planned.estimated_seconds > 0
    write(docs / "nowy.md", "# Nowy\n\nJeden nowy plik.\n")
    again = build_index(docs, tmp_path / "index", embedder=fake_embedder, dry_run=True)
    assert (again.embedded, again.changes.new) == (1, 1)


class DiesAfter(HashingEmbedder):
    """Interrupted (Ctrl-C) after embedding ``batches`` batches of passages."""

    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def embed_passages(self, texts):
        if self.batches == 0:
            raise KeyboardInterrupt
        self.batches -= 1
        return super().embed_passages(texts)


def test_an_interrupted_build_resumes_and_equals_a_clean_one(tmp_path):
    for i in range(160):
        write(tmp_path / "docs" / f"plik-{i:03}.md", f"# Plik {i}\n\nTreść numer {i}, słowo {i * 7}.\n")
    with pytest.raises(KeyboardInterrupt):
        build_index(tmp_path / "docs", tmp_path / "index", embedder=DiesAfter(batches=9))  # 144 of 160
    assert not (tmp_path / "index").exists()
    with pytest.raises(BuildInterruptedError, match="first build was interrupted") as asked:
        load_index(tmp_path / "index")  # ``ask`` meanwhile: the build to run again, not "no such folder"
    assert "run the same build again" in message(asked.value.about(tmp_path / "index"))
    again = HashingEmbedder()
    report = build_index(tmp_path / "docs", tmp_path / "index", embedder=again)
    assert (report.resumed, report.embedded) == (144, 16)
    assert again.passages_embedded == 16 <= 0.15 * 160
    assert not (tmp_path / ".index.partial").exists()  # the journal goes once the index is in place
    build_index(tmp_path / "docs", tmp_path / "clean", embedder=HashingEmbedder())
    resumed, clean = load_index(tmp_path / "index"), load_index(tmp_path / "clean")
    assert list(resumed.chunks) == list(clean.chunks)
    assert np.array_equal(resumed.vectors, clean.vectors)


def test_a_journal_of_another_model_is_not_used(tmp_path):
    write(tmp_path / "docs" / "a.md", "# A\n\nTreść.\n")
    with pytest.raises(KeyboardInterrupt):
        build_index(tmp_path / "docs", tmp_path / "index", embedder=DiesAfter(batches=0))
    other = HashingEmbedder()
    other.spec = "fake:other"
    assert build_index(tmp_path / "docs", tmp_path / "index", embedder=other).resumed == 0


KILL_AT_90_PERCENT = """
import os, signal, sys
from pathlib import Path
from semsearch.build.pipeline import build_index
from semsearch.build.embedding import EMBED_BATCH
from semsearch.build.estimate import SAMPLE_BATCHES

def progress(step):
    if step.phase == "embedding" and step.chunks >= 0.9 * step.chunks_total:
        os.kill(os.getpid(), signal.SIGKILL)

build_index(Path(sys.argv[1]), Path(sys.argv[2]), progress=progress)
"""


@pytest.mark.slow
def test_a_build_killed_at_90_percent_embeds_little_again_with_the_real_model(tmp_path, sample_index):
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AT_90_PERCENT, str(SAMPLE_DOCS), str(tmp_path / "index")],
        cwd=REPO,
        capture_output=True,
        timeout=600,
        env=memo_env(),
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    resumed = subprocess.run(
        [
            sys.executable,
            "-m",
            "semsearch",
            "build",
            str(SAMPLE_DOCS),
            "--index",
            str(tmp_path / "index"),
            "--json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env=memo_env(),
    )
    report = json.loads(resumed.stdout)
    assert report["embedded"] <= 0.15 * report["chunks"], report
    assert report["resumed"] >= 0.85 * report["chunks"], report
    index, clean = load_index(tmp_path / "index"), load_index(sample_index)
    assert list(index.chunks) == list(clean.chunks)
    np.testing.assert_allclose(index.vectors, clean.vectors, atol=1e-6)


def test_splitting_one_big_file_says_how_far_it_is(tmp_path, fake_embedder, monkeypatch):
    """A file near the size cap takes minutes to split (issue 39: nothing after "Reading files"
    for 240 s): the chunks so far are told while it is split, not only once it is done."""
    from semsearch.build import progress

    monkeypatch.setattr(progress, "SPLIT_PROGRESS_SECONDS", 0.0)  # every chunk told, for the test
    write(tmp_path / "docs" / "big.md", "# Duży\n\n" + "słowo zwrot paczka " * 1_200)
    steps = []
    build_index(
        tmp_path / "docs", tmp_path / "index", embedder=fake_embedder, progress=steps.append, dry_run=True
    )
    splitting = [step for step in steps if step.phase == "splitting"]
    during = [step.chunks for step in splitting if step.done == 0]  # before the one file was split
    assert len(during) > 10 and during == sorted(during) and during[-1] >= splitting[-1].chunks - 1
