"""`eval` output a person reads in a log and a script reuses (issue 25): plain labelled lines
when piped, every question in --json and --jsonl, and a --help that says what the fields mean."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.helpers import DATA, REPO

runner = CliRunner()
QUESTIONS = DATA / "docs_questions.jsonl"
ROW_KEYS = {"line", "question", "kind", "answerable", "expected", "rank", "first", "first_file_line"}
ROW_KEYS |= {"score", "score_rank", "threshold", "answered", "refused", "unheld", "right"}


def eval_rows(index, *extra: str) -> list[dict]:
    result = runner.invoke(app, ["eval", str(QUESTIONS), "--index", str(index), "--jsonl", *extra])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_eval_json_and_jsonl_hold_every_question(fake_sample_index):
    """`eval --json` listed only the misses: a per-question table took one `ask` per question."""
    asked = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = runner.invoke(app, ["eval", str(QUESTIONS), "--index", str(fake_sample_index), "--json"])
    data = json.loads(result.stdout)
    rows = data["results"]
    assert [row["question"] for row in rows] == [q["question"] for q in asked] and len(rows) == data[
        "questions"
    ]
    assert all(set(row) == ROW_KEYS for row in rows)
    assert eval_rows(fake_sample_index) == rows  # --jsonl: the same rows, one a line
    answerable = [row for row in rows if row["answerable"]]
    assert sum(row["rank"] == 1 for row in answerable) == round(data["top1"] * len(answerable))
    assert all(row["score"] < row["threshold"] for row in rows if not row["answered"] and not row["unheld"])
    assert all(not row["answered"] for row in rows if row["unheld"])
    assert all(row["score_rank"] in (1, 2, 3) for row in rows)  # the gate reads the first three
    assert all(row["refused"] == (row["answerable"] and not row["answered"]) for row in rows)
    assert any(row["refused"] for row in rows) and any(not row["answerable"] for row in rows)
    misses = {row["line"] for row in rows if not row["right"]}
    assert misses == {miss["line"] for miss in data["misses"]} and 0 < len(misses) < len(rows)
    first = rows[0]
    assert first["first"].startswith(first["first_file_line"].split(":")[0] + " › ")


@pytest.mark.slow  # a fresh process loads the real model
def test_eval_through_a_pipe_prints_each_miss_on_one_labelled_line(sample_index):
    """`semsearch eval q.jsonl | cat` at 80 columns wrapped the misses table into fragments, and
    its score column ("0.868 (#3)") had no label: one line per miss, each field named."""
    env = {**os.environ, "COLUMNS": "80", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "semsearch", "eval", str(QUESTIONS), "--index", str(sample_index)]
    piped = subprocess.run(command, capture_output=True, env=env, cwd=REPO)
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.decode().splitlines()
    assert not any(re.search("[│┃━─┏┡└]", line) for line in lines)  # no table
    rows = eval_rows(sample_index)
    misses = [row for row in rows if not row["right"]]
    shown = [line for line in lines if re.match(r"  line \d+: ", line)]
    assert len(shown) == len(misses) and f"Misses ({len(misses)}):" in lines
    for row, line in zip(misses, shown, strict=True):
        assert line.startswith(f"  line {row['line']}: {row['question']} | expected: {row['expected']} | ")
        assert f" | came first: {row['first']}" in line
        if row["score_rank"] == 1:
            assert f"first score {row['score']:.3f}" in line
        else:  # the gate read a passage further down: its score and where it ranked
            assert f"best score {row['score']:.3f} (#{row['score_rank']})" in line
        if row["answerable"] and row["rank"] and row["rank"] > 1:
            assert line.endswith(f", right passage at #{row['rank']}")
        if row["refused"]:
            assert "(refused by the no-answer gate)" in line and f"< threshold {row['threshold']:.3f}" in line
    for kind in {row["kind"] for row in rows}:
        count = sum(row["kind"] == kind for row in rows)
        assert sum(line.startswith(f"  {kind}: {count} questions, passage top-1 ") for line in lines) == 1


def test_eval_help_says_what_the_fields_and_options_mean():
    """`eval --help` said neither that `source` is relative to the docs folder, nor that `answer`
    is text the right passage must contain, that its `-k` is a comma list, or that --calibrate
    writes into the index."""
    result = runner.invoke(app, ["eval", "--help"])
    assert result.exit_code == 0
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.stdout).split())
    assert "source: the file holding the answer, relative to the documents folder" in text
    assert "answer: text the right passage must contain" in text
    assert "A comma list of k (unlike `ask -k`, one number)" in text
    assert "Write the suggested no-answer margin into the index" in text
    assert "--jsonl" in text
