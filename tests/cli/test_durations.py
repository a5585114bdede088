"""Every duration semsearch prints follows one rule (cli/render/durations.py)."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from semsearch.build.embedding import Step
from semsearch.build.report import BuildReport
from semsearch.cli.commands import app
from semsearch.cli.render.build import print_build_summary, progress_line
from semsearch.cli.render.durations import duration
from semsearch.cli.render.output import counted
from semsearch.cli.render.terminal import SHOWN
from semsearch.encode.embedders import available_cores
from tests.cli.test_readme import DURATION
from tests.helpers import FAKE_MODEL, write


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.0, "0.0 s"),
        (0.04, "0.0 s"),
        (1.26, "1.3 s"),
        (9.94, "9.9 s"),
        (9.96, "10 s"),  # rounds up into whole seconds, not "10.0 s"
        (42.4, "42 s"),
        (59.4, "59 s"),
        (59.7, "1 min 0 s"),  # never "60 s"
        (61, "1 min 1 s"),
        (704, "11 min 44 s"),
        (1520.8, "25 min 21 s"),  # the build
        (3599.6, "1 h 0 min"),
        (3600, "1 h 0 min"),
        (7529, "2 h 5 min"),
        (-3, "0.0 s"),
        (float("nan"), "0.0 s"),
    ],
)
def test_a_duration_reads_in_the_largest_units_that_keep_it_exact_enough(seconds, shown):
    assert duration(seconds) == shown


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"NO_COLOR": "1"}, prog_name="semsearch")


def test_the_build_summary_says_its_time_in_minutes_and_seconds(tmp_path, capsys):
    report = BuildReport(tmp_path / "index", files=95, chunks=220, seconds=1520.8, embedded=220)
    print_build_summary(report, SHOWN)
    line = capsys.readouterr().out
    assert line.startswith("Indexed 95 files into 220 chunks in 25 min 21 s → ")
    assert "1520" not in line


def test_progress_in_a_log_says_its_time_left_in_the_same_words():
    step = Step("embedding", 100, 10_000, "tokens", 16, 1600)
    assert progress_line(step, 1520.8).endswith(", about 25 min 21 s left")
    assert progress_line(step, 4.24).endswith(", about 4.2 s left")


def test_a_dry_run_says_what_its_estimate_assumed_and_that_the_build_corrects_it(tmp_path, monkeypatch):
    """The issue: an estimate of 11 min 44 s for a build that took 25 min on a busy machine; the
    dry run now names the speed it measured (on how many of the folder's chunks), the cores and
    the load then, and that the build's time left, measured as it runs, corrects it."""
    monkeypatch.setattr("semsearch.build.pipeline.build_seconds", lambda *args: 704.0)  # no timing
    monkeypatch.setattr("os.getloadavg", lambda: (3.5, 2.0, 1.0))
    docs = tmp_path / "docs"
    sections = "".join(f"## Sekcja {i}\n\nTekst numer {i} o zwrotach.\n\n" for i in range(400))
    write(docs / "big.md", f"# Duży\n\n{sections}")
    index = tmp_path / "index"
    dry_run = ["build", docs, "--index", index, "--dry-run", "--model", FAKE_MODEL]
    said, data = run(*dry_run), json.loads(run(*dry_run, "--json").stdout)
    assert said.exit_code == 0, said.output
    basis = data["estimate_basis"]
    assert basis == {"timed_chunks": basis["timed_chunks"], "cores": available_cores(), "load_average": 3.5}
    assert 0 < basis["timed_chunks"] < data["embedded"] == 400  # a sample, not the whole
    assert 704 <= data["estimated_seconds"] < 760  # 704 s of embedding, plus this run's reading and splitting
    assert re.search(
        rf"a build would embed 400 chunks \({data['tokens_embedded']:,} tokens\), about 11 min \d\d? s "
        r"at the speed measured on "
        rf"{basis['timed_chunks']} chunks of this folder on this machine now "
        rf"\({counted(basis['cores'], 'core')}, load average 3\.50\); "
        r"the build's progress corrects it as it runs; nothing written to ",
        said.stdout,
    ), said.stdout
    assert not index.exists()


def test_the_readme_check_masks_a_time_in_every_form_it_is_written():
    for seconds in (1.26, 42, 1520.8, 7529):
        line = f"Indexed 1 file in {duration(seconds)} → x"
        assert DURATION.sub("<time>", line) == "Indexed 1 file in <time> → x"
