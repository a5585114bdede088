"""A build ended by SIGTERM (``kill``, a CI timeout, a service manager) as by Ctrl-C: one line,
its lock released, its journal kept, so that the same build run again resumes (an outside probe
saw exit -15, no message, and the lock file left behind)."""

from __future__ import annotations

import json
import select
import shutil
import signal
import subprocess
import sys

import pytest

from tests.helpers import SAMPLE_DOCS, memo_env


@pytest.mark.slow
def test_a_build_ended_by_sigterm_says_so_releases_its_lock_and_resumes(tmp_path):
    docs, index = tmp_path / "docs", tmp_path / "index"
    shutil.copytree(SAMPLE_DOCS, docs)
    command = [sys.executable, "-m", "semsearch", "build", str(docs), "--index", str(index)]
    build = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = ""
        while not seen.startswith("Embedding"):  # progress lines off a terminal, one per phase
            ready, _, _ = select.select([build.stderr], [], [], 120)
            seen = build.stderr.readline() if ready else ""
            assert seen, f"no embedding phase: {build.poll()} {build.stderr.read()}"
        build.send_signal(signal.SIGTERM)
        _, stderr = build.communicate(timeout=120)
    finally:
        build.kill()
    assert build.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1] == "error: terminated"
    assert "Traceback" not in stderr
    assert not (tmp_path / ".index.lock").exists()
    # The first build embeds with the model itself (through the memo it could end before the
    # signal); the rerun, which embeds what was not journaled, takes the session's memo.
    again = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=600, env=memo_env())
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["chunks"] > 0 and report["embedded"] + report["resumed"] == report["chunks"]
