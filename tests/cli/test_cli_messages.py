"""What the command line says, found wanting by an outside probe run as a new user: the help,
usage errors that name what the user typed, counts, hints with real paths, UTF-16 files."""

from __future__ import annotations

import ast
import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.cli.test_readme import python_examples
from tests.helpers import SAMPLE_DOCS

runner = CliRunner()
COMMANDS = ("build", "ask", "info", "eval", "mcp", "watch")


def run(*args, env: dict[str, str] | None = None):
    return runner.invoke(
        app, [str(a) for a in args], env={"NO_COLOR": "1", **(env or {})}, prog_name="semsearch"
    )


def test_bare_semsearch_prints_the_help_alone():
    result = run()
    assert result.exit_code == 2  # Click's no_args_is_help: the help, as a usage error
    assert "Usage: semsearch" in result.stdout and all(name in result.stdout for name in COMMANDS)
    assert result.stderr == ""  # no "error:  (see ...)" with an empty message


@pytest.mark.parametrize(
    "options, message",
    [
        (["--max-context-tokens", "10"], "--max-context-tokens needs --context"),
        (["--expand", "file"], "--expand needs --context"),
        (["--max-context-tokens", "3000"], "--max-context-tokens needs --context"),  # given, if the default
        (
            ["--expand", "section", "--max-context-tokens", "9"],
            "--max-context-tokens and --expand need --context",
        ),
    ],
)
def test_an_option_that_shapes_the_context_prompt_is_named_as_given(tmp_path, options, message):
    result = run("ask", "Ile dni na zwrot?", "--index", tmp_path / "nowhere", *options)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {message}: ") and result.stderr.count("\n") == 1
    assert "Invalid value" not in result.stderr and "(see `semsearch ask --help`)" in result.stderr


def test_the_docs_argument_says_its_default_and_nothing_is_lost_to_markup():
    result = run("build", "--help", env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "Usage: semsearch build [OPTIONS] [DOCS]" in result.stdout
    assert "Folder of Markdown files (default: the one the index records, else docs)." in result.stdout
    assert "files ." not in result.stdout


def test_each_command_summary_is_one_line_at_80_columns():
    result = run("--help", env={"COLUMNS": "80"})
    panel = result.stdout.split("─ Commands ─")[1].split("╰")[0].splitlines()[1:]
    names = [line.split()[1] for line in panel]
    assert names == list(COMMANDS), panel  # a wrapped summary is a line without a command's name
    assert all(len(line) <= 80 for line in panel)


@pytest.mark.parametrize("args", [["ask", "x", "--index"], ["build", "--index"], ["info", "--index"]])
def test_a_missing_option_value_points_to_the_subcommand_help(args):
    result = run(*args)
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: Option '--index' requires an argument. (see `semsearch {args[0]} --help`)\n"
    )


@pytest.mark.slow
def test_counts_have_thousands_separators_as_token_counts_do(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "semsearch.build.pipeline.build_seconds", lambda *args: 42.0
    )  # no timing of real batches
    docs = tmp_path / "docs"
    docs.mkdir()
    sections = "".join(f"## Sekcja {i}\n\nTekst numer {i} o zwrotach.\n\n" for i in range(1100))
    (docs / "big.md").write_text(f"# Duży\n\n{sections}", encoding="utf-8")
    result = run("build", docs, "--index", tmp_path / "index", "--dry-run", "-v")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Dry run: 1 file, 1,100 chunks (1 new, ")
    assert re.search(r"a build would embed 1,100 chunks \(\d\d,\d{3} tokens\), about \d\d s", result.stdout)
    assert "big.md: 1,100 chunks" in result.stderr


def damaged_copy(sample_index, tmp_path, docs_root: str | None = None):
    broken = tmp_path / "index"
    shutil.copytree(sample_index, broken)
    meta = json.loads((broken / "meta.json").read_text(encoding="utf-8"))
    del meta["chunks"]
    if docs_root is not None:
        meta["docs_root"] = docs_root
    (broken / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return broken


def test_the_damaged_index_hint_gives_the_real_rebuild_command(fake_sample_index, tmp_path):
    broken = damaged_copy(fake_sample_index, tmp_path)
    result = run("ask", "Ile dni na zwrot?", "--index", broken)
    assert result.exit_code == 2
    assert result.stderr.endswith(f"; rebuild it with `semsearch build {SAMPLE_DOCS} --index {broken}`\n")
    assert result.stderr.count("\n") == 1


def test_the_damaged_index_hint_keeps_a_placeholder_for_a_folder_that_is_gone(fake_sample_index, tmp_path):
    broken = damaged_copy(fake_sample_index, tmp_path, docs_root=str(tmp_path / "gone"))
    result = run("info", "--index", broken)
    assert result.exit_code == 2
    assert result.stderr.endswith(f"; rebuild it with `semsearch build DOCS --index {broken}`\n")


TERMS = "# Zwroty\n\nWstęp.\n\n## Termin\n\nMasz 14 dni na zwrot towaru.\n"


@pytest.mark.slow
def test_utf16_and_utf32_files_with_a_bom_are_indexed_at_their_lines(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "utf8.md").write_text(TERMS, encoding="utf-8")
    (docs / "utf16.md").write_bytes(
        "\ufeff".encode("utf-16-le") + TERMS.replace("\n", "\r\n").encode("utf-16-le")
    )
    (docs / "utf32.md").write_bytes(TERMS.encode("utf-32"))
    (docs / "nobom.md").write_bytes(TERMS.encode("utf-16-le"))
    index = tmp_path / "index"
    built = run("build", docs, "--index", index, "--json")
    assert built.exit_code == 0, built.output
    report = json.loads(built.stdout)
    assert report["warnings"] == []
    assert report["skipped"] == [
        {"path": "nobom.md", "reason": "UTF-16 text without a byte order mark, it seems; save it as UTF-8"}
    ]
    asked = run("ask", "Ile dni na zwrot?", "--index", index, "--jsonl", "--mode", "keyword", "-k", "3")
    hits = {
        hit["source"]: (hit["start_line"], hit["text"]) for hit in map(json.loads, asked.stdout.splitlines())
    }
    assert hits == dict.fromkeys(["utf8.md", "utf16.md", "utf32.md"], (7, "Masz 14 dni na zwrot towaru."))
    again = json.loads(run("build", docs, "--index", index, "--json").stdout)
    assert (again["unchanged"], again["embedded"]) == (3, 0)  # the sha256 of the bytes, as for UTF-8


@pytest.mark.slow
def test_the_readme_python_filters_work_on_the_sample_docs(sample_index):
    """The README's Python shows `where=[...]` (in a comment too): each must work on docs/."""
    from semsearch import Collection

    shown = [ast.literal_eval(m) for code in python_examples() for m in re.findall(r"where=(\[.*?\])", code)]
    assert shown
    with Collection(sample_index) as docs:
        for where in shown:
            assert docs.search("Ile mam dni na zwrot towaru?", where=where).hits, where
