"""Every command's ``--help`` ends with examples that work (issue 40): each example line shown is
read back from the help and run, ``ask``, ``info`` and ``eval`` on the sample index from the
project folder, ``build`` and ``eval --init`` in a copy of ``docs/``, ``mcp`` and ``watch`` as
processes on an index of that copy (stopped as a client or Ctrl-C stops them)."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semsearch.cli.commands import app
from tests.helpers import FAKE_MODEL, FAKE_SITE, REPO, SAMPLE_DOCS

COMMANDS = ("build", "ask", "info", "eval", "mcp", "watch")
runner = CliRunner()


def shown_examples(command: str) -> list[str]:
    """The example command lines ``semsearch COMMAND --help`` prints, as a user reads them."""
    result = runner.invoke(app, [command, "--help"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = next(n for n, line in enumerate(lines) if line.strip() == "Examples:")
    return [line.strip()[2:] for line in lines[start:] if line.strip().startswith("$ ")]


def argv(line: str, folder: Path) -> list[str]:
    """The semsearch arguments of an example line: after ``--`` when another program starts it
    (``claude mcp add docs -- semsearch …``), without what it is piped into, ``$PWD`` as ``folder``."""
    words = shlex.split(line.replace("$PWD", str(folder)))
    words = words[words.index("--") + 1 :] if words[0] != "semsearch" else words
    words = words[: words.index("|")] if "|" in words else words
    assert words[0] == "semsearch", line
    return words[1:]


EXAMPLES = [(command, line) for command in COMMANDS for line in shown_examples(command)]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_two_or_three_examples_of_itself(command):
    examples = shown_examples(command)
    assert 2 <= len(examples) <= 3, examples
    assert all(f"semsearch {command}" in line for line in examples), examples


@pytest.mark.parametrize(("command", "line"), EXAMPLES, ids=[line for _, line in EXAMPLES])
def test_each_example_is_a_valid_command_line(command, line, tmp_path):
    """Parsed by the command itself (its options and arguments), without running it."""
    from typer.main import get_command

    words = argv(line, tmp_path)
    assert words[0] == command
    get_command(app).commands[command].make_context(command, words[1:])


def _in_a_copy_of_docs(tmp_path: Path, monkeypatch) -> None:
    shutil.copytree(SAMPLE_DOCS, tmp_path / "docs")
    monkeypatch.chdir(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "line"),
    [example for example in EXAMPLES if example[0] in ("ask", "info", "eval")],
    ids=[line for command, line in EXAMPLES if command in ("ask", "info", "eval")],
)
def test_each_ask_info_and_eval_example_runs_on_the_sample_index(
    command, line, sample_index, tmp_path, monkeypatch
):
    env = {"NO_COLOR": "1", "SEMSEARCH_INDEX": str(sample_index)}
    if "--init" in line:  # it writes a file: in a folder of its own, then that file is evaluated
        monkeypatch.chdir(tmp_path)
        result = runner.invoke(app, argv(line, tmp_path), env=env)
        assert result.exit_code == 0, result.output
        assert runner.invoke(app, ["eval"], env=env).exit_code == 0
        return
    monkeypatch.chdir(REPO)  # beside docs/ and tests/data/, as the examples are written
    result = runner.invoke(app, argv(line, REPO), env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("line", shown_examples("build"))
def test_each_build_example_runs_on_a_copy_of_the_sample(line, tmp_path, monkeypatch):
    _in_a_copy_of_docs(tmp_path, monkeypatch)
    result = runner.invoke(app, argv(line, tmp_path), env={"NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert (tmp_path / "index").is_dir() != ("--dry-run" in line)


def _fake_index_of_a_copy(tmp_path: Path, monkeypatch) -> dict[str, str]:
    """A copy of docs/ indexed into ./index with the hashing fake, and the environment in which a
    semsearch process finds that fake."""
    _in_a_copy_of_docs(tmp_path, monkeypatch)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), str(REPO)])}
    built = semsearch_process(["build", "docs", "--model", FAKE_MODEL, "-q"], env)
    assert built.returncode == 0, built.stderr
    return env


def semsearch_process(args: list[str], env: dict[str, str], **options) -> subprocess.CompletedProcess:
    """``semsearch ARGS`` run to its end in a process of its own, its output read as text."""
    command = [sys.executable, "-m", "semsearch", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, **options)


@pytest.mark.slow
@pytest.mark.parametrize("line", shown_examples("mcp"))
def test_each_mcp_example_serves_until_its_client_leaves(line, tmp_path, monkeypatch):
    pytest.importorskip("mcp")
    env = _fake_index_of_a_copy(tmp_path, monkeypatch)
    served = semsearch_process(argv(line, tmp_path), env, stdin=subprocess.DEVNULL, timeout=120)  # no client
    assert served.returncode == 0, served.stderr
    assert f"for the index at {tmp_path / 'index'}" in served.stderr


@pytest.mark.slow
@pytest.mark.parametrize("line", shown_examples("watch"))
def test_each_watch_example_builds_then_watches_until_ctrl_c(line, tmp_path, monkeypatch):
    pytest.importorskip("watchfiles")
    env = _fake_index_of_a_copy(tmp_path, monkeypatch)
    watcher = subprocess.Popen(
        [sys.executable, "-m", "semsearch", *argv(line, tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as tests/end_to_end/test_watch.py
    )
    try:
        assert watcher.stdout.readline().startswith("Up to date")
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.communicate(timeout=60)
    assert watcher.returncode == 130
