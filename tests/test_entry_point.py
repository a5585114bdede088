"""Ctrl-C at any moment of a command, its first ~0.1 s of imports included: exit 130, never a
traceback.

A real SIGINT is sent (``signal.raise_signal``) at a chosen point rather than after a delay, so
the test does not depend on the machine's speed: when the process first imports a given module,
as an impatient user's Ctrl-C would land while the command line loads.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from .conftest import REPO

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
