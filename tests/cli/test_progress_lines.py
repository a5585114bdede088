"""Build progress in a log or a pipe: plain lines as the build goes, not one burst at the end."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from semsearch.build.embedding import Step
from semsearch.cli.commands import app
from semsearch.cli.render.build import PHASES, ProgressLines
from tests.helpers import REPO, write


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_line_when_each_phase_starts_then_one_every_interval_with_the_time_left():
    clock, lines = Clock(), []
    report = ProgressLines(lines.append, clock=clock, interval=10)
    report(Step("finding"))
    report(Step("finding", 3355, 3355, "files"))
    for done in range(1, 101):  # 100 batches of 100 tokens, one a second
        clock.now += 1
        report(Step("embedding", 100 * done, 10_000, "tokens", min(16 * done, 1600), 1600))
    report(Step("calibrating"))
    assert lines[:4] == [
        "Finding Markdown files...",
        "Embedding: 16/1,600 chunks (1% of the text)",
        # after one more batch, at once: the time left and the whole embedding's, at 100 tokens/s
        "Embedding: 32/1,600 chunks (2% of the text), about 1 min 38 s left, about 1 min 40 s in all",
        # 10 s on
        "Embedding: 192/1,600 chunks (12% of the text), about 1 min 28 s left, about 1 min 40 s in all",
    ]
    assert len(lines) == 1 + 11 + 1 and lines[-1] == "Calibrating the no-answer gate..."
    # durations.py: tenths under 10 s
    assert (
        lines[-2]
        == "Embedding: 1,472/1,600 chunks (92% of the text), about 8.0 s left, about 1 min 40 s in all"
    )


def test_splitting_lines_count_files_and_the_chunks_so_far():
    lines = []
    ProgressLines(lines.append)(Step("splitting", 1, 3, "files", chunks=12))
    assert lines == ["Splitting into chunks: 1/3 files (33%), 12 chunks so far"]


@pytest.mark.slow
def test_a_build_into_a_pipe_prints_plain_progress_lines_and_quiet_or_json_none(tmp_path):
    for i in range(3):
        write(tmp_path / "docs" / f"plik-{i}.md", f"# Plik {i}\n\n## Sekcja\n\nTreść numer {i} o zwrotach.\n")
    build = ["build", str(tmp_path / "docs"), "--index", str(tmp_path / "index")]
    piped = subprocess.run(  # stderr is a pipe, not a terminal
        [sys.executable, "-m", "semsearch", *build], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert piped.returncode == 0, piped.stderr
    lines = piped.stderr.splitlines()
    assert [line.split(":")[0].removesuffix("...") for line in lines] == list(PHASES.values())
    assert "\r" not in piped.stderr and "\x1b" not in piped.stderr
    assert "Embedding: 3/3 chunks (100% of the text)" in lines
    assert piped.stdout.startswith("Indexed 3 files into 3 chunks")
    quiet = CliRunner().invoke(app, [*build, "--full", "-q"])
    assert (quiet.exit_code, quiet.stderr) == (0, "")
    as_json = CliRunner().invoke(app, [*build, "--full", "--json"])
    assert json.loads(as_json.stdout)["chunks"] == 3 and as_json.stderr == ""
