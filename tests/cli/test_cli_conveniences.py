"""What a user of ripgrep, gh or llm reaches for: --version, -h, unquoted questions, one-line
usage errors, an index found from any folder of the project, rebuilds without retyping DOCS."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.helpers import SAMPLE_DOCS, write

runner = CliRunner()


def run(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def test_version_and_short_help():
    from semsearch import __version__

    assert run("--version").stdout.strip() == f"semsearch {__version__}"
    short = run("ask", "-h")
    assert short.exit_code == 0 and "Usage" in short.stdout and "--index" in short.stdout


def test_a_question_needs_no_quotes(fake_sample_index):
    quoted = run("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", fake_sample_index, "--json")
    unquoted = run(
        "ask", "Ile", "kosztuje", "dostawa", "do", "paczkomatu?", "--index", fake_sample_index, "--json"
    )
    assert quoted.exit_code == unquoted.exit_code == 0
    assert json.loads(quoted.stdout)["results"] == json.loads(unquoted.stdout)["results"]
    assert json.loads(unquoted.stdout)["question"] == "Ile kosztuje dostawa do paczkomatu?"


@pytest.mark.parametrize(
    "args, message",
    [
        (["ask", "x", "-k", "0"], "Invalid value for '-k' / '--top': 0 is not in the range x>=1."),
        (["ask", "x", "--topp", "3"], "No such option: --topp (Possible options: --top)"),
        (["serach"], "No such command 'serach'."),
        (["eval", "q.jsonl", "-k", "1,x"], "expected positive whole numbers separated by commas"),
    ],
)
def test_usage_errors_are_one_line_with_the_suggestion(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert message in result.stderr and "--help`" in result.stderr


def test_the_nearest_index_is_found_from_any_folder_below_it(fake_sample_index, tmp_path, monkeypatch):
    project = tmp_path / "project"
    shutil.copytree(fake_sample_index, project / "index")
    (project / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(project / "src" / "deep")
    monkeypatch.delenv("SEMSEARCH_INDEX", raising=False)
    info = run("info", "--json")
    assert info.exit_code == 0 and json.loads(info.stdout)["index"] == str(project / "index")
    assert run("ask", "Ile kosztuje dostawa do paczkomatu?").exit_code == 0
    monkeypatch.setenv("SEMSEARCH_INDEX", str(tmp_path / "elsewhere"))
    missing = run("info")
    assert missing.exit_code == 2 and str(tmp_path / "elsewhere") in missing.stderr


def test_build_without_docs_rebuilds_the_folder_the_index_records(fake_sample_index, tmp_path):
    index = tmp_path / "index"
    shutil.copytree(fake_sample_index, index)
    result = run("build", "--index", index, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["up_to_date"] is True  # SAMPLE_DOCS, as recorded
    # The gate's margin has one name everywhere (`min_score` is `ask --min-score`'s cosine cutoff).
    info = json.loads(run("info", "--index", index, "--json").stdout)
    assert report["margin"] == pytest.approx(info["gate"]["value"])
    assert report["margin"] == pytest.approx(info["build_gate"]["value"])
    assert 0 < report["margin"] < 1 and "min_score" not in report and "min_score" not in info


def test_build_of_a_file_says_it_is_a_file(tmp_path):
    result = run("build", SAMPLE_DOCS / "zwroty.md", "--index", tmp_path / "index")
    assert (
        result.exit_code == 2 and "zwroty.md is a file; DOCS is the folder of Markdown files" in result.stderr
    )


def test_the_stale_warning_gives_the_command_that_works(fake_sample_index, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    index = tmp_path / "index"
    shutil.copytree(fake_sample_index, index)
    meta = json.loads((index / "meta.json").read_text(encoding="utf-8"))
    (index / "meta.json").write_text(json.dumps({**meta, "docs_root": str(docs)}), encoding="utf-8")
    write(docs / "kontakt.md", "# Kontakt\n\nNowy numer.\n")  # a recorded file (new ones: see staleness)
    quiet = run("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", index, "--quiet")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    result = run("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", index)  # --quiet was one command's
    assert f"run `semsearch build {docs} --index {index}`" in result.stderr


def test_eval_recall_at_several_k_and_warnings(fake_sample_index, tmp_path):
    questions = tmp_path / "q.jsonl"
    rows = [
        {"question": "Ile kosztuje dostawa do paczkomatu?", "source": "dostawa.md"},
        {"question": "Co oznacza błąd PAY-517?", "answr": "PAY-517"},
        {"question": "Jak złożyć reklamację?", "source": "nope.md"},
    ]
    questions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    result = run("eval", questions, "--index", fake_sample_index, "-k", "1,3,10,50", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data["recall"]) == ["1", "3", "10", "50"]
    assert data["recall"]["1"] <= data["recall"]["3"] <= data["recall"]["10"] <= data["recall"]["50"] == 0.5
    assert "line 2: unknown key 'answr' ignored" in result.stderr
    assert "line 3: source nope.md is no indexed file" in result.stderr
    copy = tmp_path / "copy"
    shutil.copytree(fake_sample_index, copy)
    calibrated = run("eval", questions, "--index", copy, "--calibrate")
    assert "calibrating on 3 questions: the threshold will be noisy" in calibrated.stderr


@pytest.mark.slow
def test_locations_open_in_an_editor_and_paths_are_taken_as_the_shell_gives_them(sample_index, monkeypatch):
    monkeypatch.chdir(SAMPLE_DOCS.parent)
    question = "Ile mam dni na zwrot towaru?"
    for pattern in ("regulamin.md", "docs/regulamin.md", str(SAMPLE_DOCS / "regulamin.md"), "docs/reg*.md"):
        result = run("ask", question, "--path", pattern, "--index", sample_index, "--json")
        assert result.exit_code == 0, (pattern, result.output)
        hits = json.loads(result.stdout)["results"]
        assert hits and {hit["source"] for hit in hits} == {"regulamin.md"}, pattern
        first = hits[0]
        assert first["path"] == str(SAMPLE_DOCS / "regulamin.md")
        assert first["file_line"] == f"docs/regulamin.md:{first['start_line']}"
    human = run("ask", question, "--path", "docs/", "--index", sample_index, "-k", "1")
    assert human.exit_code == 0 and re.match(r"^\d\.\d{3}  docs/\S+\.md:\d+  ", human.stdout)


def test_eval_sources_may_be_written_as_the_shell_gives_them(fake_sample_index, tmp_path, monkeypatch):
    monkeypatch.chdir(SAMPLE_DOCS.parent)
    questions = tmp_path / "q.jsonl"
    rows = [
        {"question": "Ile kosztuje dostawa do paczkomatu?", "source": "docs/dostawa.md"},
        {"question": "Ile kosztuje dostawa do paczkomatu?", "source": str(SAMPLE_DOCS / "dostawa.md")},
        {"question": "Ile kosztuje dostawa do paczkomatu?", "source": "dostawa.md"},
    ]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = run("eval", questions, "--index", fake_sample_index, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["top3"] == 1.0


def test_path_patterns_become_docs_relative_only_when_they_lead_into_the_docs(tmp_path, monkeypatch):
    from semsearch.ingest.sources import docs_relative

    write(tmp_path / "docs" / "faq" / "a.md", "x")
    write(tmp_path / "faq" / "outside.md", "x")  # a folder of the same name outside the docs
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    expected = {
        "faq/a.md": "faq/a.md",  # docs-relative already (faq/a.md does not exist here)
        "docs/faq/a.md": "faq/a.md",
        str(docs / "faq" / "a.md"): "faq/a.md",
        "docs/faq/*.md": "faq/*.md",
        "docs/faq": "faq/",
        "docs": "**",
        "faq/**": "faq/**",  # ./faq exists but is not in the docs: taken as given
        "*.md": "*.md",
    }
    assert {pattern: docs_relative(pattern, docs) for pattern in expected} == expected


@pytest.mark.slow
def test_a_rebuild_from_a_subfolder_finds_the_project_index_but_a_new_build_stays_here(
    sample_index, tmp_path, monkeypatch
):
    project = tmp_path / "project"
    shutil.copytree(sample_index, project / "index")
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    monkeypatch.delenv("SEMSEARCH_INDEX", raising=False)
    rebuilt = run("build", "--json", "--dry-run")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert json.loads(rebuilt.stdout)["index"] == str(project / "index")
    assert json.loads(rebuilt.stdout)["up_to_date"] is True
    write(project / "src" / "notes" / "a.md", "# Notatki\n\nCoś nowego.\n")
    new = run("build", "notes", "--json", "--dry-run")
    assert new.exit_code == 0, new.output
    assert json.loads(new.stdout)["index"] == "index"  # beside the notes, not the project's index


@pytest.mark.slow
def test_jsonl_prints_one_result_per_line_for_pipes(sample_index):
    result = run("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", sample_index, "--jsonl", "-k", "3")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3 and [row["rank"] for row in rows] == [1, 2, 3]
    assert rows[0]["source"] == "dostawa.md" and rows[0]["file_line"].endswith(f":{rows[0]['start_line']}")
    refused = run("ask", "Jaka jest pogoda w Krakowie?", "--index", sample_index, "--jsonl")
    assert refused.exit_code == 1 and refused.stdout == ""


def test_a_rebuild_whose_recorded_folder_is_gone_names_it_and_changes_nothing(
    fake_sample_index, tmp_path, monkeypatch
):
    """Never a silent switch to ./docs (an outside probe saw docs_root rewritten that way)."""
    index = tmp_path / "index"
    shutil.copytree(fake_sample_index, index)
    meta = json.loads((index / "meta.json").read_text(encoding="utf-8"))
    gone = tmp_path / "moved-away"
    (index / "meta.json").write_text(json.dumps({**meta, "docs_root": str(gone)}), encoding="utf-8")
    before = (index / "meta.json").read_bytes()
    shutil.copytree(SAMPLE_DOCS, tmp_path / "docs")  # an unrelated ./docs that must not be used
    monkeypatch.chdir(tmp_path)
    result = run("build", "--index", index)
    assert result.exit_code == 2 and f"was built from {gone}/, which no longer exists" in result.stderr
    assert (index / "meta.json").read_bytes() == before
    asked = run("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", index)
    assert f"{gone}/, no longer exists" in asked.stderr and "run `semsearch build" not in asked.stderr
    info = run("info", "--index", index)
    assert f"the documents folder no longer exists: {gone}/" in info.stdout


@pytest.mark.parametrize(
    "options",
    [["--json", "--jsonl"], ["--context", "--jsonl"], ["--context", "--full"], ["--expand", "file"]],
)
def test_output_options_that_cannot_work_together_are_usage_errors(fake_sample_index, options):
    result = run("ask", "Ile kosztuje dostawa do paczkomatu?", "--index", fake_sample_index, *options)
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and "--help`" in result.stderr


def test_a_chunk_budget_of_zero_is_refused_not_ignored(tmp_path):
    result = run("build", SAMPLE_DOCS, "--index", tmp_path / "index", "--max-tokens", "0")
    assert result.exit_code == 2 and "at least 32" in result.stderr
    assert not (tmp_path / "index").exists()


def test_no_index_anywhere_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEMSEARCH_INDEX", raising=False)
    result = run("ask", "Ile kosztuje dostawa?")
    assert result.exit_code == 2
    assert "no index found: neither ./index nor an index/ folder above holds one" in result.stderr
    assert "SEMSEARCH_INDEX" in result.stderr
    (tmp_path / "notes").mkdir()
    not_ours = run("ask", "Ile kosztuje dostawa?", "--index", tmp_path / "notes")
    assert "(the folder holds no meta.json)" in not_ours.stderr


def test_a_question_starting_with_a_dash_gets_a_hint_and_works_after_two_dashes(fake_sample_index):
    hinted = run("ask", "-5 stopni na dworze, czy kurier dowiezie paczkę?", "--index", fake_sample_index)
    assert hinted.exit_code == 2 and "goes after `--`" in hinted.stderr
    # the whole question, as typed (an outside probe saw `-- -5` and `-- '- '`)
    assert "ask -- '-5 stopni na dworze, czy kurier dowiezie paczkę?' (see" in hinted.stderr
    short = run("ask", "-q czy dowieziecie?", "--index", fake_sample_index)
    assert "ask -- '-q czy dowieziecie?' (see" in short.stderr
    unquoted = run("ask", "-k", "2", "-5", "stopni", "--index", fake_sample_index)
    assert "ask -- -5 stopni (see" in unquoted.stderr
    asked = run("ask", "--index", fake_sample_index, "--", "-5 stopni na dworze, czy kurier dowiezie paczkę?")
    assert asked.exit_code in (0, 1) and "error" not in asked.stderr


def help_text(*args: str) -> str:
    """A command's --help as words, without the panels' borders or the wrapping."""
    result = run(*args, "--help")
    assert result.exit_code == 0, result.output
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.stdout).split())


def test_a_question_that_is_a_flag_is_told_how_to_ask_it():
    """An outside probe (issue 25): `ask "--reload"` said only "No such option: --reload
    (Possible options: --expand)", and `ask --help` did not say how."""
    result = run("ask", "--reload")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "No such option: --reload" in result.stderr
    assert "goes after `--`:" in result.stderr and " ask -- --reload (see `" in result.stderr
    assert "semsearch ask -- --reload" in help_text("ask")
    assert "goes after" not in run("info", "--reload").stderr  # only ask takes a question


