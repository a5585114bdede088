"""`semsearch watch` (issue 25, point 8): the installed command keeps an index up to date while
its documents change (the hashing fake, registered in the child through a sitecustomize), and
a file that is not Markdown starts no rebuild, nor does a rebuild itself."""

from __future__ import annotations

import json
import os
import select
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


@pytest.mark.parametrize("store", ["folder", "postgres"])
def test_watch_rebuilds_when_a_markdown_file_changes_and_only_then(tmp_path, store, request):
    docs = tmp_path / "docs"
    index = tmp_path / "index" if store == "folder" else request.getfixturevalue("postgres_index")
    write(docs / "zwroty.md", "# Zwroty\n\n## Termin\n\nNa zwrot masz 14 dni od dostawy.\n")
    built = subprocess.run(
        [SEMSEARCH, "build", docs, "--index", index, "--model", FAKE_MODEL], env=ENV, capture_output=True
    )
    assert built.returncode == 0, built.stderr
    watcher = subprocess.Popen(
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
    try:
        assert next_line(watcher).startswith("Up to date"), watcher.stderr.read() if watcher.poll() else ""
        time.sleep(1)  # the watch starts
        write(docs / "rowery.md", "# Rowery\n\nRower elektryczny oddasz w oryginalnym kartonie.\n")
        assert next_line(watcher).startswith("Indexed 2 files into 2 chunks")
        assert next_line(watcher, seconds=3) == ""  # the rebuild's own writes: no build after it
        asked = subprocess.run(
            [SEMSEARCH, "ask", "rower elektryczny karton", "--index", index, "--json", "--min-score", "-1"],
            env=ENV,
            capture_output=True,
            text=True,
        )
        assert json.loads(asked.stdout)["results"][0]["file_line"].endswith("rowery.md:3"), asked.stderr
        (docs / "notes.txt").write_text("not Markdown", encoding="utf-8")
        assert next_line(watcher, seconds=3) == ""  # not a document: nothing to do
    finally:
        watcher.send_signal(signal.SIGINT)
        try:
            _, stderr = watcher.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            watcher.kill()
            _, stderr = watcher.communicate()
            pytest.fail(f"the watch did not stop within 60 s of Ctrl-C; it said: {stderr}")
    assert watcher.returncode == 130 and "Traceback" not in stderr, stderr
