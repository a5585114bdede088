"""A fresh index without thinking (issue 25, point 8): `ask --refresh`, `Collection.search(...,
refresh=True)` and MCP `search` with `refresh` bring the index up to date first (an incremental
build: unchanged files keep their vectors), and with nothing changed they write nothing."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from semsearch import Collection
from semsearch.build.pipeline import build_index
from semsearch.cli.commands import app
from tests.helpers import FAKE_MODEL, write

runner = CliRunner()
NEW_TEXT = "Zwrot roweru elektrycznego przyjmujemy wyłącznie w oryginalnym kartonie producenta."
QUESTION = "zwrot roweru elektrycznego w kartonie"


@pytest.fixture
def built(tmp_path):
    docs, index = tmp_path / "docs", tmp_path / "index"
    write(docs / "zwroty.md", "# Zwroty\n\n## Termin\n\nNa zwrot masz 14 dni od dostawy.\n")
    write(docs / "dostawa.md", "# Dostawa\n\n## Kurier\n\nKurier przyjeżdża w dni robocze.\n")
    build_index(docs, index, model=FAKE_MODEL)
    return docs, index


def ask(index, *options):
    args = ["ask", QUESTION, "--index", str(index), "--min-score", "-1", "-k", "1", "--json", *options]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def snapshot(index):
    return {path.name: path.stat().st_mtime_ns for path in index.iterdir()}, index.stat().st_ino


def test_ask_refresh_after_new_markup_rules_says_why_and_embeds_no_unchanged_passage(tmp_path, monkeypatch):
    """An outside probe saw `--refresh` re-embed a whole folder for minutes without a reason."""
    from semsearch.ingest import markup

    docs, index = tmp_path / "docs", tmp_path / "index"
    write(docs / "zwroty.md", "# Zwroty\n\n## Termin\n\nNa zwrot masz 14 dni od dostawy.\n")
    monkeypatch.setattr(markup, "APPLIED", {**markup.APPLIED, "version": 0})
    build_index(docs, index, model=FAKE_MODEL)
    monkeypatch.undo()
    _, said = ask(index, "--refresh")
    assert f"1 unchanged but re-chunked (the chunking changed (markup v0 → v{markup.MARKUP_VERSION})" in said
    assert "0 chunks embedded" in said


def test_ask_refresh_finds_a_changed_files_new_text_and_reuses_the_unchanged(built):
    docs, index = built
    write(
        docs / "zwroty.md",
        f"# Zwroty\n\n## Termin\n\nNa zwrot masz 14 dni od dostawy.\n\n## Rower\n\n{NEW_TEXT}\n",
    )
    stale, warned = ask(index)  # without --refresh: the old text, and a warning
    assert NEW_TEXT not in stale["results"][0]["text"] and "zwroty.md" in warned
    fresh, said = ask(index, "--refresh")
    assert fresh["results"][0]["text"] == NEW_TEXT and fresh["results"][0]["file_line"].startswith(
        f"{docs}/zwroty.md:"
    )
    assert (
        "Refreshed" in said and "1 changed" in said and "1 unchanged" in said and "changed since" not in said
    )
    again = json.loads(runner.invoke(app, ["build", str(docs), "--index", str(index), "--json"]).stdout)
    assert again["up_to_date"] and again["embedded"] == 0  # --refresh left it up to date


def test_ask_refresh_finds_a_new_file(built):
    docs, index = built
    write(docs / "rowery.md", f"# Rowery\n\n{NEW_TEXT}\n")  # ask's own check sees no new file
    fresh, said = ask(index, "--refresh")
    assert fresh["results"][0]["file_line"].startswith(f"{docs}/rowery.md:") and "1 new" in said


def test_ask_refresh_with_nothing_changed_writes_nothing_and_says_nothing(built):
    docs, index = built
    before = snapshot(index)
    plain, _ = ask(index)
    refreshed, said = ask(index, "--refresh")
    assert refreshed == plain and said == "" and snapshot(index) == before


def test_collection_search_refreshes_and_says_when_it_is_up_to_date(built):
    docs, index = built
    with Collection(index) as collection:
        assert collection.refresh().up_to_date
        write(docs / "dostawa.md", f"# Dostawa\n\n## Rower\n\n{NEW_TEXT}\n")
        assert collection.search(QUESTION, min_score=-1).hits[0].text != NEW_TEXT
        answer = collection.search(QUESTION, k=1, min_score=-1, refresh=True)
        assert answer.hits[0].text == NEW_TEXT and collection.changed_files() == []
        assert collection.refresh().up_to_date


def test_mcp_search_refreshes_when_asked(built):
    pytest.importorskip("mcp.server.mcpserver")
    from semsearch.mcp.server import Library

    docs, index = built
    library = Library(index)
    write(docs / "zwroty.md", f"# Zwroty\n\n## Rower\n\n{NEW_TEXT}\n")
    stale = library.search(QUESTION, k=1)
    assert stale["stale"]["files"] == ["zwroty.md"]
    fresh = library.search(QUESTION, k=1, refresh=True)
    assert fresh["stale"] is None and fresh["hits"][0]["text"] == NEW_TEXT
    assert library.index_info()["changed_files"] == []
    library.close()


def test_a_refresh_while_another_process_writes_answers_from_the_index_as_it_is(built):
    """Another build or ``watch`` holds the write lock (issue 39: 5 of 6 simultaneous refreshes
    failed): ``ask --refresh`` answers as a plain ``ask`` does, with a warning; the library's
    and MCP's searches say it in their answer."""
    from semsearch.store.folder import index_lock

    docs, index = built
    plain, _ = ask(index)
    write(docs / "zwroty.md", f"# Zwroty\n\n## Rower\n\n{NEW_TEXT}\n")
    with index_lock(index):
        answer, said = ask(index, "--refresh")
        assert answer == plain  # the index as it is: the old text
        assert "could not refresh the index: another semsearch process is writing" in said
        assert "1 file(s) changed since the index was built (zwroty.md)" in said  # as a plain ask says
        with Collection(index) as collection:
            found = collection.search(QUESTION, k=1, min_score=-1, refresh=True)
            assert "another semsearch process is writing" in found.not_refreshed
    with Collection(index) as collection:  # free again: refreshed
        assert collection.search(QUESTION, k=1, min_score=-1, refresh=True).not_refreshed is None


def test_mcp_search_with_refresh_while_another_process_writes_says_so(built):
    pytest.importorskip("mcp.server.mcpserver")
    from semsearch.mcp.server import Library
    from semsearch.store.folder import index_lock

    docs, index = built
    library = Library(index)
    write(docs / "zwroty.md", f"# Zwroty\n\n## Rower\n\n{NEW_TEXT}\n")
    with index_lock(index):
        found = library.search(QUESTION, k=1, refresh=True)
    assert found["stale"]["files"] == ["zwroty.md"] and found["hits"][0]["text"] != NEW_TEXT
    assert found["stale"]["note"].startswith("could not refresh the index (another semsearch process")
    assert library.search(QUESTION, k=1, refresh=True)["hits"][0]["text"] == NEW_TEXT
    library.close()
