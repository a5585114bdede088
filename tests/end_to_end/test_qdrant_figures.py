"""The real model's figures on the sample docs/ are the same whichever store holds the index: the
vectors come back from Qdrant bit for bit and are ranked and gated by the same code."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.helpers import DATA

runner = CliRunner()


@pytest.mark.slow
@pytest.mark.parametrize("questions", ["docs_questions.jsonl", "docs_identifier_questions.jsonl"])
@pytest.mark.parametrize("mode", ["hybrid", "dense", "keyword"])
def test_eval_figures_are_identical_on_a_folder_and_in_qdrant(sample_index, sample_qdrant, questions, mode):
    figures = []
    for index in (sample_index, sample_qdrant):
        result = runner.invoke(
            app, ["eval", str(DATA / questions), "--index", str(index), "--mode", mode, "--json"]
        )
        assert result.exit_code == 0, result.output
        figures.append(json.loads(result.stdout))
    assert figures[0] == figures[1]
    assert (
        figures[0]["questions"] > 10 and figures[0]["top1"] > 0.2
    )  # a real model's figures, not an empty run
