"""What build, info and ask say about a tiny folder, found wanting by an outside probe: files with
no text to search, a chunk budget above what the model reads, a dry run of an up-to-date index,
front matter that could not be read. Real default model, three small files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semsearch import Collection, UsageError
from semsearch.build.pipeline import build_index
from semsearch.cli.commands import app
from semsearch.retrieve.opening import load_index
from tests.helpers import FAKE_MODEL, write

runner = CliRunner()

GUIDE = "---\ntype: guide\n---\n# Zwroty\n\nTowar można zwrócić w ciągu 14 dni od otrzymania przesyłki.\n"
DELIVERY = "# Dostawa\n\nPaczki wysyłamy kurierem DPD lub do paczkomatu InPost.\n"
ONLY_FRONT_MATTER = "---\ntitle: Only\ntype: note\n---\n"


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args], env={"NO_COLOR": "1"}, prog_name="semsearch")


def built_folder(root: Path, *model: str):
    write(root / "docs" / "a.md", GUIDE)
    write(root / "docs" / "b.md", DELIVERY)
    write(root / "docs" / "odd" / "onlyfm.md", ONLY_FRONT_MATTER)
    built = run("build", root / "docs", "--index", root / "index", *model)
    assert built.exit_code == 0, built.output
    return root, built


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A docs folder of two files with text and one of only front matter, and its index (built
    with the hashing fake)."""
    return built_folder(tmp_path_factory.mktemp("tiny"), "--model", FAKE_MODEL)


@pytest.fixture(scope="module")
def real_folder(tmp_path_factory):
    """The same, built with the real default model (slow tests: its answers and its 512 tokens)."""
    return built_folder(tmp_path_factory.mktemp("tiny-real"))


def test_a_file_with_no_text_is_not_counted_as_a_file_searched(folder):
    root, built = folder
    assert built.stdout.startswith("Indexed 2 files (1 more with no text) into 2 chunks")
    assert "(3 new, 0 changed, 0 removed, 0 unchanged;" in built.stdout
    assert "warning: skipped odd/onlyfm.md: no text to index" in built.stderr
    again = run("build", root / "docs", "--index", root / "index", "--json")
    data = json.loads(again.stdout)
    assert (data["files"], data["without_text"], data["up_to_date"]) == (2, ["odd/onlyfm.md"], True)
    info = run("info", "--index", root / "index")
    assert "  content    2 files (1 more with no text), 2 chunks (" in info.stdout
    assert "  no text    odd/onlyfm.md" in info.stdout
    data = json.loads(run("info", "--index", root / "index", "--json").stdout)
    assert (data["files"], data["without_text"]) == (2, ["odd/onlyfm.md"])
    pytest.importorskip("mcp")
    from semsearch.mcp.server import Library

    library = Library(root / "index")
    served = library.index_info()  # the MCP server's index_info says the same (an outside probe)
    library.close()
    assert (served["files"], served["file_names"], served["without_text"]) == (
        2,
        ["a.md", "b.md"],
        ["odd/onlyfm.md"],
    )


@pytest.mark.parametrize(
    "filters, asked",
    [
        (["--path", "odd/onlyfm.md"], "the path pattern(s) odd/onlyfm.md"),
        (["--where", "title=Only"], "the condition(s) title=Only"),
        (
            ["--path", "odd/*", "--where", "type=note"],
            "the path pattern(s) odd/* and the condition(s) type=note",
        ),
    ],
)
def test_a_filter_that_leaves_only_files_with_no_text_is_a_usage_error(folder, filters, asked):
    root, _ = folder
    result = run("ask", "Ile mam dni na zwrot towaru?", "--index", root / "index", *filters)
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {asked} match only files with no text to search (odd/onlyfm.md)\n"


@pytest.mark.slow
def test_the_library_refuses_such_a_filter_too(real_folder):
    root, _ = real_folder
    question = ["ask", "Ile mam dni na zwrot towaru?", "--index", root / "index"]
    mixed = run(*question, "--path", "odd/onlyfm.md", "--path", "a.md")
    assert mixed.exit_code == 0 and "a.md:6" in mixed.stdout, mixed.output  # one with text is enough
    with Collection(root / "index") as docs:
        with pytest.raises(UsageError, match="match only files with no text to search"):
            docs.search("Ile mam dni na zwrot towaru?", paths=["odd/onlyfm.md"])
        assert docs.search("Ile mam dni na zwrot towaru?", paths=["odd/onlyfm.md", "a.md"]).hits


@pytest.mark.slow
def test_a_chunk_budget_above_what_the_model_reads_is_refused_before_any_work(real_folder, tmp_path):
    root, _ = real_folder
    index = tmp_path / "index"
    refused = run("build", root / "docs", "--index", index, "--max-tokens", "100000", "--dry-run")
    assert refused.exit_code == 2
    assert (
        refused.stderr
        == "error: --max-tokens 100,000 is more than the model reads (512 tokens); use at most 512\n"
    )
    assert not index.exists()
    assert run("build", root / "docs", "--index", index, "--max-tokens", "512", "-q").exit_code == 0
    assert "2 chunks (≤ 512 tokens)\n" in run("info", "--index", index).stdout


