"""Ctrl-C at any moment of a command, its first ~0.1 s of imports included: exit 130, never a
traceback.

A real SIGINT is sent (``signal.raise_signal``) at a chosen point rather than after a delay, so
the test does not depend on the machine's speed: when the process first imports a given module,
as an impatient user's Ctrl-C would land while the command line loads.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from tests.helpers import FAKE_MODEL, FAKE_SITE, REPO, write

CTRL_C_ON_IMPORT = """
import signal, sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            signal.raise_signal(signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlC())
sys.argv = ["semsearch", "ask", "zwrot", "--index", "nowhere"]
"""


def console_script() -> str:
    """What the installed ``semsearch`` command runs (pip's wrapper for pyproject's entry point)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    module, function = re.search(r'^semsearch = "([\w.]+):(\w+)"$', text, re.M).groups()
    return f"from {module} import {function}\nsys.exit({function}())\n"


RUN_AS_MODULE = "import runpy\nrunpy.run_module('semsearch', run_name='__main__', alter_sys=True)\n"


@pytest.mark.parametrize("how", ["console script", "python -m"])
@pytest.mark.parametrize(
    "module",
    [
        "typer",  # the command line's own imports, before any of its code runs
        "numpy",
        "semsearch.cli.render.output",
        "semsearch.collection",  # the command's imports, once the command line handles Ctrl-C
    ],
)
def test_ctrl_c_while_the_command_loads_is_exit_130_without_a_traceback(how, module, tmp_path):
    start = console_script() if how == "console script" else RUN_AS_MODULE
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_ON_IMPORT.format(module=module) + start],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        preexec_fn=_interruptible,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stderr, done.stdout) == (130, "error: interrupted\n", "")


def _interruptible() -> None:
    """SIGINT as a terminal gives it, even when this test runs in a background job (a shell
    starts those with SIGINT ignored, and Python then never turns it into KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


CTRL_C_AT_SHUTDOWN = """
import signal, sys

class Closing:
    def __del__(self):  # as the model's own __del__ runs while the interpreter shuts down
        signal.raise_signal(signal.SIGINT)
        print("after the interrupt", file=sys.stderr)

closing = Closing()
sys.argv = ["semsearch", "--version"]
from semsearch.__main__ import main
main()
"""


def test_ctrl_c_after_the_command_finished_prints_no_traceback():
    """A probe: Ctrl-C right after an answer printed "Exception ignored in: <function
    E5.__del__> ... KeyboardInterrupt" while the interpreter shut down."""
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_AT_SHUTDOWN],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0 and "semsearch" in done.stdout
    assert "KeyboardInterrupt" not in done.stderr and "after the interrupt" in done.stderr


AT_EXIT = """
import atexit, sys

atexit.register(lambda: print("shut down", file=sys.stderr))
sys.argv = ["semsearch", *sys.argv[1:]]
from semsearch.__main__ import main
main()
"""


def test_a_finished_ask_or_info_ends_the_process_at_once_and_every_other_exit_shuts_down(tmp_path):
    """``ask`` and ``info`` leave with ``os._exit`` once done (``cli.app.leave``): their output
    whole, their exit code kept, and the index that ``ask --refresh`` rebuilt written and unlocked;
    an error, ``--version`` and the other commands still go through the interpreter's shutdown."""
    docs, index = tmp_path / "docs", tmp_path / "index"
    write(docs / "zwroty.md", "# Zwroty\n\n## Termin\n\nNa zwrot masz 14 dni od dostawy.\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), str(REPO)])}

    def semsearch(*args: object) -> subprocess.CompletedProcess:
        command = [sys.executable, "-c", AT_EXIT, *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)

    built = semsearch("build", docs, "--index", index, "--model", FAKE_MODEL, "-q")
    assert built.returncode == 0 and "shut down" in built.stderr, built.stderr
    answered = semsearch("ask", "termin zwrotu", "--index", index, "--json", "--min-score", "-1")
    assert answered.returncode == 0 and answered.stderr == "", answered.stderr
    assert json.loads(answered.stdout)["results"][0]["section"] == "Zwroty › Termin"
    refused = semsearch("ask", "termin zwrotu", "--index", index, "--min-score", "1")
    assert refused.returncode == 1 and refused.stdout.startswith("No answer") and refused.stderr == ""
    info = semsearch("info", "--index", index)
    assert "up to date with the docs folder" in info.stdout and info.stderr == "", info.stderr

    write(docs / "dostawa.md", "# Dostawa\n\n## Kurier\n\nKurier przyjeżdża w dni robocze.\n")
    refreshed = semsearch("ask", "kurier", "--index", index, "--refresh", "--json", "--min-score", "-1")
    assert refreshed.returncode == 0 and "shut down" not in refreshed.stderr, refreshed.stderr
    assert json.loads(refreshed.stdout)["results"][0]["path"] == str(docs / "dostawa.md")
    assert not (tmp_path / ".index.lock").exists()  # released by the build, before the search
    rebuilt = semsearch("build", "--index", index)
    assert rebuilt.returncode == 0 and "0 changed" in rebuilt.stdout and "2 unchanged" in rebuilt.stdout

    for args in (["ask", "zwrot", "--index", tmp_path / "nowhere"], ["--version"]):
        done = semsearch(*args)
        assert "shut down" in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
