"""An index on a read-only file system: read as usual, a write refused in one line (exit 2).

Tests run as root here, where chmod stops no write: the file system's refusal is simulated at
the lowest level, the os functions and ``open``, and as a read-only mount refuses (EROFS even to
remove a file that does not exist).
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semsearch.build.pipeline import build_index
from semsearch.cli.commands import app
from semsearch.collection import Collection
from semsearch.errors import IndexWriteError
from semsearch.retrieve.opening import load_index
from tests.helpers import write

runner = CliRunner()
WRITE_MODES = set("wax+")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def read_only(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, every write under ``folder`` fails as on a read-only mount."""
    root = os.path.realpath(folder)

    def inside(*paths) -> bool:
        return any(
            isinstance(p, (str, bytes, os.PathLike))
            and os.path.realpath(os.fsdecode(p)).startswith(root + os.sep)
            for p in paths
        )

    def refuse(path) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(path))

    def guard(real, test):
        def guarded(*args, **kwargs):
            if test(*args, **kwargs):
                refuse(args[0])
            return real(*args, **kwargs)

        return guarded

    def opens_for_writing(file, mode="r", *args, **kwargs) -> bool:
        return inside(file) and bool(WRITE_MODES & set(mode))

    def os_open_writes(path, flags, *args, **kwargs) -> bool:
        return inside(path) and bool(flags & WRITE_FLAGS)

    monkeypatch.setattr(builtins, "open", guard(builtins.open, opens_for_writing))
    monkeypatch.setattr(io, "open", guard(io.open, opens_for_writing))
    monkeypatch.setattr(os, "open", guard(os.open, os_open_writes))
    for name in ("unlink", "remove", "replace", "rename", "mkdir", "rmdir"):
        monkeypatch.setattr(os, name, guard(getattr(os, name), lambda *a, **k: inside(*a[:2])))


def test_calibrating_a_read_only_index_is_a_write_error_and_changes_nothing(
    tmp_path, fake_embedder, monkeypatch
):
    write(tmp_path / "docs" / "a.md", "# Zwroty\n\nZwrot pieniędzy w ciągu 14 dni.\n")
    build_index(tmp_path / "docs", tmp_path / "index", embedder=fake_embedder)
    index = load_index(tmp_path / "index")
    before = (tmp_path / "index" / "meta.json").read_bytes()
    read_only(tmp_path / "index", monkeypatch)
    with pytest.raises(IndexWriteError, match="meta.json: Read-only file system$"):
        Collection.opened(index).calibrate(0.5, tmp_path / "q.jsonl", 40)
    monkeypatch.undo()
    assert (tmp_path / "index" / "meta.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "index"]  # no lock left


def test_eval_calibrate_on_a_read_only_index_says_so_in_one_line(fake_sample_index, tmp_path, monkeypatch):
    index_dir = tmp_path / "index"
    shutil.copytree(fake_sample_index, index_dir)
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "Jak zwrócić towar?", "source": "zwroty.md"}\n', encoding="utf-8")
    read_only(index_dir, monkeypatch)
    result = runner.invoke(app, ["eval", str(questions), "--index", str(index_dir), "--calibrate"])
    assert result.exit_code == 2, result.output
    assert result.stderr.endswith(f"error: cannot write {index_dir / 'meta.json'}: Read-only file system\n")
    assert result.stderr.count("error:") == 1 and "unexpected" not in result.stderr