@pytest.mark.slow
def test_an_index_that_records_a_larger_budget_shows_the_one_applied_and_rebuilds_as_built(
    real_folder, tmp_path
):
    root, _ = real_folder
    index = tmp_path / "index"
    shutil.copytree(root / "index", index)
    meta = json.loads((index / "meta.json").read_text())
    meta["chunking"]["max_tokens"] = 100_000  # as a build before the check recorded it
    (index / "meta.json").write_text(json.dumps(meta))
    info = run("info", "--index", index)
    assert "(≤ 512 tokens, what the model reads; built with --max-tokens 100,000)" in info.stdout
    assert json.loads(run("info", "--index", index, "--json").stdout)["chunk_budget"] == 512
    again = run("build", "--index", index)
    assert again.exit_code == 0 and again.stdout.startswith("Up to date: "), again.output


def test_the_library_refuses_it_too_and_caps_the_default(tmp_path, fake_embedder):
    docs = tmp_path / "docs"
    write(docs / "b.md", DELIVERY)
    fake_embedder.max_input_tokens = 256  # as all-MiniLM-L6-v2 reads
    with pytest.raises(UsageError, match=r"--max-tokens 257 is more than the model reads \(256 tokens\)"):
        build_index(docs, tmp_path / "index", embedder=fake_embedder, max_tokens=257)
    assert fake_embedder.passages_embedded == 0
    build_index(docs, tmp_path / "index", embedder=fake_embedder)
    assert load_index(tmp_path / "index").meta.chunking.max_tokens == 256


def test_a_dry_run_of_an_up_to_date_index_says_it_is_a_dry_run(folder):
    root, _ = folder
    index = root / "index"
    dry = run("build", root / "docs", "--index", index, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.stdout == (
        "Dry run: 2 files (1 more with no text), 2 chunks (0 new, 0 changed, 0 removed, 3 unchanged); "
        f"up to date: a build would embed nothing; nothing written to {index}/\n"
    )


SAID = ("files", "chunks", "new", "changed", "removed", "unchanged", "embedded", "without_text")


@pytest.mark.parametrize("excludes", [["--exclude", "b.md"], ["--exclude", "odd/", "--exclude", "a.md"]])
def test_a_dry_run_with_another_exclude_says_what_that_build_does(folder, tmp_path, excludes):
    root, _ = folder
    index = tmp_path / "index"
    shutil.copytree(root / "index", index)
    for options in (excludes, ["--exclude", ""]):  # then back: the files left out come back as new
        build = ["build", root / "docs", "--index", index, *options, "--json"]
        dry = json.loads(run(*build, "--dry-run").stdout)
        real = json.loads(run(*build).stdout)
        assert dry["dry_run"] and not dry["up_to_date"] and dry["removed"] + dry["new"] > 0
        assert {key: dry[key] for key in SAID} == {key: real[key] for key in SAID}


@pytest.mark.slow
def test_info_names_front_matter_that_could_not_be_read(tmp_path):
    docs, index = tmp_path / "docs", tmp_path / "index"
    write(docs / "bad.md", "---\ntype: [guide\n---\n# Zwroty\n\nTowar można zwrócić w ciągu 14 dni.\n")
    write(docs / "b.md", DELIVERY)
    built = run("build", docs, "--index", index)
    assert "warning: bad.md:2: front matter is not valid YAML" in built.stderr
    info = run("info", "--index", index)
    assert "  fields     none (1 file has front matter that could not be read: bad.md:2)\n" in info.stdout
    unread = json.loads(run("info", "--index", index, "--json").stdout)["front_matter_unread"]
    assert [(item["path"], item["line"]) for item in unread] == [("bad.md", 2)]
    assert "not valid YAML" in unread[0]["problem"]
    write(docs / "a.md", GUIDE)
    assert run("build", docs, "--index", index, "-q").exit_code == 0
    info = run("info", "--index", index)
    assert (
        "  fields     type (1 file); 1 file has front matter that could not be read: bad.md:2\n"
        in info.stdout
    )
    pytest.importorskip("mcp")
    from semsearch.mcp.server import Library

    library = Library(index)
    assert library.index_info()["front_matter_unread"] == unread  # the MCP server says the same
    library.close()


@pytest.mark.parametrize(
    ("pages", "said"),
    [
        (
            {"version": 1, "pages": 86, "linked": 0.942},
            "86 pages, 94% named by another page: the page a passage is on counts 94% in the ranking",
        ),
        (
            {"version": 1, "pages": 300, "linked": 0.0},
            "300 pages, 0% named by another page: the page a passage is on counts little in the ranking",
        ),
        (None, "not recorded (the index predates page evidence; the next build adds it)"),
    ],
)
def test_info_says_how_much_the_page_counts_and_why(pages, said):
    from semsearch.cli.render.info import _pages_words

    assert _pages_words(pages) == said


def test_info_shows_the_pages_line(fake_sample_index):
    info = run("info", "--index", fake_sample_index)
    said = "10 pages, 90% named by another page: the page a passage is on counts 90% in the ranking"
    assert f"  pages      {said}\n" in info.stdout
    assert json.loads(run("info", "--index", fake_sample_index, "--json").stdout)["pages"]["pages"] == 10