def test_options_written_after_two_dashes_are_warned_of(fake_sample_index):
    """After `--` every word is the question: `-k 3` there is asked about, not obeyed; said."""
    result = run("ask", "--index", fake_sample_index, "--json", "--", "how to x", "-k", "3")
    assert json.loads(result.stdout)["question"] == "how to x -k 3"
    assert "warning: -k after `--` is read as part of the question, not as an option" in result.stderr
    plain = run(
        "ask",
        "--index",
        fake_sample_index,
        "--json",
        "--",
        "-5 stopni na dworze, czy kurier dowiezie paczkę?",
    )
    assert "warning" not in plain.stderr  # a word starting with "-" that is no option of ask


@pytest.mark.slow
def test_verbose_says_a_refusal_once(sample_index):
    refused = run("ask", "Jaka jest pogoda w Krakowie?", "--index", sample_index, "-v")
    assert refused.exit_code == 1
    assert (refused.stdout + refused.stderr).count("No answer") == 1
    assert "the first passage had to reach this question's threshold" in refused.stderr  # how it was set


@pytest.mark.slow
def test_a_rebuild_keeps_how_the_index_was_built_unless_told_otherwise(tmp_path):
    """An outside probe: `--exclude` was forgotten by the next plain build (and so would be the
    model and the chunk budget, re-embedding everything with the default)."""
    docs = tmp_path / "docs"
    write(docs / "a.md", "# A\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    write(docs / "b.md", "# B\n\nDostawa kurierem kosztuje 15 zł.\n")
    index = tmp_path / "index"
    first = run("build", docs, "--index", index, "--exclude", "b.md", "--max-tokens", "64", "--json")
    assert first.exit_code == 0, first.output
    again = run("build", docs, "--index", index, "--json")
    assert json.loads(again.stdout)["up_to_date"] is True
    meta = json.loads((index / "meta.json").read_text(encoding="utf-8"))
    assert meta["excludes"] == ["b.md"] and meta["chunking"]["max_tokens"] == 64
    assert list(meta["files"]) == ["a.md"]
    cleared = run("build", docs, "--index", index, "--exclude", "", "--json")
    assert cleared.exit_code == 0, cleared.output
    cleared_meta = json.loads((index / "meta.json").read_text(encoding="utf-8"))
    assert set(cleared_meta["files"]) == {"a.md", "b.md"} and cleared_meta["excludes"] == []
