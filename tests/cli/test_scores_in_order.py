"""The list `ask` prints reads in order (issue 40): every question of the sample set, asked of the
sample docs, prints its results with the passages listed first for naming what the question
names (``exact``) at the top, then numbers that never rise down the list."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.helpers import DATA, REPO

RESULT = re.compile(r"^(exact|-?\d+\.\d+)  \S+\.md:\d+  ")
runner = CliRunner()


def printed_scores(index, question: str, *options: str) -> list[str]:
    result = runner.invoke(
        app, ["ask", question, "--index", str(index), "-k", "6", *options], env={"NO_COLOR": "1"}
    )
    assert result.exit_code in (0, 1), result.output
    return [match[1] for line in result.stdout.splitlines() if (match := RESULT.match(line))]


def reads_in_order(scores: list[str]) -> bool:
    numbers = [float(score) for score in scores if score != "exact"]
    exact_first = scores[: len(scores) - len(numbers)] == ["exact"] * (len(scores) - len(numbers))
    return exact_first and numbers == sorted(numbers, reverse=True)


QUESTIONS = [
    json.loads(line)["question"]
    for name in ("docs_questions.jsonl", "docs_identifier_questions.jsonl")
    for line in (DATA / name).read_text(encoding="utf-8").splitlines()
    if line.strip()
]


def test_reading_in_order_means_exact_first_then_falling_numbers():
    assert reads_in_order(["exact", "exact", "1.310", "0.987", "0.987"])
    assert not reads_in_order(["0.895", "0.898"])
    assert not reads_in_order(["1.100", "exact"])


@pytest.mark.parametrize(
    ("mode", "questions"),
    [
        *((mode, QUESTIONS[::10]) for mode in ("hybrid", "keyword", "dense")),  # fast: a tenth of them
        *(pytest.param(mode, QUESTIONS, marks=pytest.mark.slow) for mode in ("hybrid", "keyword", "dense")),
    ],
)
def test_the_printed_list_reads_in_order_on_the_sample_docs(fake_sample_index, mode, questions, monkeypatch):
    """The sample sets' questions with the hashing fake (the rule, not the model), any cosine shown."""
    monkeypatch.chdir(REPO)
    printed = {
        q: printed_scores(fake_sample_index, q, "--mode", mode, "--min-score", "-1") for q in questions
    }
    assert sum(len(scores) > 1 for scores in printed.values()) > len(questions) // 2
    assert {question: scores for question, scores in printed.items() if not reads_in_order(scores)} == {}


@pytest.mark.slow
def test_the_printed_list_reads_in_order_with_the_default_model(sample_index, monkeypatch):
    """Every question with the real model and its gate: 0.895 was printed above 0.898 before."""
    monkeypatch.chdir(REPO)
    printed = {question: printed_scores(sample_index, question) for question in QUESTIONS}
    assert sum(len(scores) > 1 for scores in printed.values()) > len(QUESTIONS) // 2
    assert {question: scores for question, scores in printed.items() if not reads_in_order(scores)} == {}
