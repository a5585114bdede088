"""``python -m semsearch`` and the ``semsearch`` console script.

Importing the command line (Typer, Rich, numpy) takes ~0.1 s, before the CLI's own handling of
Ctrl-C (``cli_app``) is in place: this entry point imports nothing itself but the built-in
``gc`` (even ``signal`` takes a few milliseconds) and catches an interrupt that lands meanwhile,
so Ctrl-C is exit 130 with one line, never a traceback. A command of ``cli.app.LEAVE_AT_ONCE``
that finished ends the process here, at once (``cli.app.leave``).
"""

from __future__ import annotations

import gc
import sys

EXIT_INTERRUPTED = 130
"""As ``cli_app.EXIT_INTERRUPTED`` (not imported from there: that import is what may be interrupted)."""
YOUNG_OBJECTS = 20_000
"""Objects allocated between two collections of the youngest generation (Python's default: 700).
A cold ``ask`` allocates some 40,000 as it imports and reads the index, nearly all of them kept
to the end: at 700 the cycle collector ran ~60 times over them, ~12 ms of its CPU
(``bench/bench_cold.py``). The older generations keep their defaults, so a long build or the
MCP server still collects its cycles."""


def main() -> None:
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
    try:
        finished = _run()
    except KeyboardInterrupt:
        _interrupted()
    finally:
        _ignore_interrupts()
    from semsearch.cli.app import leave

    leave(finished)


def _run() -> int:
    """The exit code of a command that ran to its end and left nothing to do at exit
    (``cli.app.Finished``: the process then ends at once); any other exit is raised."""
    from semsearch.cli.app import Finished
    from semsearch.cli.commands import main as run

    try:
        run()
    except Finished as done:
        return done.code
    raise SystemExit(0)  # not reached: the command line always exits


def _ignore_interrupts() -> None:
    """The command is done: a Ctrl-C while the interpreter shuts down (closing the model in a
    ``__del__``) would print "Exception ignored ... KeyboardInterrupt" after the answer."""
    import contextlib
    import signal

    with contextlib.suppress(ValueError, OSError):  # not the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _interrupted() -> None:
    """Leave with exit 130 and one line; a second Ctrl-C meanwhile changes nothing."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stderr.write("error: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or gone
        pass
    raise SystemExit(EXIT_INTERRUPTED) from None


if __name__ == "__main__":
    main()
