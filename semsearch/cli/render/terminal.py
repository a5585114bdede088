"""The terminal's two consoles and what every command prints through them: a line of literal
text (``_line``), an error, the notes and warnings ``--quiet`` silences (``Notes``), and the
handling of a stdout whose reader went away. No command's own output lives here (``output`` is
``ask``'s, ``build``, ``eval`` and ``info`` have theirs), so each imports only what it prints.

User text is never read as Rich markup: the consoles parse no markup and no emoji codes, and
styled output is built from ``(text, style)`` pairs; every line shows control characters and
bidi overrides escaped (``safe_line``).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from semsearch.util.printable import safe_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

Part = str | tuple[str, str]
"""Plain text, or text and a Rich style name (``("Indexed", "green")``)."""


def index_shown(location: object) -> str:
    """An index as output names it: a folder with a trailing ``/``, a URL as it is (its
    ``str()``, which never holds a password)."""
    text = str(location)
    return text if "://" in text else f"{text}/"


@cache
def console(stderr: bool = False) -> Console:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            """Rich's own exits with 1, which means "no answer" here: leave it to the caller
            (``results_output``, the CLI), which keeps the command's exit code."""
            silence_stdout()
            raise BrokenPipeError("the reader of the output went away")

    return _Console(stderr=stderr, highlight=False, soft_wrap=True, markup=False, emoji=False)


def _line(*parts: Part) -> Text:
    """One line of literal text: styles come from the pairs, never from the text itself (no
    markup, no emoji codes), and name bytes that are not UTF-8 (``readable``), control characters
    and line feeds (``printable``) are escaped: nothing in it can steer the terminal or start a
    line of its own."""
    from rich.text import Text

    return Text.assemble(
        *(safe_line(part) if isinstance(part, str) else (safe_line(part[0]), part[1]) for part in parts)
    )


def _say(*parts: Part, stderr: bool = False, style: str | None = None) -> None:
    """One line on stdout (or stderr). To a terminal, or wherever the environment asks for
    styles, Rich prints it; to a pipe or a file it is written as Rich writes it there, plain,
    without loading Rich (a piped ``ask`` saves its import). A tab is left to Rich too, which
    expands it to its tab stops."""
    stream = sys.stderr if stderr else sys.stdout
    text = "".join(safe_line(part if isinstance(part, str) else part[0]) for part in parts)
    if "\t" in text or _styled(stream):
        console(stderr=stderr).print(_line(*parts), style=style)
        return
    stream.write(text + "\n")
    stream.flush()  # as Rich flushes each print: lines on stdout and stderr keep their order


_STYLE_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE")
"""Set, they may make Rich style output that goes to no terminal: Rich then decides."""


def _styled(stream: object) -> bool:
    """Whether Rich might write styles to ``stream``: a terminal, or a style variable set."""
    if any(name in os.environ for name in _STYLE_VARIABLES):
        return True
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # no such method, or closed: not a terminal to Rich either
        return False


def error(message: str) -> None:
    _say(("error:", "bold red"), " ", message, stderr=True)


@dataclass(frozen=True)
class Notes:
    """Where a command's warnings and notes go: stderr, or nowhere with ``quiet`` (``--quiet``:
    only errors, and the results on stdout). Made by each command from its options and passed to
    what it prints; nothing is kept between commands."""

    quiet: bool = False

    def note(self, *parts: Part) -> None:
        """A line on stderr that ``--quiet`` silences."""
        if not self.quiet:
            _say(*parts, stderr=True)

    def warning(self, message: str) -> None:
        self.note(("warning:", "yellow"), " ", message)


SHOWN = Notes()
"""The notes of a command that has no ``--quiet`` (``eval``, ``info``): always shown."""
note = SHOWN.note
warning = SHOWN.warning


def silence_stdout() -> None:
    """After the reader of stdout went away: later writes (and the final flush) go nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def flush_stdout() -> None:
    """Flush now, so a closed pipe is met here rather than at interpreter exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
