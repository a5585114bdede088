"""The hint after an error: one pure function for the command line and MCP, fed by the index the
error names (``SemsearchError.index``), never by what an earlier command left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semsearch.errors import (
    IndexChangedError,
    IndexCorruptError,
    IndexMissingError,
    MetaUnreadableError,
    UsageError,
    about_index,
)
from semsearch.hints import UNKNOWN_DOCS, hint, message


def test_a_damaged_index_error_names_its_index_and_the_folder_it_records(tmp_path):
    docs, index = tmp_path / "docs", tmp_path / "index"
    docs.mkdir()
    index.mkdir()
    (index / "meta.json").write_text(json.dumps({"docs_root": str(docs)}), encoding="utf-8")
    damaged = IndexCorruptError("chunk 3 is damaged", index=index)
    assert message(damaged) == f"chunk 3 is damaged; rebuild it with `semsearch build {docs} --index {index}`"
    assert message(damaged, agent=True) == message(damaged)  # the same command, all known
    unnamed = IndexCorruptError("chunk 3 is damaged")
    assert hint(unnamed) == "rebuild it with `semsearch build DOCS --index INDEX`"
    assert hint(unnamed, agent=True) == f"rebuild it with `semsearch build {UNKNOWN_DOCS} --index INDEX`"


def test_each_error_gets_its_hint_for_a_person_and_for_an_agent(tmp_path):
    gone = tmp_path / "gone"
    assert (
        hint(IndexMissingError("no index", index=gone))
        == "build one with `semsearch build DOCS --index INDEX`"
    )
    assert hint(IndexMissingError("no index", index=gone), agent=True) == (
        f"build it with `semsearch build {UNKNOWN_DOCS} --index {gone}`"
    )
    assert hint(MetaUnreadableError("x", index=gone)).startswith("nothing proves semsearch made that folder")
    assert hint(MetaUnreadableError("x", index=gone), agent=True) == (
        f"remove the folder, then build again: `semsearch build {UNKNOWN_DOCS} --index {gone}`"
    )
    assert hint(IndexChangedError("replaced")) == "run the command again"
    assert hint(IndexChangedError("replaced"), agent=True) is None
    assert message(UsageError("k is a whole number")) == "k is a whole number"


def test_the_front_door_names_the_index_of_an_error_unless_it_names_one(tmp_path):
    with pytest.raises(IndexCorruptError) as raised, about_index(tmp_path / "a"):
        raise IndexCorruptError("damaged")
    assert raised.value.index == tmp_path / "a"
    with pytest.raises(IndexCorruptError) as raised, about_index(tmp_path / "a"):
        raise IndexCorruptError("damaged", index=Path("b"))
    assert raised.value.index == Path("b")
