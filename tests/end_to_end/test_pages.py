"""The page about the question comes first (issue 36), with the real model: in a small vault a
glossary defines every topic in a line, and for a question in other words its one-line entry is
closer to the question than the page about the topic; page evidence puts the page first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from semsearch.retrieve.opening import load_index
from semsearch.retrieve.searcher import Ranking, Searcher
from tests.helpers import DATA, memo_env

VAULT = DATA / "hub_vault"
COMMAND = Path(sys.executable).with_name("semsearch")


def run_semsearch(*argv: str) -> subprocess.CompletedProcess:
    """The installed command in a fresh process (the session's memo of embeddings on its path)."""
    return subprocess.run([str(COMMAND), *argv], capture_output=True, text=True, env=memo_env(), timeout=600)


CASES = [
    ("which notes link to the one I'm reading", "backlinks.md"),
    ("one note per day journal", "daily-notes.md"),
]


@pytest.fixture(scope="module")
def vault_index(tmp_path_factory):
    index = tmp_path_factory.mktemp("vault") / "index"
    built = run_semsearch("build", str(VAULT), "--index", str(index), "-q")
    assert built.returncode == 0, built.stderr
    return index


@pytest.mark.parametrize(("question", "page"), CASES)
def test_the_page_about_the_topic_comes_before_the_glossary_entry(vault_index, question, page):
    found = run_semsearch("ask", question, "--index", str(vault_index), "--json", "-k", "3")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results[0]["location"].startswith(page)
    glossary = next(r for r in results if r["location"].startswith("glossary.md"))
    assert glossary["score"] > results[0]["score"]  # closer by cosine, and still second


@pytest.mark.parametrize(("question", "page"), CASES)
def test_without_page_evidence_the_glossary_entry_wins(vault_index, question, page):
    """The cases above are ones page evidence decides (so the test above can fail)."""
    from semsearch.encode.embedders import load_embedder

    index = load_index(vault_index)
    vector = load_embedder(index.model).embed_queries([question])[0]
    passages = Searcher(index, Ranking(pages=None))
    first = passages.search(question, vector, 1).hits[0]
    assert first.source == "glossary.md"
    assert Searcher(index).search(question, vector, 1).hits[0].source == page
