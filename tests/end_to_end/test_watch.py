"""`semsearch watch` (issue 25, point 8): the installed command keeps an index up to date while
its documents change (the hashing fake, registered in the child through a sitecustomize), and
a file that is not Markdown starts no rebuild, nor does a rebuild itself."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import FAKE_MODEL, FAKE_SITE, REPO, write

pytest.importorskip("watchfiles")
SEMSEARCH = Path(sys.executable).with_name("semsearch")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), str(REPO)])}


def next_line(process: subprocess.Popen, seconds: float = 60) -> str:
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    return process.stdout.readline() if ready else ""


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Watcher:
    """``semsearch watch DOCS`` in a child process, stopped with Ctrl-C at the end of the block."""

    def __init__(self, docs: Path, index: Path | str):
        built = subprocess.run(
            [SEMSEARCH, "build", docs, "--index", index, "--model", FAKE_MODEL], env=ENV, capture_output=True
        )
        assert built.returncode == 0, built.stderr
        self.index = index
        self.process = subprocess.Popen(
            [SEMSEARCH, "watch", docs, "--index", index, "-q"],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # Ctrl-C as a terminal gives it, even when the suite runs as a background job (a shell
            # starts those with SIGINT ignored, which a child inherits: Python then never turns it
            # into KeyboardInterrupt, and the watch ran on after the test's SIGINT).
            preexec_fn=_default_sigint,
        )

    def __enter__(self) -> Watcher:
        first = next_line(self.process)
        assert first.startswith("Up to date"), self.process.stderr.read() if self.process.poll() else first
        time.sleep(1)  # the watch starts
        return self

    def said(self, seconds: float = 60) -> str:
        return next_line(self.process, seconds)

    def sources(self) -> list[str]:
        """The files the index holds now (a folder's or a PostgreSQL index's, as ``info`` reads them)."""
        from semsearch.collection import Collection

        with Collection(self.index) as collection:
            return sorted(collection.summary().files)

    def __exit__(self, *exc) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            _, stderr = self.process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, stderr = self.process.communicate()
            pytest.fail(f"the watch did not stop within 60 s of Ctrl-C; it said: {stderr}")
        assert self.process.returncode == 130 and "Traceback" not in stderr, stderr


@pytest.mark.parametrize("store", ["folder", "postgres"])
def test_watch_rebuilds_when_a_markdown_file_changes_and_only_then(tmp_path, store, request):
    docs = tmp_path / "docs"
    index = tmp_path / "index" if store == "folder" else request.getfixturevalue("postgres_index")
    write(docs / "zwroty.md", "# Zwroty\n\n## Termin\n\nNa zwrot masz 14 dni od dostawy.\n")
    with Watcher(docs, index) as watcher:
        write(docs / "rowery.md", "# Rowery\n\nRower elektryczny oddasz w oryginalnym kartonie.\n")
        assert watcher.said().startswith("Indexed 2 files into 2 chunks")
        assert watcher.said(seconds=3) == ""  # the rebuild's own writes: no build after it
        asked = subprocess.run(
            [SEMSEARCH, "ask", "rower elektryczny karton", "--index", index, "--json", "--min-score", "-1"],
            env=ENV,
            capture_output=True,
            text=True,
        )
        assert json.loads(asked.stdout)["results"][0]["file_line"].endswith("rowery.md:3"), asked.stderr
        (docs / "notes.txt").write_text("not Markdown", encoding="utf-8")
        assert watcher.said(seconds=3) == ""  # not a document: nothing to do


def _folder_of_two(docs: Path) -> None:
    write(docs / "a.md", "# A\n\nZwrot w ciągu 14 dni.\n")
    write(docs / "sub" / "s.md", "# S\n\nKurier przyjeżdża rano.\n")


@pytest.mark.parametrize("move", ["renamed inside", "moved out", "moved in"])
def test_watch_sees_a_folder_moved_inside_out_of_or_into_the_documents(tmp_path, move):
    """One event for the folder, none for its files: issue 39 saw ``ask`` still return the
    vanished sub/s.md after ``mv docs/sub docs/sub2``."""
    docs = tmp_path / "docs"
    _folder_of_two(docs)
    write(tmp_path / "elsewhere" / "e.md", "# E\n\nPaczkomat przy dworcu.\n")
    expected = {
        "renamed inside": ["a.md", "sub2/s.md"],
        "moved out": ["a.md"],
        "moved in": ["a.md", "elsewhere/e.md", "sub/s.md"],
    }[move]
    with Watcher(docs, tmp_path / "index") as watcher:
        if move == "renamed inside":
            (docs / "sub").rename(docs / "sub2")
        elif move == "moved out":
            (docs / "sub").rename(tmp_path / "sub")
        else:
            (tmp_path / "elsewhere").rename(docs / "elsewhere")
        assert watcher.said().startswith("Indexed"), move
        assert watcher.sources() == expected


@pytest.mark.parametrize("store", ["folder", "postgres"])
def test_watch_follows_the_documents_folder_replaced_at_its_path(tmp_path, store, request):
    """``mv docs docs.old; mv docs.new docs``: it says so and indexes the new folder, then
    watches it (the system's events had followed the old one, silently)."""
    docs = tmp_path / "docs"
    _folder_of_two(docs)
    write(tmp_path / "docs.new" / "n.md", "# N\n\nNowy regulamin sklepu.\n")
    index = tmp_path / "index" if store == "folder" else request.getfixturevalue("postgres_index")
    with Watcher(docs, index) as watcher:
        docs.rename(tmp_path / "docs.old")
        (tmp_path / "docs.new").rename(docs)
        assert (
            watcher.said()
            == f"Documents folder {docs}/ was replaced by another folder: watching the new one\n"
        )
        assert watcher.said().startswith("Indexed 1 file") and watcher.sources() == ["n.md"]
        write(docs / "m.md", "# M\n\nDrugi plik nowego folderu.\n")  # the new folder is watched
        assert watcher.said().startswith("Indexed 2 files") and watcher.sources() == ["m.md", "n.md"]
        write(tmp_path / "docs.old" / "old.md", "# Old\n\nStary folder.\n")  # the old one is not
        assert watcher.said(seconds=3) == ""


WAITING = "watching for a folder at that path"


def test_watch_says_the_documents_folder_is_gone_and_waits_for_it(tmp_path):
    docs = tmp_path / "docs"
    _folder_of_two(docs)
    with Watcher(docs, tmp_path / "index") as watcher:
        shutil.rmtree(docs)
        gone = watcher.said()
        assert gone == f"Documents folder {docs}/ is gone (removed or moved away): {WAITING}\n"
        assert watcher.said(seconds=3) == ""  # nothing to build meanwhile, and no error
        write(docs / "b.md", "# B\n\nPowrót folderu.\n")
        assert watcher.said() == f"Documents folder {docs}/ is back: watching it\n"
        assert watcher.said().startswith("Indexed 1 file") and watcher.sources() == ["b.md"]
