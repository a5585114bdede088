"""The installed ``semsearch`` command in fresh processes with the hashing fake (``fake:hashing``),
registered in the child through a sitecustomize: one ``ask`` in the fast lane (a fresh process
costs about half a second), and build, ask, info and a no-answer exit in the full suite.
What the real model finds is tested by the slow end-to-end tests; this proves the front door."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from semsearch.build.pipeline import build_index
from tests.helpers import FAKE_MODEL, FAKE_SITE, REPO, write


def semsearch(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    """The console script the package installs (not ``python -m``), with no network."""
    command = Path(sys.executable).with_name("semsearch")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd),
        "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), str(REPO)]),
        "HF_HUB_OFFLINE": "1",
        "XDG_CACHE_HOME": str(cwd / "cache"),
    }
    return subprocess.run(
        [str(command), *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def write_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    write(
        docs / "zwroty.md",
        "# Zwroty\n\n## Termin zwrotu pieniędzy\n\nNależność oddajemy w ciągu 14 dni na Twoje konto.\n"
        "\n## Dostawa\n\nPaczki wysyłamy kurierem w ciągu dwóch dni roboczych.\n",
    )
    return docs


def test_the_installed_command_answers_from_an_index_in_one_fresh_process(tmp_path):
    build_index(write_docs(tmp_path), tmp_path / "index", model=FAKE_MODEL)
    asked = semsearch("ask", "termin zwrotu pieniędzy", "--index", tmp_path / "index", "--json", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["answered"] is True
    assert answer["results"][0]["section"] == "Zwroty › Termin zwrotu pieniędzy"
    assert asked.stderr == ""


@pytest.mark.slow  # five fresh processes, a build among them: seconds
def test_the_installed_command_builds_asks_and_refuses_with_the_fake_model(tmp_path):
    docs = write_docs(tmp_path)
    built = semsearch("build", docs, "--index", tmp_path / "index", "--model", FAKE_MODEL, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "Indexed 1 file into 2 chunks" in built.stdout
    assert "Traceback" not in built.stderr

    asked = semsearch("ask", "termin zwrotu pieniędzy", "--index", tmp_path / "index", "--json", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["answered"] is True
    assert answer["results"][0]["section"] == "Zwroty › Termin zwrotu pieniędzy"

    refused = semsearch(
        "ask", "pogoda w Krakowie", "--index", tmp_path / "index", "--min-score", "1", cwd=tmp_path
    )
    assert refused.returncode == 1 and refused.stdout.startswith("No answer"), refused.stderr

    info = semsearch("info", "--index", tmp_path / "index", "--json", cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["model"]["spec"] == FAKE_MODEL

    usage = semsearch("ask", "--index", tmp_path / "index", cwd=tmp_path)
    assert usage.returncode == 2 and "Traceback" not in usage.stderr
