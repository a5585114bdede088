"""A dry run after an interrupted build counts what the build will take from its journal.

Before the fix `build --dry-run` ignored the journal: after a build was interrupted with 16 of
21 chunks embedded, it said "a build would embed 21 chunks" and timed all of them, although the
build then embedded 5 and resumed 16. (A build now embeds its shortest batch first, the 5: an
interrupted one here leaves 5 journaled and 16 to embed.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semsearch.build import pipeline as build_module
from semsearch.cli.commands import app
from tests.helpers import write
from tests.unit.build.test_rebuilds import interrupted_build
from tests.unit.store.test_safety import snapshot

runner = CliRunner()
SECTIONS = 20
"""a.md's sections, one chunk each; with b.md, 21 chunks: two embedding batches (5 + 16, the
shorter one first)."""


@pytest.fixture
def docs(tmp_path) -> Path:
    sections = "".join(
        f"## Sekcja {i}\n\nTreść numer {i} o zwrotach i dostawie.\n\n" for i in range(SECTIONS)
    )
    write(tmp_path / "docs" / "a.md", f"# Poradnik\n\n{sections}")
    write(tmp_path / "docs" / "b.md", "# Płatności\n\nPłacisz kartą albo BLIK-iem.\n")
    return tmp_path / "docs"


def run(*args: object) -> str:
    result = runner.invoke(app, ["build", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.slow
def test_a_dry_run_counts_the_chunks_an_interrupted_build_already_embedded(docs, tmp_path, monkeypatch):
    index, journal = tmp_path / "index", tmp_path / ".index.partial"
    interrupted_build(monkeypatch, docs, "--index", index)  # the first batch, of 5, is journaled
    kept = snapshot(journal)
    timed: list[int] = []

    def build_seconds(embedder, fresh, chunks, previous):
        timed.append(len(fresh))
        return 1.0

    with monkeypatch.context() as patch:
        patch.setattr(build_module, "build_seconds", build_seconds)
        planned = json.loads(run(docs, "--index", index, "--dry-run", "--json"))
        said = run(docs, "--index", index, "--dry-run")
        full = json.loads(run(docs, "--index", index, "--dry-run", "--full", "--json"))
    assert (planned["chunks"], planned["embedded"], planned["resumed"]) == (SECTIONS + 1, 16, 5)
    assert (
        "a build would embed 16 chunks" in said
        and "5 chunks already embedded by an interrupted build" in said
    )
    assert (full["embedded"], full["resumed"]) == (SECTIONS + 1, 0)  # --full discards the journal
    assert timed == [16, 16, SECTIONS + 1]  # the time estimate leaves the journaled chunks out
    assert snapshot(journal) == kept and not index.exists()  # a dry run writes nothing

    built = json.loads(run(docs, "--index", index, "--json"))
    assert (built["embedded"], built["resumed"]) == (16, 5)
    assert built["tokens_embedded"] == planned["tokens_embedded"]


@pytest.mark.slow
def test_a_dry_run_while_another_build_writes_the_index_says_so(docs, tmp_path, monkeypatch):
    """An outside probe: beside a running build, the dry run called its journal "an interrupted
    build" and said what a build would do, which a build started then would refuse."""
    from semsearch.store.folder import index_lock

    index = tmp_path / "index"
    interrupted_build(monkeypatch, docs, "--index", index)
    assert json.loads(run(docs, "--index", index, "--dry-run", "--json"))["another_build_running"] is False
    with index_lock(index):  # held as a build holds it
        planned = json.loads(run(docs, "--index", index, "--dry-run", "--json"))
        said = run(docs, "--index", index, "--dry-run")
    assert planned["another_build_running"] is True and planned["resumed"] == 5
    assert "another build is writing this index now: a build started now is refused" in said
    assert "interrupted" not in said
