"""A chunks.json damaged in place, every line's length kept (so its offsets still match): a build
rebuilds over it, saying why, and `ask` answers or fails with one line, never a traceback.

Before the fix a build reused such an index: a chunk's text edited in place stayed in the new
index, and a chunk that no longer parsed failed the build ("chunks.json is unreadable (...);
rebuild it with `semsearch build ...`", the very command that failed), or, with no file
changed, had it report "Up to date" while `ask` failed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from semsearch.retrieve.opening import load_index
from semsearch.store.schema import CHUNKS_DIGEST
from tests.helpers import FAKE_MODEL, write

runner = CliRunner()

TEXTS = {
    "a.md": "Zwrot pieniędzy w ciągu 14 dni.",
    "b.md": "Paczki wysyłamy w dwa dni.",
    "c.md": "Hasło zmienisz w ustawieniach konta.",
}
DAMAGES = {
    "a text edited in place": ("Zwrot pieniędzy", "Zwrot pieniądzy"),
    "a field mistyped": ('"start_line": 3, "end_line"', '"start_line":"3","end_line"'),
    "a line that is not JSON": ('{"id": "a.md#0"', '["id": "a.md#0"'),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """Three one-chunk files and their index, built once with the hashing fake (rebuilds keep it)."""
    root = tmp_path_factory.mktemp("built")
    for name, text in TEXTS.items():
        write(root / "docs" / name, f"# {name}\n\n{text}\n")
    result = runner.invoke(
        app, ["build", str(root / "docs"), "--index", str(root / "index"), "-q", "--model", FAKE_MODEL]
    )
    assert result.exit_code == 0, result.output
    return root / "docs", root / "index"


@pytest.fixture
def copy(built, tmp_path) -> tuple[Path, Path]:
    shutil.copytree(built[0], tmp_path / "docs")
    shutil.copytree(built[1], tmp_path / "index")
    return tmp_path / "docs", tmp_path / "index"


def damage(index: Path, old: str, new: str) -> None:
    path = index / "chunks.json"
    data = path.read_text(encoding="utf-8")
    damaged = data.replace(old, new, 1)
    assert damaged != data and len(damaged.encode()) == len(data.encode())  # the offsets still match
    path.write_text(damaged, encoding="utf-8")


def build(docs: Path, index: Path) -> dict:
    result = runner.invoke(app, ["build", str(docs), "--index", str(index), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("changed", [False, True], ids=["no file changed", "another file changed"])
@pytest.mark.parametrize("damaged", DAMAGES)
def test_a_chunks_file_damaged_in_place_is_rebuilt_over(copy, damaged, changed):
    docs, index = copy
    damage(index, *DAMAGES[damaged])
    asked = runner.invoke(app, ["ask", "zwrot pieniędzy", "--index", str(index)])
    assert asked.exit_code == 2 and "Traceback" not in asked.output, (
        asked.output
    )  # an error, not a wrong result
    assert asked.stderr.startswith("error: ") and asked.stderr.strip().count("\n") == 0
    assert "rebuild it with `semsearch build" in asked.stderr  # met while searching: names its index
    assert asked.stderr.endswith(f" --index {index}`\n")
    info = runner.invoke(app, ["info", "--index", str(index)])  # not "up to date" (an outside probe)
    assert info.exit_code == 2 and info.stderr.endswith(f" --index {index}`\n")

    texts = dict(TEXTS)
    if changed:
        texts["b.md"] = "Paczki wysyłamy w trzy dni."
        write(docs / "b.md", f"# b.md\n\n{texts['b.md']}\n")
    report = build(docs, index)
    assert "the previous index is damaged" in report["full_reason"]
    assert (report["embedded"], report["up_to_date"]) == (len(TEXTS), False)
    rebuilt = load_index(index)
    assert {chunk.source: chunk.text for chunk in rebuilt.chunks} == texts
    assert runner.invoke(app, ["ask", "zwrot pieniędzy", "--index", str(index)]).exit_code == 0
    assert build(docs, index)["up_to_date"]


def test_an_index_without_a_chunks_checksum_has_its_chunks_parsed_then_gains_one(copy):
    """An index written before the checksum: a line that does not parse is still found, and an
    intact one gains the checksum at its next build."""
    docs, index = copy
    meta_path = index / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    del meta[CHUNKS_DIGEST]
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    assert build(docs, index)["up_to_date"]
    assert CHUNKS_DIGEST in json.loads(meta_path.read_text(encoding="utf-8"))

    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    damage(index, *DAMAGES["a field mistyped"])
    report = build(docs, index)
    assert "the previous index is damaged" in report["full_reason"] and report["embedded"] == len(TEXTS)


@pytest.mark.parametrize(
    "old, new", [('"source": "a.md"', '"source": "x.md"'), ('"start_line": 3', '"start_line": 4')]
)
def test_ask_never_shows_a_location_damaged_in_place(copy, old, new):
    """An outside probe: a file name or line number edited in place (its length kept) was shown
    as the answer's location, exit 0: each chunk read is now checked against its CRC-32."""
    docs, index = copy
    damage(index, old, new)
    asked = runner.invoke(app, ["ask", "zwrot pieniędzy", "--index", str(index), "-k", "1"])
    assert asked.exit_code == 2, asked.output
    assert "is damaged (not the text the build wrote)" in asked.stderr and "x.md" not in asked.output


def test_a_damaged_checksum_file_is_rebuilt_over_and_named(copy):
    """An outside probe: one flipped bit in chunks.crc32.npy failed every ask, and the build it
    advised said "up to date" (only --full mended it); garbage there was told in numpy's words."""
    docs, index = copy
    checksums = np.load(index / "chunks.crc32.npy")
    checksums[0] ^= 1
    np.save(index / "chunks.crc32.npy", checksums)
    asked = runner.invoke(app, ["ask", "zwrot pieniędzy", "--index", str(index)])
    assert asked.exit_code == 2 and "is damaged" in asked.stderr
    report = build(docs, index)
    assert "the previous index is damaged" in report["full_reason"] and report["embedded"] == len(TEXTS)
    assert runner.invoke(app, ["ask", "zwrot pieniędzy", "--index", str(index)]).exit_code == 0

    (index / "chunks.crc32.npy").write_bytes(b"not numpy at all")
    asked = runner.invoke(app, ["ask", "zwrot pieniędzy", "--index", str(index)])
    assert asked.exit_code == 2 and "chunks.crc32.npy is unreadable" in asked.stderr
    assert "pickle" not in asked.stderr
    assert "chunks.crc32.npy is unreadable" in build(docs, index)["full_reason"]
