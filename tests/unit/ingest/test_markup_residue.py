"""On every raw doc set (../shared/data and bench/data), chunked with the real chunker, no markup
is left in chunk text or heading paths (counted per kind by ``bench/markup_residue.py``), and
each chunk's lines are the file's lines (issue 24)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from semsearch.ingest.chunking import chunk_markdown
from semsearch.ingest.tokens import count_tokens

_BENCH = Path(__file__).resolve().parents[3] / "bench" / "markup_residue.py"
_spec = importlib.util.spec_from_file_location("markup_residue", _BENCH)
residue = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(residue)

SETS = residue.raw_sets()
_COMMENT = re.compile(r"<!--.*?-->")
_LARGE = 300_000
"""Bytes of Markdown over which a set's check takes more than a few seconds here."""


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.md*"))


def _params():
    return [
        pytest.param(
            folder, id=folder.parent.name, marks=[pytest.mark.slow] if _size(folder) > _LARGE else []
        )
        for folder in SETS
    ]


def test_the_sets_are_there():
    names = {folder.parent.name for folder in SETS}
    assert "starlight-docs" in names  # the project's own MDX set, always beside the tests
    assert len(SETS) >= 2


@pytest.mark.parametrize("folder", _params())
def test_no_markup_is_left_per_kind(folder):
    in_text, in_headings, chunks = residue.folder_residue(folder)
    assert chunks > 0
    assert dict(in_text) == {}
    assert dict(in_headings) == {}


@pytest.mark.parametrize("folder", _params())
def test_each_chunk_shows_its_own_lines_of_the_file(folder):
    checked = 0
    for path in sorted(p for p in folder.rglob("*") if p.suffix in {".md", ".markdown", ".mdx"}):
        text = path.read_text(encoding="utf-8").removeprefix("\ufeff").replace("\r\n", "\n")
        lines = text.split("\n")
        for chunk in chunk_markdown(text, path.name, max_tokens=512, count_tokens=count_tokens):
            shown = chunk.shown.split("\n")
            first, last = lines[chunk.start_line - 1], lines[chunk.end_line - 1]
            assert shown[0].strip() and _holds(first, shown[0]), (path, chunk.start_line)
            assert _holds(last, shown[-1]), (path, chunk.end_line)
            checked += 1
    assert checked > 0


def _holds(line: str, shown: str) -> bool:
    """Whether a snippet's line is the file's line (a snippet leaves HTML comments out)."""
    return shown in line or shown in _COMMENT.sub("", line)


def test_the_counter_sees_markup_the_chunker_would_leave():
    """The count is not empty by construction: markup standing in a file's prose is counted."""
    source = residue.source_prose("Zobacz [[Strona]] i <b>to</b> {{< note >}}.\n", mdx=False)
    found = residue.count("Zobacz [[Strona]] i <b>to</b> {{< note >}}.", source)
    assert {"wikilink", "html tag", "shortcode"} <= set(found)
    assert residue.count("`[[Strona]]`", source) == {}


def test_the_counter_sees_a_link_definition_in_a_quote():
    source = residue.source_prose("> Read the [org][].\n>\n> [org]: https://x.org\n", mdx=False)
    assert residue.count("> Read the org.\n>\n> [org]: https://x.org", source) == {"link url": 1}
